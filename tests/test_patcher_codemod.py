"""The libcst codemod: every spelling, exact positions, byte preservation, sound name choices."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from zeroopt.patcher.codemod import (
    Failure,
    RewriteSite,
    Skip,
    Success,
    rewrite_module,
    rewrite_source,
)

_KIND = {"zeros": "torch.zeros", "zeros_like": "torch.zeros_like", "new_zeros": "Tensor.new_zeros"}


def _char_col(line: bytes, byte_offset: int) -> int:
    return len(line[:byte_offset].decode("utf-8")) + 1


def ast_sites(source: bytes, names: dict[str, str] | None = None) -> list[RewriteSite]:
    """Sites as the ast-based analysis computes them: 1-based line, 1-based character column."""
    names = {**_KIND, **(names or {})}
    tree = ast.parse(source)
    text = source.decode(_encoding(source))
    lines = [line.encode("utf-8") for line in text.splitlines(keepends=True)]
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in names:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        out.append(
            RewriteSite(
                node.lineno,
                _char_col(lines[node.lineno - 1], node.col_offset),
                names[name],
                node.end_lineno,
                _char_col(lines[node.end_lineno - 1], node.end_col_offset),
            )
        )
    return sorted(out, key=lambda s: (s.line, s.col))


def _encoding(source: bytes) -> str:
    import io
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(source).readline)[0]


def rewrite(source: str | bytes, names: dict[str, str] | None = None) -> tuple[bytes, list]:
    data = source.encode() if isinstance(source, str) else source
    return rewrite_source(data, ast_sites(data, names))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("import torch\nx = torch.zeros(4, 8)\n", "import torch\nx = torch.empty(4, 8)\n"),
        ("import torch as th\nx = th.zeros(4)\n", "import torch as th\nx = th.empty(4)\n"),
        ("import torch\ny = torch.zeros_like(x)\n", "import torch\ny = torch.empty_like(x)\n"),
        ("y = x.new_zeros((2, 3))\n", "y = x.new_empty((2, 3))\n"),
        ("y = self.buf['k'].new_zeros(3)\n", "y = self.buf['k'].new_empty(3)\n"),
        # the call's own parentheses, spacing and comments inside are kept
        (
            "import torch\nx = ( torch . zeros ( 4 ,  # n\n  dtype=torch.int32 ) )\n",
            "import torch\nx = ( torch . empty ( 4 ,  # n\n  dtype=torch.int32 ) )\n",
        ),
        (
            "from torch import zeros\nx = zeros(3)\n",
            "from torch import zeros, empty as _torch_empty\nx = _torch_empty(3)\n",
        ),
        (
            "from torch import zeros_like\ny = zeros_like(x)\n",
            "from torch import zeros_like, empty_like as _torch_empty_like\ny = _torch_empty_like(x)\n",
        ),
        (
            "from torch import zeros as z\nx = z(3)\n",
            "from torch import zeros as z, empty as _torch_empty\nx = _torch_empty(3)\n",
        ),
        # reuse an import of empty that already exists
        (
            "from torch import empty as E, zeros\nx = zeros(3)\n",
            "from torch import empty as E, zeros\nx = E(3)\n",
        ),
        # parenthesised multi-line import: the style (one per line, trailing comma) carries over;
        # a module-level import gains only an underscore name, which `from m import *` skips
        (
            "from torch import (\n    ones,\n    zeros,\n)\nx = zeros(3)\n",
            "from torch import (\n    ones,\n    zeros,\n    empty as _torch_empty,\n)\nx = _torch_empty(3)\n",
        ),
        (
            "from torch import (\r\n    zeros,\r\n)\r\nx = zeros(3)\r\n",
            "from torch import (\r\n    zeros,\r\n    empty as _torch_empty,\r\n)\r\nx = _torch_empty(3)\r\n",
        ),
        (
            "from torch import (\n    zeros\n)\nx = zeros(3)\n",
            "from torch import (\n    zeros, empty as _torch_empty\n)\nx = _torch_empty(3)\n",
        ),
        (
            "from torch import (zeros, ones)  # c\nx = zeros(3)\n",
            "from torch import (zeros, ones, empty as _torch_empty)  # c\nx = _torch_empty(3)\n",
        ),
        # a local name `empty` exists: use the module the file already imports
        (
            "import torch\nfrom torch import zeros\nempty = []\nx = zeros(3)\n",
            "import torch\nfrom torch import zeros\nempty = []\nx = torch.empty(3)\n",
        ),
        # ... or an alias that cannot clash
        (
            "from torch import zeros\ndef f(empty):\n    return zeros(3)\n",
            "from torch import zeros, empty as _torch_empty\ndef f(empty):\n    return _torch_empty(3)\n",
        ),
        # a star import may bind `empty` (numpy does): never rely on the plain name then
        (
            "from numpy import *\nfrom torch import zeros\nx = zeros(3)\n",
            "from numpy import *\nfrom torch import zeros, empty as _torch_empty\nx = _torch_empty(3)\n",
        ),
        # an import inside the function: the new name is added to that same statement
        (
            "def f():\n    from torch import zeros\n    return zeros(3)\n",
            "def f():\n    from torch import zeros, empty\n    return empty(3)\n",
        ),
        # a module-level import never gains a public name; `x.empty` and `f(empty=...)` are
        # no obstacle to `torch.empty`
        (
            "import torch\nfrom torch import zeros\nx = zeros(3, out=torch.empty(1))\nf(empty=1)\n",
            "import torch\nfrom torch import zeros\nx = torch.empty(3, out=torch.empty(1))\nf(empty=1)\n",
        ),
    ],
)
def test_every_spelling(before: str, after: str) -> None:
    new, results = rewrite(before, {"z": "torch.zeros"})
    assert [type(r) for r in results] == [Success] * len(results) and results
    assert new.decode() == after
    # and the result is valid Python
    compile(new, "<rewritten>", "exec")


def test_import_added_once_for_many_sites_and_replacements_are_final_text() -> None:
    src = "from torch import zeros\na = zeros(zeros(2).sum())\nb = zeros(3)\n"
    new, results = rewrite(src)
    assert new.decode() == (
        "from torch import zeros, empty as _torch_empty\n"
        "a = _torch_empty(_torch_empty(2).sum())\nb = _torch_empty(3)\n"
    )
    assert [r.replacement for r in results] == [
        "_torch_empty(_torch_empty(2).sum())",
        "_torch_empty(2)",
        "_torch_empty(3)",
    ]


def test_rewritten_names_really_are_torch_empty() -> None:
    """Run the rewritten code: every chosen spelling must be torch's empty, not the local name."""
    torch = pytest.importorskip("torch")
    src = (
        "from torch import zeros, zeros_like\n"
        "empty = 'not torch'\n"
        "def f(x):\n"
        "    empty_like = None\n"
        "    return zeros(2, 3), zeros_like(x), x.new_zeros(4)\n"
    )
    new, results = rewrite(src)
    assert all(isinstance(r, Success) for r in results), results
    namespace: dict[str, object] = {}
    exec(compile(new, "<rewritten>", "exec"), namespace)
    assert namespace["empty"] == "not torch"
    a, b, c = namespace["f"](torch.ones(5))  # type: ignore[operator]
    assert a.shape == (2, 3) and b.shape == (5,) and c.shape == (4,)
    assert "zeros(" not in new.decode().split("\n", 2)[2]


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import numpy as torch\nx = torch.zeros(3)\n", "numpy.zeros"),
        ("x = torch.zeros(3)\n", "resolves to nothing"),  # torch never imported: do not guess
        ("from numpy import zeros\nx = zeros(3)\n", "numpy.zeros"),
        (  # two possible bindings for the name
            "try:\n    from torch import zeros\nexcept ImportError:\n    from numpy import zeros\n"
            "x = zeros(3)\n",
            "not only torch.zeros",
        ),
    ],
)
def test_skip_when_the_name_is_not_torchs(source: str, reason: str) -> None:
    new, results = rewrite(source)
    assert new == source.encode()
    assert len(results) == 1 and isinstance(results[0], Skip)
    assert reason in results[0].reason


