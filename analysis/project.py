"""A whole-program view of the scanned tree: which module each file is, and what a module binds.

Built in two halves so that a cold scan stays cheap:

* `ProjectIndex` (made once per scan, in the parent, from the discovered paths only: no file is
  read or parsed for it) maps module names to files. A file's module name is its path relative to
  its package root, found by walking up the folders that hold an `__init__.py`. Plain data,
  handed to the worker processes.
* `ProjectView` (one per worker process) reads and parses a module only when a name resolved in
  an analysed file goes through it (a star import, a relative import, an absolute import of a
  scanned package), and memoises what the module binds at top level. Every module consulted is
  recorded with the SHA-256 of the bytes read, so the per-file cache can invalidate a result when
  anything it resolved through changes (`ProjectView.deps`).

Soundness: a name resolves through another module only where every binding of it in that
module agrees (the rule of resolve.py inside one file), and a module that can bind names in
ways the index does not see (`globals()`, `vars()`, `sys.modules[__name__]`, a dynamic
`__all__`) resolves nothing. Assumed, and stated in the rule page: no other module assigns
attributes of a scanned module (`mod.name = ...`), and an absolute import of a scanned
package's name means that package (the tree is what is installed). Standard-library names and
the libraries the analysis models (torch, triton, numpy) are never taken from the tree.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import machinery
from typing import TYPE_CHECKING, Any, TypeVar

from zeroopt.analysis.module_getattr import answered_names

if TYPE_CHECKING:
    from zeroopt.analysis.triton_summary import TritonSummary

# Top-level names never resolved through the tree, even where it holds a package of that name.
_EXTERNAL = frozenset({*sys.stdlib_module_names, "torch", "triton", "numpy", "builtins"})
# What lets a module bind names no static reading sees: the names `exec` and `globals` wherever
# they stand as words (a call, an alias `g = globals`, `getattr(builtins, "exec")`), `vars()`
# or a bare `vars`, `sys.modules[__name__]` (or `.get(__name__)`, `[__spec__.name]`) and
# `__dict__[`. Words only: `get_exec()` or `self.model_vars()` name other functions (`exec(` as
# a bare substring matched 208 of the wheels' files that only call such functions). Also what
# reaches `exec` or a module's dict under another spelling: `eval` called or handed on
# (`eval(compile(src, "", "single"))` binds names), the `builtins` module or `__builtins__`
# (`getattr(builtins, "ex" + "ec")`), `__import__`, a frame's `f_globals`/`f_locals`, a
# function's `__globals__`, `types.FunctionType` (code run with a given dict as its globals)
# and `X.__dict__.update(...)` on anything but `self`. Assumed (rule page): no module reaches
# these through a computed name its text does not spell (`import_module("built" + "ins")`).
# Each alternative starts with its word and looks behind it after (`exec(?<!\wexec)` is
# `(?<!\w)exec`), searched alone: a pattern that starts with a word is searched for that word
# first, one that starts with a look-behind is tried at every offset, and that cost 6 CPU s per
# pass over the wheels' files (each worker makes several), against 0.4.
_DYNAMIC_ALTERNATIVES = (
    *(rf"{w}(?<!\w{w})(?!\w)" for w in ("exec", "globals", "f_globals", "f_locals",
                                       "__globals__", "__builtins__", "__import__",
                                       "FunctionType")),
    r"vars(?<!\wvars)\s*\(\s*\)",
    r"vars(?<![\w.]vars)(?![\w\s(])",
    *(rf"sys\s*\.\s*modules\s*{how}\s*{name}" for how in (r"\[", r"\.\s*get\s*\(")
      for name in ("__name__", "__spec__")),
    r"__dict__\s*\[",
    r"builtins(?<![\w.]builtins)(?!\w)",
    r"eval(?<![\w.]eval)(?<!def eval)\s*[(),\]]",
    r"=\s*eval(?!\w)",
    *(rf"__dict__(?<!self\.__dict__)\s*\.\s*{m}" for m in ("update", "setdefault")),
)  # fmt: skip
DYNAMIC_PATTERN = "|".join(_DYNAMIC_ALTERNATIVES)
_DYNAMIC_TEXT = tuple(re.compile(p) for p in _DYNAMIC_ALTERNATIVES)
_DYNAMIC_BYTES = tuple(re.compile(p.encode()) for p in _DYNAMIC_ALTERNATIVES)


def binds_dynamically(text: str) -> bool:
    """Whether a module's source may bind its names out of sight (DYNAMIC_PATTERN)."""
    return any(p.search(text) for p in _DYNAMIC_TEXT)


