"""The `partial` shape (`--wp-shapes partial`): the function that allocates a zeros buffer writes
PART of it, then hands it to another function: returned to a caller (a public function, a
private one, one slot of a tuple) or stored on `self` by `__init__` and read by a public method
(analysis/partial_reads.py carries the writes across). The allocator's writes are literal slices
and indices along either dimension, negative ones, steps, views (`narrow`, a sliced name), `out=`
of a slice, and the ones whose extent is not known or not certain: bounds that are parameters,
a write under a flag, a loop, an index tensor. The reader writes first or not (in part, in full,
under a flag, accumulating in place), then reads all of it (an operator, a reduction, a scan,
`torch.cat`) or a slice, a column or an element of it.

Each statement comes with the elements it writes or reads for given `n` and `flag` (rows along
dimension 0; columns of a 2-D buffer): poisoning the allocation changes the result exactly when,
for some input of the bench (gen_model.INPUTS), the read takes an element no write reached (every
read here carries each element it takes into the result; `t += 1` keeps an unwritten element
unwritten).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.soundness.gen_model import INPUTS, make_inp
from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

# Rows a statement touches, given (input variant, n, flag, number of rows); columns given the
# number of columns.
Rows = Callable[[int, int, bool, int], list[int]]
Cols = Callable[[int], list[int]]
_ALL: Cols = lambda c: list(range(c))  # noqa: E731


def _sl(s: slice) -> Rows:
    return lambda v, n, flag, r: list(range(r))[s]


def _col(s: slice) -> Cols:
    return lambda c: list(range(c))[s]


WHERE = ("public", "private", "slot", "self", "self")
# The allocator's writes of `T` (its buffer), with the rows and columns they write; 2-D only in
# WRITES_2D.
WRITES: tuple[tuple[str, Rows, Cols], ...] = (
    ("T[1:] = C", _sl(slice(1, None)), _ALL),
    ("T[0] = C", _sl(slice(0, 1)), _ALL),
    ("T[:1] = C", _sl(slice(None, 1)), _ALL),
    ("T[2:] = C", _sl(slice(2, None)), _ALL),
    ("T[::2] = C", _sl(slice(None, None, 2)), _ALL),
    ("T[-1] = C", _sl(slice(-1, None)), _ALL),
    ("T[:-1] = C", _sl(slice(None, -1)), _ALL),
    ("T[1:3] = C", _sl(slice(1, 3)), _ALL),
    ("T[:n] = C", lambda v, n, f, r: list(range(r))[:n], _ALL),
    ("T[n:] = C", lambda v, n, f, r: list(range(r))[n:], _ALL),
    ("T[1:n] = C", lambda v, n, f, r: list(range(r))[1:n], _ALL),
    ("if flag:\n    T[:1] = C", lambda v, n, f, r: [0] if f else [], _ALL),
    ("for j in range(1, T.shape[0]):\n    T[j] = C", _sl(slice(1, None)), _ALL),
    ("T[torch.tensor([0, 2])] = C", lambda v, n, f, r: [0, 2], _ALL),
    # An index write that leaves the positions `topk` does not pick alone (dataflow/gaps.py).
    ("T[SRC.topk(2).indices] = C", lambda v, n, f, r: _top(v, r, 2), _ALL),
    ("T.narrow(0, 1, 2).fill_(C)", _sl(slice(1, 3)), _ALL),
    ("v = T[1:]\nv.fill_(C)", _sl(slice(1, None)), _ALL),
    ("torch.mul(torch.ones_like(T[1:]), 2, out=T[1:])", _sl(slice(1, None)), _ALL),
)
WRITES_2D: tuple[tuple[str, Rows, Cols], ...] = (
    ("T[:, 1:] = C", _sl(slice(None)), _col(slice(1, None))),
    ("T[:, 0] = C", _sl(slice(None)), _col(slice(0, 1))),
    ("T[:, :2] = C", _sl(slice(None)), _col(slice(None, 2))),
    ("T[1:, :] = C", _sl(slice(1, None)), _ALL),
    ("T[:, -1] = C", _sl(slice(None)), _col(slice(-1, None))),
    ("T[0, 1:] = C", _sl(slice(0, 1)), _col(slice(1, None))),
)
# What the reader does first with `t`: nothing, write part, write all, under a flag, accumulate.
FIRST: tuple[tuple[str, Rows], ...] = (
    ("", lambda v, n, f, r: []),
    ("", lambda v, n, f, r: []),
    ("", lambda v, n, f, r: []),
    ("t[:1] = C", _sl(slice(None, 1))),
    ("t[0] = C", _sl(slice(0, 1))),
    ("t[2:] = C", _sl(slice(2, None))),
    ("t.fill_(C)", _sl(slice(None))),
    ("if flag:\n    t.fill_(C)", lambda v, n, f, r: list(range(r)) if f else []),
    ("t += 1", lambda v, n, f, r: []),  # reads it all, writes nothing that was unwritten
)
READS: tuple[tuple[str, Rows, Cols], ...] = (
    ("t.float().sum()", _sl(slice(None)), _ALL),
    ("(t * 2).float()", _sl(slice(None)), _ALL),
    ("t.cumsum(0).float()", _sl(slice(None)), _ALL),
    ("torch.cat([t, t]).float().sum()", _sl(slice(None)), _ALL),
    ("t[:1].float().sum()", _sl(slice(None, 1)), _ALL),
    ("t[1:].float().sum()", _sl(slice(1, None)), _ALL),
    ("t[0].float().sum()", _sl(slice(0, 1)), _ALL),
    ("t[-1].float().sum()", _sl(slice(-1, None)), _ALL),
    ("t[2:4].float().sum()", _sl(slice(2, 4)), _ALL),
)
READS_2D: tuple[tuple[str, Rows, Cols], ...] = (
    ("t[:, 0].float().sum()", _sl(slice(None)), _col(slice(0, 1))),
    ("t[:, 3].float().sum()", _sl(slice(None)), _col(slice(3, 4))),
    ("t[1:, 1:].float().sum()", _sl(slice(1, None)), _col(slice(1, None))),
)


def _top(variant: int, rows: int, k: int) -> list[int]:
    """The rows `SRC.topk(k).indices` picks: SRC is a column (4 rows) or a row (8) of the input."""
    inp = make_inp(variant)
    src = inp[:, 0] if rows == inp.shape[0] else inp[1]
    return [int(i) for i in src.topk(k).indices]


def _cells(rows: list[int], cols: list[int]) -> set[tuple[int, int]]:
    return {(r, c) for r in rows for c in cols}


class PartialShapes(Blocks):
    def shape_partial(self, u: str, b: Buf) -> Piece:
        x = b.name
        where = self.ch.choice(list(WHERE))
        tags = {f"wp-partial-{where}"}
        two = len(b.shape) == 2
        nrows, ncols = b.shape[0], (b.shape[1] if two else 1)
        store = where == "self" and self.ch.chance(50)  # `self.x = zeros(...)`, then self.x[...]
        target = f"self.{x}" if store else x
        chosen: list[tuple[str, Rows, Cols]] = []
        for _ in range(self.ch.integer(1, 2) if self.ch.chance(90) else 0):
            chosen.append(self.ch.choice([*WRITES, *WRITES_2D] if two else list(WRITES)))
        writes: list[str] = []
        for text, _, _ in chosen:
            tags.add(f"wp-partial-write-{text.split(chr(10))[-1][:14]}")
            src = "inp[:, 0]" if two else "inp[1]"
            text = text.replace("SRC", src).replace("T", target).replace("C", self.const(b))
            writes += text.split("\n")
        first, first_rows = self.ch.choice(list(FIRST))
        read, read_rows, read_cols = self.ch.choice([*READS, *READS_2D] if two else list(READS))
        tags.add(f"wp-partial-read-{read[:12]}")
        differs = False
        for variant, n, _, flag in INPUTS:
            written: set[tuple[int, int]] = set()
            for _, rows, cols in chosen:
                written |= _cells(rows(variant, n, flag, nrows), cols(ncols))
            written |= _cells(first_rows(variant, n, flag, nrows), _ALL(ncols))
            taken = _cells(read_rows(variant, n, flag, nrows), read_cols(ncols))
            differs = differs or bool(taken - written)
        first = first.replace("C", self.const(b))
        reader = [*(first.split("\n") if first else []), f"return {read}"]
        if where == "self":
            alloc = [f"self.{x} = {self.alloc(b)}"] if store else [f"{x} = {self.alloc(b)}"]
            init = ["def __init__(self, inp, n, flag):", *ind(alloc), *ind(writes)]
            if not store:
                init.append(f"    self.{x} = {x}")
            get = [f"def get{u}(self, flag):", f"    t = self.{x}", *ind(reader)]
            local = [f"class P{u}:", *ind([*init, "", *get])]
            body = [ALLOC_IN_CLASS, f"o{u} = P{u}(inp, n, flag)", f"out.append(o{u}.get{u}(flag))"]
            return Piece([], local, body, [], tags, differs)
        mk = f"_mk{u}" if where == "private" else f"mk{u}"
        ret = f"{x}, n" if where == "slot" else x
        maker = [f"def {mk}(inp, n, flag):", f"    {x} = {self.alloc(b)}", *ind(writes),
                 f"    return {ret}"]  # fmt: skip
        get = f"t, _ = {mk}(inp, n, flag)" if where == "slot" else f"t = {mk}(inp, n, flag)"
        use = [f"def use{u}(inp, n, flag):", f"    {get}", *ind(reader)]
        local = [*maker, "", "", *use]
        body = [ALLOC_IN_CLASS, f"out.append(use{u}(inp, n, flag))"]
        return Piece([], local, body, [], tags, differs)
