"""Stores that change what a class derives from, or what a module's name holds, out of sight of
the class statements: the any-order pass (lifecycle_anyorder.py) asks about them.

A store of a class's bases (`T.__bases__ = ...`) can make a class derive from C that no class
statement shows. Only one form is read: `T.__bases__ = T.__bases__ + (E1, E2)` (or
`T.__bases__ += (E1,)`) where `T` is a plain name and each `E` a plain name that its module
binds only by class statements and imports and no function of the store binds. Such a store
keeps every base `T` had and adds the classes `E` after them (the added names first would put
E's methods before those of C when T derives from C: not read): `T` comes to derive from C only if
some `E` is C or derives from C (by name, aliases included: the lineage's closed world), and
whatever `T` is, the code of each `E` may come to run on objects of `T` (the caller judges that
code as a base's). Any other store (another value, another target, `setattr(T, "__bases__",
v)`, a string naming `__bases__`, a file that cannot be parsed) may give any class any bases.

A module's names: `globals()` returns the namespace of the module whose code calls it, so a
store through it rebinds names of that module only; a name looked up in module M may be rebound
unseen by `globals()` in M (unless every store through it is `globals()[k] = v` with a key whose
possible names, analysis/lookup_names.py, exclude the name, and every other use only reads), or
by a binding under a computed name on what may be M (`setattr(m, k, v)`, `vars(m)[k] = v`,
`m.__dict__`, `sys.modules[...]`, `importlib.import_module(...)`: methods.py
`bound_dynamically`), or by another object put in `sys.modules` under M's name (the import
then yields it: `modules_replaced`), or by an import hook or a folder put on `sys.path` (`import_system_altered`), or by a
submodule of that name when M is a package
(`import M.B` binds B in M: `_submodule`), or by a deletion of the name from a module while a module
`__getattr__` may answer for it (`deleted_with_fallback`). `exec`/`eval`/frames anywhere in the tree are the reach's opaque uses
(anyorder_reach.py): they block the any-order pass by themselves.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from zeroopt.analysis.anyorder_classes import parsed, spelled_in
from zeroopt.analysis.dynamic_attributes import last_name
from zeroopt.analysis.lookup_names import LookupNames, Names, may_name
from zeroopt.analysis.methods import ClassWorld, _short
from zeroopt.analysis.module_keys import ModuleKeys, foreign, top_levels
from zeroopt.analysis.project import module_name_of
from zeroopt.analysis.resolve import child_nodes, walk_all


@dataclass(frozen=True)
class BasesStore:
    """One store of a class's bases: `added` the added classes' names (None: not the form
    read, any bases), `at` its `path:line`, `module` the parsed file, `node` the statement of
    the form read (its target `T.__bases__` names the class: analysis/bases_targets.py)."""

    at: str
    path: str
    added: tuple[ast.Name, ...] | None
    module: ast.Module | None
    node: ast.Assign | ast.AugAssign | None = None


_STORES: dict[str, list[BasesStore]] = {}


def bases_stores(world: ClassWorld) -> list[BasesStore]:
    """Every store of a class's bases in the tree, in file order: once per tree digest."""
    key = world.digest or f"id:{id(world)}"
    hit = _STORES.get(key) if world.digest else None
    if hit is None:
        hit = []
        for path, data in world.files:
            if b"__bases__" in data:
                hit.extend(_stores_in(path, data))
        if world.digest:
            _STORES.clear()
            _STORES[key] = hit
    return hit


def _stores_in(path: str, data: bytes) -> list[BasesStore]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [BasesStore(f"{_short(path)}:1", path, None, None)]
    out: list[BasesStore] = []
    read: set[int] = set()  # the targets of the stores of the form read
    parents: dict[int, ast.AST] = {}
    docstrings: set[int] = set()
    for n in walk_all(tree):
        for child in child_nodes(n):
            parents[id(child)] = n
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant):
            docstrings.add(id(n.value))
    for n in walk_all(tree):
        added = _added(n, tree, parents)
        if added is not None and isinstance(n, ast.Assign | ast.AugAssign):
            target = n.targets[0] if isinstance(n, ast.Assign) else n.target
            read.add(id(target))
            out.append(BasesStore(f"{_short(path)}:{n.lineno}", path, added, tree, n))
    for n in walk_all(tree):
        opaque = (
            isinstance(n, ast.Attribute)
            and n.attr == "__bases__"
            and not isinstance(n.ctx, ast.Load)
            and id(n) not in read
        ) or (
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and "__bases__" in n.value
            and id(n) not in docstrings
        )
        if opaque:
            out.append(BasesStore(f"{_short(path)}:{getattr(n, 'lineno', 1)}", path, None, None))
    out.sort(key=lambda s: int(s.at.rsplit(":", 1)[1]))
    return out


