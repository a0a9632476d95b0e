"""`self.m(...)` resolved to the def of its own class for a one-path `unsafe`, where the tree also
makes a class at run time from a base of unknown class (`type("X", (Mixin, type(obj)), {})`) or
binds attributes under computed names.

methods.py refuses every lineage that such a class may join "other than through its first base
only": the made class may derive from any class, so its other bases may come before the class of
`self.m(...)` in the method resolution order and bind `m` there. returned_reads.py needs only
one call that surely runs the def, so here the made class is read instead of refused: C3
linearisation keeps each base's own order, so the only classes that may come before the class
`K` that binds `m` are classes deriving from `K` (the lineage, checked as methods.py checks it)
and the made class's other bases and their bases. Those are accepted only when each is a class
statement of the made class's own file (one of that name, no decorator, no metaclass, binding no
`m`, no `__getattribute__`, no computed names), or `object` / torch's `nn.Module` spelled through
an import of torch in that file, and `m` is no attribute of a library type
(semantics/library_methods.py). The made class's own namespace must be a literal dict that does
not bind `m`; only the bases before its first base of unknown class are read (a later base comes
before `K` only if it derives from `K`, and is then a class of the lineage).

A binding under a computed name (`setattr(obj, name, v)`, dynamic_attributes.py) that names `m`,
or binds any name in the class's own file or in the file of a class deriving from it by name
(`setattr(self, k, v)`), refuses; the others (334 files of the wheels) are assumed not to set `m`
on the instance the caller runs on, and the evidence says so. Everything else methods.py asks
(the receiver, an attribute store of `m`, the caller named through its class) is asked the same
way.

Only returned_reads.py asks this: a `safe` never rests on it (summaries.py keeps methods.py's
refusal).
"""

from __future__ import annotations

import ast
import os
import weakref
from typing import TYPE_CHECKING

from zeroopt.analysis.dynamic_attributes import ANY as ANY_NAME
from zeroopt.analysis.methods import ANY, ClassInfo, _class_binds, _short, method_of
from zeroopt.analysis.resolve import walk_all
from zeroopt.analysis.semantics.library_methods import LIBRARY_ATTRIBUTES

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld
    from zeroopt.analysis.resolve import Scope
    from zeroopt.analysis.summaries import Unit

NOT_FIRST = "other than through its first base only"
_TORCH_MODULE = frozenset({"nn.Module", "torch.nn.Module"})
_MAX_UP = 16  # bases followed up from a made class, at most


def loose_method_of(
    scope: Scope, recv: str, attr: str, unit: Unit, world: ClassWorld
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, int, str] | None:
    """methods.method_of, with the lineage's classes made from a base of unknown class read and
    computed-name bindings outside the lineage's files assumed not to bind `attr` on the
    instance, as above; None where methods.py alone resolves the call, or nothing does."""
    loose = _LooseWorld(world, unit.path)
    found = method_of(scope, recv, attr, unit, loose)  # type: ignore[arg-type]
    if found is None or not (loose.made or loose.assumed):
        return None
    fn, shift, why = found
    if loose.made:
        made = ", ".join(sorted(loose.made))
        why += (
            f"; the classes made at run time with a base of unknown class ({made}) put no "
            f"class binding `{attr}` before it: their bases ahead of that one, in their own "
            "file, bind none"
        )
    if loose.assumed:
        first = loose.assumed[0]
        why += (
            f"; assumed: no code sets an attribute `{attr}` on the instance under a computed "
            f"name ({len(loose.assumed)} files of the tree outside the class's lineage bind "
            f"attributes under computed names, {first} first)"
        )
    return fn, shift, why


# Answers per world, asked for every `self.m(...)` methods.py refuses: the text searches read
# every file of the tree.
_MEMO: weakref.WeakKeyDictionary[ClassWorld, dict[tuple[str, ...], object]] = (
    weakref.WeakKeyDictionary()
)


