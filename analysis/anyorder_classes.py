"""The class statements of the tree, read by a text pass, and how a class name relates to
others by its bases: what the reach of reflection (anyorder_reach.py) and the bases of the tree
(anyorder_bases.py) ask, kept apart to keep those modules readable."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from zeroopt.analysis.methods import ClassWorld

_WORD = re.compile(rb"\w+")

COMPLETE = ("other than through its first base only", "has a class decorator")
# Base names that are library classes (or words of a class statement that are no base): a
# class whose bases are these, or classes of the tree whose bases are, cannot be a class of
# the tree that the text does not name.
LIBRARY_BASES = frozenset(
    {"object", "ABC", "Generic", "Protocol", "Module", "nn", "torch", "abc", "typing", "Enum",
     "IntEnum", "StrEnum", "Flag", "IntFlag", "enum", "Exception", "BaseException", "ValueError",
     "RuntimeError", "TypeError", "KeyError", "NamedTuple", "TypedDict", "BaseModel", "dict",
     "list", "tuple", "str", "int", "float", "set", "metaclass", "ABCMeta", "Function",
     "autograd", "Dataset", "data", "utils", "Thread", "threading"}
)  # fmt: skip
_CLASS_LINE = re.compile(rb"class[ \t]+(\w+)[ \t]*(?:\(([^:]*)\))?[ \t]*:")
_BRACKETS = re.compile(rb"\[[^\[\]]*\]")
_STATEMENTS: dict[str, tuple[ClassWorld, dict[str, list[tuple[int, set[str]]]]]] = {}
# Words after a `.` or a quote: every attribute access and every string starting with a name.
_ATTR_WORDS = re.compile(rb"[.'\"][ \t]*(\w+)")
_INDEX: dict[str, dict[str, list[int]]] = {}
_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")


def attribute_index(world: ClassWorld) -> dict[str, list[int]]:
    """The files of the tree each word after a `.` or a quote occurs in, in file order, built
    once per worker (a world without a digest, one file analysed alone, every time)."""
    hit = _INDEX.get(world.digest) if world.digest else None
    if hit is None:
        hit = {}
        for i, (_, data) in enumerate(world.files):
            for w in set(_ATTR_WORDS.findall(data)):
                hit.setdefault(w.decode("utf-8", "replace"), []).append(i)
        if world.digest:
            _INDEX.clear()
            _INDEX[world.digest] = hit
    return hit


def spelled_in(world: ClassWorld, name: str) -> list[tuple[str, bytes]]:
    """The files, in file order, whose text may spell `name` after a `.` or a quote, spaces or
    tabs between (`.name`, `. name`, `"name"`): those the attribute index lists, for a name of
    ASCII word characters (the index's words end where a word boundary does), every file
    otherwise. A pattern that matches only such text (`self.name =`, `"name"`) has its first
    match in the tree in them, found without a pass over every file per name."""
    if not world.digest or not _ASCII_WORD.fullmatch(name):
        return list(world.files)
    return [world.files[i] for i in attribute_index(world).get(name, ())]


def class_statements(world: ClassWorld) -> dict[str, list[tuple[int, set[str]]]]:
    """Every class statement of the tree by name: its file's index in `world.files` and the
    words of its bases (subscripts dropped: `Generic[T]` is no base `T`), one text pass per
    worker."""
    key = world.digest or f"id:{id(world)}"
    entry = _STATEMENTS.get(key)
    hit = entry[1] if entry is not None and (world.digest or entry[0] is world) else None
    if hit is None:
        hit = {}
        for k, (_, data) in enumerate(world.files):
            if b"class" not in data:
                continue
            i = data.find(b"class ")
            while i >= 0:
                start = data.rfind(b"\n", 0, i) + 1
                m = _CLASS_LINE.match(data, i) if not data[start:i].strip() else None
                i = data.find(b"class ", i + 6)
                if m is None:
                    continue
                bases = m.group(2) or b""
                while _BRACKETS.search(bases):
                    bases = _BRACKETS.sub(b"", bases)
                words = {w.decode() for w in _WORD.findall(bases) if not w[:1].isdigit()}
                if b"(" in bases or b"*" in bases:
                    words.add("*")
                hit.setdefault(m.group(1).decode(), []).append((k, words))
        _STATEMENTS.clear()
        _STATEMENTS[key] = (world, hit)
    return hit


def _grounded(world: ClassWorld, name: str) -> bool:
    """Every class statement called `name`, and every class of the tree its bases name, has
    bases that are library classes or classes of the tree, to the root: none derives from a
    value (`class P(grid_cls)`) that may be any class of the tree."""
    statements = class_statements(world)
    if name not in statements:
        return False  # a class statement the text pass does not read (`class\tD`): unknown
    return not any(
        w not in statements and (w == "*" or w not in LIBRARY_BASES)
        for w in _base_words(world, name)
    )


def _base_words(world: ClassWorld, name: str) -> Iterator[str]:
    """Every base word met on the way from the class statements called `name` to their roots,
    each statement once; a word naming a class of the tree is followed, even one named like a
    library's."""
    statements = class_statements(world)
    seen: set[str] = set()
    frontier = [name]
    while frontier:
        n = frontier.pop()
        if n in seen:
            continue
        seen.add(n)
        for _, words in statements.get(n, []):
            for w in words:
                yield w
                if w in statements:
                    frontier.append(w)


def may_derive_from(world: ClassWorld, base: str, cls_name: str) -> bool:
    """A class made with a base called `base` may have `cls_name` in its MRO: `base` is that
    class or derives from it, by name, or some class on the way up from `base` derives from a
    value or a class no class statement of the tree names (an unknown ancestor)."""
    if base == cls_name or base == "*":
        return True
    statements = class_statements(world)
    if base not in statements:
        return True  # no class statement of the tree: an alias, an import, a value
    return any(
        w == cls_name or (w not in statements and (w == "*" or w not in LIBRARY_BASES))
        for w in _base_words(world, base)
    )


def may_be_metaclass(world: ClassWorld, name: str) -> bool:
    """A callee called `name` may be a metaclass: a class statement of the tree deriving, by
    name, from `type`, a `...Meta` or `...Type` class, or a value (`class M(base)`); a library
    class of another name is assumed no metaclass."""
    return name in metaclasses(world)[0]


_METACLASSES: dict[str, tuple[ClassWorld, frozenset[str], re.Pattern[bytes]]] = {}


def metaclasses(world: ClassWorld) -> tuple[frozenset[str], re.Pattern[bytes]]:
    """The names of the class statements of the tree that may be metaclasses, and the text of
    a call of one given a bases display (`M(n, (A,), ns)`), once per tree."""
    key = world.digest or f"id:{id(world)}"
    hit = _METACLASSES.get(key)
    if hit is not None and (world.digest or hit[0] is world):
        return hit[1], hit[2]
    found = frozenset(n for n in class_statements(world) if _metaclass(world, n))
    words = b"|".join(re.escape(n.encode()) for n in sorted(found)) or rb"(?!)"
    call = re.compile(rb"\b(?:" + words + rb")[ \t]*\([^()]*,[ \t]*[(\[]")
    _METACLASSES.clear()
    _METACLASSES[key] = (world, found, call)
    return found, call


def _metaclass(world: ClassWorld, name: str) -> bool:
    statements = class_statements(world)
    return any(
        w not in statements and (w in ("*", "type") or w.endswith(("Meta", "Type")))
        for w in _base_words(world, name)
    )


def made_by_metaclass(world: ClassWorld) -> re.Pattern[bytes]:
    """Text of a call of a metaclass of the tree given a bases display (`M(n, (A,), ns)`)."""
    return metaclasses(world)[1]


# (path, hash of its text) -> its tree, for files naming an attribute or holding a base
_PARSED: dict[tuple[str, int], ast.Module | None] = {}


def parsed(path: str, data: bytes) -> ast.Module | None:
    """The tree of a file of the tree (None if it cannot be parsed); the last 64 are kept,
    since one class's checks read the same few files again."""
    key = (path, hash(data))
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()
        try:
            _PARSED[key] = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            _PARSED[key] = None
    return _PARSED[key]
