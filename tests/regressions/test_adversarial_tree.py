"""Counterexamples to whole-tree facts seen through part of the tree: a scan of files named one
by one (pre-commit names only the changed files; `zeroopt apply` rewrites what it finds `safe`)
or of source on stdin, and warm scans whose cached results relied on other files. The closed
world (subclasses, callers, lookups by name) needs every file of the tree; a file left out hides
the one that reads the zeros. Each case executes: the zeros are read before any write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import NOT_SAFE, Case, check_case, params, scanned_verdicts

STAGE_FILL = r"""
import torch


class Stage:
    def fill(self, out):
        out.copy_(torch.ones_like(out))

    def total(self, n):
        buf = torch.zeros(n)  # <- site
        self.fill(buf)
        return buf.sum()
"""

CASES = [
    Case(
        "subclass_in_a_file_not_named",
        why="`Late.fill` (another file of the tree) adds to the buffer instead of writing it: "
        "named alone, the file shows only `Stage.fill`, which writes it in full.",
        source=STAGE_FILL,
        modules=(
            (
                "late",
                r"""
from subclass_in_a_file_not_named import Stage


class Late(Stage):
    def fill(self, out):
        out.add_(1)
""",
            ),
        ),
        scenario=r"""
def run():
    from late import Late

    return Late().total(3)
""",
    ),
    Case(
        "private_returned_buffer_read_in_a_file_not_named",
        why="`_scratch` returns its buffer; the only caller of it here writes it in full, but "
        "another file of the tree calls it and reads it: named alone, that caller is unseen.",
        source=r"""
import torch


def _scratch(n):
    return torch.zeros(n)  # <- site


def written(n):
    s = _scratch(n)
    s.fill_(2.0)
    return s
""",
        modules=(
            (
                "reader",
                r"""
from private_returned_buffer_read_in_a_file_not_named import _scratch


def peek(n):
    return _scratch(n).sum()
""",
            ),
        ),
        scenario=r"""
def run():
    from reader import peek

    return peek(4)
""",
    ),
    Case(
        "module_function_replaced_from_a_file_not_named",
        why="Another file of the tree assigns `mod.fill = _add`: the `fill` that runs adds to "
        "the buffer. Named alone, the file shows only its own `def fill`, which writes it.",
        source=r"""
import torch


def fill(out):
    out.copy_(torch.ones_like(out))


def total(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf.sum()
""",
        modules=(
            (
                "patcher",
                r"""
import module_function_replaced_from_a_file_not_named as target


def _add(out):
    out.add_(1)


target.fill = _add
""",
            ),
        ),
        scenario=r"""
def run():
    import patcher  # noqa: F401

    return total(3)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("named", ["alone", "-"])
@pytest.mark.parametrize("case", params(CASES))
def test_not_safe_through_part_of_the_tree(case: Case, named: str, tmp_path: Path) -> None:
    """Named alone or on stdin, the file is judged without the closed world: never `safe`."""
    arg = f"{case.name}.py" if named == "alone" else named
    for line, verdicts in scanned_verdicts(case, tmp_path, arg).items():
        assert verdicts and all(v in NOT_SAFE for v in verdicts), (line, verdicts)


@pytest.mark.parametrize("case", params(CASES))
def test_not_safe_with_a_linked_directory(case: Case, tmp_path: Path) -> None:
    """The other file lies in a directory the tree reaches by a symbolic link, which discovery
    does not follow: the scanned files are not the whole tree, and the site is never `safe`."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    outside.mkdir()
    for name, text in case.modules:
        (outside / f"{name}.py").write_text(text.lstrip("\n"))
    tree.mkdir()
    (tree / "more").symlink_to(outside, target_is_directory=True)
    (tree / f"{case.name}.py").write_text(case.source.lstrip("\n"))
    for line, verdicts in scanned_verdicts(case, tree, ".").items():
        assert verdicts and all(v in NOT_SAFE for v in verdicts), (line, verdicts)
