"""The names a key of a `sys.modules[k] = v` store may hold, and whether such a key may name a
module of the tree at all (anyorder_stores.modules_replaced asks both).

Beyond what analysis/lookup_names.py reads from the syntax (literals, f-strings, locals bound
to them), two forms are read, each on one assumption stated here and in docs/whole-program.md:

- a parameter of a private function (`_make_mock(name)`, a leading `_`, no decorator, a def at
  its module's top level that nothing in the module binds again), when every use of its name in
  its file is a call of it and no other file of the tree spells the name: the names of the
  arguments passed for the parameter (its default where a call leaves it out). Assumed: no code
  outside the scanned tree calls a private function (the closed world over callers the
  returned-buffer search rests on); a module whose text may bind names out of sight
  (project.DYNAMIC_PATTERN) gives it up, and so does a file that may fetch it by a name its
  text does not spell (`getattr(m, k)`: tree_naming.naming_files, as returned.py asks);
- a name tested by an `if` whose body holds the store (`if k == "triton" or
  k.startswith("triton."):`), `k` a parameter the function never binds again: the names the
  test lets through (`==` a literal, `.startswith` a literal or a tuple of them, joined by `or`;
  an `and` lets through what any of its parts does). Assumed: such a `k` is a `str`, whose `==`
  and `startswith` are `str`'s (a subclass overriding them may answer any name).

A key whose every possible name lies under one top-level name T (`T` itself or `T.` followed
by anything) names a module of the tree only if the module's name or a package's above it
starts with T: the import of a tree module uses the name the import system derives from the
file's path (its folders up to a folder on `sys.path`), or the name a loader call is given
(`spec_from_file_location(name, path)`, `runpy.run_path(path, run_name=...)`), or a name its
module stores in `__package__`/`__spec__`/`__name__` (or an attribute of its `__spec__`) for
its relative imports. So T is taken
as foreign when no file or folder of the tree (on its absolute path) is named T, no loader call
of the tree may be given a name under T, and no module of the tree stores a name under T in
those three. Assumed: no code runs a tree file's source as a module of another name by `exec`.
"""

from __future__ import annotations

import ast
import os
import re

from zeroopt.analysis.lookup_names import LookupNames, Names
from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.project import binds_dynamically
from zeroopt.analysis.resolve import child_nodes, walk_all
from zeroopt.analysis.tree_naming import naming_files, word_pattern

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_MAX_DEPTH = 3  # parameters followed through callers, at most
# Calls that run a file as a module under a name they are given: (function, position of the
# name among the arguments, its keyword). importlib.util / importlib.machinery / runpy / imp.
_LOADERS = {
    "spec_from_file_location": (0, "name"),
    "spec_from_loader": (0, "name"),
    "SourceFileLoader": (0, "fullname"),
    "SourcelessFileLoader": (0, "fullname"),
    "ExtensionFileLoader": (0, "name"),
    "ModuleSpec": (0, "name"),
    "load_source": (0, "name"),
    "load_compiled": (0, "name"),
    "load_package": (0, "name"),
    "load_dynamic": (0, "name"),
    "run_path": (2, "run_name"),
    "run_module": (2, "run_name"),
}
_LOADER_WORDS = re.compile(rb"|".join(re.escape(w.encode()) for w in _LOADERS))
_OWN_NAMES = frozenset({"__package__", "__spec__", "__name__"})
# An own name not followed by what only reads it (`__name__ == ...`, `getLogger(__name__)`,
# `__spec__.name`): the files that may store one, parsed to see.
_OWN_NAME_USE = re.compile(
    rb"(?:__package__|__spec__|__name__)(?!\s*(?:[=!]=|[).\]}]))|__spec__\s*\.\s*\w+\s*=(?!=)"
)


