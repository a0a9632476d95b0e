"""Write a rewritten file so that nothing is ever half-written or silently lost.

The new bytes go to a temporary file in the same directory (same filesystem, so the rename is
atomic) and replace the original with `os.replace`. Before that the file on disk is compared with
the content the findings were computed from: positions from an old analysis must never be applied
to new content. A read-only file is refused explicitly, because `os.replace` would happily replace
it (only the directory's permissions matter for a rename).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path


class WriteError(Exception):
    """The file was left exactly as it was; the message says why."""


def content_hash(data: bytes) -> str:
    """The hash the analysis records in `FileResult.source_hash`."""
    return hashlib.sha256(data).hexdigest()


def check_unchanged(path: Path, expected_hash: str) -> bytes:
    """Read `path` and return its bytes, or raise if they are not the analysed content."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WriteError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not expected_hash:
        raise WriteError(f"{path}: no content hash from the analysis; re-run the scan")
    if content_hash(data) != expected_hash:
        raise WriteError(f"{path} changed since it was analysed; re-run to pick up the new content")
    return data


def atomic_write(path: Path, data: bytes, expected_hash: str) -> None:
    """Replace `path` with `data` if it still holds the content hashed as `expected_hash`.

    Writes through a symlink to its target (replacing the link itself would break it), keeps the
    permission bits, and cleans up the temporary file on any failure.
    """
    target = path.resolve() if path.is_symlink() else path
    check_unchanged(target, expected_hash)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as exc:
        raise WriteError(f"cannot stat {path}: {exc.strerror or exc}") from exc
    # The mode bits as well as access(): root may write anywhere, but 0444 still says "read-only".
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise WriteError(f"{path} is read-only; left unchanged (make it writable or use --diff)")
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".zeroopt", dir=target.parent
        )
    except OSError as exc:
        raise WriteError(
            f"cannot create a temporary file next to {path}: {exc.strerror or exc}; left unchanged"
        ) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        # Last look just before the rename: narrows the window for an editor saving meanwhile.
        check_unchanged(target, expected_hash)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, WriteError):
            raise
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write {path}: {exc.strerror or exc}; left unchanged") from exc
        raise
