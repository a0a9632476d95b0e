"""A read that finds the buffer untouched only where a loop that writes it ran no pass.

```
x_mean = torch.zeros(seq_len.shape)
for i in range(x.shape[0]):
    x_mean[i] = x[i, :, : seq_len[i]].mean()
return x - x_mean.view(-1, 1, 1)
```

The fixpoint joins the loop's exit with the state the loop was entered with (no pass ran), so
the read after it finds nothing written on that path. That path reads memory nobody wrote only
if the loop can run no pass while the buffer has elements: here only if `x` has no row while
`seq_len` has some, which callers never do (the sizes are two spellings of one batch). Real code
nearly always sizes such a buffer by the loop's own count (analysis/dataflow/loop_sizes.py proves
it where the code spells it); where the code does not relate the two, the read is no evidence of
a dangerous rewrite, and `unsafe` would fail a guard on a correct change. So the read is
`unproven`, naming the loop and what would decide it, unless a write of no pass covers the
element read (uncovered.py: `zeros(n + 1)` with only `[1:]` written reads element 0 on every
path).

Only for a loop of analysis/dataflow/loops.py's shape (`x[i] = ...` over `range(n)`, nested
loops over two positions, strides `x[:, i::p]` over `range(p)`), whose passes write every element
when it counts the buffer's own size: a loop writing part of each row (`x[b, :k] = ...`), through a
mask or at moving slice bounds leaves elements a later read may well take, which the zero-trip
path only stands in for; those stay `unsafe`. The question is asked only where it is the whole
story: the first write on any path
(`State.some_write`) is a statement reached on every pass of each loop around it up to an
outermost loop `L` (its ancestors there are only `for`/`while` bodies and `with` blocks, no
`break` or `continue` earlier in those bodies); the read is in a statement after `L` in `L`'s
statement list, and the allocation is not in `L` nor between it and the read (a block is entered
at its top, so every path from the allocation to the read runs `L`). Then a path reaching the
read with nothing written is one on which some loop of that chain ran no pass. Not where the
code shows that path keeps elements: `range(n - k)` over a dimension `n`, `range(m)` over a
dimension `m + k` (`short_of_size`: k elements are left where the loop runs none). Demoting
`unsafe` to `unproven` never makes a `safe`.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.resolve import record_parent, walk

Loop = ast.For | ast.AsyncFor | ast.While
_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def zero_trip_loop(
    fn: ast.AST, alloc: ast.AST, read: ast.AST, write_line: int, memo: dict[int, object]
) -> Loop | None:
    """The outermost loop `L` above, or None where some other path may skip the write."""
    parents = _parents(fn, memo)
    if parents is None or id(alloc) not in parents or id(read) not in parents:
        return None
    writes = [n for n in walk([fn]) if isinstance(n, ast.stmt) and n.lineno == write_line]
    if len(writes) != 1:
        return None  # synthetic programs repeat lines of several methods: not this question
    stmt: ast.AST = writes[0]
    loop: Loop | None = None
    while True:
        parent = parents.get(id(stmt))
        if parent is None or parent is fn:
            break
        if isinstance(parent, Loop):
            if stmt not in parent.body or _skips(parent, write_line):
                return None
            loop = parent
        elif isinstance(parent, ast.With | ast.AsyncWith):
            pass
        else:
            break
        stmt = parent
    if loop is None:
        return None
    block = _block_of(loop, parents)
    if block is None:
        return None
    first = _index_in(block, alloc, parents)
    last = _index_in(block, read, parents)
    at = next(i for i, s in enumerate(block) if s is loop)
    # Blocks are entered at their top: every path to the read runs `L` after the allocation
    # unless the allocation is in `L` or between it and the read (from an enclosing block, or
    # later in this one through a loop around it, a path runs `L` again before the read).
    if last is None or not at < last or (first is not None and at <= first <= last):
        return None
    if _count_rebound(loop, block[first + 1 if first is not None and first < at else 0 : at]):
        return None
    return loop


def _count_rebound(loop: Loop, between: list[ast.stmt]) -> bool:
    """A name of the loop's count is bound by a statement before the loop (after the allocation
    where it is in the same list): `n = n - 1` shows a count other than the size it had."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return True
    names = {n.id for n in walk([loop.iter]) if isinstance(n, ast.Name)}
    return any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del) and n.id in names
        for n in walk(between)
    )


def short_of_size(
    loop: Loop, alloc: ast.Call, dims: tuple[tuple[str | None, frozenset[str]], ...]
) -> bool:
    """`for i in range(n - k)` over a buffer with a dimension spelled `n`, or `range(m)` over one
    spelled `m + k` (k a positive literal): where the loop runs no pass the buffer still has k
    elements along it, so that path is a real read (kept `unsafe`)."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return False
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return False
    if it.keywords or not 1 <= len(it.args) <= 2:
        return False
    if len(it.args) == 2 and not (isinstance(it.args[0], ast.Constant) and it.args[0].value == 0):
        return False
    count = it.args[-1]
    spelled = [e for text, _ in dims if text is not None and (e := _parse(text)) is not None]
    sizes = alloc.args
    if len(sizes) == 1 and isinstance(sizes[0], ast.Tuple | ast.List):
        sizes = sizes[0].elts
    spelled += [a for a in sizes if not isinstance(a, ast.Starred)]
    base = _minus_literal(count)
    if base is not None and any(ast.dump(base) == ast.dump(e) for e in spelled):
        return True
    return any(
        (left := _plus_literal(e)) is not None and ast.dump(left) == ast.dump(count)
        for e in spelled
    )


def _parse(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _minus_literal(e: ast.expr | None) -> ast.expr | None:
    """`n` of `n - k`, k a positive int literal."""
    if (
        isinstance(e, ast.BinOp)
        and isinstance(e.op, ast.Sub)
        and isinstance(e.right, ast.Constant)
        and type(e.right.value) is int
        and e.right.value > 0
    ):
        return e.left
    return None


def _plus_literal(e: ast.expr | None) -> ast.expr | None:
    """`m` of `m + k` or `k + m`, k a positive int literal."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)):
        return None
    for lit, other in ((e.right, e.left), (e.left, e.right)):
        if isinstance(lit, ast.Constant) and type(lit.value) is int and lit.value > 0:
            return other
    return None


def _parents(fn: ast.AST, memo: dict[int, object]) -> dict[int, ast.AST] | None:
    key = id(fn)
    hit = memo.get(key)
    if isinstance(hit, tuple) and hit[0] is fn:
        return hit[1]
    parents: dict[int, ast.AST] = {}
    for n in walk([fn]):
        record_parent(n, parents)
    memo[key] = (fn, parents)  # the node kept with the map: its id is not reused meanwhile
    return parents


def _skips(loop: Loop, line: int) -> bool:
    """A `break` or `continue` of this loop before `line` may end a pass before the write."""
    todo: list[ast.AST] = list(loop.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break | ast.Continue) and n.lineno < line:
            return True
        if isinstance(n, Loop | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # their `break`/`continue` are their own
        todo.extend(ast.iter_child_nodes(n))
    return False


def _block_of(stmt: ast.AST, parents: dict[int, ast.AST]) -> list[ast.stmt] | None:
    parent = parents.get(id(stmt))
    if parent is None:
        return None
    for name in _BLOCKS:
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    return None


def _index_in(block: list[ast.stmt], node: ast.AST, parents: dict[int, ast.AST]) -> int | None:
    """The index of the statement of `block` that holds `node`."""
    here: ast.AST | None = node
    while here is not None:
        for i, s in enumerate(block):
            if s is here:
                return i
        here = parents.get(id(here))
    return None
