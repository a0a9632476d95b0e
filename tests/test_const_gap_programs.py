"""The constant-gap generator (tests/soundness/const_gap_programs.py) against the oracle: on a
fixed run of seeds, no site is `safe` where poison changed the result, no site whose poisoning
changed nothing is `unsafe` (the programs return every value they read), and the pattern does decide sites (it is not
vacuous): some are `unsafe` by it and unsafe by execution too."""

from __future__ import annotations

import warnings

from tests.soundness.const_gap_programs import random_const_gap_program
from tests.soundness.oracle import check_program, engine_findings
from zeroopt.scan.findings import Verdict

CI_SEED = 20200000
CI_PROGRAMS = 60
CONST_GAP = "which every write that may have run leaves alone"  # const_gaps.py's evidence


def test_generator_is_seeded_and_draws_the_near_misses() -> None:
    assert random_const_gap_program(7).source == random_const_gap_program(7).source
    tags: set[str] = set()
    for seed in range(CI_SEED, CI_SEED + 200):
        tags |= random_const_gap_program(seed).tags
    for near in ("cg-full", "cg-loop", "cg-cover", "cg-branch", "cg-out", "cg-alloc-in-loop"):
        assert near in tags, near


def test_constant_gaps_agree_with_execution() -> None:
    decided = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `out=` views resized on purpose
        for seed in range(CI_SEED, CI_SEED + CI_PROGRAMS):
            report = check_program(random_const_gap_program(seed).source, engine_findings)
            for site in report.sites:
                assert not site.unsound, (seed, site.site.line, site.detail)
                message = site.finding.message if site.finding else ""
                if site.verdict == Verdict.UNSAFE:
                    assert not site.equivalent, (seed, site.site.line, message)
                    decided += site.unsafe and CONST_GAP in message
    assert decided > 0
