"""Allocations whose elements hold no data a read could see: a tensor that can have no unwritten
element read is no `unsafe` read, whatever the code does with it.

- A fake (meta) implementation of an operator, registered with `torch.library.register_fake` or
  `impl_abstract`: it runs on fake tensors, which carry shapes, never memory
  (https://pytorch.org/docs/stable/library.html#torch.library.register_fake).
- A tensor on the `meta` device: "tensors on the meta device carry no data"
  (https://pytorch.org/docs/stable/meta.html).
- `empty_like(x)` right after `x = torch.empty((0,), ...)`: zero elements.

The first two only stop reads from being *certain* (`unsafe` -> `unproven`): nothing here makes
a buffer `safe`. The third is the literal zero-size dimension rule applied through one name.
"""

from __future__ import annotations

import ast
import itertools

from zeroopt.analysis.resolve import Resolver, Scope
from zeroopt.analysis.semantics import ALLOCATION_FUNCTIONS, FAKE_REGISTRATIONS
from zeroopt.analysis.sites import Site, shape_args

_LIKE = ("torch.empty_like", "torch.zeros_like")


def no_data_reason(site: Site, resolver: Resolver) -> str:
    """Why the buffer's reads cannot see memory, or "" when they can."""
    device = next((k.value for k in site.call.keywords if k.arg == "device"), None)
    if _is_meta(device, site.scope, resolver):
        return "a tensor on the meta device has no data"
    scope: Scope | None = site.scope
    while scope is not None:
        node = scope.node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                func = dec.func if isinstance(dec, ast.Call) else dec
                parent = scope.parent if scope.parent is not None else scope
                if _is_fake_registration(resolver.qualified(parent, func), func):
                    return (
                        f"`{node.name}` is a fake implementation (`{ast.unparse(func)}`): "
                        "it runs on tensors without data"
                    )
        scope = scope.parent
    return ""


def _is_fake_registration(qualified: str | None, func: ast.expr) -> bool:
    """By the resolved name; by the last name when it resolves to nothing certain (vllm binds
    `register_fake` in a try/except of two imports and a TYPE_CHECKING stub). Only reads lose
    certainty through this, so a name that merely looks right costs precision, never soundness."""
    if qualified is not None:
        return qualified in FAKE_REGISTRATIONS
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return any(name.rsplit(".", 1)[-1] == last for name in FAKE_REGISTRATIONS)


def _is_meta(device: ast.expr | None, scope: Scope, resolver: Resolver) -> bool:
    if isinstance(device, ast.Constant):
        return device.value == "meta"
    if (
        isinstance(device, ast.Call)
        and resolver.qualified(scope, device.func) == "torch.device"
        and len(device.args) == 1
        and not device.keywords
        and isinstance(device.args[0], ast.Constant)
    ):
        return device.args[0].value == "meta"
    return False


def zero_size_like(site: Site, resolver: Resolver) -> bool:
    """`y = torch.empty_like(x)` whose statement directly follows `x = torch.empty((0,), ...)`
    in the same block: x is that zero-size tensor when y is made (nothing runs in between, and
    the other arguments of the call are names, attributes or constants, which run no code)."""
    if site.name not in _LIKE or not site.call.args:
        return False
    arg = site.call.args[0]
    rest = [*site.call.args[1:], *(k.value for k in site.call.keywords)]
    if not isinstance(arg, ast.Name) or not all(_inert(e) for e in rest):
        return False
    for block in _blocks(site.owner):
        for before, stmt in itertools.pairwise(block):
            if not (isinstance(stmt, ast.Assign) and stmt.value is site.call):
                continue
            return (
                isinstance(before, ast.Assign)
                and len(before.targets) == 1
                and isinstance(before.targets[0], ast.Name)
                and before.targets[0].id == arg.id
                and isinstance(before.value, ast.Call)
                and resolver.qualified(site.scope, before.value.func) in ALLOCATION_FUNCTIONS
                and any(_is_zero(d) for d in shape_args(before.value))
                and not any(isinstance(a, ast.Starred) for a in before.value.args)
            )
    return False


def _inert(e: ast.expr) -> bool:
    if isinstance(e, ast.Attribute):
        return _inert(e.value)
    return isinstance(e, ast.Name | ast.Constant)


def _is_zero(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is int and e.value == 0


def _blocks(owner: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list of the function's own body (nested defs and classes excluded)."""
    out: list[list[ast.stmt]] = []
    todo: list[ast.AST] = [owner]
    while todo:
        node = todo.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                out.append(value)
            if isinstance(value, list):
                todo += [
                    v
                    for v in value
                    if isinstance(v, ast.AST)
                    and not isinstance(v, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                ]
    return out
