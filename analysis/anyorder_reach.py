"""Which reflective uses of the tree may reach an instance of a given class (the any-order pass).

`getattr(r, name)`, `setattr`/`delattr`, `vars(r)`, `r.__dict__`, `copy.copy(r)` and their kin
read or bind attributes of `r` by a name computed at run time, or all of them. Such a use can
touch the attribute `X` of an instance of class C only if `r` may hold a C instance (or one of a
subclass). Each use is read from the syntax tree of its file and its receiver classified by what
the code shows, no more:

- a module: a name bound only by `import m` (never by `from ... import`: that may be any
  object), `sys.modules[...]`, `importlib.import_module(...)`, `__import__(...)`. A module's
  attribute handed on as a value is read next by a use of its own, but one that may be a
  reflective function (`getattr(builtins, n)`) reaches anything; a module may be any object
  once some file of the tree stores into `sys.modules` (these uses then count as anything);
- a class object: a class statement's name at module level of the file (never rebound),
  `cls` of a classmethod, `type(x)`, `x.__class__`. A class's namespace holds descriptors of
  instance state (`C.__dict__['__dict__']`, a slot's member), so reading or binding by a
  computed name on C or a class related to it counts; on an unrelated class it does not;
- `self` of a plain method of a class D (never rebound, no decorator but properties and
  abstractmethod): an instance of D or of a class deriving from D. It may be a C only if D and
  C are related: a class of the tree derives, by name, from both (D is C, a base of C, a
  subclass of C, or a class names both among its bases). Also only if D's methods run with
  a `self` of D: nothing names the method through a class (methods.py `through_class`:
  `D.m(obj)`, `getattr(D, ...)`, `vars(D)`), calls it on `type(x)`/`x.__class__`/`cls`, and
  no reflective use reads a class object the tree does not name, and no file takes a method's
  function (`__func__`), stores an object's `__class__` or may add D to a class's bases;
- a local bound only by `K(...)` where K is a class statement of the file with no base but
  `object`, no `__new__` and no decorator, or a builtin type (dict, list, ...): a K instance,
  while no file of the tree may rebind K (`globals()`, `m.K = ...`, a string "K", a module's
  names bound by a computed name, a class related to C added to bases); so for a class object K;
- a literal: never an instance of a class of the tree (a list or dict literal may hold one:
  only the shallow uses pass them);
- anything else (a parameter, an element of a container, a call's result): may be a C.

Deep uses (`copy.deepcopy`, pickling, `torch.save`, `dataclasses.asdict`/`astuple`) follow
every object the receiver reaches: any receiver but a constant may reach a C. `exec`, `eval`,
frames (`f_locals`), `attrgetter`/`methodcaller`, the builtins taken as values
(`g = getattr`) count as anything; `type(name, bases, ns)`, `types.new_class`, a metaclass
called like `type` (`...Meta`, `M.__new__`, a class of the tree that may derive from `type`
given a bases display) count when a base (any, if not names) may be related. `hasattr` and
`dir` read no value (a property getter it runs is a method of the program): never count.

A use is recorded with its file and line, so a blocked buffer still names the use that blocks.
Files are found by the text scan of lifecycle_anyorder.py (plus aliasing forms) and parsed only
when reached, in file order, once per worker; the search for a class stops at its first
blocking use.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from zeroopt.analysis.anyorder_classes import (
    COMPLETE,
    LIBRARY_BASES,
    _grounded,
    made_by_metaclass,
    may_be_metaclass,
    may_derive_from,
    parsed,
)
from zeroopt.analysis.anyorder_forms import (
    ALIASES,
    _class_call,
    _literal_name,
    _name_rebound,
    _plain_literal,
    _self_replaced,
    _unbound_call,
)
from zeroopt.analysis.anyorder_stores import bases_added
from zeroopt.analysis.dynamic_attributes import last_name
from zeroopt.analysis.lookup_names import LookupNames, Names, may_name, shown
from zeroopt.analysis.methods import ClassWorld, _short
from zeroopt.analysis.resolve import child_nodes, walk_all

# Receiver kinds.
NOTHING = "nothing"  # a constant or a literal: no instance of a class of the tree
MODULE = "module"
CLASS = "class"  # a class object; `name` the class ("" unknown)
SELF = "self"  # `self` of method `method` of class `name`
NEW = "new"  # a local made by `name(...)`
LITERAL = "literal"  # a list, tuple, dict or set display: may hold anything (deep uses)
ANY = "any"

# Use kinds.
GET = "get"  # reads attributes by a computed name, or all of them, one level deep
SET = "set"  # binds or deletes attributes by a computed name
DEEP = "deep"  # follows every object the receiver reaches
OPAQUE = "opaque"  # anything (exec, eval, frames, a builtin taken as a value)
MAKE = "make"  # `type(name, bases, ns)`: a class made from bases (recv.name: "a,b", "" unknown)

_BY_NAME = {"getattr": GET, "setattr": SET, "delattr": SET}
_DEEP = frozenset({"deepcopy", "asdict", "astuple", "dump", "dumps", "save"})
_DEEP_MODULES = frozenset({"pickle", "cloudpickle", "dill", "torch", "copy", "dataclasses"})
_SHALLOW = {"copy": "copy", "replace": "dataclasses", "getmembers": "inspect"}
_OPAQUE_CALLS = frozenset({"attrgetter", "methodcaller"})
# Calls that hand out objects the program never passed them (`gc.get_objects()`: every one).
_GC = frozenset({"get_objects", "get_referents", "get_referrers"})
_PLAIN_MODULES = frozenset({"math", "cmath", "os", "re", "string", "time", "itertools", "random"})
_EVERY_OBJECT = frozenset(f"gc.{f}" for f in _GC)
_OPAQUE_BUILTINS = frozenset({"exec", "eval", "compile"})  # as names or `builtins.x` only
_OPAQUE_ATTRS = frozenset({"f_locals", "f_globals", "f_back", "gi_frame", "cr_frame"})
_GET_DUNDERS = frozenset({"__getstate__", "__reduce__", "__reduce_ex__", "__getattribute__"})
_SET_DUNDERS = frozenset({"__setstate__", "__setattr__", "__delattr__"})
_BUILTIN_TYPES = frozenset(
    {"dict", "list", "set", "tuple", "frozenset", "str", "bytes", "int", "float", "bool",
     "object", "bytearray", "SimpleNamespace", "OrderedDict", "defaultdict", "deque"}
)  # fmt: skip
_PLAIN_METHOD_DECORATORS = frozenset(
    {"property", "setter", "getter", "deleter", "abstractmethod", "cached_property", "override"}
)
# A store into `sys.modules`: a module name may then hold any object.
_MODULES_STORE = re.compile(
    rb"\bmodules[ \t]*\[[^\]\n]*\][ \t]*=(?!=)|\bmodules[ \t]*\.[ \t]*(?:update|setdefault)\b"
)


@dataclass(frozen=True)
class Receiver:
    kind: str
    name: str = ""  # the class (CLASS, SELF, NEW)
    method: str = ""  # SELF: the method whose `self` it is


@dataclass(frozen=True)
class Use:
    line: int
    kind: str  # GET, SET, DEEP, OPAQUE
    recv: Receiver
    text: str
    names: Names | None = None  # GET, SET: the names it may look up (lookup_names.py); None: any


@dataclass
class _Tree:
    """The uses found so far over the files of one tree, in file order."""

    uses: list[tuple[str, Use]] = field(default_factory=list)
    read: int = 0
    modules_replaced: str = ""  # file:line of a store into sys.modules, once seen
    world: ClassWorld | None = None


_TREES: dict[str, _Tree] = {}


def receivers(tree: ast.Module, names: frozenset[str]) -> dict[int, Receiver]:
    """The receiver of every access `x.<name>` in a module, for `names`, by node id (for the
    module whose classes are judged: every access, read once with its uses)."""
    if _OWN and _OWN[0][0] is tree:
        return _OWN[0][2]
    c = _Collector(tree, names)
    c.run()
    return c.accesses


def uses_of(tree: ast.Module) -> list[Use]:
    """Every reflective use in a module, with its receiver classified."""
    return _Collector(tree).run()


def first_reach(
    cls_name: str,
    bases: set[str],
    own: list[Use],
    world: ClassWorld,
    own_paths: set[str],
    flagged: Callable[[bytes], bool],
    only: Callable[[Use], bool] | None = None,
    attrs: frozenset[str] | None = None,
    bound: frozenset[str] = frozenset(),
) -> str:
    """Why some reflective use, in the class's own module (`own`) or any other file of the tree,
    may reach an instance of `cls_name`, naming the first such use; "" if none may. `only`:
    the uses that count (all when None); `attrs`: the attributes that matter (None: all), a
    lookup of other names (lookup_names.py) passes, and is noted in `NOTES`; `bound`: names
    that matter to a use that binds (`setattr`), besides `attrs` (a method's name: a function
    stored under it runs instead of the def)."""
    rel = _Relations(cls_name, bases, world)
    if only is not None:
        own = [u for u in own if only(u)]
    passed: list[tuple[str, Use]] = []  # uses that look up none of `attrs`
    kept: list[Use] = []
    for use in own:
        if _other_names(use, attrs, bound):
            passed.append(("", use))
            continue
        kept.append(use)
        if rel.reaches(use, ""):
            return f"`{use.text}` (line {use.line}) {_why(use)}"
    state = _state(world)
    pending: list[tuple[str, Use]] = []
    for path, use in _tree_uses(world, state, flagged):
        if path in own_paths or os.path.realpath(path) in own_paths:
            continue
        if only is not None and not only(use):
            continue
        if _other_names(use, attrs, bound):
            passed.append((path, use))
            continue
        if rel.reaches(use, path):
            return f"{_short(path)}:{use.line} `{use.text}` {_why(use)} (closed world)"
        if use.recv.kind in (SELF, MODULE, NEW, CLASS) and use.kind in (GET, SET):
            pending.append((path, use))
    # Every file read: what voids a `self` or module exoneration is known now.
    for path, use in [*(("", u) for u in kept), *pending]:
        why = rel.voided(use, state)
        if why:
            where = f"{_short(path)}:{use.line}" if path else f"line {use.line}"
            return f"`{use.text}` ({where}) may reach an instance of {cls_name}: {why}"
    for path, use in passed:
        # Noted where the verdict depends on its names: it would block otherwise.
        if rel.reaches(use, path) or rel.voided(use, state):
            where = f"{_short(path)}:{use.line}" if path else f"line {use.line}"
            note = f"`{use.text}` ({where}) looks up only {shown(use.names or frozenset())}"
            if note not in NOTES and len(NOTES) < 64:
                NOTES.append(note)
    return ""


# Lookups passed because none of their names matters, as the evidence names them (the caller
# clears it before a search and reads it after).
NOTES: list[str] = []


def _other_names(use: Use, attrs: frozenset[str] | None, bound: frozenset[str]) -> bool:
    """`use` looks up only names that are none of `attrs` (and, when it binds, none of
    `bound`), no dunder and no reflective function's: it touches nothing that matters."""
    if attrs is None or use.kind not in (GET, SET) or use.names is None:
        return False
    return not may_name(use.names, attrs | bound if use.kind == SET else attrs)


