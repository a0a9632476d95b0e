"""The names a module-level `__getattr__` (PEP 562) may answer, where its text lists them.

`from pkg import sub` first asks `pkg` for the attribute `sub`, and a module `__getattr__`
answers names the module does not bind: it may hand back another object than the submodule.
The lazy-import form real packages use (vllm 0.33.0 `vllm/__init__.py:65`, sglang 0.5.23
`srt/layers/attention/qsa/__init__.py:18`) tests the name against literal strings and raises
`AttributeError` for every other name:

    def __getattr__(name):
        if name in MODULE_ATTRS:          # a module-level dict/set/list/tuple of strings
            ...
        if name == "QSAIndexer":
            ...
        raise AttributeError(name)

Such a hook answers only those strings (https://peps.python.org/pep-0562/: the function is
called with the attribute name; raising AttributeError means the module has none). Anything
else in the body (another statement before the tests, a test of another form, a path that
falls off the end and answers None) means it may answer any name, and so does an `async def`
or a generator (the call returns a coroutine or generator object for every name, raising
nothing), a decorated def (the decorator may bind any callable), a `global __getattr__` in
any function (a call of it may bind another hook), and a def or class of that name under a
`match` case (defs under `if`, `try`/`try*`, `with` and loops are hooks the module may bind). A module-level collection
counts only where the module binds it once (no def, class, import, `except ... as` or `match`
capture of that name, no star import), to a display of strings, and uses it only in such
tests and by reading items: no method call, store, `del` or hand-off in the module. Assumed, as
for module attributes: no other module changes that collection (`pkg.NAMES.add("sub")`, or
`from pkg import NAMES` then a method call; tests/regressions/test_adversarial_new.py keeps
those cases as known failures).
"""

from __future__ import annotations

import ast

from zeroopt.analysis.resolve import walk_all

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def answered_names(tree: ast.Module) -> frozenset[str] | None:
    """The names the module's `__getattr__` may answer; None when any (or it cannot tell).
    An empty set when the module has no `__getattr__`."""
    defs: list[_Def] = []
    if not _collect(tree.body, defs) or _declared_global(tree):
        return None
    if not defs:
        return frozenset()
    literal = _literal_collections(tree)
    names: set[str] = set()
    for fn in defs:
        found = _answered_by(fn, literal)
        if found is None:
            return None
        names |= found
    return frozenset(names)


def _collect(body: list[ast.stmt], defs: list[_Def]) -> bool:
    """The module-level defs of `__getattr__` (under `if`/`try` too); False when the name is
    bound otherwise (an assignment, an import, a class)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name == "__getattr__":
                defs.append(stmt)
            continue
        if isinstance(stmt, ast.ClassDef):
            if stmt.name == "__getattr__":
                return False
            continue
        if isinstance(stmt, ast.If | ast.Try | ast.TryStar | ast.With | ast.For | ast.While):
            inner = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
            for handler in getattr(stmt, "handlers", []):
                inner.extend(handler.body)
            if not _collect(inner, defs):
                return False
            if not isinstance(stmt, ast.If | ast.Try | ast.TryStar) and _binds_getattr(
                stmt, defs_too=False
            ):
                return False  # a loop or `with` target named `__getattr__`
            continue
        if _binds_getattr(stmt):
            return False
    return True


def _declared_global(tree: ast.Module) -> bool:
    """A `global __getattr__` in any function: a call of it may bind the module's hook."""
    return any(
        isinstance(node, ast.Global) and "__getattr__" in node.names for node in walk_all(tree)
    )


def _binds_getattr(stmt: ast.stmt, defs_too: bool = True) -> bool:
    """Whether `stmt` binds `__getattr__` by any means other than a def `_collect` took (a
    `match` case may hold a def or class of that name, or capture the subject under it)."""
    for node in walk_all(stmt):
        if not defs_too and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue  # taken by `_collect` (a def's own body binds its locals only)
        if "__getattr__" in _other_binding(node):
            return True  # a def or class, an import, `except ... as`, a `match` capture
        if (
            isinstance(node, ast.Name)
            and node.id == "__getattr__"
            and not isinstance(node.ctx, ast.Load)
        ):
            return True
        if isinstance(node, ast.Global) and "__getattr__" in node.names:
            return True
    return False


