"""Reads of an element no write can cover: the buffer's first element, when every write on every
path provably skips it (`kv_indptr[1:] = cumsum(...)`, then `kv_indptr` read whole).

`State.first_skipped` over-approximates the writes that may have run: each write of a known
region whose literal start along its dimension is past 0 is kept (with its line and text, for the
evidence); any other write, or a write of unknown extent, sets it to None. A definite read of
every element of the buffer, or of a slice that starts at 0, then reads memory no path wrote,
provided the buffer has that element: the evidence says when its allocation shape shows it.
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.state import Ref, Region, View

_LITERAL = re.compile(r"\d+")


def starts_past_first(region: Region | None) -> bool:
    """`x[k:...]` along one dimension with k a literal >= 1 (a step piece `x[r::p]`, r >= 1, or
    an index `x[k]` too): no element with index 0 there. Mask and split pieces never count."""
    if region is None or region.lo is None:
        return False
    return _LITERAL.fullmatch(region.lo) is not None and int(region.lo) >= 1


def write_skips_first(ref: Ref, region: Region | None, full: bool) -> bool:
    """A write through `ref` that provably leaves the buffer's first element alone. A view of a
    region that skips it (`v = x[1:]`) keeps any write through it (full or not) inside it."""
    if ref.view is View.PART:
        return starts_past_first(ref.region)
    if ref.view is View.SELF and not full:
        return starts_past_first(region)
    return False


def reads_first(ref: Ref) -> bool:
    """A read through `ref` of every element it views includes the buffer's first element: the
    buffer itself or any full view of it, or a slice `x[:k]`/`x[0]` (k a literal >= 1) or a
    residue-0 step piece along one dimension."""
    if ref.view in (View.SELF, View.FULL):
        return True
    r = ref.region
    if ref.view is not View.PART or r is None or r.lo is not None:
        return False
    if r.kind and not r.kind.startswith("step"):
        return False
    return r.hi is None or (_LITERAL.fullmatch(r.hi) is not None and int(r.hi) >= 1)


def nonempty_note(dims: tuple[tuple[str | None, frozenset[str]], ...]) -> str:
    """The assumption that decides it: the buffer has a first element. From the allocation
    shape: each dimension a positive literal, `e + k` (k >= 1: non-empty when e >= 0), or any
    other `d`, non-empty when d >= 1."""
    conditions: list[str] = []
    for text, _ in dims:
        if text is None:
            return "assuming the buffer is not empty"
        cond = _positive(text)
        if cond is None:
            return "assuming the buffer is not empty"
        if cond:
            conditions.append(cond)
    shape = ", ".join(t for t, _ in dims if t is not None)
    if not dims:
        return "assuming the buffer is not empty"
    if not conditions:
        return f"the buffer has it: its shape ({shape}) is not empty"
    return f"the buffer has it when {' and '.join(conditions)}: its shape is ({shape})"


def _positive(text: str) -> str | None:
    """'' when the dimension is a positive literal, the condition `e >= 0` for `e + k` (k >= 1),
    `d >= 1` for any other dimension `d`, None for a literal below 1."""
    try:
        e = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return "" if e.value >= 1 else None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(other, ast.Constant) and type(other.value) is int and other.value >= 1:
                return f"{ast.unparse(side)} >= 0"
    return f"{text} >= 1"


def evidence(writes: tuple[tuple[int, str], ...], how: str, note: str) -> str:
    """The finding's text: which element, which writes skip it, and the assumption."""
    shown = "; ".join(f"`{text}` (line {line})" for line, text in writes[:3])
    more = f" and {len(writes) - 3} more" if len(writes) > 3 else ""
    return (
        f"reads the first element (index 0 along every dimension), which no write on any path "
        f"covers: the only writes, {shown}{more}, start past index 0 of their dimension "
        f"({note}): {how}"
    )
