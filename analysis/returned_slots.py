"""A buffer returned as one slot of a tuple, list or dict display, followed into its callers.

`return out, lse` hands the caller a tuple whose element 0 is the buffer. The callee's dataflow
records that escape as `returned_in` (dataflow/outcome.py) only when the buffer itself is in
exactly one slot and no other slot holds it. At each caller the call `f(...)` is then analysed
as if it were the display itself, with the buffer's allocation in its slot and `None` in every
other one: `(None, <the allocation>)`. The caller's function is copied along the path from its
def down to the call (every other node is shared), and that copy is what the dataflow runs on.
Whatever the caller then does with the result is judged by the existing rules for a display
made in the function (dataflow/holders.py): `a, b = f(...)` binds `b` to the buffer,
`r = f(...); b = r[1]` reads the slot of a private holder, and anything else (the result passed
on whole, iterated, starred, indexed by a variable) hands the holder on: `unproven`. A caller
that returns the display again (`return f(...)`) is itself judged at its callers.

The other slots are other objects: the callee's analysis proved none of them holds the buffer
(no other slot evaluates to it or a view of it, and any store of it elsewhere is its own escape,
which keeps the site out of this judging altogether).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import replace

from zeroopt.analysis.dataflow.outcome import NEW_RECORD, RETURNED, RETURNED_VIEW, returned_slot
from zeroopt.analysis.resolve import Scope, child_nodes, walk_all

# (kind: tuple/list/dict/record, index, key or `Class.field`, number of slots)
Slot = tuple[str, int | str, int]
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def returned_as(escapes: frozenset[tuple[int, str]]) -> tuple[Slot | None, str]:
    """(the slot every `return` puts the buffer in, None for the buffer itself or a view of all
    of it; why they cannot be followed together, "" when they can)."""
    slots = {returned_slot(how) for _, how in escapes if how not in (RETURNED, RETURNED_VIEW)}
    if not slots:
        return None, ""
    if None in slots:
        return None, "not returned as the buffer itself or one slot of a display"
    if len(slots) > 1 or any(how in (RETURNED, RETURNED_VIEW) for _, how in escapes):
        return None, "returned in different places of the result on different paths"
    (slot,) = slots
    return slot, ""


def describe(slot: Slot | None) -> str:
    """The slot in words (` as element 1 of a tuple`); "" for the buffer itself."""
    if slot is None:
        return ""
    kind, label, _ = slot
    if kind == "dict":
        return f" as the value of key {label!r} of a dict"
    if kind == "record":
        cname, _, field_name = str(label).partition(".")
        return f" as field `{field_name}` of a new `{cname}`"
    return f" as element {label} of a {kind}"


def display_for(call: ast.Call, slot: Slot) -> ast.expr:
    """The display the call stands for: the allocation in its slot, `None` in the others."""
    kind, label, size = slot
    display: ast.expr
    if kind == "dict":
        display = ast.Dict(keys=[ast.Constant(label)], values=[call])
    elif kind == "record":
        cname, _, field_name = str(label).partition(".")
        func = ast.Name(id=f"{NEW_RECORD}{cname}>", ctx=ast.Load())
        display = ast.Call(func=func, args=[], keywords=[ast.keyword(arg=field_name, value=call)])
    else:
        elts: list[ast.expr] = [
            call if i == label else ast.copy_location(ast.Constant(None), call) for i in range(size)
        ]
        display = (ast.List if kind == "list" else ast.Tuple)(elts=elts, ctx=ast.Load())
    for n in walk_all(display):
        if n is not call and not hasattr(n, "lineno"):
            ast.copy_location(n, call)
    return display


def caller_copy(
    owner: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, call: ast.Call, slot: Slot
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope] | str:
    """A copy of `owner` in which `call` is replaced by its display, and the scope to analyse it
    in; or why it cannot be made (the call inside a nested def's decorator or default, or not
    found)."""
    path = _path(owner, call)
    if path is None:
        return f"the call at line {call.lineno} is not in `{owner.name}`'s own code"
    new: ast.AST = display_for(call, slot)
    old: ast.AST = call
    for parent in reversed(path):
        clone = copy.copy(parent)
        for attr in [a for a in vars(clone) if a.startswith("_zeroopt")]:
            delattr(clone, attr)  # memos of the original's subtree (holders.py, ...)
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(clone, name, new)
            elif isinstance(value, list) and any(v is old for v in value):
                setattr(clone, name, [new if v is old else v for v in value])
        old, new = parent, clone
    assert isinstance(new, ast.FunctionDef | ast.AsyncFunctionDef)
    return new, replace(scope, node=new)


def _path(owner: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """The nodes from `owner` down to `target`'s parent, through `owner`'s own scope only."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(owner, [owner])]
    while stack:
        node, path = stack.pop()
        for child in child_nodes(node):
            if child is target:
                return path
            if not isinstance(child, _SCOPES):
                stack.append((child, [*path, child]))
    return None
