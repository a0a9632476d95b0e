"""Run a scenario: zeros baseline (twice or more), then poisoned trials per site and together.

Every run is a subprocess (see trial.py) started with a timeout in its own process group, so a
hang or a stray compile worker is killed with it. Results come back through files in a private
temporary directory; the child's stdout/stderr go to files too (never a pipe that can fill up)
and only their tail is kept, as the detail of a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from zeroopt.runtime_checks.compare import baseline_spread, outputs_difference
from zeroopt.runtime_checks.patterns import DEFAULT_PATTERNS, patterns_for
from zeroopt.runtime_checks.sites import Site
from zeroopt.runtime_checks.trial import DEVICE_ENV
from zeroopt.runtime_checks.verdicts import (
    RuntimeVerdict,
    SiteResult,
    TogetherResult,
    TrialResult,
    VerifyReport,
)

Progress = Callable[[str], None]


class BaselineError(RuntimeError):
    """The scenario failed with every buffer zeroed: nothing can be verified."""


@dataclass
class RunOutcome:
    ok: bool
    error: str
    sites: dict[str, dict[str, Any]]
    outputs: dict[str, torch.Tensor] | None
    seconds: float


@dataclass
class _Job:
    label: str
    targets: Sequence[tuple[Site, str | None]]
    outcome: RunOutcome | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _tail(path: Path, limit: int = 1200) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    # The lines that name the failure (CUDA errors, asserts) are usually last.
    return "\n".join(lines[-8:])[-limit:]


class Checker:
    def __init__(
        self,
        scenario: str,
        *,
        device: str = "cpu",
        patterns: Sequence[str] = DEFAULT_PATTERNS,
        jobs: int = 1,
        timeout: float = 300.0,
        baseline_runs: int = 2,
        python: str = sys.executable,
        env: dict[str, str] | None = None,
    ) -> None:
        if baseline_runs < 2:
            raise ValueError("the baseline must run at least twice to measure determinism")
        self.scenario = scenario
        self.device = device
        self.patterns = tuple(patterns)
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.baseline_runs = baseline_runs
        self.python = python
        self.env = env
        self.trials_run = 0

    # -- one subprocess -------------------------------------------------------------------
    def run_once(self, targets: Sequence[tuple[Site, str | None]], workdir: Path) -> RunOutcome:
        workdir.mkdir(parents=True, exist_ok=True)
        status_path = workdir / "status.json"
        outputs_path = workdir / "outputs.pt"
        spec: dict[str, Any] = {
            "scenario": self.scenario,
            "device": self.device,
            "targets": [{"site": s.to_json(), "pattern": p} for s, p in targets],
            "status": str(status_path),
            "outputs": str(outputs_path),
        }
        spec_path = workdir / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        env = dict(os.environ if self.env is None else self.env)
        env[DEVICE_ENV] = self.device
        env["PYTHONUNBUFFERED"] = "1"
        if self.jobs > 1 and "OMP_NUM_THREADS" not in env:
            # Parallel trials share the cores: one intra-op pool each would oversubscribe them.
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // self.jobs))
        log = workdir / "log.txt"
        start = time.perf_counter()
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [self.python, "-m", "zeroopt.runtime_checks.trial", str(spec_path)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            try:
                rc = proc.wait(timeout=self.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
                rc = -9
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the trial and anything it started
                proc.wait()
        seconds = time.perf_counter() - start
        status: dict[str, Any] = {}
        if status_path.exists():
            try:
                status = json.loads(status_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                status = {}
        sites = status.get("sites", {})
        if timed_out:
            return RunOutcome(
                False, f"timeout after {self.timeout:g} s (hang?)", sites, None, seconds
            )
        if not status.get("ok") or rc != 0:
            error = status.get("error") or f"exit status {rc}"
            tail = _tail(log)
            if tail and tail not in error:
                error = f"{error}\n{tail}"
            return RunOutcome(False, error, sites, None, seconds)
        outputs = torch.load(outputs_path, map_location="cpu", weights_only=True)
        return RunOutcome(True, "", sites, outputs, seconds)

    def _run_jobs(self, jobs: list[_Job], root: Path, progress: Progress | None) -> None:
        def work(index_job: tuple[int, _Job]) -> None:
            index, job = index_job
            job.outcome = self.run_once(job.targets, root / f"run{index:04d}")
            self.trials_run += 1
            if progress is not None:
                progress(job.label)

        base = len(list(root.iterdir())) if root.exists() else 0
        numbered = [(base + i, job) for i, job in enumerate(jobs)]
        if self.jobs == 1:
            for item in numbered:
                work(item)
        else:
            with ThreadPoolExecutor(self.jobs) as pool:
                list(pool.map(work, numbered))

    # -- the protocol ---------------------------------------------------------------------
    def plan_size(self, sites: Sequence[Site]) -> int:
        """An upper bound on runs, for a progress bar before dtypes are known."""
        per_site = max(1, len(self.patterns))
        return self.baseline_runs + len(sites) * per_site + (per_site if len(sites) > 1 else 0)

    def verify(
        self,
        sites: Sequence[Site],
        progress: Progress | None = None,
        on_planned: Callable[[int], None] | None = None,
        *,
        alone: bool = True,
    ) -> VerifyReport:
        """Baseline, then each site alone (unless `alone` is False), then all together."""
        start = time.perf_counter()
        self.trials_run = 0
        with tempfile.TemporaryDirectory(prefix="zeroopt-verify-") as tmp:
            root = Path(tmp)
            observe = [(s, None) for s in sites]
            baselines = [_Job(f"baseline {i + 1}", observe) for i in range(self.baseline_runs)]
            self._run_jobs(baselines, root, progress)
            outcomes = [b.outcome for b in baselines if b.outcome is not None]
            failed = [o for o in outcomes if not o.ok]
            if failed:
                raise BaselineError(
                    "the scenario fails with every buffer zeroed (baseline):\n" + failed[0].error
                )
            runs = [o.outputs for o in outcomes if o.outputs is not None]
            first = runs[0]
            nondet = [outputs_difference(first, r) for r in runs[1:]]
            deterministic = all(d is None for d in nondet)
            spread = None if deterministic else baseline_spread(runs)
            baseline_detail = "" if deterministic else next(d for d in nondet if d)
            hits = outcomes[0].sites

            results: list[SiteResult] = []
            alone_jobs: list[_Job] = []
            site_patterns: dict[str, list[str]] = {}
            for site in sites:
                info = hits.get(site.key, {})
                result = SiteResult(site.path, site.line, site.col)
                result.hits = int(info.get("hits", 0))
                result.dtype = info.get("dtype")
                result.shape = info.get("shape")
                result.reached = result.hits > 0
                results.append(result)
                if not result.reached:
                    continue
                dtype = getattr(torch, result.dtype or "float32")
                names = patterns_for(dtype, self.patterns) or patterns_for(dtype)[:1]
                site_patterns[site.key] = names
                for name in names if alone else ():
                    job = _Job(f"{site.key} {name}", [(site, name)])
                    job.extra = {"result": result, "pattern": name}
                    alone_jobs.append(job)

            reached = [s for s in sites if s.key in site_patterns]
            together_jobs: list[_Job] = []
            together: TogetherResult | None = None
            if len(reached) > 1:
                together = TogetherResult(sites=[s.key for s in reached])
                rounds = max(len(site_patterns[s.key]) for s in reached)
                for k in range(rounds):
                    chosen = [
                        (s, site_patterns[s.key][k % len(site_patterns[s.key])]) for s in reached
                    ]
                    label = "+".join(dict.fromkeys(p for _, p in chosen))
                    job = _Job(f"together {label}", chosen)
                    job.extra = {"pattern": label}
                    together_jobs.append(job)
            if on_planned is not None:
                on_planned(self.baseline_runs + len(alone_jobs) + len(together_jobs))
            self._run_jobs(alone_jobs + together_jobs, root, progress)

            for job in alone_jobs:
                job.extra["result"].trials.append(self._judge(job, first, spread))
            if together is not None:
                together.trials = [self._judge(job, first, spread) for job in together_jobs]

        return VerifyReport(
            scenario=self.scenario,
            device=self.device,
            baseline_runs=self.baseline_runs,
            deterministic=deterministic,
            sites=results,
            together=together,
            trials_run=self.trials_run,
            seconds=time.perf_counter() - start,
            baseline_detail=baseline_detail,
        )

    @staticmethod
    def _judge(
        job: _Job, baseline: dict[str, torch.Tensor], spread: dict[str, float] | None
    ) -> TrialResult:
        outcome = job.outcome
        pattern = str(job.extra["pattern"])
        assert outcome is not None
        if not outcome.ok:
            return TrialResult(pattern, RuntimeVerdict.CRASHED, outcome.error, outcome.seconds)
        unreached = [
            s.key for s, _ in job.targets if outcome.sites.get(s.key, {}).get("hits", 0) == 0
        ]
        if unreached:
            detail = "the poisoned allocation did not run in this trial: " + ", ".join(unreached)
            return TrialResult(pattern, RuntimeVerdict.NOT_REACHED, detail, outcome.seconds)
        assert outcome.outputs is not None
        diff = outputs_difference(baseline, outcome.outputs, spread)
        if diff is None:
            how = "bitwise identical" if spread is None else "within the baseline spread"
            return TrialResult(pattern, RuntimeVerdict.EQUIVALENT, how, outcome.seconds)
        return TrialResult(pattern, RuntimeVerdict.DIVERGED, diff, outcome.seconds)
