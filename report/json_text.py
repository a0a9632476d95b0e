"""JSON text exactly as `json.dumps(obj, indent=2, ensure_ascii=False)` writes it, faster.

With an indent, the standard library encodes in Python, one generator per container, and
that was a quarter of a warm scan of a large tree (a report of thousands of findings). Here each
string goes through the same C escaper and the pieces are joined once; the layout rules are the
standard library's (`{}` and `[]` for empty containers, the separators `","` and `": "`, a
newline and two spaces per level). Anything but dicts with string keys, lists,
tuples, strings, ints, floats, booleans and None (a subclass, a non-string key) is left to
`json.dumps` for the whole document, so the text is the same for every input.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the escaper json.dumps uses with ensure_ascii=False
from typing import Any

_INDENT = "  "


class _Unusual(Exception):
    """A value this writer does not handle itself."""


def dumps(obj: Any) -> str:
    """`json.dumps(obj, indent=2, ensure_ascii=False)`."""
    parts: list[str] = []
    try:
        _write(obj, "\n", parts)
    except (_Unusual, RecursionError):
        return json.dumps(obj, indent=2, ensure_ascii=False)
    return "".join(parts)


def _scalar(o: Any) -> str:
    kind = type(o)
    if kind is str:
        return encode_basestring(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if kind is int:
        return int.__repr__(o)
    if kind is float:
        if o != o:
            return "NaN"
        if o in (float("inf"), float("-inf")):
            return "Infinity" if o > 0 else "-Infinity"
        return float.__repr__(o)
    raise _Unusual


def _write(o: Any, newline: str, parts: list[str]) -> None:
    """Append the text of `o`, whose first line is already indented; `newline` is a newline
    followed by the indent of the line `o` starts on. Strings, ints and None, most of a
    report's values, are written in the loops themselves."""
    kind = type(o)
    if kind is dict:
        if not o:
            parts.append("{}")
            return
        inner = newline + _INDENT
        lead = "{" + inner
        for key, value in o.items():
            if type(key) is not str:
                raise _Unusual
            kind = type(value)
            if kind is str:
                parts.append(f"{lead}{encode_basestring(key)}: {encode_basestring(value)}")
            elif kind is int:
                parts.append(f"{lead}{encode_basestring(key)}: {int.__repr__(value)}")
            elif value is None:
                parts.append(f"{lead}{encode_basestring(key)}: null")
            else:
                parts.append(f"{lead}{encode_basestring(key)}: ")
                _write(value, inner, parts)
            lead = "," + inner
        parts.append(newline + "}")
    elif kind is list or kind is tuple:
        if not o:
            parts.append("[]")
            return
        inner = newline + _INDENT
        lead = "[" + inner
        for value in o:
            if type(value) is str:
                parts.append(lead + encode_basestring(value))
            else:
                parts.append(lead)
                _write(value, inner, parts)
            lead = "," + inner
        parts.append(newline + "]")
    else:
        parts.append(_scalar(o))
