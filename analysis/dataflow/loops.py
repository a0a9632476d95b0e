"""Coverage by loops: `for e in range(n): x[e] = ...` writes every row of x when n is its size.

A `for` loop over `range(N)` whose body, at its top level and on every iteration, assigns
`x[..., e, ...]` (or `x[:, e::N]`, or runs a nested loop of the same kind over another position)
writes every index of that position once the loop has finished normally. The loop may run zero
times: then N <= 0, and the claim holds only because the dimension is then empty, which is why N
must be the dimension itself (the allocation's size with the same unchanged name, or
`x.shape[p]` / `x.size(p)` / `len(x)`). Strides `x[:, i::p]` over `range(p)` cover the dimension
whatever its size once the loop runs; a zero-time loop then needs the dimension to be `p * c`
(c a positive literal) or `p` itself, or p a positive literal.

What this module decides is purely syntactic (the loop's shape); the dataflow checks the sizes
against the allocation at the loop's exit node (the `after-for` join, which `break`-free loops
without `else` reach only by exhausting the iterator).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zeroopt.analysis import semantics as api
from zeroopt.analysis.resolve import child_nodes, walk_all

# Methods that change a tensor's shape or layout in place: in the body, `x[e]` may name
# another row than on the first iteration.
_RESHAPING = api.INPLACE_LAYOUT_METHODS | api.RESIZE_METHODS

_ITERATORS = frozenset({"builtins.range", "builtins.enumerate"})

# Items of the written index: ("all",), ("var", name), ("stride", name, step expression).
_Item = tuple


@dataclass(frozen=True)
class LoopCover:
    target: str  # the local name of the buffer written
    items: tuple[_Item, ...]  # the index pattern once every loop of the chain has finished
    # (position, range argument, "index" or "stride") for each loop of the chain.
    sizes: tuple[tuple[int, ast.expr, str], ...]
    text: str  # the loop header, for the evidence
    variables: tuple[str, ...] = ()  # the loop variable of each loop of the chain, outermost first

    @property
    def full(self) -> bool:
        return all(item[0] == "all" for item in self.items)


def _assigned(body: list[ast.stmt]) -> set[str]:
    """Every name the body may rebind, including through `nonlocal`/`global` in nested code."""
    out: set[str] = set()
    for stmt in body:
        for sub in walk_all(stmt):
            if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
                out.add(sub.id)
            elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(sub.name)
            elif isinstance(sub, ast.Nonlocal | ast.Global):
                out.update(sub.names)
            elif isinstance(sub, ast.alias):
                out.add((sub.asname or sub.name).split(".")[0])
            elif (isinstance(sub, ast.ExceptHandler) and sub.name) or (
                isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name
            ):
                out.add(sub.name)
            elif isinstance(sub, ast.MatchMapping) and sub.rest:
                out.add(sub.rest)
    return out


def _leaves_early(body: list[ast.stmt]) -> bool:
    """A `break` or `continue` of this loop (not of a loop nested in it) anywhere in the body."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break | ast.Continue):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            stack.extend(node.orelse)  # the else of a nested loop belongs to this one
            continue
        stack.extend(child_nodes(node))
    return False


def _index_items(index: ast.expr) -> list[_Item] | None:
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    out: list[_Item] = []
    for item in items:
        if isinstance(item, ast.Slice):
            if item.lower is None and item.upper is None and item.step is None:
                out.append(("all",))
            elif isinstance(item.lower, ast.Name) and item.upper is None and item.step is not None:
                out.append(("stride", item.lower.id, item.step))
            else:
                return None
        elif isinstance(item, ast.Name):
            out.append(("var", item.id))
        else:
            return None
    return out


