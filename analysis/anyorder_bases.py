"""Base classes of the tree that the any-order pass may take in (analysis/lifecycle_anyorder.py).

A base's methods are code that may run on the object at any time, and its `__init__` runs
inside the class's through `super().__init__(...)`. Under any order of methods that is harmless
when such code can touch no attribute that may hold the buffer, directly or through the class's
own methods. The rest of the closed world sees to the first half: every `.X` and every string
naming X elsewhere is judged (a base's `self` is related to the class, so its `self.X` blocks),
and so is every reflective use (`getattr(self, n)` in a base reaches the object). What this
module checks is the structure of each base, one class of the tree per name, to the root:

- exactly one class statement of the tree has its name, and the text of the class's own base
  names it (no alias); no class decorator, no keyword (metaclass), one base of the tree at most
  besides `object`, `ABC`, `Generic[...]`, `Protocol` (no torch.nn.Module in the chain: its own
  attribute names would have to be checked as for a direct base); the class's own base is that
  name itself (`class C(B)` where `B` is a class statement of the module or `from M import B`
  of that file's module), bound once in each of the two modules (`B = wrap(B)` after the
  statement makes it another class), neither module has a star import (it may bind the name),
  and it is rebound by no other file (`M.B = ...`, a string naming it, `globals()` in one of the two modules or a computed name on what may be one of them:
  anyorder_forms.py `_name_rebound`);
- its body binds only methods and literals, none an attribute hook (`__getattr__`,
  `__getattribute__`, `__setattr__`, `__delattr__`, `__slots__`, `__init_subclass__`, `__new__`,
  `__class_getitem__`, `__set_name__`, `__call__`), no method decorator but staticmethod,
  classmethod, abstractmethod (a property setter named like an attribute the class stores would
  take the buffer in);
- in its methods, `self` is never rebound, never handed on as a value (a call given `self` may
  call any method of the object), only the receiver of `self.a` where `a` is a method or
  attribute of the chain that no class of the tree deriving from the class binds and the class
  itself does not bind (`self.a()` in a base may run the class's own method in the middle of
  the base's, or a subclass's), or one of torch.nn.Module's registering methods; `super()` only
  as `super().__init__(...)` in `__init__`.

Under these, the base's code runs only its own methods on the object and stores only attributes
no method of the class binds: any order of the class's methods, with the base's code anywhere in
between, is what the program models.
"""

from __future__ import annotations

import ast
import functools
import os
import weakref
from collections.abc import Iterable

from zeroopt.analysis.anyorder_classes import class_statements, parsed
from zeroopt.analysis.anyorder_forms import _name_rebound
from zeroopt.analysis.anyorder_stores import bases_stores, family
from zeroopt.analysis.bases_targets import store_reaches
from zeroopt.analysis.methods import ClassWorld, _class_binds, _short
from zeroopt.analysis.resolve import walk, walk_all

_PLAIN = frozenset({"object", "ABC", "abc", "Generic", "Protocol", "typing"})
_HOOKS = frozenset(
    {"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__", "__dict__",
     "__init_subclass__", "__new__", "__class_getitem__", "__set_name__", "__call__"}
)  # fmt: skip
# No property: a setter of the chain named like an attribute the class stores would take the
# buffer into attributes the class's methods never name.
_METHOD_DECORATORS = frozenset({"staticmethod", "classmethod", "abstractmethod"})
_REGISTERING = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
_MAX_CHAIN = 8


@functools.cache
def _realpath(path: str) -> str:
    """`os.path.realpath`, once per path: each class asks it of every file of the tree."""
    return os.path.realpath(path)


