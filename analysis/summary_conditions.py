"""The other parameters a summary's reading path depends on (summaries.py, READS).

A READS summary says that SOME path of the callee reads its parameter before writing it. A call
is a definite read of the buffer only if that path can run for the arguments the call passes:
`def h(x, flag): if flag: return x.sum(); x.fill_(0); return x.sum()` reads `x` first only where
`flag` is true, and `h(buf, False)` never reads `buf`. So the summary records every other
parameter (`self` included) that a test on the way to the read depends on, directly or through
locals computed from it; the call site (dataflow/summary_calls.py) claims the read only where
each such parameter is passed an expression rather than a literal or left to its default, and
names the assumption that it may take a value that reaches the read.

The tests on the way to a read at line L, over-approximated from the syntax: those of the
statements and expressions enclosing L (`if`, `while`, `for` (zero iterations), `match`,
conditional expressions, `and`/`or`, comprehensions), those of any loop enclosing L (a later
iteration may be the first to read), `assert`s and `while` loops before L, and the tests of
statements before L that may leave the function (`return` or `raise` in one of their branches).
Exceptions raised by other code are not followed, as nowhere else in the dataflow.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.resolve import child_nodes, walk_all

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def read_conditions(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    line: int,
    carried: set[str],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The parameters of `fn` other than `param` that a test on the way to the read at `line`
    depends on, and of those the ones `carried` names: names the read itself depends on (the
    arguments a conditional read of a callee depends on: its conditions, handed on), whose
    tests are in the callee, where `reached_with` does not look."""
    a = fn.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    roots = _roots(fn, {p for p in params if p != param})
    names = set(carried)
    for test in _tests(fn, line):
        names |= {n.id for n in walk_all(test) if isinstance(n, ast.Name)}
    found: set[str] = set()
    for name in names:
        found |= roots.get(name, set())
    handed: set[str] = set()
    for name in carried:
        handed |= roots.get(name, set())
    return tuple(sorted(found)), tuple(sorted(handed))


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of `fn`'s own scope (not those of nested defs, classes or lambdas)."""
    out: list[ast.AST] = []
    todo = list(child_nodes(fn))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _SCOPES):
            todo.extend(child_nodes(node))
    return out


def _roots(fn: ast.AST, params: set[str]) -> dict[str, set[str]]:
    """Each name of `fn` whose value may come from one of `params`: the parameters it comes
    from (assignments, augmented assignments, `for` and `with` targets, walruses)."""
    roots: dict[str, set[str]] = {p: {p} for p in params}
    binds: list[tuple[ast.AST, ast.AST]] = []  # (target, value)
    for node in _own_nodes(fn):
        if isinstance(node, ast.Assign):
            binds += [(t, node.value) for t in node.targets]
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            binds.append((node.target, node.value))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            binds.append((node.target, node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            binds.append((node.optional_vars, node.context_expr))
        elif isinstance(node, ast.NamedExpr):
            binds.append((node.target, node.value))
    changed = True
    while changed:
        changed = False
        for target, value in binds:
            came: set[str] = set()
            for n in walk_all(value):
                if isinstance(n, ast.Name):
                    came |= roots.get(n.id, set())
            if not came:
                continue
            for n in walk_all(target):
                if isinstance(n, ast.Name) and not came <= roots.setdefault(n.id, set()):
                    roots[n.id] |= came
                    changed = True
    return roots


def _span(node: ast.AST) -> tuple[int, int]:
    start = getattr(node, "lineno", 0)
    return start, getattr(node, "end_lineno", None) or start


def _leaves(stmt: ast.AST) -> bool:
    """A `return` or `raise` of this function inside `stmt`."""
    todo = list(child_nodes(stmt))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return | ast.Raise):
            return True
        if not isinstance(node, _SCOPES):
            todo.extend(child_nodes(node))
    return False


def _diverts(branch: list[ast.stmt]) -> bool:
    """The branch may not fall through to the statement after its `if`: a `return` or `raise`,
    or a `break`/`continue` of a loop enclosing the `if` (`if flag: continue` skips the rest of
    that iteration, the read included)."""
    todo: list[ast.AST] = list(branch)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return | ast.Raise | ast.Break | ast.Continue):
            return True
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, _LOOPS):
            todo.extend(node.orelse)  # their own break/continue stay inside them
            todo.extend(n for n in walk_all(node) if isinstance(n, ast.Return | ast.Raise))
            continue
        todo.extend(child_nodes(node))
    return False