def test_skip_when_the_position_holds_another_call() -> None:
    src = b"import torch\nx = torch.ones(3)\ny = torch.zeros(2)\n"
    new, results = rewrite_source(
        src, [RewriteSite(2, 5, "torch.zeros"), RewriteSite(3, 1, "torch.zeros")]
    )
    assert new == src
    assert isinstance(results[0], Skip) and "torch.ones" in results[0].reason
    assert isinstance(results[1], Skip) and "no call starts at 3:1" in results[1].reason


def test_skip_when_the_end_does_not_match() -> None:
    src = b"import torch\ny = torch.zeros(2)\n"
    new, results = rewrite_source(src, [RewriteSite(2, 5, "torch.zeros", 2, 17)])
    assert new == src and isinstance(results[0], Skip)
    new, results = rewrite_source(src, [RewriteSite(2, 5, "torch.zeros", 2, 19)])
    assert new == b"import torch\ny = torch.empty(2)\n"


def test_two_calls_starting_at_the_same_place_are_told_apart_by_kind_and_end() -> None:
    src = b"import torch\ny = torch.zeros(3).new_zeros(4)\n"
    sites = ast_sites(src)
    assert [(s.line, s.col) for s in sites] == [(2, 5), (2, 5)]
    new, _ = rewrite_source(src, [s for s in sites if s.call == "Tensor.new_zeros"])
    assert new == b"import torch\ny = torch.zeros(3).new_empty(4)\n"
    new, _ = rewrite_source(src, [s for s in sites if s.call == "torch.zeros"])
    assert new == b"import torch\ny = torch.empty(3).new_zeros(4)\n"
    # without an end, `torch.zeros` at 2:5 is still unambiguous: only one such call starts there
    new, _ = rewrite_source(src, [RewriteSite(2, 5, "torch.zeros")])
    assert new == b"import torch\ny = torch.empty(3).new_zeros(4)\n"


