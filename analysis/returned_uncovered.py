"""A buffer a function writes in part and returns to callers the tree does not show: `unsafe`
when an element no write on any path covers is handed back.

`cu_seqlens = torch.zeros(n + 1); cu_seqlens[1:] = lens.cumsum(0); return cu_seqlens` gives its
callers element 0 as the allocation left it: with `torch.empty` the function's result changes.
returned.py judges a returned buffer at its callers, which needs them all in sight (a private
function, or `callers-closed`); returned_reads.py needs one caller of the tree that reads it.
Neither applies to a public function whose callers live outside the tree, the usual home of
such producers (`build_varlen_mask_meta`, `compute_cu_seqlens`). What decides here is the
function's own dataflow at its normal exit (joined over every path, so its may-writes hold
every write of any path that returns the buffer): an element that no write covers
(dataflow/uncovered.py, the same test as a definite read of the whole buffer) is in the result
on every path that returns it.

Assumed, and named in the evidence: the callers read what the function returns (a result is
returned to be used; a caller that writes the element before reading it would make it `safe`).
So only where the tree does not name the function beyond its `def`: callers in sight show how
the result is used (returned_reads.py judges those that read it; one that writes the element
first, `y = mk(n); y[0] = 3.0`, keeps the site `unproven`).
For the rule of `torch.zeros` only: the guard (`certain_reads_only`) claims no read it cannot
see. Not claimed where nothing was written (an allocator's callers may fill the buffer; returned.py
and returned_reads.py judge those), where the allocation runs under a test that it may be empty
(partial_reads.py `empty_guard`), or where the function binds a name of the shape to a negative
literal (`zeros(e + 1)` after `e = -1`).
"""

from __future__ import annotations

import ast

from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Issue, uncovered
from zeroopt.analysis.dataflow.const_gaps import negative_size_name
from zeroopt.analysis.dataflow.outcome import RETURNED, RETURNED_VIEW, returned_slot
from zeroopt.analysis.partial_reads import empty_guard
from zeroopt.analysis.returned import UNSAFE_, Judgement, ReturnedJudge, returned_only
from zeroopt.analysis.state import SELF
from zeroopt.analysis.tree_naming import naming_files, word_pattern


class ReturnedUncovered(Judgement):
    """An `unsafe` shown by the function's own writes: the message says so."""


def returned_uncovered(
    judge: ReturnedJudge,
    fn: ast.AST,
    outcome: BufferOutcome,
    certain: bool,
    alloc: ast.Call,
    why_callers: str,
) -> ReturnedUncovered | None:
    """`unsafe` when `fn` returns the buffer (itself, a view of all of it, or one slot of a
    display) with an element no write of any path covers, to callers the tree does not show
    (`why_callers`: why, from returned.py); None otherwise (the verdict stays)."""
    if certain or not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if not returned_only(outcome) or _named_in_tree(judge, fn):
        return None
    end = outcome.exit_state
    assert end is not None  # returned_only
    if not end.may_writes or empty_guard(fn, alloc) or negative_size_name(alloc, fn):
        return None
    returns = [
        (line, how)
        for line, how in end.escapes
        if how in (RETURNED, RETURNED_VIEW) or returned_slot(how) is not None
    ]
    element = uncovered.uncovered_element(end.may_writes, SELF, end.dims)
    if element is None or not returns:
        return None
    line, how = min(returns)
    note = uncovered.nonempty_note(end.dims, element, SELF)
    text = uncovered.evidence(end.may_writes, element, end.dims, how, note)
    text = text.replace("reads ", "hands back ", 1)
    assumption = (
        f"the callers of `{fn.name}` read what it returns; a caller that writes that element "
        f"before reading it would make it safe (the tree does not show them all: {why_callers})"
    )
    result = BufferOutcome(issues=[Issue(UNSAFE, line, "read", text)], reached=True)
    return ReturnedUncovered(
        UNSAFE_, f"returned with an element no write covers by `{fn.name}`", result, assumption
    )


def _named_in_tree(judge: ReturnedJudge, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The tree names the function beyond its `def` (in its module, another file, a string or
    a comment): its callers there show how its result is used (a caller that writes the element
    first, `y = mk(n); y[0] = 3.0`, is no reader), and returned_reads.py judges those that read."""
    text = "\n".join(judge.unit.lines).encode()
    if len(word_pattern(fn.name.encode()).findall(text)) > 1:
        return True
    files, _ = naming_files(judge.summaries.world, judge.unit.path, judge.real_path, fn.name)
    return bool(files)
