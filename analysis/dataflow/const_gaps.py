"""Writes whose region leaves a constant set of positions alone, and certain reads of one of them.

The third gap pattern of gaps.py: `offsets[1:] = torch.cumsum(lens, 0)` (or
`torch.cumsum(lens, 0, out=offsets[1:])`) never writes position 0 of a `torch.zeros(bs + 1)`,
whatever `bs` is; `x[:-1] = v` never writes the last position; `x[2:7] = v` leaves [0, 2) and,
where the size is provably above 7, position 7; `m[:, 0] = 1` leaves position 1 of a dimension
of size provably >= 2. A position is named from the start (`("start", i)`: index i) or from the
end (`("end", i)`: index size - i), and each slice bound the same way, so that the comparisons
below hold for every size the allocation may have: an exact int literal, or `e + c` (int c, and
`e >= 0`, which a size expression is when it is a count: stated in the evidence for a name).

A read is `unsafe` by this pattern only when (dataflow/effects.py, `read`):
- every write that may have run on any path (`State.may_writes`) carries such a gap, all along
  one dimension, and one position p is outside every one of them;
- p provably exists: the allocated size along that dimension is more than its index (from the
  end: at least i), for every size the shape allows (a bare name may be 0: never enough);
- the read surely takes p: a whole read of the buffer, or of a view `x[lo:hi]` / `x[j]` that
  provably holds p; the other dimensions are assumed not empty (said in the evidence).

Soundness of the write side. A store `x[lo:hi] = v` writes only inside the slice. A write
through a view of a slice (`out=x[1:]`, `v = x[1:]; v.copy_(...)`) is kept inside the view only
from its start, along the first dimension: PyTorch may resize an `out=` tensor to the result's
shape, keeping its storage offset, so a view `x[:-1]` may grow into the last row, and a
non-contiguous view `x[:, 1:]` may be laid out again over column 0 of later rows. A bound that is
not an int literal excludes nothing on its side. Writes in a loop that does not also run the
allocation never carry a gap (gaps.py `_outside_loops`), nor writes above the allocation.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from zeroopt.analysis.allocations import called_name, shape_args
from zeroopt.analysis.resolve import walk_all, walk_bfs
from zeroopt.analysis.state import Gap, Ref, Region, State, View

Pos = tuple[str, int]  # ("start", i): index i; ("end", i): index size - i
_ALLOCS = frozenset({"zeros", "new_zeros", "empty", "new_empty"})
_INT = re.compile(r"-?\d+")
_COUNTS = frozenset({"len", "numel", "nelement", "size"})  # calls whose int result is >= 0
_LIMIT = 64  # positions tried from each end


@dataclass(frozen=True)
class _Size:
    """What is known of one dimension's size: exact (an int literal) or at least `least`."""

    exact: int | None
    least: int
    text: str
    assumed: str = ""  # the condition the lower bound needs (`bs >= 0`), "" when none


def _bound(text: str | None, default: Pos) -> Pos | None:
    if text is None:
        return default
    if not _INT.fullmatch(text):
        return None  # a name: it excludes nothing on its side
    value = int(text)
    return ("end", -value) if value < 0 else ("start", value)


def _index(p: Pos, size: int) -> int:
    return p[1] if p[0] == "start" else size - p[1]


def _clamp(b: Pos, size: int) -> int:
    return min(max(_index(b, size), 0), size)


def _before(p: Pos, b: Pos | None, size: _Size) -> bool:
    """Provably p < b (b clamped to [0, size] as a slice bound is), for an existing p."""
    if b is None:
        return False
    if size.exact is not None:
        return _index(p, size.exact) < _clamp(b, size.exact)
    if p[0] == b[0] == "start":
        return p[1] < b[1]
    if p[0] == b[0] == "end":
        return p[1] > b[1]
    if p[0] == "start":  # i < size - a for every size >= least
        return size.least > p[1] + b[1]
    return False  # size - i < a: not for large sizes


