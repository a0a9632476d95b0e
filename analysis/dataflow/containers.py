"""Local containers: a dict, list or tuple display bound to a name that never leaves its function.

`pv = {"a": x, "b": y}` stores the buffers in a container, which the dataflow otherwise counts as
an escape: whoever gets the container gets the buffers. When the name is bound only by such
displays and is only ever subscripted (`pv["a"]`, `pv[key]`, `pv[k] = v`, in this function's own
scope, never inside a nested function, lambda or comprehension), the container object is never
handed anywhere: no other code can reach it, and it dies when the function returns. A store into
it is then no escape, and `pv[key]` with a plain key (str or int constants, or a provably
immutable int: hashing and comparing them runs no code of the program) is one of its values:
maybe the buffer, never a whole use of the container.

The function must not read frames (`locals()`, `vars()`, `sys._getframe`, ...): those reach any
local by name.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from zeroopt.analysis import semantics as api
from zeroopt.analysis.resolve import parameter_names, walk

_DISPLAYS = (ast.Dict, ast.List, ast.Tuple)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def local_containers(fn: ast.AST, body: Sequence[ast.stmt]) -> frozenset[str]:
    """Names of `fn` bound only to displays and used only as the object of a subscript."""
    nodes = list(walk(body))
    # `vars(obj)` is `obj.__dict__`: only a bare `vars` or `vars()` reaches the frame.
    of_object = {
        id(n.func)
        for n in nodes
        if isinstance(n, ast.Call)
        and len(n.args) == 1
        and not n.keywords
        and not isinstance(n.args[0], ast.Starred)
    }
    if any(
        (
            isinstance(n, ast.Name)
            and n.id in api.FRAME_NAMES
            and not (n.id == "vars" and id(n) in of_object)
        )
        or (isinstance(n, ast.Attribute) and n.attr in api.FRAME_NAMES)
        for n in nodes
    ):
        return frozenset()
    nested = _nested(nodes)
    display_targets: set[int] = set()
    subscripted: set[int] = set()
    candidates: set[str] = set()
    bad: set[str] = set(_params(fn))
    for n in nodes:
        if isinstance(n, ast.Assign) and isinstance(n.value, _DISPLAYS):
            if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                display_targets.add(id(n.targets[0]))
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            subscripted.add(id(n.value))
        elif isinstance(n, ast.Global | ast.Nonlocal):
            bad.update(n.names)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bad.add(n.name)
        elif isinstance(n, ast.alias):
            bad.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            bad.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bad.add(n.rest)
        elif isinstance(n, ast.arg):
            bad.add(n.arg)
    for n in nodes:
        if not isinstance(n, ast.Name):
            continue
        if id(n) in nested:
            bad.add(n.id)
        elif isinstance(n.ctx, ast.Store):
            if id(n) in display_targets:
                candidates.add(n.id)
            else:
                bad.add(n.id)
        elif isinstance(n.ctx, ast.Del) or id(n) not in subscripted:
            bad.add(n.id)
    return frozenset(candidates - bad)


def plain_key_names(body: Sequence[ast.stmt], int_names: frozenset[str]) -> frozenset[str]:
    """Names whose lookup in a dict runs no code of the program: provably immutable ints, and
    names bound in the function only to str/int constants (`key = 'a' if flag else 'b'`)."""
    values: dict[str, list[ast.expr | None]] = {}
    nodes = list(walk(body))
    nested = _nested(nodes)
    seen: set[int] = set()  # names bound by an assignment, counted there
    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for sub in walk([t]):
                    if isinstance(sub, ast.Name):
                        # A binding in a nested scope names another variable: never trusted.
                        one = len(n.targets) == 1 and t is sub and id(n) not in nested
                        values.setdefault(sub.id, []).append(n.value if one else None)
                        seen.add(id(sub))
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in seen:
            values.setdefault(n.id, []).append(None)  # for, with, walrus, augmented, del
        elif isinstance(n, ast.Global | ast.Nonlocal):
            for name in n.names:
                values.setdefault(name, []).append(None)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            values.setdefault(n.name, []).append(None)
        elif isinstance(n, ast.alias):
            values.setdefault((n.asname or n.name).split(".")[0], []).append(None)
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            values.setdefault(n.name, []).append(None)
        elif isinstance(n, ast.arg):
            values.setdefault(n.arg, []).append(None)
    out = {name for name, bound in values.items() if all(_constant(v) for v in bound)}
    return frozenset(out | int_names)


def _constant(e: ast.expr | None) -> bool:
    if isinstance(e, ast.Constant):
        return type(e.value) in (str, int)
    if isinstance(e, ast.IfExp):
        return _constant(e.body) and _constant(e.orelse)
    return False


def plain_key(index: ast.expr, names: frozenset[str]) -> bool:
    """`index` is a str/int constant or one of `names` (plain_key_names)."""
    if isinstance(index, ast.Name):
        return index.id in names
    return _constant(index)


def _nested(nodes: list[ast.AST]) -> set[int]:
    """Ids of the nodes inside nested scopes (decorators and defaults too: kept simple)."""
    nested: set[int] = set()
    for n in nodes:
        if isinstance(n, _SCOPES):
            nested.update(id(sub) for sub in walk([n]) if sub is not n)
    return nested


def _params(fn: ast.AST) -> list[str]:
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return []
    return parameter_names(fn)
