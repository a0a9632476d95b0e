"""`[tool.zeroopt]` in pyproject.toml, merged with command-line overrides, validated strictly.

Strict because a misspelt key (`exlude`) that is silently ignored makes a user trust a scan that
did not do what they asked; every problem names the key and the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from zeroopt.analysis.kernel_contracts import KernelContract, kernel_from_config
from zeroopt.analysis.lifecycles import lifecycles_from_config
from zeroopt.analysis.options import AnalysisOptions, Contract

# Same defaults as ruff: tool caches, virtual environments and build outputs are never user code.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    ".zeroopt_cache",
)
DEFAULT_INCLUDE: tuple[str, ...] = ("*.py", "*.pyi")
DEFAULT_SELECT: tuple[str, ...] = ("ZO",)
DEFAULT_CACHE_DIR = ".zeroopt_cache"
UNUSED_SUPPRESSION_CODE = "ZO900"
_CODE_RE = re.compile(r"^(ALL|ZO[0-9]{0,3})$")


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI prints it and exits 2."""


def known_rule_codes() -> tuple[str, ...]:
    """Codes of the registered rules plus ZO900 (reported by the runner, not by a rule)."""
    from zeroopt.rules import ALL_RULES

    return (*(str(rule.code) for rule in ALL_RULES), UNUSED_SUPPRESSION_CODE)


def glob_to_regex(pattern: str) -> str:
    """Translate a path glob: `*`/`?` stay inside one path component, `**` spans components."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if j == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


class PathMatcher:
    """Globs as ruff reads them: a pattern without `/` matches any path component by name
    (`build`, `*_pb2.py`); a pattern with `/` matches the path relative to the project root."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        names = [glob_to_regex(p) for p in self.patterns if "/" not in p.rstrip("/")]
        paths = [glob_to_regex(p.strip("/")) for p in self.patterns if "/" in p.rstrip("/")]
        self._name = re.compile("|".join(f"(?:{r})" for r in names)) if names else None
        # A relative pattern also matches everything below a matching directory.
        self._path = re.compile("|".join(f"(?:{r})(?:/.*)?" for r in paths)) if paths else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches_name(self, name: str) -> bool:
        return self._name is not None and self._name.fullmatch(name) is not None

    def matches(self, rel_path: str, below: str | None = None) -> bool:
        """`rel_path`: posix path relative to the project root (absolute when outside it).

        Name patterns test each component of `below` (the part of the path under the directory
        named on the command line; default all of `rel_path`), so `zeroopt scan build/` scans
        build/ and a checkout under /tmp/build/ is not excluded by the default `build` pattern.
        """
        if self._name is not None:
            parts = (below if below is not None else rel_path).split("/")
            if any(self._name.fullmatch(p) for p in parts if p):
                return True
        return self._path is not None and self._path.fullmatch(rel_path) is not None

    def matches_file(self, rel_path: str) -> bool:
        """For `include`: name patterns test the file name only."""
        name = rel_path.rsplit("/", 1)[-1]
        if self._name is not None and self._name.fullmatch(name):
            return True
        return self._path is not None and self._path.fullmatch(rel_path) is not None