def _at_or_after(p: Pos, b: Pos | None, size: _Size) -> bool:
    """Provably p >= b (b clamped to [0, size]), for an existing p."""
    if b is None:
        return False
    if size.exact is not None:
        return _index(p, size.exact) >= _clamp(b, size.exact)
    if p[0] == b[0] == "start":
        return p[1] >= b[1]
    if p[0] == b[0] == "end":
        return p[1] <= b[1]
    if p[0] == "end":  # size - i >= a for every size >= least
        return size.least >= b[1] + p[1]
    return False  # i >= size - a: not for large sizes


def _exists(p: Pos, size: _Size) -> bool:
    if p[0] == "start":
        return size.least > p[1]
    return p[1] >= 1 and size.least >= p[1]


def _nonnegative(e: ast.expr) -> str | None:
    """'' when `e` is a count by construction (`len(x)`, `x.numel()`, `x.shape[0]`, a product
    or sum of counts), its text when it is a name or attribute (assumed a count), else None."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return "" if e.value >= 0 else None
    if isinstance(e, ast.Call):
        return "" if called_name(e) in _COUNTS else None
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute):
        return "" if e.value.attr == "shape" else None
    if isinstance(e, ast.Name | ast.Attribute):
        return ast.unparse(e)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Mult | ast.FloorDiv):
        left, right = _nonnegative(e.left), _nonnegative(e.right)
        if left is None or right is None:
            return None
        return " and ".join(t for t in (left, right) if t)
    return None


def _size(e: ast.expr) -> _Size:
    text = ast.unparse(e)
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return _Size(e.value, max(e.value, 0), text)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(other, ast.Constant) and type(other.value) is int and other.value >= 1:
                names = _nonnegative(side)
                if names is not None:
                    cond = " and ".join(f"{n} >= 0" for n in names.split(" and ") if n)
                    return _Size(None, other.value, text, cond)
    return _Size(None, 0, text)


@functools.lru_cache(maxsize=64)
def negative_size_name(alloc: ast.Call, func: ast.AST) -> str:
    """A name of the allocation's shape (`e` of `zeros(e + 1)`, assumed a count) that `func`
    binds to a negative int literal (`e = -1`): the size may then be 0, and no position exists.
    Asked at every slice write and uncovered read of the buffer: the function is walked once per
    allocation (nodes hash by identity)."""
    names = {n.id for d in shape_args(alloc) or [] for n in walk_all(d) if isinstance(n, ast.Name)}
    if not names:
        return ""  # no name of the shape: nothing to find
    for n in walk_bfs([func]):  # ast.walk's order, without context and operator leaves
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            hit = [t.id for t in targets if isinstance(t, ast.Name) and t.id in names]
            if hit and _nonnegative(n.value) is None:
                try:
                    value = ast.literal_eval(n.value)
                except (ValueError, TypeError, SyntaxError, RecursionError):
                    continue
                if type(value) is int and value < 0:
                    return hit[0]
    return ""


def alloc_sizes(alloc: ast.Call) -> list[_Size] | None:
    """The allocation's dimensions, when a zeros/empty call shows its shape."""
    name = called_name(alloc)
    if name not in _ALLOCS:
        return None
    dims = shape_args(alloc)
    if not dims or any(isinstance(d, ast.Starred) for d in dims):
        return None
    if len(dims) == 1 and isinstance(dims[0], ast.Name) and name.startswith("new"):
        return None  # `x.new_zeros(shape)`: a shape tuple in a name
    return [_size(d) for d in dims]


def const_gap(
    alloc: ast.Call, ref: Ref, region: Region | None, node: ast.AST, line: int, text: str,
    outside_loops: bool,
) -> Gap | None:  # fmt: skip
    """The positions a write of a known slice leaves alone, along its dimension (key: the
    excluded-from bounds `lo|hi`, `?` where a side excludes nothing)."""
    if not outside_loops or line <= alloc.lineno:
        return None
    sizes = alloc_sizes(alloc)
    if sizes is None:
        return None
    head_only = False
    if ref.view is View.PART:
        r, head_only = ref.region, True  # a view: kept inside it from its start only
    elif ref.view is View.SELF and isinstance(node, ast.Subscript):
        r = region
    else:
        return None
    if r is None or r.kind:
        return None
    dim = r.dim + len(sizes) if r.dim < 0 else r.dim
    if not 0 <= dim < len(sizes) or (head_only and dim != 0):
        return None
    lo = _bound(r.lo, ("start", 0))
    hi = None if head_only else _bound(r.hi, ("end", 0))
    if lo == ("start", 0):
        lo = None
    if hi == ("end", 0):
        hi = None
    if lo is None and hi is None:
        return None
    key = f"{_text(lo)}|{_text(hi)}"
    how = "a view of the buffer (its start only)" if head_only else "a slice"
    note = f"`{text}` (line {line}) writes {how} `{r.text()}` along dimension {dim}"
    return Gap("const", dim, key, note, line, text)


