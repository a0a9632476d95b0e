"""Which files of the scanned tree may name a def, by the text of each file.

A buffer returned to callers is judged at every call of its function only when the calls found
are all its uses (analysis/returned.py, returned_modules.py): every other file that may name it
must be found. A file may name it by the word itself, through a star import that re-exports it,
through a way to module objects that spells no import, or by an attribute lookup whose name the
text does not spell (`getattr(x, k)`, a joined literal `"_al" "loc"`). The word index and the
star-import edges are built once per tree and worker (scan/tree_facts.py builds the index before
the workers fork).
"""

from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING

from zeroopt.analysis.resolve import walk_all, walk_bfs

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld
    from zeroopt.analysis.summaries import Unit


def naming_files(
    world: ClassWorld,
    unit: Unit,
    real_path: str | None,
    name: str,
    method: bool = False,
    reexports: frozenset[str] = frozenset(),
) -> tuple[list[int], str]:
    """(the files of the tree other than this one that may name this module's `name`, why
    a file may look it up without naming it). A file may name it when its text
    has `name` as a word and, unless this module is a package's `__init__` (reached by
    `from . import name`) or binds `__all__` other than by one literal list, the last part
    of this module's name as a word too (an import of a private name spells its module:
    `from .mod import _f`, `import pkg.mod`; a re-export is such a file itself). For a
    public name (`callers-closed`), the modules that star-import this one, to a fixpoint,
    count as its names too: a star import re-exports the name without spelling it; so do
    `reexports`, the last parts of names of modules that import it."""
    own = {unit.path}
    if real_path is not None:
        own.add(os.path.realpath(real_path))
    module = (unit.module or "").rpartition(".")[2]
    package = real_path is None or real_path.endswith("__init__.py")
    spelled = None
    own_text = "\n".join(unit.lines).encode("utf-8", "surrogatepass")
    # A method is reached through any instance, which any file may be handed: no import
    # of its module need be spelled there.
    if (
        module
        and not package
        and not method
        and _literal_all(unit.tree)
        and not _HANDS.search(own_text)
    ):
        # A star import re-exports a public name without spelling it: the modules that do
        # (and those that star-import them, ...) are names of this module too.
        words = {module} if name.startswith("_") else _star_importers(world, module)
        if words is not None:
            words = words | reexports
            alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
            spelled = re.compile(rb"(?<!\w)(?:" + alternatives + rb")(?!\w)")
    index = _word_index(world.digest, world.files)
    named = index.get(name, ()) if name.startswith("_") else _naming(world, name)
    files: list[int] = []
    for i in named:
        path, data = world.files[i]
        if path in own or os.path.realpath(path) in own:
            continue
        if spelled is not None and not spelled.search(data) and not _HANDS.search(data):
            continue  # never names this module nor reaches module objects otherwise
        files.append(i)
    for i, (path, data) in enumerate(world.files):
        if path in own or os.path.realpath(path) in own or not _LOOKUP.search(data):
            continue
        if spelled is not None and not spelled.search(data) and not _HANDS.search(data):
            continue
        # A method: lookups by a computed name are anyorder_reach's (returned_methods.py),
        # by the receiver they may reach; a joined literal is no computed name there.
        line = _unspelled_lookup(world.digest, i, data, name, method, joined_only=method)
        if line:
            return files, (
                f"{path}:{line} looks an attribute up by a name its text does not spell "
                f"(a computed or joined string): it may be `{name}`"
            )
    return files, ""


def word_pattern(raw: bytes) -> re.Pattern[bytes]:
    """`raw` standing as a word, no word character on either side: the matches of
    `(?<!\\w)raw(?!\\w)`, spelled with the word first and the look behind it after. A pattern
    that starts with a look-behind is tried at every offset of a text (a few MB/s); one that
    starts with a word is searched for it first."""
    e = re.escape(raw)
    return re.compile(e + rb"(?<!\w" + e + rb")(?!\w)")


_NAMING: dict[tuple[str, str], list[int]] = {}  # (tree digest, public name) -> files naming it


def _naming(world: ClassWorld, name: str) -> list[int]:
    """The files of the tree whose text has `name` as a word (public names are not in the word
    index of `_` names: searched once per name and worker)."""
    key = (world.digest, name)
    hit = _NAMING.get(key) if world.digest else None
    if hit is None:
        raw = name.encode()
        word = word_pattern(raw)
        hit = [i for i, (_, data) in enumerate(world.files) if raw in data and word.search(data)]
        if world.digest:
            if len(_NAMING) > 4096:
                _NAMING.clear()
            _NAMING[key] = hit
    return hit


_STAR_HINT = re.compile(rb"import\s*\*")
_STAR = re.compile(rb"(?<![\w.])from\s+(\.*)([\w.]*)\s+import\s*\*")
_STAR_EDGES: dict[str, list[tuple[str, str]] | None] = {}  # tree digest -> star imports


def _star_importers(world: ClassWorld, module: str) -> set[str] | None:
    """`module` and the last part of the name of every module that star-imports one of these,
    to a fixpoint (a package's `__init__` by its package's name; `from . import *` by the
    package the importing file is in, `from .. import *` by the one above)."""
    edges = _star_edges(world)
    if edges is None:
        return None
    words = {module}
    grew = True
    while grew:
        grew = False
        for source, importer in edges:
            if source in words and importer not in words:
                words.add(importer)
                grew = True
    return words