def _added(
    n: ast.AST, tree: ast.Module, parents: dict[int, ast.AST]
) -> tuple[ast.Name, ...] | None:
    """The names `n` adds to a class's bases when it is of the form read, else None."""
    if isinstance(n, ast.Assign) and len(n.targets) == 1:
        target, value = n.targets[0], n.value
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
            return None
        if not (_same_bases(value.left, target) and isinstance(value.right, ast.Tuple)):
            return None  # `(E,) + T.__bases__`: E's methods override those of T's bases
        names = value.right
    elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add):
        target = n.target
        if not (_same_bases(target, target) and isinstance(n.value, ast.Tuple)):
            return None
        names = n.value
    else:
        return None
    if not _same_bases(target, target) or not names.elts:
        return None
    if not all(
        isinstance(e, ast.Name) and _module_class(e.id, n, tree, parents) for e in names.elts
    ):
        return None
    return tuple(e for e in names.elts if isinstance(e, ast.Name))


def _same_bases(e: ast.expr, target: ast.expr) -> bool:
    """`e` is `T.__bases__` for the plain name `T` that `target` is `T.__bases__` of."""
    return (
        isinstance(e, ast.Attribute)
        and e.attr == "__bases__"
        and isinstance(e.value, ast.Name)
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and e.value.id == target.value.id
    )