class ModuleKeys:
    """The names of keys in one parsed file of the tree."""

    def __init__(
        self,
        world: ClassWorld,
        path: str,
        text: bytes,
        tree: ast.Module,
        parents: dict[int, ast.AST],
    ) -> None:
        self.world = world
        self.path = path
        self.text = text
        self.tree = tree
        self.parents = parents
        self.lookup = LookupNames()
        self._dynamic: bool | None = None

    def names(self, e: ast.expr, at: ast.AST, depth: int = 0) -> Names | None:
        """The names `e`, evaluated at the node `at`, may hold; None: any."""
        scope = _scope_of(at, self.parents)
        got = self.lookup.names(e, scope)
        if got is not None or depth > _MAX_DEPTH:
            return got
        if not isinstance(e, ast.Name) or not isinstance(scope, ast.FunctionDef):
            return None
        if self.lookup.in_comprehension(e, scope) or not self.lookup.parameter_only(e.id, scope):
            return None
        guarded = _guarded(e.id, at, scope, self.parents)
        if guarded is not None:
            return guarded
        return self._passed(e.id, scope, depth)

    def _passed(self, param: str, fn: ast.FunctionDef, depth: int) -> Names | None:
        """The names every call of the private function `fn` passes for `param`."""
        name = fn.name
        if not name.startswith("_") or name.startswith("__") or fn.decorator_list:
            return None
        if self.parents.get(id(fn)) is not self.tree or self._binds_dynamically():
            return None
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        index = next((i for i, x in enumerate(positional) if x.arg == param), None)
        keyword = param if all(x.arg != param for x in a.posonlyargs) else None
        default: ast.expr | None = None
        if index is not None:
            first_default = len(positional) - len(a.defaults)
            if index >= first_default:
                default = a.defaults[index - first_default]
        else:
            k = next((i for i, x in enumerate(a.kwonlyargs) if x.arg == param), None)
            if k is None:
                return None  # `*args` / `**kwargs`
            default = a.kw_defaults[k]
        word = word_pattern(name.encode())
        if any(word.search(d) for p, d in self.world.files if p != self.path):
            return None  # another file may call it, or hand it on
        if self._looked_up_elsewhere(name):
            return None
        uses = [n for n in walk_all(self.tree) if isinstance(n, ast.Name) and n.id == name]
        if len(word.findall(self.text)) != len(uses) + 1:
            return None  # spelled in a string, an attribute, an import, a comment: not read
        out: set[tuple[str, str, bool]] = set()
        for use in uses:
            call = self.parents.get(id(use))
            if not isinstance(call, ast.Call) or call.func is not use:
                return None  # handed on as a value: called from where the text does not show
            if any(isinstance(x, ast.Starred) for x in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                return None
            arg: ast.expr | None = None
            if index is not None and index < len(call.args):
                arg = call.args[index]
            elif keyword is not None:
                arg = next((k.value for k in call.keywords if k.arg == keyword), None)
            if arg is None:
                if default is None:
                    return None
                got = self.lookup.names(default, None)
            else:
                got = self.names(arg, call, depth + 1)
            if got is None:
                return None
            out |= got
        return frozenset(out) if uses else None

    def _looked_up_elsewhere(self, name: str) -> bool:
        """Another file may fetch `name` from this module by a name its text does not spell
        (`getattr(m, k)`, a joined literal: tree_naming.naming_files, as returned.py asks)."""
        files, why = naming_files(self.world, self.path, self.path, name)
        return bool(files or why)

    def _binds_dynamically(self) -> bool:
        if self._dynamic is None:
            self._dynamic = binds_dynamically(self.text.decode("utf-8", "replace"))
        return self._dynamic


def _scope_of(n: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The function whose code evaluates `n` (None: a module or class body). A def's
    defaults, annotations and decorators are evaluated where the def stands, a class's bases
    and decorators where the class statement stands."""
    child, up = n, parents.get(id(n))
    while up is not None:
        if isinstance(up, ast.Module):
            return None
        if isinstance(up, ast.ClassDef) and any(child is s for s in up.body):
            return None
        if isinstance(up, ast.Lambda) and child is up.body:
            return up
        if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            child is s for s in up.body
        ):
            return up
        child, up = up, parents.get(id(up))
    return None


def _guarded(name: str, at: ast.AST, fn: ast.AST, parents: dict[int, ast.AST]) -> Names | None:
    """The names an `if` test around `at` (in its body, in `fn`) lets `name` hold, or None."""
    child, up = at, parents.get(id(at))
    while up is not None and up is not fn:
        if isinstance(up, ast.If) and any(child is s for s in up.body):
            got = _test_names(up.test, name)
            if got is not None:
                return got
        child, up = up, parents.get(id(up))
    return None


def _test_names(test: ast.expr, name: str) -> Names | None:
    """The names `name` may hold where `test` is true; None: any."""
    if isinstance(test, ast.BoolOp):
        parts = [_test_names(v, name) for v in test.values]
        if isinstance(test.op, ast.Or):
            if any(p is None for p in parts):
                return None
            return frozenset(x for p in parts if p is not None for x in p)
        known = [p for p in parts if p is not None]
        return min(known, key=len) if known else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        for a, b in ((left, right), (right, left)):
            if _is_name(a, name) and isinstance(b, ast.Constant) and isinstance(b.value, str):
                return frozenset({(b.value, "", True)})
        return None
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and _is_name(test.func.value, name)
        and len(test.args) == 1
        and not test.keywords
    ):
        arg = test.args[0]
        lits = arg.elts if isinstance(arg, ast.Tuple) else [arg]
        if all(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in lits):
            return frozenset((str(x.value), "", False) for x in lits if isinstance(x, ast.Constant))
    return None


def _is_name(e: ast.expr, name: str) -> bool:
    return isinstance(e, ast.Name) and e.id == name


Top = tuple[str, bool]  # a top-level name, or (True) the start of one


def top_levels(names: Names) -> frozenset[Top] | None:
    """The top-level names the keys lie under (`triton` for `"triton"`, `"triton.x"` and
    names starting `"triton."`; names starting `"tri"` lie under any top-level name starting
    so), or None where one may lie under any."""
    tops: set[Top] = set()
    for prefix, _, whole in names:
        top, dot, _ = prefix.partition(".")
        if whole or dot:
            tops.add((top, False))
        elif prefix:
            tops.add((prefix, True))
        else:
            return None
    return frozenset(tops)


def _meet(a: frozenset[Top], b: frozenset[Top]) -> bool:
    """Some top-level name lies under one of `a` and one of `b`."""
    for x, x_start in a:
        for y, y_start in b:
            if x == y or (x_start and y.startswith(x)) or (y_start and x.startswith(y)):
                return True
    return False


_GIVEN: dict[str, frozenset[Top] | None] = {}


def foreign(world: ClassWorld, tops: frozenset[Top], paths: tuple[str, ...]) -> bool:
    """No module at `paths` may be imported under a name starting with one of `tops`: none is
    a folder or the file on their absolute paths, nor a name the tree gives a module."""
    key = world.digest or f"id:{id(world)}"
    if world.digest and key in _GIVEN:
        given = _GIVEN[key]
    else:
        given = _given_names(world)
        if world.digest:
            _GIVEN.clear()
            _GIVEN[key] = given
    if given is None or _meet(tops, given):
        return False
    for path in paths:
        folder, base = os.path.split(os.path.abspath(path))
        on_path = {base.split(".")[0], *(p.split(".")[0] for p in folder.split(os.sep) if p)}
        if _meet(tops, frozenset((p, False) for p in on_path)):
            return False
    return True


def _given_names(world: ClassWorld) -> frozenset[Top] | None:
    """The top-level names the tree's loader calls and stores of `__package__`, `__spec__` or
    `__name__` may give a module; None: any."""
    out: set[Top] = set()
    for path, data in world.files:
        if not _LOADER_WORDS.search(data) and not _OWN_NAME_USE.search(data):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        parents = {id(c): n for n in walk_all(tree) for c in child_nodes(n)}
        keys = ModuleKeys(world, path, data, tree, parents)
        for n in walk_all(tree):
            given: ast.expr | None = None
            if isinstance(n, ast.Call):
                func = n.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname not in _LOADERS:
                    continue
                index, word = _LOADERS[fname]
                if fname == "ModuleSpec" and _no_loader(n):
                    continue  # a spec no file runs under (its `loader` is None)
                if any(isinstance(x, ast.Starred) for x in n.args) or any(
                    k.arg is None for k in n.keywords
                ):
                    return None
                given = n.args[index] if index < len(n.args) else None
                given = next((k.value for k in n.keywords if k.arg == word), given)
                if given is None:
                    continue  # `run_path` / `run_module` without a name: `<run_path>`, its own
            elif isinstance(n, ast.Name) and n.id in _OWN_NAMES and not isinstance(n.ctx, ast.Load):
                up = parents.get(id(n))
                if not isinstance(up, ast.Assign | ast.AnnAssign) or up.value is None:
                    return None  # a loop, `with`, tuple target, `del`, augmented store: any
                if isinstance(up, ast.Assign) and not any(t is n for t in up.targets):
                    return None
                given = up.value
            elif (
                isinstance(n, ast.Attribute)
                and not isinstance(n.ctx, ast.Load)
                and isinstance(n.value, ast.Name)
                and n.value.id == "__spec__"
            ):
                return None  # `__spec__.name = ...`: the module's name for its relative imports
            elif isinstance(n, ast.ImportFrom) and any(
                a.name in _LOADERS and a.asname not in (None, a.name) for a in n.names
            ):
                return None  # a loader under another name
            elif isinstance(n, ast.Constant) and n.value in _LOADERS:
                return None  # `getattr(importlib.util, "spec_from_file_location")`
            elif isinstance(n, ast.Constant) and n.value in _OWN_NAMES:
                given = _stored_by_string(n, parents)
                if given is None:
                    continue  # a read: `getattr(m, "__name__")`, `d["__name__"]`, `==`
            elif isinstance(n, ast.keyword) and n.arg in _OWN_NAMES:
                given = n.value  # `dict(__name__=...)`, `f(__package__=...)`
            else:
                continue
            if isinstance(given, ast.Constant) and given.value is None:
                continue  # no name: relative imports fall back to `__spec__` / `__name__`
            got = keys.names(given, n)
            tops = top_levels(got) if got is not None else None
            if tops is None:
                return None
            out |= tops
    return frozenset(out)


def _stored_by_string(c: ast.Constant, parents: dict[int, ast.AST]) -> ast.expr | None:
    """The value stored under the name `c` spells (`d["__package__"] = v`, `setattr(m,
    "__name__", v)`, `{"__name__": v}`), or None where `c` is only read."""
    up = parents.get(id(c))
    if isinstance(up, ast.Subscript) and up.slice is c and isinstance(up.ctx, ast.Store):
        stmt = parents.get(id(up))
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            return stmt.value
        return ast.Name("<any>", ast.Load())  # a loop or augmented store: any value
    if (
        isinstance(up, ast.Call)
        and getattr(up.func, "id", "") == "setattr"
        and len(up.args) == 3
        and up.args[1] is c
    ):
        return up.args[2]
    if isinstance(up, ast.Dict):
        for k, v in zip(up.keys, up.values, strict=True):
            if k is c:
                return v
    return None


def _no_loader(call: ast.Call) -> bool:
    loader = call.args[1] if len(call.args) > 1 else None
    loader = next((k.value for k in call.keywords if k.arg == "loader"), loader)
    return isinstance(loader, ast.Constant) and loader.value is None
