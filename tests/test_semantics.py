"""Torch semantics as data (analysis/semantics): one effect per name, a source per entry, and the
`out=` table as torch's own operator schemas give it."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from zeroopt.analysis import semantics as sem
from zeroopt.analysis.semantics import out_table
from zeroopt.analysis.semantics.entries import ENTRIES, Effect, Kind, names


def test_a_name_has_one_effect_per_kind() -> None:
    counts = Counter((e.name, e.kind) for e in ENTRIES)
    assert [k for k, n in counts.items() if n > 1] == []


# The effect tables a Tensor method is looked up in, in the order buffer_flow asks them: a name
# in two of them would have its meaning decided by that order, not by the table.
METHOD_TABLES = {
    "METADATA_METHODS": sem.METADATA_METHODS,
    "FULL_WRITE_METHODS": sem.FULL_WRITE_METHODS,
    "PARTIAL_WRITE_METHODS": sem.PARTIAL_WRITE_METHODS,
    "FULL_VIEW_METHODS": sem.FULL_VIEW_METHODS,
    "PARTIAL_VIEW_METHODS": sem.PARTIAL_VIEW_METHODS,
    "MAYBE_COPY_METHODS": sem.MAYBE_COPY_METHODS,
    "INPLACE_LAYOUT_METHODS": sem.INPLACE_LAYOUT_METHODS,
    "RESIZE_METHODS": sem.RESIZE_METHODS,
    "SPLIT_METHODS": sem.SPLIT_METHODS,
    "READ_METHODS": sem.READ_METHODS,
    "READ_MODIFY_WRITE_METHODS": sem.READ_MODIFY_WRITE_METHODS,
    "EXPOSES_MEMORY_METHODS": sem.EXPOSES_MEMORY_METHODS,
}
FUNCTION_TABLES = {
    "METADATA_FUNCTIONS": sem.METADATA_FUNCTIONS - {n for n in sem.METADATA_FUNCTIONS if n.startswith("builtins.")},
    "FULL_WRITE_FUNCTIONS": sem.FULL_WRITE_FUNCTIONS,
    "READ_BUILTINS": sem.READ_BUILTINS,
    "PURE_BUILTINS": sem.PURE_BUILTINS,
    "FRAME_INTROSPECTION": sem.FRAME_INTROSPECTION,
}  # fmt: skip


@pytest.mark.parametrize("tables", [METHOD_TABLES, FUNCTION_TABLES], ids=["methods", "functions"])
def test_effect_tables_are_disjoint(tables: dict[str, frozenset[str]]) -> None:
    overlaps = {
        (a, b): sorted(tables[a] & tables[b])
        for a, b in itertools.combinations(tables, 2)
        if tables[a] & tables[b]
    }
    assert overlaps == {}


def test_property_tables_sit_inside_the_effect_tables() -> None:
    assert sem.RETURNS_SELF_METHODS <= sem.METADATA_METHODS
    assert sem.CALLBACK_BUILTINS <= sem.READ_BUILTINS | sem.PURE_BUILTINS
    # in-place accumulators never also count as plain reads (`cumsum_` was once in both)
    assert "cumsum_" in sem.READ_MODIFY_WRITE_METHODS and "cumsum_" not in sem.READ_METHODS


def test_every_entry_and_contract_has_a_source() -> None:
    assert all(e.source.startswith("https://") for e in ENTRIES), [
        e for e in ENTRIES if not e.source.startswith("https://")
    ]
    assert all(c.source for c in sem.BUILTIN_CONTRACTS)
    assert "https://pytorch.org/docs/stable/generated/torch.Tensor.copy_.html" in {
        e.source for e in ENTRIES if e.name == "copy_"
    }


def test_derived_tables_come_from_the_entries() -> None:
    assert names(Kind.METHOD, Effect.FULL_WRITE) == sem.FULL_WRITE_METHODS
    assert "fill_" in sem.FULL_WRITE_METHODS and "fill_" not in sem.READ_METHODS


def test_out_table_has_provenance_and_the_aliases() -> None:
    assert out_table.TORCH_VERSION and out_table.GENERATED and out_table.SOURCE
    for alias in ("subtract", "multiply", "divide", "negative", "absolute", "clip", "arccos",
                  "acos", "fix", "trunc", "clamp_min", "argsort", "argmax"):  # fmt: skip
        assert f"torch.{alias}" in sem.OUT_FUNCTIONS
    assert sem.OUT_FUNCTIONS.isdisjoint({"torch.empty", "torch.empty_like", "torch.einsum"})
    assert out_table.OUT_ARGUMENTS["torch.sort"] == ("indices", "values")


def test_out_table_matches_the_installed_torch_schemas() -> None:
    torch = pytest.importorskip("torch")
    from zeroopt.analysis.semantics import out_schema

    if torch.__version__ != out_table.TORCH_VERSION:
        pytest.skip(f"table made with torch {out_table.TORCH_VERSION}, {torch.__version__} here")
    assert out_schema.from_schemas() == out_table.OUT_ARGUMENTS
    rendered = out_schema.render(out_schema.from_schemas(), torch.__version__, out_table.GENERATED)
    assert rendered == Path(out_table.__file__).read_text()
