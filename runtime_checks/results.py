"""Trial and site verdicts, and how a set of trials becomes one verdict (the worst wins)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class RuntimeVerdict(StrEnum):
    EQUIVALENT = "equivalent"  # outputs matched the zeros baseline
    DIVERGED = "diverged"  # outputs differed
    CRASHED = "crashed"  # exception, illegal memory access, device assert, exit or timeout
    NOT_REACHED = "not-reached"  # the allocation never ran: nothing was tested


# Worst first. not-reached ranks last among trials: a trial that did not reach its site proves
# nothing, but cannot hide a crash or divergence seen in another trial.
_SEVERITY = {
    RuntimeVerdict.CRASHED: 3,
    RuntimeVerdict.DIVERGED: 2,
    RuntimeVerdict.NOT_REACHED: 1,
    RuntimeVerdict.EQUIVALENT: 0,
}


def worst(verdicts: Iterable[RuntimeVerdict]) -> RuntimeVerdict:
    """Worst over trials; not-reached when there were none (nothing was shown)."""
    items = list(verdicts)
    if not items:
        return RuntimeVerdict.NOT_REACHED
    top = max(items, key=_SEVERITY.__getitem__)
    if top is RuntimeVerdict.EQUIVALENT and RuntimeVerdict.NOT_REACHED in items:
        return RuntimeVerdict.NOT_REACHED  # "equivalent" needs every trial to have run the site
    return top


@dataclass
class TrialResult:
    pattern: str
    verdict: RuntimeVerdict
    detail: str
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "verdict": str(self.verdict), "detail": self.detail}


@dataclass
class SiteResult:
    path: str
    line: int
    col: int | None
    # What was verified (scan/site_identity.py), so `apply --verified` can refuse a stale entry.
    source: str | None = None
    fingerprint: str | None = None
    trials: list[TrialResult] = field(default_factory=list)
    reached: bool = True
    dtype: str | None = None
    shape: list[int] | None = None
    hits: int = 0
    note: str = ""  # why a site was not reached, when known (text output only)

    @property
    def verdict(self) -> RuntimeVerdict:
        if not self.reached:
            return RuntimeVerdict.NOT_REACHED
        return worst(t.verdict for t in self.trials)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "source": self.source,
            "fingerprint": self.fingerprint,
            "verdict": str(self.verdict),
            "trials": [t.to_json() for t in self.trials],
        }


@dataclass
class TogetherResult:
    trials: list[TrialResult] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)  # keys of the sites poisoned together

    @property
    def verdict(self) -> RuntimeVerdict:
        return worst(t.verdict for t in self.trials)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": str(self.verdict), "trials": [t.to_json() for t in self.trials]}


@dataclass
class VerifyReport:
    scenario: str
    device: str
    baseline_runs: int
    deterministic: bool
    sites: list[SiteResult]
    together: TogetherResult | None
    trials_run: int = 0
    seconds: float = 0.0
    baseline_detail: str = ""
    # The absolute directory relative site paths are relative to (where verify ran).
    root: str = field(default_factory=os.getcwd)

    @property
    def all_equivalent(self) -> bool:
        alone = all(s.verdict is RuntimeVerdict.EQUIVALENT for s in self.sites)
        together = self.together is None or self.together.verdict is RuntimeVerdict.EQUIVALENT
        return bool(self.sites) and alone and together

    def to_json(self) -> dict[str, Any]:
        """The verify JSON of docs/contracts.md, exactly."""
        return {
            "version": 1,
            "root": self.root,
            "scenario": self.scenario,
            "device": self.device,
            "baseline": {"runs": self.baseline_runs, "deterministic": self.deterministic},
            "sites": [s.to_json() for s in self.sites],
            "together": self.together.to_json() if self.together else None,
        }
