"""Allocations whose elements hold no data a read could see: a tensor that can have no unwritten
element read is no `unsafe` read, whatever the code does with it.

- A fake (meta) implementation of an operator, registered with `torch.library.register_fake` or
  `impl_abstract`: it runs on fake tensors, which carry shapes, never memory
  (https://pytorch.org/docs/stable/library.html#torch.library.register_fake).
- A tensor on the `meta` device: "tensors on the meta device carry no data"
  (https://pytorch.org/docs/stable/meta.html).
- `empty_like(x)` right after `x = torch.empty((0,), ...)`: zero elements.
- `empty_like(x)` as the first statement of `if n == 0:` right after `assert x.shape[0] == n * k`.

Fake implementations, meta tensors and asserted sizes only stop reads from being *certain*
(`unsafe` -> `unproven`): nothing of theirs makes a buffer `safe`. The literal zero-size case is
the zero-size dimension rule applied through one name.
"""

from __future__ import annotations

import ast
import itertools

from zeroopt.analysis.allocations import Allocation, shape_args
from zeroopt.analysis.resolve import Resolver, Scope
from zeroopt.analysis.semantics import ALLOCATION_FUNCTIONS, FAKE_REGISTRATIONS

_LIKE = ("torch.empty_like", "torch.zeros_like")


def no_data_reason(site: Allocation, resolver: Resolver) -> str:
    """Why the buffer's reads cannot see memory, or "" when they can."""
    device = next((k.value for k in site.call.keywords if k.arg == "device"), None)
    if _is_meta(device, site.scope, resolver):
        return "a tensor on the meta device has no data"
    asserted = _asserted_empty(site)
    if asserted:
        return asserted
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


def _asserted_empty(site: Allocation) -> str:
    """`assert x.shape[0] == n * k` directly followed by `if n == 0:` whose first statement is
    `y = torch.empty_like(x)`: x has no rows there. Asserts are stripped under `python -O`, so
    this only takes the certainty from reads (never makes a buffer `safe`)."""
    if site.name not in _LIKE or not site.call.args or not isinstance(site.call.args[0], ast.Name):
        return ""
    x = site.call.args[0].id
    for block in _blocks(site.owner):
        for before, stmt in itertools.pairwise(block):
            if not (
                isinstance(stmt, ast.If)
                and stmt.body
                and isinstance(stmt.body[0], ast.Assign)
                and stmt.body[0].value is site.call
                and isinstance(before, ast.Assert)
            ):
                continue
            n = _compared_to_zero(stmt.test)
            test = before.test
            if (
                n is not None
                and isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq)
                and _is_first_dim(test.left, x)
                and n in _factors(test.comparators[0])
            ):
                return (
                    f"`{x}` has no rows: `{ast.unparse(test)}` with `{n} == 0` (line {stmt.lineno})"
                )
    return ""


def _compared_to_zero(test: ast.expr) -> str | None:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Name) and _is_zero(right):
            return left.id
        if isinstance(right, ast.Name) and _is_zero(left):
            return right.id
    return None


def _is_first_dim(e: ast.expr, x: str) -> bool:
    """`x.shape[0]` or `x.size(0)`."""
    if isinstance(e, ast.Subscript) and _is_zero(e.slice):
        v = e.value
        return isinstance(v, ast.Attribute) and v.attr == "shape" and _is_name(v.value, x)
    if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords and _is_zero(e.args[0]):
        f = e.func
        return isinstance(f, ast.Attribute) and f.attr == "size" and _is_name(f.value, x)
    return False


def _is_name(e: ast.expr, name: str) -> bool:
    return isinstance(e, ast.Name) and e.id == name


def _factors(e: ast.expr) -> set[str]:
    """Names whose value 0 makes `e` 0: `n`, `n * k`, `k * (n * m)`."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return _factors(e.left) | _factors(e.right)
    return set()


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


def zero_size_like(site: Allocation, resolver: Resolver) -> bool:
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