def _binds_dynamically(data: bytes) -> bool:
    return any(p.search(data) for p in _DYNAMIC_BYTES)


# What lets a def, lambda or class body change a module's entry: a `global` statement (at the
# start of a line, after `;` or a compound statement's `:`) or a star import. Where the bytes
# hold neither (and are ASCII or name no codec), the bodies are not walked for the entry.
_BODY_BINDS = re.compile(rb"(?m)(?:^|[\r:;])[ \t\f]*global\b|import[\s\\]*\*")
_MAX_HOPS = 32  # re-export chains longer than this (or cycles) resolve to nothing new
SELF = "<self>"  # deps key: the analysed file's own module name


def module_name_of(path: str, folders: Folders | None = None) -> tuple[str, bool]:
    """(dotted module name, is a package `__init__`) of a file, relative to its package root.
    A file outside any package gets its bare stem.

    The package root is the parent of the highest folder above the file that holds an
    `__init__.py`; folders between without one are namespace packages (PEP 420) inside it and
    name the module as the import system does: sglang's `sglang/srt/` has no `__init__.py`, and
    `sglang/srt/speculative/spec_utils.py` imports as `sglang.srt.speculative.spec_utils`
    (https://peps.python.org/pep-0420/#specification: a directory without `__init__.py` found in
    the parent package's path is a namespace portion)."""
    folder, base = os.path.split(path)
    stem = base[:-3] if base.endswith(".py") else base
    is_init = stem == "__init__"
    parts = (folders or Folders()).parts(folder)
    return ".".join(parts if is_init else (*parts, stem)), is_init


class Folders:
    """What the index asks of each folder, answered once per folder (a tree has ten times more
    files than folders): whether it holds an `__init__.py`, the package it is, and the namespace
    packages from it up to its top package."""

    def __init__(self) -> None:
        self._init: dict[str, bool] = {}
        self._parts: dict[str, tuple[str, ...]] = {}
        self._spaces: dict[str, tuple[tuple[str, str], ...]] = {}

    def holds_init(self, folder: str) -> bool:
        """Whether `folder` holds an `__init__.py` (a regular package)."""
        known = self._init.get(folder)
        if known is None:
            known = self._init[folder] = os.path.isfile(os.path.join(folder, "__init__.py"))
        return known

    def parts(self, folder: str) -> tuple[str, ...]:
        """The dotted name of the package `folder` is, as parts: from the highest folder at or
        above it that holds an `__init__.py` down to it; () when none does."""
        known = self._parts.get(folder)
        if known is None:
            parent, name = os.path.split(folder)
            if not name:
                known = ()
            else:
                above = self.parts(parent)
                known = (*above, name) if above or self.holds_init(folder) else ()
            self._parts[folder] = known
        return known

    def namespaces(self, folder: str) -> tuple[tuple[str, str], ...]:
        """(name, folder) of the packages from `folder` up to its top package whose folders
        hold no `__init__.py`, innermost first."""
        known = self._spaces.get(folder)
        if known is None:
            parts = self.parts(folder)
            known = ()
            if len(parts) > 1:  # the top package holds an `__init__.py`; nothing above counts
                above = self.namespaces(os.path.dirname(folder))
                known = above if self.holds_init(folder) else ((".".join(parts), folder), *above)
            self._spaces[folder] = known
        return known


