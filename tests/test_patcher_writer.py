"""Atomic writes: never half-written, never over a changed or read-only file, mode kept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from zeroopt.patcher import writer
from zeroopt.patcher.writer import WriteError, atomic_write, content_hash

OLD = b"import torch\nx = torch.zeros(3)\n"
NEW = b"import torch\nx = torch.empty(3)\n"


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_bytes(OLD)
    f.chmod(0o751)
    atomic_write(f, NEW, content_hash(OLD))
    assert f.read_bytes() == NEW
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert _siblings(f) == ["m.py"]  # no temporary file left behind


def test_refuses_a_file_that_changed_since_the_analysis(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_bytes(OLD + b"# edited meanwhile\n")
    with pytest.raises(WriteError, match="changed since it was analysed"):
        atomic_write(f, NEW, content_hash(OLD))
    assert f.read_bytes() == OLD + b"# edited meanwhile\n"
    assert _siblings(f) == ["m.py"]


def test_refuses_without_a_hash(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_bytes(OLD)
    with pytest.raises(WriteError, match="no content hash"):
        atomic_write(f, NEW, "")
    assert f.read_bytes() == OLD


def test_read_only_file_is_a_clear_error_and_nothing_is_lost(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_bytes(OLD)
    f.chmod(0o444)
    try:
        with pytest.raises(WriteError, match="read-only"):
            atomic_write(f, NEW, content_hash(OLD))
        assert f.read_bytes() == OLD
        assert stat.S_IMODE(f.stat().st_mode) == 0o444
        assert _siblings(f) == ["m.py"]
    finally:
        f.chmod(0o644)


def test_failure_during_rename_leaves_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "m.py"
    f.write_bytes(OLD)

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer.os, "replace", broken_replace)
    with pytest.raises(WriteError, match="No space left on device"):
        atomic_write(f, NEW, content_hash(OLD))
    assert f.read_bytes() == OLD
    assert _siblings(f) == ["m.py"]


def test_change_between_check_and_rename_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor saving while we write the temporary file: the last look before rename sees it."""
    f = tmp_path / "m.py"
    f.write_bytes(OLD)
    real_fdopen = os.fdopen

    def fdopen_and_edit(fd: int, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        f.write_bytes(OLD + b"# saved by an editor\n")
        return real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(writer.os, "fdopen", fdopen_and_edit)
    with pytest.raises(WriteError, match="changed since"):
        atomic_write(f, NEW, content_hash(OLD))
    assert f.read_bytes() == OLD + b"# saved by an editor\n"
    assert _siblings(f) == ["m.py"]


def test_writes_through_a_symlink_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(OLD)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    atomic_write(link, NEW, content_hash(OLD))
    assert link.is_symlink()
    assert real.read_bytes() == NEW