def _why(use: Use) -> str:
    if use.kind == OPAQUE:
        return "may reach any object's attributes"
    if use.kind == DEEP:
        return "may follow every object its argument reaches"
    if use.kind == MAKE:
        return "makes a class whose bases may derive from the class"
    what = {ANY: "a value of unknown type", LITERAL: "a literal", MODULE: "a module",
            CLASS: "a class object", SELF: f"`self` of {use.recv.name}",
            NEW: f"a {use.recv.name} object"}[use.recv.kind]  # fmt: skip
    return f"reaches attributes by a computed name on {what}"


def _state(world: ClassWorld) -> _Tree:
    """The uses read so far: per tree digest (one per worker), or per world object for a
    file analysed alone."""
    key = world.digest or f"id:{id(world)}"
    state = _TREES.get(key)
    if state is None or (not world.digest and state.world is not world):
        state = _Tree(world=world)
        _TREES.clear()
        _TREES[key] = state
    return state


def _tree_uses(
    world: ClassWorld, state: _Tree, flagged: Callable[[bytes], bool]
) -> Iterator[tuple[str, Use]]:
    """The uses of the tree in file order, parsing a flagged file only when the search gets
    there (the search stops at a class's first blocking use)."""
    i = 0
    made = made_by_metaclass(world)
    while True:
        while i < len(state.uses):
            yield state.uses[i]
            i += 1
        if state.read >= len(world.files):
            return
        path, data = world.files[state.read]
        state.read += 1
        m = None if state.modules_replaced else _MODULES_STORE.search(data)
        if m:
            line = data.count(b"\n", 0, m.start()) + 1
            state.modules_replaced = f"{_short(path)}:{line}"
        if not (flagged(data) or ALIASES.search(data) or made.search(data)):
            continue
        try:
            found = uses_of(ast.parse(data))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            found = [Use(1, OPAQUE, Receiver(ANY), "(cannot be parsed)")]
        state.uses.extend((path, u) for u in found)


