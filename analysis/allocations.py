"""Find the allocations to analyse, and the function body each one runs in.

Detection is name resolution, not text matching: `th.zeros` with `import torch as th` and `zeros`
from `from torch import zeros` are found; a user's own `zeros` and `np.zeros` are not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import cast

from zeroopt.analysis.resolve import Resolver, Scope
from zeroopt.analysis.semantics import EMPTY_CALLS, ZEROS_CALLS

ZEROS = {c: c for c in ZEROS_CALLS if c.startswith("torch.")}
EMPTY = {c: c for c in EMPTY_CALLS if c.startswith("torch.")}
METHODS = {c.rsplit(".", 1)[1]: c for c in (*ZEROS_CALLS, *EMPTY_CALLS) if c.startswith("Tensor.")}
# The last name of every attribute call that can be an allocation (`torch.zeros`, `x.new_zeros`).
_ATTRS = frozenset(q.rsplit(".", 1)[1] for q in [*ZEROS, *EMPTY]) | frozenset(METHODS)

# Allocations whose layout is not the default contiguous one.
_STRIDED = frozenset({"torch.zeros_like", "torch.empty_like", "torch.empty_strided"})

Owner = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda


def called_name(e: ast.expr) -> str:
    """The last name of what a call calls (`zeros` of `torch.zeros(...)`, `x.new_zeros(...)` and
    `zeros(...)`); "" for a call of anything else (a subscript, a call's result) or no call."""
    f = e.func if isinstance(e, ast.Call) else None
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def shape_args(call: ast.Call) -> list[ast.expr]:
    """The shape an allocation call was given, one expression per dimension: positional sizes,
    `size=`, or one tuple/list of them (`torch.zeros((2, n))`)."""
    args = list(call.args)
    name = called_name(call)
    if name == "empty_strided":
        args = args[:1]  # (size, stride, ...): the size is the first argument
    for kw in call.keywords:
        if kw.arg == "size":
            args = [kw.value]
    if len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List):
        args = list(args[0].elts)
    return args


@dataclass(frozen=True)
class Allocation:
    call: ast.Call
    name: str  # "torch.zeros", "Tensor.new_zeros", ...
    owner: Owner  # the body the allocation runs in
    scope: Scope
    target: ast.expr | None  # the assignment target, when the call is assigned directly
    key: ast.expr | None = None  # the dict key, for `target = {key: <call>, ...}`

    @property
    def contiguous(self) -> bool:
        """A fresh torch.zeros/new_zeros is contiguous; zeros_like keeps its model's strides,
        empty_strided has the strides it is given, and an explicit memory_format may not be the
        default layout."""
        return self.name not in _STRIDED and not any(
            k.arg == "memory_format" for k in self.call.keywords
        )


def find_allocations(tree: ast.Module, resolver: Resolver) -> list[Allocation]:
    """The allocations in `tree`, in source pre-order; `resolver` must be built from `tree`
    (it recorded the calls and assignments during its walk, so none is needed here)."""
    # A module that defines its own `new_zeros`/`new_empty` may call them on its own objects:
    # `.new_zeros` there is not provably Tensor.new_zeros, so it is not a candidate at all.
    shadowed = {
        node.name
        for node in resolver.scopes
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in METHODS
    }
    targets: dict[int, tuple[ast.expr, ast.expr | None]] = {}
    for node in resolver.assigns:
        if isinstance(node, ast.Assign):
            shadowed.update(
                t.attr for t in node.targets if isinstance(t, ast.Attribute) and t.attr in METHODS
            )
        if node.value is None:
            continue
        tlist = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(tlist) == 1:
            targets[id(node.value)] = (tlist[0], None)
            if isinstance(node.value, ast.Dict):
                for k, v in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(k, ast.Constant):
                        targets[id(v)] = (tlist[0], k)
    resolver.scope_of(tree)  # a resolver of another tree has no scope for this one
    sites: list[Allocation] = []
    for call, scope in resolver.calls:
        name = _allocation_name(call, resolver, scope, shadowed)
        if name is not None:
            target, key = targets.get(id(call), (None, None))
            owner = cast(Owner, scope.node)  # scopes are opened by exactly the Owner kinds
            sites.append(Allocation(call, name, owner, scope, target, key))
    return sites


def _allocation_name(
    call: ast.Call, resolver: Resolver, scope: Scope, shadowed: set[str]
) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr not in _ATTRS:
        return None  # cheap first: most calls are of other methods
    if any(k.arg in ("out", None) for k in call.keywords):
        # `torch.zeros(..., out=x)` fills x; it allocates nothing. `**kw` may hold `out`.
        return None
    if isinstance(func, ast.Attribute) and func.attr in METHODS:
        if func.attr in shadowed:
            return None
        receiver = resolver.qualified(scope, func.value)
        if receiver is None or receiver.startswith("torch."):
            return METHODS[func.attr]
        return None
    qual = resolver.qualified(scope, func) if isinstance(func, ast.Name | ast.Attribute) else None
    if qual in ZEROS:
        return ZEROS[qual]
    if qual in EMPTY:
        return EMPTY[qual]
    return None