def _module_beside(folder: str) -> bool:
    """Whether a module file of the folder's name lies beside it (`ns.py`, `ns.pyc`, an
    extension `ns.cpython-312-x86_64-linux-gnu.so`): the import system takes the file before a
    namespace folder, scanned or not (https://peps.python.org/pep-0420/#specification)."""
    return any(os.path.isfile(folder + suffix) for suffix in machinery.all_suffixes())


@dataclass(frozen=True)
class ProjectIndex:
    """Module name -> file for the scanned files that live in packages. Names that two scanned
    files claim (two copies of one package) are left out: they resolve nothing."""

    modules: dict[str, str] = field(default_factory=dict)
    packages: frozenset[str] = frozenset()  # module names that are packages (`__init__.py`)
    names: dict[str, str] = field(default_factory=dict)  # path -> module name
    tops: frozenset[str] = frozenset()
    # package -> names of its scanned submodules: `from package import *` without `__all__`
    # also binds those a previous import has loaded, so they count as exported.
    children: dict[str, frozenset[str]] = field(default_factory=dict)
    # Every Python file of the tree, importable by name or not (`run-1.py` defines classes too):
    # the closed world of methods.py is all of them.
    files: tuple[str, ...] = ()
    # Namespace packages (folders without `__init__.py` inside a package, module_name_of): they
    # bind nothing but the submodules imported from them.
    namespaces: frozenset[str] = frozenset()

    def has_module(self, name: str) -> bool:
        """Whether `name` is a scanned module, a package or a namespace package."""
        return name in self.modules or name in self.namespaces

    def listing(self, package: str) -> str:
        """What a result that relied on `package`'s submodules records (`deps["/package"]`):
        their names, and whether it is a namespace package, which binds nothing else: an
        `__init__.py` added there (the same submodules) must invalidate the result too."""
        kids = ",".join(sorted(self.children.get(package, ())))
        return f"namespace:{kids}" if package in self.namespaces else kids

    @classmethod
    def build(cls, paths: Iterable[str], roots: Iterable[str] | None = None) -> ProjectIndex:
        """`roots`: the folders scanned. A top-level package resolves absolute imports only where
        it sits at or above a root (`site-packages/sglang` scanned as `unpacked/sglang`): a
        package found deeper (`sglang/.../runtime/models`, with no `__init__.py` above it) is
        imported at run time under some name the tree does not show, and `import models` may
        well mean another package. Without `roots`, every top-level package counts."""
        folders = Folders()
        modules: dict[str, str] = {}
        packages: set[str] = set()
        names: dict[str, str] = {}
        clashes: set[str] = set()
        spaces: set[str] = set()
        space_dirs: dict[str, set[str]] = {}
        aliases: dict[str, set[str]] = {}  # name below a namespace folder -> files
        files: list[str] = []
        for path in paths:
            if not path.endswith(".py"):
                continue
            files.append(path)
            name, is_init = module_name_of(path, folders)
            if not name or not all(p.isidentifier() for p in name.split(".")):
                continue
            names[path] = name
            if "." not in name and not is_init:
                continue  # a script outside any package: not importable by a certain name
            if name in modules and modules[name] != path:
                clashes.add(name)
            modules[name] = path
            if is_init:
                packages.add(name)
            for space, folder in folders.namespaces(os.path.dirname(path)):
                spaces.add(space)
                space_dirs.setdefault(space, set()).add(folder)
                # Run with the namespace folder itself on sys.path, the file is the module
                # named below it (`pkg.helpers` for `vend/lib/pkg/helpers.py`, as before
                # namespace packages were named): a module of the tree of that name is then
                # not certainly the one an import of it finds.
                aliases.setdefault(name[len(space) + 1 :], set()).add(path)
        for alias, held in aliases.items():
            if alias in modules and held != {modules[alias]}:
                clashes.add(alias)
        for name in clashes:
            modules.pop(name, None)
        # A module file beside a folder of its name wins the import (`a/b.py` over `a/b/`),
        # scanned or not: what lies in that folder is not importable under those names.
        shadowed = {
            n
            for n in spaces
            if n in modules or n in clashes or any(_module_beside(d) for d in space_dirs[n])
        }
        if shadowed:
            for name in [m for m in modules if any(m.startswith(f"{n}.") for n in shadowed)]:
                del modules[name]
            spaces = {n for n in spaces if not any(n.startswith(f"{s}.") for s in shadowed)}
        spaces -= shadowed
        top_dirs: dict[str, str] = {}  # top-level package -> its folder
        for name, path in modules.items():
            top = name.partition(".")[0]
            if top in top_dirs:
                continue  # the first module of a top-level package names its folder
            folder = os.path.dirname(path)
            for _ in range(name.count(".") - (0 if name in packages else 1)):
                folder = os.path.dirname(folder)
            top_dirs[top] = folder
        tops = set(top_dirs) - _EXTERNAL
        if roots is not None:
            anchors = [os.path.abspath(r) for r in roots]
            tops = {
                t
                for t in tops
                if any(_at_or_above(os.path.dirname(top_dirs[t]), a) for a in anchors)
            }
        kids: dict[str, set[str]] = {}
        for name in [*modules, *spaces]:
            parent, _, leaf = name.rpartition(".")
            if parent:
                kids.setdefault(parent, set()).add(leaf)
        children = {p: frozenset(k) for p, k in kids.items()}
        return cls(
            modules,
            frozenset(packages),
            names,
            frozenset(tops),
            children,
            tuple(sorted(files)),
            frozenset(spaces),
        )

    def absolute(
        self, importer: str | None, is_package: bool, level: int, module: str
    ) -> str | None:
        """The absolute module a relative import `from <level dots><module> import ...` names."""
        if importer is None or level == 0:
            return module or None
        parts = importer.split(".")
        if not is_package:
            parts = parts[:-1]
        if level - 1 > len(parts) - 1 or not parts:
            return None
        base = parts[: len(parts) - (level - 1)]
        if not base:
            return None
        return ".".join([*base, module] if module else base)