def base_reason(
    cls: ast.ClassDef,
    base: ast.expr,
    home: ast.Module,
    own_paths: set[str],
    world: ClassWorld,
) -> str:
    """Why `base` (a base expression of `cls`, not a library base; `cls` is in `home`, the
    module at `own_paths`) may run code that touches the object's buffers other than by what
    the any-order program models; "" when it and its own bases of the tree satisfy the
    conditions above."""
    found, why = world.lineage(cls.name)
    if why and not why.endswith("other than through its first base only"):
        return why
    forbidden = set(_class_binds(cls))
    for _, info in found:
        forbidden |= info.binds
    chain: list[ast.ClassDef] = []
    where: tuple[str, ast.Module] = (_first_file(world, own_paths), home)
    expr: ast.expr | None = base
    while expr is not None:
        name = _name(expr)
        if not isinstance(expr, ast.Name | ast.Subscript) or not name:
            return f"its base `{ast.unparse(expr)[:40]}` is not a plain name"
        if len(chain) >= _MAX_CHAIN:
            return f"more than {_MAX_CHAIN} bases of the tree"
        node, path, why = _one_class(world, name, where)
        if node is None or path is None:
            return why
        if not _binds_to(where, name, path):
            return f"`{name}` may not be the class statement of {_short(path)}"
        if not (_bound_once(where[1], name) and _bound_once(_parse(world, path), name)):
            return f"`{name}` is bound more than once in its module or where it is imported"
        if _star_import(where[1]) or _star_import(_parse(world, path)):
            return f"a star import where `{name}` is defined or imported may rebind it"
        why = _name_rebound(world, name, (where[0], path))
        if why:
            return why
        chain.append(node)
        tree_bases = [b for b in node.bases if _name(b) not in _PLAIN]
        if len(tree_bases) > 1 or any(not _name(b) for b in node.bases):
            return f"`{name}` has more than one base that is not object, ABC, Generic, Protocol"
        expr = tree_bases[0] if tree_bases else None
        where = (path, _parse(world, path))
    own: set[str] = set()  # what the chain binds: methods, class attributes, what it stores
    for node in chain:
        own |= _class_binds(node)
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                own.add(stmt.name)
                me = _first(stmt)
                for n in walk_all(stmt):
                    if (
                        isinstance(n, ast.Attribute)
                        and isinstance(n.ctx, ast.Store)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == me
                    ):
                        own.add(n.attr)
    for node in chain:
        why = _class_ok(node, own - forbidden)
        if why:
            return f"`{node.name}`: {why}"
    return ""


# Per tree digest: each file's first place in `world.files`, by its path and by its real path.
_PLACES: dict[str, tuple[dict[str, int], dict[str, int]]] = {}


def _first_file(world: ClassWorld, own_paths: set[str]) -> str:
    """The first file of the tree at one of `own_paths`, itself or by its real path ("" if
    none): looked up, not searched for in every file per class."""
    places = _PLACES.get(world.digest) if world.digest else None
    if places is None:
        places = ({}, {})
        for i, (p, _) in enumerate(world.files):
            places[0].setdefault(p, i)
            places[1].setdefault(_realpath(p), i)
        if world.digest:
            _PLACES.clear()
            _PLACES[world.digest] = places
    found = [i for o in own_paths for i in (places[0].get(o), places[1].get(o)) if i is not None]
    return world.files[min(found)][0] if found else ""


def _name(b: ast.expr) -> str:
    while isinstance(b, ast.Subscript):
        b = b.value
    if isinstance(b, ast.Name):
        return b.id
    if isinstance(b, ast.Attribute):
        return b.attr
    return ""


