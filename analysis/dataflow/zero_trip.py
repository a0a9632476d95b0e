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
read with nothing written is one on which some loop of that chain ran no pass, and no test on
the way to the read names the count (`if k == 0:` reads on that path itself). And only where
each count spells the dimension it writes from names the function never binds
(`counts_its_size`: no pass, no element), or the code does not relate the counts to the
buffer's size (`unrelated`): spelled from different values, through one binding of each name; a count visibly short of the size
(`range(n - 1)` over `n`, `zeros(n + 1)`, `n = n - 1` in between, `range(k)` after `k = 0`), a
literal size or count, and inner counts that name an outer loop's variable (ragged rows) keep
their `unsafe`. Demoting `unsafe` to `unproven` never makes a `safe`.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.resolve import child_nodes, record_parent, walk

Loop = ast.For | ast.AsyncFor | ast.While
_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def zero_trip_loop(
    fn: ast.AST, alloc: ast.AST, read: ast.AST, write_line: int, memo: dict[int, object]
) -> Loop | None:
    """The outermost loop `L` above, or None where some other path may skip the write."""
    parents = parents_of(fn, memo)
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
    if _guarded_by_count(read, block[last], loop, parents):
        return None  # `if k == 0: return out.sum()`: the code reads on the zero-trip path itself
    return loop


def _guarded_by_count(
    read: ast.AST, top: ast.stmt, loop: Loop, parents: dict[int, ast.AST]
) -> bool:
    """A test on the way from `top` down to the read mentions a name of the loop's count."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return True
    names = {n.id for n in walk([loop.iter]) if isinstance(n, ast.Name)}
    here: ast.AST | None = read
    while here is not None:
        test = getattr(here, "test", None)
        if (
            isinstance(here, ast.If | ast.While | ast.IfExp | ast.Assert)
            and isinstance(test, ast.expr)
            and any(isinstance(n, ast.Name) and n.id in names for n in walk([test]))
        ):
            return True
        if here is top:
            return False
        here = parents.get(id(here))
    return False


def counts_its_size(
    sizes: tuple[tuple[int, ast.expr, str], ...], alloc: ast.Call, fn: ast.AST
) -> bool:
    """Every loop of the chain counts the dimension it writes, spelled as the allocation spells
    it from names `fn` never binds: `range(x.shape[0])` over `torch.zeros(x.shape)` or
    `torch.zeros_like(x)`, `range(n)` over `torch.zeros(n, 4)`. Run no pass, it leaves that
    dimension empty: no element to read."""
    bound = _bound_values(fn)
    for p, count, kind in sizes:
        if kind == "stride":
            continue
        tokens = _tokens(count)
        if not tokens or any("." in t or t in bound for t in tokens):
            return False  # `self.n`, or a name bound again: its value may differ from the size's
        if not _spellings(count) & _dimension(alloc, p):
            return False
    return True


def _spellings(e: ast.expr) -> set[str]:
    text = ast.unparse(e)
    out = {text}
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "size"
        and len(e.args) == 1
    ):
        out.add(f"{ast.unparse(e.func.value)}.shape[{ast.unparse(e.args[0])}]")
    return out


def _dimension(alloc: ast.Call, p: int) -> set[str]:
    """How the allocation spells its dimension `p`."""
    args = [a for a in alloc.args if not isinstance(a, ast.Starred)]
    if len(args) != len(alloc.args) or not args:
        return set()
    called = alloc.func.attr if isinstance(alloc.func, ast.Attribute) else ""
    called = alloc.func.id if isinstance(alloc.func, ast.Name) else called
    if called.endswith("_like"):
        x = ast.unparse(args[0])
        return {f"{x}.shape[{p}]", f"{x}.size({p})"} | ({f"len({x})"} if p == 0 else set())
    if len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List):
        elts = args[0].elts
        return {ast.unparse(elts[p])} if p < len(elts) else set()
    if len(args) == 1 and not isinstance(args[0], ast.Constant | ast.BinOp | ast.Name):
        shape = ast.unparse(args[0])  # `x.shape`, `x.size()`: a shape object
        out = {f"{shape}[{p}]"}
        if shape.endswith(".shape"):
            out.add(f"{shape[: -len('.shape')]}.size({p})")
        return out
    return {ast.unparse(args[p])} if p < len(args) else set()


def unrelated(
    bounds: list[ast.expr], variables: tuple[str, ...], alloc: ast.Call, fn: ast.AST
) -> bool:
    """The loop's counts and the buffer's size are spelled from different values: they share no
    name (`self.x` counts as one), even through the bindings of those names in `fn`, each
    mentions one, no count is bound to a literal and no inner count names a loop variable of
    the chain (`range(i)`, `range(len(seqs[i]))`: ragged rows). Anything else shows how the two
    relate (`range(n - 1)` over `n`, `n = n - 1` after the allocation, `zeros(n + 1)`), and the
    zero-trip path keeps its `unsafe`."""
    counts = set().union(*(_tokens(b) for b in bounds)) if bounds else set()
    if not counts or counts & set(variables):
        return False
    sizes = set().union(*(_tokens(a) for a in alloc.args if not isinstance(a, ast.Starred)))
    if not sizes:
        return False
    bound = _bound_values(fn)
    count_all, size_all = set(counts), set(sizes)
    for name in counts:
        for value in bound.get(name, ()):
            if isinstance(value, ast.Constant):
                return False  # `k = 0` before `range(k)`
            count_all |= _tokens(value)
    for name in sizes:
        for value in bound.get(name, ()):
            size_all |= _tokens(value)
    return not count_all & size_all


def _tokens(e: ast.expr) -> set[str]:
    """The values an expression is spelled from: each name (`x` of `x.shape[0]`), `self.a` for
    an attribute of `self`/`cls`; not the functions it calls (`len`, `max`)."""
    callees = {id(n.func) for n in walk([e]) if isinstance(n, ast.Call)}
    out: set[str] = set()
    for n in walk([e]):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            if n.value.id in ("self", "cls"):
                out.add(f"{n.value.id}.{n.attr}")
        elif isinstance(n, ast.Name) and id(n) not in callees and n.id not in ("self", "cls"):
            out.add(n.id)
    return out


def _bound_values(fn: ast.AST) -> dict[str, list[ast.expr]]:
    """The values each plain name of `fn` is bound to by an assignment or a `for` (a tuple
    target takes the whole value); kept on the tree, as asked once per count and per size.
    (triton_cover.py `_bindings` gives the binding sites, not the values.)"""
    memo: dict[str, list[ast.expr]] | None = getattr(fn, "_zeroopt_bound_values", None)
    if memo is not None:
        return memo
    out: dict[str, list[ast.expr]] = {}
    for n in walk([fn]):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(n, ast.Assign):
            pairs = [(t, n.value) for t in n.targets]
        elif isinstance(n, ast.AnnAssign | ast.AugAssign) and n.value is not None:
            pairs = [(n.target, n.value)]
        elif isinstance(n, ast.For | ast.AsyncFor):
            pairs = [(n.target, n.iter)]
        elif isinstance(n, ast.NamedExpr):
            pairs = [(n.target, n.value)]
        for target, value in pairs:
            for t in walk([target]):
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(value)
    fn._zeroopt_bound_values = out  # type: ignore[attr-defined]
    return out


def parents_of(fn: ast.AST, memo: dict[int, object]) -> dict[int, ast.AST] | None:
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
        todo.extend(child_nodes(n))
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
