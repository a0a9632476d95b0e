"""report/json_text.py writes what `json.dumps(obj, indent=2, ensure_ascii=False)` writes, for
any value: the JSON report is a contract, byte for byte."""

from __future__ import annotations

import enum
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zeroopt.report.json_text import dumps


class _Kind(enum.StrEnum):
    SAFE = "safe"


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # surrogates, control characters, U+2028: the escaper is json's own
    | st.just(_Kind.SAFE)  # a str subclass: left to json.dumps
)
_KEYS = st.text() | st.integers() | st.none()  # json.dumps turns non-string keys into strings
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=24,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_same_error_as_json_dumps_for_what_json_cannot_write() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for value in ({"a": object()}, [1, {2, 3}], {(1, 2): "tuple key"}, loop):
        try:
            json.dumps(value, indent=2, ensure_ascii=False)
        except (TypeError, ValueError) as expected:
            try:
                dumps(value)
            except (TypeError, ValueError) as got:
                assert (type(got), str(got)) == (type(expected), str(expected))
            else:
                raise AssertionError(f"{value!r}: no error")
        else:
            raise AssertionError(f"{value!r}: json.dumps wrote it")


def test_a_report_shaped_value() -> None:
    report = {
        "version": 1,
        "findings": [
            {
                "path": "pkg/é.py",
                "line": 3,
                "evidence": [{"line": 3, "kind": "read", "text": 'x["a"]\t\u2028'}],
                "fix": None,
                "source": "torch.zeros(4)",
                "next_step": {"text": "run", "command": "zeroopt verify", "toml": None},
            }
        ],
        "errors": [],
        "summary": {"files": 1, "seconds": 0.125, "safe": 0},
        "lifecycles": [],
    }
    assert dumps(report) == json.dumps(report, indent=2, ensure_ascii=False)
