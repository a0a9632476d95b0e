"""A file named alone inside a project is judged as a scan of the whole project judges it.

pre-commit names only the staged files. With a project root (`pyproject.toml` or `.git`) above
them, the rest of the project is read as context (scan/context_tree.py): the closed world sees
the subclasses, callers and lookups of other files, and the verdicts equal those of a scan of
the root. Without a root the closed world is off (tests/regressions/test_adversarial_tree.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.regressions.harness import NOT_SAFE, Case, scanned_verdicts
from tests.regressions.test_adversarial_tree import CASES as READ_IN_ANOTHER_FILE
from tests.regressions.test_adversarial_tree import STAGE_FILL
from zeroopt.scan.config import load_config
from zeroopt.scan.runner import scan

_STAGE = Case("stage", source=STAGE_FILL)

_LATE = r"""
from stage import Stage


class Late(Stage):
    def fill(self, out):
        out.add_(1)
"""


def _project(folder: Path, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if marker == "pyproject.toml":
        (folder / marker).write_text('[project]\nname = "p"\n')
    elif marker == ".git":
        (folder / marker).mkdir()


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git"])
@pytest.mark.parametrize("case", READ_IN_ANOTHER_FILE, ids=lambda c: c.name)
def test_named_alone_equals_the_whole_project(case: Case, marker: str, tmp_path: Path) -> None:
    """The reader in another file of the project is seen: same verdicts as a scan of `.`."""
    _project(tmp_path, marker)
    alone = scanned_verdicts(case, tmp_path, f"{case.name}.py")
    whole = scanned_verdicts(case, tmp_path, ".")
    assert alone == whole
    assert all(v and set(v) <= NOT_SAFE for v in alone.values()), alone


def test_closed_world_safe_named_alone_in_a_project(tmp_path: Path) -> None:
    """No subclass overrides `fill` anywhere in the project: `safe`, as in a scan of `.`;
    without a project root the closed world is off and the same file is not `safe`."""
    bare = scanned_verdicts(_STAGE, tmp_path / "bare", "stage.py")
    assert all(v and set(v) <= NOT_SAFE for v in bare.values()), bare
    _project(tmp_path / "proj", "pyproject.toml")
    alone = scanned_verdicts(_STAGE, tmp_path / "proj", "stage.py")
    assert alone == scanned_verdicts(_STAGE, tmp_path / "proj", ".")
    assert all(v == ["safe"] for v in alone.values()), alone


def test_warm_cache_sees_a_new_file_of_the_project(tmp_path: Path) -> None:
    """The file named alone is unchanged, but a subclass that reads the zeros appears elsewhere
    in the project: the cached `safe` is not reused."""
    _project(tmp_path, "pyproject.toml")
    cache = tmp_path / ".cache"
    first = scanned_verdicts(_STAGE, tmp_path, "stage.py", cache)
    assert all(v == ["safe"] for v in first.values()), first
    (tmp_path / "late.py").write_text(_LATE.lstrip("\n"))
    again = scanned_verdicts(_STAGE, tmp_path, "stage.py", cache)
    assert all(v and set(v) <= NOT_SAFE for v in again.values()), again


def test_warm_cache_sees_an_edit_elsewhere_in_the_project(tmp_path: Path) -> None:
    """Another file of the project is edited to hold a subclass that adds to the buffer: the
    file named alone is unchanged, and its cached `safe` is not reused."""
    _project(tmp_path, "pyproject.toml")
    cache = tmp_path / ".cache"
    late = tmp_path / "late.py"
    late.write_text("import stage\n\n\nclass Late:\n    pass\n")
    first = scanned_verdicts(_STAGE, tmp_path, "stage.py", cache)
    assert all(v == ["safe"] for v in first.values()), first
    late.write_text(_LATE.lstrip("\n") + "\n")
    again = scanned_verdicts(_STAGE, tmp_path, "stage.py", cache)
    assert all(v and set(v) <= NOT_SAFE for v in again.values()), again


def test_warm_named_alone_reuses_the_cache(tmp_path: Path) -> None:
    """Nothing changed: the second run takes the named file's result from the cache (the
    context files' hashes make the same tree digest as the first run's)."""
    _project(tmp_path, "pyproject.toml")
    (tmp_path / "stage.py").write_text(_STAGE.source.lstrip("\n"))
    (tmp_path / "other.py").write_text("import stage\n")
    config = load_config(["stage.py"], cwd=tmp_path)
    cwd = Path.cwd()
    try:
        os.chdir(tmp_path)
        runs = [scan(["stage.py"], config, jobs=1, cache_dir=tmp_path / ".c") for _ in range(2)]
    finally:
        os.chdir(cwd)
    assert [r.analysed for r in runs] == [1, 0]
    assert runs[1].cache_hits == 1
    assert [f.verdict for f in runs[1].findings] == [f.verdict for f in runs[0].findings]


def test_project_inside_another_reads_the_enclosing_one(tmp_path: Path) -> None:
    """`python/pyproject.toml` inside a git work tree (sglang's layout): the enclosing tree is
    the context, so the closed-world `safe` holds named alone, and a subclass added in the
    enclosing tree, outside the inner project, is seen."""
    _project(tmp_path, ".git")
    inner = tmp_path / "python"
    _project(inner, "pyproject.toml")
    case = Case("stage", source=STAGE_FILL)
    alone = scanned_verdicts(case, inner, "stage.py")
    assert all(v == ["safe"] for v in alone.values()), alone
    (tmp_path / "late.py").write_text(_LATE.lstrip("\n"))
    again = scanned_verdicts(case, inner, "stage.py")
    assert all(v and set(v) <= NOT_SAFE for v in again.values()), again
