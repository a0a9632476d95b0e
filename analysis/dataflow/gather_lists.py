"""Lists of new buffers that a collective fills: `bufs = [torch.zeros_like(x) for _ in range(n)]`
then `torch.distributed.all_gather(bufs, x)`.

A list comprehension whose element is the allocation itself makes a new list of buffers of that
site; bound to one plain local name, that name is the only reference to the list (nothing else
ever saw it). The dataflow then keeps the buffer at the summary path `bufs[*]` (any element)
instead of losing it, and a contract that writes every tensor of an output list in full
(kernel_library.py `writes_each`) writes the buffer in full when handed `bufs` itself.

Any other use of `bufs` before that write goes through the holder machinery: a use of the whole
list (`len`, `.append`, iteration, passing it on, `other = bufs`) reads the buffer possibly and
loses it (Effects._owner_used), `bufs[i]` is maybe the buffer (writes through it prove nothing).
What this module decides is only which names that is sound for (`gather_names`): a name of a
function (not a parameter, global, nonlocal or closure cell) bound exactly once, by such an
assignment, whose comprehension does not mention it, that no nested scope (def, class, lambda,
generator expression: except as a generator's first iterable, evaluated where it is made, which
the dataflow sees as a use of the list there) mentions, never deleted or stored into (`bufs[0] = t`, `del bufs[0]`,
`bufs += ...`), in a function that reads no frames (`locals()`: every local reached by name).
"""

from __future__ import annotations

import ast

from zeroopt.analysis import semantics as api
from zeroopt.analysis.resolve import parameter_names, walk

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)


def gather_names(fn: ast.AST, escaping: frozenset[str]) -> frozenset[str]:
    """Names of `fn` bound once by `name = [CALL for ...]` and used as the module docstring says.
    Which call is the allocation is checked where the assignment is evaluated."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset()
    cached: frozenset[str] | None = getattr(fn, "_zeroopt_gather_lists", None)
    if cached is not None:
        return cached
    result = _names(fn, escaping)
    setattr(fn, "_zeroopt_gather_lists", result)  # noqa: B010 - a memo on the tree, as holders.py
    return result


def _names(fn: ast.FunctionDef | ast.AsyncFunctionDef, escaping: frozenset[str]) -> frozenset[str]:
    bad: set[str] = set(escaping)
    bad.update(parameter_names(fn))
    candidates: dict[str, ast.Name] = {}
    stores: dict[str, int] = {}
    nodes = list(walk(fn.body))
    for node in nodes:
        if (isinstance(node, ast.Name) and node.id in api.FRAME_NAMES) or (
            isinstance(node, ast.Attribute) and node.attr in api.FRAME_NAMES
        ):
            return frozenset()
        if isinstance(node, _NESTED):
            # A generator expression evaluates its first iterable where it is made, in this
            # scope (`max(s.item() for s in sizes)`): that use of the name is not deferred.
            first = node.generators[0].iter if isinstance(node, ast.GeneratorExp) else None
            bad.update(n.id for n in walk([node]) if isinstance(n, ast.Name) and n is not first)
        for bound in ("name", "asname", "rest"):  # def, class, import, except, match
            value = getattr(node, bound, None)
            if isinstance(value, str):
                bad.add(value.split(".")[0])
        if isinstance(node, ast.Global | ast.Nonlocal):
            bad.update(node.names)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.ListComp)
            and isinstance(node.value.elt, ast.Call)
        ):
            target = node.targets[0]
            candidates[target.id] = target
            if any(isinstance(n, ast.Name) and n.id == target.id for n in walk([node.value])):
                bad.add(target.id)  # `bufs = [zeros(n) for _ in bufs]`: the old list is read
        if isinstance(node, ast.Subscript | ast.Starred) and not isinstance(node.ctx, ast.Load):
            # `bufs[0] = t`, `del bufs[0]`, `*bufs, = ...`: an element replaced or removed
            bad.update(n.id for n in walk([node]) if isinstance(n, ast.Name))
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            bad.update(n.id for n in walk([node.target]) if isinstance(n, ast.Name))
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + (1 if isinstance(node.ctx, ast.Store) else 2)
    return frozenset(n for n, t in candidates.items() if n not in bad and stores.get(n) == 1)
