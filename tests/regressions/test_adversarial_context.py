"""Counterexamples to a file named alone being judged with its project as context
(scan/context_tree.py): the project root found above it (`sub/pyproject.toml`) is itself inside
another project (`pyproject.toml` or `.git` further up) whose files import it. Read with only
the inner project as context, the subclass in the outer one is unseen; a scan of the outer
project sees it. Named alone, the site must never be `safe` where that scan is not. The case
executes: the outer project's subclass reads the zeros.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import NOT_SAFE, Case, check_case, params, scanned_verdicts

CASES = [
    Case(
        "subclass_in_the_enclosing_project",
        package="inner",
        why="`Late.fill`, in the enclosing project, adds to the buffer instead of writing it; "
        "the inner project (its own pyproject.toml) shows only `Stage.fill`.",
        source=r"""
import torch


class Stage:
    def fill(self, out):
        out.copy_(torch.ones_like(out))

    def total(self, n):
        buf = torch.zeros(n)  # <- site
        self.fill(buf)
        return buf.sum()
""",
        modules=(
            ("inner/__init__", ""),
            (
                "late",
                r"""
from inner.subclass_in_the_enclosing_project import Stage


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
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("outer", ["pyproject.toml", ".git"])
@pytest.mark.parametrize("case", params(CASES))
def test_not_safe_named_inside_a_nested_project(case: Case, outer: str, tmp_path: Path) -> None:
    (tmp_path / case.package).mkdir()
    (tmp_path / case.package / "pyproject.toml").write_text("")
    if outer == ".git":
        (tmp_path / ".git").mkdir()
    else:
        (tmp_path / outer).write_text("")
    whole = scanned_verdicts(case, tmp_path, ".")
    assert all(v in NOT_SAFE for vs in whole.values() for v in vs), whole
    named = f"{case.package}/{case.name}.py"
    for line, verdicts in scanned_verdicts(case, tmp_path, named).items():
        assert verdicts and all(v in NOT_SAFE for v in verdicts), (line, verdicts)


@pytest.mark.parametrize("named", ["alone", "tree"])
@pytest.mark.parametrize("case", params(CASES))
def test_not_safe_through_a_file_link_into_another_tree(
    case: Case, named: str, tmp_path: Path
) -> None:
    """The file scanned is a symbolic link to a module of another tree, whose subclass reads
    the zeros: that tree is not read, so the site is never `safe` (`apply` would rewrite the
    other tree's file through the link)."""
    other, tree = tmp_path / "other", tmp_path / "tree"
    scanned_verdicts(case, other, ".")  # writes the module and its subclass there
    tree.mkdir()
    (tree / "pyproject.toml").write_text("")
    own = f"{case.name}.py"
    (tree / own).symlink_to(other / case.package / own)
    found = scanned_verdicts(case, tree, own if named == "alone" else ".")
    for line, verdicts in found.items():
        assert verdicts and all(v in NOT_SAFE for v in verdicts), (line, verdicts)
