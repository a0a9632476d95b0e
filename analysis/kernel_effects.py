"""What a kernel call does to each argument, for the dataflow: Triton launches of kernels defined
in the scanned module (triton_summary.py) and the built-in library of custom-op contracts
(kernel_library.py). `kernel_plan` says, per argument, one of:

- `none`: not read and not written (shapes and scalars, pointers the kernel never dereferences);
- `read` / `maybe-read`: read (definitely, or possibly: masked or conditional loads);
- `write`: written in full without being read; `write-part`: some elements written;
- `write-each`: a list whose every tensor is written in full (followed for a list of fresh
  buffers of the site, analysis/dataflow/gather_lists.py; otherwise `opaque`);
- `accumulate`: possibly read, then written in part (load then store, atomics);
- `read-write`: read in full, then written in full (in-place ops such as all_reduce);
- `opaque`: the analysis' default for code it cannot see (possible read, then lost).

`apply_plan` applies it through the dataflow evaluator (analysis/dataflow/calls.py). Every message names the
summary or the contract (with its source) that decided it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zeroopt.analysis.kernel_library import OpContract, group_membership, op_contract_for
from zeroopt.analysis.resolve import Resolver, Scope, child_nodes
from zeroopt.analysis.state import Ref, Region, View
from zeroopt.analysis.triton_cover import StoreCover, launch_cover
from zeroopt.analysis.triton_reads import Launch, empty_grid
from zeroopt.analysis.triton_summary import ModuleKernels


@dataclass(frozen=True)
class ArgEffect:
    arg: ast.expr
    action: str
    how: str
    # A Triton load or atomic that may run at this launch (triton_reads.Launch.read): its text.
    reach: str = ""
    # (k, text): program 0 surely loads element k (triton_reads.Launch.first_element).
    first: tuple[int, str] | None = None
    # A store that may cover the whole buffer with this launch's grid (triton_cover.py): given
    # the dataflow and the buffer's reference, why it does not ("" when it does), and the text
    # for a write in full.
    whole: Callable[[Any, Ref], str] | None = None
    whole_how: str = ""


@dataclass(frozen=True)
class Plan:
    what: str  # the callee, for messages
    effects: tuple[ArgEffect, ...]
    # A Triton kernel reaches memory only through its arguments; a custom op likewise.
    unknown_code: bool = True
    # A Triton kernel gets a raw pointer: given a view, it may load any element of the buffer
    # (`p - 8`, its own strides), not only the view's.
    raw_pointers: bool = False


_CACHE: dict[int, tuple[ast.Module, ModuleKernels]] = {}


def _module_of(scope: Scope) -> ast.Module | None:
    while scope.parent is not None:
        scope = scope.parent
    return scope.node if isinstance(scope.node, ast.Module) else None


def _summaries(resolver: Resolver, module: ast.Module) -> ModuleKernels:
    hit = _CACHE.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]

    def qualify_at(fn: ast.AST, e: ast.expr) -> str | None:
        scope = resolver.scopes.get(fn) or resolver.scopes.get(module)
        return resolver.qualified(scope, e) if scope is not None else None

    found = ModuleKernels(module, qualify_at)  # each kernel summarised when first asked
    if len(_CACHE) > 8:
        _CACHE.clear()
    _CACHE[id(module)] = (module, found)
    return found


def _module_binding(scope: Scope, name: str) -> bool:
    """`name`, seen from `scope`, is the module's own global (no local or enclosing binding)."""
    first = True
    current: Scope | None = scope
    if name in scope.global_names:
        return True
    while current is not None:
        if (first or not current.is_class) and name in current.bindings:
            return current.parent is None
        first = False
        current = current.parent
    return False


