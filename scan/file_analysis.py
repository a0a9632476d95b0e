"""Analyse one file: decode, parse with the stdlib `ast`, find allocations, run the rules.

The fast path matters (a large tree is mostly files without a candidate): a text prefilter skips
parsing, and only functions that hold an allocation get a CFG. Nothing raised while analysing one
file escapes: it becomes a `FileError` for that file, and the scan goes on.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import stat
import tokenize
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import AnyStr

from zeroopt.analysis.allocations import Allocation, Owner, find_allocations
from zeroopt.analysis.cfg import CFG, Builder
from zeroopt.analysis.cost import constant_nbytes, is_hot
from zeroopt.analysis.dataflow import VIEW_READ, BufferOutcome, Context, analyse_buffer
from zeroopt.analysis.dataflow.containers import local_containers, plain_key_names
from zeroopt.analysis.dataflow.first_pass import first_pass_reads, unreached_first_reads
from zeroopt.analysis.lifecycle_analysis import LifecycleOutcome, analyse_lifecycles
from zeroopt.analysis.no_data import no_data_reason, zero_size_like
from zeroopt.analysis.options import AnalysisOptions, Contract
from zeroopt.analysis.project import ProjectView, binds_dynamically
from zeroopt.analysis.resolve import Resolver
from zeroopt.analysis.returned import SAFE_, UNPROVEN_, UNSAFE_, Judgement, ReturnedJudge
from zeroopt.analysis.returned_reads import CallerRead, read_by_a_caller
from zeroopt.analysis.returned_uncovered import ReturnedUncovered, returned_uncovered
from zeroopt.analysis.scalars import int_names, volatile_bounds
from zeroopt.analysis.semantics import BUILTIN_CONTRACTS, FRAME_PATTERN, FRAME_WORDS
from zeroopt.analysis.summaries import Summaries, make_unit
from zeroopt.rules import ALL_RULES, Rule, rule_for_call
from zeroopt.rules.decision import decide, explain
from zeroopt.scan.any_order import any_order_pass
from zeroopt.scan.capture_pass import capture_input_pass
from zeroopt.scan.findings import (
    ZEROS_CALLS,
    Evidence,
    FileError,
    FileResult,
    Finding,
    Fix,
    LifecycleBuffer,
    LifecycleReport,
    Verdict,
    char_col,
)
from zeroopt.scan.fixes import textual_fixes
from zeroopt.scan.self_read_pass import self_read_pass
from zeroopt.scan.site_identity import identities

# What a file must contain to hold a candidate; everything else is skipped without parsing.
# A candidate is a call of torch.zeros/zeros_like/empty/empty_like or of a `.new_zeros`/`.new_empty`
# method. (1) It needs `torch` unless it is a method call: resolve.py gives a torch.* name only to
# what an import of torch binds (in this file, or in a scanned module this file imports from:
# such a file that never names torch is skipped, which costs findings, never soundness). (2) It names zeros or empty: `zeros`, or `empty_like`,
# `new_empty`, `empty` before the `(` of its call (across spaces, comments, line continuations
# and the `)` of `(torch.empty)(n)`), or an import that renames `empty`. Plain substring tests
# first (fast); the regex, with possessive quantifiers that cannot backtrack, only for `empty`.
_GAP = r"(?:\s|\\|\)|#[^\r\n]*+)"
_EMPTY_FORMS = rf"empty(?:_like|_strided|{_GAP}*+\(|{_GAP}++as\b)|new_empty|import[^\n]*\bempty\b"
_WORDS = ("torch", "new_zeros", "new_empty", "zeros", "empty")
_WORDS_BYTES = tuple(w.encode() for w in _WORDS)
_EMPTY_FORMS_RE = re.compile(_EMPTY_FORMS)
_EMPTY_FORMS_BYTES = re.compile(_EMPTY_FORMS.encode())
_NEWLINE = re.compile(r"\r\n|\r|\n")
# Frame introspection anywhere in the module: a function may read its caller's locals. The
# substrings first: a regex alternation over every file's text cost a tenth of a cold scan.
_FRAME_WORDS = FRAME_WORDS
_FRAMES = re.compile(FRAME_PATTERN)


def source_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode_source(data: bytes) -> str:
    """Decode as Python does: BOM, then a PEP 263 coding cookie, then UTF-8."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def may_hold_candidate(source: str | bytes) -> bool:
    """False only if `source` provably holds no allocation to analyse (see _EMPTY_FORMS)."""
    decoded = _decoded(source)
    return _may_hold_candidate(source if decoded is None else decoded)