def _text(b: Pos | None) -> str:
    return "?" if b is None else str(b[1] if b[0] == "start" else -b[1])


def _parse(key: str) -> tuple[Pos | None, Pos | None]:
    lo, hi = key.split("|")
    return (None if lo == "?" else _bound(lo, ("start", 0))), (
        None if hi == "?" else _bound(hi, ("end", 0))
    )


def _candidates(gaps: list[Gap]) -> list[Pos]:
    top = 2
    for g in gaps:
        for b in _parse(g.key):
            if b is not None:
                top = max(top, b[1] + 2)
    top = min(top, _LIMIT)
    return [*(("start", i) for i in range(top)), *(("end", i) for i in range(1, top))]


def _read_holds(p: Pos, r: Region, size: _Size) -> bool:
    lo = _bound(r.lo, ("start", 0))
    hi = _bound(r.hi, ("end", 0))
    return _at_or_after(p, lo, size) and _before(p, hi, size)


def _say(p: Pos) -> str:
    return f"index {p[1]}" if p[0] == "start" else f"index size - {p[1]} (from the end)"


def const_unwritten(st: State, ref: Ref, alloc: ast.Call) -> str | None:
    """Evidence that a certain read through `ref` takes a position every write that may have
    run leaves alone, or None."""
    writes = st.may_writes
    if not writes or ref.view is View.MAYBE:
        return None
    sizes = alloc_sizes(alloc)
    if sizes is None:
        return None
    by_write: dict[tuple[int, str], list[Gap]] = {}
    for g in st.gaps:  # one write may have left different gaps on different paths: all count
        by_write.setdefault((g.line, g.text), []).append(g)
    gaps: list[Gap] = []
    for w in writes:
        found = by_write.get((w[3], w[4]), [])
        if not found or any(g.kind != "const" for g in found):
            return None
        gaps += found
    if len({g.dim for g in gaps}) != 1:
        return None
    dim = gaps[0].dim
    size = sizes[dim]
    read: Region | None = None
    if ref.view is View.PART:
        read = ref.region
        if read is None or read.kind:
            return None
        rdim = read.dim + len(sizes) if read.dim < 0 else read.dim
        if not 0 <= rdim < len(sizes):
            return None
        if rdim != dim:  # along another dimension: it must surely hold some position there
            other = sizes[rdim]
            if not any(_exists(q, other) and _read_holds(q, read, other) for q in _candidates([])):
                return None
            read = None
    for p in _candidates(gaps):
        if not _exists(p, size):
            continue
        if not all(_before(p, lo, size) or _at_or_after(p, hi, size) for lo, hi in map(
            _parse, (g.key for g in gaps)
        )):  # fmt: skip
            continue
        if read is not None and not _read_holds(p, read, size):
            continue
        return _evidence(p, dim, size, sizes, gaps)
    return None


def _evidence(p: Pos, dim: int, size: _Size, sizes: list[_Size], gaps: list[Gap]) -> str:
    notes = "; ".join(dict.fromkeys(g.note for g in gaps))
    if size.exact is not None:
        exists = f"the allocated size `{size.text}` has it"
    else:
        exists = f"the allocated size `{size.text}` is at least {size.least}"
        if size.assumed:
            exists += f" (assuming `{size.assumed}`)"
    others = [f"`{s.text}`" for k, s in enumerate(sizes) if k != dim and s.least < 1]
    more = f"; assuming {', '.join(others)} not 0" if others else ""
    return (
        f"reads {_say(p)} along dimension {dim}, which every write that may have run leaves "
        f"alone: {notes}; {exists}{more}"
    )