def _literal_collections(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Module-level names bound once to a display of strings and only read by item or tested."""
    bound: dict[str, frozenset[str]] = {}
    counts: dict[str, int] = {}
    for node in walk_all(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for n in node.names:
                counts[n] = counts.get(n, 0) + 2
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return {}  # a star import may bind any of them
        else:
            for other in _other_binding(node):
                counts[other] = counts.get(other, 0) + 2
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and counts.get(stmt.targets[0].id) == 1
        ):
            keys = _strings(stmt.value)
            if keys is not None:
                bound[stmt.targets[0].id] = keys
    if not bound:
        return bound
    allowed: set[int] = set()
    for node in walk_all(tree):
        if isinstance(node, ast.Compare):
            allowed.update(id(c) for c in node.comparators if isinstance(c, ast.Name))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if isinstance(node.value, ast.Name):
                allowed.add(id(node.value))
        elif isinstance(node, ast.Assign):
            allowed.update(id(t) for t in node.targets if isinstance(t, ast.Name))
    for node in walk_all(tree):
        if isinstance(node, ast.Name) and node.id in bound and id(node) not in allowed:
            del bound[node.id]
    return bound


def _other_binding(node: ast.AST) -> list[str]:
    """Names bound other than as an `ast.Name` target: def, class, import, `except ... as`,
    `match` captures."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _strings(value: ast.expr) -> frozenset[str] | None:
    items: list[ast.expr | None]
    if isinstance(value, ast.Dict):
        items = list(value.keys)
    elif isinstance(value, ast.Set | ast.List | ast.Tuple):
        items = list(value.elts)
    else:
        return None
    out = set()
    for item in items:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        out.add(item.value)
    return frozenset(out)


def _answered_by(fn: _Def, literal: dict[str, frozenset[str]]) -> frozenset[str] | None:
    if isinstance(fn, ast.AsyncFunctionDef) or fn.decorator_list:
        return None  # a coroutine for every name; a decorator may bind any other callable
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in walk_all(fn)):
        return None  # a generator: calling it returns one for every name, raising nothing
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if len(positional) != 1 or args.vararg or args.kwarg or args.kwonlyargs:
        return None
    param = positional[0].arg
    if any(isinstance(n, ast.Global | ast.Nonlocal) for n in walk_all(fn)):
        return None
    if any(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
           for n in walk_all(fn)):  # fmt: skip
        return None  # the parameter rebound: a test may not be of the name asked for
    return _block(fn.body, param, literal)


def _block(
    body: list[ast.stmt], param: str, literal: dict[str, frozenset[str]]
) -> frozenset[str] | None:
    """Names answered by running `body` for a name no earlier test matched; None when any."""
    names: set[str] = set()
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
            continue
        if isinstance(stmt, ast.Raise):
            return frozenset(names) if _raises_attribute_error(stmt) else None
        if isinstance(stmt, ast.If):
            tested = _tested(stmt.test, param, literal)
            if tested is None:
                return None
            names |= tested
            if stmt.orelse:
                rest = _block([*stmt.orelse, *body[i + 1 :]], param, literal)
                if rest is None:
                    return None
                return frozenset(names | rest)
            continue
        return None
    return None  # falls off the end: returns None, an answer for every name


def _tested(test: ast.expr, param: str, literal: dict[str, frozenset[str]]) -> set[str] | None:
    """The names a test `name == "x"`, `name in {...}`, `name in NAMES` (or `or` of them) holds
    for; None for any other test."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        out: set[str] = set()
        for value in test.values:
            part = _tested(value, param, literal)
            if part is None:
                return None
            out |= part
        return out
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq):
        for a, b in ((left, right), (right, left)):
            if (
                isinstance(a, ast.Name)
                and a.id == param
                and isinstance(b, ast.Constant)
                and isinstance(b.value, str)
            ):
                return {b.value}
        return None
    if isinstance(op, ast.In) and isinstance(left, ast.Name) and left.id == param:
        if isinstance(right, ast.Name):
            found = literal.get(right.id)
            return set(found) if found is not None else None
        keys = _strings(right)
        return set(keys) if keys is not None else None
    return None


def _raises_attribute_error(stmt: ast.Raise) -> bool:
    exc = stmt.exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "AttributeError"