def _triton_plan(e: ast.Call, resolver: Resolver, scope: Scope) -> Plan | None:
    func = e.func
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        return None
    module = _module_of(scope)
    if module is None:
        return None
    summary = None
    origin = "line"
    if _module_binding(scope, func.value.id):
        summary = _summaries(resolver, module).get(func.value.id)
    if summary is None and resolver.project is not None:
        # A kernel imported from another scanned module (analysis/project.py): the name must
        # resolve with certainty to a def that is that module's only binding of it.
        qual = resolver.resolve_name(scope, func.value.id)
        if qual and "." in qual:
            home, _, name = qual.rpartition(".")
            summary = resolver.project.kernel_summary(home, name)
            origin = f"{home}, line"
    if summary is None:
        return None
    if any(isinstance(a, ast.Starred) for a in e.args):
        return None
    bound: list[tuple[str | None, ast.expr]] = [
        (summary.params[i] if i < len(summary.params) else None, a) for i, a in enumerate(e.args)
    ]
    # `**options` (num_warps, ...): whatever it holds is passed on unseen (opaque); it cannot
    # re-bind the parameters given here (Python rejects a repeated keyword).
    bound += [(k.arg if k.arg in summary.params else None, k.value) for k in e.keywords]
    where = f"Triton kernel `{summary.name}` ({origin} {summary.line})"
    launch = None
    if summary.reads is not None and not empty_grid(func.slice):
        spread = any(k.arg is None for k in e.keywords)
        launch = Launch(summary.reads, {p: a for p, a in bound if p is not None}, spread)
    effects = []
    for p, a in bound:
        if p is None:
            effects.append(ArgEffect(a, "opaque", f"not a parameter of {where}"))
            continue
        eff = summary.effects[p]
        kind = eff.kind
        at = f" at line {eff.line}" if eff.line else ""
        if kind == "unknown":
            effects.append(ArgEffect(a, "opaque", f"`{p}` of {where}: {eff.unknown}"))
        elif kind == "unused":
            effects.append(ArgEffect(a, "none", f"`{p}` of {where}: never dereferenced"))
        elif kind == "loaded":
            effects.append(
                ArgEffect(
                    a,
                    "read" if eff.definite_load else "maybe-read",
                    f"`{p}` of {where}: loaded{at}"
                    + ("" if eff.definite_load else " (masked or conditional)"),
                    *_reach(launch, p, where, first=True),
                )
            )
        elif kind == "stored":
            part = f"`{p}` of {where}: stored{at}, region not proven whole"
            cover = summary.covers.get(p)
            if not isinstance(cover, StoreCover):
                why = cover or "every store of it is under an `if` or in a loop"
                effects.append(ArgEffect(a, "write-part", f"{part} ({why})"))
                continue
            effects.append(
                ArgEffect(
                    a, "write-part", part,
                    whole=_whole(e, cover, {q: x for q, x in bound if q is not None}, summary),
                    whole_how=f"`{p}` of {where}: {_covered_text(cover)}",
                )
            )  # fmt: skip
        else:
            text = "atomics" if kind == "atomic" else "loaded and stored (accumulates)"
            reach = _reach(launch, p, where, first=False)
            effects.append(ArgEffect(a, "accumulate", f"`{p}` of {where}: {text}{at}", *reach))
    return Plan(f"{func.value.id}[...]", tuple(effects), raw_pointers=True)


def _whole(
    e: ast.Call, cover: StoreCover, bound: dict[str, ast.expr], summary: Any
) -> Callable[[Any, Ref], str]:
    reads = summary.reads
    decorated = reads is None or reads.decorated
    default = reads.defaults.get(cover.block) if reads is not None else None

    def check(ev: Any, ref: Ref) -> str:
        return launch_cover(ev, e, cover, bound, ref, decorated, default)

    return check


def _covered_text(cover: StoreCover) -> str:
    """Why the store at this launch writes every element (triton.language semantics)."""
    if not cover.stride:
        return (
            f"written in full by the store at line {cover.line}: programs `0 <= pid < "
            f"cdiv({cover.n}, {cover.block})` store `pid * {cover.block} + tl.arange(0, "
            f"{cover.block})` masked `< {cover.n}`, the buffer's size (program_id, arange, masked "
            "store)"
        )
    cols = (
        f"`tl.arange(0, {cover.block})`, `{cover.block}` >= `{cover.n}`"
        if cover.col_axis is None
        else f"blocks of `{cover.block}` over `cdiv({cover.n}, {cover.block})` programs of axis 1"
    )
    return (
        f"written in full by the store at line {cover.line}: one program per row (`grid[0]` the "
        f"buffer's rows, stride `{cover.stride}`), columns {cols}, masked `< {cover.n}`, the "
        "buffer's columns (program_id, arange, masked store)"
    )


def _reach(
    launch: Launch | None, p: str, where: str, first: bool
) -> tuple[str, tuple[int, str] | None]:
    """What the launch surely (or on an assumed-feasible path) reads of `p`. The first element
    only for a parameter the kernel never stores: no other program can have written it."""
    if launch is None:
        return "", None
    site = launch.read(p)
    reach = f"`{p}` of {where}: {site[1]}" if site is not None else ""
    element = launch.first_element(p) if first else None
    if element is None:
        return reach, None
    k, line = element
    return reach, (
        k,
        f"`{p}` of {where}: program 0 loads element {k} at line {line} (assuming the grid is "
        "not empty)",
    )