@dataclass
class ModuleEntry:
    """What a module binds at top level, as resolve.py sees it inside that module."""

    bindings: dict[str, frozenset[str]]  # name -> import targets (absolute) / markers
    stars: tuple[str | None, ...]  # star-import targets (None: a relative one not resolvable)
    all_names: tuple[str, ...] | None  # a static `__all__`
    all_dynamic: bool  # `__all__` exists but is not one literal list or tuple of strings
    dynamic: bool  # may bind names no static reading sees: resolve nothing through it
    # The text names `__path__` (`__path__.insert(0, d)`, `extend_path`) or the same list as
    # `__spec__.submodule_search_locations`: a package's submodules may then come from folders
    # the index does not map, so none is resolved through the tree.
    moves_path: bool = False
    # The names its module-level `__getattr__` may answer (module_getattr.py): None for any,
    # empty when it has none.
    getattr_names: frozenset[str] | None = frozenset()


_T = TypeVar("_T")

_NAMESPACE_ENTRY = ModuleEntry({}, (), None, False, False)
_FRESH_TREES = 8  # trees `_load` keeps for the next reader of the same module


class ProjectView:
    """Module entries, read and parsed on first use and kept for the life of the process."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self._entries: dict[str, tuple[str, ModuleEntry | None]] = {}
        self._exports: dict[str, tuple[frozenset[str] | None, dict[str, str]]] = {}
        self.deps: dict[str, str] = {}  # module -> sha256 of what was read ("" when unreadable)
        self._kernels: dict[str, tuple[dict[str, TritonSummary], dict[str, str]]] = {}
        # Function summaries of other modules (summaries.py), kept for the life of the worker:
        # (module, line, name, parameter) -> (summary, the deps it read); the modules parsed for
        # them (a few at a time, with the deps their loading read); the class index of the whole
        # tree (methods.py).
        self.summary_memo: dict[tuple[Any, ...], tuple[Any, dict[str, str]]] = {}
        self.summary_units: dict[str, tuple[Any, dict[str, str]]] = {}
        self.summary_world: Any = None
        self._records: dict[str, dict[str, tuple[str, ...]]] = {}
        # The trees `_load` parsed last, by module: (SHA-256 of the bytes, tree). A summary, a
        # record or a kernel of a module is asked right after its entry is loaded, and parsing
        # it again was a sixth of the parses of a scan. Each tree is handed out once (`_parsed`
        # pops it), so no two readers share one; `_load` only reads it.
        self._fresh_trees: dict[str, tuple[str, ast.Module]] = {}
        self._moved: dict[str, tuple[bool, dict[str, str]]] = {}  # _path_moved's answers
        # What the statements a module's import surely runs import (import_time.py), listed
        # from the tree `_load` parsed: asked of hundreds of modules a scan, it parsed each again.
        self._run_imports: dict[str, tuple[str, ...]] = {}

    def start_file(self, own_module: str | None) -> None:
        self.deps = {SELF: own_module or ""}

    def recording(self, compute: Callable[[], _T]) -> tuple[_T, dict[str, str]]:
        """`compute()` with the dependencies it recorded, which stay recorded as usual: a memo
        keeps them with the answer and records them again on a hit, so a file's deps do not
        depend on which files the worker analysed before."""
        outer, self.deps = self.deps, {}
        try:
            result = compute()
            consulted = dict(self.deps)
        finally:
            self.deps = {**outer, **self.deps}
        return result, consulted

    def is_module(self, name: str) -> bool:
        found = self.index.has_module(name)
        self.deps.setdefault(f"?{name}", "1" if found else "0")
        return found and not self._path_moved(name)

    def _path_moved(self, module: str) -> bool:
        """Whether a package above `module` names `__path__` in its `__init__`: the import
        system then looks for `module` in the folders that list holds, which need not be the
        file's (`__path__.insert(0, other)`, `pkgutil.extend_path`); the packages read are
        recorded in `deps`. Memoised with what it recorded (the entries it reads are kept for
        the life of the view, so the answer never changes): asked on every dotted entry, for
        every package above, it was millions of calls a scan."""
        hit = self._moved.get(module)
        if hit is not None:
            self.deps.update(hit[1])
            return hit[0]
        outer, self.deps = self.deps, {}
        try:
            moved = self._find_moved(module)
            self._moved[module] = (moved, self.deps)
        finally:
            outer.update(self.deps)
            self.deps = outer
        return moved

    def _find_moved(self, module: str) -> bool:
        parts = module.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix in self.index.packages:
                e = self.entry(prefix)
                if e is None or e.moves_path:
                    return True
        return False

    def entry(self, module: str) -> ModuleEntry | None:
        if "." in module and self._path_moved(module):
            return None
        path = self.index.modules.get(module)
        if path is None:
            if module in self.index.namespaces:
                # Binds only its submodules: what it holds is its list of children.
                self.deps[f"/{module}"] = self.index.listing(module)
                return _NAMESPACE_ENTRY
            return None
        memo = self._entries.get(module)
        if memo is None:
            memo = self._load(module, path)
            self._entries[module] = memo
        self.deps[module] = memo[0]
        return memo[1]

    def _load(self, module: str, path: str) -> tuple[str, ModuleEntry | None]:
        from zeroopt.analysis.import_time import run_imports
        from zeroopt.analysis.resolve import Resolver

        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return "", None
        sha = hashlib.sha256(data).hexdigest()
        moves_path = b"__path__" in data or b"submodule_search_locations" in data
        if _binds_dynamically(data):
            return sha, ModuleEntry({}, (), None, True, True, moves_path)
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return sha, None
        resolver = Resolver.build(
            tree,
            module_name=module,
            is_package=module in self.index.packages,
            project=self,
            raw=True,
            module_only=(data.isascii() or b"coding" not in data)
            and _BODY_BINDS.search(data) is None,
        )
        root = resolver.scopes[tree]
        all_names, all_dynamic = _static_all(tree, data)
        self._run_imports[module] = run_imports(tree, module, path.endswith("__init__.py"))
        self._fresh_trees[module] = (sha, tree)
        while len(self._fresh_trees) > _FRESH_TREES:
            del self._fresh_trees[next(iter(self._fresh_trees))]
        entry = ModuleEntry(
            {k: frozenset(v) for k, v in root.bindings.items()},
            tuple(resolver.star_targets),
            all_names,
            all_dynamic,
            False,
            moves_path,
            answered_names(tree) if b"__getattr__" in data else frozenset(),
        )
        return sha, entry

    def exports(self, module: str, _seen: frozenset[str] = frozenset()) -> frozenset[str] | None:
        """The names `from module import *` binds, or None when not certain. The modules read to
        decide it are recorded as dependencies of the file analysed, memo or not."""
        memo = self._exports.get(module)
        if memo is None or _seen:
            result, consulted = self.recording(lambda: self._compute_exports(module, _seen))
            if _seen:
                return result
            memo = (result, consulted)
            self._exports[module] = memo
        else:
            self.deps.update(memo[1])
        return memo[0]

    def _compute_exports(self, module: str, seen: frozenset[str]) -> frozenset[str] | None:
        e = self.entry(module)
        if e is None or e.dynamic or e.all_dynamic or module in seen:
            return None
        if e.all_names is not None:
            return frozenset(e.all_names)
        names = {n for n in e.bindings if not n.startswith("_")}
        if module in self.index.packages or module in self.index.namespaces:
            kids = self.index.children.get(module, frozenset())
            self.deps[f"/{module}"] = self.index.listing(module)
            names |= {n for n in kids if not n.startswith("_")}
        for star in e.stars:
            sub = self.exports(star, seen | {module}) if star is not None else None
            if sub is None:
                return None
            names |= {n for n in sub if not n.startswith("_")}
        return frozenset(names)

    def binding(self, module: str, name: str) -> tuple[str, str | None]:
        """What `name` is in `module`: ("import", qualified) when every binding is the same
        import; ("other", None) when it is bound otherwise (a def, class, assignment) or
        ambiguously; ("unbound", None) when the module certainly does not bind it; ("unknown",
        None) when the module cannot be read or may bind names no static reading sees."""
        e = self.entry(module)
        if e is None or e.dynamic:
            return "unknown", None
        kinds = set(e.bindings.get(name, ()))
        # The module's own `__getattr__` answers `name` unless its text lists what it answers
        # and `name` is not among them (module_getattr.py).
        hook = "__getattr__" in e.bindings and (e.getattr_names is None or name in e.getattr_names)
        for star in e.stars:
            sub = self.exports(star) if star is not None else None
            if sub is None:
                return "unknown", None  # an unknown star import may bind it
            if name in sub:
                kinds.add(f"{star}:{name}")
            hook = hook or "__getattr__" in sub  # `__all__ = ["__getattr__"]` there
        if not kinds:
            # PEP 562: a module-level `__getattr__` answers names the module does not bind,
            # before `from module import name` looks for a submodule of that name.
            return ("unknown", None) if hook else ("unbound", None)
        kinds.discard("<none>")
        if len(kinds) == 1:
            (only,) = kinds
            if not only.startswith("<"):
                return "import", only
        return "other", None

    def kernel_summary(self, module: str, name: str) -> TritonSummary | None:
        """The summary of `@triton.jit` function `name` of scanned `module`, where that def is
        the module's only binding of the name (triton_summary.module_kernels' rule, plus no star
        import that may rebind it)."""
        e = self.entry(module)
        if e is None or e.dynamic or e.bindings.get(name) != frozenset({"<opaque>"}):
            return None
        for star in e.stars:
            sub = self.exports(star) if star is not None else None
            if sub is None or name in sub:
                return None
        memo = self._kernels.get(module)
        if memo is None:
            memo = self.recording(lambda: self._module_kernels(module))
            self._kernels[module] = memo
        else:
            self.deps.update(memo[1])
        return memo[0].get(name)

    def function_binding(self, module: str, name: str) -> str | None:
        """`name` when scanned `module` binds it only by non-import statements and no star
        import may rebind it (summaries.py then checks that the binding is one plain def)."""
        e = self.entry(module)
        if e is None or e.dynamic or e.bindings.get(name) != frozenset({"<opaque>"}):
            return None
        for star in e.stars:
            sub = self.exports(star) if star is not None else None
            if sub is None or name in sub:
                return None
        return name

    def record_fields(self, module: str, name: str) -> tuple[str, ...] | None:
        """The fields of `name` when it is a plain dataclass of scanned `module` (records.py's
        rules, applied in that module with its own imports) and the module's only binding of
        the name; else None. The module read is recorded in `deps` through its entry."""
        from zeroopt.analysis.records import plain_dataclasses
        from zeroopt.analysis.resolve import declared_globals

        if self.function_binding(module, name) is None:
            return None
        found = self._records.get(module)
        if found is None:
            data = self._module_bytes(module)  # refused when the bytes are not the entry's
            if data is None:
                return None
            if data.isascii() and b"coding" not in data and b"dataclasses" not in data:
                # Nothing here can name `dataclasses.dataclass` (records.py): none, unparsed.
                found = {}
            else:
                tree = self._parsed(module, data)
                if tree is None:
                    return None
                declared = declared_globals(tree)
                found = plain_dataclasses(tree, declared)
            self._records[module] = found
        return found.get(name)

    def _module_bytes(self, module: str) -> bytes | None:
        """The bytes of a scanned module, or None when unreadable or not those its entry (and
        so the recorded SHA) was made from."""
        path = self.index.modules.get(module)
        if path is None or self.entry(module) is None:
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == self._entries[module][0] else None

    def run_imports(self, module: str) -> tuple[str, ...] | None:
        """What the statements scanned `module`'s import surely runs import, from the tree its
        entry was made of; None where that entry is not readable or was not made from a tree.
        Reads the entry (its SHA goes to `deps`) only where `module_tree` would."""
        if self.index.modules.get(module) is None or self.entry(module) is None:
            return None
        return self._run_imports.get(module)

    def module_tree(self, module: str) -> tuple[ast.Module, str, str] | None:
        """(tree, text, path) of a scanned module, parsed again; refused when the bytes differ
        from those its entry (and so the recorded SHA) was made from."""
        data = self._module_bytes(module)
        if data is None:
            return None
        tree = self._parsed(module, data)
        if tree is None:
            return None
        return tree, data.decode("utf-8", errors="replace"), self.index.modules[module]

    def _parsed(self, module: str, data: bytes) -> ast.Module | None:
        """`ast.parse(data)` (None where it fails), or the tree `_load` parsed from these very
        bytes (the same SHA-256), taken out of `_fresh_trees`: the same tree a parse would make,
        held by no one else."""
        fresh = self._fresh_trees.pop(module, None)
        if fresh is not None and fresh[0] == hashlib.sha256(data).hexdigest():
            return fresh[1]
        try:
            return ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _module_kernels(self, module: str) -> dict[str, TritonSummary]:
        """Parsed again, only for modules whose kernels are launched elsewhere: the entries keep
        no trees. Refused when the bytes differ from those the entry was made from."""
        from zeroopt.analysis.resolve import Resolver
        from zeroopt.analysis.triton_summary import module_kernels

        path = self.index.modules[module]
        try:
            with open(path, "rb") as f:
                data = f.read()
            if hashlib.sha256(data).hexdigest() != self._entries[module][0]:
                return {}
        except OSError:
            return {}
        parsed = self._parsed(module, data)
        if parsed is None:
            return {}
        tree = parsed
        resolver = Resolver.build(
            tree,
            module_name=module,
            is_package=module in self.index.packages,
            project=self,
            dynamic=_binds_dynamically(data),
        )

        def qualify_at(fn: ast.AST, e: ast.expr) -> str | None:
            scope = resolver.scopes.get(fn) or resolver.scopes[tree]
            return resolver.qualified(scope, e)

        return module_kernels(tree, qualify_at)

    def canonical(self, qual: str) -> str:
        """`pkg.mod.name.attr` followed through the tree's re-exports to what it denotes.
        `pkg.mod:name` (what `from pkg.mod import name` binds) looks `name` up in the module
        `pkg.mod` itself, as the import system does, without walking the attributes of `pkg`."""
        found = self._follow(qual)
        if found.partition(".")[0].partition(":")[0] not in self.index.tops:
            return found.replace(":", ".")  # `torch.cuda:graph`: a library name, dotted
        return found

    def _follow(self, qual: str) -> str:
        if qual.partition(".")[0].partition(":")[0] not in self.index.tops:
            return qual
        current = qual
        for _ in range(_MAX_HOPS):
            if ":" in current:
                module, _, rest = current.partition(":")
                name, _, tail = rest.partition(".")
                target = self._direct(module, name)
                if target is not None:
                    current = f"{target}.{tail}" if tail else target
                    continue
                if self._shadows_submodule(module, name):
                    return current  # the attribute, which the submodule's path would not name
                current = f"{module}.{rest}"
                if self.is_module(module):
                    # The import system found `module` by its path, asking no package above it
                    # for an attribute: only the names after it are looked up as attributes.
                    nxt = self._step([module, *rest.split(".")])
                    if nxt is None or nxt == current or ":" in nxt:
                        return nxt if nxt is not None and ":" in nxt else current
                    current = nxt
                    continue
            parts = current.split(".")
            if parts[0] not in self.index.tops:
                return current
            nxt = self._step(parts)
            if nxt is None or nxt == current or ":" in nxt:
                return nxt if nxt is not None and ":" in nxt else current
            current = nxt
        return qual.replace(":", ".")

    def _direct(self, module: str, name: str) -> str | None:
        """What `from module import name` gives when `module` is scanned and binds `name` to
        one import (not shadowed by a submodule of that name); else None."""
        if not self.is_module(module):
            return None
        kind, target = self.binding(module, name)
        if kind == "import" and target is not None and not self.is_module(f"{module}.{name}"):
            return target
        return None

    def _step(self, parts: list[str]) -> str | None:
        """One hop: find the module prefix, then what it binds the next name to."""
        if not self.is_module(parts[0]):
            return None
        i = 1
        while i < len(parts):
            module = ".".join(parts[:i])
            name = parts[i]
            kind, target = self.binding(module, name)
            sub = f"{module}.{name}"
            if kind == "import" and target is not None and not self.is_module(sub):
                return ".".join([target, *parts[i + 1 :]])
            # A definition, an ambiguous name, a name shadowing a submodule, or a module that
            # cannot be read: stop here.
            if kind != "unbound" or not self.is_module(sub):
                if self._shadows_submodule(module, name):
                    return f"{module}:{'.'.join(parts[i:])}"
                return None
            i += 1
        return None

    def _shadows_submodule(self, module: str, name: str) -> bool:
        """Whether attribute `name` of package `module` may be other than its submodule of that
        name: the package binds the name otherwise (`ns = ...`, an import of something else),
        may bind it out of sight, or answers it by `__getattr__`. The path `module.name.rest`
        then names the attribute's attribute, not the module `module.name.rest`, and is kept
        as `module:name.rest`, which no module of the index matches."""
        sub = f"{module}.{name}"
        if not self.index.has_module(sub):
            return False
        kind, target = self.binding(module, name)
        # `from . import ns` (or `from pkg import ns`) in the package itself binds the submodule.
        same = kind == "import" and target is not None and target.replace(":", ".") == sub
        return kind != "unbound" and not same


def _at_or_above(folder: str, root: str) -> bool:
    """`folder` is `root` or one of its ancestors."""
    return root == folder or root.startswith(folder.rstrip(os.sep) + os.sep)


def _static_all(tree: ast.Module, data: bytes) -> tuple[tuple[str, ...] | None, bool]:
    """(`__all__` when it is one top-level literal list/tuple of strings, dynamic)."""
    count = data.count(b"__all__")
    if count == 0:
        return None, False
    if count == 1:
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "__all__"
                and isinstance(stmt.value, ast.List | ast.Tuple)
                and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in stmt.value.elts
                )
            ):
                return tuple(e.value for e in stmt.value.elts), False  # type: ignore[attr-defined]
    return None, True
