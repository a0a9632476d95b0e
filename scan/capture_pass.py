"""Static inputs of CUDA-graph runners read by the capture warm-up (analysis/capture_inputs.py):
a pass over the sites still `unproven`, zeros and empties alike, that only ever makes `unsafe`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.capture_factories import FactoryRead, factory_reads
from zeroopt.analysis.capture_inputs import CaptureRead, capture_reads
from zeroopt.analysis.capture_runners import CaptureRunnerModel
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome
from zeroopt.analysis.dataflow.outcome import Issue
from zeroopt.analysis.resolve import Resolver
from zeroopt.rules import rule_for_call
from zeroopt.scan.findings import Evidence, Finding, Verdict

MakeFinding = Callable[[Allocation, str, Verdict, BufferOutcome, list[str], str], Finding]


def capture_input_pass(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    outcomes: dict[int, BufferOutcome],
    by_site: dict[int, Finding],
    decided: dict[int, Verdict],
    judge_empties: bool,
    lines: list[str],
    path: str,
    make: MakeFinding,
    module: str | None = None,
) -> None:
    """Make `unsafe` each `unproven` site a runner's capture warm-up reads before any write,
    where the allocating method's own dataflow saw no write of it."""
    reads = capture_reads(tree, resolver, sites)
    made = factory_reads(tree, resolver, module, path, sites)
    for site in sites:
        key = id(site.call)
        read = reads.get(key) or made.get(key)
        outcome = outcomes.get(key)
        rule = rule_for_call(site.name)
        if read is None or outcome is None or rule is None:
            continue
        if decided.get(key) is not Verdict.UNPROVEN:
            continue
        old = by_site.get(key)
        if old is not None and old.verdict is not Verdict.UNPROVEN:
            continue
        if outcome.gave_up or not outcome.reached or _writes(outcome):
            continue
        if isinstance(read, FactoryRead):
            issue = Issue(UNSAFE, read.stored, "read", _factory_text(read))
            rows = _factory_evidence(read, lines)
        else:
            issue = Issue(UNSAFE, read.batch, "read", _read_text(read))
            rows = _evidence(read, lines)
        found = BufferOutcome(issues=[issue])
        found.reached = True
        verdict = rule.report(site.name, found, judge_empties)
        if verdict is None:
            continue
        new = make(site, rule.code, verdict, found, lines, path)
        notes = [Evidence(line, kind, text) for line, kind, text in rows]
        by_site[key] = new.explained(f"capture model {read.model.name}", notes)
        decided[key] = Verdict.UNSAFE


def _writes(outcome: BufferOutcome) -> bool:
    return bool(
        outcome.writes or outcome.partial_writes or outcome.view_writes or outcome.contracts
    )


def _read_text(read: CaptureRead) -> str:
    if read.spec is not None:
        return (
            f"the capture warm-up of `{read.cls}` runs the draft forward on "
            f"`self.{read.model.buffers_attr}.{read.field}` (field `{read.spec.field}` of the "
            f"batch's `{read.model.spec_key}`) before anything writes it"
        )
    return (
        f"the capture warm-up of `{read.cls}` runs the model's forward on "
        f"`self.{read.model.buffers_attr}.{read.field}` (ForwardBatch field `{read.key}`) "
        "before anything writes it"
    )


def _written(model: CaptureRunnerModel) -> str:
    by_where: dict[str, list[str]] = {}
    for field, where in model.written_before:
        by_where.setdefault(where, []).append(f"`{field}`")
    return "; ".join(f"{', '.join(fs)} ({where})" for where, fs in by_where.items())


def _line(lines: list[str], n: int) -> str:
    return lines[n - 1].strip()[:120] if 0 < n <= len(lines) else ""


def _evidence(read: CaptureRead, lines: list[str]) -> list[tuple[int, str, str]]:
    model = read.model
    alloc = read.alloc.lineno
    rows = [
        (read.stored, "store", f"stored as field `{read.field}` of the buffers object: "
         f"{_line(lines, read.stored)}"),
        (read.capture, "capture", f"`__init__` captures at once: {_line(lines, read.capture)} "
         f"({model.capture_at})"),
        (alloc, "assumption", _assumed(read)),
        (alloc, "assumption",
         "the capture runs in `__init__` after the allocation and before any replay; before "
         f"its first forward the inherited path writes only {_written(model)}; code it runs "
         "there other than that, if not handed the buffer or a holder of it, does not write it"),
    ]  # fmt: skip
    holder = "ForwardBatch" if read.spec is None else "speculative input"
    rows.append(
        (read.view, "read", f"a view of the field for the {holder}: {_line(lines, read.view)}")
    )
    rows.append((alloc, "assumption", f"when {model.built_when}"))
    spec = read.spec
    if spec is not None:
        rows.append((read.batch, "read", f"put in the speculative input `{spec.field}` "
                     f"({spec.cls_at}): {_line(lines, read.batch)}"))  # fmt: skip
        rows.append((alloc, "assumption", f"when {spec.when}"))
    handoffs = spec.handoffs if spec is not None else model.handoffs
    rows.append((read.batch, "assumption", f"ASSUMPTION: {handoffs}"))
    if read.handed:
        rows.append((read.handed, "read", f"handed to the forward: {_line(lines, read.handed)}"))
    if read.shared:
        rows.append((read.shared, "assumption",
                     f"on the path where this buffer is the first of its name, size, dtype and "
                     f"device in the process-wide pool, `{model.sharing}` keeps it "
                     f"({model.sharing_at})"))  # fmt: skip
    for cond in read.conditions:
        rows.append((alloc, "assumption", f"when {cond} (one configuration the engine may run)"))
    return rows


def _assumed(read: CaptureRead) -> str:
    model = read.model
    warmup = f"in the warm-up runs the capture makes before recording ({model.warmup_at})"
    if read.spec is not None:
        return f"ASSUMPTION: {read.spec.reads}, {warmup}"
    return (
        f"ASSUMPTION: the model's forward reads ForwardBatch field `{read.key}` "
        f"({model.assumed_reads()[read.key]}) {warmup}"
    )


def _factory_text(read: FactoryRead) -> str:
    model = read.model
    return (
        f"returned as field `{read.field}` of `{model.cls}`, which the engine's graph runner "
        "captures on at once: its warm-up forward reads it before anything writes it"
    )


def _factory_evidence(read: FactoryRead, lines: list[str]) -> list[tuple[int, str, str]]:
    model = read.model
    alloc = read.alloc.lineno
    rows = [
        (alloc, "assumption", f"the runner's capture reads the field: {dict(model.fields)[read.field]}"),
        (alloc, "assumption", f"ASSUMPTION: {model.assumption}"),
        (alloc, "assumption", f"when {model.built_when}"),
    ]  # fmt: skip
    for cond in read.conditions:
        rows.append((alloc, "assumption", f"when {cond} (one configuration the engine may run)"))
    return rows