def _first(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    params = [*fn.args.posonlyargs, *fn.args.args]
    return params[0].arg if params else ""


def _parse(world: ClassWorld, path: str) -> ast.Module:
    """The tree `_one_class` parsed for `path` (it parsed, or the class was not found)."""
    data = next(d for p, d in world.files if p == path)
    tree = parsed(path, data)
    assert tree is not None
    return tree


def _binds_to(where: tuple[str, ast.Module], name: str, path: str) -> bool:
    """`name` in the module at `where` is the class statement of the file `path`: a class of
    the module itself, or `from M import name` (no alias) where M is that file's module."""
    here, tree = where
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return _realpath(here) == _realpath(path)
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and any(
            a.name == name and a.asname is None for a in stmt.names
        ):
            if stmt.level:
                folder = os.path.dirname(_realpath(here))
                for _ in range(stmt.level - 1):
                    folder = os.path.dirname(folder)
            else:
                folder = ""
            rel = (stmt.module or "").replace(".", os.sep)
            target = os.path.splitext(_realpath(path))[0]
            if target.endswith(os.sep + "__init__"):
                target = target[: -len(os.sep + "__init__")]
            want = os.path.join(folder, rel) if folder else rel
            return bool(want) and (target == want if folder else target.endswith(os.sep + want))
    return False


def _bound_once(tree: ast.Module, name: str) -> bool:
    """`name` has one binding in the module, nested scopes included (`Base = wrap(Base)`
    after the class statement makes the name another class)."""
    return _bindings(tree)[0].get(name, 0) == 1


def _star_import(tree: ast.Module) -> bool:
    """The module binds names by `from M import *` (it may bind any name; `_bound_once` counts
    only the names an import spells)."""
    return _bindings(tree)[1]


# A module's tree -> how many bindings each name has in it, and whether it has a star import:
# every base of every class asks again (held while the tree lives).
_BINDINGS: weakref.WeakKeyDictionary[ast.Module, tuple[dict[str, int], bool]] = (
    weakref.WeakKeyDictionary()
)


def _bindings(tree: ast.Module) -> tuple[dict[str, int], bool]:
    hit = _BINDINGS.get(tree)
    if hit is not None:
        return hit
    count: dict[str, int] = {}
    star = False
    for n in walk([tree]):  # ast.walk's nodes but context and operator leaves, none counted
        names: Iterable[str | None] = ()
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names = (n.id,)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = (n.name,)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            names = [a.asname or a.name.split(".")[0] for a in n.names]
            star = star or (isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names))
        elif isinstance(n, ast.Global | ast.Nonlocal):
            names = set(n.names)
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
            names = (n.name,)
        for w in names:
            if w is not None:
                count[w] = count.get(w, 0) + 1
    _BINDINGS[tree] = (count, star)
    return count, star


def _one_class(
    world: ClassWorld, name: str, where: tuple[str, ast.Module]
) -> tuple[ast.ClassDef | None, str | None, str]:
    """The class statement `name` is where it is looked up: the tree's only one of that name,
    or, of several, the only one the module at `where` defines or imports by `from M import`
    (`_binds_to`); None with why not."""
    statements = class_statements(world).get(name, [])
    if len(statements) > 1:
        mine = [s for s in statements if _binds_to(where, name, world.files[s[0]][0])]
        statements = mine if len(mine) == 1 else statements
    if len(statements) != 1:
        return None, None, f"{len(statements)} class statements of the tree are called `{name}`"
    ((k, _),) = statements
    path, data = world.files[k]
    tree = parsed(path, data)
    nodes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name] if tree else []
    if len(nodes) != 1:
        return None, None, f"`{name}` is not one module-level class statement of {_short(path)}"
    return nodes[0], path, ""


def _class_ok(node: ast.ClassDef, allowed: set[str]) -> str:
    if node.decorator_list or node.keywords:
        return "a class decorator or keyword may change it"
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in _HOOKS:
                return f"it defines `{stmt.name}`"
            for d in stmt.decorator_list:
                d = d.func if isinstance(d, ast.Call) else d
                last = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
                if last not in _METHOD_DECORATORS:
                    return f"a decorator of `{stmt.name}` (line {d.lineno}) may run it otherwise"
            why = _method_ok(stmt, allowed)
            if why:
                return why
        elif not _literal_statement(stmt):
            return f"its body binds names other than by `def` (line {stmt.lineno})"
        else:
            for n in walk_all(stmt):
                if isinstance(n, ast.Name) and n.id in _HOOKS:
                    return f"it binds `{n.id}`"
    return ""


