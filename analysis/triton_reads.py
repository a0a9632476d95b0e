"""Where a Triton kernel surely reads a pointer parameter, judged at one launch.

triton_summary.py says whether a parameter is loaded, accumulated into or updated by atomics;
this module keeps each such access (a "read site") with what must hold for it to run: the tests
of the enclosing `if`s and `while`s, the early `return`s before it (not taken), the enclosing
`for` loops (an iteration runs) and the load's mask (`mask=None` is none). At a launch, the tests
are evaluated with the launch's literal arguments (a `tl.constexpr` passed `False`, or left at a
`False` default), except for a parameter the body binds again (`FLAG = False`, `ptr += 1`): its
launch value does not hold after that, so it is not known, nor is it offset 0 of its buffer:

- `launch_read`: the first site that may run at this launch. A test or mask the launch does not
  decide is a path-feasibility assumption, as `if cond: read(x)` is in plain Python (some program
  has the mask true, the grid is not empty, a loop runs once); the text names them. Sites whose
  pointer may point into another parameter (`tl.where`, a name bound on several paths), and sites
  a store or atomic of the same parameter may precede in their program, are never used.
- `first_element`: the element program 0 surely reads: a pointer `p + pid * c + k` of
  `tl.program_id(0)` and constants, no enclosing loop, every test and the mask true at program 0
  (decided, not assumed). Only the grid's not being empty is assumed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zeroopt.analysis.resolve import child_nodes, walk_all, walk_bfs

# The tl calls whose result points into the pointer given as their first argument.
_PASS = frozenset({"multiple_of", "max_contiguous", "max_constancy", "make_block_ptr", "advance"})
# Atomics that read the old value into the new one (`atomic_xchg` overwrites it unread).
_READING_ATOMICS = frozenset(
    {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_cas"}
)  # fmt: skip
_RANGES = frozenset({"range", "builtins.range", "static_range", "range_"})
# Values that differ between programs or come from memory.
_VARYING = frozenset({"program_id", "arange", "load", "rand", "randn", "randint", "randint4x"})


@dataclass(frozen=True)
class Cond:
    """The path needs `bool(test) == holds`; `test` None: not known (both branches return)."""

    test: ast.expr | None
    holds: bool


@dataclass(frozen=True)
class ReadSite:
    line: int
    what: str  # "loaded", "updated by `tl.atomic_add`"
    ptr: ast.expr
    mask: ast.expr | None
    conds: tuple[Cond, ...]
    loops: tuple[ast.For | ast.While, ...]


@dataclass
class KernelReads:
    """Per pointer parameter, its read sites in source order; what a launch needs to judge them."""

    sites: dict[str, list[ReadSite]] = field(default_factory=dict)
    constexpr: frozenset[str] = frozenset()
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    single: dict[str, ast.expr] = field(default_factory=dict)  # locals bound once, plainly
    program_ids: frozenset[int] = frozenset()  # ids of `tl.program_id(0)` calls
    ranges: frozenset[int] = frozenset()  # ids of `range`/`tl.range` calls
    decorated: bool = False  # autotune/heuristics may supply arguments the launch does not pass
    # Names whose value varies by program or comes from memory: bound (on some path) from a
    # program id, an `arange`, a load or an atomic, or a loop target. A test without them is
    # decided by the host: by the launch's arguments only.
    per_program: frozenset[str] = frozenset()
    per_program_calls: frozenset[int] = frozenset()
    # Parameters the kernel binds again (`FLAG = False`, `ptr += 1`): neither the launch's value
    # nor the pointer's start holds everywhere in the body.
    rebound: frozenset[str] = frozenset()


def _no_defs(nodes: list[ast.AST]) -> list[ast.AST]:
    out: list[ast.AST] = []
    todo = list(nodes)
    while todo:
        n = todo.pop()
        out.append(n)
        for c in child_nodes(n):
            if not isinstance(
                c, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                todo.append(c)
    return out


def _has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for n in _no_defs(list(stmts)))


def collect(
    fn: ast.FunctionDef,
    params: tuple[str, ...],
    derefs: list[tuple[ast.Call, str, set[str]]],
    tl_name: Callable[[ast.expr], str | None],
    decorated: bool,
) -> KernelReads:
    """`derefs`: each `tl.load`/`tl.store`/`tl.atomic_*` call, its tl name and the parameters its
    pointer may point into (triton_summary's flow-insensitive roots)."""
    nodes = _no_defs(list(fn.body))
    bindings: dict[str, list[ast.AST]] = {}
    for n in nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            bindings.setdefault(n.id, []).append(n)
    assigns: dict[str, list[ast.AST]] = {}
    for n in nodes:
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign):
            ts = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in ts:
                if isinstance(t, ast.Name):
                    assigns.setdefault(t.id, []).append(n)
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    rebound = frozenset(x.arg for x in every if x.arg in bindings)
    single: dict[str, ast.expr] = {}
    for name, bs in bindings.items():
        if name in rebound:
            continue  # a parameter: its launch value holds before the rebinding, not after
        one = assigns.get(name, [])
        first = one[0] if len(bs) == 1 and len(one) == 1 else None
        if isinstance(first, ast.Assign) and len(first.targets) == 1:
            single[name] = first.value
    program_ids: set[int] = set()
    ranges: set[int] = set()
    varying: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Call):
            callee = tl_name(n.func)
            if callee in _VARYING or (callee or "").startswith("atomic_"):
                varying.add(id(n))
            if callee == "program_id":
                axis = (
                    n.args[0]
                    if n.args
                    else next((k.value for k in n.keywords if k.arg == "axis"), None)
                )
                if isinstance(axis, ast.Constant) and axis.value == 0:
                    program_ids.add(id(n))
            elif callee in _RANGES or (isinstance(n.func, ast.Name) and n.func.id == "range"):
                ranges.add(id(n))
    defaults = dict(
        zip([x.arg for x in [*a.posonlyargs, *a.args]][::-1], a.defaults[::-1], strict=False)
    )
    defaults.update(
        {x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
    )
    constexpr = frozenset(
        x.arg for x in every if x.annotation and ast.unparse(x.annotation).endswith("constexpr")
    )

    def certain(e: ast.expr, depth: int = 0) -> set[str]:
        """The parameters `e` points into on every execution."""
        if depth > 40:
            return set()
        if isinstance(e, ast.Name):
            if e.id in params and e.id not in bindings:
                return {e.id}
            kinds = assigns.get(e.id, [])
            if len(kinds) != len(bindings.get(e.id, [])):
                return set()  # a loop target, an unpacking, a walrus: not followed
            values = [k.value for k in kinds if isinstance(k, ast.Assign)]
            if e.id in params and not values:
                values = [e]  # a parameter moved by `p += step` only
            if len(values) != 1 or not all(
                (isinstance(k, ast.Assign) and len(k.targets) == 1)
                or (isinstance(k, ast.AugAssign) and isinstance(k.op, ast.Add | ast.Sub))
                for k in kinds
            ):
                return set()  # `p += step` keeps where `p` points
            if values[0] is e:
                return {e.id}
            return certain(values[0], depth + 1)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            return certain(e.left, depth + 1) | certain(e.right, depth + 1)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Sub):
            return certain(e.left, depth + 1)
        if isinstance(e, ast.Subscript):
            return certain(e.value, depth + 1)
        if isinstance(e, ast.Call) and e.args and tl_name(e.func) in _PASS:
            return certain(e.args[0], depth + 1)
        if isinstance(e, ast.Call) and tl_name(e.func) == "make_block_ptr":
            base = next((k.value for k in e.keywords if k.arg == "base"), None)
            return certain(base, depth + 1) if base is not None else set()
        return set()

    # Writes of each parameter: (line, the loops around them).
    calls = {id(c): (c, name, rs) for c, name, rs in derefs}
    writes: dict[str, list[tuple[int, int]]] = {}
    for c, name, rs in derefs:
        if name == "store" or name.startswith("atomic_"):
            for p in rs:
                writes.setdefault(p, []).append((c.lineno, id(c)))
    # Names that vary by program: to a fixpoint over every binding's value.
    per_program: set[str] = set()
    values: dict[str, list[ast.AST]] = {}
    for n in nodes:
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
            ts = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in ts:
                simple = isinstance(t, ast.Name)
                for x in walk_all(t):
                    if isinstance(x, ast.Name) and n.value is not None:
                        values.setdefault(x.id, []).append(n.value if simple else n)
        elif isinstance(n, ast.For):
            per_program.update(x.id for x in walk_all(n.target) if isinstance(x, ast.Name))
    for name, bs in bindings.items():
        if len(values.get(name, [])) < len(bs):
            per_program.add(name)  # bound some other way (`with`, `except`, ...)
    changed = True
    while changed:
        changed = False
        for name, vs in values.items():
            if name not in per_program and any(
                (isinstance(x, ast.Name) and x.id in per_program) or id(x) in varying
                for v in vs
                for x in walk_bfs([v])  # ast.walk's nodes but the leaves (no name, no call)
            ):
                per_program.add(name)
                changed = True
    out = KernelReads(
        per_program=frozenset(per_program), per_program_calls=frozenset(varying),
        constexpr=constexpr, defaults=defaults, single=single, program_ids=frozenset(program_ids),
        ranges=frozenset(ranges), decorated=decorated, rebound=rebound,
    )  # fmt: skip

    def record(
        stmt: ast.AST, conds: tuple[Cond, ...], loops: tuple[ast.For | ast.While, ...]
    ) -> None:
        for n in _no_defs([stmt]):
            hit = calls.get(id(n))
            if hit is None:
                continue
            c, name, _ = hit
            if name != "load" and name not in _READING_ATOMICS:
                continue
            ptr = (
                c.args[0]
                if c.args
                else next((k.value for k in c.keywords if k.arg == "pointer"), None)
            )
            if ptr is None:
                continue
            pos = 1 if name == "load" else (2 if name != "atomic_cas" else 99)
            mask = (
                c.args[pos]
                if len(c.args) > pos
                else next((k.value for k in c.keywords if k.arg == "mask"), None)
            )
            if isinstance(mask, ast.Constant) and mask.value is None:
                mask = None  # `mask=None`: no mask, every element loaded
            for p in certain(ptr):
                spans = [(lp.lineno, lp.end_lineno or lp.lineno) for lp in loops]
                if any(w < c.lineno or any(lo <= w <= hi for lo, hi in spans)
                       for w, wid in writes.get(p, []) if wid != id(c)):  # fmt: skip
                    continue  # a store of the parameter may run first in its program
                what = "loaded" if name == "load" else f"updated by `tl.{name}`"
                out.sites.setdefault(p, []).append(
                    ReadSite(c.lineno, what, ptr, mask, conds, loops)
                )

    def visit(stmts: list[ast.stmt], conds: tuple[Cond, ...], loops: tuple) -> None:
        for s in stmts:
            if isinstance(s, ast.If):
                record(s.test, conds, loops)
                visit(s.body, (*conds, Cond(s.test, True)), loops)
                visit(s.orelse, (*conds, Cond(s.test, False)), loops)
                rb, ro = _has_return(s.body), _has_return(s.orelse)
                if rb and ro:
                    conds = (*conds, Cond(None, True))
                elif rb or ro:
                    conds = (*conds, Cond(s.test, not rb))
            elif isinstance(s, ast.For | ast.While):
                record(s.iter if isinstance(s, ast.For) else s.test, conds, loops)
                inner = conds if isinstance(s, ast.For) else (*conds, Cond(s.test, True))
                visit(s.body, inner, (*loops, s))
                visit(s.orelse, conds, loops)
                if _has_return(s.body):
                    conds = (*conds, Cond(None, True))
            elif isinstance(s, ast.Return):
                return
            elif isinstance(s, ast.With):
                visit(s.body, conds, loops)
            elif isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            elif isinstance(s, ast.Try):
                return  # not Triton: nothing after it is judged
            else:
                record(s, conds, loops)

    visit(fn.body, (), ())
    return out


