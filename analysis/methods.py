"""`self.m(...)` resolved to the enclosing class's own `def m`, under the closed-world assumption.

Closed world: every class whose instances can be `self` here is defined in the scanned tree by a
class statement whose bases name the class (directly, through an import alias `as X`, or a plain
assignment alias `X = C`), and nothing assigns the method name on an object (`obj.m = ...`,
`setattr(obj, "m", ...)`, or under a computed or joined name: `bound_dynamically`) or creates
classes dynamically with a computed base. Under it, `self.m`
is the class's `def m` when no class of the tree that derives from the class, however
indirectly, binds `m` in its body. Subclasses are found by name over the source of every file of
the tree (a class elsewhere with the same name counts as one: more give-ups, never fewer), and
each must inherit through its first base only, so that no other base can come before the class
in its method resolution order. `[tool.zeroopt] closed-world = false` (`--no-closed-world`)
turns this off: such calls stay unknown.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroopt.analysis.dynamic_attributes import ANY as ANY_NAME
from zeroopt.analysis.dynamic_attributes import MENTIONS, MODULE_ANY, SELF, bound_names
from zeroopt.analysis.resolve import Scope, walk_bfs

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView
    from zeroopt.analysis.summaries import Unit

TREE_DEP = "*tree"  # deps key: the digest of every file of the tree (runner.py checks it)
_MAX_LINEAGE = 40
_MAX_FILES = 16  # files to parse for one name of a lineage, at most (the cost stays bounded)
_CALLER_DECORATORS = frozenset(
    {
        "builtins.property",
        "abc.abstractmethod",
        "typing.override",
        "typing_extensions.override",
        "functools.cached_property",
    }
)
_CLASS_DECORATORS = ("dataclass", "dataclasses.dataclass")
# `obj.m = `, `obj.m: T = `, `obj.m, x = ` (a line with `.m,` and then an `=`, conservatively),
# `for obj.m in`, `as obj.m`, `setattr(obj, "m", `.
# Every alternative starts with a literal character and a word boundary before a keyword is
# asserted after it (`for(?<!\wfor)` is `\bfor`): the regex engine then skips to the characters
# that can start a match instead of trying every position (a third of the time over the wheels).
_STORE = re.compile(
    rb"\.[ \t]*(\w+)[ \t]*(?:=(?!=)|:[^\n=]*=(?!=)|,[^\n]*[^=!<>]=(?!=))"
    rb"|for(?<!\wfor)[ \t]+[\w.]+\.(\w+)\b"
    rb"|as(?<!\was)[ \t]+[\w.]+\.(\w+)\b"
    rb"|setattr\([^\n,]*,[ \t]*['\"](\w+)['\"]"
    # `object.__setattr__(obj, "m", ...)`, `obj.__setattr__("m", ...)`, `obj.__dict__["m"] = `,
    # `vars(obj)["m"] = `, `obj.__dict__.update(m=...)`.
    rb"|__setattr__\((?:[^\n,()]*,)?[ \t]*['\"](\w+)['\"]"
    rb"|__dict__[ \t]*\[[ \t]*['\"](\w+)['\"]"
    rb"|vars\([^)\n]*\)[ \t]*\[[ \t]*['\"](\w+)['\"]"
    rb"|__dict__[ \t]*\.[ \t]*(?:update|setdefault)\([ \t]*(\w+)[ \t]*="
    rb"|vars\([^)\n]*\)[ \t]*\.[ \t]*(?:update|setdefault)\([ \t]*(\w+)[ \t]*="
)
# A class made at run time: `type(name, bases, namespace)`, `types.new_class(...)`.
_DYNAMIC_CLASS = re.compile(rb"type(?<!\wtype)[ \t]*\([^\n]*,|new_class(?<!\wnew_class)[ \t]*\(")


_CLASS = re.compile(rb"class(?<!\wclass)[ \t]+\w+[ \t]*\(([^:]*)")
_WORD = re.compile(rb"\w+")
# `C as X` (an import: followed by `,`, `)` or the end of the line), `X = C` / `X = mod.C` (a
# whole line). Neither form spans a line and no line has both, so each is searched on its own:
# the first only on the lines with a ` as ` (a pattern starting with a word boundary is tried at
# every position), the second from each newline.
_ALIAS_AS = re.compile(rb"\b(\w+)[ \t]+as[ \t]+(\w+)[ \t]*(?=,|\)|$)", re.M)
_AS = re.compile(rb"[ \t]as[ \t]")
_ALIAS_LINE = rb"[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]+\.)?(\w+)[ \t]*$"
_ALIAS_FIRST_LINE = re.compile(_ALIAS_LINE, re.M)
_ALIAS_NEXT_LINE = re.compile(rb"\n" + _ALIAS_LINE, re.M)


def _alias_pairs(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(name, alias) of every `name as alias` and `alias = [mod.]name` line of `data`."""
    done = -1
    for hit in _AS.finditer(data):
        start = data.rfind(b"\n", 0, hit.start()) + 1
        if start <= done:
            continue  # a line already searched
        end = data.find(b"\n", hit.end())
        done = len(data) if end < 0 else end
        for m in _ALIAS_AS.finditer(data, start, done):
            yield m.group(1), m.group(2)
    first = _ALIAS_FIRST_LINE.match(data)
    if first:
        yield first.group(2), first.group(1)
    for m in _ALIAS_NEXT_LINE.finditer(data):
        yield m.group(2), m.group(1)


