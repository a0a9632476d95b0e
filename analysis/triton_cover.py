"""When a Triton launch writes a buffer in full: one store of the kernel combined with the grid.

The proof rests on triton.language's semantics only: `tl.program_id(a)` runs through every value
in [0, grid[a]) (one program each), `tl.arange(0, B)` is the block [0, B) (B a positive power of
two, a compile-time constant), and `tl.store(p + offs, v, mask=m)` writes element `offs[i]` of
`p` wherever `m[i]` holds. Two shapes are recognised in the kernel (`kernel_covers`), each a
store that is one statement of the kernel's body, not under an `if` or a loop, with no `return`
before it, of a pointer parameter the kernel never loads and never applies an atomic to (its
summary is "stored") that no `triton.heuristics` value replaces (nor `n`, nor the stride),
through names each bound once, by a statement of the body before it:

- flat blocks: `offs = tl.program_id(0) * B + tl.arange(0, B)`, `tl.store(p + offs, v,
  mask=offs < n)`: over the programs `0 <= pid < cdiv(n, B)` it writes every element of [0, n);
- rows: `tl.store(p + tl.program_id(0) * stride + cols, v, mask=cols < N)`, with `cols =
  tl.arange(0, BN)` (one program per row: [0, N) of each row when BN >= N) or `cols =
  tl.program_id(1) * BN + tl.arange(0, BN)` (blocks of columns over `cdiv(N, BN)` programs).

The launch (`launch_cover`) must then tie the kernel's parameters to the buffer: the buffer is
passed as the allocation itself (a contiguous `torch.zeros`, not a view), to no other
dereferenced parameter; the grid is `(cdiv(n, B),)` (`triton.cdiv`, `(n + B - 1) // B`, or a
`lambda meta: (cdiv(n, meta["B"]),)`; further axes positive literals) with `n` the same text as
the kernel's `n` argument, and that text is the buffer's size (`torch.zeros(n)` with names that
hold ints and were not bound again since, or `buf.numel()`); for rows, `grid[0]` and the row
count of a 2-D `torch.zeros(M, N)`, `N` its second dimension, the stride `N` or
`buf.stride(0)`, and either `BN = triton.next_power_of_2(N)` or `grid[1] = cdiv(N, BN)`. The
block `B` of the grid must be the kernel's: the same text as the launch's argument for it, the
kernel's literal default, or the grid lambda's `meta["B"]` (under `@triton.autotune` or
`@triton.heuristics`, which may replace it, only the last). An empty grid (`n == 0`) writes
nothing, and the buffer then has no elements. Assumed: offsets fit the kernel's index type
(int32 unless widened), as for any buffer Triton indexes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zeroopt.analysis.resolve import child_nodes, walk_all
from zeroopt.analysis.state import View

# A product of factors: "%pid0", "arange:B", or a parameter's name. The program ids and aranges
# are spelled so that no identifier can be one: a parameter named `pid0` is no program id.
Term = tuple[str, ...]
_PID0, _PID1 = "%pid0", "%pid1"
# Integer types a program id or offset may be converted to without changing its value.
_WIDE = frozenset({"int32", "int64", "uint32", "uint64"})


@dataclass(frozen=True)
class StoreCover:
    """One store of a pointer parameter that covers a range given by the kernel's parameters."""

    line: int
    n: str  # the mask's bound (`offs < n`, `cols < N`)
    block: str  # the constexpr block width
    stride: str = ""  # rows: the row stride parameter; "" for flat blocks
    col_axis: int | None = None  # rows: 1 when column blocks run over `tl.program_id(1)`