_UNKNOWN = object()
_BIN = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}  # fmt: skip
_CMP = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}  # fmt: skip


class Launch:
    """The kernel's tests evaluated with one launch's literal arguments."""

    def __init__(self, reads: KernelReads, bound: dict[str, ast.expr], spread: bool) -> None:
        self.reads = reads
        self.values: dict[str, object] = {}
        for p, a in bound.items():
            if p in reads.rebound:
                continue
            v = _literal(a)
            if v is not _UNKNOWN:
                self.values[p] = v
        if not spread and not reads.decorated:  # no `**options`, no autotune: defaults hold
            for p, d in reads.defaults.items():
                if p not in bound and p not in reads.rebound and (v := _literal(d)) is not _UNKNOWN:
                    self.values[p] = v
        self.pid0 = False  # evaluate `tl.program_id(0)` as 0

    def fold(self, e: ast.expr | None, depth: int = 0) -> object:
        if e is None or depth > 40:
            return _UNKNOWN
        if isinstance(e, ast.Constant):
            return (
                e.value if isinstance(e.value, int | float | bool) or e.value is None else _UNKNOWN
            )
        if isinstance(e, ast.Name):
            if e.id in self.values:
                return self.values[e.id]
            value = self.reads.single.get(e.id)
            return self.fold(value, depth + 1) if value is not None else _UNKNOWN
        if isinstance(e, ast.Call) and id(e) in self.reads.program_ids:
            return 0 if self.pid0 else _UNKNOWN
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "to":
            return self.fold(e.func.value, depth + 1)  # `pid.to(tl.int64)`: the same value
        if isinstance(e, ast.UnaryOp):
            v = self.fold(e.operand, depth + 1)
            if v is _UNKNOWN or v is None:
                return _UNKNOWN
            if isinstance(e.op, ast.Not):
                return not v
            if isinstance(e.op, ast.USub) and isinstance(v, int | float):
                return -v
            return _UNKNOWN
        if isinstance(e, ast.BoolOp):
            vals = [self.fold(v, depth + 1) for v in e.values]
            stop = isinstance(e.op, ast.Or)  # `or` stops at a true value, `and` at a false one
            if any(v is not _UNKNOWN and bool(v) is stop for v in vals):
                return stop
            return _UNKNOWN if any(v is _UNKNOWN for v in vals) else not stop
        if isinstance(e, ast.BinOp) and type(e.op) in _BIN:
            left, right = self.fold(e.left, depth + 1), self.fold(e.right, depth + 1)
            if isinstance(e.op, ast.BitAnd) and (left is False or right is False):
                return False
            if isinstance(left, int | float) and isinstance(right, int | float):
                try:
                    return _BIN[type(e.op)](left, right)
                except (ZeroDivisionError, TypeError):
                    return _UNKNOWN
            return _UNKNOWN
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _CMP:
            left, right = self.fold(e.left, depth + 1), self.fold(e.comparators[0], depth + 1)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                compare: Any = _CMP[type(e.ops[0])]
                return bool(compare(left, right))
            except TypeError:
                return _UNKNOWN
        return _UNKNOWN

    def _loop_may_run(self, loop: ast.For | ast.While) -> bool:
        it = loop.iter if isinstance(loop, ast.For) else None
        if not (isinstance(it, ast.Call) and id(it) in self.reads.ranges):
            return True
        args = [self.fold(a) for a in it.args[:3]]
        if len(args) == 1:
            args = [0, *args]
        start, stop, step = (*args, 1)[:3] if len(args) >= 2 else (None, None, None)
        if isinstance(start, int) and isinstance(stop, int) and isinstance(step, int) and step:
            return len(range(start, stop, step)) > 0
        return True

    def read(self, p: str) -> tuple[int, str] | None:
        """The first site of `p` that may run: its line and the text naming it and the
        assumptions it rests on."""
        for site in self.reads.sites.get(p, ()):
            assumed: list[str] = []
            dead = False
            for c in site.conds:
                v = self.fold(c.test)
                if c.test is None or (v is _UNKNOWN and self._host_undecided(c.test)):
                    dead = True  # both branches of an `if` may return; a flag not literal
                elif v is _UNKNOWN:
                    text = ast.unparse(c.test)[:60]
                    assumed.append(f"`{text}` {'holds' if c.holds else 'is false'}")
                elif bool(v) is not c.holds:
                    dead = True
            if site.mask is not None:
                v = self.fold(site.mask)
                if v is _UNKNOWN and self._host_undecided(site.mask):
                    dead = True
                elif v is _UNKNOWN:
                    assumed.append("its mask holds for some element")
                elif not v:
                    dead = True
            for loop in site.loops:
                if not self._loop_may_run(loop):
                    dead = True
                else:
                    assumed.append(f"the loop at line {loop.lineno} runs")
            if dead:
                continue
            assumed.append("the grid is not empty")
            return site.line, (
                f"{site.what} at line {site.line} (assuming the launch runs a program where "
                f"{', '.join(assumed)})"
            )
        return None

    def _host_undecided(self, test: ast.expr) -> bool:
        """Some part of `test` (split at `and`, `or`, `not`, `&`, `|`) is decided by the host
        alone, yet not by this launch's literals (`HAS_MASK` passed `mask is not None`): the
        host's value may be tied to which buffer it passes (a dummy when the flag is False), so
        no path is assumed through it."""
        parts = [test]
        while parts:
            e = parts.pop()
            if isinstance(e, ast.BoolOp):
                parts.extend(e.values)
            elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not | ast.Invert):
                parts.append(e.operand)
            elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitAnd | ast.BitOr):
                parts += [e.left, e.right]
            elif isinstance(e, ast.Name) and e.id in self.reads.single:
                value = self.reads.single[e.id]
                if isinstance(value, ast.BoolOp | ast.UnaryOp | ast.BinOp | ast.Name):
                    parts.append(value)  # `mask = HAS_X & (offs < n)`
                elif self.fold(e) is _UNKNOWN and not self._varies(e):
                    return True
            elif self.fold(e) is _UNKNOWN and not self._varies(e):
                return True
        return False

    def _varies(self, e: ast.expr) -> bool:
        r = self.reads
        return any(
            (isinstance(x, ast.Name) and x.id in r.per_program) or id(x) in r.per_program_calls
            for x in walk_all(e)
        )

    def first_element(self, p: str) -> tuple[int, int] | None:
        """(k, line): program 0 surely loads element k of `p` at that line (the first such site;
        none when an earlier site may run there without being decided)."""
        self.pid0 = True
        try:
            for site in self.reads.sites.get(p, ()):
                if site.loops or site.what != "loaded":
                    continue
                tests = [(self.fold(c.test), c.holds) for c in site.conds if c.test is not None]
                mask = True if site.mask is None else self.fold(site.mask)
                if (
                    len(tests) < len(site.conds)
                    or any(v is _UNKNOWN or bool(v) is not h for v, h in tests)
                    or mask is not True
                ):
                    continue  # not surely run by program 0
                k = self._offset(site.ptr, p)
                if isinstance(k, int) and k >= 0:
                    return k, site.line
            return None
        finally:
            self.pid0 = False

    def _offset(self, e: ast.expr, p: str, depth: int = 0) -> int | None:
        if depth > 40:
            return None
        if isinstance(e, ast.Name):
            if e.id == p:
                return 0 if p not in self.reads.rebound else None  # `p += 1`: moved
            value = self.reads.single.get(e.id)
            return self._offset(value, p, depth + 1) if value is not None else None
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            for ptr, off, sign in ((e.left, e.right, 1), (e.right, e.left, 0)):
                base = self._offset(ptr, p, depth + 1)
                if base is None:
                    continue
                v = self.fold(off)
                if not (isinstance(v, int) and not isinstance(v, bool)):
                    return None
                if isinstance(e.op, ast.Sub):
                    return base - v if sign else None
                return base + v
        return None


def _literal(a: ast.expr) -> object:
    if isinstance(a, ast.Constant) and (isinstance(a.value, int | float | bool) or a.value is None):
        return a.value
    if (
        isinstance(a, ast.UnaryOp)
        and isinstance(a.op, ast.USub)
        and isinstance(a.operand, ast.Constant)
    ):
        v = a.operand.value
        return -v if isinstance(v, int | float) and not isinstance(v, bool) else _UNKNOWN
    return _UNKNOWN


def empty_grid(grid: ast.expr) -> bool:
    """A grid written as literals with a 0 in it: no program runs."""
    items = grid.elts if isinstance(grid, ast.Tuple | ast.List) else [grid]
    return any(isinstance(x, ast.Constant) and x.value == 0 for x in items)