@dataclass
class _Index:
    bases: dict[str, set[int]]  # a name -> files with a class statement whose bases mention it
    unclear: set[int]  # files with a class statement whose bases the pattern cannot delimit
    dynamic: set[int]  # files that may make classes at run time or have computed class bases


@dataclass(frozen=True)
class ClassInfo:
    name: str
    line: int
    bases: tuple[frozenset[str], ...]  # the identifiers each base expression mentions
    binds: frozenset[str]  # names its body binds
    decorated: bool  # a class decorator other than dataclass
    # Names its body certainly binds: one top-level def, class or assignment, nothing else in the
    # body binding or deleting them (not under `if`, `try`, `for`: those may leave a base's def).
    surely: frozenset[str] = frozenset()


# What `ClassWorld.prepare_parsed` builds: the classes of some files by path, and the names each
# file binds under computed attributes.
ParsedFacts = tuple[dict[str, list[ClassInfo] | None], list[tuple[str, dict[str, int]]]]


def tree_digest(items: list[tuple[str, str]]) -> str:
    """One digest over (path, sha256) of every file of the tree."""
    h = hashlib.sha256()
    for path, sha in sorted(items):
        h.update(f"{path}\0{sha}\n".encode())
    return h.hexdigest()


# After this many names asked, `aliases` reads every file once instead of searching per name.
_NAMES_BEFORE_FULL_PASS = 32
# `stored_in` searches each file's text for the name: about 0.02 s per name over the wheels'
# 118 MB, against 4 s for the store pattern over every file once.
_STORES_BEFORE_FULL_PASS = 200


