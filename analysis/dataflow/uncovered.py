"""Reads of an element no write can cover: every write on every path leaves some element alone
(`kv_indptr[1:] = cumsum(...)` never writes element 0; `mask[:, :, 0] = 1` on a `(b, t, 2)`
buffer never writes `mask[0, 0, 1]`), and a definite read takes that element.

`State.may_writes` over-approximates the writes that may have run on some path: each write of a
known region is kept as an interval along its dimension, `[lo, hi)`, with a bound that is not a
literal widened (a start to 0, an end to the end of the dimension; a step, mask or split piece
to everything from its start), with its line and text for the evidence. Any other write, or one
of unknown extent, sets it to None. An element is never written when, along each dimension, its
index lies in no interval of that dimension. A definite read of every element (an operator, a
reduction, `torch.cat`: `whole`) or of a literal slice or index that holds it then reads memory no
path wrote, provided the buffer has that element: index 0 when the buffer is not empty (said in the
evidence, from the allocation shape when it shows it), a larger index only when the allocation's
literal size along that dimension shows it. Not claimed where the function binds a name of the
shape to a negative literal (`e = -1` before `zeros(e + 1)`: the buffer may be empty;
dataflow/effects.py).
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.state import Ref, Region, View

# (dim, lo, hi, line, text): a write on some path touched at most [lo, hi) along dim (hi None: to
# the end), everything along the other dimensions.
MayWrite = tuple[int, int, int | None, int, str]
Dims = tuple[tuple[str | None, frozenset[str]], ...]

_LITERAL = re.compile(r"\d+")


def _literal(text: str | None) -> int | None:
    return int(text) if text is not None and _LITERAL.fullmatch(text) else None


def write_extent(
    ref: Ref, region: Region | None, full: bool, resized: bool = False
) -> tuple[int, int, int | None] | None:
    """(dim, lo, hi) bounding what a write through `ref` may touch; None when it may touch any
    element. A view of a known region (`v = x[1:]`) keeps any write through it inside it. An
    `out=` view (`resized`) only from its start along the first dimension: PyTorch resizes it
    to the result's shape from its storage offset, so `out=x[0]` may write x[1] too, and
    `out=x[:, 1:]` column 0 of later rows."""
    if ref.view is View.PART and resized:
        r = ref.region
        if r is None or r.kind or r.dim != 0:
            return None
        return 0, _literal(r.lo) or 0, None
    if ref.view is View.PART:
        r = ref.region
    elif ref.view is View.SELF and not full:
        r = region
    else:
        return None
    if r is None:
        return None
    lo = _literal(r.lo) or 0  # a start that is a name may be anything from 0
    if r.kind:
        return r.dim, lo, None  # a step, mask or split piece: anything from its start on
    return r.dim, lo, _literal(r.hi)  # an end that is a name may be the end


def _read_range(ref: Ref) -> tuple[int, int, int | None, int] | bool | None:
    """What a read of every element `ref` views surely reads: True for every element of the
    buffer, (dim, lo, hi, tail) for a literal slice or index along one dimension (hi None: to the
    end, less `tail` elements for a negative literal end, `x[:-1]`), None when that is not known
    (a bound that is a name may make it empty)."""
    if ref.view in (View.SELF, View.FULL):
        return True
    r = ref.region
    if ref.view is not View.PART or r is None:
        return None
    lo = 0 if r.lo is None else _literal(r.lo)
    if lo is None:
        return None
    if r.kind.startswith("step"):
        return r.dim, lo, lo + 1, 0  # surely its first element, the residue itself
    if r.kind:
        return None
    if r.hi is None:
        return r.dim, lo, None, 0
    tail = _negative_literal(r.hi)
    if tail is not None:
        return r.dim, lo, None, tail  # `x[lo:-k]`: from lo while the dimension exceeds lo + k
    hi = _literal(r.hi)
    return None if hi is None or hi <= lo else (r.dim, lo, hi, 0)


def _negative_literal(text: str) -> int | None:
    """k for the text `-k` of a negative literal slice end (k >= 1)."""
    if text.startswith("-") and _LITERAL.fullmatch(text[1:]) and int(text[1:]) > 0:
        return int(text[1:])
    return None


def _ndim(dims: Dims) -> int | None:
    """The number of dimensions, when the allocation shows it: several sizes, or one int."""
    if len(dims) >= 2 or (len(dims) == 1 and dims[0][0] is not None):
        return len(dims)
    return None


def uncovered_element(writes: tuple[MayWrite, ...], ref: Ref, dims: Dims) -> list[int] | None:
    """An element (an index per dimension; a single index 0 standing for the first element when
    the number of dimensions is not known) that no may-write covers and a read through `ref`
    surely reads, or None."""
    read = _read_range(ref)
    if read is None or read is False:
        return None
    ndim = _ndim(dims)
    norm: list[tuple[int, int, int | None]] = []
    for dim, lo, hi, _, _ in writes:
        if dim < 0 and ndim is not None:
            dim += ndim
        norm.append((dim, lo, hi))
    if isinstance(read, tuple) and read[0] < 0 and ndim is not None:
        read = (read[0] + ndim, read[1], read[2], read[3])
    mentioned = [d for d, _, _ in norm] + ([read[0]] if isinstance(read, tuple) else [])
    if any(d < 0 for d in mentioned) or (ndim is not None and any(d >= ndim for d in mentioned)):
        # The first element only: index 0 along every dimension, whichever each one is.
        if any(lo == 0 for _, lo, _ in norm):
            return None
        if isinstance(read, tuple) and read[1] != 0:
            return None
        return [0]
    # Without the number of dimensions: the dimensions the writes and the read name exist (a
    # write of `x[:, 1:]` ran), the others hold index 0 and need no choice.
    count = ndim if ndim is not None else max(mentioned, default=0) + 1
    element = []
    for d in range(count):
        size = _literal(dims[d][0]) if ndim is not None else None
        lo_r, hi_r = 0, size
        if isinstance(read, tuple) and read[0] == d:
            lo_r, hi_r = read[1], read[2]
            if hi_r is None and size is not None:
                hi_r = size - read[3]  # `x[:-k]` of a literal size: it ends k before the end
        spans = [(lo, hi) for dim, lo, hi in norm if dim == d]
        candidates = sorted({lo_r, *(hi for _, hi in spans if hi is not None)})
        chosen = None
        for c in candidates:
            if c < lo_r or (hi_r is not None and c >= hi_r):
                continue
            if c > 0 and c != lo_r and (size is None or c >= size):
                continue  # index c exists where the literal size shows it ...
            if c > 0 and size is not None and c >= size:
                continue  # ... or where a read slice starts there (`x[1:]` assumed not empty)
            if any(lo <= c and (hi is None or c < hi) for lo, hi in spans):
                continue
            chosen = c
            break
        if chosen is None:
            return None
        element.append(chosen)
    return element


def nonempty_note(dims: Dims, element: list[int], ref: Ref | None = None) -> str:
    """The assumption that decides it: the buffer has that element. Index 0 needs the dimension
    not to be empty (a positive literal; `e + k`, k >= 1, when e >= 0; any other `d` when
    d >= 1); a larger index was checked against the literal size, or is where the read slice
    starts (then that slice is assumed not empty). A read `x[:-k]` (`ref`) holds index c only
    where its dimension exceeds c + k: a literal size was checked, another is the condition."""
    read = _read_range(ref) if ref is not None else None
    tail = read[3] if isinstance(read, tuple) else 0
    if _ndim(dims) is None or len(element) != len(dims):
        more = " and the slice read is not empty" if any(element) or tail else ""
        return f"assuming the buffer is not empty{more}"
    dim = read[0] % len(dims) if isinstance(read, tuple) and tail else -1
    conditions: list[str] = []
    for d, ((text, _), c) in enumerate(zip(dims, element, strict=True)):
        if d == dim and _literal(text) is None:
            if text is None:
                return "assuming the buffer is not empty and the slice read is not empty"
            conditions.append(f"{_exceeds(text, c + tail)} (the slice read is not empty)")
            continue
        if c > 0:
            if text is None:
                return "assuming the buffer is not empty and the slice read is not empty"
            if _literal(text) is None:
                conditions.append(f"{text} > {c} (the slice read is not empty)")
            continue
        if text is None:
            return "assuming the buffer is not empty"
        cond = _positive(text)
        if cond is None:
            return "assuming the buffer is not empty"
        if cond:
            conditions.append(cond)
    shape = ", ".join(str(t) for t, _ in dims)
    if not conditions:
        return f"the buffer has it: its shape is ({shape})"
    return f"the buffer has it when {' and '.join(conditions)}: its shape is ({shape})"


def _exceeds(text: str, m: int) -> str:
    """The condition `text > m`, as `e >= m - k + 1` for `e + k` (k a literal)."""
    try:
        e = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"{text} > {m}"
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(other, ast.Constant) and type(other.value) is int:
                return f"{ast.unparse(side)} >= {m - other.value + 1}"
    return f"{text} > {m}"


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


def evidence(
    writes: tuple[MayWrite, ...], element: list[int], dims: Dims, how: str, note: str
) -> str:
    """The finding's text: which element, which writes leave it alone, and the assumption."""
    if not any(element):
        which = "the first element (index 0 along every dimension)"
    else:
        which = f"element [{', '.join(map(str, element))}]"
        if _ndim(dims) is None:
            which += " (index 0 along any further dimension)"
    shown = "; ".join(f"`{text}` (line {line})" for _, _, _, line, text in writes[:3])
    more = f" and {len(writes) - 3} more" if len(writes) > 3 else ""
    return (
        f"reads {which}, which no write on any path covers: the only writes, {shown}{more}, "
        f"leave it alone ({note}): {how}"
    )
