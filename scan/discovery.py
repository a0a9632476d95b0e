"""Turn PATH arguments into the list of Python files to scan, the way ruff does.

Inside a git work tree, git itself decides what is ignored (`git ls-files --cached --others
--exclude-standard`): it knows every .gitignore, .git/info/exclude and the global excludes file,
and it is faster than any Python walk. Outside one, a small walk reads .gitignore files itself.
Directory symlinks are not followed (as git does not), so a symlink loop cannot hang a scan;
a file that cannot be read is reported by the runner as an `errors` entry.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zeroopt.scan.config import Config, glob_to_regex
from zeroopt.scan.findings import FileError

STDIN = "-"


@dataclass(frozen=True)
class SourceFile:
    path: str  # absolute, normalised filesystem path ("-" for stdin)
    display: str  # the path shown in findings: relative to cwd when under it, else as given
    explicit: bool  # named on the command line: scanned even if excluded (unless force-exclude)


@dataclass
class Discovered:
    files: list[SourceFile] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    # Symbolic links to directories outside every directory scanned, met in the walk and not
    # followed: Python imports what they hold, so the scanned files are not the whole tree.
    links: list[str] = field(default_factory=list)


def display_path(absolute: str, cwd: str, given: str | None = None) -> str:
    """Relative to cwd when under it (as ruff prints paths), else the path as given."""
    prefix = cwd.rstrip(os.sep) + os.sep
    if absolute.startswith(prefix):
        return Path(absolute[len(prefix) :]).as_posix()
    return given if given is not None else absolute


def discover(
    paths: Sequence[str],
    config: Config,
    *,
    stdin_filename: str | None = None,
    cwd: str | None = None,
) -> Discovered:
    """Expand files, directories and `-` into a deduplicated list sorted by display path."""
    cwd = os.path.abspath(cwd or os.getcwd())
    out = Discovered()
    seen: dict[str, SourceFile] = {}

    def add(absolute: str, explicit: bool, given: str | None = None) -> None:
        if absolute in seen and (seen[absolute].explicit or not explicit):
            return
        seen[absolute] = SourceFile(absolute, display_path(absolute, cwd, given), explicit)

    for arg in paths:
        if arg == STDIN:
            name = stdin_filename or STDIN
            if (
                stdin_filename
                and config.force_exclude
                and _force_excluded(config, os.path.join(cwd, stdin_filename))
            ):
                continue
            seen[STDIN] = SourceFile(STDIN, name, True)
            continue
        absolute = os.path.normpath(os.path.join(cwd, arg))
        if os.path.isdir(absolute):
            if config.force_exclude and _force_excluded(config, absolute):
                continue
            for found in _walk(absolute, config, out.errors, cwd, out.links):
                add(found, explicit=False)
        elif os.path.lexists(absolute):
            if config.force_exclude and _force_excluded(config, absolute):
                continue
            add(absolute, explicit=True, given=arg)
        else:
            out.errors.append(FileError(arg, "No such file or directory"))

    out.files = sorted(seen.values(), key=lambda f: (f.display, f.path))
    dirs = [os.path.join(os.path.realpath(p), "") for p in paths if p != STDIN and os.path.isdir(p)]
    out.links = [
        link
        for link in out.links
        if not any(os.path.join(os.path.realpath(link), "").startswith(d) for d in dirs)
    ]
    return out


def _force_excluded(config: Config, absolute: str) -> bool:
    """--force-exclude for a path named on the command line: name patterns test the components
    under the project root (only the file name when the path lies outside it)."""
    rel = config.relative(absolute)
    below = rel if not os.path.isabs(rel) else os.path.basename(absolute)
    return config.exclude_matcher.matches(rel, below)


def _walk(
    root: str, config: Config, errors: list[FileError], cwd: str, links: list[str]
) -> Iterator[str]:
    found: list[str] = []  # symbolic links to directories, not followed
    listed = _git_ls_files(root, found)
    if listed is not None and not listed and _git_ignores(root):
        listed = None  # the user named an ignored directory (an unpacked wheel, say): walk it
        found.clear()
    candidates = listed if listed is not None else _walk_fs(root, errors, cwd, found)
    include, exclude = config.include_matcher, config.exclude_matcher
    root_rel = config.relative(root)
    prefix = "" if root_rel == "." else root_rel.rstrip("/") + "/"
    cut = len(root.rstrip(os.sep)) + 1
    for absolute in candidates:
        # String slicing, not relpath: this loop runs for every file of a large tree.
        below = absolute[cut:].replace(os.sep, "/")
        rel = prefix + below
        if not include.matches_file(rel) or exclude.matches(rel, below):
            continue
        yield absolute
    for absolute in found:
        below = absolute[cut:].replace(os.sep, "/")
        if not exclude.matches(prefix + below, below):
            links.append(absolute)


def _git_ls_files(root: str, links: list[str]) -> list[str] | None:
    """Files git would consider under `root` (tracked + untracked, minus ignored), or None."""
    try:
        proc = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None  # not a work tree (or git refused, e.g. dubious ownership): walk instead
    files: list[str] = []
    for raw in dict.fromkeys(proc.stdout.split(b"\0")):  # --cached lists conflicts repeatedly
        if not raw:
            continue
        absolute = os.path.join(root, os.fsdecode(raw))
        # --cached also lists tracked files deleted from the work tree, and submodules.
        if os.path.isfile(absolute) or (os.path.islink(absolute) and _is_pyish(absolute)):
            files.append(os.path.normpath(absolute))
        elif os.path.islink(absolute) and os.path.isdir(absolute):
            links.append(os.path.normpath(absolute))
    return files


def _git_ignores(directory: str) -> bool:
    parent, name = os.path.split(directory.rstrip(os.sep))
    try:
        proc = subprocess.run(
            ["git", "-C", parent, "check-ignore", "-q", name], capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def _is_link(dirpath: str, name: str) -> bool:
    return os.path.islink(os.path.join(dirpath, name))


def _is_pyish(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _walk_fs(root: str, errors: list[FileError], cwd: str, links: list[str]) -> Iterator[str]:
    """os.walk that honours .gitignore files and turns unreadable directories into errors."""

    def onerror(exc: OSError) -> None:
        where = exc.filename or root
        errors.append(
            FileError(
                display_path(os.path.abspath(where), cwd),
                f"cannot read directory: {exc.strerror or exc}",
            )
        )

    ignores: dict[str, _GitIgnore] = {}
    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        parent = ignores.get(os.path.dirname(dirpath))
        current = _GitIgnore.load(dirpath, parent)
        ignores[dirpath] = current
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != ".git" and not current.ignored(os.path.join(dirpath, d), True)
        )
        links.extend(os.path.join(dirpath, d) for d in dirnames if _is_link(dirpath, d))
        for name in filenames:
            absolute = os.path.join(dirpath, name)
            if not current.ignored(absolute, False):
                yield absolute


class _GitIgnore:
    """The subset of gitignore semantics that matters for source trees without git:
    comments, negation (`!`), anchoring (`/a`, `a/b`), directory-only (`dir/`), `*`, `?`, `**`.
    Rules of deeper .gitignore files come later and win, as in git."""

    def __init__(self, rules: list[tuple[str, re.Pattern[str], bool, bool]]) -> None:
        self.rules = rules  # (base dir, pattern, negated, dir_only)

    @classmethod
    def load(cls, directory: str, parent: _GitIgnore | None) -> _GitIgnore:
        rules = list(parent.rules) if parent else []
        try:
            with open(
                os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace"
            ) as f:
                lines = f.read().splitlines()
        except OSError:
            return cls(rules) if parent is None else parent
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            line = line.removeprefix("\\")
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            body = glob_to_regex(line.lstrip("/"))
            regex = re.compile(body if anchored else f"(?:.*/)?{body}")
            rules.append((directory, regex, negated, dir_only))
        return cls(rules)

    def ignored(self, absolute: str, is_dir: bool) -> bool:
        result = False
        for base, regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            rel = os.path.relpath(absolute, base).replace(os.sep, "/")
            if rel.startswith("..") or not regex.fullmatch(rel):
                continue
            result = not negated
        return result