class ClassWorld:
    """The source of every file of the scanned tree, read once per worker."""

    def __init__(self, files: list[tuple[str, bytes]], digest: str) -> None:
        self.files = files
        self.digest = digest
        self._classes: dict[str, list[ClassInfo] | None] = {}
        self._lineage: dict[str, tuple[list[tuple[str, ClassInfo]], str]] = {}
        self._unclear_words: tuple[dict[str, set[int]], set[int]] | None = None
        self._answers: dict[tuple[str, str], str] = {}
        self._index: _Index | None = None
        self._aliases: dict[str, set[str]] = {}
        self._stored: dict[str, str | None] = {}
        self._file_aliases: dict[int, dict[str, set[str]]] = {}
        self._file_stored: dict[int, set[str]] = {}
        self._all_aliases: dict[str, set[str]] | None = None  # every file's, once many are asked
        self._first_store: dict[str, str] | None = None  # attribute -> first file storing it
        self._dynamic: list[tuple[str, dict[str, int]]] | None = None
        self._absolute: tuple[str, dict[str, str]] = ("", {})  # (cwd, path -> os.path.abspath)
        self.dispatch: Any = None  # dispatch.NameDispatch: defs by method name, built on demand
        self._containing: dict[str, tuple[int, ...]] = {}  # name -> files whose text holds it

    @classmethod
    def of(cls, project: ProjectView | None, unit: Unit) -> ClassWorld:
        if project is None:
            data = "\n".join(unit.lines).encode()
            return cls([(unit.path, data)], "")
        world = project.summary_world
        if isinstance(world, ClassWorld):
            return world
        paths = {*project.index.files, *project.index.names}
        if os.path.abspath(unit.path) not in {os.path.abspath(p) for p in paths}:
            paths.add(unit.path)  # one file analysed outside the index
        world = cls.read(paths)
        project.summary_world = world
        return world

    @classmethod
    def read(cls, paths: Iterable[str]) -> ClassWorld:
        """Every file of `paths`, read now, with the digest of the tree they make."""
        files: list[tuple[str, bytes]] = []
        shas: list[tuple[str, str]] = []
        # The same paths the runner digests (runner._DepsNow): a relative spelling of a file
        # of the index would make the digest differ, and no cached result would ever hold.
        for path in sorted(paths):
            try:
                # A FIFO or a device would block the read forever, or never end (the scan
                # reports such a file as an error and analyses nothing in it).
                if not stat.S_ISREG(os.stat(path).st_mode):
                    raise OSError("not a regular file")
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                data = b""
            files.append((path, data))
            shas.append((path, hashlib.sha256(data).hexdigest()))
        return cls(files, tree_digest(shas))

    def prepare(self) -> None:
        """Build now the tables a scan of many files asks for anyway (the index of class
        statements, the classes of files that may derive from any name, the names bound under
        computed attributes, every file's stores and aliases), so that processes forked after
        this share them instead of each building its own. Each table is the one the lazy path
        builds: the answers do not change."""
        self.prepare_parsed()
        self.prepare_text()

    def prepare_parsed(self) -> None:
        """The half of `prepare` that parses files: the classes of the files that may derive
        from any name, the names bound under computed attributes."""
        index = self.index
        # The cyclic collector is paused meanwhile: the trees parsed hold no cycles and are freed
        # by reference counting, and its passes over their millions of nodes were a fifth of
        # the time here.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._dynamic_bindings(index.unclear | index.dynamic)  # one parse for both tables
            for i in sorted(index.unclear | index.dynamic):
                self._parsed(*self.files[i])
        finally:
            if collecting:
                gc.enable()

    def prepare_text(self) -> None:
        """The half of `prepare` that reads text only: every file's stores and aliases."""
        self._stores_of_every_file()
        self._aliases_of_every_file()

    def parsed_facts(self) -> ParsedFacts:
        """What `prepare_parsed` built, to hand to a world of the same files in another process."""
        return dict(self._classes), list(self._dynamic_bindings())

    def adopt_parsed(self, facts: ParsedFacts) -> None:
        """Take what `prepare_parsed` built for a world of the same files elsewhere."""
        classes, dynamic = facts
        self._classes.update(classes)
        self._dynamic = dynamic

    @property
    def index(self) -> _Index:
        """One pass over the text of the tree: which files have a class statement whose bases
        mention each name, and which may make classes at run time. Aliases and stored attribute
        names are looked up per name (`aliases`, `stored_in`): a pass of their patterns over
        every file cost seconds per worker, and few names are ever asked."""
        if self._index is None:
            index = _Index({}, set(), set())
            for i, (_, data) in enumerate(self.files):
                if b"class" in data:
                    for m in _CLASS.finditer(data):
                        bases = m.group(1)
                        if b")" not in bases:
                            index.unclear.add(i)  # a colon inside the bases: parse the file
                        elif bases.count(b"(") or b"*" in bases:
                            index.dynamic.add(i)  # a computed or starred base
                        for word in _WORD.findall(bases):
                            index.bases.setdefault(word.decode(), set()).add(i)
                if _DYNAMIC_CLASS.search(data):
                    index.dynamic.add(i)
            self._index = index
        return self._index

    def aliases(self, name: str) -> set[str]:
        """Names bound to `name` somewhere in the tree (`name as X`, `X = name`, `X = m.name`).
        Only a file that contains the name can bind an alias of it; each file's aliases are
        read once."""
        hit = self._aliases.get(name)
        if hit is None:
            if self._all_aliases is None and len(self._aliases) >= _NAMES_BEFORE_FULL_PASS:
                # Many names asked (judging buffers returned to callers asks one per class of
                # every lineage): one pass of the patterns over every file costs less than a
                # substring search of the whole tree per name.
                self._aliases_of_every_file()
            if self._all_aliases is not None:
                hit = set(self._all_aliases.get(name, ()))
            else:
                key = name.encode()
                hit = set()
                for i, (_, data) in enumerate(self.files):
                    if key in data:
                        hit |= self._aliases_in(i).get(name, set())
            self._aliases[name] = hit
        return hit

    def stored_in(self, attr: str) -> str | None:
        """The first file of the tree that assigns an attribute `attr` (`obj.attr = ...`,
        `obj.attr: T = ...`, `setattr(obj, "attr", ...)`, ...), or None."""
        if attr not in self._stored and (
            self._first_store is not None or len(self._stored) >= _STORES_BEFORE_FULL_PASS
        ):
            # Many names asked (or the table built beforehand, `prepare`): every file's stores.
            self._stored[attr] = self._stores_of_every_file().get(attr)
        if attr not in self._stored:
            key = attr.encode()
            self._stored[attr] = next(
                (
                    path
                    for i, (path, data) in enumerate(self.files)
                    if key in data and attr in self._stored_in(i)
                ),
                None,
            )
        return self._stored[attr]

    def bound_dynamically(
        self, attr: str, module: tuple[str, str] | None = None, own: bool = True
    ) -> str:
        """Why an object of the tree may have an attribute `attr` bound under a name the text
        need not spell (analysis/dynamic_attributes.py): a computed `setattr`, `vars(o).update(d)`,
        `SimpleNamespace(**d)`, fields named in a longer string; "" if nothing does. For a
        module's function (`module`: its dotted name and path), only computed names on what may
        be that module count; `own=False` leaves out the module's own `globals()`/`vars()` (the
        caller judges those)."""
        absolute = self._absolute_paths() if module is not None else {}
        own_absolute = os.path.abspath(module[1]) if module is not None else ""
        for path, found in self._dynamic_bindings():
            if module is None:
                line = found.get(ANY_NAME, 0)
            else:  # (dotted name, path) of the function's module: only patches of it count
                name, _ = module
                mine = [MODULE_ANY, MODULE_ANY + name]
                path_absolute = absolute.get(path)
                if path_absolute is None:
                    path_absolute = absolute[path] = os.path.abspath(path)
                if path_absolute == own_absolute and own:
                    mine.append(MODULE_ANY + SELF)
                line = min((found[k] for k in mine if k in found), default=0)
            if line:
                what = "its module" if module else "an object"
                return (
                    f"{_short(path)}:{line} binds attributes under computed names: "
                    f"{what} may have an attribute `{attr}` no def gives"
                )
            if attr in found:
                return (
                    f"{_short(path)}:{found[attr]} binds an attribute `{attr}` by a name in a "
                    "string or a computed form"
                )
        return ""

    def _absolute_paths(self) -> dict[str, str]:
        """Memo of `os.path.abspath` by path, for the working directory it was made in (a
        relative path's absolute form depends on it)."""
        cwd = os.getcwd()
        if self._absolute[0] != cwd:
            self._absolute = (cwd, {})
        return self._absolute[1]

    def _dynamic_bindings(
        self, classes: set[int] | frozenset[int] = frozenset()
    ) -> list[tuple[str, dict[str, int]]]:
        """(path, `bound_names`) of every file that binds attributes under computed names.
        `classes`: files whose classes are wanted too, read from the same parse."""
        if self._dynamic is None:
            self._dynamic = []
            for i, (path, data) in enumerate(self.files):
                if not MENTIONS.search(data):
                    continue
                try:
                    tree = ast.parse(data)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    self._dynamic.append((path, {ANY_NAME: 1}))
                    if i in classes:
                        self._classes.setdefault(path, None)
                    continue
                if i in classes and path not in self._classes:
                    self._classes[path] = _classes_of(tree)
                found = bound_names(tree)
                if found:
                    self._dynamic.append((path, found))
        return self._dynamic

    def _stores_of_every_file(self) -> dict[str, str]:
        """Attribute name -> the first file of the tree that stores it."""
        if self._first_store is None:
            first: dict[str, str] = {}
            for i, (path, _) in enumerate(self.files):
                for name in self._stored_in(i):
                    first.setdefault(name, path)
            self._first_store = first
        return self._first_store

    def _aliases_of_every_file(self) -> dict[str, set[str]]:
        """Name -> the names bound to it anywhere in the tree."""
        if self._all_aliases is None:
            merged: dict[str, set[str]] = {}
            for i in range(len(self.files)):
                for old, new in self._aliases_in(i).items():
                    merged.setdefault(old, set()).update(new)
            self._all_aliases = merged
        return self._all_aliases

    def _aliases_in(self, i: int) -> dict[str, set[str]]:
        """The aliases of file `i`, by the pattern above. Apart from the stored names: the full
        pass of `aliases` reads every file, `stored_in` only the files that contain its name."""
        aliases = self._file_aliases.get(i)
        if aliases is None:
            aliases = self._file_aliases[i] = {}
            for old, new in _alias_pairs(self.files[i][1]):
                aliases.setdefault(old.decode(), set()).add(new.decode())
        return aliases

    def _stored_in(self, i: int) -> set[str]:
        """The attribute names file `i` stores, by the pattern above."""
        stored = self._file_stored.get(i)
        if stored is None:
            data = self.files[i][1]
            stored = {next(g for g in m.groups() if g).decode() for m in _STORE.finditer(data)}
            self._file_stored[i] = stored
        return stored

    def _parsed(self, path: str, data: bytes) -> list[ClassInfo] | None:
        if path not in self._classes:
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._classes[path] = None
                return None
            self._classes[path] = _classes_of(tree)
        return self._classes[path]

    def _unclear_matching(self, name: str) -> set[int]:
        """Those of the unclear and dynamic files whose classes name `name` among their
        bases, may derive from any name, or that cannot be parsed: the rest add nothing to a
        lineage through `name`, and scanning all of them for each name of a large family cost
        seconds per class."""
        if self._unclear_words is None:
            words: dict[str, set[int]] = {}
            always: set[int] = set()
            for i in self.index.unclear | self.index.dynamic:
                infos = self._parsed(*self.files[i])
                if infos is None:
                    always.add(i)
                    continue
                for info in infos:
                    for ids in info.bases:
                        if ANY in ids:
                            always.add(i)
                        for word in ids:
                            words.setdefault(word, set()).add(i)
            self._unclear_words = (words, always)
        words, always = self._unclear_words
        return words.get(name, set()) | always

    def lineage(self, name: str) -> tuple[list[tuple[str, ClassInfo]], str]:
        """Classes of the tree that may derive from a class called `name`, or why not certain."""
        hit = self._lineage.get(name)
        if hit is not None:
            return hit
        names = {name}
        frontier = [name]
        found: dict[tuple[str, int], tuple[str, ClassInfo]] = {}
        why = ""
        index = self.index
        while frontier and not why:
            n = frontier.pop()
            for new in sorted(self.aliases(n)):  # a set: its order varies between runs
                if new not in names:
                    names.add(new)
                    frontier.append(new)
            candidates = index.bases.get(n, set())
            if len(candidates) > _MAX_FILES:
                why = f"more than {_MAX_FILES} files have classes whose bases name `{n}`"
                break
            # The unclear and dynamic ones (computed bases, classes made by `type(...)`) are
            # parsed once and may derive from any name; only those that name `n`, may derive
            # from any name or cannot be parsed can add to the loop below.
            for i in sorted(candidates | self._unclear_matching(n)):
                path, data = self.files[i]
                infos = self._parsed(path, data)
                if infos is None:
                    why = f"{path} may derive from `{n}` and cannot be parsed"
                    break
                for info in infos:
                    if (
                        any(n in ids or ANY in ids for ids in info.bases)
                        and (path, info.line) not in found
                    ):
                        found[(path, info.line)] = (path, info)
                        if info.name not in names:
                            names.add(info.name)
                            frontier.append(info.name)
                if len(found) > _MAX_LINEAGE:
                    break
            if len(found) > _MAX_LINEAGE:
                why = f"more than {_MAX_LINEAGE} classes may derive from `{name}`"
        if not why:
            for path, info in found.values():
                lineage = [bool(ids & names) or ANY in ids for ids in info.bases]
                if not lineage[0] or any(lineage[1:]):
                    why = (
                        f"class {info.name} ({_short(path)}:{info.line}) may derive from `{name}` "
                        "other than through its first base only"
                    )
                    break
                if info.decorated:
                    why = f"class {info.name} ({_short(path)}:{info.line}) has a class decorator"
                    break
        result = (list(found.values()), why)
        self._lineage[name] = result
        return result

    def bases_stored(self, name: str) -> str:
        """A store of some class's bases (`T.__bases__ = ...`) that may make a class derive
        from the class called `name` unseen by `lineage` (which reads class statements only):
        any store but `T.__bases__ += (E, ...)` with no `E` the class, one found deriving from
        it or an alias of those (anyorder_stores.bases_stores). The any-order pass reads these
        stores itself (bases_targets.py); the closed world's other questions ask here."""
        from zeroopt.analysis.anyorder_stores import bases_stores

        stores = bases_stores(self)
        if not stores:
            return ""
        found, _ = self.lineage(name)
        names = {name} | {info.name for _, info in found}
        for n in list(names):
            names |= self.aliases(n)
        for store in stores:
            if store.added is None or any(e.id in names for e in store.added):
                return f"{store.at} stores a class's bases: a class may come to derive from {name}"
        return ""

    def overridden(self, cls_name: str, attr: str) -> str:
        """Why `self.<attr>` in class `cls_name` may not be that class's own def ("" if it is)."""
        key = (cls_name, attr)
        hit = self._answers.get(key)
        if hit is not None:
            return hit
        found, why = self.lineage(cls_name)
        if not why:
            for path, info in found:
                if attr in info.binds or "__getattribute__" in info.binds or ANY in info.binds:
                    why = f"class {info.name} ({_short(path)}:{info.line}) may override `{attr}`"
                    break
        why = why or self.bases_stored(cls_name)
        stored = None if why else self.stored_in(attr)
        if stored is not None:
            why = f"{_short(stored)} assigns an attribute `{attr}`"
        why = why or self.bound_dynamically(attr)
        self._answers[key] = why
        return why

    def through_class(self, cls_name: str, method: str) -> str:
        """Why `method` of class `cls_name` may run with a `self` of another class: the tree
        names it through a class of the lineage (`Own.run(other, ...)`, `f = Own.run`,
        `getattr(Own, "run")`, `Own.__dict__`, `vars(Own)`), not through an instance. Memoised:
        it reads the text of every file of the tree."""
        key = (cls_name, f".{method}")  # `.`: never a name `overridden` is asked about
        hit = self._answers.get(key)
        if hit is None:
            hit = self._answers[key] = self._through_class(cls_name, method)
        return hit

    def _through_class(self, cls_name: str, method: str) -> str:
        found, why = self.lineage(cls_name)
        if why:
            return why
        path = self.naming_through(cls_name, found, method)
        if path:
            return (
                f"{path} names `{method}` through the class: it may run with a "
                "`self` of another class"
            )
        return ""

    def naming_through(self, cls_name: str, found: list[tuple[str, ClassInfo]], method: str) -> str:
        """The first file (short path) that names `method` through a class of the lineage
        `found` of `cls_name`, or "": every form names a class of the lineage;
        `getattr(Own, ...)`, `vars(Own)` and `Own.__dict__` need not name the method."""
        names = {cls_name} | {info.name for _, info in found}
        for n in list(names):
            names |= self.aliases(n)
        alt = b"|".join(re.escape(n.encode()) for n in sorted(names))
        m = re.escape(method.encode())
        pattern = re.compile(
            rb"\b(?:" + alt + rb")[ \t]*\.[ \t]*(?:" + m + rb"\b|__dict__)"
            rb"|getattr\([ \t]*(?:" + alt + rb")[ \t]*,"
            rb"|vars\([ \t]*(?:" + alt + rb")[ \t]*\)"
        )
        # Every match spells one of the names: only the files holding one are searched, in
        # file order (the lineages of one tree share names: each is looked for once).
        for i in sorted({i for n in names for i in self.containing(n)}):
            path, data = self.files[i]
            if pattern.search(data):
                return _short(path)
        return ""

    def containing(self, name: str) -> tuple[int, ...]:
        """The files whose text holds `name` anywhere (a substring search), in file order."""
        hit = self._containing.get(name)
        if hit is None:
            key = name.encode()
            hit = self._containing[name] = tuple(
                i for i, (_, data) in enumerate(self.files) if key in data
            )
        return hit