def _method_ok(fn: ast.FunctionDef | ast.AsyncFunctionDef, allowed: set[str]) -> str:
    kinds = {_name(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list}
    me = "" if kinds & {"staticmethod", "classmethod"} else _first(fn)
    receivers: set[int] = set()
    for n in walk_all(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
            receivers.add(id(n.value))
            if n.attr not in allowed and n.attr not in _REGISTERING:
                return (
                    f"`{fn.name}` uses `{me}.{n.attr}` (line {n.lineno}): the class or a "
                    "subclass may bind it"
                )
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            inner = n.func.value
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "super"
                and not (fn.name == "__init__" and n.func.attr == "__init__")
            ):
                return f"`super().{n.func.attr}` in `{fn.name}` (line {n.lineno})"
        elif isinstance(n, ast.Global | ast.Nonlocal) and me in n.names:
            return f"`{fn.name}` rebinds `{me}`"
    for n in walk_all(fn):
        if isinstance(n, ast.Name) and n.id == me and id(n) not in receivers:
            return f"`{fn.name}` hands `{me}` on or rebinds it (line {n.lineno})"
        if isinstance(n, ast.arg) and n.arg == me and n is not _first_arg(fn):
            return f"a nested function of `{fn.name}` shadows `{me}` (line {n.lineno})"
    return ""


def _first_arg(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.arg | None:
    params = [*fn.args.posonlyargs, *fn.args.args]
    return params[0] if params else None


def _literal_statement(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    ):
        return True
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
    targets = (
        stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt, ast.AnnAssign) else []
    )  # fmt: skip
    return (
        bool(targets)
        and all(isinstance(t, ast.Name) for t in targets)
        and (value is None or isinstance(value, ast.Constant))
    )


def joined_reason(
    cls: ast.ClassDef, world: ClassWorld, tree_base: bool, callers_closed: bool = False
) -> str:
    """Why a store of a class's bases may make a class derive from `cls` or run other code on
    its objects, or "". A store that only adds named classes (anyorder_stores.py) makes a class
    derive from `cls` only if one of them may be `cls` or derive from it; otherwise its target
    may still be `cls` or a base of it (a parameter: any class), so the code of each added class
    may run on the object: it must pass as a base would (`base_reason`, with its name looked up
    where the store is), and `cls` may have no base of the tree (a second one is not judged).
    Each added class must derive from `object` alone: `Lazy(Y)` added to `Sub2`, a subclass of
    `SubGrid(Y, cls)`, comes before `cls` in Sub2's method order (Y waits for Lazy), so its
    methods override `cls`'s; with no other base, every class of T's old order but `object`
    comes first. A store whose target can be no class related to `cls` (the classes the tree's
    calls pass there: analysis/bases_targets.py) runs no added code on its objects."""
    names = family(world, cls.name)
    for store in bases_stores(world):
        if store.added is None or store.module is None:
            return f"{store.at} replaces a class's bases: any class may come to derive from it"
        hit = [e.id for e in store.added if names is None or e.id in names]
        if hit:
            return (
                f"{store.at} adds `{hit[0]}` to a class's bases: a class may come to derive from it"
            )
        reaches, how = store_reaches(world, store, cls.name, callers_closed)
        if not reaches:
            continue
        for e in store.added:
            if tree_base:
                return (
                    f"{store.at} adds `{e.id}` to a class's bases, which may be this class's "
                    f"({how}): a second base of the tree"
                )
            why = base_reason(cls, e, store.module, {store.path}, world)
            if why:
                return (
                    f"{store.at} adds `{e.id}` to a class's bases, which may be this class's "
                    f"({how}), and `{e.id}` has code that may run on the object ({why})"
                )
            node, _, _ = _one_class(world, e.id, (store.path, store.module))
            if node is None or any(_name(b) != "object" for b in node.bases):
                return (
                    f"{store.at} adds `{e.id}`, which has bases, to a class's bases: in the "
                    "method order of a class deriving from this one it may come before this "
                    "class and override its methods"
                )
    return ""


def rebindable(cls: ast.ClassDef, world: ClassWorld) -> frozenset[str]:
    """Names whose rebinding may change the code that runs on the object: the class's bases,
    their bases up the tree's class statements (by name), and the classes stores of a class's
    bases add. A binding by a computed name that may bind one of them (`setattr(m, k, v)` with
    `m` a value of unknown type) must count wherever it is (anyorder_reach.py, `bound`)."""
    statements = class_statements(world)
    out: set[str] = set()
    todo = [w for b in cls.bases for w in [_name(b)] if w]
    while todo and len(out) < 64:
        w = todo.pop()
        if w in out:
            continue
        out.add(w)
        for _, words in statements.get(w, []):
            todo.extend(words - {"*"})
    for store in bases_stores(world):
        out.update(e.id for e in store.added or ())
    return frozenset(out)


def joined_assumptions(cls: ast.ClassDef, world: ClassWorld, callers_closed: bool) -> list[str]:
    """What a `joined_reason` of "" rests on: for each store of bases of the form read whose
    target can be no class related to `cls`, the closed world over callers that says so."""
    out = []
    for store in bases_stores(world):
        if store.added is None or store.module is None:
            continue
        reaches, how = store_reaches(world, store, cls.name, callers_closed)
        if not reaches and how:
            out.append(how)
    return out