def _written(
    stmt: ast.stmt, inner: Callable[[ast.For], tuple[LoopCover, ...]]
) -> tuple[LoopCover, ...]:
    """What one top-level statement of a loop body writes, as patterns over loop variables."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Subscript)
        and isinstance(stmt.targets[0].value, ast.Name)
    ):
        target = stmt.targets[0]
        assert isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)  # above
        items = _index_items(target.slice)
        if items is None:
            return ()
        return (LoopCover(target.value.id, tuple(items), (), ""),)
    if isinstance(stmt, ast.For):
        return inner(stmt)
    return ()


def loop_cover(stmt: ast.For, iterator: Callable[[ast.expr], str | None]) -> tuple[LoopCover, ...]:
    """What the loop writes on every normal exit, one pattern per statement of its body that
    writes through the loop variable (each buffer its own), or () when its shape proves nothing.
    `iterator` names what the loop's `iter` calls: "range", or "enumerate" for
    `for i, x in enumerate(xs)` (i counts the items: `len(xs)` of them, checked later)."""
    if (
        stmt.orelse
        or not isinstance(stmt.iter, ast.Call)
        or len(stmt.iter.args) != 1
        or stmt.iter.keywords
        or isinstance(stmt.iter.args[0], ast.Starred)
        or _leaves_early(stmt.body)
        or any(
            isinstance(n, ast.Attribute) and n.attr in _RESHAPING
            for b in stmt.body
            for n in walk_all(b)
        )
    ):
        return ()
    called = iterator(stmt.iter.func)
    bound = stmt.iter.args[0]
    assigned = _assigned(stmt.body)
    if called == "range" and isinstance(stmt.target, ast.Name):
        var, counted = stmt.target.id, "index"
    elif (
        called == "enumerate"
        and isinstance(stmt.target, ast.Tuple)
        and len(stmt.target.elts) == 2
        and isinstance(stmt.target.elts[0], ast.Name)
        and isinstance(bound, ast.Name)
        and all(
            isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Starred | ast.expr_context)
            for n in walk_all(stmt.target.elts[1])
        )
    ):
        var, counted = stmt.target.elts[0].id, "enumerate"
        # The item is bound again on every iteration, as if by the body.
        assigned |= _assigned([ast.Assign(targets=[stmt.target.elts[1]], value=bound)])
    else:
        return ()
    if var in assigned or any(
        isinstance(n, ast.Name) and n.id in assigned for n in walk_all(bound)
    ):
        return ()
    if any(isinstance(n, ast.NamedExpr | ast.Call) for n in walk_all(bound)) and not _own(bound):
        return ()
    found: list[LoopCover] = []
    for body_stmt in stmt.body:
        for inner in _written(body_stmt, lambda s: loop_cover(s, iterator)):
            if inner.target in assigned:
                continue
            if any(
                isinstance(n, ast.Name) and n.id in assigned
                for _, size, _ in inner.sizes
                for n in walk_all(size)
            ):
                continue  # a nested loop's range may differ from one iteration to the next
            hits = [i for i, item in enumerate(inner.items) if item[0] != "all" and item[1] == var]
            if len(hits) != 1:
                continue
            p = hits[0]
            item = inner.items[p]
            if item[0] == "stride" and (counted != "index" or ast.dump(item[2]) != ast.dump(bound)):
                continue
            items = list(inner.items)
            items[p] = ("all",)
            names = stmt.target.elts if isinstance(stmt.target, ast.Tuple) else [stmt.target]
            header = f"for {', '.join(map(ast.unparse, names))} in {ast.unparse(stmt.iter)}"
            found.append(
                LoopCover(
                    inner.target,
                    tuple(items),
                    ((p, bound, "stride" if item[0] == "stride" else counted), *inner.sizes),
                    header + (f" ({inner.text})" if inner.text else ""),
                    (var, *inner.variables),
                )
            )
    return tuple(found)


def cached_loop_cover(
    stmt: ast.For,
    qualified: Callable[[ast.expr], str | None],
    memo: dict[int, Any],
    target: str,
    fn: ast.AST,
) -> LoopCover | None:
    """The pattern `loop_cover` finds for the buffer named `target` (its first statement writing
    that name), with `range`/`enumerate` resolved by `qualified`; the patterns memoised in the
    dataflow's source memo, keyed by the body list's id, which no expression node shares, the
    body kept alive with the entry. None where a loop variable is declared `global` or
    `nonlocal` in `fn` or a function nested in it: any call in the body may rebind it."""
    hit = memo.get(id(stmt.body))
    if hit is None or hit[0] is not stmt.body:

        def iterator(f: ast.expr) -> str | None:
            name = qualified(f)
            return name[len("builtins.") :] if name in _ITERATORS else None

        declared = {
            name
            for n in walk_all(fn)
            if isinstance(n, ast.Global | ast.Nonlocal)
            for name in n.names
        }
        covers = tuple(c for c in loop_cover(stmt, iterator) if not declared & set(c.variables))
        hit = (stmt.body, covers)
        memo[id(stmt.body)] = hit
    return next((c for c in hit[1] if c.target == target), None)


def _own(bound: ast.expr) -> bool:
    """`x.shape[p]`, `x.size(p)`, `len(x)`: calls allowed in a range bound (checked later)."""
    if isinstance(bound, ast.Subscript):
        return isinstance(bound.value, ast.Attribute | ast.Call)
    return isinstance(bound, ast.Call)
