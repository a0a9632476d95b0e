"""The patterns of dataflow/gaps.py: which allocated sizes pad a slice bound, which indices may
pick every position."""

from __future__ import annotations

import ast

import pytest

from zeroopt.analysis.dataflow import gaps


def _e(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(
    "size",
    [
        "cdiv(n, 128) * 128",
        "128 * triton.cdiv(n, 128)",
        "(n + 128 - 1) // 128 * 128",
        "(n + 127) // 128 * 128",
        "-(-n // t) * t",
        "math.ceil(n / t) * t",
        "align(n, t)",
        "ceil_align(n, 128)",
        "_ceil_to_multiple(n, t)",
        "round_up(n, 16)",
        "n + 1",
        "2 + n",
    ],
)
def test_padded_sizes(size: str) -> None:
    assert gaps._padding(_e(size), _e("n")) is not None


@pytest.mark.parametrize(
    "size",
    [
        "n",
        "cdiv(n, 128) * 64",  # not the same tile
        "cdiv(m, 128) * 128",  # another bound
        "align_down(n, 4)",
        "n // 4 * 4",
        "round_up(n, 1)",
        "n + 0",
        "n - 1",
        "(n + 126) // 128 * 128",
    ],
)
def test_not_padded_sizes(size: str) -> None:
    assert gaps._padding(_e(size), _e("n")) is None


def _covering(src: str, index: str) -> bool:
    fn = ast.parse(src).body[0]
    return gaps._covering(gaps._facts(fn), _e(index))


@pytest.mark.parametrize(
    ("src", "index", "expected"),
    [
        ("def f(x, idx): pass", "idx", False),
        ("def f(x):\n    _, idx = torch.sort(x)", "idx", True),
        ("def f(x):\n    idx = x.argsort(dim=1).long()", "idx", True),
        ("def f(x):\n    idx = torch.arange(x.shape[0], device=x.device)", "idx", True),
        ("def f(x, k):\n    vals, idx = torch.topk(x * torch.arange(3), k)", "idx", False),
        ("def f(x, k):\n    idx = x.topk(k).indices", "idx", False),
        ("def f(cu):\n    pass", "cu[1:-1]", False),
        ("def f(xs):\n    for idx in xs:\n        pass", "idx", True),
        ("def f(x, rows):\n    cols = x.argmax(1)", "(rows, cols)", False),
        ("def f(x):\n    rows = torch.arange(4)\n    cols = x.argmax(1)", "(rows, cols)", True),
        ("def f(n):\n    m = torch.ones(n, dtype=torch.bool)", "m", True),
        ("def f(n):\n    m = torch.ones(n)", "m", False),
        ("def f(x, inv_perm): pass", "inv_perm", True),
        ("def f(x):\n    s = slice(None)", "s", True),
    ],
)
def test_index_may_cover(src: str, index: str, expected: bool) -> None:
    assert _covering(src, index) is expected
