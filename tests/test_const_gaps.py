"""Position arithmetic of analysis/dataflow/const_gaps.py against Python's own slicing: every
relation it claims for a size known only from below (`e + c`) or exactly (a literal) holds for
every concrete size it allows, and a gap it claims is left alone by the concrete slice."""

from __future__ import annotations

import ast
import itertools

from zeroopt.analysis.dataflow import const_gaps as cg

BOUNDS = [None, *(str(v) for v in range(-4, 6))]
POSITIONS = [*(("start", i) for i in range(5)), *(("end", i) for i in range(1, 5))]
SIZES = [cg._Size(None, least, f"n + {least}") for least in range(4)] + [
    cg._Size(exact, exact, str(exact)) for exact in range(5)
]


def _concrete(size: cg._Size) -> range:
    return range(size.exact, size.exact + 1) if size.exact is not None else range(size.least, 12)


def _index(p: cg.Pos, n: int) -> int:
    return p[1] if p[0] == "start" else n - p[1]


def test_claimed_positions_exist_and_lie_outside_the_slice() -> None:
    claims = 0
    for size, p, lo_text, hi_text in itertools.product(SIZES, POSITIONS, BOUNDS, BOUNDS):
        lo = cg._bound(lo_text, ("start", 0))
        hi = cg._bound(hi_text, ("end", 0))
        if not cg._exists(p, size):
            continue
        outside = cg._before(p, lo, size) or cg._at_or_after(p, hi, size)
        inside = cg._at_or_after(p, lo, size) and cg._before(p, hi, size)
        for n in _concrete(size):
            i = _index(p, n)
            assert 0 <= i < n, (size, p, n)
            start = None if lo_text is None else int(lo_text)
            stop = None if hi_text is None else int(hi_text)
            sliced = list(range(n))[start:stop]
            if outside:
                assert i not in sliced, (size, p, lo_text, hi_text, n)
            if inside:
                assert i in sliced, (size, p, lo_text, hi_text, n)
        claims += outside + inside
    assert claims > 100  # the relations do decide cases


def test_sizes_from_the_allocation() -> None:
    def size(text: str) -> cg._Size:
        return cg._size(ast.parse(text, mode="eval").body)

    assert (size("8").exact, size("8").least) == (8, 8)
    assert (size("bs + 1").least, size("bs + 1").assumed) == (1, "bs >= 0")
    assert (size("len(x) + 2").least, size("len(x) + 2").assumed) == (2, "")
    assert size("x.shape[0] + 1").assumed == ""
    assert size("n").least == 0  # may be 0: no position exists
    assert size("n - 1 + 2").least == 0  # `n - 1` may be negative
    assert size("n + -1").least == 0