class _Relations:
    """How classes of the tree relate to the class judged, by name (methods.py's lineage:
    a class elsewhere with the same name counts as the same one)."""

    def __init__(self, cls_name: str, bases: set[str], world: ClassWorld) -> None:
        self.name = cls_name
        self.world = world
        found, _ = world.lineage(cls_name)
        self.family = {cls_name} | {info.name for _, info in found}
        # Its bases and theirs, by name (a class of the tree may take their names too).
        self.family |= bases
        self._related: dict[str, bool] = {}

    def related(self, other: str) -> bool:
        """A class called `other` and the class judged may share an instance."""
        if not other:
            return True
        hit = self._related.get(other)
        if hit is None:
            found, why = self.world.lineage(other)
            names = {other} | {info.name for _, info in found}
            # A note on how a class derives is no doubt about which classes do.
            complete = not why or why.endswith(COMPLETE)
            hit = (
                not complete
                or "*" in names
                or bool(names & self.family)
                or not _grounded(self.world, other)
            )
            self._related[other] = hit
        return hit

    def reaches(self, use: Use, path: str) -> bool:
        """The use may reach an instance of the class, whatever the rest of the tree holds."""
        r = use.recv
        if use.kind == OPAQUE:
            return True
        if use.kind == MAKE:
            # A class made with bases (B, ...) has the MRO of itself and its bases': its
            # instances are instances of the class only if a base is the class or derives from
            # it (a subclass of a base, or a base of the class, is no ancestor of it).
            if r.method and not may_be_metaclass(self.world, r.method):
                return False  # `f(x, (a, b), y)` of no metaclass: no class made
            bases = r.name.split(",") if r.name else ["*"]
            return any(
                b not in LIBRARY_BASES and may_derive_from(self.world, b, self.name) for b in bases
            )
        if use.kind == DEEP:
            return r.kind != NOTHING
        if r.kind == MODULE:  # an attribute may be a reflective function (but in plain ones)
            return use.kind == GET and r.name not in _PLAIN_MODULES and may_name(use.names)
        if r.kind in (NOTHING, LITERAL):
            return False
        if r.kind == CLASS:
            # A class's namespace holds descriptors of instance state (`C.__dict__['__dict__']`,
            # a slot's member): reading it by a computed name may hand out an instance's.
            return self.related(r.name)
        if r.kind in (SELF, NEW):
            return self.related(r.name)
        return True

    def voided(self, use: Use, state: _Tree) -> str:
        """Why a use passed by `reaches` may reach the instance after all, now that every file
        has been read: a module may be an instance, or a method may run with another `self`."""
        r = use.recv
        if use.kind not in (GET, SET):
            return ""
        if r.kind == MODULE and state.modules_replaced:
            return (
                f"{state.modules_replaced} stores into `sys.modules` (a module may be any object)"
            )
        if r.kind in (NEW, CLASS) and r.name:
            # `K` names the class while no file rebinds it or adds a related base to a class.
            why = _name_rebound(self.world, r.name) or bases_added(self.world, self.related)
            return why or _modules_bound(state)
        if r.kind != SELF:
            return ""
        for path, other in state.uses:
            o = other.recv
            if (
                o.kind == CLASS
                and other.kind == GET
                and (not o.name or o.name in self._lineage(r.name))
            ):
                where = f"{_short(path)}:{other.line}"
                return f"{where} reads a class object's attributes by a computed name: a method of {r.name} may run with another `self`"
        why = self.world.through_class(r.name, r.method) or _unbound_call(self.world, r.method)
        return why or _self_replaced(self.world, r.name, self.name)

    def _lineage(self, name: str) -> set[str]:
        found, _ = self.world.lineage(name)
        return {name} | {info.name for _, info in found}