def _op_plan(e: ast.Call, op: OpContract) -> Plan | None:
    if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
        return None
    if len(e.args) > len(op.params):
        return None
    bound = [(op.params[i], a) for i, a in enumerate(e.args)]
    bound += [(k.arg, k.value) for k in e.keywords if k.arg is not None]
    for p, a in bound:
        if p in op.unless_false and not (isinstance(a, ast.Constant) and a.value is False):
            return None  # async_op=True: nothing is written yet when the call returns
    src = f"contract of `{op.name}` ({op.source})"
    outside = False  # this rank may be outside `group`: the op then reads and writes nothing
    if "group" in op.params:
        member = group_membership(e, op.params.index("group"))
        outside = member is None
        if member:
            src = f"{src}, {member}"
    if outside:
        # Where this rank is in the group the op reads what the contract says (an `unsafe`
        # may rest on that, said); its writes are not certain (kernel_library.py).
        src = f"{src}, assuming this rank is in its `group` to read (outside it, the op returns)"
    effects = []
    for p, a in bound:
        if p in op.reads_writes and outside:
            how = f"`{p}` read, then written only where this rank is in `group`: {src}"
            effects.append(ArgEffect(a, "read-write-part", how))
        elif p in op.reads_writes:
            effects.append(ArgEffect(a, "read-write", f"`{p}` read then written in full: {src}"))
        elif p in op.writes and outside:
            how = f"`{p}` written only where this rank is in `group`: {src}"
            effects.append(ArgEffect(a, "write-part", how))
        elif p in op.writes:
            effects.append(ArgEffect(a, "write", f"`{p}` written in full: {src}"))
        elif p in op.writes_each and outside:
            how = f"`{p}`: each tensor written only where this rank is in `group` ({src})"
            effects.append(ArgEffect(a, "opaque", how))
        elif p in op.writes_each:
            effects.append(
                ArgEffect(a, "write-each", f"each tensor of `{p}` written in full: {src}")
            )
        elif p in op.writes_part:
            effects.append(
                ArgEffect(a, "write-part", f"`{p}` written in part ({op.writes_part[p]}): {src}")
            )
        elif p in op.accumulates:
            effects.append(ArgEffect(a, "accumulate", f"`{p}` accumulated into: {src}"))
        elif p in op.reads:
            effects.append(ArgEffect(a, "read", f"`{p}` read: {src}"))
        elif p in op.reads_part:
            effects.append(
                ArgEffect(a, "maybe-read", f"`{p}` read in part ({op.reads_part[p]}): {src}")
            )
        elif p in op.ignored or p in op.unless_false:
            effects.append(ArgEffect(a, "none", f"`{p}`: not a tensor ({src})"))
        else:
            effects.append(ArgEffect(a, "opaque", f"`{p}` not described by the {src}"))
    return Plan(op.name, tuple(effects))


def kernel_plan(e: ast.Call, qual: str | None, resolver: Resolver, scope: Scope) -> Plan | None:
    plan = _triton_plan(e, resolver, scope)
    if plan is not None:
        return plan
    op = op_contract_for(qual)
    if op is not None:
        return _op_plan(e, op)
    return None


_ORDER = {
    "none": 0,
    "read": 1,
    "maybe-read": 1,
    "opaque": 1,
    "read-write": 1,
    "read-write-part": 1,
    "accumulate": 1,
}


