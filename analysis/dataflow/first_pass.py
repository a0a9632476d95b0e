"""The first pass through a `for` loop: a read that no write can have preceded yet.

`for c in range(n): packed[:, c] = packed[:, c] | bits(c)` reads `packed[:, c]` before writing
it, on every pass; the fixpoint joins the state after one pass into the loop head, so from the
second pass on a write has run and the read is only "after partial or possible writes". The
first pass is a path of its own: the loop's body runs once, on the state the loop was entered
with. `first_pass_reads` re-runs the same dataflow on a copy of the CFG where no `for` loop
starts a second pass (the edge from `for-next` back to the target binding is gone: after one
pass the iterator is exhausted, as it is for an iterable of one item). Every path of that copy
is a path of the function, so a read it shows before any write (`unsafe` there) is one execution
that reads memory nobody wrote, assuming the loop runs at least once (said in the evidence).

Only for an `unsafe`: a `safe` is never taken from the copy (it sees fewer paths), and the
copy's other findings are dropped. Asked only for a site left `unproven` with a read inside a
`for` loop, and never for the ZO002 guard (`certain_reads_only`: the loop may run no pass).
`while` loops keep their back edge (their test decides whether a pass runs at all).
first_pass_reach.py says which reads every first pass surely makes. Element 0 read through the
loop variable (`x[i]` with `i` from `range(n)`, after writes that cover the other elements) is
first_iteration.py's, an element-level claim made in the main pass.
"""

from __future__ import annotations

import ast
import copy

from zeroopt.analysis.cfg import CFG, Kind
from zeroopt.analysis.dataflow.first_pass_reach import runs_on_first_pass
from zeroopt.analysis.dataflow.outcome import UNPROVEN, UNSAFE, BufferOutcome, Context, Issue
from zeroopt.analysis.resolve import walk

_READS = ("read", "possible-read")


def _for_loops(body: list[ast.stmt]) -> list[ast.For | ast.AsyncFor]:
    return [n for n in walk(body) if isinstance(n, ast.For | ast.AsyncFor)]


def _enclosing(loops: list[ast.For | ast.AsyncFor], line: int) -> ast.For | ast.AsyncFor | None:
    """The innermost `for` loop whose body holds `line`."""
    best = None
    for loop in loops:
        first = loop.body[0].lineno
        last = max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in loop.body)
        if first <= line <= last and (best is None or best.lineno <= loop.lineno):
            best = loop
    return best


def _single_pass(cfg: CFG) -> CFG:
    """A copy of `cfg` in which no `for` loop starts another pass after its first."""
    out = copy.copy(cfg)
    out.nodes = []
    for node in cfg.nodes:
        twin = copy.copy(node)
        twin.succ = [
            s
            for s in node.succ
            if not (node.label == "for-next" and cfg.nodes[s].kind is Kind.BIND)
        ]
        twin.exc_succ = list(node.exc_succ)
        twin.loop = None  # no claim about what all passes of a loop cover
        out.nodes.append(twin)
    out._capture = cfg._capture
    out._index = None
    out._orders = None
    return out


def first_pass_reads(
    cfg: CFG, ctx: Context, outcome: BufferOutcome, body: list[ast.stmt]
) -> BufferOutcome | None:
    """`outcome` with the copy's reads before any write added (`unsafe`), or None when the
    first pass of every loop shows none (or the question does not arise)."""
    from zeroopt.analysis.dataflow.fixpoint import analyse_buffer

    if ctx.certain_reads_only or outcome.gave_up or not outcome.reached:
        return None
    if any(i.severity == UNSAFE for i in outcome.issues):
        return None
    loops = _for_loops(body)
    if not loops or not any(
        i.severity == UNPROVEN and i.kind in _READS and _enclosing(loops, i.line) is not None
        for i in outcome.issues
    ):
        return None
    once = analyse_buffer(_single_pass(cfg), ctx)
    # Only reads with nothing written before them on any path of the copy, inside a loop's
    # body: element-level claims (uncovered.py, gaps.py) may rest on a loop having run once,
    # which constrains sizes the copy does not know (`range(n)` run once: n == 1). And only
    # reads every first pass makes, of as many elements as later passes (first_pass_reach.py):
    # the copy keeps branches the first pass never takes (`if i > 0: out[i] = out[i - 1] + x`).
    found = [
        i
        for i in once.issues
        if i.severity == UNSAFE
        and i.kind == "read"
        and i.text.startswith("read before any write")
        and _enclosing(loops, i.line) is not None
        and runs_on_first_pass(body, i.line)
    ]
    if once.gave_up or not found:
        return None
    issues = []
    for i in found:
        loop = _enclosing(loops, i.line)
        assert loop is not None
        where = f"on the first pass of the loop at line {loop.lineno}, assuming it runs at least once"
        # The copy's "nothing written on any path" holds for its paths: say which.
        text = i.text.replace("nothing written on any path", "nothing written before it")
        issues.append(Issue(UNSAFE, i.line, i.kind, f"{text} ({where})"))
    result = copy.copy(outcome)
    result.issues = [*issues, *outcome.issues]
    result.assumed = [*outcome.assumed, *once.assumed]
    result.conditioned = [*outcome.conditioned, *once.conditioned]
    return result


def _loops_around(body: list[ast.stmt], line: int) -> list[ast.For | ast.AsyncFor | ast.While]:
    out: list[ast.For | ast.AsyncFor | ast.While] = []
    for n in walk(body):
        if isinstance(n, ast.For | ast.AsyncFor | ast.While) and n.body:
            last = max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in n.body)
            if n.body[0].lineno <= line <= last:
                out.append(n)
    return out


def unreached_first_reads(outcome: BufferOutcome, body: list[ast.stmt]) -> BufferOutcome | None:
    """`outcome` with each "read before any write" inside a loop whose body also writes the
    buffer made `unproven` where the syntax cannot show that the pass with nothing written yet
    makes the read and reads something (first_pass_reach.py), or None when none is.

    The dataflow joins the state before a loop with the state after a pass: a read in the body
    with nothing written on the way in is "before any write" although only the first pass (or a
    pass whose writes were skipped) comes with nothing written. `for i in range(n): out[i] =
    x[i] + out[:i].sum()` reads `out[:0]`, nothing, on its first pass and only written rows
    after; `if i > 0: ... out[:i]` is not read on the first pass at all. A `while` loop's passes
    are not told apart: such a read in one is left `unproven` too."""
    lines = [w for w, _ in (*outcome.writes, *outcome.partial_writes, *outcome.view_writes)]
    demoted: list[Issue] = []
    changed = False
    for i in outcome.issues:
        if i.severity == UNSAFE and i.kind == "read" and i.text.startswith("read before any write"):
            loops = [
                loop
                for loop in _loops_around(body, i.line)
                if any(loop.body[0].lineno <= w <= (loop.end_lineno or loop.lineno) for w in lines)
            ]
            if loops and (
                any(isinstance(loop, ast.While) for loop in loops)
                or not runs_on_first_pass(body, i.line)
            ):
                text = (
                    f"{i.text} (only where nothing the loop at line {loops[-1].lineno} writes ran "
                    "before: its first pass, which the syntax does not show makes this read)"
                )
                demoted.append(Issue(UNPROVEN, i.line, i.kind, text))
                changed = True
                continue
        demoted.append(i)
    if not changed:
        return None
    result = copy.copy(outcome)
    result.issues = demoted
    return result
