"""The real-code corpus for the scan benchmarks: pinned sglang and vllm release wheels, unpacked.

Real inference engines are what zeroopt is for, and their wheels are the largest honest corpus we
can fetch with nothing but pip. Versions are pinned so numbers from different days compare; the
wheels are cached and unpacked once (only the `.py` files), so a rerun costs nothing.

    python bench/corpus.py [--cache-dir DIR] [--find-links DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

DEFAULT_CACHE = Path(
    os.environ.get("ZEROOPT_BENCH_CACHE", Path.home() / ".cache" / "zeroopt-bench")
)
PINNED: tuple[tuple[str, str], ...] = (("sglang", "0.5.23"), ("vllm", "0.33.0"))
_DONE = ".unpacked"  # marker written last: a half-unpacked tree (killed run) is redone


T = TypeVar("T")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    root: Path  # <cache>/src/<name>-<version>, holding the wheel's .py files

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class CorpusStats:
    files: int
    lines: int
    zeros_files: int  # files whose text mentions `zeros` (what a cheap prefilter keeps)


def _find_wheel(directory: Path, name: str, version: str) -> Path | None:
    if not directory.is_dir():
        return None
    matches = sorted(directory.glob(f"{name}-{version}-*.whl"))
    return matches[0] if matches else None


def download(
    name: str,
    version: str,
    wheel_dir: Path,
    find_links: Sequence[Path] = (),
    extra_args: Sequence[str] = (),
) -> Path:
    """The wheel of `name==version` in `wheel_dir`, fetched with `pip download --no-deps` if missing
    (`extra_args` go to pip, e.g. `--python-version` and `--platform` for another interpreter's wheel)."""
    wheel = _find_wheel(wheel_dir, name, version)
    if wheel is not None:
        return wheel
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-d",
        str(wheel_dir),
        *extra_args,
        f"{name}=={version}",
    ]
    for link in find_links:
        cmd += ["--find-links", str(link)]
    subprocess.run(cmd, check=True)
    wheel = _find_wheel(wheel_dir, name, version)
    if wheel is None:
        raise RuntimeError(f"pip download did not leave a {name}-{version} wheel in {wheel_dir}")
    return wheel


def unpack(wheel: Path, dest: Path) -> Path:
    """Extract the wheel's `.py` members into `dest`, once; a partial earlier attempt is redone."""
    if (dest / _DONE).exists():
        return dest
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.infolist():
            if member.is_dir() or not member.filename.endswith(".py"):
                continue
            target = tmp / member.filename
            if not target.resolve().is_relative_to(tmp.resolve()):  # zip-slip guard
                raise RuntimeError(f"{wheel}: member escapes the tree: {member.filename}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(member))
    (tmp / _DONE).write_text(wheel.name + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def ensure_corpus(
    cache_dir: Path = DEFAULT_CACHE,
    pinned: Iterable[tuple[str, str]] = PINNED,
    find_links: Sequence[Path] = (),
) -> list[Package]:
    """Download (if needed) and unpack (if needed) every pinned wheel; idempotent."""
    packages = []
    for name, version in pinned:
        wheel = download(name, version, cache_dir / "wheels", find_links)
        root = unpack(wheel, cache_dir / "src" / f"{name}-{version}")
        packages.append(Package(name, version, root))
    return packages


def enter_corpus(cache_dir: Path = DEFAULT_CACHE) -> list[str]:
    """Ensure the corpus, change into the folder holding its package roots (paths then read
    `sglang-0.5.23/...`, as `bench/wheel_scan.py` scans them) and return the roots' names."""
    packages = ensure_corpus(cache_dir)
    os.chdir(packages[0].root.parent)
    return [p.root.name for p in packages]


def evenly_spaced(items: Sequence[T], k: int) -> list[T]:
    """`k` items spread evenly over `items` (all of them where k is 0 or not smaller)."""
    if not 0 < k < len(items):
        return list(items)
    return [items[i * len(items) // k] for i in range(k)]


def python_files(roots: Iterable[Path]) -> list[Path]:
    """All `.py` files under `roots`, sorted, so samples are the same on every machine."""
    return sorted(p for root in roots for p in root.rglob("*.py") if p.is_file())


def mentions_zeros(path: Path) -> bool:
    return b"zeros" in path.read_bytes()


def count_lines(paths: Iterable[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in paths)


def stats(paths: Sequence[Path]) -> CorpusStats:
    lines = zeros = 0
    for path in paths:
        data = path.read_bytes()
        lines += data.count(b"\n")
        zeros += b"zeros" in data
    return CorpusStats(files=len(paths), lines=lines, zeros_files=zeros)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument(
        "--find-links",
        type=Path,
        action="append",
        default=[],
        help="local wheel directory for pip (repeatable), e.g. a pre-downloaded copy",
    )
    args = parser.parse_args(argv)
    packages = ensure_corpus(args.cache_dir, find_links=args.find_links)
    total: list[Path] = []
    for pkg in packages:
        files = python_files([pkg.root])
        total += files
        s = stats(files)
        print(
            f"{pkg.label:16} {pkg.root}  {s.files:6,} .py files  {s.lines:10,} lines  "
            f"{s.zeros_files:6,} mention zeros"
        )
    s = stats(total)
    print(
        f"{'total':16} {s.files:6,} .py files  {s.lines:10,} lines  {s.zeros_files:6,} mention zeros"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
