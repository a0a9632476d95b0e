"""Lists built by `.append` and read whole by `torch.cat`/`torch.stack`: `tokens = []`,
`tokens.append(cls)`, `torch.cat(tokens)`.

A method call on a name is a call of whatever object the name holds: `tokens.append` is
`list.append` only where the name provably holds a list, and one no other code can reach
(`bytearray.append` or a user class's `append` may read the argument; a list another name
reaches may be changed through that name). `append_names` picks the names of a function for
which that is so: bound only to list displays (`xs = []`, `xs: list[T] = [a]`,
`xs, ys = [], []`; no `*a`), and every other occurrence of the name one of

- `xs.append(v)` as a statement (one positional argument, not starred, no keyword),
- `xs.extend(D)` as a statement and `xs += D`, with `D` a list or tuple display (no `*a`),
- the first positional argument of a sequence reader (`torch.cat(xs, dim=1)`:
  semantics.SEQUENCE_READERS, which read every tensor of the sequence and keep no reference),
- `len(xs)`, and a truth test (`if xs:`, `while xs:`, `not xs`): they look at the length only.

So the list object is made here, only ever grows (no method or statement removes, replaces or
reorders an item: no subscript, `pop`, `insert`, `del`, iteration or `xs[i] = v`), and never
reaches other code: no argument of another call, no alias, no store, no `return`, no mention in
a nested scope (def, lambda, class, comprehension or generator expression), no `global` or
`nonlocal`, not a parameter, in a function that reads no frames (`locals()`). An item appended
is then in the list at every later point until the name is bound again, and a sequence reader
handed the list reads it (the dataflow keeps it at the path `xs[*]`, holders.py).

Anything else keeps the name out: the call is then the unknown method call it was before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NamedTuple

from zeroopt.analysis import semantics as api
from zeroopt.analysis.resolve import child_nodes, parameter_names, walk

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp,
           ast.ListComp, ast.SetComp, ast.DictComp)  # fmt: skip
GROWING = ("append", "extend")  # the list methods allowed on such a name


def plain_display(e: ast.expr | None, lists_only: bool = False) -> bool:
    """A list (or tuple) display without a starred item: its items are exactly its elements."""
    kinds = ast.List if lists_only else (ast.List, ast.Tuple)
    return isinstance(e, kinds) and not any(isinstance(x, ast.Starred) for x in e.elts)


class AppendLists(NamedTuple):
    names: frozenset[str]
    quiet: frozenset[int]  # ids of the loads that only look at the length: `len(xs)`, `if xs:`


_NONE = AppendLists(frozenset(), frozenset())
_MEMO = "_zeroopt_append_lists"


def memoized(fn: ast.AST) -> AppendLists | None:
    """The answer already computed for `fn`, if any (asked before every store of the dataflow:
    cheaper than building the escaping names `append_names` takes)."""
    found: AppendLists | None = getattr(fn, _MEMO, None)
    return found


def append_names(
    fn: ast.AST, qualify: Callable[[ast.expr], str | None], escaping: frozenset[str]
) -> AppendLists:
    """Names of `fn` that hold a list only this function's own `append`/`extend`/`+=` change,
    and only sequence readers, `len` and truth tests see (the module docstring). Names in
    `escaping` (globals, closure cells) never are."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return _NONE
    cached = memoized(fn)
    if cached is not None:
        return cached
    result = _names(fn, qualify, escaping)
    setattr(fn, _MEMO, result)  # a memo on the tree, as holders.py
    return result


def _names(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    qualify: Callable[[ast.expr], str | None],
    escaping: frozenset[str],
) -> AppendLists:
    bad: set[str] = set(escaping)
    bad.update(parameter_names(fn))
    parent: dict[int, ast.AST] = {}
    nodes = list(walk(fn.body))
    for node in nodes:
        for child in child_nodes(node):
            parent[id(child)] = node
        if (isinstance(node, ast.Name) and node.id in api.FRAME_NAMES) or (
            isinstance(node, ast.Attribute) and node.attr in api.FRAME_NAMES
        ):
            return _NONE  # `locals()`, `vars()`: every local reached by name
        if isinstance(node, _NESTED):
            bad.update(n.id for n in walk([node]) if isinstance(n, ast.Name))
        if isinstance(node, ast.Global | ast.Nonlocal):
            bad.update(node.names)
        for bound in ("name", "asname", "rest"):  # def, class, import, except, match
            value = getattr(node, bound, None)
            if isinstance(value, str):
                bad.add(value.split(".")[0])
    made: set[str] = set()
    quiet: dict[int, str] = {}
    for node in nodes:
        if not isinstance(node, ast.Name) or node.id in bad:
            continue
        up = parent.get(id(node))
        if isinstance(node.ctx, ast.Store):
            if _bound_to_display(node, up, parent.get(id(up))):
                made.add(node.id)
            elif not (
                isinstance(up, ast.AugAssign)
                and up.target is node
                and isinstance(up.op, ast.Add)
                and plain_display(up.value)
            ):
                bad.add(node.id)
        elif isinstance(node.ctx, ast.Del):
            bad.add(node.id)
        elif _length_only(node, parent, qualify):
            quiet[id(node)] = node.id
        elif not _allowed_load(node, parent, qualify):
            bad.add(node.id)
    names = frozenset(made - bad)
    return AppendLists(names, frozenset(i for i, n in quiet.items() if n in names))


