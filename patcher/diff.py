"""Unified diffs that `git apply` and `patch -p1` turn into exactly the bytes `apply` writes.

Everything is bytes: lines are split on b"\\n" only (as git and patch do, so a CR stays part of
its line and CRLF files round-trip), the encoding of the file is never touched, a last line
without newline gets the `\\ No newline at end of file` marker, and paths carry `a/` and `b/`
prefixes relative to the repository root, quoted the way git quotes them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_LINES = re.compile(rb"[^\n]*\n|[^\n]+\Z")
_NO_NEWLINE = b"\\ No newline at end of file\n"
# Characters git quotes in paths (core.quotePath=true): controls, '"', '\\', and non-ASCII bytes.
_ESCAPES = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
            0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}  # fmt: skip


@dataclass(frozen=True)
class FileChange:
    path: str  # POSIX path relative to the repository root
    old: bytes
    new: bytes


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their endings, split on LF only (CR and CRLF stay inside the line)."""
    return _LINES.findall(data)


def quote_path(path: str) -> bytes:
    """`a/<path>` in git's spelling: C-quoted when it holds special or non-ASCII bytes."""
    raw = path.encode("utf-8", "surrogateescape")
    if not any(b < 0x20 or b >= 0x7F or b in (0x22, 0x5C) for b in raw):
        return raw
    out = bytearray(b'"')
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


def _prefixed(prefix: str, path: str) -> bytes:
    quoted = quote_path(path)
    if quoted.startswith(b'"'):
        return b'"' + prefix.encode() + quoted[1:]
    return prefix.encode() + quoted


def file_diff(change: FileChange, context: int = 3) -> bytes:
    """One file's diff in git's format; empty when the content is the same."""
    if change.old == change.new:
        return b""
    old, new = _prefixed("a/", change.path), _prefixed("b/", change.path)
    # As git does: a name with a space ends in a tab on the ---/+++ lines, where GNU patch
    # expects the (absent) timestamp, so it does not cut the name at the space.
    tab = b"\t" if b" " in old else b""
    body = difflib.diff_bytes(
        difflib.unified_diff,
        split_lines(change.old),
        split_lines(change.new),
        fromfile=old + tab,
        tofile=new + tab,
        n=context,
    )
    out = [b"diff --git " + old + b" " + new + b"\n"]
    for line in body:
        out.append(line)
        if not line.endswith(b"\n"):
            out.append(b"\n" + _NO_NEWLINE)
    return b"".join(out)


def comment_block(lines: Iterable[str]) -> bytes:
    """Lines before the first `diff --git`, which git apply and patch skip as commentary.

    Each line starts with `# ` and holds no line break, so none can pose as a diff header.
    """
    out = []
    for line in lines:
        flat = " ".join(line.replace("\r", " ").split("\n"))
        out.append(("# " + flat).rstrip() + "\n")
    return "".join(out).encode("utf-8", "replace")


def make_patch(changes: Sequence[FileChange], header: Iterable[str] = ()) -> bytes:
    """A patch for all `changes` (unchanged files are left out), preceded by a comment block."""
    diffs = [file_diff(change) for change in sorted(changes, key=lambda c: c.path)]
    diffs = [d for d in diffs if d]
    if not diffs:
        return b""
    head = comment_block(header)
    return head + (b"\n" if head else b"") + b"".join(diffs)
