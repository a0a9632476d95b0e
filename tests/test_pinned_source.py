"""bench/pinned_source.py: a released file is taken from its pinned wheel only when both the
wheel's and the file's sha256 match, and a damaged cached copy is replaced, never used."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _module() -> ModuleType:
    name = "zeroopt_bench_pinned_source"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / "pinned_source.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


MEMBER = "pkg/mod.py"
TEXT = b"x = 1\n"


def _wheel(cache: Path, text: bytes = TEXT) -> tuple[str, str]:
    wheels = cache / "wheels"
    wheels.mkdir(parents=True)
    path = wheels / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(MEMBER, text)
    return path.name, hashlib.sha256(path.read_bytes()).hexdigest()


def _pin(ps: ModuleType, wheel: str, wheel_sha: str, sha: str) -> object:
    return ps.Pin("pkg", "1.0", wheel, wheel_sha, MEMBER, sha)


def test_extracts_checks_and_replaces_a_damaged_copy(tmp_path: Path) -> None:
    ps = _module()
    wheel, wheel_sha = _wheel(tmp_path)
    pin = _pin(ps, wheel, wheel_sha, hashlib.sha256(TEXT).hexdigest())
    path = ps.pinned_file(pin, tmp_path)
    assert path.read_bytes() == TEXT and path == ps.cached_path(pin, tmp_path)
    path.write_bytes(b"x = 2\n")  # a copy that is no longer the released file
    assert ps.pinned_file(pin, tmp_path).read_bytes() == TEXT


def test_refuses_a_wheel_or_file_with_another_checksum(tmp_path: Path) -> None:
    ps = _module()
    wheel, wheel_sha = _wheel(tmp_path)
    with pytest.raises(ps.SourceUnavailable, match="sha256"):
        ps.pinned_file(_pin(ps, wheel, "0" * 64, hashlib.sha256(TEXT).hexdigest()), tmp_path)
    with pytest.raises(ps.SourceUnavailable, match="sha256"):
        ps.pinned_file(_pin(ps, wheel, wheel_sha, "0" * 64), tmp_path)
    assert not ps.cached_path(_pin(ps, wheel, wheel_sha, "0" * 64), tmp_path).exists()


def test_a_checked_copy_is_used_without_the_wheel(tmp_path: Path) -> None:
    ps = _module()
    src, dest = tmp_path / "src", tmp_path / "dest"
    wheel, wheel_sha = _wheel(src)
    pin = _pin(ps, wheel, wheel_sha, hashlib.sha256(TEXT).hexdigest())
    ps.pinned_file(pin, src)
    (src / "wheels" / wheel).unlink()  # the exported cache must not need the wheel
    target = ps.cached_path(pin, dest)
    target.parent.mkdir(parents=True)
    target.write_bytes(ps.cached_path(pin, src).read_bytes())
    assert ps.pinned_file(pin, dest).read_bytes() == TEXT
