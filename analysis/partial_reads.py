"""A buffer its allocating function writes only in part, read by another function: the writes
carried out of the one into the other's dataflow.

`def mk(n): x = torch.zeros(n + 1); x[1:] = f(); return x` and a caller `y = mk(n);
y.cumsum(0)`: element 0 is written by no path of `mk`, and the caller reads it. The two one-path
rules (returned_reads.py: a caller reads a returned buffer; self_reads.py: a public method reads a
buffer stored on `self`) decide only buffers the allocating function wrote not at all. Here the
allocating function's `State.may_writes` at its normal exit (the intervals some path may have
written, dataflow/uncovered.py) becomes the start of the reader's dataflow instead of "nothing
written" (`Context.seed`), and the uncovered-read check of the reader decides as it does inside
one function: a definite read of an element outside every interval, its own writes' included.

Carried only when every write of the allocating function has a known extent (`may_writes` not
None: no index or mask write, no hand-off, no loop coverage, no write through another layout),
none of them wrote it in full on any path, the buffer comes back in its own layout (not
`return x.t()`), no name of its shape is bound to a negative literal, and the allocation does not
run under a test that may make it empty (`empty_guard`). Only the number of dimensions and the
sizes that are int literals travel with it: a size spelled with names means the callee's names.
What the reader reads unwritten then is unwritten on every path of the allocating function, so
any execution of it followed by the reader's path reads it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.analysis.dataflow.const_gaps import negative_size_name
from zeroopt.analysis.dataflow.outcome import RETURNED_VIEW
from zeroopt.analysis.resolve import child_nodes, walk_all
from zeroopt.analysis.state import State

_LITERAL = re.compile(r"\d+")


def carried(fn: ast.AST, alloc: ast.Call, outcome: BufferOutcome) -> State | str:
    """The state the buffer leaves `fn` in, as the start of a reader's dataflow, or why not."""
    end = outcome.exit_state
    if end is None or outcome.gave_up or not outcome.reached:
        return "its function never returns normally"
    if end.full or outcome.writes or outcome.view_writes:
        return "written in full on some path"
    writes = end.may_writes
    if writes is None:
        return "some write has an extent the analysis does not know"
    if not writes:
        return "nothing written"
    if any(how == RETURNED_VIEW for _, how in end.escapes):
        return "handed on as a view in another layout"
    if negative_size_name(alloc, fn):
        return "a name of its shape is bound to a negative literal (it may be empty)"
    if empty_guard(fn, alloc):
        return "allocated under a test that may make it empty"
    name = getattr(fn, "name", "?")
    # The text names the allocating function: the evidence then says whose write it is
    # ("`x[1:] = v` in `mk` (line 3)"), and no write of the reader can share its key.
    moved = tuple((d, lo, hi, line, f"{text}` in `{name}") for d, lo, hi, line, text in writes)
    dims: tuple[tuple[str | None, frozenset[str]], ...] = tuple(
        (text, frozenset())
        if text is not None and _LITERAL.fullmatch(text)
        else (None, frozenset())
        for text, _ in end.dims
    )
    # What a write leaves alone by construction (padding, an index write: dataflow/gaps.py),
    # keyed like its write; not the constant gaps, which read the shape of the allocation.
    gaps = frozenset(
        replace(g, text=f"{g.text}` in `{name}") for g in end.gaps if g.kind != "const"
    )
    return State(live=True, touched=True, may_writes=moved, dims=dims, gaps=gaps)


def written(seed: State, name: str) -> str:
    """The assumption the evidence states: what the allocating function may have written."""
    assert seed.may_writes
    shown = "; ".join(f"`{text}` (line {line})" for _, _, _, line, text in seed.may_writes[:4])
    more = f" and {len(seed.may_writes) - 4} more" if len(seed.may_writes) > 4 else ""
    pattern = (
        ", or that leave a part alone by construction (padding, index writes)" if seed.gaps else ""
    )
    return (
        f"`{name}` writes the buffer only through writes of a known extent{pattern} on any path "
        f"before handing it on ({shown}{more}; no other write, no hand-off, none in full)"
    )


def empty_guard(owner: ast.AST, call: ast.AST) -> bool:
    """The allocation runs only under an `if` whose test compares with 0 or negates a value
    (`if x.shape[0] == 0:`, the `else` of `if size > 0:`, `if not n:`), or in the `else` of a
    test of a value's truth (`if self.rope_dim: ... else: q.new_empty(n, self.rope_dim)`): it
    may have no element there, and a read of it then reads nothing."""
    stack: list[tuple[ast.AST, bool]] = [(owner, False)]
    while stack:
        node, guarded = stack.pop()
        if isinstance(node, ast.If):
            test = guarded or _zero_test(node.test)
            parts = [(c, test) for c in (node.test, *node.body)]
            parts += [(c, test or _truth_test(node.test)) for c in node.orelse]
        else:
            parts = [(c, guarded) for c in child_nodes(node)]
        for child, under in parts:
            if child is call:
                return under
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            stack.append((child, under))
    return False


def _truth_test(test: ast.expr) -> bool:
    """A test of a value's truth (`if n:`, `if self.dim:`, `if a and b:`): false for 0."""
    if isinstance(test, ast.BoolOp):
        return any(_truth_test(v) for v in test.values)
    return isinstance(test, ast.Name | ast.Attribute)


def _zero_test(test: ast.expr) -> bool:
    for n in walk_all(test):
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return True
        if isinstance(n, ast.Compare) and any(
            isinstance(e, ast.Constant) and type(e.value) is int and e.value == 0
            for e in (n.left, *n.comparators)
        ):
            return True
    return False
