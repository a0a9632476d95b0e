"""Whether a read inside a `for` loop's body surely runs on the loop's first pass, and reads
something there (first_pass.py asks, before it calls a read on its CFG copy `unsafe`).

The copy where no `for` loop starts a second pass keeps every branch of the body, but the first
pass need not take them all: `for i in range(n): if i == 0: out[0] = x[0] else: out[i] =
out[i - 1] + x[i]` reads on its first pass only through the `else` that `i == 0` never takes
there (a prefix sum that writes every element before reading it). The copy cannot tell, so a read
counts only where the syntax shows that every first pass that starts runs it:

- on the way from the outermost `for` loop around it down to its statement, only `for` bodies,
  `with` bodies and `try` bodies or `finally` blocks (no `if`, `while`, `match`, handler, `else`
  or nested def); no `return`, `raise`, or `break`/`continue` of a loop around the read comes
  before it in that outer loop's body (an `assert` only where its test is the same on every pass);
- every inner `for` loop on that way iterates over something that does not change from one pass
  of the loops around it to the next (`for j in range(i)` runs no pass while `i == 0`), and is
  not empty as written;
- the read's statement reads the same number of elements on every pass: no slice bound or
  argument of a subset method (`narrow`, `index_select`, ...) that depends on a name the loops
  change (`out[:i]` is empty on the first pass of `for i in range(n)`) or on a call, no index
  computed by a call or held in a name the loop body binds (it may be an empty index tensor),
  and no conditional expression, short-circuit or comprehension that may skip the read.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.resolve import child_nodes, walk

# Methods and functions whose result is a subset of the tensor chosen by their arguments.
_SUBSET = frozenset(
    [
        "narrow",
        "index_select",
        "take",
        "take_along_dim",
        "gather",
        "masked_select",
        "split",
        "tensor_split",
        "chunk",
        "unfold",
        "as_strided",
        "select",
        "diagonal",
        "__getitem__",
    ]
)
_SKIPPING = (
    ast.IfExp,
    ast.BoolOp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Lambda,
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _end(s: ast.stmt) -> int:
    return getattr(s, "end_lineno", None) or s.lineno


def _blocks(s: ast.stmt) -> list[tuple[str, list[ast.stmt]]]:
    """The statement lists of `s`, each with the role it plays."""
    out: list[tuple[str, list[ast.stmt]]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(s, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append((name, block))
    for h in getattr(s, "handlers", None) or []:
        out.append(("handler", h.body))
    for c in getattr(s, "cases", None) or []:
        out.append(("case", c.body))
    return out


def _path(stmts: list[ast.stmt], line: int) -> list[tuple[ast.stmt, str]]:
    """From `stmts` down to the innermost statement holding `line`: each statement with the role
    of its block that holds the line ("" for the last one: the line is its own)."""
    out: list[tuple[ast.stmt, str]] = []
    while True:
        hit = next((s for s in stmts if s.lineno <= line <= _end(s)), None)
        if hit is None:
            return out
        inner = next(
            ((role, b) for role, b in _blocks(hit) if b[0].lineno <= line <= _end(b[-1])), None
        )
        if inner is None or isinstance(hit, _SCOPES):
            out.append((hit, "" if inner is None else "scope"))
            return out
        out.append((hit, inner[0]))
        stmts = inner[1]


def _names(e: ast.AST | None) -> set[str]:
    return {n.id for n in walk([e]) if isinstance(n, ast.Name)} if e is not None else set()


def _calls(e: ast.AST) -> bool:
    """A call in `e`: its value may change from one pass to the next (a counter, a generator)."""
    return any(isinstance(n, ast.Call) for n in walk([e]))


def _stored(loop: ast.For | ast.AsyncFor) -> tuple[set[str], set[str]]:
    """(the loop's target names, the names its body binds or mutates through a method call)."""
    targets = {n.id for n in walk([loop.target]) if isinstance(n, ast.Name)}
    bound: set[str] = set()
    for n in walk(loop.body):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.Attribute | ast.Subscript) and not isinstance(n.ctx, ast.Load):
            root = n.value  # `self.k = i`, `state["k"] += 1`: what `self` or `state` hold changes
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if isinstance(root, ast.Name):
                bound.add(root.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            root = n.func.value
            if isinstance(root, ast.Name):
                bound.add(root.id)
    return targets, bound


def _surely_empty(e: ast.expr) -> bool:
    if isinstance(e, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return not (e.elts if not isinstance(e, ast.Dict) else e.keys)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range":
        args = e.args
        if args and not e.keywords and all(isinstance(a, ast.Constant) for a in args):
            try:
                return len(range(*[a.value for a in args])) == 0  # type: ignore[attr-defined]
            except (TypeError, ValueError):
                return True
    return False


def _header(s: ast.stmt) -> list[ast.AST]:
    """What a statement evaluates itself when the read's line is its own."""
    if isinstance(s, ast.If | ast.While):
        return [s.test]
    if isinstance(s, ast.For | ast.AsyncFor):
        return [s.iter]
    if isinstance(s, ast.With | ast.AsyncWith):
        return [i.context_expr for i in s.items]
    if isinstance(s, ast.Match):
        return [s.subject]
    return [s]


def _jumps_before(
    loop: ast.For | ast.AsyncFor, line: int, around: list[ast.stmt], varying: set[str]
) -> bool:
    """A `return`, `raise`, `break`/`continue` of a loop in `around`, or an `assert` on a name
    the loops change, before `line` in the body of `loop`."""
    stack: list[tuple[ast.AST, ast.stmt]] = [(s, loop) for s in loop.body]
    while stack:
        node, nearest = stack.pop()
        if isinstance(node, _SCOPES) or getattr(node, "lineno", line) >= line:
            continue
        if isinstance(node, ast.Return | ast.Raise):
            return True
        if isinstance(node, ast.Break | ast.Continue) and any(nearest is a for a in around):
            return True
        if isinstance(node, ast.Assert) and _names(node.test) & varying:
            return True
        inner = node if isinstance(node, ast.For | ast.AsyncFor | ast.While) else nearest
        for child in child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                stack.append((child, inner))
    return False


def _same_extent(exprs: list[ast.AST], varying: set[str], bound: set[str]) -> bool:
    """The read's statement reads as many elements on the first pass as on any other."""
    for n in walk(exprs):
        if isinstance(n, _SKIPPING):
            return False
        if isinstance(n, ast.Slice) and (_names(n) & varying or _calls(n)):
            return False
        if isinstance(n, ast.Subscript) and (_names(n.slice) & bound or _calls(n.slice)):
            return False
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            args = [*n.args, *(k.value for k in n.keywords)]
            if name in _SUBSET and any(_names(a) & varying or _calls(a) for a in args):
                return False
    return True


def runs_on_first_pass(body: list[ast.stmt], line: int) -> bool:
    """Every first pass of the `for` loops around `line` (in `body`) that starts reads there, and
    reads at least one element where the read does on any pass (the module docstring)."""
    path = _path(body, line)
    starts = [
        k
        for k, (s, role) in enumerate(path)
        if isinstance(s, ast.For | ast.AsyncFor) and role == "body"
    ]
    if not starts:
        return False
    varying: set[str] = set()
    bound: set[str] = set()
    around: list[ast.stmt] = []
    for s, role in path[starts[0] :]:
        if isinstance(s, ast.For | ast.AsyncFor) and role == "body":
            if _names(s.iter) & varying or _surely_empty(s.iter):
                return False
            targets, stored = _stored(s)
            varying |= targets | stored
            bound |= stored - targets
            around.append(s)
        elif role == "":
            break
        elif not (
            (isinstance(s, ast.With | ast.AsyncWith) and role == "body")
            or (isinstance(s, ast.Try) and role in ("body", "finalbody"))
        ):
            return False  # a branch, a handler, an `else`, a nested scope
    read, role = path[-1]
    if role != "" or isinstance(read, _SCOPES):
        return False
    outer = around[0]
    assert isinstance(outer, ast.For | ast.AsyncFor)
    if _jumps_before(outer, read.lineno, around, varying):
        return False
    return _same_extent(_header(read), varying, bound)
