"""What a `@triton.jit` kernel of the scanned file does to each pointer it is given.

A summary is derived from the kernel's source, per parameter: never dereferenced, loaded
(read), stored, loaded and stored (an accumulator), or updated by atomics. Pointers are followed
through pointer arithmetic (`p + offs`, `p[:, None]`, `tl.where`, `tl.make_block_ptr`,
`tl.advance`, `tl.multiple_of`, ...) into `tl.load`, `tl.store` and `tl.atomic_*`. A parameter
used in any other way (handed to a helper, stored as a value, returned, ...) is `unknown`, and
its argument at the launch keeps the analysis' default for code it cannot see.

What a summary claims about a launch (`kernel[grid](...)`):
- a parameter never dereferenced: its argument is not read and not written;
- loaded only: the argument is read; a definite read only when the load is unmasked, outside
  any branch or loop and the kernel has no early `return` (otherwise a possible read);
- stored only: written in part (which elements depends on the grid, masks and values), or in
  full where one store of it is flat blocks or rows masked by a size parameter and the launch's
  grid and arguments tie that size to the buffer's (triton_cover.py: `kernel_covers` here,
  `launch_cover` at the launch; triton.language's program_id, arange and masked-store semantics);
- loaded and stored, or atomics: possibly read, then written in part.
Each load and reading atomic is also kept with the tests it runs under (triton_reads.py), for
the launch to decide whether it surely reads memory nobody wrote.
Checked by execution in tests/test_triton_summary.py (TRITON_INTERPRET=1, poisoned buffers).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from zeroopt.analysis.resolve import (
    child_nodes,
    declared_globals,
    parameter_names,
    walk,
    walk_all,
    walk_bfs,
)
from zeroopt.analysis.triton_cover import StoreCover, kernel_covers
from zeroopt.analysis.triton_reads import KernelReads, collect

_TL = "triton.language."
# Calls whose result is a pointer derived from the listed positional arguments.
_PASS_THROUGH = {
    "where": (1, 2),
    "make_block_ptr": (0,),
    "make_tensor_descriptor": (0,),
    "advance": (0,),
    "multiple_of": (0,),
    "max_contiguous": (0,),
    "max_constancy": (0,),
    "broadcast_to": (0,),
    "reshape": (0,),
    "view": (0,),
    "expand_dims": (0,),
    "broadcast": (0, 1),
}
_KW_BASE = {"make_block_ptr": "base", "make_tensor_descriptor": "base"}
_ATOMICS = frozenset(
    {"atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and",
     "atomic_or", "atomic_xor"}
)  # fmt: skip
_JIT = frozenset({"triton.jit", "triton.runtime.jit.jit", "triton.language.jit"})
# Decorators that launch the jitted function itself with the launch's arguments: triton's own,
# and sglang's `cached_triton_kernel` (sglang 0.5.23 sglang/srt/utils/common.py:4949; its
# `CachedKernel.__getitem__` launcher calls `self.fn[grid](*args, **kwargs)`, line 4915).
_WRAPPERS = frozenset(
    {"triton.autotune", "triton.heuristics", "triton.runtime.autotune",
     "sglang.srt.utils.cached_triton_kernel", "sglang.srt.utils.common.cached_triton_kernel"}
)  # fmt: skip
# Re-exports of triton and triton.language (vllm/triton_utils/__init__.py: `import triton`,
# `import triton.language as tl` when triton is installed, placeholders otherwise).
_ALIASES = (("vllm.triton_utils.tl.", _TL), ("vllm.triton_utils.triton.", "triton."))


def normalise(name: object) -> str | None:
    """A qualified name with triton's known re-exports mapped back to triton's own."""
    if not isinstance(name, str):
        return None
    for alias, real in _ALIASES:
        if name.startswith(alias):
            return real + name[len(alias) :]
    return name


@dataclass
class ParamEffect:
    loads: bool = False
    definite_load: bool = False  # some load is unmasked, unconditional, before any return
    stores: bool = False
    atomics: bool = False
    unknown: str = ""  # how it is used otherwise (empty: not at all)
    line: int = 0  # first dereference or unknown use

    @property
    def kind(self) -> str:
        if self.unknown:
            return "unknown"
        if self.atomics:
            return "atomic"
        if self.loads and self.stores:
            return "accumulate"
        if self.stores:
            return "stored"
        if self.loads:
            return "loaded"
        return "unused"


@dataclass
class TritonSummary:
    name: str
    line: int
    params: tuple[str, ...]
    effects: dict[str, ParamEffect] = field(default_factory=dict)
    # Each read site and what must hold for it to run (triton_reads.py), judged at a launch.
    reads: KernelReads | None = None
    # Per pointer parameter, the store that covers a range set by the kernel's parameters
    # (triton_cover.py), or why none does; judged with the grid at a launch.
    covers: dict[str, StoreCover | str] = field(default_factory=dict)


def is_triton_kernel(fn: ast.FunctionDef, qualify: object) -> bool:
    """Decorated with `@triton.jit` (possibly under `@triton.autotune`/`@triton.heuristics`),
    and nothing else."""
    if not fn.decorator_list:
        return False
    found = False
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = normalise(qualify(target)) if callable(qualify) else None
        if name in _JIT:
            found = True
        elif name not in _WRAPPERS:
            return False
    return found


def summarise(fn: ast.FunctionDef, qualify: object) -> TritonSummary:
    """`qualify(expr)` gives the qualified name of a callee (`tl.load` -> triton.language.load)."""
    args = fn.args
    params = tuple(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
    summary = TritonSummary(fn.name, fn.lineno, params, {p: ParamEffect() for p in params})
    if args.vararg or args.kwarg:
        for e in summary.effects.values():
            e.unknown = "the kernel takes *args or **kwargs"
        return summary

    def tl_name(func: ast.expr) -> str | None:
        name = normalise(qualify(func)) if callable(qualify) else None
        if isinstance(name, str) and name.startswith(_TL):
            return name[len(_TL) :]
        return None

    # 1. Which parameters each local name may point into (flow-insensitive, to a fixpoint).
    derived: dict[str, set[str]] = {p: {p} for p in params}

    def roots(e: ast.expr | None) -> set[str]:
        """Parameters the pointer value of `e` may be derived from."""
        if e is None:
            return set()
        if isinstance(e, ast.Name):
            return set(derived.get(e.id, ()))
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            return roots(e.left) | roots(e.right)
        if isinstance(e, ast.Subscript):
            return roots(e.value)
        if isinstance(e, ast.IfExp):
            return roots(e.body) | roots(e.orelse)
        if isinstance(e, ast.Call):
            name = tl_name(e.func)
            if name in _PASS_THROUGH:
                out: set[str] = set()
                for i in _PASS_THROUGH[name]:
                    if i < len(e.args):
                        out |= roots(e.args[i])
                for k in e.keywords:
                    if k.arg == _KW_BASE.get(name):
                        out |= roots(k.value)
                return out
            if isinstance(e.func, ast.Attribute) and e.func.attr == "to" and not tl_name(e.func):
                return roots(e.func.value)  # `p.to(tl.pointer_type(...))`
        return set()

    def targets(t: ast.expr) -> list[str]:
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, ast.Tuple | ast.List):
            return [n for x in t.elts for n in targets(x)]
        if isinstance(t, ast.Starred):
            return targets(t.value)
        return []

    changed = True
    while changed:
        changed = False
        for node in walk_bfs([fn]):
            pairs: list[tuple[list[str], ast.expr | None]] = []
            if isinstance(node, ast.Assign):
                value = node.value
                if isinstance(value, ast.Tuple) and all(
                    isinstance(t, ast.Tuple) and len(t.elts) == len(value.elts)
                    for t in node.targets
                ):
                    for t in node.targets:
                        assert isinstance(t, ast.Tuple)
                        pairs += [(targets(a), b) for a, b in zip(t.elts, value.elts, strict=True)]
                else:
                    pairs += [(targets(t), value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                pairs.append((targets(node.target), node.value))
            elif isinstance(node, ast.For):
                # Iterating a pointer block is not understood: the loop variable may point anywhere.
                pairs.append((targets(node.target), node.iter))
            for names, assigned in pairs:
                src = roots(assigned)
                for n in names:
                    cur = derived.setdefault(n, set())
                    if not src <= cur:
                        cur |= src
                        changed = True

    # Names bound once, by a plain `name = value` among the body's own statements: the only
    # names whose pointer is known on every path (a definite load needs that).
    binds: dict[str, int] = {}
    for node in walk_bfs([fn]):
        for bound in _bound_names(node):
            binds[bound] = binds.get(bound, 0) + 1
    single: dict[str, ast.expr] = {}
    for stmt in fn.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and binds.get(stmt.targets[0].id) == 1
        ):
            single[stmt.targets[0].id] = stmt.value

    def must_roots(e: ast.expr | None, depth: int = 0) -> set[str]:
        """Parameters the pointer of `e` points into on every execution: no `x if c else y`, no
        `tl.where` choice, no name bound twice or under a branch."""
        if e is None or depth > 50:
            return set()
        if isinstance(e, ast.Name):
            if e.id in params and e.id not in binds:
                return {e.id}
            value = single.get(e.id)
            return must_roots(value, depth + 1) if value is not None else set()
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            return must_roots(e.left, depth + 1) | must_roots(e.right, depth + 1)
        if isinstance(e, ast.Subscript):
            return must_roots(e.value, depth + 1)
        if isinstance(e, ast.Call):
            name = tl_name(e.func)
            if name in _PASS_THROUGH and name != "where":
                out: set[str] = set()
                for i in _PASS_THROUGH[name]:
                    if i < len(e.args):
                        out |= must_roots(e.args[i], depth + 1)
                for k in e.keywords:
                    if k.arg == _KW_BASE.get(name):
                        out |= must_roots(k.value, depth + 1)
                return out
            if isinstance(e.func, ast.Attribute) and e.func.attr == "to" and not name:
                return must_roots(e.func.value, depth + 1)
        return set()

    # 2. Every use of a pointer-valued name, by context.
    has_return = any(isinstance(n, ast.Return) for n in walk_bfs([fn]))

    def mark(rs: set[str], what: str, line: int, definite: bool = False) -> None:
        for p in rs:
            eff = summary.effects[p]
            if not eff.line:
                eff.line = line
            if what == "load":
                eff.loads = True
                eff.definite_load = eff.definite_load or definite
            elif what == "store":
                eff.stores = True
            elif what == "atomic":
                eff.atomics = True
            elif not eff.unknown:
                eff.unknown = what

    def pointer_position(e: ast.expr, consumed: set[int]) -> None:
        """`e` is a pointer expression consumed by pointer arithmetic: its pointer parts are
        consumed, any other sub-expression is an ordinary use."""
        if isinstance(e, ast.Name):
            consumed.add(id(e))
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            pointer_position(e.left, consumed)
            pointer_position(e.right, consumed)
        elif isinstance(e, ast.Subscript):
            pointer_position(e.value, consumed)
        elif isinstance(e, ast.IfExp):
            pointer_position(e.body, consumed)
            pointer_position(e.orelse, consumed)
        elif isinstance(e, ast.Call):
            name = tl_name(e.func)
            if name in _PASS_THROUGH:
                for i in _PASS_THROUGH[name]:
                    if i < len(e.args):
                        pointer_position(e.args[i], consumed)
                for k in e.keywords:
                    if k.arg == _KW_BASE.get(name):
                        pointer_position(k.value, consumed)
            elif isinstance(e.func, ast.Attribute) and e.func.attr == "to" and not name:
                pointer_position(e.func.value, consumed)

    derefs: list[tuple[ast.Call, str, set[str]]] = []  # for triton_reads
    consumed: set[int] = set()  # Name nodes whose pointer use is understood
    top_exprs: set[int] = set()  # nodes of the body's own statements (not under if/for/while)
    for stmt in fn.body:
        if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
            top_exprs.update(id(x) for x in walk_bfs([stmt]))

    for node in walk_bfs([fn]):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            if node.value is not None:
                pointer_position(node.value, consumed)
        elif isinstance(node, ast.Compare):
            # `p is None` / `p is not None`: which optional pointers were given.
            if (
                isinstance(node.left, ast.Name)
                and all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
                and all(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
            ):
                consumed.add(id(node.left))
        elif isinstance(node, ast.Attribute) and node.attr in ("dtype", "type"):
            if isinstance(node.value, ast.Name):
                consumed.add(id(node.value))  # `p.dtype.element_ty`: metadata
        elif isinstance(node, ast.Call):
            name = tl_name(node.func)
            ptr: ast.expr | None = node.args[0] if node.args else None
            for k in node.keywords:
                if k.arg == "pointer":
                    ptr = k.value
            if name in ("load", "store") or name in _ATOMICS:
                if ptr is None:
                    continue
                pointer_position(ptr, consumed)
                rs = roots(ptr)
                derefs.append((node, name, rs))
                if name == "load":
                    masked = len(node.args) > 1 or any(
                        k.arg in ("mask", "other", "boundary_check") for k in node.keywords
                    )
                    definite = not masked and not has_return and id(node) in top_exprs
                    must = must_roots(ptr) if definite else set()
                    mark(rs - must, "load", node.lineno)
                    mark(rs & must, "load", node.lineno, definite)
                else:
                    mark(rs, "store" if name == "store" else "atomic", node.lineno)

    for node in walk_bfs([fn]):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and id(node) not in consumed
            and derived.get(node.id)
        ):
            mark(derived[node.id], f"`{node.id}` used at line {node.lineno}", node.lineno)
    _decorator_uses(fn, summary)
    summary.reads = collect(fn, params, derefs, tl_name, len(fn.decorator_list) > 1)
    summary.covers = kernel_covers(
        fn, params, tl_name, summary.reads.constexpr, summary.reads.rebound
    )
    return summary


def _bound_names(node: ast.AST) -> list[str]:
    return [node.id] if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) else []


# What a decorator's hook may do with a launch argument without reading its elements.
_METADATA = frozenset(
    {"shape", "dtype", "stride", "size", "numel", "device", "ndim", "dim", "element_size",
     "is_contiguous", "data_ptr", "is_cuda", "nbytes"}
)  # fmt: skip
# Decorator arguments that name code run with the launch's arguments (`triton.heuristics`
# values, `triton.autotune` hooks, `triton.Config(pre_hook=...)`, `triton.jit(launch_metadata=)`).
# Configs built elsewhere (`configs=make_configs()`) are not searched for `pre_hook`s.
_HOOKS = frozenset(
    {"pre_hook", "post_hook", "prune_configs_by", "early_config_prune", "perf_model",
     "values", "launch_metadata"}
)  # fmt: skip


def _decorator_uses(fn: ast.FunctionDef, summary: TritonSummary) -> None:
    """`@triton.heuristics({...: lambda args: ...})` and autotune hooks run on the host with the
    launch's arguments: a hook that may read a tensor argument makes that parameter `unknown`
    (a hook the analysis cannot see makes every parameter so)."""

    def everything(why: str, line: int) -> None:
        for e in summary.effects.values():
            if not e.unknown:
                e.unknown = why
                e.line = e.line or line

    def lambda_uses(lam: ast.Lambda) -> None:
        names = set(parameter_names(lam))
        parents: dict[int, ast.AST] = {}
        for n in walk_all(lam.body):
            for c in child_nodes(n):
                parents[id(c)] = n
        for n in walk_all(lam.body):
            if not (isinstance(n, ast.Name) and n.id in names):
                continue
            sub = parents.get(id(n))
            key = sub.slice if isinstance(sub, ast.Subscript) and sub.value is n else None
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                everything(f"a decorator's hook uses its arguments at line {n.lineno}", n.lineno)
                return
            if key.value not in summary.effects:
                continue
            use = parents.get(id(sub))
            if isinstance(use, ast.Attribute) and use.attr in _METADATA:
                continue
            if (
                isinstance(use, ast.Compare)
                and use.left is sub
                and all(isinstance(op, ast.Is | ast.IsNot) for op in use.ops)
            ):
                continue
            eff = summary.effects[key.value]
            if not eff.unknown:
                eff.unknown = f"used by a decorator's hook at line {n.lineno}"
                eff.line = eff.line or n.lineno

    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        for n in walk_all(dec):
            if isinstance(n, ast.Lambda):
                lambda_uses(n)
        hooks: list[ast.expr] = []
        for n in walk_all(dec):
            if isinstance(n, ast.Call):
                hooks += [k.value for k in n.keywords if k.arg in _HOOKS or k.arg is None]
        for arg in dec.args:  # `triton.heuristics({...})`: the dict's values are hooks
            if isinstance(arg, ast.Dict):
                hooks += [v for v in arg.values if v is not None]
            elif not isinstance(arg, ast.List | ast.Tuple | ast.Constant):
                hooks.append(arg)
        for h in hooks:
            if isinstance(h, ast.Lambda) or (isinstance(h, ast.Constant) and h.value is None):
                continue
            if isinstance(h, ast.Dict) and all(
                isinstance(v, ast.Lambda | ast.Constant) for v in h.values
            ):
                continue  # `prune_configs_by={"early_config_prune": lambda ...}`: seen above
            everything(f"a decorator's hook at line {h.lineno} is not seen", h.lineno)


class ModuleKernels:
    """The module's top-level `@triton.jit` functions that nothing else in the module binds,
    each recognised and summarised on first ask (`get`): a module defines many kernels, a file's
    dataflow asks about the few it launches on a buffer. The answers are `module_kernels`'."""

    def __init__(self, module: ast.Module, qualify_at: object) -> None:
        defs: dict[str, list[ast.FunctionDef]] = {}
        other: set[str] = set()
        for stmt in module.body:
            if isinstance(stmt, ast.FunctionDef):
                defs.setdefault(stmt.name, []).append(stmt)
            else:
                for n in walk([stmt]):  # order-free: a set
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                        other.add(n.id)
                    elif isinstance(n, ast.alias):
                        other.add((n.asname or n.name).split(".")[0])
                    elif isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                        other.add(n.name)
        other |= declared_globals(module)
        # Name -> its one def, in the module's order; the summaries made so far.
        self.candidates = {
            name: fns[0] for name, fns in defs.items() if len(fns) == 1 and name not in other
        }
        self._qualify_at = qualify_at
        self._done: dict[str, TritonSummary | None] = {}

    def get(self, name: str) -> TritonSummary | None:
        if name in self._done:
            return self._done[name]
        fn = self.candidates.get(name)
        found = None
        if fn is not None:
            qualify_at = self._qualify_at

            def q(e: ast.expr, fn: ast.FunctionDef = fn) -> str | None:
                return qualify_at(fn, e) if callable(qualify_at) else None

            if is_triton_kernel(fn, q):
                found = summarise(fn, q)
        self._done[name] = found
        return found

    def __getitem__(self, name: str) -> TritonSummary:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found


def module_kernels(module: ast.Module, qualify_at: object) -> dict[str, TritonSummary]:
    """The module's top-level `@triton.jit` functions, by name, that nothing else in the module
    binds (`qualify_at(fn, expr)` qualifies an expression inside `fn`), all summarised now."""
    kernels = ModuleKernels(module, qualify_at)
    return {name: found for name in kernels.candidates if (found := kernels.get(name)) is not None}
