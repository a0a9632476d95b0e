"""Verify the 23 zeros of SGLang 0.4.6.post5's `init_cuda_graph_state` at run time.

    python bench/gpu_verify_sglang046.py --device cuda --jobs 8 --out bench/results \
        --table docs/sglang046-cuda-graph-table.md
    python bench/gpu_verify_sglang046.py --device cpu --jobs 2   # torch reference, no graphs

Takes every `torch.zeros` of `FlashAttentionBackend.init_cuda_graph_state` (lines 1126-1332 of
`sglang/srt/layers/attention/flashattention_backend.py` in the pinned 0.4.6.post5 wheel) with its
static verdict from `zeroopt scan` of that file (`--scan REPORT.json`, else scanned here), and runs
`zeroopt verify bench/sglang046_cuda_graph.py:scenario --site FILE:LINE:COL ...` on all of them:
each site alone under every default pattern, then all 23 together. The file it writes,
`verify_sglang046_<cpu|cuda>.json`, holds the environment, the static findings, rows of the table,
and under `report` exactly what `zeroopt verify --format json` prints for the same sites.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from typing import Any

import sglang046_cuda_graph as harness  # bench/ is on sys.path when run as a script
import torch
from verify_run import progress_printer, timings, write_result

from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.targets import PoisonSite

SCENARIO = f"{Path(harness.__file__).resolve()}:scenario"


def static_findings(path: Path, scan_report: Path | None) -> dict[tuple[int, int], dict[str, Any]]:
    """(line, col) -> the scan's finding, for the zeros of init_cuda_graph_state."""
    if scan_report is not None:
        findings = json.loads(scan_report.read_text())["findings"]
    else:
        from zeroopt.scan.config import load_config
        from zeroopt.scan.file_analysis import analyse_file

        result = analyse_file(path, str(path), load_config([str(path)]).analysis)
        findings = [f.to_json() for f in result.findings]
    first, last = harness.INIT_CUDA_GRAPH_STATE_LINES
    return {
        (f["line"], f["col"]): f
        for f in findings
        if first <= f["line"] <= last and f.get("call") == "torch.zeros"
    }


def environment(device: str) -> dict[str, Any]:
    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": device,
        "flash_attn_4_in_cuda_graphs": harness.uses_flash_attn(device),
        "configs": [c.name for c in harness.selected_configs()],
        "file_sha256": harness.PIN.sha256,
        "wheel_sha256": harness.PIN.wheel_sha256,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        try:
            from importlib.metadata import version

            env["flash_attn_4"] = version("flash-attn-4")
        except Exception:
            env["flash_attn_4"] = None
    return env


def table(rows: list[dict[str, Any]], together: dict[str, Any] | None, env: dict[str, Any]) -> str:
    patterns = sorted({p for r in rows for p in r["trials"]})
    head = ["line:col", "buffer", "static", *patterns, "runtime"]
    lines = [
        f"Device: {env.get('gpu', env['device'])}; date {env['date']}; torch {env['torch']}; "
        f"FlashAttention 4 in CUDA graphs: {env['flash_attn_4_in_cuda_graphs']}"
        + (f" (flash-attn-4 {env['flash_attn_4']})" if env.get("flash_attn_4") else ""),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        cells = [f"{r['line']}:{r['col']}", f"`{r['buffer']}`", r["static"]]
        cells += [r["trials"].get(p, "-") for p in patterns]
        cells.append(f"**{r['runtime']}**")
        lines.append("| " + " | ".join(cells) + " |")
    if together is not None:
        cells = [f"all {len(rows)}", "together", ""]
        cells += [together["trials"].get(p, "-") for p in patterns]
        cells.append(f"**{together['verdict']}**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--patterns", default="", help="comma-separated; default: all defaults")
    parser.add_argument("--scan", type=Path, help="a `zeroopt scan --format json` of the file")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    parser.add_argument("--table", type=Path, help="write the markdown table here too")
    parser.add_argument("--lines", default="", help="only these lines (comma-separated)")
    args = parser.parse_args()

    path = harness.released_file()
    static = static_findings(path, args.scan)
    if args.lines:
        keep = {int(x) for x in args.lines.split(",")}
        static = {k: f for k, f in static.items() if k[0] in keep}
    sites = [PoisonSite(str(path), line, col) for (line, col) in sorted(static)]
    env = environment(args.device)
    print(json.dumps(env), flush=True)
    print(f"{len(sites)} sites: {[f'{s.line}:{s.col}' for s in sites]}", flush=True)
    kwargs: dict[str, Any] = {}
    if args.patterns:
        kwargs["patterns"] = tuple(args.patterns.split(","))
    start = time.perf_counter()
    checker = Checker(SCENARIO, device=args.device, jobs=args.jobs, timeout=args.timeout, **kwargs)
    report = checker.verify(sites, progress=progress_printer(start))
    rows = []
    for site in report.sites:
        finding = static[(site.line, site.col or 0)]
        rows.append(
            {
                "buffer": finding.get("target"),
                "line": site.line,
                "col": site.col,
                "static": finding["verdict"],
                "runtime": str(site.verdict),
                "hits": site.hits,
                "dtype": site.dtype,
                "shape": site.shape,
                "trials": {t.pattern: str(t.verdict) for t in site.trials},
                "trial_seconds": [round(t.seconds, 1) for t in site.trials],
                "details": {
                    t.pattern: t.detail.splitlines()[-1][:300] if t.detail else ""
                    for t in site.trials
                    if str(t.verdict) != "equivalent"
                },
            }
        )
    together = None
    if report.together is not None:
        together = {
            "verdict": str(report.together.verdict),
            "trials": {t.pattern: str(t.verdict) for t in report.together.trials},
        }
    site_args = " ".join(f"--site {path}:{s.line}:{s.col}" for s in sites)
    result = {
        "environment": env,
        "command": f"zeroopt verify {SCENARIO} {site_args} --device {args.device} "
        f"--jobs {args.jobs} --format json",
        "scenario": SCENARIO,
        "file": str(path),
        "scan": [static[k] for k in sorted(static)],
        "report": report.to_json(),  # what `zeroopt verify --format json` prints
        "rows": rows,
        "together": together,
        **timings(report, args.jobs),
    }
    out_file = write_result(args.out, "verify_sglang046", args.device, result)
    text = table(rows, together, env)
    print(text)
    print(
        f"{report.trials_run} runs, {report.seconds:.0f} s wall with --jobs {args.jobs}, median "
        f"trial {result['median_trial_seconds']} s, baseline deterministic: "
        f"{report.deterministic}; wrote {out_file}"
    )
    for row in rows:
        for pattern, detail in row["details"].items():
            print(f"   {row['line']} {row['buffer']} {pattern}: {detail[:200]}")
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
