"""Differential soundness: no allocation the analysis calls `safe` may change a program's result
when its memory is poisoned instead of zeroed.

The oracle tests come first: an oracle that never flags anything would make the main assertion
vacuous, so it must demonstrably tell a needed zeros from an unneeded one.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.soundness` without conftest

from tests.soundness.gen_model import INPUTS
from tests.soundness.generator import programs as program_strategy
from tests.soundness.generator import random_program
from tests.soundness.oracle import (
    PATTERNS,
    check_program,
    difference,
    engine_findings,
    find_sites,
    minimise,
    poison_value,
    poisoned_variant,
)
from zeroopt.scan.findings import Verdict

CI_PROGRAMS = 300
CI_SEED = 20261121


def _fn(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"import torch\n\n\ndef f(inp, n, k, flag):\n{lines}\n"


def _only_site(body: str):  # type: ignore[no-untyped-def]
    report = check_program(_fn(body))
    assert report.valid, report.reason
    assert len(report.sites) == 1
    return report.sites[0]


# ---- the oracle itself --------------------------------------------------------------------------


def test_oracle_flags_a_read_of_the_zeros() -> None:
    site = _only_site("x = torch.zeros(3)\nreturn x + 1")
    assert site.reached and site.unsafe
    assert "values differ" in site.detail or "NaN" in site.detail


def test_oracle_accepts_a_full_write_before_the_read() -> None:
    site = _only_site("x = torch.zeros(3)\nx.fill_(2)\nreturn x")
    assert site.reached and site.equivalent and site.detail == ""


def test_oracle_writing_a_gather_does_not_write_the_buffer() -> None:
    site = _only_site("x = torch.zeros(4)\ng = x[torch.tensor([0, 1])]\ng.fill_(1)\nreturn x")
    assert site.unsafe


def test_oracle_writing_through_a_view_writes_the_buffer() -> None:
    site = _only_site("x = torch.zeros(4, 8)\nx.t().copy_(inp.t())\nreturn x")
    assert site.equivalent


def test_oracle_poisoned_index_that_raises_is_unsafe() -> None:
    site = _only_site("x = torch.zeros(3, dtype=torch.int64)\nreturn inp.reshape(-1)[x]")
    assert site.unsafe and "raised" in site.detail


def test_oracle_int_max_is_tried_because_minus_one_can_hide_a_read() -> None:
    # clamp(min=0) maps -1 back to 0; only another pattern shows the read.
    site = _only_site("x = torch.zeros(3, dtype=torch.int64)\nx.clamp_(min=0)\nreturn x")
    assert site.unsafe


def test_oracle_partial_write_is_caught_only_on_inputs_that_leave_a_hole() -> None:
    site = _only_site("x = torch.zeros(8)\nx[:k] = 1\nreturn x")
    assert site.unsafe  # k=8 writes everything, but k=0 does not


def test_oracle_metadata_only_use_is_equivalent() -> None:
    site = _only_site("x = torch.zeros(4, 8)\nm = x.shape[0] + x.numel() + len(x)\nreturn inp * m")
    assert site.equivalent


def test_oracle_reports_a_site_that_never_runs_as_not_reached() -> None:
    site = _only_site("for i in range(n * 0):\n    x = torch.zeros(3)\n    return x\nreturn inp")
    assert not site.reached and not site.unsafe


def test_oracle_rejects_a_program_whose_zeros_version_raises() -> None:
    report = check_program(_fn("x = torch.zeros(3)\nreturn x[k + 10]"))
    assert not report.valid and "raised" in report.reason


def test_find_sites_positions_follow_the_scan_contract() -> None:
    src = (
        "import torch\nimport torch as th\nimport numpy as np\nfrom torch import zeros as z\n"
        "s = 'é'; a = th.zeros(2); b = np.zeros(3)\n"
        "c = z(4); d = a.new_zeros(5); e = torch.zeros_like(torch.zeros(1))\n"
    )
    sites = [(s.line, s.col, s.call) for s in find_sites(src)]
    line5, line6 = src.splitlines()[4], src.splitlines()[5]
    assert sites == [
        (5, line5.index("th.zeros") + 1, "torch.zeros"),
        (6, line6.index("z(4)") + 1, "torch.zeros"),
        (6, line6.index("a.new_zeros") + 1, "Tensor.new_zeros"),
        (6, line6.index("torch.zeros_like") + 1, "torch.zeros_like"),
        (6, line6.index("torch.zeros(1)") + 1, "torch.zeros"),
    ]


def test_poisoned_variant_wraps_exactly_one_call() -> None:
    src = "import torch\nx = torch.zeros(2); y = torch.zeros(2, dtype=torch.int32)\n"
    second = find_sites(src)[1]
    out = poisoned_variant(src, second, "large")
    assert out == (
        "import torch\nx = torch.zeros(2); "
        "y = _zo_poison(torch.zeros(2, dtype=torch.int32), 'large')\n"
    )


def test_poison_values_per_dtype() -> None:
    assert math.isnan(float(poison_value(torch.float32, "nan|max")))
    assert poison_value(torch.int32, "nan|max") == 2**31 - 1
    assert poison_value(torch.int8, "large") == 127  # 2**30 does not fit
    assert poison_value(torch.uint8, "minus-one") == 255
    assert poison_value(torch.bool, "one") is True
    assert len(PATTERNS) == 4


def test_difference_is_bitwise_and_nan_aware() -> None:
    nan = float("nan")
    assert difference(torch.tensor([nan, 1.0]), torch.tensor([nan, 1.0])) is None
    assert difference(torch.tensor([nan, 1.0]), torch.tensor([0.0, 1.0])) is not None
    assert difference(torch.tensor([0.0]), torch.tensor([-0.0])) is not None
    assert difference(torch.tensor([1]), torch.tensor([1.0])) is not None
    assert difference((torch.ones(2), {"a": [1.5]}), (torch.ones(2), {"a": [1.5]})) is None
    assert difference((torch.ones(2), {"a": [1.5]}), (torch.ones(2), {"a": [2.5]})) is not None


def test_minimise_keeps_the_property_and_drops_the_rest() -> None:
    src = _fn("a = inp * 2\nx = torch.zeros(3)\nb = a + 1\nreturn x + 1")

    def unsafe(text: str) -> bool:
        r = check_program(text)
        return r.valid and any(s.unsafe for s in r.sites)

    small = minimise(src, unsafe)
    assert unsafe(small)
    assert "a = inp * 2" not in small and "b = a + 1" not in small


# ---- the generator ------------------------------------------------------------------------------


REQUIRED_TAGS = {
    "zeros", "zeros_like", "new_zeros", "full-write", "partial-write", "view", "gather",
    "read", "read-modify-write", "metadata", "escape", "closure", "early-return", "if",
    "if-else", "for", "while", "while-true", "for-break", "try", "try-finally", "with",
    "match", "nested-def", "tricky", "loop-alloc", "lifecycle", "loop-write", "loop-near-miss",
    "holder", "gather-list",
}  # fmt: skip


def test_generator_is_seeded_and_covers_every_construct() -> None:
    assert random_program(7).source == random_program(7).source
    assert random_program(7).source != random_program(8).source
    tags: Counter[str] = Counter()
    for seed in range(CI_SEED, CI_SEED + CI_PROGRAMS):
        program = random_program(seed)
        compile(program.source, "gen.py", "exec")
        tags.update(program.tags)
    assert set(tags) >= REQUIRED_TAGS, REQUIRED_TAGS - set(tags)


@pytest.mark.slow
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program_strategy())
def test_hypothesis_programs_are_sound(program) -> None:  # type: ignore[no-untyped-def]
    report = check_program(program.source, engine_findings, inputs=INPUTS[:3])
    unsound = [s for s in report.sites if s.unsound]
    assert not unsound, f"safe but unsafe by execution: {unsound[0].detail}\n{program.source}"


# ---- the differential run -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def reports():  # type: ignore[no-untyped-def]
    return [
        check_program(random_program(s).source, engine_findings)
        for s in range(CI_SEED, CI_SEED + CI_PROGRAMS)
    ]


@pytest.mark.slow
def test_the_sample_is_meaningful(reports) -> None:  # type: ignore[no-untyped-def]
    valid = [r for r in reports if r.valid]
    sites = [s for r in valid for s in r.sites]
    assert len(valid) >= 0.9 * len(reports), Counter(r.reason[:40] for r in reports if not r.valid)
    unsafe = sum(s.unsafe for s in sites)
    equivalent = sum(s.equivalent for s in sites)
    # the oracle must see both kinds in bulk, or `unsound == 0` proves nothing
    assert unsafe >= 0.1 * len(sites) and equivalent >= 0.3 * len(sites), (
        unsafe,
        equivalent,
        len(sites),
    )


@pytest.mark.slow
def test_no_safe_verdict_is_unsafe_by_execution(reports) -> None:  # type: ignore[no-untyped-def]
    bad = [(r, s) for r in reports if r.valid for s in r.sites if s.unsound]
    if bad:
        r, s = bad[0]
        why = s.detail or f"its own fix text, poisoned: {s.fix_detail}"
        pytest.fail(
            f"{len(bad)} unsound site(s); first at line {s.site.line} col {s.site.col}: {why}\n{r.source}"
        )


@pytest.mark.slow
def test_the_analysis_never_raises_and_positions_agree(reports) -> None:  # type: ignore[no-untyped-def]
    errors = [r.analysis_error for r in reports if r.analysis_error]
    assert not errors, errors[:3]
    stray = [f for r in reports for f in r.stray_findings]
    assert not stray, f"zeros findings at no allocation site: {stray[:3]}"


@pytest.mark.slow
def test_every_zeros_allocation_gets_a_verdict(reports) -> None:  # type: ignore[no-untyped-def]
    missing = [(r, s) for r in reports if r.valid for s in r.sites if s.finding is None]
    if missing:
        r, s = missing[0]
        pytest.fail(
            f"{len(missing)} site(s) without a ZO001 finding; first line {s.site.line} col {s.site.col}\n{r.source}"
        )
    verdicts = Counter(s.verdict for r in reports if r.valid for s in r.sites)
    assert verdicts[Verdict.SAFE] > 0, verdicts