@dataclass(frozen=True)
class Config:
    project_root: Path
    config_file: Path | None = None  # the pyproject.toml the settings came from, if any
    select: tuple[str, ...] = DEFAULT_SELECT
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    force_exclude: bool = False
    analysis: AnalysisOptions = field(default_factory=AnalysisOptions)
    cache_dir: Path = Path(DEFAULT_CACHE_DIR)  # absolute after load_config
    jobs: int | None = None
    # Accepted and passed through untouched for the lifecycle issue (cross-method analysis).
    lifecycles: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @cached_property
    def include_matcher(self) -> PathMatcher:
        return PathMatcher(self.include)

    @cached_property
    def exclude_matcher(self) -> PathMatcher:
        return PathMatcher((*self.exclude, *self.extend_exclude))

    @cached_property
    def _per_file(self) -> tuple[tuple[PathMatcher, tuple[str, ...]], ...]:
        return tuple((PathMatcher([glob]), codes) for glob, codes in self.per_file_ignores)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """Posix path relative to the project root when under it, else absolute; for globs."""
        absolute = os.path.abspath(path)
        root = str(self.project_root)
        if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
            return Path(os.path.relpath(absolute, root)).as_posix()
        return Path(absolute).as_posix()

    def is_enabled(self, code: str, path: str | None = None) -> bool:
        """Selected, not ignored, and not ignored for this file by per-file-ignores."""
        if not _matches_any(code, (*self.select, *self.extend_select)):
            return False
        if _matches_any(code, self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            rel = self.relative(path)
            for matcher, codes in self._per_file:
                if matcher.matches(rel) and _matches_any(code, codes):
                    return False
        return True

    def analysis_fingerprint(self) -> str:
        """Digest of everything in the configuration that can change what the analysis says."""
        contracts = [
            [c.function, [str(w) if isinstance(w, str) else w for w in c.writes], c.source]
            for c in self.analysis.contracts
        ]
        kernels = [repr(k) for k in self.analysis.kernels]
        blob = json.dumps(
            {
                "contracts": contracts,
                "lifecycles": self.lifecycles,
                "kernels": kernels,
                "judge_empties": self.analysis.judge_empties,
                "closed_world": self.analysis.closed_world,
                "callers_closed": self.analysis.callers_closed,
                "partial_tree": self.analysis.partial_tree,
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _matches_any(code: str, selectors: Iterable[str]) -> bool:
    return any(sel == "ALL" or code.startswith(sel) for sel in selectors)


# --------------------------------------------------------------------------- loading

_KEYS = {
    "include",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "select",
    "extend-select",
    "ignore",
    "contracts",
    "cache-dir",
    "jobs",
    "force-exclude",
    "lifecycles",
    "kernels",
    "closed-world",
    "callers-closed",
}


def find_pyproject(start: Path) -> Path | None:
    """Nearest pyproject.toml with a [tool.zeroopt] table, walking up from `start`.

    A pyproject.toml without that table is remembered as the fallback project root marker,
    so the cache lands beside the project (as ruff does) even with no zeroopt settings.
    """
    fallback: Path | None = None
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            data = _read_toml(candidate)
            if isinstance(data.get("tool"), dict) and "zeroopt" in data["tool"]:
                return candidate
            if fallback is None:
                fallback = candidate
    return fallback


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _start_dir(paths: Sequence[str], cwd: Path) -> Path:
    for p in paths:
        if p == "-":
            continue
        candidate = Path(p) if os.path.isabs(p) else cwd / p
        candidate = Path(os.path.abspath(candidate))
        return candidate if candidate.is_dir() else candidate.parent
    return cwd


def load_config(
    paths: Sequence[str] = (),
    *,
    cwd: Path | None = None,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    force_exclude: bool | None = None,
    stdin_filename: str | None = None,
) -> Config:
    """Configuration for scanning `paths`: nearest [tool.zeroopt] plus command-line overrides.

    `--select` replaces the configured selection; `--ignore` and `--extend-select` add to it
    (ruff's rules). Raises ConfigError with the file and key on any invalid setting.
    """
    cwd = Path(os.path.abspath(cwd or os.getcwd()))
    anchor = list(paths)
    if stdin_filename and "-" in paths:
        anchor.insert(0, stdin_filename)
    pyproject = find_pyproject(_start_dir(anchor, cwd))
    raw: dict[str, Any] = {}
    if pyproject is not None:
        tool = _read_toml(pyproject).get("tool", {})
        raw = tool.get("zeroopt", {}) if isinstance(tool, dict) else {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{pyproject}: [tool.zeroopt] must be a table")
    root = pyproject.parent if pyproject is not None else cwd
    where = str(pyproject) if pyproject is not None else "<defaults>"

    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) in [tool.zeroopt]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_KEYS))})"
        )

    def strings(key: str, default: Sequence[str]) -> tuple[str, ...]:
        if key not in raw:
            return tuple(default)
        value = raw[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: [tool.zeroopt] {key} must be a list of strings")
        return tuple(value)

    cfg_select = strings("select", DEFAULT_SELECT)
    cfg_extend = strings("extend-select", ())
    cfg_ignore = strings("ignore", ())
    for key, codes in (
        ("select", cfg_select),
        ("extend-select", cfg_extend),
        ("ignore", cfg_ignore),
    ):
        _check_codes(codes, f"{where}: [tool.zeroopt] {key}")

    pfi: list[tuple[str, tuple[str, ...]]] = []
    table = raw.get("per-file-ignores", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.zeroopt] per-file-ignores must be a table")
    for glob, codes in table.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(
                f"{where}: [tool.zeroopt.per-file-ignores] {glob!r} must be a list of codes"
            )
        _check_codes(codes, f"{where}: [tool.zeroopt.per-file-ignores] {glob!r}")
        pfi.append((glob, tuple(codes)))

    contracts = _contracts(raw.get("contracts", {}), where)
    kernels = _kernels(raw.get("kernels", {}), where)

    cfg_jobs = raw.get("jobs")
    if cfg_jobs is not None and (
        isinstance(cfg_jobs, bool) or not isinstance(cfg_jobs, int) or cfg_jobs < 1
    ):
        raise ConfigError(f"{where}: [tool.zeroopt] jobs must be a positive integer")
    cfg_closed = raw.get("closed-world", True)
    if not isinstance(cfg_closed, bool):
        raise ConfigError(f"{where}: [tool.zeroopt] closed-world must be true or false")
    cfg_callers = raw.get("callers-closed", False)
    if not isinstance(cfg_callers, bool):
        raise ConfigError(f"{where}: [tool.zeroopt] callers-closed must be true or false")
    cfg_force = raw.get("force-exclude", False)
    if not isinstance(cfg_force, bool):
        raise ConfigError(f"{where}: [tool.zeroopt] force-exclude must be true or false")
    lifecycles = raw.get("lifecycles", {})
    _check_lifecycles(lifecycles, where)
    try:
        models = lifecycles_from_config(lifecycles)
    except ValueError as exc:
        raise ConfigError(f"{where}: [tool.zeroopt] {exc}") from exc

    cfg_cache = raw.get("cache-dir", DEFAULT_CACHE_DIR)
    if not isinstance(cfg_cache, str):
        raise ConfigError(f"{where}: [tool.zeroopt] cache-dir must be a string")
    env_cache = os.environ.get("ZEROOPT_CACHE_DIR")
    if cache_dir is not None:
        resolved_cache = cwd / cache_dir  # command line: relative to where it was typed
    elif env_cache:
        resolved_cache = cwd / env_cache
    else:
        resolved_cache = root / Path(cfg_cache).expanduser()

    if select is not None:
        _check_codes(select, "--select")
    if extend_select is not None:
        _check_codes(extend_select, "--extend-select")
    if ignore is not None:
        _check_codes(ignore, "--ignore")
    if jobs is not None and jobs < 1:
        raise ConfigError("--jobs must be a positive integer")

    return Config(
        project_root=root,
        config_file=pyproject,
        select=tuple(select) if select is not None else cfg_select,
        extend_select=cfg_extend + tuple(extend_select or ()),
        ignore=cfg_ignore + tuple(ignore or ()),
        include=strings("include", DEFAULT_INCLUDE),
        exclude=strings("exclude", DEFAULT_EXCLUDE),
        extend_exclude=strings("extend-exclude", ()),
        per_file_ignores=tuple(pfi),
        force_exclude=cfg_force if force_exclude is None else force_exclude,
        analysis=AnalysisOptions(
            contracts=contracts,
            kernels=kernels,
            lifecycles=models,
            closed_world=cfg_closed,
            callers_closed=cfg_callers,
        ),
        cache_dir=Path(os.path.abspath(resolved_cache)),
        jobs=jobs if jobs is not None else cfg_jobs,
        lifecycles=lifecycles,
    )


_LIFECYCLE_KEYS = {
    "requires": "a non-empty list of method names",
    "init": "a list of method names",
    "forward": "a list of method names",
    "cycles": 'a list of tables like { name = "replay", setup = ["prepare"] }',
}
_CYCLE_KEYS = {
    "name": "a string",
    "setup": "a list of method names",
    "runs_forward": "true or false",
}


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _check_lifecycles(table: Any, where: str) -> None:
    """`[tool.zeroopt.lifecycles.NAME]`: every problem names the key and the type expected (a
    string where a list belongs would otherwise be read as a list of its characters)."""
    if not isinstance(table, dict):
        raise ConfigError(
            f"{where}: [tool.zeroopt] lifecycles must be a table of models, got {_type_name(table)}"
        )
    for name, spec in table.items():
        ctx = f"{where}: [tool.zeroopt.lifecycles.{name}]"
        if not isinstance(spec, dict):
            raise ConfigError(
                f"{ctx} must be a table with keys {', '.join(_LIFECYCLE_KEYS)}, "
                f"got {_type_name(spec)}"
            )
        unknown = sorted(set(spec) - set(_LIFECYCLE_KEYS))
        if unknown:
            raise ConfigError(
                f"{ctx}: unknown key(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(_LIFECYCLE_KEYS)})"
            )
        if "requires" not in spec:
            raise ConfigError(f"{ctx}: `requires` is missing: {_LIFECYCLE_KEYS['requires']}")
        for key in ("requires", "init", "forward"):
            if key in spec:
                _check_names(spec[key], f"{ctx} {key}", _LIFECYCLE_KEYS[key])
        if not spec["requires"]:
            raise ConfigError(f"{ctx} requires must name at least one method")
        cycles = spec.get("cycles", [])
        if not isinstance(cycles, list):
            raise ConfigError(
                f"{ctx} cycles must be {_LIFECYCLE_KEYS['cycles']}, got {_type_name(cycles)}"
            )
        for i, cycle in enumerate(cycles):
            cctx = f"{ctx} cycles[{i}]"
            if not isinstance(cycle, dict):
                raise ConfigError(
                    f'{cctx} must be a table like {{ name = "replay", setup = ["prepare"] }}, '
                    f"got {_type_name(cycle)}"
                )
            unknown = sorted(set(cycle) - set(_CYCLE_KEYS))
            if unknown:
                raise ConfigError(
                    f"{cctx}: unknown key(s) {', '.join(map(repr, unknown))} "
                    f"(known: {', '.join(_CYCLE_KEYS)})"
                )
            if not isinstance(cycle.get("name"), str):
                got = _type_name(cycle["name"]) if "name" in cycle else "nothing"
                raise ConfigError(f"{cctx} name must be a string, got {got}")
            if "setup" in cycle:
                _check_names(cycle["setup"], f"{cctx} setup", _CYCLE_KEYS["setup"])
            if "runs_forward" in cycle and not isinstance(cycle["runs_forward"], bool):
                raise ConfigError(
                    f"{cctx} runs_forward must be true or false, "
                    f"got {_type_name(cycle['runs_forward'])}"
                )


def _check_names(value: Any, ctx: str, expected: str) -> None:
    if not isinstance(value, list):
        hint = f" (write [{value!r}] for one method)" if isinstance(value, str) else ""
        raise ConfigError(f"{ctx} must be {expected}, got {_type_name(value)}{hint}")
    for item in value:
        if not isinstance(item, str) or not _IDENT.match(item):
            raise ConfigError(f"{ctx} must be {expected}; {item!r} is not a method name")


def _check_codes(codes: Iterable[str], where: str) -> None:
    known: tuple[str, ...] = ()
    for code in codes:
        if not _CODE_RE.match(code):
            raise ConfigError(f"{where}: {code!r} is not a rule code (expected e.g. ZO001)")
        if code == "ALL" or UNUSED_SUPPRESSION_CODE.startswith(code):
            continue  # known without loading the rules (and with them the whole analysis)
        known = known or known_rule_codes()
        if not any(k.startswith(code) for k in known):
            raise ConfigError(
                f"{where}: unknown rule code {code!r} (known: {', '.join(sorted(known))})"
            )


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _kernels(table: Any, where: str) -> tuple[KernelContract, ...]:
    """`[tool.zeroopt.kernels."pkg.mod.fn"]` tables -> KernelContract; errors name the table."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.zeroopt] kernels must be a table")
    out = []
    for function, spec in table.items():
        ctx = f"{where}: [tool.zeroopt.kernels] {function!r}"
        if not _DOTTED.match(function):
            raise ConfigError(f"{ctx}: not a dotted function name")
        if not isinstance(spec, dict):
            raise ConfigError(f"{ctx}: must be a table with params, row-reads, writes, ...")
        try:
            out.append(kernel_from_config(function, spec, where))
        except ValueError as exc:
            raise ConfigError(f"{ctx}: {exc}") from exc
    return tuple(out)


def _contracts(table: Any, where: str) -> tuple[Contract, ...]:
    """`"pkg.mod.func" = { writes = [0, "out"] }` -> Contract; anything else is an error."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.zeroopt] contracts must be a table")
    out: list[Contract] = []
    for function, spec in table.items():
        ctx = f"{where}: [tool.zeroopt.contracts] {function!r}"
        if not _DOTTED.match(function):
            raise ConfigError(f"{ctx}: not a dotted function name")
        if not isinstance(spec, dict):
            raise ConfigError(f'{ctx}: must be a table like {{ writes = [0, "out"] }}')
        extra = sorted(set(spec) - {"writes"})
        if extra:
            raise ConfigError(f"{ctx}: unknown key(s) {', '.join(extra)} (known: writes)")
        writes = spec.get("writes")
        if not isinstance(writes, list) or not writes:
            raise ConfigError(f"{ctx}: writes must be a non-empty list")
        for w in writes:
            ok_int = isinstance(w, int) and not isinstance(w, bool) and w >= 0
            ok_str = isinstance(w, str) and _IDENT.match(w) is not None
            if not (ok_int or ok_str):
                raise ConfigError(
                    f"{ctx}: writes entries must be argument positions (int >= 0) or "
                    f"keyword names, got {w!r}"
                )
        out.append(Contract(function=function, writes=tuple(writes), source=f"{where}"))
    return tuple(out)
