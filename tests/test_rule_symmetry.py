"""ZO001 and ZO002 see the same program: a zeros and the empty it is rewritten to get one verdict.

For every fixture and example, every zero-filling call is rewritten to its empty twin (and, the
other way, every empty to zeros); the text keeps its length (`zeros`/`empty`,
`zeros_like`/`empty_like`, `new_zeros`/`new_empty`), so each site keeps its position, and the
verdicts are compared site by site: a ZO001 `unsafe` must be a ZO002 `unsafe` after the
rewrite, a `safe` a `safe`, an `unproven` an `unproven`. The coupled groups of the lifecycle
tables must match too. ZO002 is asked for every verdict (`judge_empties`, as `scan --since`
does). One difference is by design (both rule pages say so): where the read sees unwritten
memory only on paths on which an earlier write did not run, ZO001 says `unsafe` (information:
keep the zeros) and ZO002 says `unproven`, naming that write (its `unsafe` fails CI, and
`--since` flags the `unproven` all the same); such a ZO002 finding counts as `unsafe` here.
The other: a buffer written in part and returned to callers the tree does not show is `unsafe`
for ZO001 under the assumption that the callers read it (analysis/returned_uncovered.py) and
stays `unproven` for ZO002, which claims no read it cannot see; such a ZO001 finding counts as
`unproven` here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zeroopt.analysis.options import AnalysisOptions
from zeroopt.rules import ALL_RULES
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import FileResult

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*(ROOT / "fixtures").glob("*.py"), *(ROOT / "fixtures" / "examples").glob("*.py")]
)
SOURCES = [p for p in SOURCES if p.name != "__init__.py"]
RULE_EXAMPLES = [(r.code, i, ex.source) for r in ALL_RULES for i, ex in enumerate(r.examples)]

ALL = AnalysisOptions(judge_empties=True)
_TO_EMPTY = re.compile(r"\b(zeros_like|new_zeros|zeros)\b")
_TO_ZEROS = re.compile(r"\b(empty_like|new_empty|empty)\b")


def to_empty(text: str) -> str:
    return _TO_EMPTY.sub(lambda m: m.group(1).replace("zeros", "empty"), text)


def to_zeros(text: str) -> str:
    return _TO_ZEROS.sub(lambda m: m.group(1).replace("empty", "zeros"), text)


_CONDITIONAL_READ = "only where the write at line"
_HANDED_BACK = "returned to callers the scanned tree does not show"


def verdicts(result: FileResult, rule: str) -> dict[tuple[int, int], str]:
    assert not result.errors, result.errors
    return {(f.line, f.col): _compared(f.verdict, f.message, rule) for f in result.findings
            if f.rule == rule}  # fmt: skip


def _compared(verdict: object, message: str, rule: str) -> str:
    """The verdict as compared across the rules (the two differences by design above)."""
    if rule == "ZO002" and str(verdict) == "unproven" and _CONDITIONAL_READ in message:
        return "unsafe"
    if rule == "ZO001" and str(verdict) == "unsafe" and message.startswith(_HANDED_BACK):
        return "unproven"
    return str(verdict)


def groups(result: FileResult) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
    return [lc.coupled_groups for lc in result.lifecycles]


def check_both_ways(text: str, path: str) -> int:
    """Compare verdicts site by site both ways; the number of sites compared."""
    original = analyse_source(text, path, ALL)
    zeros = verdicts(original, "ZO001")
    empties = verdicts(original, "ZO002")
    compared = 0
    if zeros:
        rewritten = analyse_source(to_empty(text), path, ALL)
        after = verdicts(rewritten, "ZO002")
        assert {k: after.get(k) for k in zeros} == zeros, "zeros -> empty changed a verdict"
        assert groups(rewritten) == groups(original)
        compared += len(zeros)
    if empties:
        rewritten = analyse_source(to_zeros(text), path, ALL)
        after = verdicts(rewritten, "ZO001")
        # empty_strided has no zeros twin: it stays ZO002 there.
        strided = {k for k, v in verdicts(rewritten, "ZO002").items()}
        assert {k: after.get(k) for k in empties if k not in strided} == {
            k: v for k, v in empties.items() if k not in strided
        }, "empty -> zeros changed a verdict"
        assert groups(rewritten) == groups(original)
        compared += len(empties)
    return compared


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fixture_verdicts_survive_the_rewrite_both_ways(path: Path) -> None:
    text = path.read_text()
    compared = check_both_ways(text, path.name)
    assert compared == len(analyse_source(text, path.name, ALL).findings)


@pytest.mark.parametrize(("code", "index", "source"), RULE_EXAMPLES)
def test_rule_example_verdicts_survive_the_rewrite(code: str, index: int, source: str) -> None:
    check_both_ways(source, f"{code}_{index}.py")


def test_the_lifecycle_unsafe_page_table_is_unsafe_as_an_empty() -> None:
    """The README's example: ZO001 finds the page table read in the capture warm-up; after the
    rewrite ZO002 finds the same read, even without judging every empty."""
    path = ROOT / "fixtures" / "examples" / "lifecycle_backend.py"
    text = path.read_text()
    before = analyse_source(text, path.name)
    unsafe = {(f.line, f.col) for f in before.findings if str(f.verdict) == "unsafe"}
    assert unsafe
    after = analyse_source(to_empty(text), path.name)
    assert {(f.line, f.col) for f in after.findings if f.rule == "ZO002"} == unsafe
    assert all(str(f.verdict) == "unsafe" for f in after.findings)
    # The same reads decide it, in the same words: a reviewer sees one reasoning.
    evidence = {(f.line, f.col): f.evidence for f in before.findings if (f.line, f.col) in unsafe}
    for f in after.findings:
        old = evidence[(f.line, f.col)]
        assert [(e.line, e.kind, to_empty(e.text)) for e in old] == [
            (e.line, e.kind, e.text) for e in f.evidence
        ]
    page_table = next(f for f in after.findings if "page_table" in f.target)
    assert any(e.kind == "read" and "capture warm-up" in e.text for e in page_table.evidence)
