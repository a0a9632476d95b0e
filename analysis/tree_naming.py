"""Which files of the scanned tree may name a def, by the text of each file.

A buffer returned to callers is judged at every call of its function only when the calls found
are all its uses (analysis/returned.py, returned_modules.py): every other file that may name it
must be found. A file may name it by the word itself, or by an attribute lookup whose name the
text does not spell (`getattr(x, k)`, a joined literal `"_al" "loc"`). Which module a file
reaches is not read from its text: a module object may come to any function as a value (an
argument, an attribute, a package's attribute fetched by a computed name), so a file that never
spells the module, nor an import, may still call `m._alloc(...)` on it (a wrong `safe` when the
files that spell neither were skipped). The word index is built once per tree and worker
(scan/tree_facts.py builds it before the workers fork).
"""

from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING

from zeroopt.analysis.resolve import walk_all

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld


def naming_files(
    world: ClassWorld, path: str, real_path: str | None, name: str, method: bool = False
) -> tuple[list[int], str]:
    """(the files of the tree other than the module at `path` whose text has `name` as a
    word, why a file may look it up without naming it). Every file counts, whatever modules its
    text spells: a module object is a value like any other, handed to a function of a file that
    never imports it (`peek(mod)`, then `m._alloc(4)` or `getattr(m, k)` there), or fetched from
    its package by a computed name (`getattr(pkg, k)`), so the text of a file does not show
    which module an `x._f` or a lookup of it reaches."""
    own = {path}
    if real_path is not None:
        own.add(os.path.realpath(real_path))
    files = files_naming(world, path, real_path, name)
    for i, (other, data) in enumerate(world.files):
        if other in own or os.path.realpath(other) in own or not _LOOKUP.search(data):
            continue
        # A method: lookups by a computed name are anyorder_reach's (returned_methods.py),
        # by the receiver they may reach; a joined literal is no computed name there.
        line = _unspelled_lookup(world.digest, i, data, name, method, joined_only=method)
        if line:
            return files, (
                f"{other}:{line} looks an attribute up by a name its text does not spell "
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


def files_naming(world: ClassWorld, path: str, real_path: str | None, name: str) -> list[int]:
    """The files of the tree, in file order, other than the module at `path` (or its real
    path), whose text has `name` as a word."""
    own = {path}
    if real_path is not None:
        own.add(os.path.realpath(real_path))
    index = _word_index(world.digest, world.files)
    named = index.get(name, ()) if name.startswith("_") else _naming(world, name)
    return [
        i
        for i in named
        if world.files[i][0] not in own and os.path.realpath(world.files[i][0]) not in own
    ]


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
