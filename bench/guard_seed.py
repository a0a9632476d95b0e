"""The guard on the change this project exists for: 23 `torch.zeros` -> `torch.empty` in SGLang.

    python bench/guard_seed.py [--wheel PATH] [--keep DIR]

SGLang 0.4.6.post5's FlashAttention backend allocates its CUDA-graph state with 23
`torch.zeros` in `FlashAttentionBackend.init_cuda_graph_state`. An automated change once turned
all 23 into `torch.empty` and called them safe. This script rebuilds that change the way a
reviewer meets it: the whole `sglang` package of the wheel unpacked into a fresh git repository
and committed, then the 23 calls rewritten in the working tree (nothing else changes). It then
runs `zeroopt scan sglang --since HEAD --format json` there, as CI or the `zeroopt-guard`
pre-commit hook would, and prints one row per rewritten call: the ZO001 verdict of the original
zeros (scanned at HEAD), the ZO002 verdict of the empty, and the line that decided it; then the
full evidence of every `unsafe` one. No SGLang file is kept unless `--keep` says where.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

WHEEL_NAME = "sglang-0.4.6.post5-py3-none-any.whl"
WHEEL_SHA256 = "2a48053bd975e09ff10eabf1ef8bab4c913f3c3e16a3e45c13be1b4543cfeaed"
BACKEND = "sglang/srt/layers/attention/flashattention_backend.py"
CLASS, METHOD = "FlashAttentionBackend", "init_cuda_graph_state"
# Where the wheel may be: $ZEROOPT_SGLANG_046_WHEEL, then these folders.
WHEEL_DIRS = ("/work/wheels", "~/.cache/zeroopt-bench/wheels", "~/.cache/zeroopt-bench")


def find_wheel(explicit: str | None = None) -> Path | None:
    candidates = [explicit, os.environ.get("ZEROOPT_SGLANG_046_WHEEL")]
    candidates += [str(Path(d).expanduser() / WHEEL_NAME) for d in WHEEL_DIRS]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    return None


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="seed",
        GIT_AUTHOR_EMAIL="seed@example.com",
        GIT_COMMITTER_NAME="seed",
        GIT_COMMITTER_EMAIL="seed@example.com",
    )
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def zeros_in_method(source: str) -> list[tuple[int, int]]:
    """(line, 0-based col) of each `torch.zeros(` call in FlashAttentionBackend's method."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == CLASS)
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == METHOD)
    return sorted(
        (n.lineno, n.col_offset)
        for n in ast.walk(fn)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "zeros"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "torch"
    )


def rewrite(source: str, sites: list[tuple[int, int]]) -> str:
    """`torch.zeros` -> `torch.empty` at exactly these positions (same length: nothing moves).
    The file is ASCII, so `ast` byte columns are character columns."""
    lines = source.splitlines(keepends=True)
    for line, col in sites:
        text = lines[line - 1]
        assert text[col : col + len("torch.zeros")] == "torch.zeros", (line, text)
        lines[line - 1] = text[:col] + "torch.empty" + text[col + len("torch.zeros") :]
    return "".join(lines)


def build_checkout(wheel: Path, dest: Path) -> list[tuple[int, int]]:
    """The whole `sglang` package of the wheel in a git repository at `dest`, committed; then
    the 23 rewrites in the working tree. Returns the rewritten sites (line, 0-based col)."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest, [n for n in z.namelist() if n.startswith("sglang/")])
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "sglang 0.4.6.post5")
    path = dest / BACKEND
    source = path.read_text()
    sites = zeros_in_method(source)
    path.write_text(rewrite(source, sites))
    return sites


def scan(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "zeroopt", "scan", *args, "--format", "json", "--no-cache"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr)
    return done.returncode, json.loads(done.stdout)


def deciding(finding: dict[str, Any]) -> dict[str, Any] | None:
    """The evidence line the message names (the first read for `unsafe`)."""
    kinds = ("read",) if finding["verdict"] == "unsafe" else ("read", "possible-read", "escape")
    for e in finding["evidence"]:
        if e["kind"] in kinds:
            return e
    return next((e for e in finding["evidence"] if e["kind"] not in ("alloc", "decide")), None)


def table(repo: Path) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """Scan the changed checkout with --since HEAD, and the original file at HEAD."""
    code, since = scan(repo, "sglang", "--since", "HEAD")
    _git(repo, "stash", "-q")
    try:
        _, original = scan(repo, BACKEND)
    finally:
        _git(repo, "stash", "pop", "-q")
    zeros = {(f["line"], f["col"]): f for f in original["findings"] if f["rule"] == "ZO001"}
    rows = []
    for f in since["findings"]:
        before = zeros.get((f["line"], f["col"]))
        rows.append(
            {
                "line": f["line"],
                "col": f["col"],
                "target": f["target"],
                "zeros": before["verdict"] if before else "-",
                "empty": f["verdict"],
                "rule": f["rule"],
                "evidence": deciding(f),
                "finding": f,
            }
        )
    return code, rows, since


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", help=f"path to {WHEEL_NAME}")
    parser.add_argument("--keep", help="build the checkout here and keep it")
    args = parser.parse_args(argv)
    wheel = find_wheel(args.wheel)
    if wheel is None:
        print(f"{WHEEL_NAME} not found (--wheel or $ZEROOPT_SGLANG_046_WHEEL)", file=sys.stderr)
        return 2
    if sha256(wheel) != WHEEL_SHA256:
        print(f"{wheel}: sha256 is not {WHEEL_SHA256}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(args.keep) if args.keep else Path(tmp) / "checkout"
        sites = build_checkout(wheel, repo)
        code, rows, since = table(repo)
    print(f"{BACKEND}: {len(sites)} torch.zeros in {CLASS}.{METHOD} rewritten to torch.empty")
    print(f"zeroopt scan sglang --since HEAD: exit {code}, {len(rows)} findings, "
          f"{since['summary']['files']} files")  # fmt: skip
    print()
    print(f"{'line':>5}  {'target':<62} {'zeros':<9} {'empty':<9} deciding line")
    for r in rows:
        e = r["evidence"]
        why = f"{e['line']}: {e['text'][:110]}" if e else ""
        print(f"{r['line']:>5}  {r['target'][:62]:<62} {r['zeros']:<9} {r['empty']:<9} {why}")
    counts = {v: sum(r["empty"] == v for r in rows) for v in ("safe", "unsafe", "unproven")}
    print()
    print("ZO002 after the rewrite:", ", ".join(f"{n} {v}" for v, n in counts.items()))
    print("ZO001 before == ZO002 after at every site:", all(r["zeros"] == r["empty"] for r in rows))
    for r in rows:
        if r["empty"] != "unsafe":
            continue
        f = r["finding"]
        print()
        print(f"unsafe {r['target']} (line {r['line']}): {f['message']}")
        for e in f["evidence"]:
            print(f"  {e['line']:>5} {e['kind']:<14} {e['text']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
