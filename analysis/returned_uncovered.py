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
Callers in sight show how the result is used: returned_reads.py judges those that read it, and
here every call of the tree that surely runs the function (returned_reads.py's, at most 16) is
analysed from the function's writes and must write no element itself (one that writes the
element first, `y = mk(n); y[0] = 3.0`, keeps the site `unproven`); what they hand it to is
assumed not to write that element first.
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
from zeroopt.analysis.partial_reads import carried, empty_guard
from zeroopt.analysis.resolve import Scope
from zeroopt.analysis.returned import (
    SAFE_,
    UNSAFE_,
    Judgement,
    ReturnedJudge,
    _decide,
    _own_layout,
    returned_only,
)
from zeroopt.analysis.returned_reads import sure_calls
from zeroopt.analysis.returned_slots import returned_as
from zeroopt.analysis.state import SELF


class ReturnedUncovered(Judgement):
    """An `unsafe` shown by the function's own writes: the message says so."""


def returned_uncovered(
    judge: ReturnedJudge,
    fn: ast.AST,
    scope: Scope,
    outcome: BufferOutcome,
    contiguous: bool,
    certain: bool,
    alloc: ast.Call,
    why_callers: str,
) -> ReturnedUncovered | None:
    """`unsafe` when `fn` returns the buffer (itself, a view of all of it, or one slot of a
    display) with an element no write of any path covers, to callers the tree does not show
    (`why_callers`: why, from returned.py); None otherwise (the verdict stays)."""
    if certain or not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if not returned_only(outcome):
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
    seen = _callers_write_nothing(judge, fn, scope, outcome, contiguous, alloc)
    if seen is None:
        return None
    line, how = min(returns)
    note = uncovered.nonempty_note(end.dims, element, SELF)
    text = uncovered.evidence(end.may_writes, element, end.dims, how, note)
    text = text.replace("reads ", "hands back ", 1)
    shown = (
        f"; its calls the tree shows ({', '.join(seen[:3])}{' and more' if len(seen) > 3 else ''}) "
        "write none of it before handing it on"
        if seen
        else ""
    )
    assumption = (
        f"the callers of `{fn.name}` read what it returns, and what they hand it to does not "
        f"write that element first (the tree does not show every caller: {why_callers}){shown}"
    )
    result = BufferOutcome(issues=[Issue(UNSAFE, line, "read", text)], reached=True)
    return ReturnedUncovered(
        UNSAFE_, f"returned with an element no write covers by `{fn.name}`", result, assumption
    )


def _callers_write_nothing(
    judge: ReturnedJudge,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    scope: Scope,
    outcome: BufferOutcome,
    contiguous: bool,
    alloc: ast.Call,
) -> list[str] | None:
    """The calls of the tree that surely run `fn` (returned_reads.py), each shown to write no
    element of the result itself and to hand it on or read it where the analysis cannot follow
    ("`f` (line N)"); None where one writes some (`y = mk(n); y[0] = 3.0`: that caller does not
    use the element as handed back), reads only what `fn` wrote (`safe` from its writes), or
    cannot be followed."""
    if scope.parent is None or isinstance(
        scope.parent.node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        return None  # a nested def: every call is in sight, returned.py judges them
    calls = sure_calls(judge, fn, scope.parent.is_class)
    if not calls:
        return []
    seed = carried(fn, alloc, outcome)
    end = outcome.exit_state
    assert end is not None  # returned_only
    slot, why = returned_as(end.escapes)
    if isinstance(seed, str) or why:
        return None
    seen: list[str] = []
    for call, cscope, j, _ in calls:
        owner = cscope.node
        if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef) or owner is fn:
            return None  # a call outside a function, or recursion
        at = j._analyse(owner, cscope, call, contiguous and _own_layout(outcome), False, slot, seed)
        if at.gave_up or not at.reached or at.writes or at.partial_writes or at.view_writes:
            return None
        if at.contracts or at.relayouts or _decide(at) == SAFE_:
            return None  # `safe` from the function's writes: this caller reads no such element
        if not all(_handed_on(i) for i in at.issues if i.severity != UNSAFE):
            return None  # a read of its own the analysis cannot place (`y[1:].sum()`)
        place = "" if j is judge else f"{j.unit.path}:"
        seen.append(f"`{owner.name}` ({place or 'line '}{call.lineno})")
    return seen


def _handed_on(issue: Issue) -> bool:
    """An obstacle of a caller that only hands the result on (a call given it, a store, a
    return), not a read of its own whose elements the analysis cannot place."""
    if issue.kind in ("escape", "unknown-call"):
        return True
    return issue.kind == "possible-read" and issue.text.startswith("possible read: passed to")