def _decoded(source: str | bytes) -> str | None:
    """The text as the parser reads it, or None if it does not decode (parsing then reports why).
    The words are looked for in this text, not in the bytes: a coding cookie can spell `torch` in
    other bytes (`# coding: utf-7`)."""
    if isinstance(source, str):
        return source
    try:
        return decode_source(source)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return None


def _may_hold_candidate(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        return _mentions(text, _WORDS_BYTES, _EMPTY_FORMS_BYTES)
    if not text.isascii():
        # Python reads identifiers NFKC-normalised: fullwidth letters spell `torch` too.
        text = unicodedata.normalize("NFKC", text)
    return _mentions(text, _WORDS, _EMPTY_FORMS_RE)


def _mentions(text: AnyStr, words: Sequence[AnyStr], empty_forms: re.Pattern[AnyStr]) -> bool:
    """Conditions (1) and (2) of the prefilter, with the words of `_WORDS`."""
    torch, new_zeros, new_empty, zeros, empty = words
    if torch not in text and new_zeros not in text and new_empty not in text:
        return False
    return zeros in text or (empty in text and empty_forms.search(text) is not None)


def analyse_source(
    source: str | bytes,
    path: str,
    options: AnalysisOptions | None = None,
    project: ProjectView | None = None,
    real_path: str | None = None,
) -> FileResult:
    """Analyse one file. With `project` (the scanned tree, see analysis/project.py) and the
    file's `real_path`, names imported from other scanned modules resolve through them, and the
    result's `deps` says which modules that read."""
    # surrogatepass: a str may hold lone surrogates; hashing it must not raise.
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    result = FileResult(path=path, source_hash=source_hash(data))
    decoded = _decoded(source)
    if not _may_hold_candidate(source if decoded is None else decoded):
        return result
    try:
        # When decoding failed above, decode again here for the error to be reported below.
        text = decode_source(data) if decoded is None else decoded
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        result.errors.append(FileError(path, f"syntax error: {exc.msg}{where}"))
        return result
    except (UnicodeDecodeError, LookupError) as exc:
        result.errors.append(FileError(path, f"cannot decode the file: {exc}"))
        return result
    except ValueError as exc:  # null bytes
        result.errors.append(FileError(path, f"cannot parse the file: {exc}"))
        return result
    except (RecursionError, MemoryError):
        result.errors.append(FileError(path, "the file is nested too deeply to parse"))
        return result
    if project is not None and real_path is not None:
        project.start_file(project.index.names.get(real_path))
    try:
        findings, result.lifecycles = _analyse_tree(
            tree, text, path, options or AnalysisOptions(), project, real_path
        )
        result.findings = _with_fixes(findings, data, tree, text)
        # From the tree analysed (the analysis changes only copies of it), not parsed again.
        result.identities = identities(
            data, [(f.line, f.col, f.end_line, f.end_col) for f in result.findings], tree
        )
    except RecursionError:
        result.errors.append(FileError(path, "the file is nested too deeply to analyse"))
    except Exception as exc:  # an analysis bug must never take the whole scan down
        result.errors.append(FileError(path, f"internal error: {type(exc).__name__}: {exc}"))
    if project is not None and real_path is not None:
        result.deps = dict(project.deps)
    return result


def analyse_file(
    file: Path, display_path: str, options: AnalysisOptions | None = None
) -> FileResult:
    try:
        if not stat.S_ISREG(file.stat().st_mode):
            # A FIFO or device would block the read forever, or never end.
            return FileResult(
                path=display_path, errors=[FileError(display_path, "not a regular file")]
            )
        data = file.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return FileResult(
            path=display_path, errors=[FileError(display_path, f"cannot read: {reason}")]
        )
    return analyse_source(data, display_path, options)


def _analyse_tree(
    tree: ast.Module,
    text: str,
    path: str,
    options: AnalysisOptions,
    project: ProjectView | None = None,
    real_path: str | None = None,
) -> tuple[list[Finding], list[LifecycleReport]]:
    if real_path is None:
        project = None
    resolver = Resolver.build(
        tree,
        module_name=project.index.names.get(real_path) if project and real_path else None,
        is_package=bool(real_path and real_path.endswith("__init__.py")),
        project=project,
        dynamic=binds_dynamically(text),
    )
    sites = find_allocations(tree, resolver)
    if not sites:
        return [], []
    lines = _NEWLINE.split(text)
    contracts = {c.function: c for c in (*BUILTIN_CONTRACTS, *options.contracts)}
    cfgs: dict[int, CFG] = {}
    ints: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # per function, like the CFG
    containers: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # containers.py
    by_site: dict[int, Finding] = {}  # each allocation gets at most one finding
    # What the function alone decided for every allocation, reported or not: the lifecycle pass
    # re-judges the undecided ones of both rules alike (a zeros and the empty it became).
    decided: dict[int, Verdict] = {}
    outcomes: dict[int, BufferOutcome] = {}  # each site's own dataflow (self_read_pass)
    src_memo: dict[int, tuple[ast.AST, str]] = {}  # shared: every context reads this one tree
    frames_read = any(w in text for w in _FRAME_WORDS) and _FRAMES.search(text) is not None
    module = project.index.names.get(real_path) if project and real_path else None
    unit = make_unit(tree, resolver, text, path, module, frames_read)
    summaries = Summaries(
        unit, project, contracts, tuple(options.kernels), options.closed_world, options.partial_tree
    )
    returned = ReturnedJudge(summaries, real_path, options.callers_closed)
    for site in sites:
        rules = [r for r in ALL_RULES if site.name in r.calls]
        if not rules or isinstance(site.owner, ast.Lambda):
            continue  # an allocation inside a lambda is returned at once: nothing to prove
        cfg = cfgs.get(id(site.owner))
        if cfg is None:
            cfg = Builder(partial(resolver.qualified, site.scope)).build(site.owner.body)
            cfgs[id(site.owner)] = cfg
            ints[id(site.owner)] = _int_names(site, resolver)
            containers[id(site.owner)] = _containers(site, ints[id(site.owner)][0], frames_read)
        ctx = Context(
            alloc=site.call,
            resolver=resolver,
            scope=site.scope,
            contracts=contracts,
            source_lines=lines,
            escape_on_bind=_escape_on_bind(site),
            contiguous=site.contiguous,
            capture_nodes=frozenset(cfg.capture_nodes),
            int_names=ints[id(site.owner)][0] | ints[id(site.owner)][1],
            volatile_bounds=ints[id(site.owner)][1],
            local_containers=containers[id(site.owner)][0],
            plain_keys=containers[id(site.owner)][1],
            kernels=tuple(options.kernels),
            src_memo=src_memo,
            frames_read=frames_read,
            no_data=no_data_reason(site, resolver),
            zero_size=zero_size_like(site, resolver),
            certain_reads_only=any(r.certain_reads_only for r in rules),
            summaries=summaries,
        )
        outcome = analyse_buffer(cfg, ctx)
        if not outcome.gave_up and _custom_namespace(site, resolver):
            outcome.gave_up = (
                "a class body whose metaclass or base may give it a namespace of its own "
                "(`__prepare__`): each binding there runs that namespace's `__setitem__`"
            )
        outcome = unreached_first_reads(outcome, site.owner.body) or outcome
        outcome = first_pass_reads(cfg, ctx, outcome, site.owner.body) or outcome
        decided[id(site.call)] = decide(outcome)
        if not (ctx.zero_size or ctx.no_data):
            outcomes[id(site.call)] = outcome
        judged = returned.judge(
            site.owner, site.scope, outcome, site.contiguous, ctx.certain_reads_only
        )
        if (
            judged is not None
            and judged.verdict == UNPROVEN_
            and not (ctx.zero_size or ctx.no_data)
        ):
            read = read_by_a_caller(
                returned, site.owner, site.scope, outcome, site.contiguous,
                ctx.certain_reads_only, site.call,
            )  # fmt: skip
            judged = read or judged
        if judged is not None and judged.callers_unknown and not (ctx.zero_size or ctx.no_data):
            uncovered_read = returned_uncovered(
                returned, site.owner, site.scope, outcome, site.contiguous,
                ctx.certain_reads_only, site.call, judged.why,
            )  # fmt: skip
            judged = uncovered_read or judged
        for rule in rules:
            verdict = rule.report(site.name, outcome, options.judge_empties)
            if verdict is not None:
                by_site[id(site.call)] = _finding(site, rule.code, verdict, outcome, lines, path)
        if judged is not None:
            _at_callers(site, rules, judged, by_site, decided, lines, path, options)
    reports = _lifecycle_pass(
        tree, resolver, sites, by_site, decided, contracts, lines, path, options, frames_read
    )
    if options.closed_world:
        reports += any_order_pass(
            tree, resolver, sites, by_site, decided, contracts, lines, path, options,
            frames_read, summaries.world, real_path, project, _finding,
        )  # fmt: skip
    self_read_pass(sites, outcomes, by_site, decided, summaries, options, lines, path, _finding)
    capture_input_pass(
        tree, resolver, sites, outcomes, by_site, decided, options.judge_empties, lines, path,
        _finding, module,
    )  # fmt: skip
    findings = sorted(by_site.values(), key=lambda f: (f.line, f.col, f.rule))
    return findings, reports


def _at_callers(
    site: Allocation,
    rules: list[type[Rule]],
    judged: Judgement,
    by_site: dict[int, Finding],
    decided: dict[int, Verdict],
    lines: list[str],
    path: str,
    options: AnalysisOptions,
) -> None:
    """A buffer the function returns, judged at its callers (analysis/returned.py)."""
    key = id(site.call)
    old = by_site.get(key)
    if judged.outcome is None or judged.verdict not in (SAFE_, UNSAFE_):
        if old is not None:
            by_site[key] = replace(old, message=f"{old.message}; at its callers: {judged.why}")
        return
    for rule in rules:
        verdict = rule.report(site.name, judged.outcome, options.judge_empties)
        if verdict is None:
            by_site.pop(key, None)
            continue
        new = _finding(site, rule.code, verdict, judged.outcome, lines, path)
        note = (
            Evidence(site.call.lineno, "assumption", judged.assumption)
            if judged.assumption
            else None
        )
        evidence = (*new.evidence, note) if note else new.evidence
        judged_at = (
            "read unwritten by one of them" if isinstance(judged, CallerRead) else "judged at each"
        )
        prefix = f"returned to its callers, {judged_at} ({', '.join(judged.callers)})"
        if isinstance(judged, ReturnedUncovered):
            prefix = "returned to callers the scanned tree does not show"
        by_site[key] = replace(
            new,
            message=f"{prefix}: {new.message}",
            evidence=tuple(sorted(evidence, key=lambda e: e.line)),
        )
        decided[key] = verdict


def _int_names(site: Allocation, resolver: Resolver) -> tuple[frozenset[str], frozenset[str]]:
    """Names that provably hold immutable ints, and the other names slices may be bounded by
    (scalars.volatile_bounds)."""
    owner = site.owner
    if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset(), frozenset()  # module and class names: anything may rebind them
    args = owner.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    scope = site.scope
    unstable = set(scope.captured | scope.global_names | scope.nonlocal_names)
    qualify = partial(resolver.qualified, scope)
    ints = int_names(owner.body, params, unstable, qualify)
    return ints, volatile_bounds(owner.body, params, unstable, ints, qualify)


def _containers(
    site: Allocation, ints: frozenset[str], frames_read: bool
) -> tuple[frozenset[str], frozenset[str]]:
    """The function's local containers and plain dict keys (dataflow/containers.py)."""
    owner = site.owner
    if frames_read or not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset(), frozenset()
    return local_containers(owner, owner.body), plain_key_names(owner.body, ints)


def _lifecycle_pass(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    by_site: dict[int, Finding],
    decided: dict[int, Verdict],
    contracts: dict[str, Contract],
    lines: list[str],
    path: str,
    options: AnalysisOptions,
    frames_read: bool,
) -> list[LifecycleReport]:
    """Re-judge `unproven` allocations stored on `self` where a lifecycle model orders the
    methods: zeros (ZO001) and empties (ZO002) alike, so that a zeros and the empty it is
    rewritten to get the same verdict. An empty's new verdict is reported as ZO002 reports any
    (only `unsafe` ones unless every empty is judged)."""

    def wanted(site: Allocation) -> bool:
        return decided.get(id(site.call)) is Verdict.UNPROVEN and _rule_of(site) is not None

    outcomes = analyse_lifecycles(
        tree,
        resolver,
        sites,
        wanted,
        contracts,
        lines,
        tuple(options.lifecycles),
        tuple(options.kernels),
        frames_read,
    )
    grouped: dict[int, list[tuple[LifecycleOutcome, Finding]]] = {}
    for lo in outcomes:
        old = by_site.get(id(lo.site.call))
        rule = _rule_of(lo.site)
        assert rule is not None  # wanted() took only sites a rule looks at
        unsafe = lo.outcome is not None and decide(lo.outcome) is Verdict.UNSAFE
        if lo.witness is not None and not unsafe and decide(lo.witness) is Verdict.UNSAFE:
            # One schedule the engine really runs reads the buffer before any write: `unsafe`,
            # whatever the full model says (a witness is never used for anything else).
            verdict = rule.report(lo.site.name, lo.witness, options.judge_empties)
            if verdict is None:
                continue
            new = _finding(lo.site, rule.code, verdict, lo.witness, lines, path)
            assumptions = [
                Evidence(
                    lo.site.call.lineno,
                    "assumption",
                    f"witness schedule {lo.witness_schedule}: the CUDA-graph runner captures "
                    f"right after {', '.join(lo.model.graph_init)}: {lo.model.witness_at}",
                )
            ]
            if lo.witness_path:
                assumptions.append(
                    Evidence(
                        lo.site.call.lineno,
                        "assumption",
                        f"witness path: the setup takes the branches at {lo.witness_path} "
                        "(one configuration the engine may run)",
                    )
                )
            if any("is a tensor on this schedule" in i.text for i in lo.witness.issues):
                assumptions.append(
                    Evidence(
                        lo.site.call.lineno,
                        "assumption",
                        f"the engine passes a tensor index there: {lo.model.witness_tensors_at}",
                    )
                )
            if lo.unsafe_only:
                assumptions.append(
                    Evidence(
                        lo.site.call.lineno,
                        "assumption",
                        f"other code may also reach it ({lo.skipped}), which only adds paths",
                    )
                )
            new = new.explained(f"lifecycle {lo.model.name} (witness schedule)", assumptions)
        elif lo.outcome is None or (lo.unsafe_only and not unsafe):
            if old is None:
                continue  # an empty ZO002 stays silent on
            new = replace(old, message=f"{old.message} (lifecycle {lo.model.name}: {lo.skipped})")
        elif lo.unsafe_only:
            verdict = rule.report(lo.site.name, lo.outcome, options.judge_empties)
            if verdict is None:
                continue
            new = _finding(lo.site, rule.code, verdict, lo.outcome, lines, path)
            assumption = Evidence(
                lo.site.call.lineno,
                "assumption",
                f"the engine runs this class as lifecycle {lo.model.name} models it; other code "
                f"may also reach it ({lo.skipped}), which only adds paths",
            )
            new = new.explained(f"lifecycle {lo.model.name}", [assumption])
        else:
            verdict = rule.report(lo.site.name, lo.outcome, options.judge_empties)
            if verdict is None:
                if old is not None:  # not reached: a reported intra verdict is never undecided
                    del by_site[id(lo.site.call)]
                continue
            new = _finding(lo.site, rule.code, verdict, lo.outcome, lines, path)
            new = replace(new, message=f"lifecycle {lo.model.name}: {new.message}")
        by_site[id(lo.site.call)] = new
        grouped.setdefault(id(lo.cls), []).append((lo, new))
    reports = []
    for rows in grouped.values():
        cls, model = rows[0][0].cls, rows[0][0].model
        buffers = tuple(
            LifecycleBuffer(
                target=f.target,
                line=f.line,
                verdict=f.verdict,
                written=_phases(lo.outcome, ("write", "partial write")),
                read=_phases(lo.outcome, ("read", "possible read", VIEW_READ)),
                coupled=tuple(
                    dict.fromkeys(text for _, text in (lo.outcome.coupled if lo.outcome else []))
                ),
            )
            for lo, f in rows
        )
        groups = _coupled_groups([(lo.outcome, (f.target, f.line)) for lo, f in rows])
        reports.append(LifecycleReport(path, cls.name, cls.lineno, model.name, buffers, groups))
    return reports


def _rule_of(site: Allocation) -> type[Rule] | None:
    return rule_for_call(site.name)


def _coupled_groups(
    members: list[tuple[BufferOutcome | None, tuple[str, int]]],
) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Buffers linked by a kernel call that reads one's rows up to the other's values, closed
    transitively (`page_table` <- `cache_seqlens`, and a second table bounded by the same
    lengths, form one group). All rows of one class share one program, so a call node's id
    names the same call in every buffer's outcome."""
    parent = list(range(len(members)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (outcome, _) in enumerate(members):
        for j, (other, _) in enumerate(members):
            if outcome is None or other is None or i == j:
                continue
            if outcome.couplings & other.kernel_args:
                parent[find(i)] = find(j)
    groups: dict[int, list[tuple[str, int]]] = {}
    for i, (_, member) in enumerate(members):
        groups.setdefault(find(i), []).append(member)
    return tuple(tuple(sorted(g, key=lambda m: m[1])) for g in groups.values() if len(g) > 1)


def _phases(outcome: BufferOutcome | None, kinds: tuple[str, ...]) -> tuple[str, ...]:
    if outcome is None:
        return ()
    return tuple(
        sorted({f"{phase} ({kind})" for phase, kind in outcome.phase_events if kind in kinds})
    )


def _custom_namespace(site: Allocation, resolver: Resolver) -> bool:
    """The allocation is in a class body that may run in a mapping whose `__setitem__` reads
    what is bound: the class has a metaclass or class keyword (handed to `__prepare__`), an
    `enum` base (its namespace is an `_EnumDict`), or a base of this module that has one.
    Assumed: another module's class has no metaclass defining `__prepare__` (the special
    methods of classes are assumed not to read buffers)."""
    owner = site.owner
    if not isinstance(owner, ast.ClassDef):
        return False
    outer = site.scope.parent or site.scope
    root = site.scope
    while root.parent is not None:
        root = root.parent
    local = {
        n.name: n for n in ast.walk(root.node) if isinstance(n, ast.ClassDef) and n is not owner
    }
    seen: set[int] = set()
    todo = [owner]
    while todo:
        cls = todo.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        if cls.keywords:
            return True
        for base in cls.bases:
            if (resolver.qualified(outer, base) or "").startswith("enum."):
                return True
            if isinstance(base, ast.Name) and base.id in local:
                todo.append(local[base.id])
    return False


def _escape_on_bind(site: Allocation) -> frozenset[str]:
    scope = site.scope
    if isinstance(site.owner, ast.Module | ast.ClassDef):
        return frozenset(scope.bindings)  # module globals and class attributes are shared
    return frozenset(scope.captured | scope.global_names | scope.nonlocal_names)


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; the contract counts characters, 1-based."""
    return char_col(lines[line - 1] if 0 < line <= len(lines) else "", byte_col)


def _finding(
    site: Allocation,
    code: str,
    verdict: Verdict,
    outcome: BufferOutcome,
    lines: list[str],
    path: str,
) -> Finding:
    call = site.call
    line, end_line = call.lineno, call.end_lineno or call.lineno
    col = _char_col(lines, line, call.col_offset)
    end_col = _char_col(lines, end_line, call.end_col_offset or 0)
    call_text = _segment(lines, line, col, end_line, end_col)
    target = _target_text(site, lines) or " ".join(call_text.split())[:80]
    alloc_text = lines[line - 1].strip()[:120] if line <= len(lines) else ""
    message, evidence = explain(verdict, outcome, line, alloc_text, target)
    cited = dict.fromkeys((line, *(e.line for e in evidence)))
    source_lines = tuple((n, lines[n - 1]) for n in cited if 0 < n <= len(lines))
    return Finding(
        path=path, line=line, col=col, end_line=end_line, end_col=end_col, call=site.name,
        target=target, verdict=verdict, rule=code, message=message, evidence=evidence,
        function=_owner_name(site.owner), hot=is_hot(_owner_name(site.owner)),
        nbytes=constant_nbytes(site.call, site.name), source_lines=source_lines,
    )  # fmt: skip


def _segment(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    if line == end_line:
        return lines[line - 1][col - 1 : end_col - 1]
    parts = [
        lines[line - 1][col - 1 :],
        *lines[line : end_line - 1],
        lines[end_line - 1][: end_col - 1],
    ]
    return "\n".join(parts)


def _target_text(site: Allocation, lines: list[str]) -> str:
    """The buffer as written: `out`, `self.buf`, or `self.meta['page_table']` for a dict entry."""
    parts = []
    for node in (site.target, site.key):
        if node is None or node.end_lineno is None or node.end_col_offset is None:
            parts.append("")
            continue
        col = _char_col(lines, node.lineno, node.col_offset)
        end_col = _char_col(lines, node.end_lineno, node.end_col_offset)
        parts.append(_segment(lines, node.lineno, col, node.end_lineno, end_col))
    target, key = parts
    return f"{target}[{key}]" if target and key else target


# Beyond this many lines a file gets no fix: libcst's rewrite of it takes minutes (a 200,000-line
# file: several), so its `safe` findings are reported without one and `apply` leaves the file
# alone, as it does every finding without a fix.
MAX_FIX_LINES = 30_000


def _with_fixes(findings: list[Finding], data: bytes, tree: ast.Module, text: str) -> list[Finding]:
    """Give each fixable `safe` finding the fix `zeroopt apply` would write: computed from the
    tree where scan/fixes.py models the codemod's rewrite exactly (an attribute renamed in
    place), otherwise by the codemod itself over every such finding of the file (as apply
    rewrites them), so what a report offers is exactly what apply writes; none where the codemod
    would skip the site."""
    fixable = {r.code for r in ALL_RULES if r.fixable}
    wanted = {
        id(f): f
        for f in findings
        if f.verdict is Verdict.SAFE and f.rule in fixable and f.call in ZEROS_CALLS
    }
    if not wanted or data.count(b"\n") > MAX_FIX_LINES:
        return findings
    from zeroopt.patcher.codemod import RewriteSite, Success, rewrite_source

    sites = list({(f.line, f.col, f.call, f.end_line, f.end_col): None for f in wanted.values()})
    textual = textual_fixes(tree, text, _NEWLINE.split(text), sites)
    fixes: dict[tuple[object, ...], Fix] = {}
    if textual is not None:
        fixes = {site: fix for site, fix in textual.items()}
    else:
        _, results = rewrite_source(data, [RewriteSite(*s) for s in sites])
        fixes = {
            (r.site.line, r.site.col, r.site.call, r.site.end_line, r.site.end_col): Fix(
                r.replacement, r.edits
            )
            for r in results
            if isinstance(r, Success)
        }
    return [
        replace(f, fix=fixes.get((f.line, f.col, f.call, f.end_line, f.end_col)))
        if id(f) in wanted
        else f
        for f in findings
    ]


def _owner_name(owner: Owner) -> str:
    return getattr(owner, "name", "<module>")


__all__ = [
    "Contract",
    "analyse_file",
    "analyse_source",
    "decode_source",
    "may_hold_candidate",
    "source_hash",
]