class _LooseWorld:
    """The two questions method_of asks of a ClassWorld, answered with made classes read."""

    def __init__(self, world: ClassWorld, home: str) -> None:
        self.world = world
        self.home = home  # the file of the class whose method is asked
        self.made: set[str] = set()  # "path:line" of the made classes read
        self.assumed: list[str] = []  # "path:line" of computed-name bindings assumed away

    def overridden(self, cls_name: str, attr: str) -> str:
        memo = _MEMO.setdefault(self.world, {})
        key = ("overridden", cls_name, attr, self.home)
        hit = memo.get(key)
        if hit is None:
            self.made, self.assumed = set(), []
            why = self._overridden(cls_name, attr)
            hit = memo[key] = (why, set(self.made), list(self.assumed))
        assert isinstance(hit, tuple)
        why, made, assumed = hit
        self.made = set(made)
        self.assumed = list(assumed)
        return str(why)

    def _overridden(self, cls_name: str, attr: str) -> str:
        world = self.world
        found, why = world.lineage(cls_name)
        if why and not why.endswith(NOT_FIRST):
            return why
        if not why:
            for path, info in found:
                if attr in info.binds or "__getattribute__" in info.binds or ANY in info.binds:
                    return f"class {info.name} ({_short(path)}:{info.line}) may override `{attr}`"
        names = {cls_name} | {info.name for _, info in found}
        for n in list(names):
            names |= world.aliases(n)
        for path, info in found:
            if info.decorated:
                return f"class {info.name} ({_short(path)}:{info.line}) has a class decorator"
            if attr in info.binds or "__getattribute__" in info.binds or ANY in info.binds:
                return f"class {info.name} ({_short(path)}:{info.line}) may override `{attr}`"
            joined = [bool(ids & names) or ANY in ids for ids in info.bases]
            if not joined[0] or any(joined[1:]):  # methods.py's "other than through its first"
                reason = _ahead(world, path, info, attr)
                if reason:
                    return reason
                self.made.add(f"{_short(path)}:{info.line}")
        stored = world.stored_in(attr)
        if stored is not None:
            return f"{_short(stored)} assigns an attribute `{attr}`"
        # Bindings of any name in the files of the classes that derive from it by name (their
        # `setattr(self, k, v)`) may reach the instance; those of a class that only may derive
        # from it (a base of unknown class) reach that class's own instances.
        named = {path for path, info in found if any(ids & names for ids in info.bases)}
        return self._computed(attr, {self.home, *named})

    def _computed(self, attr: str, lineage: set[str]) -> str:
        """Why a binding under a computed name may give an instance of the lineage `attr`: one
        that names `attr`, or one of any name in a file of the lineage (`setattr(self, k, v)`);
        the others are recorded as assumed not to reach the instance."""
        mine = {os.path.abspath(p) for p in lineage}
        for path, found in self.world._dynamic_bindings():
            if attr in found:
                return (
                    f"{_short(path)}:{found[attr]} binds an attribute `{attr}` by a computed form"
                )
            line = found.get(ANY_NAME, 0)
            if line and os.path.abspath(path) in mine:
                return f"{_short(path)}:{line} binds attributes under computed names"
            if line:
                self.assumed.append(f"{_short(path)}:{line}")
        return ""

    def through_class(self, cls_name: str, method: str) -> str:
        memo = _MEMO.setdefault(self.world, {})
        key = ("through", cls_name, method)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = self._through_class(cls_name, method)
        return str(hit)

    def _through_class(self, cls_name: str, method: str) -> str:
        world = self.world
        found, why = world.lineage(cls_name)
        if why and not why.endswith(NOT_FIRST):
            return why
        if not why:
            return world.through_class(cls_name, method)
        path = world.naming_through(cls_name, found, method)
        return f"{path} names `{method}` through the class" if path else ""


def _ahead(world: ClassWorld, path: str, info: ClassInfo, attr: str) -> str:
    """Why a base of the made (or multiply derived) class `info` other than one of unknown class
    may bind `attr`; "" when none does."""
    if attr in LIBRARY_ATTRIBUTES:
        return f"`{attr}` is also an attribute of {LIBRARY_ATTRIBUTES[attr]}"
    memo = _MEMO.setdefault(world, {})
    key = ("tree", path)
    if key not in memo:
        data = next((d for p, d in world.files if p == path), None)
        try:
            memo[key] = ast.parse(data) if data is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            memo[key] = None
    tree = memo[key]
    if not isinstance(tree, ast.Module):
        tree = None
    if tree is None:
        return f"{_short(path)} cannot be read"
    where = f"class {info.name} ({_short(path)}:{info.line})"
    classes: dict[str, list[ast.ClassDef]] = {}
    for n in walk_all(tree):
        if isinstance(n, ast.ClassDef):
            classes.setdefault(n.name, []).append(n)
    torch_names = _torch_imports(tree)
    imported = {
        a.asname or a.name.split(".")[0]
        for n in walk_all(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    # C3 keeps each base's own order: a base after the first one of unknown class comes
    # before `attr`'s class only if it derives from that class, and is then a class of the
    # lineage (closed world), checked by the caller. The bases before it are read here.
    first = next((i for i, ids in enumerate(info.bases) if ANY in ids), None)
    if first is None:
        return f"{where} derives from it other than through its first base"
    ahead = info.bases[:first]
    todo = [next(iter(ids)) for ids in ahead if len(ids) == 1]
    if len(todo) != len(ahead):
        return f"{where}: a base names more than one class"
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if len(seen) > _MAX_UP:
            return f"{where}: more than {_MAX_UP} bases up"
        defs = classes.get(name, [])
        if len(defs) != 1 or name in imported:
            return f"{where}: its base `{name}` is no one class statement of its file"
        node = defs[0]
        if node.keywords or node.decorator_list:
            return f"{where}: its base `{name}` has a metaclass or a decorator"
        binds = _class_binds(node)
        shadow = {attr, "__getattribute__", "__getattr__"} & binds
        if shadow or any(_reflective(n) for n in walk_all(node)):
            return f"{where}: its base `{name}` binds `{next(iter(shadow), 'names it computes')}`"
        for b in node.bases:
            text = ast.unparse(b)
            if text == "object":
                continue
            if text in _TORCH_MODULE and text.split(".")[0] in torch_names:
                continue
            if isinstance(b, ast.Name):
                todo.append(b.id)
                continue
            return f"{where}: its base `{name}` derives from `{text}`"
    return ""


def _reflective(n: ast.AST) -> bool:
    """`locals()`, `vars()`, `setattr(...)`, `exec(...)` in a class body or its methods: names
    the text does not spell."""
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("locals", "vars", "setattr", "exec", "eval", "globals")
    )


def _torch_imports(tree: ast.Module) -> set[str]:
    """`nn` bound by `from torch import nn` / `import torch.nn as nn`, `torch` by `import torch`,
    each the only binding of that name at module level."""
    bound: dict[str, list[bool]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                name = a.asname or a.name.split(".")[0]
                ok = (
                    (a.name == "torch" and a.asname is None)
                    or (a.name == "torch.nn" and a.asname == "nn")
                    or (a.name.startswith("torch.") and a.asname is None)
                )
                bound.setdefault(name, []).append(ok)
        elif isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                name = a.asname or a.name
                ok = stmt.module == "torch" and a.name == "nn" and a.asname in (None, "nn")
                bound.setdefault(name, []).append(ok)
    for n in walk_all(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del) and n.id in bound:
            bound[n.id].append(False)
        elif (
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name in bound
        ):
            bound[n.name].append(False)
    return {name for name, oks in bound.items() if all(oks)}