def _modules_bound(state: _Tree) -> str:
    """A use of the tree that binds a module's attributes by a computed name (`setattr(m, k,
    v)`, `vars(m)[k] = v`, `m.__dict__`): a class name of that module may be any class."""
    for path, use in state.uses:
        if use.recv.kind == MODULE and (
            use.kind == SET or use.text.startswith("vars(") or "__dict__" in use.text
        ):
            return f"{_short(path)}:{use.line} `{use.text}` may bind a module's names"
    return ""


class _Collector:
    """One walk of a module: its import map, its classes, and every reflective use."""

    def __init__(self, tree: ast.Module, watch: frozenset[str] | None = frozenset()) -> None:
        self.tree = tree
        self.watch = watch  # attribute names whose receivers `accesses` records (None: all)
        self.accesses: dict[int, Receiver] = {}  # id of an `x.<watched>` node -> x
        self.bound: dict[str, int] = {}  # name -> how many bindings the file has of it
        self.calls: dict[int, ast.Call] = {}  # id of a callee -> its call
        self.imported: dict[str, str] = {}  # local name -> what `from m import f` binds
        self.module_alias: dict[str, str] = {}  # local name -> module (`import copy as c`)
        bound = self.bound
        # Names bound some way other than a class statement or an import: as a made class's
        # base, such a name may be any class (`B = C; type(n, (B,), ns)`).
        self.valued: set[str] = set()
        for n in walk_all(tree):
            if isinstance(n, ast.Name):
                if not isinstance(n.ctx, ast.Load):
                    bound[n.id] = bound.get(n.id, 0) + 1
                    self.valued.add(n.id)
            elif isinstance(n, ast.Call):
                self.calls[id(n.func)] = n
            elif isinstance(n, ast.arg):
                bound[n.arg] = bound.get(n.arg, 0) + 1
                self.valued.add(n.arg)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound[n.name] = bound.get(n.name, 0) + 1
                if not isinstance(n, ast.ClassDef):
                    self.valued.add(n.name)
            elif isinstance(n, ast.Import | ast.ImportFrom):
                for a in n.names:
                    local = a.asname or a.name.split(".")[0]
                    bound[local] = bound.get(local, 0) + 1
                    if isinstance(n, ast.ImportFrom):
                        self.imported[a.asname or a.name] = f"{n.module or ''}.{a.name}"
                    else:
                        self.module_alias.setdefault(local, a.name if a.asname else local)
            elif isinstance(n, ast.Global | ast.Nonlocal):
                for name in n.names:
                    bound[name] = bound.get(name, 0) + 1
                    self.valued.add(name)
            elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
                bound[n.name] = bound.get(n.name, 0) + 1
                self.valued.add(n.name)
        self.modules: set[str] = set()  # names bound only by `import m`
        self.classes: dict[str, ast.ClassDef] = {}  # module-level classes never rebound
        self.uses: list[Use] = []
        self.lookup = LookupNames()
        self.scope: ast.AST | None = None  # the function whose body is visited (None: none)
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    local = a.asname or a.name.split(".")[0]
                    if bound.get(local, 0) == 1:
                        self.modules.add(local)
            elif isinstance(stmt, ast.ClassDef) and bound.get(stmt.name, 0) == 1:
                self.classes[stmt.name] = stmt

    def run(self) -> list[Use]:
        for stmt in self.tree.body:
            self._node(stmt, None, {})
        return self.uses

    def _node(self, node: ast.AST, method: _Method | None, locals_: dict[str, str]) -> None:
        """Visit `node` and everything under it. `method`: (class, method, self name, cls
        name) of the plain method enclosing it, names never rebound there; `locals_`: the
        locals of the enclosing function bound only by `K(...)`."""
        stack: list[ast.AST] = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.ClassDef):
                for d in [*n.decorator_list, *n.bases, *(k.value for k in n.keywords)]:
                    self._node(d, method, locals_)
                outer, self.scope = self.scope, None  # a class body's names are its own
                for stmt in n.body:
                    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                        self._function(stmt, n.name, None)
                    else:
                        self._node(stmt, None, {})
                self.scope = outer
                continue
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                self._function(n, "", method)
                continue
            self._visit(n, method, locals_)
            stack.extend(child_nodes(n))

    def _function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, owner: str,
                  outer: _Method | None) -> None:  # fmt: skip
        a = fn.args
        params = [*a.posonlyargs, *a.args]
        names = {x.arg for x in [*params, *a.kwonlyargs, *(v for v in (a.vararg, a.kwarg) if v)]}
        decorators = [] if isinstance(fn, ast.Lambda) else list(fn.decorator_list)
        for d in [*decorators, *a.defaults, *(x for x in a.kw_defaults if x)]:
            self._node(d, outer, {})
        stores: dict[str, list[ast.Name]] = {}
        declared: set[str] = set()
        made: dict[int, str] = {}  # id of an assignment's only target -> the class it makes
        for n in walk_all(fn):
            if isinstance(n, ast.Name):
                if not isinstance(n.ctx, ast.Load):
                    stores.setdefault(n.id, []).append(n)
            elif isinstance(n, ast.Assign):
                if len(n.targets) == 1:
                    made[id(n.targets[0])] = self._maker(n.value)
            elif isinstance(n, ast.Global | ast.Nonlocal):
                declared.update(n.names)
        method = outer
        if outer is not None and ({outer[2], outer[3]} & (names | set(stores) | declared)):
            method = None  # the enclosing method's `self` is shadowed or rebound here
        if owner:
            method = None
            kinds = {last_name(d.func if isinstance(d, ast.Call) else d) for d in decorators}
            first = params[0].arg if params else ""
            if first and first not in stores and first not in declared:
                if kinds <= _PLAIN_METHOD_DECORATORS:
                    method = (owner, fn.name if not isinstance(fn, ast.Lambda) else "", first, "")
                elif kinds == {"classmethod"}:
                    method = (owner, "", "", first)
        locals_: dict[str, str] = {}
        for name, nodes in stores.items():
            makers = {made.get(id(x), "") for x in nodes}
            if name not in names and name not in declared and len(makers) == 1 and "" not in makers:
                locals_[name] = makers.pop()
        body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body
        outer_scope, self.scope = self.scope, fn
        for stmt in body:
            self._node(stmt, method, locals_)
        self.scope = outer_scope

    def _maker(self, value: ast.expr) -> str:
        """The class `value` constructs, if it is `K(...)` of a plain class of the file (no base
        but object, no `__new__`, no decorator) or a builtin type; "" otherwise."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return ""
        k = value.func.id
        cls = self.classes.get(k)
        if cls is not None:
            plain = (
                not cls.decorator_list
                and not cls.keywords
                and all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases)
                and not any(
                    isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__new__"
                    for s in cls.body
                )
            )
            return k if plain else ""
        return k if k in _BUILTIN_TYPES and k not in self.bound else ""

    def _add(self, n: ast.expr, kind: str, recv: Receiver, name: ast.expr | None = None) -> None:
        """Record a use; `name`: the expression of the name it looks up (None: every name)."""
        names = None if name is None else self.lookup.names(name, self.scope)
        self.uses.append(Use(n.lineno, kind, recv, ast.unparse(n)[:60], names))

    def _visit(self, n: ast.AST, method: _Method | None, locals_: dict[str, str]) -> None:
        def recv(e: ast.expr | None) -> Receiver:
            return Receiver(ANY) if e is None else self._receiver(e, method, locals_)

        if isinstance(n, ast.Call):
            func = n.func
            last = last_name(func)
            qual = self._qual(func)
            first = n.args[0] if n.args else None
            builtin = isinstance(func, ast.Name) or qual == f"builtins.{last}"
            if last in _BY_NAME and builtin:
                starred = any(isinstance(a, ast.Starred) for a in n.args[:2])
                if len(n.args) < 2 or starred or not _plain_literal(n.args[1]):
                    name = n.args[1] if len(n.args) >= 2 and not starred else None
                    self._add(n, _BY_NAME[last], recv(first), name)
            elif last == "vars" and builtin:
                if n.args:
                    self._add(n, GET, recv(first))
            elif last in _OPAQUE_CALLS or (
                last in _OPAQUE_BUILTINS and qual in (last, f"builtins.{last}")
            ):
                self._add(n, OPAQUE, Receiver(ANY))
            elif (made := _class_call(n, last)) is not None:
                bases, maker = made
                if any(b in self.valued for b in bases.split(",")):
                    bases = ""  # a base held in a variable: any class
                self._add(n, MAKE, Receiver(CLASS, bases, maker))
            elif last in ("__setattr__", "__delattr__", "__getattribute__") and isinstance(
                func, ast.Attribute
            ):
                explicit = isinstance(func.value, ast.Name) and func.value.id in ("object", "type")
                args = n.args[1:] if explicit else n.args
                target: ast.expr | None = first if explicit else func.value
                if isinstance(func.value, ast.Call) and last_name(func.value.func) == "super":
                    target = ast.Name(id=method[2], ctx=ast.Load()) if method else None
                if not (args and _plain_literal(args[0])):
                    name = args[0] if args and not isinstance(args[0], ast.Starred) else None
                    self._add(n, GET if last == "__getattribute__" else SET, recv(target), name)
            elif (
                last in ("deepcopy", "asdict", "astuple")
                or qual == "torch.save"
                or (qual.split(".")[0] in ("pickle", "cloudpickle", "dill") and last in _DEEP)
            ):
                self._add(n, DEEP, recv(first))
            elif last in ("register_buffer", "register_parameter") and isinstance(
                func, ast.Attribute
            ):
                if not (first is not None and _literal_name(first)):
                    plain = first is not None and not isinstance(first, ast.Starred)
                    name = first if plain else None
                    self._add(n, SET, recv(func.value), name)
            elif qual in _EVERY_OBJECT:
                self._add(n, OPAQUE, Receiver(ANY))  # any object of the process
            elif qual in (
                "copy.copy",
                "copy.replace",
                "dataclasses.replace",
                "inspect.getmembers",
                "inspect.getmembers_static",
            ):
                self._add(n, GET, recv(first))
            elif last in ("copy", "replace", "getmembers", "getmembers_static") and isinstance(
                func, ast.Name
            ):
                self._add(n, GET, recv(first))  # imported under its own name from elsewhere
        elif isinstance(n, ast.Attribute):
            called = id(n) in self.calls
            if self.watch is None or n.attr in self.watch:
                self.accesses[id(n)] = recv(n.value)
            if n.attr == "__dict__":
                kind = SET if isinstance(n.ctx, ast.Store | ast.Del) else GET
                self._add(n, kind, recv(n.value))
            elif n.attr in _OPAQUE_ATTRS:
                self._add(n, OPAQUE, Receiver(ANY))
            elif n.attr in _GET_DUNDERS | _SET_DUNDERS:
                if n.attr in ("__setattr__", "__delattr__", "__getattribute__") and called:
                    pass  # the call is read above
                else:
                    self._add(n, SET if n.attr in _SET_DUNDERS else GET, recv(n.value))
            elif n.attr in _VALUE_ONLY and not called:
                self._add(n, OPAQUE, Receiver(ANY))
        elif isinstance(n, ast.ImportFrom):  # a reflective function under another name
            deep = _DEEP if (n.module or "").split(".")[0] in _DEEP_MODULES else frozenset()
            for a in n.names:
                if a.asname not in (None, a.name) and a.name in _RENAMED | deep:
                    self.uses.append(Use(n.lineno, OPAQUE, Receiver(ANY), ast.unparse(n)[:60]))
        elif (
            isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and n.id in _VALUE_ONLY
            and id(n) not in self.calls
        ):
            self._add(n, OPAQUE, Receiver(ANY))

    def _qual(self, func: ast.expr) -> str:
        if isinstance(func, ast.Name):
            return self.imported.get(func.id, func.id).lstrip(".")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = self.module_alias.get(func.value.id, func.value.id)
            return f"{base}.{func.attr}"
        return ""

    def _receiver(self, e: ast.expr, method: _Method | None, locals_: dict[str, str]) -> Receiver:
        if isinstance(e, ast.Constant | ast.JoinedStr):
            return Receiver(NOTHING)
        if isinstance(e, ast.List | ast.Tuple | ast.Set | ast.Dict | ast.ListComp | ast.SetComp
                      | ast.DictComp | ast.GeneratorExp):  # fmt: skip
            return Receiver(LITERAL)
        if isinstance(e, ast.Name):
            if method is not None and e.id == method[2]:
                return Receiver(SELF, method[0], method[1])
            if method is not None and e.id == method[3]:
                return Receiver(CLASS, method[0])
            if e.id in locals_:
                return Receiver(NEW, locals_[e.id])
            if e.id in self.modules:
                return Receiver(MODULE, self.module_alias.get(e.id, ""))
            if e.id in self.classes:
                return Receiver(CLASS, e.id)
            return Receiver(ANY)
        if isinstance(e, ast.Attribute) and e.attr == "__class__":
            inner = self._receiver(e.value, method, locals_)
            return Receiver(CLASS, inner.name if inner.kind in (SELF, NEW) else "")
        if isinstance(e, ast.Subscript) and last_name(e.value) == "modules":
            return Receiver(MODULE)
        if isinstance(e, ast.Call):
            last = last_name(e.func)
            if last == "type" and len(e.args) == 1:
                inner = self._receiver(e.args[0], method, locals_)
                return Receiver(CLASS, inner.name if inner.kind in (SELF, NEW) else "")
            if last in ("import_module", "__import__"):
                return Receiver(MODULE)
            maker = self._maker(e)
            if maker:
                return Receiver(NEW, maker)
        return Receiver(ANY)


_Method = tuple[str, str, str, str]
# Functions that reach attributes by name or follow objects, taken as values (`g = getattr`).
_VALUE_ONLY = frozenset({"getattr", "setattr", "delattr", "vars", "deepcopy", "asdict", "astuple",
                         *_OPAQUE_CALLS, *_GC, "getmembers", "getmembers_static"})  # fmt: skip
_RENAMED = _VALUE_ONLY | _OPAQUE_BUILTINS | set(_SHALLOW)


# The last module whose classes were judged: its uses and the receiver of every access.
_OWN: list[tuple[ast.Module, list[Use], dict[int, Receiver]]] = []


def _read_own(tree: ast.Module) -> None:
    if not _OWN or _OWN[0][0] is not tree:
        c = _Collector(tree, None)
        _OWN[:] = [(tree, c.run(), c.accesses)]


def reach_reason(
    cls: ast.ClassDef,
    tree: ast.Module,
    world: ClassWorld,
    own_paths: set[str],
    flagged: Callable[[bytes], bool],
    only: Callable[[Use], bool] | None = None,
    attrs: frozenset[str] | None = None,
    bound: frozenset[str] = frozenset(),
) -> str:
    """Why a reflective use of the class's module or of the tree may reach an instance of
    `cls` (file:line of the first), or "". `only`: the uses that count (all when None);
    `attrs`: the attributes that matter (None: all); `bound`: those that matter to a use that
    binds besides (`first_reach`)."""
    _read_own(tree)
    bases: set[str] = set()
    for b in cls.bases:
        while isinstance(b, ast.Subscript):
            b = b.value
        bases.add(last_name(b) or "*")
    return first_reach(cls.name, bases, _OWN[0][1], world, own_paths, flagged, only, attrs, bound)


def others_only(
    cls: ast.ClassDef,
    home: ast.Module,
    tree: ast.Module,
    nodes: list[ast.Attribute],
    world: ClassWorld,
    own_paths: set[str],
    flagged: Callable[[bytes], bool],
    attrs: frozenset[str] | None = None,
) -> str:
    """Why one of `nodes` (accesses `x.X` of a module, for attributes X that may hold the
    buffer) may run on an instance of `cls`; "" when each provably runs on an object of an
    unrelated class: `self` of a plain method of a class no class of the tree relates to
    `cls`, or a local made by `K()` of such a class (and no method of those classes may run
    with another `self`: every file of the tree is read for that, after the reflection check)."""
    if tree is home:
        _read_own(home)
    found = receivers(tree, frozenset(n.attr for n in nodes))
    bases = {last_name(b.value if isinstance(b, ast.Subscript) else b) or "*" for b in cls.bases}
    rel = _Relations(cls.name, bases, world)
    pending: list[tuple[ast.Attribute, Receiver]] = []
    for n in nodes:
        r = found.get(id(n), Receiver(ANY))
        if r.kind not in (SELF, NEW) or rel.related(r.name):
            return (
                f"`{ast.unparse(n)[:50]}` (line {n.lineno}) is not `self.{n.attr}` in a method of "
                f"{cls.name}"
            )
        pending.append((n, r))
    why = reach_reason(cls, home, world, own_paths, flagged, attrs=attrs)
    if why:
        return why
    state = _state(world)
    for n, r in pending:
        if r.kind == SELF:
            why = rel.voided(Use(n.lineno, GET, r, ""), state)
            if why:
                return f"`{ast.unparse(n)[:50]}` (line {n.lineno}) may be on an instance of {cls.name}: {why}"
    return ""


def elsewhere_others_only(
    cls: ast.ClassDef,
    home: ast.Module,
    path: str,
    data: bytes,
    names: set[str],
    world: ClassWorld,
    own_paths: set[str],
    flagged: Callable[[bytes], bool],
) -> bool:
    """Another file of the tree names an attribute that may hold the buffer: true when it does
    so only as `x.<name>` on objects of unrelated classes (`others_only`) and in no string."""
    tree = parsed(path, data)
    if tree is None:
        return False
    docstrings: set[int] = set()  # one walk: breadth-first, an `Expr` comes before its value
    nodes: list[ast.Attribute] = []
    for n in walk_all(tree):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant):
            docstrings.add(id(n.value))
        elif isinstance(n, ast.Attribute) and n.attr in names:
            nodes.append(n)
        elif (
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and id(n) not in docstrings
            and any(w in names for w in re.findall(r"\w+", n.value))
        ):
            return False
    return not others_only(cls, home, tree, nodes, world, own_paths, flagged, frozenset(names))
