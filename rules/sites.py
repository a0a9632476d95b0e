"""Find the allocations to analyse, and the function body each one runs in.

Detection is name resolution, not text matching: `th.zeros` with `import torch as th` and `zeros`
from `from torch import zeros` are found; a user's own `zeros` and `np.zeros` are not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from zeroopt.rules.resolve import Resolver, Scope

ZEROS = {"torch.zeros": "torch.zeros", "torch.zeros_like": "torch.zeros_like"}
EMPTY = {"torch.empty": "torch.empty", "torch.empty_like": "torch.empty_like"}
METHODS = {"new_zeros": "Tensor.new_zeros", "new_empty": "Tensor.new_empty"}

Owner = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda


@dataclass(frozen=True)
class Site:
    call: ast.Call
    name: str  # "torch.zeros", "Tensor.new_zeros", ...
    owner: Owner  # the body the allocation runs in
    scope: Scope
    target: ast.expr | None  # the assignment target, when the call is assigned directly
    key: ast.expr | None = None  # the dict key, for `target = {key: <call>, ...}`

    @property
    def contiguous(self) -> bool:
        """A fresh torch.zeros/new_zeros is contiguous; zeros_like keeps its model's strides,
        and an explicit memory_format may not be the default layout."""
        return self.name != "torch.zeros_like" and not any(
            k.arg == "memory_format" for k in self.call.keywords
        )


def find_sites(tree: ast.Module, resolver: Resolver) -> list[Site]:
    sites: list[Site] = []
    targets: dict[int, tuple[ast.expr, ast.expr | None]] = {}

    def visit(node: ast.AST, owner: Owner, scope: Scope) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            # Decorators, defaults and bases run in the enclosing body.
            outer_parts: list[ast.AST] = list(getattr(node, "decorator_list", []))
            if isinstance(node, ast.ClassDef):
                outer_parts += [*node.bases, *node.keywords]
            else:
                outer_parts += [d for d in [*node.args.defaults, *node.args.kw_defaults] if d]
            for part in outer_parts:
                visit(part, owner, scope)
            inner = resolver.scope_of(node)
            body = node.body if isinstance(node.body, list) else [node.body]
            for stmt in body:
                visit(stmt, node, inner)
            return
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            tlist = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(tlist) == 1:
                targets[id(node.value)] = (tlist[0], None)
                if isinstance(node.value, ast.Dict):
                    for k, v in zip(node.value.keys, node.value.values, strict=True):
                        if isinstance(k, ast.Constant):
                            targets[id(v)] = (tlist[0], k)
        if isinstance(node, ast.Call):
            name = _allocation_name(node, resolver, scope, shadowed)
            if name is not None:
                target, key = targets.get(id(node), (None, None))
                sites.append(Site(node, name, owner, scope, target, key))
        for child in ast.iter_child_nodes(node):
            visit(child, owner, scope)

    root = resolver.scope_of(tree)
    # A module that defines its own `new_zeros`/`new_empty` may call them on its own objects:
    # `.new_zeros` there is not provably Tensor.new_zeros, so it is not a candidate at all.
    shadowed = {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in METHODS
    }
    shadowed |= {
        t.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Attribute) and t.attr in METHODS
    }
    for stmt in tree.body:
        visit(stmt, tree, root)
    return sites


def _allocation_name(
    call: ast.Call, resolver: Resolver, scope: Scope, shadowed: set[str]
) -> str | None:
    if any(k.arg == "out" for k in call.keywords):
        return None  # `torch.zeros(..., out=x)` fills x; it allocates nothing
    func = call.func
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
