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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zeroopt.runtime_checks.patterns import DEFAULT_PATTERNS, patterns_for
from zeroopt.runtime_checks.results import (
    RuntimeVerdict,
    SiteResult,
    TogetherResult,
    TrialResult,
    VerifyReport,
)
from zeroopt.runtime_checks.schedule import plan_slots, run_in_slots, slot_env, visible_gpus
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.runtime_checks.trial import DEVICE_ENV

Progress = Callable[[str], None]


class BaselineError(RuntimeError):
    """The scenario failed with every buffer zeroed: nothing can be verified."""


class ScenarioUsageError(BaselineError):
    """The scenario cannot be loaded at all (bad FILE:FUNCTION, missing file, module, function)."""


@dataclass
class RunOutcome:
    ok: bool
    error: str
    sites: dict[str, dict[str, Any]]
    outputs: Any  # name -> tensor for a scenario; None for a command
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Job:
    label: str
    targets: Sequence[tuple[PoisonSite, str | None]]
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
        cwd: str | Path | None = None,
        gpus: Sequence[str] | None = None,
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
        self.cwd = cwd
        if gpus is None:
            pinned = device != "cuda"  # "cuda:N" names one device; cpu has none to spread over
            gpus = [] if pinned else visible_gpus(self.env)
        self.gpus = list(gpus)
        self.slots = plan_slots(self.jobs, self.gpus)
        self.trials_run = 0

    def _base_env(self, slot: str | None) -> dict[str, str]:
        env = slot_env(os.environ if self.env is None else self.env, slot)
        if len(self.slots) > 1 and "OMP_NUM_THREADS" not in env:
            # Parallel trials share the cores: one intra-op pool each would oversubscribe them.
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // len(self.slots)))
        return env

    def _spawn(
        self, argv: Sequence[str], env: dict[str, str], stdout: Path, stderr: Path | None
    ) -> tuple[int, bool, float]:
        """Run `argv` in its own process group; (exit status, timed out, seconds)."""
        start = time.perf_counter()
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(open(stdout, "wb"))
            err = out if stderr is None else stack.enter_context(open(stderr, "wb"))
            proc = subprocess.Popen(
                list(argv),
                stdout=out,
                stderr=subprocess.STDOUT if stderr is None else err,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.cwd,
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
        return rc, timed_out, time.perf_counter() - start

    # -- one subprocess -------------------------------------------------------------------
    def run_once(
        self,
        targets: Sequence[tuple[PoisonSite, str | None]],
        workdir: Path,
        slot: str | None = None,
    ) -> RunOutcome:
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
        env = self._base_env(slot)
        env[DEVICE_ENV] = self.device
        env["PYTHONUNBUFFERED"] = "1"
        log = workdir / "log.txt"
        argv = [self.python, "-m", "zeroopt.runtime_checks.trial", str(spec_path)]
        rc, timed_out, seconds = self._spawn(argv, env, log, None)
        status: dict[str, Any] = {}
        if status_path.exists():
            try:
                status = json.loads(status_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                status = {}
        sites = status.get("sites", {})
        seen = {"loaded": set(status.get("loaded", ()))}
        if timed_out:
            return RunOutcome(
                False, f"timeout after {self.timeout:g} s (hang?)", sites, None, seconds
            )
        if status.get("usage"):
            return RunOutcome(False, str(status["usage"]), sites, None, seconds, {"usage": True})
        if not status.get("ok") or rc != 0:
            error = status.get("error") or f"exit status {rc}"
            tail = _tail(log)
            if tail and tail not in error:
                error = f"{error}\n{tail}"
            return RunOutcome(False, error, sites, None, seconds, seen)
        import torch

        outputs = torch.load(outputs_path, map_location="cpu", weights_only=True)
        return RunOutcome(True, "", sites, outputs, seconds, seen)

    def _run_jobs(self, jobs: list[_Job], root: Path, progress: Progress | None) -> None:
        def work(index_job: tuple[int, _Job], slot: str | None) -> None:
            index, job = index_job
            job.outcome = self.run_once(job.targets, root / f"run{index:04d}", slot)
            self.trials_run += 1
            if progress is not None:
                progress(job.label)

        base = len(list(root.iterdir())) if root.exists() else 0
        numbered = [(base + i, job) for i, job in enumerate(jobs)]
        run_in_slots(numbered, self.slots, work)

    # -- the protocol ---------------------------------------------------------------------
    def plan_size(self, sites: Sequence[PoisonSite]) -> int:
        """An upper bound on runs, for a progress bar before dtypes are known."""
        per_site = max(1, len(self.patterns))
        return self.baseline_runs + len(sites) * per_site + (per_site if len(sites) > 1 else 0)

    def verify(
        self,
        sites: Sequence[PoisonSite],
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
            deterministic, baseline_detail, context = self._baseline(outcomes)
            hits = self._reached(outcomes)

            results: list[SiteResult] = []
            alone_jobs: list[_Job] = []
            site_patterns: dict[str, list[str]] = {}
            for site in sites:
                info = hits.get(site.key, {})
                result = SiteResult(site.path, site.line, site.col, site.source, site.fingerprint)
                result.hits = int(info.get("hits", 0))
                result.dtype = info.get("dtype")
                result.shape = info.get("shape")
                result.reached = result.hits > 0
                results.append(result)
                if not result.reached:
                    result.note = self._unreached_note(site, outcomes)
                    continue
                import torch

                dtype = getattr(torch, result.dtype or "float32")
                names = patterns_for(dtype, self.patterns) or patterns_for(dtype)[:1]
                site_patterns[site.key] = names
                for name in names if alone else ():
                    # Every other site stays as in the baseline: an empty one zero-filled.
                    rest = [(s, None) for s in sites if s != site]
                    job = _Job(f"{site.key} {name}", [(site, name), *rest])
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
                    rest = [(s, None) for s in sites if s.key not in site_patterns]
                    job = _Job(f"together {label}", [*chosen, *rest])
                    job.extra = {"pattern": label}
                    together_jobs.append(job)
            if on_planned is not None:
                on_planned(self.baseline_runs + len(alone_jobs) + len(together_jobs))
            self._run_jobs(alone_jobs + together_jobs, root, progress)

            for job in alone_jobs:
                job.extra["result"].trials.append(self._judge(job, context))
            if together is not None:
                together.trials = [self._judge(job, context) for job in together_jobs]

        return VerifyReport(
            scenario=self.describe(),
            device=self.describe_device(),
            baseline_runs=self.baseline_runs,
            deterministic=deterministic,
            sites=results,
            together=together,
            trials_run=self.trials_run,
            seconds=time.perf_counter() - start,
            baseline_detail=baseline_detail,
            root=os.path.abspath(self.cwd) if self.cwd is not None else os.getcwd(),
        )

    # -- what differs between a scenario and a command -------------------------------------
    def describe(self) -> str:
        return self.scenario

    def describe_device(self) -> str:
        return self.device

    def _baseline(self, outcomes: list[RunOutcome]) -> tuple[bool, str, Any]:
        """(deterministic, why not, what trials are judged against); raises when it failed."""
        from zeroopt.runtime_checks.compare import baseline_spread, outputs_difference

        failed = [o for o in outcomes if not o.ok]
        if failed:
            if failed[0].extra.get("usage"):
                raise ScenarioUsageError(failed[0].error)
            raise BaselineError(
                "the scenario fails with every buffer zeroed (baseline):\n" + failed[0].error
            )
        runs = [o.outputs for o in outcomes if o.outputs is not None]
        first = runs[0]
        nondet = [outputs_difference(first, r) for r in runs[1:]]
        deterministic = all(d is None for d in nondet)
        spread = None if deterministic else baseline_spread(runs)
        detail = "" if deterministic else next(d for d in nondet if d)
        return deterministic, detail or "", (first, spread)

    def _reached(self, outcomes: list[RunOutcome]) -> dict[str, dict[str, Any]]:
        return outcomes[0].sites

    def _unreached_note(self, site: PoisonSite, outcomes: list[RunOutcome]) -> str:
        if not any(site.realpath in o.extra.get("loaded", ()) for o in outcomes):
            return f"its file {site.realpath} was never loaded by the scenario"
        return "never executed by the scenario"

    def _judge(self, job: _Job, context: Any) -> TrialResult:
        from zeroopt.runtime_checks.compare import outputs_difference

        baseline, spread = context
        outcome = job.outcome
        pattern = str(job.extra["pattern"])
        assert outcome is not None
        if not outcome.ok:
            return TrialResult(pattern, RuntimeVerdict.CRASHED, outcome.error, outcome.seconds)
        unreached = [
            s.key
            for s, p in job.targets
            if p is not None and outcome.sites.get(s.key, {}).get("hits", 0) == 0
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
