"""The abstract state of one buffer (analysis/state.py) and how states meet where paths join.

Must-facts (written in full, regions written, names that surely hold the buffer) survive a join
only when they hold on both paths; may-facts (names that may hold it, escapes) when they hold on
either. That is what keeps `safe` true on every path.
"""

from __future__ import annotations

from zeroopt.analysis.state import MAYBE, SELF, UNREACHED, Ref, Region, State, View, join

FIRST_HALF = Region(0, None, "k", frozenset({"k"}))
SECOND_HALF = Region(0, "k", None, frozenset({"k"}))


def allocated(**facts: object) -> State:
    return State(live=True, must=(("x", SELF),), may=frozenset({"x"}), **facts)


def test_written_in_full_survives_only_when_written_on_both_paths() -> None:
    written = allocated(full=True, touched=True)
    assert join(written, written) == written
    assert join(written, allocated()).full is False
    assert join(allocated(), written).full is False


def test_regions_written_are_intersected() -> None:
    both = allocated(regions=frozenset({FIRST_HALF, SECOND_HALF}))
    first = allocated(regions=frozenset({FIRST_HALF}))
    joined = join(both, first)
    assert joined is not None and joined.regions == frozenset({FIRST_HALF})


def test_aliases_must_agree_to_stay_sure_but_may_aliases_are_united() -> None:
    a = State(live=True, must=(("x", SELF), ("y", SELF)), may=frozenset({"x", "y"}))
    b = State(live=True, must=(("x", SELF), ("y", MAYBE)), may=frozenset({"x", "y", "z"}))
    joined = join(a, b)
    assert joined is not None
    assert joined.must_map() == {"x": SELF}  # y is the buffer on one path, maybe on the other
    assert joined.may == frozenset({"x", "y", "z"})


def test_escapes_on_either_path_are_kept() -> None:
    escaped = allocated(escapes=frozenset({(3, "returned")}))
    joined = join(allocated(), escaped)
    assert joined is not None and joined.escaped


def test_a_path_where_the_allocation_has_not_run_says_nothing() -> None:
    written = allocated(full=True)
    assert join(UNREACHED, written) == written
    assert join(written, UNREACHED) == written
    assert join(None, written) == written
    assert join(written, None) == written


def test_a_region_is_shown_as_the_slice_it_stands_for() -> None:
    assert FIRST_HALF.text() == "[:k]"
    assert Region(1, "1", None, frozenset()).text() == "[:, 1:]"
    assert Ref(View.PART, FIRST_HALF).region == FIRST_HALF


def test_a_state_names_what_a_statement_must_mention_to_change_it() -> None:
    state = State(
        live=True,
        must=(("x", SELF),),
        may=frozenset({"x", "self.meta['lens']"}),
        regions=frozenset({FIRST_HALF}),
    )
    plain, dotted, roots = state.footprint
    assert {"x", "k"} <= plain  # an alias, and a name in a region bound
    assert dotted == frozenset({"self.meta"}) and roots == frozenset({"self"})