def _bound_to_display(node: ast.Name, up: ast.AST | None, stmt: ast.AST | None) -> bool:
    """`xs = [...]`, `xs: T = [...]`, or `a, b = [], [x]`: each name of the target bound to its
    own new list display (the dataflow binds them pairwise, statements.py)."""
    if isinstance(up, ast.Assign | ast.AnnAssign):
        target = up.targets == [node] if isinstance(up, ast.Assign) else up.target is node
        return target and plain_display(up.value, True)
    if not (
        isinstance(up, ast.Tuple | ast.List)
        and isinstance(stmt, ast.Assign)
        and stmt.targets == [up]
        and plain_display(stmt.value)
        and plain_display(up)
    ):
        return False
    assert isinstance(stmt.value, ast.Tuple | ast.List)
    values = stmt.value.elts
    if len(values) != len(up.elts):
        return False
    return plain_display(values[up.elts.index(node)], True)


def _length_only(
    node: ast.Name, parent: dict[int, ast.AST], qualify: Callable[[ast.expr], str | None]
) -> bool:
    """`len(xs)`, `if xs:`, `while xs:`, `not xs`: list.__len__ runs, no code of the program."""
    up = parent.get(id(node))
    if isinstance(up, ast.Call):
        return up.args == [node] and not up.keywords and qualify(up.func) == "builtins.len"
    if isinstance(up, ast.UnaryOp):
        return isinstance(up.op, ast.Not)
    return isinstance(up, ast.If | ast.While) and up.test is node


def _allowed_load(
    node: ast.Name, parent: dict[int, ast.AST], qualify: Callable[[ast.expr], str | None]
) -> bool:
    up = parent.get(id(node))
    if isinstance(up, ast.Attribute) and up.value is node and up.attr in GROWING:
        call = parent.get(id(up))
        if not (
            isinstance(call, ast.Call)
            and call.func is up
            and isinstance(parent.get(id(call)), ast.Expr)
            and len(call.args) == 1
            and not call.keywords
        ):
            return False
        arg = call.args[0]
        return plain_display(arg) if up.attr == "extend" else not isinstance(arg, ast.Starred)
    return (
        isinstance(up, ast.Call)
        and bool(up.args)
        and up.args[0] is node
        and qualify(up.func) in api.SEQUENCE_READERS
    )


def made_in_loop(fn: ast.AST, alloc: ast.AST | None, reader: ast.AST) -> str:
    """The evidence's assumption where the allocation runs in a loop the reader is after: the
    reader reads the buffer of the last pass that made one, on a path where the loop ran at
    least once (as the first-pass reads word it, first_pass.py)."""
    line = getattr(alloc, "lineno", None)
    at = getattr(reader, "lineno", None)
    if line is None or at is None:
        return ""
    lines = []
    nodes = list(walk([fn]))
    if not any(n is alloc for n in nodes):
        return ""  # made in another function (a callee whose writes are carried over)
    for loop in nodes:
        if isinstance(loop, ast.For | ast.AsyncFor | ast.While) and loop.body:
            first = loop.body[0].lineno
            last = max(s.end_lineno or s.lineno for s in loop.body)  # not `else:`, run once
            if first <= line <= last and not first <= at <= last:
                lines.append(str(loop.lineno))
    if not lines:
        return ""
    if len(lines) == 1:
        return f" (made on a pass of the loop at line {lines[0]}, assuming it runs at least once)"
    return (
        f" (made on a pass of the loops at lines {', '.join(lines)}, assuming each runs at least "
        "once)"
    )