def _module_class(name: str, at: ast.AST, tree: ast.Module, parents: dict[int, ast.AST]) -> bool:
    """`name` at `at` is a module-level name bound only by class statements and imports: no
    function around `at` binds it, and nothing else in the module does."""
    for n in walk_all(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id == name:
            return False
        if isinstance(n, ast.arg) and n.arg == name:
            return False
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name:
            return False
        if isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return False
        if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name == name:
            return False
    scope = parents.get(id(at))
    while scope is not None and not isinstance(scope, ast.Module):
        if isinstance(scope, ast.ClassDef) and scope.name == name:
            return False  # a class body's own name is not the module's
        scope = parents.get(id(scope))
    return True


def bases_added(world: ClassWorld, may_be: Callable[[str], bool]) -> str:
    """The first store of a class's bases that may add a class `may_be` holds for (a store not
    of the form read may add any), as evidence; "" if none."""
    for store in bases_stores(world):
        if store.added is None:
            return f"{store.at} replaces a class's bases: any class may come to derive from it"
        hit = [e.id for e in store.added if may_be(e.id)]
        if hit:
            return (
                f"{store.at} adds `{hit[0]}` to a class's bases: a class may come to derive from it"
            )
    return ""


def family(world: ClassWorld, name: str) -> set[str] | None:
    """The names a class called `name`, or one deriving from it, may go by (aliases too); None
    when the tree's classes deriving from it are not certain."""
    found, why = world.lineage(name)
    if why and not why.endswith("other than through its first base only"):
        return None
    names = {name} | {info.name for _, info in found}
    for n in list(names):
        names |= world.aliases(n)
    return names


def module_dict_reached(world: ClassWorld, name: str, paths: tuple[str, ...]) -> str:
    """Where the tree may bind `name` in the module at one of `paths` without a statement that
    spells it: `globals()` in that module (beyond reads and stores under names that exclude it),
    a computed name on what may be that module elsewhere; "" if nowhere."""
    for path in dict.fromkeys(paths):
        data = next((d for p, d in world.files if p == path), None)
        if data is None:
            return f"{_short(path)} is not a file of the tree"
        sub = _submodule(world, path, name)
        if sub:
            return (
                f"{_short(path)} is a package with a submodule `{name}` ({sub}): importing it "
                f"binds `{name}` in the package to the module"
            )
        if b"globals" in data or b"locals" in data or b"vars" in data:
            line = _globals_store(data, name)
            if line:
                return f"{_short(path)}:{line} may rebind `{name}` through `globals()`"
        why = world.bound_dynamically(name, (module_name_of(path)[0], path), own=False)
        if why:
            return why
    if len(set(paths)) < 2:  # looked up where it is defined: no import yields it
        return _function_globals(world)
    for path in paths:
        other = _shadowed_file(path)
        if other:
            return f"{_short(path)} may not be what its import finds: {other} comes first"
    return (
        modules_replaced(world, paths)
        or import_system_altered(world)
        or deleted_with_fallback(world, name)
        or _function_globals(world)
    )


_IMPORT_STATE = frozenset({"meta_path", "path_hooks", "path_importer_cache", "path"})
_ALTERED: dict[str, str] = {}


def import_system_altered(world: ClassWorld) -> str:
    """The first place the tree may change where an import finds a module, so that `from M
    import B` may run another file or yield another object than the tree's file of M: a use of
    `sys.meta_path`, `sys.path_hooks`, `sys.path_importer_cache` or `sys.path` beyond a read
    (an import hook, a folder put first), `site.addsitedir`, a store into a package's
    `__path__`; once per tree digest; "" if none."""
    key = world.digest or f"id:{id(world)}"
    hit = _ALTERED.get(key) if world.digest else None
    if hit is None:
        hit = ""
        for path, data in world.files:
            if b"path" not in data:
                continue
            line = _import_state_use(data)
            if line:
                hit = f"{_short(path)}:{line} may change where an import finds a module"
                break
        if world.digest:
            _ALTERED.clear()
            _ALTERED[key] = hit
    return hit


def _import_state_use(data: bytes) -> int:
    """The line of the first use in the file that may change how imports find modules, or 0."""
    read = _with_parents(data)
    if read is None:
        return 1
    tree, parents = read
    sys_names = _sys_aliases(tree, _IMPORT_STATE)
    if isinstance(sys_names, int):
        return sys_names
    for n in walk_all(tree):
        if isinstance(n, ast.Constant) and n.value in _IMPORT_STATE and _reflective(n, parents):
            return n.lineno  # `getattr(sys, "meta_path")`
        if isinstance(n, ast.Call) and last_name(n.func) == "addsitedir":
            return n.lineno
        if isinstance(n, ast.Name) and n.id == "__path__":
            up = parents.get(id(n))
            if not isinstance(n.ctx, ast.Load) or (
                isinstance(up, ast.Attribute) and up.attr not in _READS
            ):
                return n.lineno  # `__path__ = extend_path(...)`, `__path__.append(d)`
        if not isinstance(n, ast.Attribute):
            continue
        if n.attr == "__path__" and not _read_only(n, parents):
            return n.lineno
        v = n.value
        of_sys = (isinstance(v, ast.Name) and v.id in sys_names) or (
            isinstance(v, ast.Call) and last_name(v.func) in ("__import__", "import_module")
        )
        if not (of_sys and n.attr in _IMPORT_STATE) or _read_only(n, parents):
            continue
        up = parents.get(id(n))
        if isinstance(up, ast.For | ast.comprehension) and up.iter is n:
            continue  # `for p in sys.path`
        return n.lineno
    return 0


def deleted_with_fallback(world: ClassWorld, name: str) -> str:
    """Where the tree may delete `name` from a module (any: a module is often held in a value
    of unknown type) when some file of the
    tree names `__getattr__` (a module's own, one stored into it, or the class a module's
    `__class__` may become): the import of `name` then yields whatever it returns. A deletion is
    `del e.name`, or `delattr(e, k)` / `e.__delattr__(k)` with `k` that may be `name`; "" if
    none."""
    if not any(b"__getattr__" in d for _, d in world.files):
        return ""
    for path, data in world.files:
        if b"del" not in data:
            continue
        line = _deletion(data, name)
        if line:
            return (
                f"{_short(path)}:{line} may delete `{name}` from a module: its module "
                "`__getattr__` may then give another object"
            )
    return ""


def _sys_aliases(tree: ast.Module, names: frozenset[str]) -> set[str] | int:
    """The names the module binds to `sys`, or the line of a `from sys import` of one of
    `names` (or `*`): the attribute is then used under a name of its own."""
    aliases = {"sys"}
    for n in walk_all(tree):
        if isinstance(n, ast.Import):
            aliases.update(a.asname or a.name for a in n.names if a.name == "sys")
        elif (
            isinstance(n, ast.ImportFrom)
            and n.module == "sys"
            and any(a.name in names or a.name == "*" for a in n.names)
        ):
            return n.lineno
    return aliases


def _with_parents(data: bytes) -> tuple[ast.Module, dict[int, ast.AST]] | None:
    """A module's tree and each node's parent, by id (None if it cannot be parsed)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parents: dict[int, ast.AST] = {}
    for n in walk_all(tree):
        for child in child_nodes(n):
            parents[id(child)] = n
    return tree, parents


def _deletion(data: bytes, name: str) -> int:
    """The line of the first `del e.name` or `delattr(e, k)` that may delete `name`, or 0."""
    read = _with_parents(data)
    if read is None:
        return 1
    tree, parents = read
    lookup = LookupNames()
    for n in walk_all(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Del) and n.attr == name:
            return n.lineno
        if not (isinstance(n, ast.Call) and last_name(n.func) in ("delattr", "__delattr__")):
            continue
        key = n.args[1] if last_name(n.func) == "delattr" and len(n.args) > 1 else None
        if isinstance(n.func, ast.Attribute) and last_name(n.func) == "__delattr__" and n.args:
            key = n.args[-1]
        scope = parents.get(id(n))
        while scope is not None and not isinstance(
            scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
        ):
            scope = parents.get(id(scope))
        keys = lookup.names(key, scope) if key is not None else None
        if keys is None or any(not whole or prefix == name for prefix, _, whole in keys):
            return n.lineno
    return 0


def _shadowed_file(path: str) -> str:
    """A file an import of the module at `path` finds before it, or "": a package folder of
    the same name (`m/__init__.py` beside `m.py`) or an extension module (`m.*.so`, `m.pyd`),
    which the import system tries before source."""
    folder, base = os.path.split(path)
    stem = base[:-3] if base.endswith(".py") else base
    if stem == "__init__":
        return ""
    if os.path.isfile(os.path.join(folder, stem, "__init__.py")):
        return _short(os.path.join(folder, stem, "__init__.py"))
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return ""
    hit = [
        e for e in entries if e.split(".")[0] == stem and e.endswith((".so", ".pyd")) and e != base
    ]
    return _short(os.path.join(folder, hit[0])) if hit else ""


def _submodule(world: ClassWorld, path: str, name: str) -> str:
    """A submodule or subpackage called `name` of the package whose `__init__.py` is at `path`
    (a file of the tree or on disk, an extension module too), or "". `import pkg.name` anywhere
    sets the package's attribute `name` to that module, and a module may stand as a base
    through its `__mro_entries__`."""
    folder, base = os.path.split(path)
    if base != "__init__.py":
        return ""
    for p, _ in world.files:
        if os.path.dirname(os.path.dirname(p)) == folder or os.path.dirname(p) == folder:
            rest = os.path.relpath(p, folder).split(os.sep)[0]
            if rest == name or rest.split(".")[0] == name:
                return _short(p)
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return ""
    hit = [e for e in entries if e == name or e.split(".")[0] == name]
    return _short(os.path.join(folder, hit[0])) if hit else ""


def modules_replaced(world: ClassWorld, paths: tuple[str, ...]) -> str:
    """Where the tree may put another object in `sys.modules` under the name of a module at one
    of `paths` (or of a package above it): an import of it then yields that object, whatever its
    file binds. A store `sys.modules[k] = v` counts unless `k`'s possible names
    (analysis/lookup_names.py) end in no part of those modules' dotted names; any other use of
    `sys.modules` but a read or `pop`/`del` counts (`update`, `setdefault`, held in a name,
    `from sys import modules`, `getattr(sys, "modules")`); "" if none."""
    parts = frozenset(p for path in paths for p in module_name_of(path)[0].split(".") if p)
    key = (world.digest, parts, frozenset(os.path.abspath(p) for p in paths))
    hit = _MODULES_REPLACED.get(key) if world.digest else None
    if hit is None:
        hit, names = "", set(parts)
        for path, data in world.files:
            if b"modules" not in data:
                continue
            line = _modules_store(world, path, data, names, paths)
            if line:
                hit = (
                    f"{_short(path)}:{line} may put another object in `sys.modules` under the "
                    "name of a module the name is imported from"
                )
                break
        if world.digest:
            if len(_MODULES_REPLACED) > 4096:
                _MODULES_REPLACED.clear()
            _MODULES_REPLACED[key] = hit
    return hit


# (tree digest, parts of the modules' names, their paths) -> modules_replaced's answer: each
# base of each class asks it of its modules.
_MODULES_REPLACED: dict[tuple[str, frozenset[str], frozenset[str]], str] = {}


def _modules_store(
    world: ClassWorld, path: str, data: bytes, parts: set[str], paths: tuple[str, ...]
) -> int:
    """The line of the first use of `sys.modules` in the file at `path` that may replace a
    module at one of `paths`, whose dotted names end in one of `parts`, or 0."""
    for line, names in _module_stores(world, path, data):
        if names is not None and all(
            whole and prefix.rsplit(".", 1)[-1] not in parts for prefix, _, whole in names
        ):
            continue  # `sys.modules["other"] = m`: no module the name is imported from
        tops = top_levels(names) if names is not None else None
        if tops is not None and foreign(world, tops, paths):
            continue  # `sys.modules["triton.x"] = m`: no module here is imported under it
        return line
    return 0


# (tree digest, path) -> _module_stores's answer for the file: modules_replaced asks it of every
# file that mentions `modules`, once for each set of modules asked, and parsing each such file
# again for each set was a tenth of the analysis of some files.
_MODULE_STORES: dict[tuple[str, str], list[tuple[int, Names | None]]] = {}


def _module_stores(world: ClassWorld, path: str, data: bytes) -> list[tuple[int, Names | None]]:
    """The uses of `sys.modules` in the file that may replace a module, in the order the walk
    meets them, as (line, the names a keyed store's key may hold; None: any module). Nothing
    after a use of the second kind is listed (it always answers). Once per tree digest and file
    (every time without a digest)."""
    key = (world.digest, path)
    found = _MODULE_STORES.get(key) if world.digest else None
    if found is None:
        found = _module_stores_of(world, path, data)
        if world.digest:
            if _MODULE_STORES and next(iter(_MODULE_STORES))[0] != world.digest:
                _MODULE_STORES.clear()  # another tree: its files may differ
            _MODULE_STORES[key] = found
    return found


def _module_stores_of(world: ClassWorld, path: str, data: bytes) -> list[tuple[int, Names | None]]:
    read = _with_parents(data)
    if read is None:
        return [(1, None)]
    tree, parents = read
    sys_names = _sys_aliases(tree, frozenset({"modules"}))
    if isinstance(sys_names, int):
        return [(sys_names, None)]
    keys = ModuleKeys(world, path, data, tree, parents)
    found: list[tuple[int, Names | None]] = []
    for n in walk_all(tree):
        if isinstance(n, ast.Constant) and n.value == "modules" and _reflective(n, parents):
            found.append((n.lineno, None))  # `getattr(sys, "modules")`, `vars(sys)["modules"]`
            return found
        if not (isinstance(n, ast.Attribute) and n.attr == "modules"):
            continue
        v = n.value
        if not (
            (isinstance(v, ast.Name) and v.id in sys_names)
            or (isinstance(v, ast.Call) and last_name(v.func) in ("__import__", "import_module"))
        ):
            continue
        if _read_only(n, parents):
            continue
        up = parents.get(id(n))
        if isinstance(up, ast.Attribute) and up.attr == "pop":
            continue  # the next import executes the module's own file again
        if isinstance(up, ast.Subscript) and up.value is n and isinstance(up.ctx, ast.Del):
            continue
        if isinstance(up, ast.Subscript) and up.value is n and isinstance(up.ctx, ast.Store):
            names = keys.names(up.slice, up)
            found.append((n.lineno, names))
            if names is not None:
                continue
            return found
        found.append((n.lineno, None))
        return found
    return found


_FUNCTION_GLOBALS: dict[str, str] = {}


def _function_globals(world: ClassWorld) -> str:
    """The first use of a function's module namespace (`f.__globals__`, any module's) that
    does more than copy or read it; once per tree digest."""
    key = world.digest or f"id:{id(world)}"
    hit = _FUNCTION_GLOBALS.get(key) if world.digest else None
    if hit is None:
        hit = ""
        for path, data in world.files:
            if b"__globals__" not in data:
                continue
            line = _namespace_use(data, "__globals__")
            if line:
                hit = f"{_short(path)}:{line} reaches a module's names through `__globals__`"
                break
        if world.digest:
            _FUNCTION_GLOBALS.clear()
            _FUNCTION_GLOBALS[key] = hit
    return hit


def _namespace_use(data: bytes, attr: str) -> int:
    """The line of the first `x.<attr>` in the file that does more than read it, or 0."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 1
    parents: dict[int, ast.AST] = {}
    for n in walk_all(tree):
        for child in child_nodes(n):
            parents[id(child)] = n
    for n in walk_all(tree):
        if isinstance(n, ast.Constant) and n.value == attr:
            return n.lineno
        if isinstance(n, ast.Attribute) and n.attr == attr and not _read_only(n, parents):
            return n.lineno
    return 0


def _reflective(c: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """The string `c` names an attribute by reflection: an argument of `getattr`-like calls,
    the key of a subscript of `vars(...)` or of a `__dict__`."""
    up = parents.get(id(c))
    if isinstance(up, ast.Call):
        return last_name(up.func) in ("getattr", "attrgetter", "__getattribute__")
    if isinstance(up, ast.Subscript) and up.slice is c:
        v = up.value
        return (isinstance(v, ast.Call) and last_name(v.func) == "vars") or (
            isinstance(v, ast.Attribute) and v.attr == "__dict__"
        )
    return False


def _read_only(e: ast.expr, parents: dict[int, ast.AST]) -> bool:
    """`e` (a namespace) is only read where it stands: subscripted to load, `.get(...)` and
    kin, `k in e`, copied by `dict(e)` and kin."""
    up = parents.get(id(e))
    if isinstance(up, ast.Subscript) and up.value is e:
        return isinstance(up.ctx, ast.Load)
    if isinstance(up, ast.Attribute) and up.attr in _READS:
        return True
    if isinstance(up, ast.Compare) and e in up.comparators:
        return True
    return (
        isinstance(up, ast.Call)
        and isinstance(up.func, ast.Name)
        and up.func.id in _READERS
        and e in up.args
    )


# What returns a module's namespace: `globals()`, and `locals()` / `vars()` in its body.
_NAMESPACES = frozenset({"globals", "locals", "vars"})
_READS = frozenset({"get", "keys", "items", "values", "copy", "__contains__", "__getitem__"})
_READERS = frozenset({"set", "list", "sorted", "dict", "len", "iter", "frozenset", "tuple"})


# (hash of a module's text, name) -> _globals_store's answer; a class's base names are asked
# of the same few modules again and again
_GLOBALS_STORE: dict[tuple[int, str], int] = {}


def _globals_store(data: bytes, name: str) -> int:
    """The line of the first use of the module's namespace (`globals()`, `locals()` or `vars()`,
    which in a module's body are its namespace) that may bind `name`, or 0."""
    key = (hash(data), name)
    if key not in _GLOBALS_STORE:
        if len(_GLOBALS_STORE) > 4096:
            _GLOBALS_STORE.clear()
        _GLOBALS_STORE[key] = _first_namespace_store(data, name)
    return _GLOBALS_STORE[key]


def _first_namespace_store(data: bytes, name: str) -> int:
    read = _with_parents(data)
    if read is None:
        return 1
    tree, parents = read
    lookup = LookupNames()
    for n in walk_all(tree):
        if (
            (isinstance(n, ast.Attribute) and n.attr in _NAMESPACES)
            or (isinstance(n, ast.alias) and n.name in _NAMESPACES)
            or (isinstance(n, ast.Constant) and n.value in _NAMESPACES)
        ):
            return getattr(n, "lineno", 1)  # `builtins.globals`, imported, named in a string
        if not (isinstance(n, ast.Name) and n.id in _NAMESPACES):
            continue
        call = parents.get(id(n))
        if not (isinstance(call, ast.Call) and call.func is n and not call.args):
            if n.id == "vars" and isinstance(call, ast.Call) and call.func is n:
                continue  # `vars(x)`: x's namespace (methods.py `bound_dynamically`)
            return n.lineno  # taken as a value
        up = parents.get(id(call))
        if _read_only(call, parents):
            continue  # `globals()[k]`, `globals().get(k)`, `k in globals()`, `set(globals())`
        if isinstance(up, ast.Subscript) and up.value is call and isinstance(up.ctx, ast.Store):
            scope = parents.get(id(up))
            while scope is not None and not isinstance(
                scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
            ):
                scope = parents.get(id(scope))
            keys = lookup.names(up.slice, scope)
            if keys is not None and not may_name(keys, frozenset({name})):
                continue  # `globals()[k] = v`, `k` one of names that exclude `name`
        return n.lineno
    return 0


def named_in_strings(world: ClassWorld, name: str) -> str:
    """`path:line` of the first string of the tree that may name `name` to bind it (the text
    `"name"` in a string that is no type annotation, no `cast(...)` type and no element of
    `__all__`: those are never a name bound), or ""; a file that cannot be parsed counts."""
    quoted = re.compile(rb"[\"']" + re.escape(name.encode()) + rb"[\"']")
    inner = re.compile(r"[\"']" + re.escape(name) + r"[\"']")
    for path, data in spelled_in(world, name):
        if name.encode() not in data or not quoted.search(data):
            continue
        strings = _live_strings(path, data)
        if strings is None:
            return f"{_short(path)}:1"
        for value, line in strings:
            if value == name or inner.search(value):
                return f"{_short(path)}:{line}"
    return ""


# (path, hash of its text) -> its strings that may name a binding, in `ast.walk` order
_STRINGS: dict[tuple[str, int], list[tuple[str, int]] | None] = {}


def _live_strings(path: str, data: bytes) -> list[tuple[str, int]] | None:
    """The string constants of a file that are no type annotation, `cast` type or `__all__`
    element, with their lines (None if it cannot be parsed); kept, since every base name of
    every class is looked for in the same files."""
    key = (path, hash(data))
    if key not in _STRINGS:
        if len(_STRINGS) > 1024:
            _STRINGS.clear()
        tree = parsed(path, data)
        if tree is None:
            _STRINGS[key] = None
        else:
            inert = _inert_strings(tree)
            _STRINGS[key] = [
                (n.value, n.lineno)
                for n in walk_all(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inert
            ]
    return _STRINGS[key]


def _inert_strings(tree: ast.Module) -> set[int]:
    """Ids of the string constants that name no binding: type annotations (of parameters,
    returns and annotated assignments), the type argument of `cast(...)`, the elements of
    `__all__` (a star import is checked where it matters: anyorder_bases.py)."""
    roots: list[ast.AST] = []
    for n in walk_all(tree):
        if isinstance(n, ast.arg) and n.annotation is not None:
            roots.append(n.annotation)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.returns is not None:
            roots.append(n.returns)
        elif isinstance(n, ast.AnnAssign):
            roots.append(n.annotation)
            if isinstance(n.target, ast.Name) and n.target.id == "__all__" and n.value:
                roots.append(n.value)
        elif isinstance(n, ast.Assign | ast.AugAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                roots.append(n.value)
        elif isinstance(n, ast.Call) and n.args:
            f = n.func
            if isinstance(f, ast.Name | ast.Attribute) and last_name(f) == "cast":
                roots.append(n.args[0])
            elif (
                isinstance(f, ast.Attribute)
                and f.attr in ("append", "extend")
                and isinstance(f.value, ast.Name)
                and f.value.id == "__all__"
            ):
                roots.extend(n.args)
    out: set[int] = set()
    for root in roots:
        if isinstance(root, ast.Constant | ast.List | ast.Tuple | ast.Subscript | ast.BinOp
                      | ast.Attribute | ast.Name):  # fmt: skip
            out.update(id(c) for c in walk_all(root) if isinstance(c, ast.Constant))
    return out