def _star_edges(world: ClassWorld) -> list[tuple[str, str]] | None:
    """(the last part of the module star-imported, the importer's) for every star import of
    the tree, found once per tree and worker; None if one imports from a package not known."""
    if world.digest and world.digest in _STAR_EDGES:
        return _STAR_EDGES[world.digest]
    edges: list[tuple[str, str]] | None = []
    for path, data in world.files:
        if edges is None:
            break
        if not _STAR_HINT.search(data):
            continue
        parts = os.path.normpath(path).split(os.sep)
        stem = parts[-1].removesuffix(".py")
        package = parts[-2] if len(parts) > 1 else ""
        me = package if stem == "__init__" else stem
        for m in _STAR.finditer(data):
            dots, name = len(m.group(1)), m.group(2).decode("utf-8", "replace")
            if name:
                edges.append((name.rpartition(".")[2], me))
            elif 0 < dots < len(parts):
                edges.append((parts[-1 - dots], me))  # `from .. import *`: that package
            else:
                edges = None  # a star import from somewhere unknown: any file may re-export it
                break
    if world.digest:
        _STAR_EDGES.clear()
        _STAR_EDGES[world.digest] = edges
    return edges


def _literal_all(tree: ast.Module) -> bool:
    """Every mention of `__all__` is the one target of an assignment of a literal list of
    strings: a star import of the module exports what they say, or no private name."""
    assigned: set[int] = set()
    for n in walk_bfs([tree]):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.List | ast.Tuple)
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.value.elts)
        ):
            assigned.add(id(n.targets[0]))
    return all(
        id(n) in assigned
        for n in walk_bfs([tree])
        if (isinstance(n, ast.Name) and n.id == "__all__")
        or (isinstance(n, ast.Attribute) and n.attr == "__all__")
    )


# Ways to a module object or its namespace without an import that names it: handed out by the
# module itself (`fn.__globals__`, `sys.modules[__name__]`, `import_module(__name__)`) or found
# by another file (`sys.modules.values()`, `inspect.getmodule(obj)`, `obj.__module__`).
_HANDS = re.compile(
    rb"__globals__|sys\.modules|getmodule|import_module|__import__|__module__|__dict__|vars\("
)
_WORDS = re.compile(rb"_(?<!\w_)\w+")  # `(?<!\w)_\w+`, searched for `_` first: ten times faster
# Lookups of an attribute by a name the text need not spell.
_LOOKUP = re.compile(rb"getattr\(|attrgetter\(|methodcaller\(|getmembers\(|vars\(|__dict__")
_LOOKUPS: dict[tuple[str, int], tuple[int, int, dict[str, int]]] = {}


def _unspelled_lookup(
    digest: str, i: int, data: bytes, name: str, method: bool, joined_only: bool = False
) -> int:
    """The line of a lookup in file `i` that may fetch attribute `name` though the file's text
    never spells it: `getattr(x, <not one literal>)`, `attrgetter(...)`/`methodcaller(...)` of
    one, `inspect.getmembers(x)`, `vars(x)` / `x.__dict__` not indexed by one literal, or a
    literal joined from parts (`"_al" "loc"`); 0 if none.
    For a module's function (not `method`), `getattr(self, k)` / `getattr(cls, k)` is no such
    lookup: the object is an instance or a class, not a module."""
    key = (digest, i)
    hit = _LOOKUPS.get(key) if digest else None
    if hit is None:
        computed = on_objects = 0
        joined: dict[str, int] = {}
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
            computed = 1
        # `vars(m)[k]` / `m.__dict__[k]` with `k` no literal, or the namespace handed on whole.
        literal = {
            id(n.value)
            for n in (walk_all(tree) if tree is not None else ())
            if isinstance(n, ast.Subscript)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
        }
        for n in walk_all(tree) if tree is not None else ():
            if _namespace(n) and id(n) not in literal:
                computed = computed or getattr(n, "lineno", 1)
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            called = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            at = {"getattr": 1, "attrgetter": 0, "methodcaller": 0}.get(called)
            if called == "getmembers":
                computed = computed or n.lineno
            elif at is not None:
                arg = n.args[at] if len(n.args) > at else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    for word in re.findall(r"\w+", arg.value):
                        joined.setdefault(word, n.lineno)
                elif arg is not None or n.keywords:
                    target = n.args[0] if called == "getattr" and n.args else None
                    if isinstance(target, ast.Name) and target.id in ("self", "cls"):
                        on_objects = on_objects or n.lineno
                    else:
                        computed = computed or n.lineno
        hit = (computed, on_objects, joined)
        if digest:
            if len(_LOOKUPS) > 4096:
                _LOOKUPS.clear()
            _LOOKUPS[key] = hit
    computed, on_objects, joined = hit
    if not joined_only and (computed or (method and on_objects)):
        return computed or on_objects
    return joined.get(name, 0) if name.encode() not in data else 0


def _namespace(n: ast.AST) -> bool:
    """`vars(x)` or `x.__dict__` of an object other than `self` / `cls` (a module's namespace)."""
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars":
        target = n.args[0] if n.args else None
    elif isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.ctx, ast.Load):
        target = n.value
    else:
        return False
    return not (isinstance(target, ast.Name) and target.id in ("self", "cls"))


_INDEX: dict[str, dict[str, list[int]]] = {}  # one tree's digest -> its `_name` words -> files


def word_index(world: ClassWorld) -> dict[str, list[int]]:
    """The files of `world` each word starting with `_` occurs in (see `_word_index`)."""
    return _word_index(world.digest, world.files)


def _word_index(digest: str, files: list[tuple[str, bytes]]) -> dict[str, list[int]]:
    """The files of the tree each word starting with `_` occurs in, built once per worker (a
    world without a digest, one file analysed alone, every time)."""
    hit = _INDEX.get(digest) if digest else None
    if hit is None:
        hit = {}
        for i, (_, data) in enumerate(files):
            for w in set(_WORDS.findall(data)):
                hit.setdefault(w.decode("utf-8", "replace"), []).append(i)
        _INDEX.clear()
        _INDEX[digest] = hit
    return hit
