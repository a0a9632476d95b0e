"""Which local names provably hold immutable Python integers.

A slice bound is compared as text (`x[:k]` then `x[k:]`), which is only sound if `k` cannot change
value without being rebound: true for Python ints, false for a 0-dim tensor (`k.add_(1)` moves
it in place) and for names another function can rebind (`global`, `nonlocal`, closure cells).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from zeroopt.analysis.resolve import child_nodes, record_parent, walk, walk_all, walk_scope
from zeroopt.analysis.semantics import INT_RESULT_BUILTINS, INT_RESULT_METHODS

_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
            ast.BitAnd, ast.BitOr, ast.BitXor)  # fmt: skip
_INT_METHODS = INT_RESULT_METHODS
_INT_BUILTINS = INT_RESULT_BUILTINS
_NOT_INT = None  # a binding whose value may be anything
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip
# Every class `int_names` looks at; one dict lookup per node skips all the others.
_BINDERS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr,
            ast.withitem, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.MatchAs,
            ast.MatchStar, ast.Global, ast.Nonlocal, *_NESTED)  # fmt: skip


class _Binds(dict[type, bool]):
    """Node class -> whether it is an instance of one of `_BINDERS`; filled on first sight."""

    def __missing__(self, cls: type) -> bool:
        self[cls] = binds = issubclass(cls, _BINDERS)
        return binds


_BINDS = _Binds()


def int_names(
    body: list[ast.stmt],
    params: list[ast.arg],
    unstable: set[str],
    qualify: Callable[[ast.expr], str | None],
) -> frozenset[str]:
    """`qualify` resolves a callee as the function's scope sees it: `range` may be rebound."""
    bindings: dict[str, list[ast.expr | None]] = {}

    def add(name: str, value: ast.expr | None) -> None:
        bindings.setdefault(name, []).append(value)

    for p in params:
        is_int = isinstance(p.annotation, ast.Name) and p.annotation.id == "int"
        add(p.arg, ast.Constant(0) if is_int else _NOT_INT)
    nested: list[ast.AST] = []  # nested scopes: walruses inside them are looked for below
    seen_walrus: set[int] = set()
    for node in walk_scope(body):
        if not _BINDS[type(node)]:
            continue  # most nodes (names, calls, constants) bind nothing
        if isinstance(node, _NESTED):
            nested.append(node)
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    add(t.id, node.value)
                else:
                    for n in _names(t):
                        add(n, _NOT_INT)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                add(node.target.id, node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            add(node.target.id, ast.BinOp(ast.Name(node.target.id), node.op, node.value))
        elif isinstance(node, ast.For | ast.AsyncFor):
            counted = (
                isinstance(node.target, ast.Name)
                and isinstance(node.iter, ast.Call)
                and qualify(node.iter.func) == "builtins.range"
            )
            for n in _names(node.target):
                add(n, ast.Constant(0) if counted else _NOT_INT)
        elif isinstance(node, ast.NamedExpr):
            seen_walrus.add(id(node))
            add(node.target.id, node.value)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for n in _names(node.optional_vars):
                add(n, _NOT_INT)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, _NOT_INT)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                add((alias.asname or alias.name).split(".")[0], _NOT_INT)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            isinstance(node, ast.MatchAs | ast.MatchStar) and node.name
        ):
            add(str(node.name), _NOT_INT)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            unstable |= set(node.names)
    # A walrus inside a comprehension (or a nested scope) is not visited above, yet may bind a
    # name of this scope to anything: such names are never trusted.
    for sub in walk(child for n in nested for child in child_nodes(n)):
        if isinstance(sub, ast.NamedExpr) and id(sub) not in seen_walrus:
            add(sub.target.id, _NOT_INT)
    candidates = set(bindings) - unstable
    if candidates:
        # `k.add_(1)`: whatever an annotation says, a name used as an object is no int to trust.
        candidates -= {
            n.value.id
            for n in walk(body)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
    changed = True
    while changed:
        changed = False
        for name in list(candidates):
            if not all(v is not None and _is_int(v, candidates, qualify) for v in bindings[name]):
                candidates.discard(name)
                changed = True
    return frozenset(candidates)


def _is_int(e: ast.expr, names: set[str], qualify: Callable[[ast.expr], str | None]) -> bool:
    """Calls count by what they resolve to: a module may define its own `int` or `math`."""
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.Name):
        return e.id in names
    if isinstance(e, ast.BinOp):
        return (
            isinstance(e.op, _INT_OPS)
            and _is_int(e.left, names, qualify)
            and _is_int(e.right, names, qualify)
        )
    if isinstance(e, ast.UnaryOp):
        return isinstance(e.op, ast.USub | ast.UAdd | ast.Invert) and _is_int(
            e.operand, names, qualify
        )
    if isinstance(e, ast.IfExp):
        return _is_int(e.body, names, qualify) and _is_int(e.orelse, names, qualify)
    if isinstance(e, ast.Subscript):
        # `t.shape[0]`: torch.Size holds Python ints.
        return (
            isinstance(e.value, ast.Attribute)
            and e.value.attr == "shape"
            and isinstance(e.slice, ast.Constant | ast.Name | ast.UnaryOp)
        )
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Name) and f.id in _INT_BUILTINS and qualify(f) == f"builtins.{f.id}":
            if f.id in ("len", "int"):
                return True
            return bool(e.args) and all(_is_int(a, names, qualify) for a in e.args)
        if isinstance(f, ast.Attribute):
            if f.attr in _INT_METHODS:
                return True
            if f.attr == "size" and len(e.args) == 1:
                return True  # t.size(d) is an int; t.size() is a torch.Size
            if f.attr in ("ceil", "floor", "lcm", "gcd") and qualify(f) == f"math.{f.attr}":
                return True
            if f.attr == "prod" and qualify(f) == "math.prod":
                # `math.prod` multiplies whatever it is given: a list holding a 0-dim tensor
                # gives a tensor, which an alias (`j = k; j += 1`) changes in place.
                return len(e.args) == 1 and not e.keywords and _int_items(e.args[0], names, qualify)
    return False


