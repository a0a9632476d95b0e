"""`x[i]` on the first iteration of `for i in range(n)`: i is 0 there, so the subscript is
`x[0]`, and a definite read of all of it in that statement reads element 0 (uncovered.py).

Claimed only where nothing can tie whether the read runs to i being 0: the statement is a
top-level statement of the loop body; every statement before it in the body is a plain
assignment or expression that never mentions i (no branch, `continue`, `assert`, `raise` that
could skip it on the first iteration only); i is bound by the loop alone (no assignment, `del`,
`global` or `nonlocal` of it); and, in the statement, i appears only as the index of a
subscript (`cu[i]`, `cu[i + 1]`) of the same buffer or of a tensor the function binds from a
torch factory alone (`torch.zeros`, `torch.cumsum`, ...): indexing a sequence with i + c,
c >= 0, raises at i = 0 only if it raises at every i, where a dict keyed from 1 raises at 0
alone. The loop is assumed to run at least once, which the evidence says. A read of anything
with nothing written before it on a loop's first pass is first_pass.py's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from zeroopt.analysis.resolve import child_nodes, walk_all

_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass)
_DEFERRED = (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# (loop variable, loop text) by id of a statement that runs on every first iteration.
_Firsts = dict[int, tuple[str, str]]


def zero_index_assumption(
    func: ast.AST,
    stmt: ast.AST | None,
    sub: ast.Subscript,
    qualify: Callable[[ast.expr], str | None],
) -> str:
    """The assumption under which `sub` (`x[i]`, read in `stmt`) is `x[0]`, or ''."""
    if stmt is None or not isinstance(sub.slice, ast.Name):
        return ""
    hit = _firsts(func, qualify).get(id(stmt))
    if hit is None or hit[0] != sub.slice.id:
        return ""
    name, loop = hit
    base = ast.unparse(sub.value)
    tensors = _torch_made(func)
    for node in walk_all(stmt):
        if isinstance(node, _DEFERRED) and _mentions(node, name):
            return ""
    for parent in walk_all(stmt):
        for child in child_nodes(parent):
            if not (isinstance(child, ast.Name) and child.id == name):
                continue
            if not _allowed_use(parent, child, stmt, base, tensors):
                return ""
    return f"assuming the loop `{loop}` runs at least once: on its first iteration `{name}` is 0"


def _allowed_use(
    parent: ast.AST, use: ast.Name, stmt: ast.AST, base: str, tensors: frozenset[str]
) -> bool:
    """`use` is `B[i]` or the i of `B[i + c]` (c a non-negative literal), B the buffer as the
    read writes it or a tensor the function made."""
    index: ast.AST = use
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        other = parent.right if parent.left is use else parent.left
        if not (isinstance(other, ast.Constant) and type(other.value) is int and other.value >= 0):
            return False
        index = parent
    for node in walk_all(stmt):
        if isinstance(node, ast.Subscript) and node.slice is index:
            value = node.value
            return ast.unparse(value) == base or (
                isinstance(value, ast.Name) and value.id in tensors
            )
    return False


def _firsts(func: ast.AST, qualify: Callable[[ast.expr], str | None]) -> _Firsts:
    memo = getattr(func, "_zeroopt_first_iterations", None)
    if memo is None:
        memo = _collect(func, qualify)
        func._zeroopt_first_iterations = memo  # type: ignore[attr-defined]
    return memo


def _collect(func: ast.AST, qualify: Callable[[ast.expr], str | None]) -> _Firsts:
    found: _Firsts = {}
    declared = {
        n for node in walk_all(func) if isinstance(node, ast.Global | ast.Nonlocal)
        for n in node.names
    }  # fmt: skip
    for loop in _own_nodes(func):
        if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
            continue
        name = loop.target.id
        if name in declared or not _from_zero(loop.iter, qualify) or _rebinds(loop.body, name):
            continue
        text = f"for {name} in {ast.unparse(loop.iter)}"
        for stmt in loop.body:
            found[id(stmt)] = (name, text)
            if not isinstance(stmt, _SIMPLE) or _mentions(stmt, name):
                break  # what follows may be skipped, or raise, on the first iteration only
    return found


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of the function's own body, not of functions or classes defined in it."""
    out: list[ast.AST] = []
    todo = list(child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, _NESTED):
            continue
        out.append(node)
        todo.extend(child_nodes(node))
    return out


def _from_zero(it: ast.expr, qualify: Callable[[ast.expr], str | None]) -> bool:
    """`range(n)`, `range(0, n)` or `range(0, n, s)` with a positive literal step."""
    if not isinstance(it, ast.Call) or it.keywords or qualify(it.func) != "builtins.range":
        return False
    args = it.args
    if any(isinstance(a, ast.Starred) for a in args) or not 1 <= len(args) <= 3:
        return False

    def literal(a: ast.expr, least: int) -> bool:
        return isinstance(a, ast.Constant) and type(a.value) is int and a.value >= least

    if len(args) >= 2 and not (literal(args[0], 0) and args[0].value == 0):  # type: ignore[attr-defined]
        return False
    return len(args) < 3 or literal(args[2], 1)


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    for node in walk_all(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
    return False


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk_all(node))


def _torch_made(func: ast.AST) -> frozenset[str]:
    """Names every assignment of which, in the function, binds the tensor a torch factory or
    tensor function returns."""
    made: dict[str, bool] = {}
    for node in _own_nodes(func):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            targets, value = [node.target], None
        elif isinstance(node, ast.For | ast.With | ast.comprehension):
            targets = [node.target] if not isinstance(node, ast.With) else [
                i.optional_vars for i in node.items if i.optional_vars is not None
            ]  # fmt: skip
        for t in targets:
            for n in walk_all(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    ok = isinstance(t, ast.Name) and _torch_call(value)
                    made[n.id] = made.get(n.id, True) and ok
    return frozenset(n for n, ok in made.items() if ok)


# torch functions that return one tensor (not `torch.load`, which returns whatever was saved).
_TENSOR_FACTORIES = frozenset(
    {
        "zeros", "zeros_like", "empty", "empty_like", "ones", "ones_like", "full", "full_like",
        "arange", "tensor", "as_tensor", "from_numpy", "cumsum", "cat", "stack", "randint",
        "rand", "randn", "diff", "bincount", "repeat_interleave", "where",
    }
)  # fmt: skip


def _torch_call(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _TENSOR_FACTORIES
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "torch"
    )
