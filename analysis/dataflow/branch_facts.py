"""A read the buffer can never reach: it runs only where a test is false, the allocation only
where the same unchanged test is true.

```
if ode:
    std = torch.zeros(())
else:
    std = x.abs().mean() + 1.0
if ode:
    return x.sum()
return (x / std**2).sum()
```

The dataflow joins the two branches and follows the path "allocate under `ode`, then skip the
`return` under `ode`", which no execution takes. Such a read is no evidence of a read of
unwritten memory: `unproven`, never `unsafe` (a test's value could still change between the two
evaluations through a stateful `__bool__` or `__eq__`, so the read is not dropped either, and no
`safe` rests on this).

Facts are read from the syntax: an `if` whose body (or `else`) holds the statement gives its test
true (false); a statement after an `if T:` whose body ends in `return` or `raise` (and that has
no `else`) gives `T` false; `not`, and `and`/`or` on the side that fixes every operand, pass
them on. The test must be made of names, literals, comparisons, `not`, `and` and `or` only; each
name a parameter the function never binds again, or a local bound once, by a statement of the
function's top level before both (no `global`/`nonlocal` of it anywhere in the function), and
never the base of an attribute or a subscript (`items.append(x)` would change `not items`).
"""

from __future__ import annotations

import ast

from zeroopt.analysis.dataflow.zero_trip import parents_of
from zeroopt.analysis.resolve import parameter_names, walk
from zeroopt.analysis.triton_cover import _bindings

_PURE = (
    *(ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Load),
    *(ast.cmpop, ast.boolop, ast.Not),
)
_NEGATED = {ast.IsNot: ast.Is, ast.NotEq: ast.Eq, ast.NotIn: ast.In}


def contradicted(fn: ast.AST, alloc: ast.AST, read: ast.AST, memo: dict[int, object]) -> str:
    """The test (as source) the allocation needs true and the read false (or the reverse), or
    "" where no such test is found."""
    parents = parents_of(fn, memo)
    if parents is None or id(alloc) not in parents or id(read) not in parents:
        return ""
    made: dict[str, tuple[ast.expr, bool]] = {}
    for test, value in _enclosing(alloc, fn, parents):
        for t, v in _split(test, value):
            made.setdefault(ast.dump(t), (t, v))
    if not made:
        return ""
    for test, value in _enclosing(read, fn, parents) + _exited(read, fn, parents):
        for t, v in _split(test, value):
            hit = made.get(ast.dump(t))
            if hit is not None and hit[1] != v and _stable(hit[0], fn, parents, alloc, read):
                return ast.unparse(hit[0])
    return ""


def _enclosing(
    node: ast.AST, fn: ast.AST, parents: dict[int, ast.AST]
) -> list[tuple[ast.expr, bool]]:
    """The tests of the `if`s around `node`, with the value under which it runs."""
    out: list[tuple[ast.expr, bool]] = []
    here: ast.AST = node
    while True:
        parent = parents.get(id(here))
        if parent is None or parent is fn:
            return out
        if isinstance(parent, ast.If) and here is not parent.test:
            out.append((parent.test, any(s is here for s in parent.body)))
        elif isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return []  # a nested scope runs at another time: no fact of the enclosing code holds
        here = parent


def _exited(node: ast.AST, fn: ast.AST, parents: dict[int, ast.AST]) -> list[tuple[ast.expr, bool]]:
    """Tests of `if T: ... return` statements before a statement holding `node` in its block:
    past them, `T` is false (and true past `if T: ... else: ... return`)."""
    out: list[tuple[ast.expr, bool]] = []
    here: ast.AST = node
    while True:
        parent = parents.get(id(here))
        if parent is None:
            return out
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not isinstance(block, list) or not any(s is here for s in block):
                continue
            for s in block:
                if s is here:
                    break
                if isinstance(s, ast.If) and _ends(s.body) and not s.orelse:
                    out.append((s.test, False))
                elif isinstance(s, ast.If) and _ends(s.orelse) and not _ends(s.body):
                    out.append((s.test, True))
        if parent is fn or isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return out
        here = parent


def _ends(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], ast.Return | ast.Raise)


def _split(test: ast.expr, value: bool) -> list[tuple[ast.expr, bool]]:
    """`test` has `value`; with it, what each part surely has."""
    out = [(test, value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        out += _split(test.operand, not value)
    elif isinstance(test, ast.BoolOp):
        fixes = (isinstance(test.op, ast.Or) and not value) or (
            isinstance(test.op, ast.And) and value
        )
        if fixes:
            for v in test.values:
                out += _split(v, value)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
        # `x is not None` is `not (x is None)`: one spelling for both.
        flipped = ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators)
        out.append((flipped, not value))
    return out


def _stable(
    test: ast.expr, fn: ast.AST, parents: dict[int, ast.AST], alloc: ast.AST, read: ast.AST
) -> bool:
    """The test is made of names, literals and pure operators, and none of its names can change
    between the allocation and the read (see the module docstring)."""
    if not all(isinstance(n, _PURE) for n in walk([test])):
        return False
    names = {n.id for n in walk([test]) if isinstance(n, ast.Name)}
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    params = set(parameter_names(fn))
    first = min(_top_index(fn, alloc, parents), _top_index(fn, read, parents))
    # `items.append(x)`, `items[0] = v`: a value changed in place changes the test.
    if any(
        isinstance(n, ast.Attribute | ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id in names
        for n in walk([fn])
    ):
        return False
    for name in names:
        # Every binding, nested scopes, `global`/`nonlocal`, imports and `except ... as` included.
        binds = _bindings(fn).get(name, [])
        if len(binds) != 1:
            return False
        only = binds[0]
        if isinstance(only, ast.arg) and name in params:
            continue
        top = _top_index(fn, only, parents)
        statement = fn.body[top] if 0 <= top < len(fn.body) else None
        if not (
            isinstance(only, ast.Name)
            and isinstance(statement, ast.Assign | ast.AnnAssign)
            and top < first
        ):
            return False
    return True


def _top_index(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, parents: dict[int, ast.AST]
) -> int:
    here: ast.AST = node
    while True:
        parent = parents.get(id(here))
        if parent is None:
            return -1
        if parent is fn:
            return next((i for i, s in enumerate(fn.body) if s is here), -1)
        here = parent