def kernel_covers(
    fn: ast.FunctionDef,
    params: tuple[str, ...],
    tl_name: Callable[[ast.expr], str | None],
    constexpr: frozenset[str],
    rebound: frozenset[str],
) -> dict[str, StoreCover | str]:
    """Per pointer parameter a store of it writes: the covering store, or why none is one."""
    counts: dict[str, int] = {}
    for n in walk_all(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    single: dict[str, tuple[int, ast.expr]] = {}
    for i, stmt in enumerate(fn.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and counts.get(stmt.targets[0].id) == 1
            and stmt.targets[0].id not in params
        ):
            single[stmt.targets[0].id] = (i, stmt.value)
    fixed = {p for p in params if p not in rebound}

    def terms(e: ast.expr, before: int, depth: int = 0) -> list[Term] | None:
        """`e` as a sum of products of program ids, aranges and parameters; None otherwise."""
        if depth > 30:
            return None
        if isinstance(e, ast.Name):
            if e.id in fixed:
                return [(e.id,)]
            bound = single.get(e.id)
            if bound is None or bound[0] >= before:
                return None
            return terms(bound[1], before, depth + 1)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            left, right = terms(e.left, before, depth + 1), terms(e.right, before, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
            left, right = terms(e.left, before, depth + 1), terms(e.right, before, depth + 1)
            if left is None or right is None:
                return None
            return [tuple(sorted(a + b)) for a in left for b in right]
        if isinstance(e, ast.Call):
            name = tl_name(e.func)
            if name == "program_id":
                axis = (
                    e.args[0]
                    if e.args
                    else next((k.value for k in e.keywords if k.arg == "axis"), None)
                )
                if isinstance(axis, ast.Constant) and axis.value in (0, 1) and len(e.args) <= 1:
                    return [(_PID0 if axis.value == 0 else _PID1,)]
                return None
            if name == "arange" and len(e.args) == 2 and not e.keywords:
                start, end = e.args
                if (
                    isinstance(start, ast.Constant)
                    and start.value == 0
                    and isinstance(end, ast.Name)
                    and end.id in constexpr
                    and end.id in fixed
                ):
                    return [(f"arange:{end.id}",)]
                return None
            if name in ("multiple_of", "max_contiguous") and e.args:
                return terms(e.args[0], before, depth + 1)  # hints: the same values
            if (
                name is None
                and isinstance(e.func, ast.Attribute)
                and e.func.attr == "to"
                and len(e.args) == 1
                and not e.keywords
                and tl_name(e.args[0]) in _WIDE
            ):
                return terms(e.func.value, before, depth + 1)  # `pid.to(tl.int64)`
        return None

    def bound_of(mask: ast.expr | None, before: int) -> tuple[list[Term], str] | None:
        """`x < n` (through a name bound once): the terms of x and the parameter n."""
        if isinstance(mask, ast.Name) and mask.id in single and single[mask.id][0] < before:
            mask = single[mask.id][1]
        if (
            isinstance(mask, ast.Compare)
            and len(mask.ops) == 1
            and isinstance(mask.ops[0], ast.Lt)
            and isinstance(mask.comparators[0], ast.Name)
            and mask.comparators[0].id in fixed
        ):
            left = terms(mask.left, before)
            if left is not None:
                return left, mask.comparators[0].id
        return None

    def match(
        p: str, offsets: list[Term], cols: list[Term], n: str, line: int
    ) -> StoreCover | None:
        """Flat blocks or rows (module docstring) of parameter `p`, else None."""
        key, masked = sorted(offsets), sorted(cols)
        for b in sorted(constexpr & fixed):
            arange, tiled = ("arange:" + b,), tuple(sorted((_PID0, b)))
            if key == masked == sorted([arange, tiled]):
                return StoreCover(line, n, b)
            for col_axis, col in (
                (None, [arange]),
                (1, sorted([arange, tuple(sorted((_PID1, b)))])),
            ):
                if masked != col or not all(x in key for x in col):
                    continue
                rest = list(key)
                for x in col:
                    rest.remove(x)
                strides = [x for x in rest[0] if x != _PID0] if len(rest) == 1 else []
                if (
                    len(strides) == 1
                    and len(rest[0]) == 2
                    and _PID0 in rest[0]
                    and strides[0] in fixed
                    and strides[0] != p
                ):
                    return StoreCover(line, n, b, strides[0], col_axis)
        return None

    # Names a decorator may set (`triton.heuristics` replaces an argument given by keyword;
    # an autotune config's conflicts raise): the stored pointer, the mask's bound and the stride
    # must be the launch's (a heuristic may hand the kernel another tensor than the buffer).
    # (A dict handed to a decorator itself is `heuristics`' values; configs sit deeper.)
    tuned = {
        k.value if isinstance(k, ast.Constant) else ""
        for dec in fn.decorator_list
        if isinstance(dec, ast.Call)
        for arg in [*dec.args, *(kw.value for kw in dec.keywords)]
        if isinstance(arg, ast.Dict)
        for k in arg.keys
    }

    def mentioned(e: ast.expr, before: int, depth: int = 0) -> set[str]:
        """Parameters `e` mentions, through names bound once before statement `before`."""
        out: set[str] = set()
        for n in walk_all(e):
            if isinstance(n, ast.Name):
                if n.id in params:
                    out.add(n.id)
                elif n.id in single and single[n.id][0] < before and depth < 30:
                    out |= mentioned(single[n.id][1], before, depth + 1)
        return out

    found: dict[str, StoreCover | str] = {}
    returned = False
    for i, stmt in enumerate(fn.body):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and tl_name(call.func) == "store":
            ptr = (
                call.args[0]
                if call.args
                else next((k.value for k in call.keywords if k.arg == "pointer"), None)
            )
            mask = (
                call.args[2]
                if len(call.args) > 2
                else next((k.value for k in call.keywords if k.arg == "mask"), None)
            )
            line = call.lineno
            sums = terms(ptr, i) if ptr is not None and not returned else None
            for t in [t for t in sums or () if len(t) == 1 and t[0] in fixed]:
                p = t[0]
                if isinstance(found.get(p), StoreCover):
                    continue
                offsets = list(sums or ())
                offsets.remove(t)
                bound = bound_of(mask, i)
                cover = match(p, offsets, *bound, line) if bound is not None else None
                set_here = sorted({p, cover.n, cover.stride} & tuned) if cover is not None else []
                if cover is not None and (set_here or "" in tuned):
                    found[p] = f"a decorator may set `{'`, `'.join(set_here) or 'any argument'}`"
                elif cover is not None:
                    found[p] = cover
            for p in mentioned(ptr, i) if ptr is not None else ():
                found.setdefault(
                    p,
                    f"the store at line {line} follows a `return`"
                    if returned
                    else f"the store at line {line} is not `p + pid * B + tl.arange(0, B)` or a "
                    "row of it, masked `< n`",
                )
        returned = returned or any(isinstance(n, ast.Return) for n in walk_all(stmt))
    return found


_CDIV = frozenset({"triton.cdiv"})
_NEXT_POW2 = frozenset({"triton.next_power_of_2"})


def launch_cover(
    ev: Any,
    call: ast.Call,
    cover: StoreCover,
    bound: dict[str, ast.expr],
    ref: Any,
    decorated: bool,
    default_block: ast.expr | None,
) -> str:
    """Why this launch does not write the buffer in full through `cover` (a text for the
    evidence), or "" when it does. `bound`: each parameter's argument at the launch; `ref` the
    buffer's reference as the argument evaluates to; `decorated`: under autotune or heuristics,
    which may give the block another value than the launch."""
    ctx = ev.ctx
    fn = ctx.scope.node
    if not ctx.contiguous:
        return "the allocation may not be contiguous"
    if ref.view is not View.SELF or ref.region is not None:
        return "the buffer is passed as a view"
    if any(isinstance(n, ast.NamedExpr) for n in walk_all(call)) or any(
        k.arg is None for k in call.keywords
    ):
        return "the launch binds names or spreads `**options`"
    n_arg = bound.get(cover.n)
    if n_arg is None:
        return f"`{cover.n}` is not passed"

    def qualified(e: ast.expr) -> str | None:
        return ctx.resolver.qualified(ctx.scope, e)

    grid = _grid(call.func.slice if isinstance(call.func, ast.Subscript) else None, fn)
    if grid is None:
        return "the grid is not a tuple of the launch, a name bound once to one, or a lambda"
    items, meta, names = grid
    if any(not _stable(x, fn, ctx) for x in names):
        return "a name of the grid may change between the grid and the launch"
    b_arg = bound.get(cover.block)

    def same_block(div: ast.expr) -> bool:
        if (
            meta
            and isinstance(div, ast.Subscript)
            and isinstance(div.value, ast.Name)
            and div.value.id == meta
            and isinstance(div.slice, ast.Constant)
            and div.slice.value == cover.block
        ):
            return True
        if decorated:
            return False
        if b_arg is not None:
            return _text(div) == _text(b_arg) and _constant(b_arg, fn, ctx)
        return (
            isinstance(default_block, ast.Constant)
            and isinstance(div, ast.Constant)
            and type(div.value) is int
            and div.value == default_block.value
        )

    def blocks_of(e: ast.expr, size: ast.expr) -> bool:
        """`e` is `cdiv(size, B)` with B the kernel's block."""
        parts = _cdiv(e, qualified)
        return parts is not None and _text(parts[0]) == _text(size) and same_block(parts[1])

    dims = _sizes(ev, fn)
    if cover.stride:
        used = 1 if cover.col_axis is None else 2
        if len(dims) != 2 or None in dims:
            return "the buffer is not a 2-D allocation of known sizes"
        if len(items) < used or _text(items[0]) != dims[0]:
            return f"`grid[0]` is not the buffer's rows `{dims[0]}`"
        if _text(n_arg) != dims[1]:
            return f"`{cover.n}` is not the buffer's columns `{dims[1]}`"
        stride = bound.get(cover.stride)
        if stride is None or not (_text(stride) == dims[1] or _self_method(stride, "stride", ev)):
            return f"`{cover.stride}` is not the buffer's row stride"
        if cover.col_axis is None:
            b = b_arg
            if not (
                not decorated
                and isinstance(b, ast.Call)
                and _normalise(qualified(b.func)) in _NEXT_POW2
                and len(b.args) == 1
                and _text(b.args[0]) == _text(n_arg)
            ):
                return f"`{cover.block}` is not `triton.next_power_of_2` of the columns"
        elif not blocks_of(items[1], n_arg):
            return f"`grid[1]` is not `cdiv({_text(n_arg)}, {cover.block})`"
    else:
        used = 1
        size = dims[0] if len(dims) == 1 else None
        if not ((size is not None and _text(n_arg) == size) or _numel_of_buffer(n_arg, ev, fn)):
            return f"`{_text(n_arg)[:40]}` is not the buffer's size"
        if not items or not blocks_of(items[0], n_arg):
            return f"the grid is not `(cdiv({_text(n_arg)[:40]}, {cover.block}),)`"
    for extra in items[used:]:
        if not (isinstance(extra, ast.Constant) and type(extra.value) is int and extra.value >= 1):
            return "a further axis of the grid is not a positive literal"
    return ""


def _sizes(ev: Any, fn: ast.AST) -> list[str | None]:
    """The buffer's sizes as source text that means the same value at the launch: the
    dataflow's (names that hold ints, not bound again since the allocation), else the
    allocation's own where every name in it is a local bound once, outside loops, to an int, or
    an int parameter never bound again (`n = x.shape[0]` read by a grid lambda too)."""
    from zeroopt.analysis.allocations import shape_args
    from zeroopt.analysis.scalars import _is_int

    ctx = ev.ctx
    if not ctx.shape_known:
        return []
    args = shape_args(ctx.alloc)
    dims = ev.st.dims
    if len(dims) != len(args) or any(isinstance(a, ast.Starred) for a in args):
        return [d for d, _ in dims]

    def qualify(f: ast.expr) -> str | None:
        return ctx.resolver.qualified(ctx.scope, f)

    def fixed_int(a: ast.expr) -> bool:
        # Every name bound once (an int name bound again since the allocation, `n -= 3`, means
        # another value at the launch: the dataflow forgot that dimension for that reason).
        for n in walk_all(a):
            if isinstance(n, ast.Name):
                value = _bound_once(n.id, fn)
                if value is None:
                    if not (n.id in ctx.int_names and _param_once(n.id, fn)):
                        return False
                elif n.id not in ctx.int_names and not _is_int(value, set(ctx.int_names), qualify):
                    return False
            elif isinstance(n, ast.Constant):
                if type(n.value) is not int:
                    return False
            elif not isinstance(n, ast.BinOp | ast.operator | ast.expr_context):
                return False
        return True

    return [
        d if d is not None else (_text(a) if fixed_int(a) else None)
        for (d, _), a in zip(dims, args, strict=True)
    ]


def _normalise(name: str | None) -> str | None:
    from zeroopt.analysis.triton_summary import normalise  # it imports this module

    return normalise(name)


def _text(e: ast.expr) -> str:
    return ast.unparse(e)


def _grid(e: ast.expr | None, fn: ast.AST) -> tuple[list[ast.expr], str, list[str]] | None:
    """The grid's items, the lambda's parameter ("" for a tuple), and the names a tuple bound
    earlier mentions (they must hold the same values at the launch). A name must hold a tuple:
    a list may be changed in place between its binding and the launch."""
    names: list[str] = []
    if isinstance(e, ast.Name):
        value = _bound_once(e.id, fn)
        if value is None or isinstance(value, ast.List):
            return None  # a list bound earlier may be changed in place (`grid[0] = 1`) before
        if isinstance(value, ast.Tuple):
            callees = {id(n) for c in walk_all(value) if isinstance(c, ast.Call)
                       for n in walk_all(c.func)}  # fmt: skip
            names = sorted(
                {n.id for n in walk_all(value) if isinstance(n, ast.Name) and id(n) not in callees}
            )
        e = value
    if isinstance(e, ast.Tuple | ast.List):
        return list(e.elts), "", names
    if (
        isinstance(e, ast.Lambda)
        and len(e.args.args) == 1
        and not (
            e.args.vararg
            or e.args.kwarg
            or e.args.kwonlyargs
            or e.args.posonlyargs
            or e.args.defaults
        )
        and isinstance(e.body, ast.Tuple | ast.List)
    ):
        return list(e.body.elts), e.args.args[0].arg, []
    return None


def _bindings(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """Every binding of each name in `fn`, nested scopes included (a nested `nonlocal` may rebind
    one); `global`/`nonlocal` declarations count as bindings too."""
    memo = getattr(fn, "_zeroopt_cover_bindings", None)
    if memo is not None:
        return memo
    out: dict[str, list[ast.AST]] = {}
    for n in walk_all(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.setdefault(n.id, []).append(n)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            for name in n.names:
                out.setdefault(name, []).append(n)
        elif isinstance(n, ast.arg | ast.alias) and n is not None:
            name = n.arg if isinstance(n, ast.arg) else (n.asname or n.name).split(".")[0]
            out.setdefault(name, []).append(n)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n is not fn:
            out.setdefault(n.name, []).append(n)
        elif _pattern_name(n):
            out.setdefault(_pattern_name(n), []).append(n)
    fn._zeroopt_cover_bindings = out  # type: ignore[attr-defined]
    return out


def _pattern_name(n: ast.AST) -> str:
    """The name a `match` capture (`case n:`, `[*n]`, `{**n}`) or `except ... as n` binds, held as a
    string rather than as a `Name` node; "" for any other node."""
    if isinstance(n, ast.MatchAs | ast.MatchStar | ast.ExceptHandler):
        return n.name or ""
    if isinstance(n, ast.MatchMapping):
        return n.rest or ""
    return ""


def _in_loop(target: ast.AST, fn: ast.AST) -> bool:
    """`target` sits in a loop or a nested scope of `fn` (runs more than once, or later)."""
    todo: list[tuple[ast.AST, bool]] = [(c, False) for c in child_nodes(fn)]
    while todo:
        n, inside = todo.pop()
        if n is target:
            return inside
        again = inside or isinstance(
            n, ast.For | ast.AsyncFor | ast.While | ast.Lambda | ast.FunctionDef
            | ast.AsyncFunctionDef | ast.ClassDef | ast.comprehension
        )  # fmt: skip
        todo += [(c, again) for c in child_nodes(n)]
    return True


def _bound_once(name: str, fn: ast.AST) -> ast.expr | None:
    """The value of `name = value`, the one binding of `name` in `fn`, run at most once."""
    bs = _bindings(fn).get(name, [])
    if len(bs) != 1 or not isinstance(bs[0], ast.Name):
        return None
    for stmt in walk_all(fn):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and stmt.targets[0] is bs[0]
            and not _in_loop(stmt, fn)
        ):
            return stmt.value
    return None


def _param_once(name: str, fn: ast.AST) -> bool:
    """`name` is a parameter of `fn` that nothing binds again (nested scopes included)."""
    bs = _bindings(fn).get(name, [])
    return len(bs) == 1 and isinstance(bs[0], ast.arg) and bs[0] in _params(fn)


def _stable(name: str, fn: ast.AST, ctx: Any) -> bool:
    """`name` holds one value wherever the function reads it: a parameter never bound again, a
    local bound once outside any loop, or a module constant."""
    if _param_once(name, fn):
        return True
    if _bound_once(name, fn) is not None:
        return True
    return not _bindings(fn).get(name) and _module_constant(name, ctx)


def _params(fn: ast.AST) -> list[ast.arg]:
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _module_constant(name: str, ctx: Any) -> bool:
    """A module-level name bound once, to an int literal, that no `global` statement names."""
    from zeroopt.analysis.resolve import declared_globals

    scope = ctx.scope
    while scope.parent is not None:
        scope = scope.parent
    module = scope.node
    if not isinstance(module, ast.Module) or name in declared_globals(module):
        return False
    values = [
        s.value
        for s in module.body
        if isinstance(s, ast.Assign | ast.AnnAssign)
        for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        if isinstance(t, ast.Name) and t.id == name
    ]
    return (
        len(values) == 1
        and isinstance(values[0], ast.Constant)
        and type(values[0].value) is int
        and values[0].value > 0
        and sum(1 for n in walk_all(module) if _binds(n, name)) == 1
    )


def _binds(n: ast.AST, name: str) -> bool:
    """`n` binds `name` in the scope it sits in (module constants count every scope's)."""
    if isinstance(n, ast.Name):
        return n.id == name and not isinstance(n.ctx, ast.Load)
    if isinstance(n, ast.alias):
        return (n.asname or n.name).split(".")[0] == name
    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return n.name == name
    return _pattern_name(n) == name


def _constant(e: ast.expr, fn: ast.AST, ctx: Any) -> bool:
    """`e` has the same value wherever it is written in the launch: an int literal, a name that
    holds an int, or a module constant (a block size)."""
    if isinstance(e, ast.Constant):
        return type(e.value) is int and e.value > 0
    if isinstance(e, ast.Name):
        return e.id in ctx.int_names or _stable(e.id, fn, ctx)
    return False


def _cdiv(
    e: ast.expr, qualified: Callable[[ast.expr], str | None]
) -> tuple[ast.expr, ast.expr] | None:
    """(n, b) of `triton.cdiv(n, b)` or `(n + b - 1) // b`."""
    if isinstance(e, ast.Call) and len(e.args) == 2 and not e.keywords:
        if _normalise(qualified(e.func)) in _CDIV:
            return e.args[0], e.args[1]
        return None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv):
        top, b = e.left, e.right
        if (
            isinstance(top, ast.BinOp)
            and isinstance(top.op, ast.Sub)
            and isinstance(top.right, ast.Constant)
            and top.right.value == 1
            and type(top.right.value) is int
            and isinstance(top.left, ast.BinOp)
            and isinstance(top.left.op, ast.Add)
            and _text(top.left.right) == _text(b)
        ):
            return top.left.left, b
    return None


def _self_method(e: ast.expr, method: str, ev: Any) -> bool:
    """`buf.stride(0)` / `buf.numel()` of a name that holds the buffer itself at the launch."""
    from zeroopt.analysis.dataflow.places import place_key  # dataflow imports this module

    if not (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == method
        and not e.keywords
    ):
        return False
    if method == "stride" and not (
        len(e.args) == 1 and isinstance(e.args[0], ast.Constant) and e.args[0].value == 0
    ):
        return False
    if method == "numel" and e.args:
        return False
    key = place_key(e.func.value)
    ref = ev.lookup(key) if key is not None else None
    return ref is not None and ref.view is View.SELF and ref.region is None


def _numel_of_buffer(e: ast.expr, ev: Any, fn: ast.AST) -> bool:
    """`buf.numel()` of the buffer at the launch, or a name bound once (outside loops) to
    `buf.numel()` where `buf` is bound once (outside loops) to this very allocation."""
    if _self_method(e, "numel", ev):
        return True
    if not isinstance(e, ast.Name):
        return False
    value = _bound_once(e.id, fn)
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "numel"
        and not value.args
        and not value.keywords
        and isinstance(value.func.value, ast.Name)
    ):
        return False
    return _bound_once(value.func.value.id, fn) is ev.ctx.alloc
