"""`zeroopt verify -- CMD ARGS...`: the user's own command (tests, a benchmark) as the oracle.

The protocol is the scenario one (checker.py): the command runs twice with every site zeroed
(an empty site is zero-filled), then once per site and pattern, then with all reached sites
poisoned together. Every Python process the command starts is instrumented (hook.py). A trial
is judged by its exit status and output against the baseline:

- `crashed`: killed by a signal (or a shell's 128+N report of SIGSEGV/SIGABRT/SIGBUS/SIGILL/
  SIGFPE/SIGKILL), a timeout, or output naming a crash the baseline did not print (CUDA errors,
  illegal memory access, device-side assert, segmentation fault, a process pool worker that died).
- `diverged`: another exit status, or, when the two baseline runs printed the same thing, other
  output. Output is compared after masking what legitimately changes between runs: durations
  (`0.52s`, `12 ms`, `0:00:03`), hex addresses and paths under the temporary directory. When the
  baseline runs still differ, only exit statuses are compared and the report says so.
- `not-reached`: no process of the baseline executed the site; the report says whether its file
  was loaded at all (a wrong path or a report from another checkout shows up here).
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import zeroopt
from zeroopt.runtime_checks.checker import BaselineError, Checker, RunOutcome, _Job
from zeroopt.runtime_checks.hook import PACKAGE_ENV, SITECUSTOMIZE, SPEC_ENV, read_reports
from zeroopt.runtime_checks.results import RuntimeVerdict, TrialResult
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.runtime_checks.trial import DEVICE_ENV

CRASH_TEXTS = (
    "CUDA error",
    "illegal memory access",
    "an illegal instruction was encountered",
    "misaligned address",
    "unspecified launch failure",
    "device-side assert",
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
    "Segmentation fault",
    "Fatal Python error",
    "core dumped",
    "terminated abruptly",
)
_CRASH_SIGNALS = {
    signal.SIGSEGV,
    signal.SIGABRT,
    signal.SIGBUS,
    signal.SIGILL,
    signal.SIGFPE,
    signal.SIGKILL,
}

_MASKS = (
    (re.compile(r"\b\d+:\d\d:\d\d(\.\d+)?\b"), "<time>"),
    (
        re.compile(r"\b\d+(\.\d+)?\s?(s|ms|us|µs|ns|sec|secs|seconds?|minutes?|min|it/s|s/it)\b"),
        "<time>",
    ),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<addr>"),
)


def normalise_output(text: str) -> str:
    """`text` with what changes between identical runs masked (durations, addresses, temp paths)."""
    tmp = re.escape(tempfile.gettempdir().rstrip("/"))
    text = re.sub(tmp + r"/[^\s'\":,)\]]*", "<tmp>", text)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def first_difference(a: str, b: str, stream: str) -> str | None:
    """The first differing line of `b` against `a`, or None when equal."""
    if a == b:
        return None
    left, right = a.splitlines(), b.splitlines()
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, _, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        want = left[i1] if i1 < len(left) else "<end of output>"
        got = right[j1] if j1 < len(right) else "<end of output>"
        return f"{stream} line {j1 + 1}: {got.strip()[:120]!r} instead of {want.strip()[:120]!r}"
    return f"{stream} differs"


def crash_text(output: str, baseline: str) -> str | None:
    """The first line of `output` naming a crash that `baseline` does not contain."""
    for line in output.splitlines():
        for text in CRASH_TEXTS:
            if text in line and text not in baseline:
                return line.strip()[:200]
    return None


def _tail(text: str, lines: int = 6, limit: int = 800) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])[-limit:]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class CommandChecker(Checker):
    """Checker whose trials run a command instead of a scenario function."""

    def __init__(self, command: Sequence[str], **kwargs: Any) -> None:
        if not command:
            raise ValueError("no command to run after --")
        super().__init__(shlex.join(command), **kwargs)
        self.command = list(command)
        self._boot: str | None = None

    # Sites travel to the children with absolute paths (a child may run in another directory);
    # results are keyed back to the sites as given.
    def _absolute(self, site: PoisonSite) -> PoisonSite:
        base = Path(self.cwd) if self.cwd is not None else Path.cwd()
        return PoisonSite(os.path.realpath(base / site.path), site.line, site.col)

    def verify(self, sites: Sequence[PoisonSite], *args: Any, **kwargs: Any) -> Any:
        with tempfile.TemporaryDirectory(prefix="zeroopt-boot-") as boot:
            Path(boot, "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
            self._boot = boot
            try:
                return super().verify(sites, *args, **kwargs)
            finally:
                self._boot = None

    def run_once(
        self,
        targets: Sequence[tuple[PoisonSite, str | None]],
        workdir: Path,
        slot: str | None = None,
    ) -> RunOutcome:
        import json

        assert self._boot is not None, "run_once runs inside verify()"
        reports = workdir / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        absolute = {self._absolute(s).key: s.key for s, _ in targets}
        spec = {
            "reports": str(reports),
            "targets": [{"site": self._absolute(s).to_json(), "pattern": p} for s, p in targets],
        }
        spec_path = workdir / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        env = self._base_env(slot)
        env[SPEC_ENV] = str(spec_path)
        env[PACKAGE_ENV] = os.path.dirname(os.path.abspath(zeroopt.__file__))
        env[DEVICE_ENV] = self.device
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = self._boot + (os.pathsep + old if old else "")
        stdout, stderr = workdir / "stdout.txt", workdir / "stderr.txt"
        rc, timed_out, seconds = self._spawn(self.command, env, stdout, stderr)
        hits, loaded, pids = read_reports(str(reports))
        sites = {
            absolute[key]: {"hits": 1, **record} for key, record in hits.items() if key in absolute
        }
        extra = {
            "rc": rc,
            "timed_out": timed_out,
            "stdout": stdout.read_text(encoding="utf-8", errors="replace"),
            "stderr": stderr.read_text(encoding="utf-8", errors="replace"),
            "loaded": loaded,
            "processes": len(pids),
        }
        return RunOutcome(not timed_out, "", sites, None, seconds, extra)

    def _reached(self, outcomes: list[RunOutcome]) -> dict[str, dict[str, Any]]:
        merged: dict[str, dict[str, Any]] = {}
        for outcome in outcomes:
            for key, info in outcome.sites.items():
                merged.setdefault(key, info)
        return merged

    def _unreached_note(self, site: PoisonSite, outcomes: list[RunOutcome]) -> str:
        if not any(o.extra.get("processes") for o in outcomes):
            return (
                "no Python process of the command was instrumented (started with -I, -E or -S, "
                "or with PYTHONPATH removed from its environment?)"
            )
        real = self._absolute(site).path
        if not any(real in o.extra.get("loaded", ()) for o in outcomes):
            return f"its file {real} was never loaded by the command"
        return "its file was loaded but the call never ran"

    def _baseline(self, outcomes: list[RunOutcome]) -> tuple[bool, str, Any]:
        first = outcomes[0].extra
        for outcome in outcomes:
            extra = outcome.extra
            if extra["timed_out"]:
                raise BaselineError(
                    f"the command timed out after {self.timeout:g} s with every site zeroed "
                    "(baseline); raise --timeout"
                )
            if extra["rc"] != 0:
                raise BaselineError(
                    f"the command fails with every site zeroed (baseline): exit status "
                    f"{extra['rc']}\n{_tail(extra['stdout'] + extra['stderr'])}"
                )
        outs = [
            (normalise_output(o.extra["stdout"]), normalise_output(o.extra["stderr"]))
            for o in outcomes
        ]
        detail = ""
        for out, err in outs[1:]:
            diff = first_difference(outs[0][0], out, "stdout") or first_difference(
                outs[0][1], err, "stderr"
            )
            if diff:
                detail = f"the baseline runs differ in output ({diff}): comparing exit status only"
                break
        deterministic = not detail
        raw = first["stdout"] + "\n" + first["stderr"]
        return deterministic, detail, (outs[0], deterministic, raw)

    def _judge(self, job: _Job, context: Any) -> TrialResult:
        (base_out, base_err), deterministic, raw = context
        outcome = job.outcome
        assert outcome is not None
        pattern = str(job.extra["pattern"])
        extra, seconds = outcome.extra, outcome.seconds
        rc = extra["rc"]
        output = extra["stdout"] + "\n" + extra["stderr"]

        def result(verdict: RuntimeVerdict, detail: str) -> TrialResult:
            return TrialResult(pattern, verdict, detail, seconds)

        if extra["timed_out"]:
            return result(RuntimeVerdict.CRASHED, f"timeout after {self.timeout:g} s (hang?)")
        if rc < 0:
            return result(RuntimeVerdict.CRASHED, f"killed by {_signal_name(-rc)}\n{_tail(output)}")
        if rc > 128 and rc - 128 in _CRASH_SIGNALS:
            return result(
                RuntimeVerdict.CRASHED,
                f"exit status {rc} (a shell's report of {_signal_name(rc - 128)})\n{_tail(output)}",
            )
        crash = crash_text(output, raw)
        if crash is not None:
            return result(RuntimeVerdict.CRASHED, f"exit status {rc}: {crash}")
        unreached = [s.key for s, p in job.targets if p is not None and s.key not in outcome.sites]
        if unreached:
            detail = "the poisoned allocation did not run in this trial: " + ", ".join(unreached)
            return result(RuntimeVerdict.NOT_REACHED, detail)
        if rc != 0:
            return result(
                RuntimeVerdict.DIVERGED, f"exit status {rc} instead of 0\n{_tail(output)}"
            )
        if deterministic:
            diff = first_difference(
                base_out, normalise_output(extra["stdout"]), "stdout"
            ) or first_difference(base_err, normalise_output(extra["stderr"]), "stderr")
            if diff:
                return result(RuntimeVerdict.DIVERGED, f"output differs: {diff}")
            return result(RuntimeVerdict.EQUIVALENT, "same exit status and output")
        return result(
            RuntimeVerdict.EQUIVALENT,
            "same exit status (output not compared: the baseline runs differ)",
        )