def apply_plan(ev: Any, e: ast.Call, plan: Plan) -> None:
    """Reads first, then writes (a kernel reads its inputs before its outputs are final)."""
    writes_after: list[tuple[ArgEffect, Any]] = []
    # The buffer handed to one parameter only: through another, the kernel may store it first.
    # (`x.stride(0)` given to a parameter never dereferenced does not count.)
    alone = sum(_mentions(ev, x.arg) for x in plan.effects if x.action != "none") == 1
    for eff in sorted(plan.effects, key=lambda x: _ORDER.get(x.action, 2)):
        a = eff.arg
        if eff.action == "none":
            ev.eval(a)
            continue
        if eff.action == "write-each":
            if ev.write_each(a, eff.how):
                continue
            eff = ArgEffect(a, "opaque", f"{eff.how}; not a list of fresh buffers of the site")
        elif eff.action in ("write", "write-part"):
            ref = ev.eval(a)
            if ref is None:
                continue
            full, how = eff.action == "write", eff.how
            if eff.whole is not None and not full:
                why = eff.whole(ev, ref) if alone else "another argument may name the buffer"
                full, how = (True, eff.whole_how) if not why else (False, f"{how} ({why})")
            ev.write(ref, a, full=full, region=None, how=how)
            continue
        ref = ev._eval_value(a)
        if ref is None:
            continue
        if plan.raw_pointers and ref.view not in (View.SELF, View.FULL):
            how = f"{eff.how}; a pointer into part of the buffer may reach the rest of it"
            eff = ArgEffect(a, "opaque", how)
        if eff.action == "opaque":
            ev.read(ref, a, definite=False, how=f"passed to `{plan.what}`: {eff.how}")
            ev.lost(a, f"passed to `{plan.what}` ({eff.how})")
        elif alone and _unread_memory(ev, eff, ref):
            if eff.action == "accumulate":  # read unwritten memory, reported by `ev.read`
                writes_after.append((eff, ref))
        elif eff.action in ("read", "read-write", "read-write-part"):
            ev.read(ref, a, definite=True, how=eff.how)
            if eff.action != "read":
                writes_after.append((eff, ref))
        elif eff.action == "maybe-read":
            ev.read(ref, a, definite=False, how=eff.how)
        elif eff.action == "accumulate":
            ev.read(ref, a, definite=False, how=eff.how)
            writes_after.append((eff, ref))
    for eff, ref in writes_after:
        ev.write(ref, eff.arg, full=eff.action == "read-write", region=None, how=eff.how)


_SHAPE_METHODS = frozenset({"stride", "size", "numel", "dim", "element_size", "is_contiguous"})
_SHAPE_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda"})


def _mentions(ev: Any, a: ast.expr) -> bool:
    """`a` may name the buffer: the allocation itself, or a place the state says may hold it."""
    from zeroopt.analysis.dataflow.places import place_key  # dataflow imports this module

    todo: list[ast.AST] = [a]
    while todo:
        n = todo.pop()
        method = (
            n.func.attr if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) else ""
        )
        if isinstance(n, ast.Call) and method in _SHAPE_METHODS:
            todo += [*n.args, *(k.value for k in n.keywords)]
            continue  # `x.stride(0)`: an int, not the buffer
        if isinstance(n, ast.Attribute) and n.attr in _SHAPE_ATTRS:
            continue
        todo += list(child_nodes(n))
        if n is ev.ctx.alloc:
            return True
        key = place_key(n) if isinstance(n, ast.Name | ast.Attribute | ast.Subscript) else None
        if key is not None and ev.lookup(key) is not None:
            return True
    return False


def _unread_memory(ev: Any, eff: ArgEffect, ref: Ref) -> bool:
    """A Triton launch that surely reads memory nobody wrote (triton_reads.py): a load or atomic
    that may run while nothing was written on any path, or the element program 0 loads where no
    write on any path reaches. Reads it definitely; False where neither holds."""
    st = ev.st
    if eff.action not in ("read", "maybe-read", "accumulate") or st.full:
        return False
    # The guard (ZO002) never rests on a load assumed to run (a mask, a test: an assumption about
    # values); a dummy `torch.empty` a kernel reads and discards is no bug.
    fresh = not st.touched and not st.some_write and st.may_writes == ()
    if eff.reach and fresh and not ev.ctx.certain_reads_only and eff.action != "read":
        ev.read(ref, eff.arg, definite=True, how=eff.reach)
    elif eff.first is not None and ref.view is View.SELF and st.may_writes:
        k, how = eff.first
        if k > 0:
            size = st.dims[0][0] if len(st.dims) == 1 else None
            if size is None or not size.isdigit() or int(size) <= k:
                return False  # element k exists only where a literal 1-D size shows it
            if any(dim not in (0, -1) for dim, *_ in st.may_writes):
                return False
        if any(lo <= k and (hi is None or k < hi) for _, lo, hi, _, _ in st.may_writes):
            return False
        one = Ref(View.PART, Region(0, str(k), str(k + 1), frozenset()))
        ev.read(one, eff.arg, definite=True, how=how, whole=True)
    else:
        return False
    return True
