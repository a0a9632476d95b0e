"""What the GPU verify benchmarks share: a progress line per trial and the timing block and file
of their JSON result (bench/gpu_verify_fixture.py, bench/gpu_verify_real_sglang.py)."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zeroopt.runtime_checks.results import VerifyReport


def progress_printer(start: float | None = None) -> Callable[[str], None]:
    """A `Checker.verify` progress callback: `[n] label (seconds since start)`, by default since
    this call."""
    since = time.perf_counter() if start is None else start
    done = 0

    def progress(label: str) -> None:
        nonlocal done
        done += 1
        print(f"  [{done}] {label} ({time.perf_counter() - since:.0f} s)", flush=True)

    return progress


def timings(report: VerifyReport, jobs: int) -> dict[str, Any]:
    """Runs, wall seconds and the median trial (alone and together) of one verify run."""
    together = report.together
    trial_seconds = [t.seconds for s in report.sites for t in s.trials] + [
        t.seconds for t in (together.trials if together else [])
    ]
    return {
        "runs": report.trials_run,
        "seconds": round(report.seconds, 1),
        "median_trial_seconds": round(statistics.median(trial_seconds), 1)
        if trial_seconds
        else None,
        "jobs": jobs,
    }


def write_result(out_dir: Path, stem: str, device: str, result: dict[str, Any]) -> Path:
    """`<out_dir>/<stem>_<cpu|cuda>.json`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out_file = out_dir / f"{stem}_{device.split(':')[0]}.json"
    out_file.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return out_file
