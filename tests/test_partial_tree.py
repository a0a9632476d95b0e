"""Whether the files scanned are a whole tree (scan/runner.py `_partial_tree`), where symbolic
links lead: the closed world stays on only where no file resolves outside the folders scanned.

The real path of a file is worked out only where a link lies between it and the folder scanned
that holds it (runner `_Unlinked`); elsewhere it is that folder's real path plus the same tail.
"""

from __future__ import annotations

import os
from pathlib import Path

from zeroopt.scan import runner
from zeroopt.scan.config import load_config
from zeroopt.scan.context_tree import scanned_dirs
from zeroopt.scan.discovery import discover


def _partial(cwd: Path, *paths: str) -> str:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        found = discover(list(paths), load_config(list(paths)))
        return runner._partial_tree(list(paths), found.files, found.links)
    finally:
        os.chdir(old)


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "pkg").mkdir(parents=True)
    outside.mkdir()
    (tree / "pyproject.toml").write_text("")
    for rel in ("pkg/__init__.py", "pkg/a.py", "b.py"):
        (tree / rel).write_text("x = 1\n")
    (outside / "o.py").write_text("x = 1\n")
    return tree, outside


def test_a_tree_without_links_is_whole(tmp_path: Path) -> None:
    tree, _ = _trees(tmp_path)
    assert _partial(tree, ".") == ""


def test_a_tree_scanned_through_a_link_to_it_is_whole(tmp_path: Path) -> None:
    """The folder named is itself a link: every file's real path lies in the folder's."""
    tree, _ = _trees(tmp_path)
    (tmp_path / "alias").symlink_to(tree, target_is_directory=True)
    assert _partial(tmp_path, "alias") == ""


def test_a_file_link_found_in_the_tree(tmp_path: Path) -> None:
    """A link the walk finds, to a file of another tree: partial; to a file of its own: whole."""
    tree, outside = _trees(tmp_path)
    (tree / "pkg" / "inside.py").symlink_to(tree / "b.py")
    assert _partial(tree, ".") == ""
    (tree / "pkg" / "there.py").symlink_to(outside / "o.py")
    why = _partial(tree, ".")
    assert why.startswith("pkg/there.py links to") and str(outside / "o.py") in why


def test_a_file_named_through_a_linked_folder_inside_the_tree(tmp_path: Path) -> None:
    """`scan . more/o.py` with `more` a link to another tree: the walk does not follow `more`,
    the file named through it resolves outside, and the folder link (not the file) shows it."""
    tree, outside = _trees(tmp_path)
    (tree / "more").symlink_to(outside, target_is_directory=True)
    why = _partial(tree, ".", "more/o.py")
    assert why.startswith("more/o.py links to") and str(outside / "o.py") in why


def test_unlinked_paths_resolve_inside_their_folder(tmp_path: Path) -> None:
    """Every path `_Unlinked` lets pass without `realpath` has its real path inside the real
    path of a folder scanned, over links at every level of a small tree."""
    tree, outside = _trees(tmp_path)
    (tree / "pkg" / "sub").mkdir()
    (tree / "pkg" / "sub" / "c.py").write_text("")
    (tree / "pkg" / "ln_file.py").symlink_to(outside / "o.py")
    (tree / "pkg" / "ln_dir").symlink_to(outside, target_is_directory=True)
    (tree / "ln_pkg").symlink_to(tree / "pkg", target_is_directory=True)
    (tmp_path / "alias").symlink_to(tree, target_is_directory=True)
    candidates = [
        tree / "b.py",
        tree / "pkg" / "a.py",
        tree / "pkg" / "sub" / "c.py",
        tree / "pkg" / "ln_file.py",
        tree / "pkg" / "ln_dir" / "o.py",
        tree / "ln_pkg" / "a.py",
        tree / "ln_pkg" / "sub" / "c.py",
        tmp_path / "alias" / "pkg" / "a.py",
        tmp_path / "alias" / "ln_pkg" / "a.py",
        outside / "o.py",
    ]
    for scanned in ([str(tree)], [str(tmp_path / "alias")], [str(tree), str(tree / "pkg")]):
        dirs = scanned_dirs(scanned)
        real = [os.path.join(os.path.realpath(d), "") for d in dirs]
        unlinked = runner._Unlinked(dirs)
        passed = [str(p) for p in candidates if unlinked.file(str(p))]
        for p in passed:
            assert any(os.path.realpath(p).startswith(d) for d in real), (scanned, p)
        assert str(tree / "pkg" / "a.py") in passed or scanned == [str(tmp_path / "alias")]
        assert str(tree / "pkg" / "ln_file.py") not in passed
        assert str(tree / "pkg" / "ln_dir" / "o.py") not in passed
        assert str(tree / "ln_pkg" / "a.py") not in passed
        assert str(outside / "o.py") not in passed
