"""The tree around files named one by one: read for the whole-program view, never reported.

pre-commit names the staged files, and an editor names the file open in it. The closed world
(analysis/methods.py) and the callers of returned buffers need every file of the tree, and a
file named alone shows none of its subclasses, callers or lookups by name. With the rest of the
project read as context, such a run judges a file as a scan of the whole project does, as ruff's
per-file results equal its whole-project ones. The context files are discovered as a scan of the
project root would discover them (the same ignores and excludes), hashed for the tree digest
that cached results check, and put in the project index; only the files named are analysed and
reported.

The project is the outermost folder marked by a `pyproject.toml` or `.git` at or above the
configured root: a project inside another (`python/pyproject.toml` in a git work tree) is read
with the enclosing one, whose files may import it. A file named outside it, a project whose
outermost marker is the home folder or the filesystem root, and source from stdin keep the
closed world off (scan/runner.py `_partial_tree`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from zeroopt.scan.config import Config
from zeroopt.scan.discovery import STDIN, Discovered, SourceFile, discover

_ROOT_MARKERS = ("pyproject.toml", ".git")
_TOO_LARGE = frozenset({os.path.abspath(os.path.expanduser("~")), os.path.abspath(os.sep)})


@dataclass
class Context:
    root: str = ""  # the project root read as context; "" when none is read
    files: list[SourceFile] = field(default_factory=list)  # its files not named on the command line
    links: list[str] = field(default_factory=list)  # links out of it that discovery met


def tree_around(paths: Sequence[str], found: Discovered, config: Config) -> Context:
    """The project's other files when some file was named outside every directory scanned."""
    dirs = scanned_dirs(paths)
    alone = [
        sf.path
        for sf in found.files
        if sf.path != STDIN and sf.explicit and not any(sf.path.startswith(d) for d in dirs)
    ]
    if not alone:
        return Context()
    root = _project_root(config)
    if root is None:
        return Context()
    prefix = os.path.join(root, "")
    if not all(path.startswith(prefix) for path in alone):
        return Context()
    around = discover([root], config)
    named = {sf.path for sf in found.files}
    return Context(root, [sf for sf in around.files if sf.path not in named], around.links)


def scanned_dirs(paths: Sequence[str]) -> list[str]:
    """The directories among `paths`, absolute, each ending in a separator (prefix tests)."""
    return [
        os.path.join(os.path.abspath(p), "")
        for p in paths
        if p != STDIN and os.path.isdir(os.path.abspath(p))
    ]


def _project_root(config: Config) -> str | None:
    """The outermost folder marked as a project (`pyproject.toml` or `.git`) at or above the
    configured root: a project inside another (`python/pyproject.toml` in a git work tree, as
    sglang lays itself out) is imported, subclassed and called by the enclosing one, so that is
    the tree. None without a marker, or when the outermost is the home folder or the filesystem
    root (a dotfiles repository): too large to read as context, and the closed world stays off."""
    folder = os.path.abspath(config.project_root)  # normalised as discovery normalises paths
    outermost = folder if _marked(folder) else None
    if outermost is None:
        return None
    up = os.path.dirname(folder)
    while up != folder:
        if _marked(up):
            outermost = up
        folder, up = up, os.path.dirname(up)
    if outermost in _TOO_LARGE:
        return None
    return outermost


def _marked(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in _ROOT_MARKERS)
