"""The text patterns of the closed world (analysis/methods.py): which names a file aliases and
stores, which files have class statements, and what the computed-attribute prefilter admits.
The patterns are written so that the regex engine can skip to a literal (word boundaries are
asserted after the keyword, the alias forms are searched apart); these pin the boundaries and
the forms they must still find, each against the matches the straightforward pattern gives."""

from __future__ import annotations

import re

import pytest

from zeroopt.analysis import methods
from zeroopt.analysis.dynamic_attributes import MENTIONS
from zeroopt.analysis.tree_naming import _WORDS

# The straightforward spellings: the rewritten patterns must match exactly what these match.
PLAIN_ALIAS = re.compile(
    rb"\b(\w+)[ \t]+as[ \t]+(\w+)[ \t]*(?=,|\)|$)"
    rb"|^[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]+\.)?(\w+)[ \t]*$",
    re.M,
)
PLAIN_CLASS = re.compile(rb"\bclass[ \t]+\w+[ \t]*\(([^:]*)")
PLAIN_WORDS = re.compile(rb"(?<!\w)_\w+")
PLAIN_MENTIONS = re.compile(
    rb"setattr|__dict__|\bvars\(|\bglobals\(|Namespace\(|namedtuple|NamedTuple|make_dataclass"
    rb"|Enum\(|Flag\("
)

TEXTS = [
    b"",
    b"a = b",
    b"x as y",
    b"import a as b\nc = d.e\n",
    b"  f = g  ",
    b"a = b\nimport x as y, z as w\nfrom m import (p as q)\n",
    b"xclass A(B):\nclass C(D):\n1class E(F)",
    b"_x __y a_b 9_z (_w)",
    b"type(a, b, c)\nxtype(a, b)\nnew_class(n)\nmy_new_class(n)",
    b"vars(x)['a'] = 1\nmyvars(x)[\"b\"] = 2\nglobals()\nxglobals(",
    b"for a.b in c: pass\nfor_ x.y in z\n",
    b"with f() as a.b:\nhas a.c\n",
    b"\n\nq = r\n",
    b"a as b as c\n",
    b"x.__dict__.update(k=1)\nvars(o).setdefault(j=2)\n",
    b"k=v\r\nz = w\n\tas\tt\n",
    b"Enum('E', 'a b')\nclass F(Flag): pass\n",
]


def plain_aliases(data: bytes) -> list[tuple[bytes, bytes]]:
    return sorted(
        (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        for m in PLAIN_ALIAS.finditer(data)
    )


@pytest.mark.parametrize("data", TEXTS)
def test_patterns_match_the_plain_spellings(data: bytes) -> None:
    assert sorted(methods._alias_pairs(data)) == plain_aliases(data)
    assert [m.span(1) for m in methods._CLASS.finditer(data)] == [
        m.span(1) for m in PLAIN_CLASS.finditer(data)
    ]
    assert _WORDS.findall(data) == PLAIN_WORDS.findall(data)
    assert [m.span() for m in MENTIONS.finditer(data)] == [
        m.span() for m in PLAIN_MENTIONS.finditer(data)
    ]


def test_word_boundaries_and_forms() -> None:
    # A keyword inside a longer word is no keyword.
    assert [m.group(1) for m in methods._CLASS.finditer(TEXTS[6])] == [b"D)"]  # up to the colon
    assert _WORDS.findall(TEXTS[7]) == [b"_x", b"__y", b"_w"]
    assert [m.group() for m in methods._DYNAMIC_CLASS.finditer(TEXTS[8])] == [
        b"type(a, b,",
        b"new_class(",
    ]
    assert not MENTIONS.search(b"xglobals(a)\nmyvars(b)")
    # Both alias forms and an import list; a line with ` as ` and `=` is no `X = C` line.
    assert sorted(methods._alias_pairs(TEXTS[5])) == [
        (b"b", b"a"),
        (b"p", b"q"),
        (b"x", b"y"),
        (b"z", b"w"),
    ]
    assert list(methods._alias_pairs(b"y = x as z\n")) == [(b"x", b"z")]


def test_stored_names() -> None:
    text = (
        b"for a.b in c: pass\nfor_ x.y in z\nwith f() as a.d:\nhas a.e\n"
        b"o.f = 1\no.g: int = 2\no.h, p = 3, 4\no.i == 5\n"
        b"setattr(o, 'j', 6)\nobject.__setattr__(o, 'k', 7)\no.__dict__['l'] = 8\n"
        b"vars(o)['m'] = 9\no.__dict__.update(n=10)\nvars(o).setdefault(q=11)\n"
    )
    world = methods.ClassWorld([("m.py", text)], "")
    assert world._stored_in(0) == {
        "b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "q"
    }  # fmt: skip
