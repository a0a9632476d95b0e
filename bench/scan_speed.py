"""How fast `zeroopt scan` reads a real inference-engine tree, next to the tools people compare it to.

Corpus: every `.py` file of the pinned sglang and vllm wheels (bench/corpus.py). In one run, each
tool is timed as a subprocess (wall clock with `time.perf_counter`, CPU and peak RSS from `wait4`),
and the median of `--repeat` runs is reported:

- `zeroopt scan` on the whole tree, cold (`--no-cache`) and warm (a cache filled by one untimed run);
  the warm findings must equal the cold ones, or the cache is wrong and the run fails;
- the floor of any scan built on the stdlib parser (bench/parse_floor.py): read every file, apply
  zeroopt's prefilter, `ast.parse` what passes, with a scan's worker count, and analyse nothing;
- `ruff check --select ALL --no-cache` on the whole tree: the speed ceiling a linter user expects;
- TorchFix and Fixit, libcst-based peers that take about an hour on the whole tree here, on a fixed
  sample of the files that mention `zeros` (evenly spaced over the sorted list, so both wheels are
  in it), together with `zeroopt scan --no-cache` on the same sample so per-file ratios compare like
  with like. Each peer gets its own virtual environment (TorchFix pins libcst<1.6).

Timings on a shared 2-core machine drift from minute to minute: compare rows of one run only.

    python bench/scan_speed.py [--repeat 3] [--sample 200] [--jobs N] [--output FILE]
        [--tools zeroopt,ruff] [--save-json NORMALISED.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import corpus
from rich import box
from rich.console import Console
from rich.table import Table

PEERS = {"torchfix": "torchfix==0.7.0", "fixit": "fixit==2.2.1"}  # pinned, like the corpus
ALL_TOOLS = ("zeroopt-cold", "zeroopt-warm", "parse-floor", "ruff", "torchfix", "fixit")


@dataclass
class Run:
    seconds: float
    cpu: float  # user + sys of the tool and the workers it waited for
    max_rss_mb: float  # largest single process, not the sum over workers
    returncode: int
    stdout: str


@dataclass
class Row:
    tool: str
    scope: str  # "tree" or "sample": the file set the ratio compares against
    files: int
    lines: int
    command: list[str]
    runs: list[Run] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)


def run_tool(
    cmd: Sequence[str], ok_codes: Sequence[int], timeout: float, keep_stdout: bool = False
) -> Run:
    """Run one timed command; its output goes to a file (as a user's terminal would take it).

    Only a tail of stderr is read back, and stdout only when asked: this process must stay small,
    because a child's peak RSS as `wait4` reports it starts from the parent's at fork time.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        stdout = out.read().decode("utf-8", "replace") if keep_stdout else ""
        err.seek(max(0, err.seek(0, os.SEEK_END) - 20_000))
        stderr = err.read().decode("utf-8", "replace")
    if code not in ok_codes or "Traceback (most recent call last)" in stderr:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed (exit {code}):\n{stderr[-3000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return Run(seconds, cpu, usage.ru_maxrss / 1024, code, stdout)


def ensure_peer_venv(cache_dir: Path, tool: str) -> Path:
    """The peer's console script, from `<cache>/venv-<tool>`, created with pip on first use."""
    venv = cache_dir / f"venv-{tool}"
    exe = venv / "bin" / tool
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                PEERS[tool],
            ],
            check=True,
        )
    return exe


def default_zeroopt() -> str:
    beside = Path(sys.executable).with_name("zeroopt")
    found = str(beside) if beside.exists() else shutil.which("zeroopt")
    if not found:
        raise SystemExit("zeroopt not found: install the repo (pip install -e .) or pass --zeroopt")
    return found


def default_ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if not found:
        raise SystemExit("ruff not found: pip install ruff, or pass --ruff")
    return found


def version_of(cmd: Sequence[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"? ({exc})"
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0] if proc.returncode == 0 and text else "?"


def evenly_spaced(items: Sequence[Path], n: int) -> list[Path]:
    """`n` items spread over the whole sorted list: the same sample on every machine."""
    if n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def zeroopt_report(run: Run) -> dict[str, Any]:
    try:
        report: dict[str, Any] = json.loads(run.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"zeroopt scan did not print one JSON object: {exc}") from exc
    return report


def comparable(report: dict[str, Any]) -> tuple[Any, ...]:
    """What a cache must reproduce exactly: every finding and error, in order."""
    return (report.get("findings"), report.get("errors"))


def measure(args: argparse.Namespace) -> tuple[list[Row], list[str]]:
    tools = expand_tools(args.tools)
    packages = corpus.ensure_corpus(args.cache_dir, find_links=args.find_links)
    roots = [str(p.root) for p in packages]
    tree = corpus.python_files(p.root for p in packages)
    tree_stats = corpus.stats(tree)
    zeros_files = [p for p in tree if corpus.mentions_zeros(p)]
    sample = evenly_spaced(zeros_files, args.sample)
    sample_lines = corpus.count_lines(sample)
    jobs = [] if args.jobs is None else ["--jobs", str(args.jobs)]
    notes = [
        f"corpus: {', '.join(p.label for p in packages)}: {tree_stats.files:,} .py files, "
        f"{tree_stats.lines:,} lines, {tree_stats.zeros_files:,} mention `zeros`",
        f"sample for the libcst peers: {len(sample)} of the {len(zeros_files):,} files that mention "
        f"`zeros` (evenly spaced in sorted order), {sample_lines:,} lines",
    ]

    rows: list[Row] = []
    zeroopt = args.zeroopt or (
        default_zeroopt() if any(t.startswith("zeroopt") for t in tools) else ""
    )
    if zeroopt:
        notes.append(f"zeroopt: {version_of([zeroopt, '--version'])} ({zeroopt})")
    scan = [zeroopt, "scan", "--format", "json", *jobs]
    if "zeroopt-cold" in tools:
        rows.append(
            Row(
                "zeroopt scan --no-cache",
                "tree",
                tree_stats.files,
                tree_stats.lines,
                [*scan, "--no-cache", *roots],
            )
        )
    warm_cache = Path(tempfile.mkdtemp(prefix="zeroopt-bench-cache-"))
    if "zeroopt-warm" in tools:
        rows.append(
            Row(
                "zeroopt scan (warm cache)",
                "tree",
                tree_stats.files,
                tree_stats.lines,
                [*scan, "--cache-dir", str(warm_cache), *roots],
            )
        )
    if "parse-floor" in tools:
        # What no analysis can skip: read, prefilter, ast.parse (bench/parse_floor.py).
        floor = Path(__file__).with_name("parse_floor.py")
        rows.append(
            Row(
                "read + prefilter + ast.parse only",
                "tree",
                tree_stats.files,
                tree_stats.lines,
                [sys.executable, str(floor), *jobs, *roots],
            )
        )
    if "ruff" in tools:
        ruff = args.ruff or default_ruff()
        notes.append(f"ruff: {version_of([ruff, '--version'])}")
        rows.append(
            Row(
                "ruff check --select ALL --no-cache",
                "tree",
                tree_stats.files,
                tree_stats.lines,
                [
                    ruff,
                    "check",
                    "--select",
                    "ALL",
                    "--no-cache",
                    "--exit-zero",
                    "--isolated",
                    "--output-format",
                    "concise",
                    *roots,
                ],
            )
        )
    if any(t in tools for t in PEERS) and zeroopt:
        rows.append(
            Row(
                "zeroopt scan --no-cache (sample)",
                "sample",
                len(sample),
                sample_lines,
                [*scan, "--no-cache", *map(str, sample)],
            )
        )
    if "torchfix" in tools:
        exe = str(ensure_peer_venv(args.cache_dir, "torchfix"))
        notes.append(
            f"torchfix: {version_of([exe, '--version'])}, default rules "
            "(all but TOR3xx, TOR4xx, TOR9xx)"
        )
        tf_jobs = [] if args.jobs is None else ["-j", str(args.jobs)]
        rows.append(
            Row(
                "torchfix (sample)",
                "sample",
                len(sample),
                sample_lines,
                [exe, *tf_jobs, *map(str, sample)],
            )
        )
    if "fixit" in tools:
        exe = str(ensure_peer_venv(args.cache_dir, "fixit"))
        notes.append(
            f"fixit: {version_of([exe, '--version'])}, default rules (fixit.rules), "
            "always all cores (no jobs option)"
        )
        rows.append(
            Row(
                "fixit lint (sample)",
                "sample",
                len(sample),
                sample_lines,
                [exe, "lint", *map(str, sample)],
            )
        )

    ok = {"ruff": (0,), "read": (0,), "torchfix": (0, 1), "fixit": (0, 1)}  # 1: violations
    try:
        warm_reference: tuple[Any, ...] | None = None
        cold_reference: tuple[Any, ...] | None = None
        for row in rows:
            key = "zeroopt" if row.tool.startswith("zeroopt") else row.tool.split()[0]
            codes = ok.get(key, (0, 1))
            if row.tool.startswith("zeroopt scan (warm"):
                # Untimed: fills the cache the timed runs read.
                fill = run_tool(row.command, codes, args.timeout, keep_stdout=True)
                warm_reference = comparable(zeroopt_report(fill))
            for i in range(args.repeat):
                print(f"[{i + 1}/{args.repeat}] {row.tool} ...", file=sys.stderr, flush=True)
                run = run_tool(row.command, codes, args.timeout, keep_stdout=key == "zeroopt")
                row.runs.append(run)
                print(f"      {run.seconds:.2f} s", file=sys.stderr, flush=True)
                if key == "zeroopt":
                    report = zeroopt_report(run)
                    summary = report.get("summary", {})
                    row.note = (
                        f"{summary.get('findings', '?')} findings "
                        f"({summary.get('safe', '?')} safe, {summary.get('unsafe', '?')} "
                        f"unsafe, {summary.get('unproven', '?')} unproven), "
                        f"{len(report.get('errors', []))} errors"
                    )
                    if row.scope == "tree" and "no-cache" in row.tool:
                        cold_reference = comparable(report)
                        if args.save_json is not None and i == 0:
                            save_normalised(run.stdout, roots, args.save_json)
                    if "warm" in row.tool and comparable(report) != warm_reference:
                        raise RuntimeError("warm-cache scan differs from the run that filled it")
        if (
            warm_reference is not None
            and cold_reference is not None
            and warm_reference != cold_reference
        ):
            raise RuntimeError("cached scan results differ from --no-cache results")
    finally:
        shutil.rmtree(warm_cache, ignore_errors=True)
    return rows, notes


def save_normalised(stdout: str, roots: Sequence[str], out: Path) -> None:
    """The cold scan's JSON as bench/wheel_scan.py writes it (paths relative to the folder that
    holds the trees, timing and root dropped, findings sorted), to compare two engines byte for
    byte against a file that script wrote."""
    parents = {str(Path(r).parent) for r in roots}
    text = stdout.replace(parents.pop() + os.sep, "") if len(parents) == 1 else stdout
    data = json.loads(text)
    data["summary"].pop("seconds", None)
    data.pop("root", None)
    data["findings"].sort(key=lambda f: (f["path"], f["line"], f["col"], f["rule"]))
    out.write_text(json.dumps(data, indent=1, sort_keys=True))


def expand_tools(spec: str) -> list[str]:
    tools: list[str] = []
    for name in (t.strip() for t in spec.split(",") if t.strip()):
        expanded = ["zeroopt-cold", "zeroopt-warm"] if name == "zeroopt" else [name]
        for tool in expanded:
            if tool not in ALL_TOOLS:
                raise SystemExit(
                    f"unknown tool {tool!r}; choose from zeroopt, {', '.join(ALL_TOOLS)}"
                )
            tools.append(tool)
    return tools


def build_table(rows: Sequence[Row], title: str, table_box: box.Box) -> Table:
    """Ratio: the tool's seconds per file over zeroopt's cold seconds per file on the same files."""
    base = {
        r.scope: r.median / r.files
        for r in rows
        if r.tool.startswith("zeroopt scan --no-cache") and r.runs and r.files
    }
    table = Table(title=title or None, box=table_box, title_justify="left")
    for name, justify in (
        ("tool", "left"),
        ("files", "right"),
        ("lines", "right"),
        ("seconds (median)", "right"),
        ("min-max", "right"),
        ("cpu s", "right"),
        ("files/s", "right"),
        ("x zeroopt cold / file", "right"),
        ("peak RSS MB", "right"),
        ("result", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        if not r.runs:
            continue
        med = r.median
        secs = [run.seconds for run in r.runs]
        ratio = f"{(med / r.files) / base[r.scope]:.2f}" if r.scope in base else "-"
        table.add_row(
            r.tool,
            f"{r.files:,}",
            f"{r.lines:,}",
            f"{med:.2f}",
            f"{min(secs):.2f}-{max(secs):.2f}",
            f"{statistics.median(run.cpu for run in r.runs):.1f}",
            f"{r.files / med:,.0f}" if med > 0 else "-",
            ratio,
            f"{max(run.max_rss_mb for run in r.runs):,.0f}",
            r.note,
        )
    return table


def ruff_ratios(rows: Sequence[Row]) -> list[str]:
    """The targets: the cold scan against ruff on the same tree in the same run, by wall
    (medians) and by CPU (medians, user + sys); CPU is the steadier on a shared machine."""
    by_tool = {r.tool: r for r in rows if r.runs}
    ruff = by_tool.get("ruff check --select ALL --no-cache")
    if ruff is None:
        return []
    ruff_cpu = statistics.median(run.cpu for run in ruff.runs)
    out = []
    for r in rows:
        if r.scope != "tree" or not r.runs or not r.tool.startswith("zeroopt"):
            continue
        cpu = statistics.median(run.cpu for run in r.runs)
        out.append(
            f"{r.tool} / ruff: wall {r.median / ruff.median:.2f}x, CPU {cpu / ruff_cpu:.2f}x"
            if ruff.median > 0 and ruff_cpu > 0
            else r.tool
        )
    return out


def plain_report(
    rows: Sequence[Row],
    notes: Sequence[str],
    args: argparse.Namespace,
    started: str,
    load: tuple[str, str],
) -> str:
    buf = StringIO()
    console = Console(file=buf, width=220, color_system=None, highlight=False)
    console.print(f"# zeroopt scan throughput, {started}")
    console.print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average before/after: "
        f"{load[0]} / {load[1]}"
    )
    workers = args.jobs or len(os.sched_getaffinity(0))
    console.print(
        f"repeat: {args.repeat}, jobs: {args.jobs or 'tool default'} (zeroopt workers: {workers})"
    )
    for note in notes:
        console.print(note)
    console.print()
    console.print(build_table(rows, "", box.MARKDOWN))
    console.print()
    for line in ruff_ratios(rows):
        console.print(line)
    console.print("commands (file lists shortened):")
    for r in rows:
        shown = r.command[: -r.files] if r.scope == "sample" else r.command  # the files last
        console.print(
            f"  {' '.join(shown)}" + (f" <{r.files} files>" if r.scope == "sample" else "")
        )
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per tool (median)")
    parser.add_argument(
        "--sample",
        type=int,
        default=200,
        help="files for TorchFix and Fixit (and zeroopt on the same sample)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="passed to zeroopt --jobs and torchfix -j (default: their own)",
    )
    parser.add_argument(
        "--tools",
        default=",".join(ALL_TOOLS),
        help="comma list from: zeroopt (cold+warm), " + ", ".join(ALL_TOOLS),
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=corpus.DEFAULT_CACHE,
        help="wheels, unpacked sources and peer venvs",
    )
    parser.add_argument(
        "--find-links",
        type=Path,
        action="append",
        default=[],
        help="local wheel directory for pip download (repeatable)",
    )
    parser.add_argument("--zeroopt", help="zeroopt executable (default: beside this Python)")
    parser.add_argument("--ruff", help="ruff executable (default: beside this Python, or PATH)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    parser.add_argument("--output", type=Path, help="also write the plain-text report here")
    parser.add_argument(
        "--save-json",
        type=Path,
        help="write the first cold tree scan's JSON here, normalised as bench/wheel_scan.py does",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.sample < 1:
        parser.error("--repeat and --sample must be at least 1")

    started = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    load_before = load_average()
    rows, notes = measure(args)
    text = plain_report(rows, notes, args, started, (load_before, load_average()))
    console = Console() if sys.stdout.isatty() else Console(width=220)
    console.print(build_table(rows, f"zeroopt scan throughput, {started}", box.ROUNDED))
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