def test_idempotent_second_pass_changes_nothing() -> None:
    src = b"import torch\nx = torch.zeros(3)\ny = x.new_zeros(2)\n"
    sites = ast_sites(src)
    once, _ = rewrite_source(src, sites)
    twice, results = rewrite_source(once, sites)
    assert twice == once
    assert all(isinstance(r, Skip) for r in results)


def test_unparsable_source_is_a_failure_per_site() -> None:
    src = b"import torch\nx = torch.zeros(3\n"
    new, results = rewrite_source(src, [RewriteSite(2, 5, "torch.zeros")])
    assert new == src and isinstance(results[0], Failure)
    assert "cannot parse" in results[0].error


def test_non_zeros_call_kinds_are_refused() -> None:
    src = b"import torch\nx = torch.empty(3)\n"
    new, results = rewrite_source(src, [RewriteSite(2, 5, "torch.empty")])
    assert new == src and isinstance(results[0], Skip)


# --- positions: the ast analysis and libcst must agree on where a call starts -------------------

POSITION_CASES = [
    "import torch\ns = 'ééé'; x = torch.zeros(3)\n",  # 2-byte characters before the call
    "import torch\ns = '😀🎉'; x = torch.zeros(3)\n",  # 4-byte characters
    "import torch\nif 1:\n\tif 2:\n\t\ty = torch.zeros(\n\t\t\t4,\n\t\t)\n",  # tabs, multi-line
    "import torch\nx = (torch.zeros(3))\n",  # parenthesised call
    "import torch\nx = (torch).zeros(3)\n",  # parenthesised receiver
    "import torch\nz = (a + b).new_zeros(3)\n",
    "import torch\nx = [torch.zeros(i) for i in range(3)]; y = {'k': torch.zeros(1)}\n",
    "import torch\nx = f(torch.zeros(3), g(torch.zeros_like(y)))\n",
    "import torch\nx = torch.zeros(\\\n  3)\n",  # backslash continuation
]


@pytest.mark.parametrize("source", POSITION_CASES)
def test_ast_positions_match_libcst_positions(source: str) -> None:
    data = source.encode()
    sites = ast_sites(data)
    assert sites
    new, results = rewrite_source(data, sites)
    assert all(isinstance(r, Success) for r in results), results
    expected = source.replace(".zeros(", ".empty(").replace("zeros_like(", "empty_like(")
    expected = expected.replace(".new_zeros(", ".new_empty(")
    assert new.decode() == expected


# --- bytes: everything but the rewritten names stays as it was ---------------------------------

BYTE_CASES = {
    "crlf": b"import torch\r\n# c\r\nx = torch.zeros(3)  # keep\r\ny = 'a'\r\n",
    "mixed-newlines": b"import torch\nx = torch.zeros(3)\r\ny = 1\n",
    "no-final-newline": b"import torch\nx = torch.zeros(3)",
    "bom": b"\xef\xbb\xbfimport torch\nx = torch.zeros(3)  # \xc3\xa9\n",
    "latin-1-cookie": b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9\xe8'; x = torch.zeros(3)\n",
    "cookie-line-2": b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nimport torch\n"
    b"s = '\xe9'; x = torch.zeros(3)\n",
    "quotes-and-formatting": b"import torch\nx = torch.zeros( 3 ,dtype = torch.float16 )  ;y='''\n"
    b"torch.zeros(3)'''\n",
    "tabs": b"import torch\nif True:\n\tx = torch.zeros(3)\t# t\n",
}


@pytest.mark.parametrize("name", sorted(BYTE_CASES))
def test_every_other_byte_is_preserved(name: str) -> None:
    data = BYTE_CASES[name]
    new, results = rewrite_source(data, ast_sites(data))
    assert len(results) == 1 and isinstance(results[0], Success), results
    # Exactly one occurrence of the call changed; everything else byte-identical.
    index = data.index(b"torch.zeros(3)" if name != "quotes-and-formatting" else b"torch.zeros( 3")
    assert new == data[:index] + b"torch.empty" + data[index + len(b"torch.zeros") :]


def test_module_level_api_returns_same_tree_when_nothing_applies() -> None:
    module = cst.parse_module("import torch\nx = torch.ones(3)\n")
    new, results = rewrite_module(module, [RewriteSite(2, 5, "torch.zeros")])
    assert new is module and isinstance(results[0], Skip)


def test_cr_only_line_endings_keep_every_byte() -> None:
    # libcst's round trip drops the final CR of a CR-only file; the rewrite must not.
    src = b"import torch\rx = torch.zeros(4)\rx.fill_(1)\r"
    new, results = rewrite_source(src, [RewriteSite(2, 5, "torch.zeros")])
    assert isinstance(results[0], Success)
    assert new == src.replace(b"torch.zeros", b"torch.empty")
