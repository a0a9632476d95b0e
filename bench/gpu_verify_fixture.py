"""Run `zeroopt verify` on the FlashAttention fixture and compare with its documented verdicts.

    python bench/gpu_verify_fixture.py --device cuda --jobs 4 --out bench/results
    python bench/gpu_verify_fixture.py --part safe ...   # the expected-safe set, together only

Writes verify_fixture_<part>.json (the verify report of docs/contracts.md plus expectations and timings) and
prints a table: buffer, expected, actual, trials. Exit status 1 if any verdict differs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

import torch
from verify_run import progress_printer, timings, write_result  # bench/ is on sys.path

from zeroopt.fixtures.flash_scenario import EXPECTED, EXPECTED_SAFE, buffer_sites, site_args
from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.targets import parse_site

SCENARIO = "zeroopt.fixtures.flash_scenario:scenario"


def environment(device: str) -> dict[str, Any]:
    from zeroopt.fixtures.flash_backend import _flash_attn_func

    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": device,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        env["flash_attn_cute"] = _flash_attn_func() is not None
    return env


def static_safe_buffers() -> list[str]:
    """The `# buffer:` allocations that the static analysis calls safe (lifecycle pass included,
    with the project's configuration, as `zeroopt scan fixtures/flash_backend.py` reports)."""
    from zeroopt.fixtures.flash_scenario import BACKEND_PATH
    from zeroopt.scan.config import load_config
    from zeroopt.scan.file_analysis import analyse_file

    config = load_config([str(BACKEND_PATH)])
    result = analyse_file(BACKEND_PATH, str(BACKEND_PATH), config.analysis)
    by_line = {line: name for name, (line, _) in buffer_sites().items()}
    return [
        by_line[f.line] for f in result.findings if f.verdict.value == "safe" and f.line in by_line
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--part", choices=("all", "safe", "static"), default="all")
    parser.add_argument("--patterns", default="")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()

    if args.part == "static":
        names = static_safe_buffers()  # what `zeroopt scan` proves safe, checked together
        print(f"statically safe buffers: {names}", flush=True)
    else:
        names = list(EXPECTED) if args.part == "all" else list(EXPECTED_SAFE)
    sites = [parse_site(s) for s in site_args(names)]
    kwargs: dict[str, Any] = {}
    if args.patterns:
        kwargs["patterns"] = tuple(args.patterns.split(","))
    checker = Checker(SCENARIO, device=args.device, jobs=args.jobs, timeout=args.timeout, **kwargs)
    env = environment(args.device)
    print(json.dumps(env), flush=True)
    report = checker.verify(sites, progress=progress_printer(), alone=args.part == "all")
    by_pos = {pos: name for name, pos in buffer_sites().items()}
    rows = []
    mismatches = 0
    for site in report.sites:
        name = by_pos[(site.line, site.col or 0)]
        expected = EXPECTED[name][0]
        actual = str(site.verdict)
        ok = args.part != "all" or actual == expected
        mismatches += not ok
        rows.append(
            {
                "buffer": name,
                "line": site.line,
                "col": site.col,
                "expected": expected,
                "actual": actual if args.part == "all" else "(together only)",
                "match": ok,
                "trials": {t.pattern: str(t.verdict) for t in site.trials},
                "trial_seconds": [round(t.seconds, 1) for t in site.trials],
            }
        )
    together = report.together
    expected_together = "crashed" if args.part == "all" else "equivalent"
    if together is not None:
        mismatches += str(together.verdict) != expected_together
    result = {
        "environment": env,
        "part": args.part,
        "report": report.to_json(),
        "expectations": rows,
        "together_expected": expected_together,
        "together_actual": str(together.verdict) if together else None,
        "together_details": [t.to_json() for t in together.trials] if together else [],
        **timings(report, args.jobs),
    }
    out_file = write_result(args.out, f"verify_fixture_{args.part}", args.device, result)

    print(
        f"\nverify on {env.get('gpu', args.device)}: {report.trials_run} runs, "
        f"{report.seconds:.0f} s wall with --jobs {args.jobs}, "
        f"median trial {result['median_trial_seconds']} s; baseline deterministic: "
        f"{report.deterministic}"
    )
    print(f"{'buffer':22} {'expected':11} {'actual':16} trials")
    for row in rows:
        trials = ", ".join(f"{p}:{v}" for p, v in row["trials"].items())
        flag = "" if row["match"] else "  <-- MISMATCH"
        print(f"{row['buffer']:22} {row['expected']:11} {row['actual']:16} {trials}{flag}")
    if together is not None:
        trials = ", ".join(f"{t.pattern}:{t.verdict}" for t in together.trials)
        print(f"{'together':22} {expected_together:11} {together.verdict!s:16} {trials}")
        for t in together.trials:
            if t.verdict != "equivalent":
                print(f"   together {t.pattern}: {t.detail.splitlines()[0][:200]}")
    for site in report.sites:
        for t in site.trials:
            if t.verdict != "equivalent":
                name = by_pos[(site.line, site.col or 0)]
                print(f"   {name} {t.pattern}: {t.verdict}: {t.detail.splitlines()[0][:200]}")
    print(f"wrote {out_file}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
