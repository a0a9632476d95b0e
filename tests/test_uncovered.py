"""The element search of analysis/dataflow/uncovered.py: which element no may-write covers and a
read surely takes, and when it exists."""

from __future__ import annotations

from zeroopt.analysis.dataflow.uncovered import nonempty_note, uncovered_element, write_extent
from zeroopt.analysis.state import MAYBE, SELF, Ref, Region, View


def dims(*texts: str | None) -> tuple[tuple[str | None, frozenset[str]], ...]:
    return tuple((t, frozenset()) for t in texts)


def w(dim: int, lo: int, hi: int | None) -> tuple[int, int, int | None, int, str]:
    return dim, lo, hi, 1, "x[...]"


def part(dim: int, lo: str | None, hi: str | None, kind: str = "") -> Ref:
    return Ref(View.PART, Region(dim, lo, hi, frozenset(), kind))


def test_first_element_past_a_literal_start() -> None:
    assert uncovered_element((w(0, 1, None),), SELF, dims("n + 1")) == [0]
    assert uncovered_element((w(0, 0, None),), SELF, dims("n + 1")) is None


def test_a_larger_index_needs_the_literal_size() -> None:
    assert uncovered_element((w(2, 0, 1),), SELF, dims("b", "t", "2")) == [0, 0, 1]
    assert uncovered_element((w(2, 0, 1),), SELF, dims("b", "t", "1")) is None
    assert uncovered_element((w(2, 0, 1),), SELF, dims("b", "t", "k")) is None


def test_last_dimension_written_through_an_ellipsis() -> None:
    assert uncovered_element((w(-1, 0, 2),), SELF, dims("b", "3")) == [0, 2]
    # Without the number of dimensions only the first element counts.
    assert uncovered_element((w(-1, 0, 2),), SELF, dims(None)) is None
    assert uncovered_element((w(-1, 1, None),), SELF, dims(None)) == [0]


def test_a_read_slice_decides_where_it_starts() -> None:
    read = part(0, "1", None)
    assert uncovered_element((w(0, 0, 1),), read, dims("n")) == [1]
    assert uncovered_element((w(0, 0, 2),), read, dims("n")) is None
    assert uncovered_element((w(0, 0, 1),), read, dims("1")) is None  # no index 1 at all
    assert uncovered_element((w(0, 1, None),), part(0, None, "k"), dims("n")) is None


def test_gaps_between_writes() -> None:
    assert uncovered_element((w(0, 0, 2), w(0, 3, 4)), SELF, dims("4")) == [2]
    assert uncovered_element((w(0, 0, 2), w(0, 2, None)), SELF, dims("4")) is None


def test_write_extents() -> None:
    assert write_extent(SELF, Region(0, "1", None, frozenset()), full=False) == (0, 1, None)
    assert write_extent(SELF, Region(0, "k", "8", frozenset({"k"})), full=False) == (0, 0, 8)
    assert write_extent(SELF, None, full=True) is None
    assert write_extent(MAYBE, Region(0, "1", None, frozenset()), full=False) is None
    step = Region(0, "1", "2", frozenset(), "step2")
    assert write_extent(SELF, step, full=False) == (0, 1, None)
    assert write_extent(part(0, "2", None), None, full=True) == (0, 2, None)


def test_the_assumption_is_stated() -> None:
    assert "bs >= 0" in nonempty_note(dims("bs + 1"), [0])
    assert "not empty" in nonempty_note(dims(None), [0])
    assert "n > 1" in nonempty_note(dims("n"), [1])


def test_a_negative_literal_end_holds_its_start_while_the_dimension_exceeds_it() -> None:
    # `x[:-1]` of `zeros(n + 1)`: element 0 when n >= 1, said in the note.
    read = part(0, None, "-1")
    assert uncovered_element((w(0, 1, None),), read, dims("n + 1")) == [0]
    assert "n >= 1 (the slice read is not empty)" in nonempty_note(dims("n + 1"), [0], read)
    # A literal size shows it: `zeros(1)[:-1]` is empty, `zeros(4)[:-2]` holds 0 and 1.
    assert uncovered_element((w(0, 1, None),), read, dims("1")) is None
    assert uncovered_element((w(0, 1, None),), part(0, None, "-2"), dims("4")) == [0]
    assert uncovered_element((w(0, 0, 2),), part(0, None, "-2"), dims("4")) is None
    assert uncovered_element((w(0, 0, 2),), part(0, None, "-1"), dims("4")) == [2]
    # Without the number of dimensions, both assumptions are named.
    note = nonempty_note(dims(None), [0], read)
    assert note == "assuming the buffer is not empty and the slice read is not empty"


def test_a_maybe_copy_is_never_read_through_its_own_reference() -> None:
    # The elements a conversion holds are read through `Ref.elements` (effects.py), never
    # through the maybe-reference itself.
    held = Ref(View.MAYBE, copy=True, derived=True, elements=SELF)
    assert uncovered_element((w(0, 1, None),), held, dims("n + 1")) is None


def test_a_size_not_shown_is_not_written_as_none() -> None:
    note = nonempty_note(dims(None, "1"), [1, 0], part(0, "1", "2"))
    assert "None" not in note
    assert note == "assuming the buffer is not empty and the slice read is not empty"