def _test_of(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
        return [node.test]
    if isinstance(node, ast.For | ast.AsyncFor):
        return [node.iter]
    if isinstance(node, ast.Match):
        return [node.subject]
    if isinstance(node, ast.BoolOp):
        return list(node.values[:-1])
    if isinstance(node, ast.comprehension):
        return [node.iter, *node.ifs]
    return []


def _tests(fn: ast.AST, line: int) -> list[ast.expr]:
    nodes = _own_nodes(fn)
    loops = [n for n in nodes if isinstance(n, _LOOPS) and _span(n)[0] <= line <= _span(n)[1]]
    out: list[ast.expr] = []
    for node in nodes:
        tests = _test_of(node)
        if not tests:
            continue
        start, end = _span(node)
        enclosing = start <= line <= end
        in_loop = any(_span(lp)[0] <= start and end <= _span(lp)[1] for lp in loops)
        before = end < line and (
            isinstance(node, ast.While | ast.Assert)
            or (isinstance(node, ast.stmt) and _leaves(node))
        )
        if enclosing or in_loop or before:
            out += tests
    return out


def reached_with(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    line: int,
    values: dict[str, object],
) -> bool:
    """Whether the read at `line` is still reached where the parameters of `values` hold those
    values (literals the call passes, or their defaults): every test on the way that depends on
    one of them must be a test of those parameters alone, never bound again in `fn`, that
    evaluates to the direction leading to the read: an `if` enclosing it (its body or its
    `else`), an `if` before it one of whose branches may leave (the branch taken must not), an
    `assert` before it (true).
    Any other test depending on them (a loop, a conditional expression, a local computed from
    them) is not evaluated: False."""
    a = fn.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    roots = _roots(fn, {p for p in params if p != param})
    # A nested def may rebind one (`nonlocal flag`) before the test runs, and a list, dict or
    # set passed may be changed in place (`seen.append(1)`) before it is tested.
    rebound = {
        n.id
        for n in walk_all(fn)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in values
    } | {name for n in walk_all(fn) if isinstance(n, ast.Nonlocal) for name in n.names}
    if rebound & set(values) or not all(_immutable(v) for v in values.values()):
        return False
    nodes = _own_nodes(fn)
    # A read in an `except` handler is reached by a raise, maybe the one a branch taken makes
    # (`if flag: raise E`): the direction of the tests on the way is not the fall-through one.
    in_handler = any(
        isinstance(n, ast.ExceptHandler) and _span(n)[0] <= line <= _span(n)[1] for n in nodes
    )
    for test in _tests(fn, line):
        names = {n.id for n in walk_all(test) if isinstance(n, ast.Name)}
        if not any(roots.get(n, set()) & set(values) for n in names):
            continue
        if in_handler:
            return False
        owner = next(
            (n for n in nodes if isinstance(n, ast.If | ast.Assert) and n.test is test), None
        )
        if owner is None or not names <= set(values):
            return False
        value = _evaluate(test, values)
        if value is None:
            return False
        if isinstance(owner, ast.Assert):
            if not value:
                return False  # it raises before the read
            continue
        start, end = _span(owner)
        if start <= line <= end:
            branch = owner.body if value else owner.orelse
            if not any(_span(s)[0] <= line <= _span(s)[1] for s in branch):
                return False
        elif _diverts(owner.body if value else owner.orelse):
            return False
    return True


def _immutable(value: object) -> bool:
    """A literal value no code can change in place: not a list, dict or set, nor holds one."""
    if isinstance(value, list | dict | set):
        return False
    if isinstance(value, tuple | frozenset):
        return all(_immutable(v) for v in value)
    return True


def _evaluate(e: ast.expr, values: dict[str, object]) -> bool | None:
    """The truth of a test built of the given names, literals, comparisons, `not`, `and`/`or`;
    None where it is anything else or raises."""

    def value(x: ast.expr) -> object:
        if isinstance(x, ast.Name):
            return values[x.id]
        if isinstance(x, ast.Constant):
            return x.value
        if isinstance(x, ast.Tuple | ast.List | ast.Set):
            return tuple(value(v) for v in x.elts)
        if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
            return not value(x.operand)
        if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):
            return -value(x.operand)  # type: ignore[operator]
        if isinstance(x, ast.BoolOp):
            out = value(x.values[0])
            for v in x.values[1:]:
                if bool(out) is isinstance(x.op, ast.Or):
                    return out
                out = value(v)
            return out
        if isinstance(x, ast.Compare):
            left = value(x.left)
            for op, right_e in zip(x.ops, x.comparators, strict=True):
                right = value(right_e)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        raise ValueError(x)

    try:
        return bool(value(e))
    except Exception:  # a type the comparison does not take, a name not given
        return None


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
