"""Check the scan's verdicts on SGLang 0.5.23's full-prefill-CUDA-graph metadata at run time.

    python bench/gpu_verify_real_sglang.py --device cuda --jobs 4 --out bench/results
    python bench/gpu_verify_real_sglang.py --device cpu --jobs 2   # torch reference, no graphs

Scans SGLang 0.5.23's flashattention_backend.py (from the pinned wheel: bench/pinned_source.py)
as `zeroopt scan` does, takes
every safe or unproven zeros allocation of `_init_full_cg_prefill_metadata` (lines 746-865) as a
site, and runs `zeroopt verify bench/sglang_full_cg_prefill.py:scenario` on them (each alone
with every default pattern, then together). Writes verify_real_sglang_<device>.json and prints a
table: buffer, line, static verdict, runtime verdict, expected, trials.

Exit status 1 when the scan is contradicted (a `safe` allocation is not `equivalent`) or when
nothing diverged or crashed (then the harness could not have shown a wrong `safe`). A site whose
runtime verdict differs from the scenario's EXPECTED is flagged in the table, not an error: on a
GPU that is a finding about the kernel (e.g. FlashAttention reading more of the page table).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import sglang_full_cg_prefill as harness  # bench/ is on sys.path when run as a script
import torch
from verify_run import progress_printer, timings, write_result

from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.scan.config import load_config
from zeroopt.scan.file_analysis import analyse_file
from zeroopt.scan.findings import ZEROS_CALLS, Finding

SCENARIO = f"{Path(harness.__file__).resolve()}:scenario"


def environment(device: str) -> dict[str, Any]:
    from zeroopt.fixtures.flash_backend import _flash_attn_func

    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": device,
        "flash_attn_cute_importable": _flash_attn_func() is not None,
        "flash_attn_cute_used": harness.uses_flash_attn(device),
        "cuda_graphs": harness.uses_flash_attn(device),
        "page_size": int(os.environ.get(harness.PAGE_SIZE_ENV, harness.DEFAULT_PAGE_SIZE)),
        "num_splits": harness.NUM_SPLITS,  # SGLang's value; on SM90 FA4 needs 1 (below)
        "released_sha256": harness.RELEASED_SHA256,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        env["num_splits"] = harness.num_splits(torch.device(device))
        try:
            from importlib.metadata import version

            env["flash_attn_4"] = version("flash-attn-4")
        except Exception:
            env["flash_attn_4"] = None
    return env


def static_findings() -> list[Finding]:
    """The method's zeros findings, as `zeroopt scan` reports them with the project's config."""
    path = harness.released_file()
    config = load_config([str(path)])
    result = analyse_file(path, str(path), config.analysis)
    if result.errors:
        raise SystemExit(f"scan failed: {result.errors}")
    first, last = harness.METHOD_LINES
    return [f for f in result.findings if first <= f.line <= last and f.call in ZEROS_CALLS]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--patterns", default="", help="comma-separated; default: all defaults")
    parser.add_argument("--page-size", type=int, default=0, help=f"sets ${harness.PAGE_SIZE_ENV}")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    if args.page_size:
        os.environ[harness.PAGE_SIZE_ENV] = str(args.page_size)  # trials inherit it

    start = time.perf_counter()
    findings = static_findings()
    scan_seconds = time.perf_counter() - start
    candidates = [f for f in findings if f.verdict.value in ("safe", "unproven")]
    sites = [PoisonSite(str(harness.released_file()), f.line, f.col) for f in candidates]
    by_pos = {(f.line, f.col): f for f in candidates}
    env = environment(args.device)
    print(json.dumps(env), flush=True)
    print(
        f"scan ({scan_seconds:.1f} s): "
        + ", ".join(f"{f.line} {f.target} {f.verdict.value}" for f in findings),
        flush=True,
    )

    kwargs: dict[str, Any] = {}
    if args.patterns:
        kwargs["patterns"] = tuple(args.patterns.split(","))
    checker = Checker(SCENARIO, device=args.device, jobs=args.jobs, timeout=args.timeout, **kwargs)
    report = checker.verify(sites, progress=progress_printer(start))
    rows = []
    contradicted = []
    for site in report.sites:
        finding = by_pos[(site.line, site.col or 0)]
        static = finding.verdict.value
        actual = str(site.verdict)
        expected, why = harness.EXPECTED.get(finding.target, ((), "no expectation recorded"))
        if static == "safe" and actual != "equivalent":
            contradicted.append(finding.target)
        rows.append(
            {
                "buffer": finding.target,
                "line": site.line,
                "col": site.col,
                "static": static,
                "rule": finding.rule,
                "runtime": actual,
                "expected": list(expected),
                "matches_expected": actual in expected,
                "why_expected": why,
                "hits": site.hits,
                "dtype": site.dtype,
                "shape": site.shape,
                "trials": {t.pattern: str(t.verdict) for t in site.trials},
                "trial_seconds": [round(t.seconds, 1) for t in site.trials],
                "details": {
                    t.pattern: t.detail.splitlines()[0][:300]
                    for t in site.trials
                    if str(t.verdict) != "equivalent" and t.detail
                },
            }
        )
    together = report.together
    failed_somewhere = any(r["runtime"] in ("diverged", "crashed") for r in rows)
    result = {
        "environment": env,
        "scenario": SCENARIO,
        "released_file": str(harness.released_file()),
        "method": f"FlashAttentionBackend.{harness.METHOD} (lines {harness.METHOD_LINES})",
        "scan": [f.to_json() for f in findings],  # the `zeroopt scan --format json` entries
        "scan_seconds": round(scan_seconds, 1),
        "report": report.to_json(),
        "rows": rows,
        "together": str(together.verdict) if together else None,
        "static_safe_contradicted": contradicted,
        "harness_can_fail": failed_somewhere,
        **timings(report, args.jobs),
    }
    out_file = write_result(args.out, "verify_real_sglang", args.device, result)

    print(
        f"\nverify on {env.get('gpu', args.device)} "
        f"(FlashAttention 4 in CUDA graphs: {env['flash_attn_cute_used']}, torch {env['torch']}, "
        f"{env['date']}): {report.trials_run} runs, {report.seconds:.0f} s wall with "
        f"--jobs {args.jobs}, median trial {result['median_trial_seconds']} s; baseline "
        f"deterministic: {report.deterministic}"
    )
    print(f"{'buffer':40} {'line':>4} {'static':9} {'runtime':12} {'expected':20} trials")
    for row in rows:
        trials = ", ".join(f"{p}:{v}" for p, v in row["trials"].items()) or "-"
        flag = "" if row["matches_expected"] else "  <-- differs from the expectation"
        if row["buffer"] in contradicted:
            flag = "  <-- CONTRADICTS THE STATIC SAFE"
        print(
            f"{row['buffer']:40} {row['line']:>4} {row['static']:9} {row['runtime']:12} "
            f"{'|'.join(row['expected']):20} {trials}{flag}"
        )
    if together is not None:
        trials = ", ".join(f"{t.pattern}:{t.verdict}" for t in together.trials)
        print(f"{'together':40} {'':>4} {'':9} {together.verdict!s:12} {'':20} {trials}")
    for row in rows:
        for pattern, detail in row["details"].items():
            print(f"   {row['buffer']} {pattern}: {row['trials'][pattern]}: {detail[:200]}")
    print(f"wrote {out_file}")
    if contradicted:
        print(f"the static `safe` is contradicted at run time: {contradicted}")
    if not failed_somewhere:
        print("no site diverged or crashed: the harness showed it can fail nowhere")
    return 1 if contradicted or not failed_somewhere else 0


if __name__ == "__main__":
    raise SystemExit(main())