ANY = "*"  # in ClassInfo.bases / binds: may be any class / bind any name


def _classes_of(tree: ast.Module) -> list[ClassInfo]:
    """The class statements and run-time class makers of a module, in `ast.walk`'s order."""
    return [
        info
        for n in walk_bfs([tree])
        if isinstance(n, ast.ClassDef | ast.Call)  # what else `_made_class` answers None
        and (info := _info(n) if isinstance(n, ast.ClassDef) else _made_class(n))
    ]


def _made_class(node: ast.AST) -> ClassInfo | None:
    """A class made at run time: `type(name, bases, namespace)` or `types.new_class(...)`. Its
    bases and names are read where they are literal; otherwise it may derive from anything and
    bind anything."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    fname = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if not ((fname == "type" and len(node.args) == 3) or fname == "new_class"):
        return None
    name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "<made>"
    # Bases not spelled out (`type(name, bases, ns)`): any class may come first, and the class
    # asked about may be a later base, so two entries that may each be anything.
    any_base: tuple[frozenset[str], ...] = (frozenset({ANY}), frozenset({ANY}))
    bases = any_base
    binds: frozenset[str] = frozenset({ANY})
    if fname == "type":
        spec, namespace = node.args[1], node.args[2]
        if isinstance(spec, ast.Tuple | ast.List) and not any(
            isinstance(e, ast.Starred) for e in spec.elts
        ):
            bases = tuple(_base_names(e) for e in spec.elts) or (frozenset(),)
        if isinstance(namespace, ast.Dict) and all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in namespace.keys
        ):
            binds = frozenset(str(k.value) for k in namespace.keys if isinstance(k, ast.Constant))
    return ClassInfo(str(name), node.lineno, bases, binds, False)


def _base_names(b: ast.expr) -> frozenset[str]:
    """The names a base expression may denote the class by: `C`, `mod.C`, `C[T]` give `C`; a
    starred or computed base (a call, ...) may be any class (ANY)."""
    if isinstance(b, ast.Starred):
        return frozenset({ANY})
    while isinstance(b, ast.Subscript):
        b = b.value
    if isinstance(b, ast.Name):
        return frozenset({b.id})
    if isinstance(b, ast.Attribute):
        return frozenset({b.attr})
    return frozenset({ANY})


def _info(node: ast.ClassDef) -> ClassInfo:
    bases = tuple(_base_names(b) for b in node.bases)
    extra = [k.value for k in node.keywords]  # metaclass=...: may add anything
    decorated = bool(extra) or any(
        ast.unparse(d.func if isinstance(d, ast.Call) else d) not in _CLASS_DECORATORS
        for d in node.decorator_list
    )
    return ClassInfo(
        node.name,
        node.lineno,
        bases or (frozenset(),),
        _class_binds(node),
        decorated,
        _class_surely(node),
    )


def _class_binds(node: ast.ClassDef) -> frozenset[str]:
    """Names the class body binds (its own statements, not its methods' bodies)."""
    out: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(stmt.name)
            roots: list[ast.AST] = list(stmt.decorator_list)
        else:
            roots = [stmt]
        for root in roots:
            for n in walk_bfs([root]):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                    out.add(n.id)
                elif isinstance(n, ast.alias):
                    out.add((n.asname or n.name).split(".")[0])
                elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    out.add(n.name)
    return frozenset(out)


def _class_surely(node: ast.ClassDef) -> frozenset[str]:
    """Names bound exactly once in the class body, by a statement of the body itself."""
    top: list[str] = []
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            top.append(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            top += [t.id for t in targets if isinstance(t, ast.Name)]
    counts: dict[str, int] = {}
    for stmt in node.body:
        one = ast.ClassDef(name="", bases=[], keywords=[], body=[stmt], decorator_list=[])
        for name in _class_binds(one):
            counts[name] = counts.get(name, 0) + 1
    return frozenset(n for n in top if counts.get(n) == 1 and top.count(n) == 1)


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def method_scope(
    scope: Scope,
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope, ast.ClassDef] | None:
    """(the def, its class's scope, the class statement) when `scope` is a def written directly
    in a class body, else None."""
    fn, owner = scope.node, scope.parent
    if (
        not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        or owner is None
        or not owner.is_class
        or not isinstance(owner.node, ast.ClassDef)
    ):
        return None
    return fn, owner, owner.node


def method_of(
    scope: Scope, recv: str, attr: str, unit: Unit, world: ClassWorld
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, int, str] | None:
    """The def `recv.attr(...)` runs inside a method whose first parameter is `recv`, with how many
    leading parameters the receiver binds and the conditions that made it certain."""
    from zeroopt.analysis.summaries import plain_decorators

    method = method_scope(scope)
    if method is None:
        return None
    caller, owner, cls = method
    params = [*caller.args.posonlyargs, *caller.args.args]
    if not params or params[0].arg != recv:
        return None
    if (
        any(
            isinstance(n, ast.Name) and n.id == recv and isinstance(n.ctx, ast.Store | ast.Del)
            for n in walk_bfs([caller])
        )
        or recv in scope.nonlocal_names | scope.global_names
    ):
        return None  # the receiver may be rebound
    if not plain_decorators(caller, unit, _CALLER_DECORATORS):
        return None  # only decorators that call it with the same receiver
    info = _info(cls)
    if info.decorated or "__getattribute__" in info.binds:
        return None
    defs = [
        s
        for s in cls.body
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == attr
    ]
    if len(defs) != 1:
        return None
    fn = defs[0]
    rest = [s for s in cls.body if s is not fn]
    others = _class_binds(
        ast.ClassDef(name="", bases=[], keywords=[], body=rest, decorator_list=[])
    )
    if attr in others or not plain_decorators(
        fn, unit, frozenset({"builtins.staticmethod", "builtins.classmethod"})
    ):
        return None
    kinds = {unit.resolver.qualified(owner, d) for d in fn.decorator_list}
    shift = 0 if "builtins.staticmethod" in kinds else 1
    why = world.overridden(cls.name, attr) or world.through_class(cls.name, caller.name)
    if why:
        return None
    return (
        fn,
        shift,
        f"`{attr}` is bound once in class {cls.name}, by a plain def; closed world: no class of "
        f"the scanned tree that derives from {cls.name} binds `{attr}`, and nothing assigns it",
    )