def _int_items(e: ast.expr, names: set[str], qualify: Callable[[ast.expr], str | None]) -> bool:
    """Every item `e` iterates is an int: a tensor's `.shape` or `.size()` (torch.Size holds
    Python ints), a slice of one, or a display of int expressions."""
    if isinstance(e, ast.List | ast.Tuple):
        return all(_is_int(x, names, qualify) for x in e.elts)
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        e = e.value
    if isinstance(e, ast.Attribute):
        return e.attr == "shape"
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "size"
        and not e.args
        and not e.keywords
    )


def _names(target: ast.expr) -> Iterator[str]:
    for n in walk_all(target):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            yield n.id  # `x[:m] = ...` binds nothing: only stored names are bindings


# Where a name may appear when its value is not known to be an int (a 0-dim tensor, None, a
# NumPy integer) and it still serves as a slice bound: each use makes a new value from it, or
# only looks at it, and none keeps it (an alias written later would change it in place).
_VALUE_BUILTINS = frozenset({"range", "int", "float", "bool", "len", "str", "abs"})


def volatile_bounds(
    body: list[ast.stmt],
    params: list[ast.arg],
    unstable: set[str],
    ints: frozenset[str],
    qualify: Callable[[ast.expr], str | None],
) -> frozenset[str]:
    """Names of this scope, not provably ints, that may still bound slices compared as text
    (`x[:k]` then `x[k:]`): any value slicing accepts makes two such slices cover the dimension
    together, PROVIDED the value is the same at both writes. Rebinding the name forgets the
    slices (dataflow/effects.py); this function rules out the other ways it may change without
    being rebound, so that only code that runs between the writes can still change it, and the
    dataflow forgets those slices wherever code runs (dataflow/fixpoint.py):
    - a closure, `global` or `nonlocal` (`unstable`), or any nested function, lambda, class or
      comprehension mentioning it may rebind it or keep it;
    - every load of the name, in this scope and any nested one, either makes a new value of it
      (an operand of an arithmetic operator or a comparison, an argument of `range`/`int`/...,
      of `torch.tensor`), only looks at it (a test, a slice bound, a subscript it indexes and
      does not store into): no alias of it is made (`j = k`, `d[k] = v`, `f(k)`), and no method
      of it is called (`k.add_(1)`), so nothing writes it in place without running code."""
    local = {p.arg for p in params}
    nested: set[str] = set()  # names a nested scope mentions: it may rebind or keep them
    for node in walk_scope(body):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            local.add(node.id)
        elif isinstance(node, _NESTED):
            for sub in walk(child_nodes(node)):
                if isinstance(sub, ast.Name):
                    nested.add(sub.id)
                elif isinstance(sub, ast.Global | ast.Nonlocal):
                    nested.update(sub.names)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            nested.update(node.names)
    candidates = local - ints - unstable - nested
    if not candidates:
        return frozenset()
    # One pre-order walk: a node's parent is met (and its children recorded) before it.
    parents: dict[int, ast.AST] = {}
    for node in walk(body):
        record_parent(node, parents)
        if (
            isinstance(node, ast.Name)
            and node.id in candidates
            and isinstance(node.ctx, ast.Load)
            and not _value_use(node, parents, qualify)
        ):
            candidates.discard(node.id)
    return frozenset(candidates)


def _value_use(
    name: ast.Name, parents: dict[int, ast.AST], qualify: Callable[[ast.expr], str | None]
) -> bool:
    parent = parents.get(id(name))
    if isinstance(parent, ast.Slice | ast.BinOp | ast.UnaryOp | ast.Compare):
        return True
    if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.Assert):
        return parent.test is name
    if isinstance(parent, ast.Tuple):  # `x[k, :]`: the tuple is made for the subscript only
        name, parent = parent, parents.get(id(parent))  # type: ignore[assignment]
    if isinstance(parent, ast.Subscript):
        return parent.slice is name and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Call) and name in parent.args:
        callee = qualify(parent.func)
        return callee == "torch.tensor" or (
            callee is not None
            and callee.startswith("builtins.")
            and callee.removeprefix("builtins.") in _VALUE_BUILTINS
        )
    return False
