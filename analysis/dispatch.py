"""`<receiver>.f(buf)` on a receiver of unknown type, resolved by the method's name over the tree.

Closed world: every method that can run is defined in the scanned tree or is a method of a
library type or module listed in semantics/library_attributes.json. Under it, an attribute `f` of
an object the tree made is a `def f` in some class body of the tree, or a module-level
`def f` (a module object may be the receiver), unless something else binds that name: a class
body binding `f` other than by one def, a module binding `f` otherwise, a store of the
attribute (`obj.f = ...`, the spellings methods.py checks), a keyword `f=` (an object built
with an attribute `f`: `SimpleNamespace(f=...)`), `"f"` as a literal string (`namedtuple`,
`Enum`, `make_dataclass` fields), a class made by `type(...)` whose namespace may bind `f`,
or an object that answers any name: a class of the tree with `__getattribute__`, or with
`__getattr__` and no `f` of its own, a mock, a `torch.ops` namespace held as a value. Each
of those makes the call unknown, as does a name of the library list, a dunder, a receiver
that may be a class (`cls`, `type(x)`, `x.__class__`, a module-level name), and more than
`MAX_CANDIDATES` candidates. The receiver is assumed to be an instance: a method reached
through a class object held in a variable or an attribute binds its arguments one place
earlier, and the tree's text does not show it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zeroopt.analysis.methods import ANY, _class_binds, _made_class, _short
from zeroopt.analysis.resolve import walk_all, walk_bfs
from zeroopt.analysis.semantics.library_methods import LIBRARY_ATTRIBUTES

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld
    from zeroopt.analysis.resolve import Scope
    from zeroopt.analysis.summaries import Callee, Summaries, Unit

MAX_CANDIDATES = 8
_MAX_FILES = 24  # files that bind the name, parsed for one name at most
_KEPT_TREES = 32
STATIC = "staticmethod"
CLASS = "classmethod"
METHOD = "method"
FUNCTION = "function"  # a module-level def: `module.f(...)` through a module object
_IMPLICIT_CLASSMETHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
# Objects that answer any attribute name: mocks, `torch.ops` namespaces held as values.
_OPEN_OBJECTS = re.compile(
    rb"\b(?:MagicMock|NonCallableMock|AsyncMock|Mock)\b"
    rb"|getattr\([ \t]*torch\.ops\b"
    rb"|=[ \t]*torch\.ops(?:\.\w+)?[ \t]*(?:#[^\n]*)?$"
    rb"|torch\.ops(?:\.\w+)?[ \t]*[,)\]]",
    re.M,
)
_GETATTRIBUTE = re.compile(rb"\b__getattribute__[ \t]*(?:=(?!=)|\()")
_GETATTR = re.compile(rb"\b__getattr__\b")


@dataclass(frozen=True)
class Candidate:
    path: str
    line: int  # of the def
    owner: str  # the class (or module) whose body binds it
    kind: str  # METHOD, STATIC, CLASS or FUNCTION

    @property
    def label(self) -> str:
        return f"{self.owner}.{{}} ({_short(self.path)}:{self.line})"


class NameDispatch:
    """Per worker: for each method name, the defs of the tree a call by that name may run."""

    def __init__(self, world: ClassWorld) -> None:
        self.world = world
        self._answers: dict[str, tuple[tuple[Candidate, ...], str]] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._open: str | None = None
        self._getattr: list[tuple[str, str, int, frozenset[str]]] | None = None
        self._made: list[tuple[str, int, frozenset[str]]] | None = None
        self._defs: dict[
            tuple[int, int], tuple[ast.Module, ast.FunctionDef | ast.AsyncFunctionDef | None]
        ] = {}

    def _tree(self, path: str, data: bytes) -> ast.Module | None:
        """Parsed, a few kept at a time (the answers per name are what is memoised)."""
        if path in self._trees:
            tree = self._trees.pop(path)
        else:
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
        self._trees[path] = tree  # most recently used last
        while len(self._trees) > _KEPT_TREES:
            self._trees.pop(next(iter(self._trees)))
        return tree

    def def_at(
        self, unit: Unit, line: int, name: str
    ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        key = (id(unit.tree), line)
        hit = self._defs.get(key)
        if hit is None or hit[0] is not unit.tree:
            fn = next(
                (
                    n
                    for n in walk_all(unit.tree)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                    and n.lineno == line
                    and n.name == name
                ),
                None,
            )
            hit = self._defs[key] = (unit.tree, fn)
        return hit[1]

    def candidates(self, name: str) -> tuple[tuple[Candidate, ...], str]:
        """The defs named `name` a call `<unknown>.name(...)` may run, or why it is not known."""
        hit = self._answers.get(name)
        if hit is None:
            why = self._obstacle(name)
            hit = ((), why) if why else self._find(name)
            self._answers[name] = hit
        return hit

    def _obstacle(self, name: str) -> str:
        if name.startswith("__") and name.endswith("__"):
            return f"`{name}` is a special method: the interpreter and libraries define it too"
        owner = LIBRARY_ATTRIBUTES.get(name)
        if owner is not None:
            return f"`{name}` is also an attribute of {owner}: the receiver may be one"
        why = self._open_objects()
        if why:
            return why
        stored = self.world.stored_in(name)
        if stored is not None:
            return f"{_short(stored)} assigns an attribute `{name}`"
        word = re.escape(name.encode())
        keyword = re.compile(rb"[(,][ \t]*" + word + rb"[ \t]*=(?!=)")
        literal = re.compile(rb"['\"]" + word + rb"['\"]")
        fields = re.compile(
            rb"\b(?:namedtuple|NamedTuple|make_dataclass|Enum|IntEnum|StrEnum|Flag)\([^\n]*\b"
            + word
            + rb"\b"
        )
        for path, data in self.world.files:
            if name.encode() not in data:
                continue
            if keyword.search(data):
                return (
                    f"{_short(path)} passes a keyword `{name}=`: an object may be built with "
                    f"an attribute `{name}`"
                )
            if re.search(rb"\b(?:exec|compile)[ \t]*\(", data):
                return (
                    f"{_short(path)} runs code from text (`exec`/`compile`) that mentions `{name}`"
                )
            if literal.search(data) or fields.search(data):
                return (
                    f"{_short(path)} spells `{name}` as a string: it may name a field or attribute"
                )
        return self._attribute_hooks(name) or self._made_classes(name) or self._computed(name)

    def _computed(self, name: str) -> str:
        """Attributes bound under names the text need not spell (analysis/dynamic_attributes.py):
        a computed `setattr`, `SimpleNamespace(**d)`, namedtuple fields in one string, ..."""
        return self.world.bound_dynamically(name)

    def _made_classes(self, name: str) -> str:
        """Classes made by `type(name, bases, namespace)` / `new_class` whose namespace may bind
        `name` (a namespace that is not a literal dict may bind any name)."""
        if self._made is None:
            self._made = []
            for i in sorted(self.world.index.dynamic):
                path, data = self.world.files[i]
                tree = self._tree(path, data)
                if tree is None:
                    self._made.append((path, 0, frozenset({ANY})))
                    continue
                for node in walk_all(tree):
                    made = _made_class(node)
                    if made is not None:
                        self._made.append((path, made.line, made.binds))
        for path, line, binds in self._made:
            if ANY in binds or name in binds:
                return f"{_short(path)}:{line} makes a class that may bind `{name}`"
        return ""

    def _open_objects(self) -> str:
        """Objects that answer any name (computed once): `__getattribute__` in a class of the
        tree, mocks, `torch.ops` namespaces held as values."""
        if self._open is None:
            self._open = ""
            for hook in ("__getattr__", "__getattribute__"):
                by = self.world.stored_in(hook)
                if by is not None:
                    self._open = f"{_short(by)} assigns `{hook}`"
                    return self._open
            for path, data in self.world.files:
                if b"__getattribute__" in data and _GETATTRIBUTE.search(data):
                    self._open = (
                        f"{_short(path)} defines `__getattribute__`: it may answer any name"
                    )
                    break
                if (b"Mock" in data or b"torch.ops" in data) and (m := _OPEN_OBJECTS.search(data)):
                    line = data.count(b"\n", 0, m.start()) + 1
                    self._open = (
                        f"{_short(path)}:{line} holds an object that answers any attribute name "
                        f"(`{m.group(0).decode(errors='replace').strip()[:40]}`)"
                    )
                    break
        return self._open

    def _attribute_hooks(self, name: str) -> str:
        """A class (or, PEP 562, a module) of the tree with `__getattr__` answers names its
        lookup does not find: it must bind `name` itself (then its instances and subclasses find
        a def first)."""
        if self._getattr is None:
            self._getattr = []
            for path, data in self.world.files:
                if b"__getattr__" not in data or not _GETATTR.search(data):
                    continue
                tree = self._tree(path, data)
                if tree is None:
                    return f"{_short(path)} mentions `__getattr__` and cannot be parsed"
                module = ast.ClassDef(
                    name="", bases=[], keywords=[], body=tree.body, decorator_list=[]
                )
                if "__getattr__" in _class_binds(module):  # PEP 562: a module answers names
                    self._getattr.append((path, "", 1, _class_binds(module)))
                for node in walk_all(tree):
                    if isinstance(node, ast.ClassDef) and "__getattr__" in _class_binds(node):
                        self._getattr.append((path, node.name, node.lineno, _class_binds(node)))
        for path, cls, line, binds in self._getattr:
            if name not in binds:
                owner = f"class {cls} ({_short(path)}:{line})" if cls else f"module {_short(path)}"
                return f"{owner} defines `__getattr__`: it may answer `{name}`"
        return ""

    def _find(self, name: str) -> tuple[tuple[Candidate, ...], str]:
        word = re.escape(name.encode())
        binds = re.compile(
            rb"\bdef[ \t]+" + word + rb"\b"
            rb"|^[ \t]*[\w, \t]*\b" + word + rb"\b[\w, \t]*(?:=(?!=)|:)"
            rb"|\b(?:as|import|for|class)[ \t]+[\w, \t]*\b" + word + rb"\b"
            rb"|^[ \t]*(?:[\w \t]*,)?[ \t]*" + word + rb"[ \t]*(?:,|\)|$)"
            rb"|\b" + word + rb"[ \t]*:=",
            re.M,
        )
        hits = [(p, d) for p, d in self.world.files if name.encode() in d and binds.search(d)]
        if len(hits) > _MAX_FILES:
            return (), f"more than {_MAX_FILES} files may bind `{name}`"
        found: list[Candidate] = []
        for path, data in hits:
            tree = self._tree(path, data)
            if tree is None:
                return (), f"{_short(path)} may bind `{name}` and cannot be parsed"
            why = _bindings(tree, path, name, found)
            if why:
                return (), why
            if len(found) > MAX_CANDIDATES:
                return (), f"more than {MAX_CANDIDATES} defs are named `{name}`"
        if not found:
            return (), f"no def of the scanned tree is named `{name}`"
        return tuple(found), ""


def _bindings(tree: ast.Module, path: str, name: str, found: list[Candidate]) -> str:
    """Add the defs of `name` in `tree`'s class bodies and module body to `found`; or why some
    binding of the name is not one plain def."""
    bodies: list[tuple[str, int, list[ast.stmt], bool]] = [("<module>", 1, tree.body, False)]
    for node in walk_all(tree):
        if isinstance(node, ast.ClassDef):
            bodies.append((node.name, node.lineno, node.body, True))
    module = _short(path).removesuffix(".py").replace("/", ".")
    for node in walk_all(tree):
        if isinstance(node, ast.Global) and name in node.names:
            # `global f` in a function: a call may rebind the module's `f` to anything.
            return f"{_short(path)}:{node.lineno} declares `{name}` global: it may be rebound"
    for owner, line, body, is_class in bodies:
        holder = ast.ClassDef(name="", bases=[], keywords=[], body=body, decorator_list=[])
        if name not in _class_binds(holder):
            continue
        where = f"class {owner} ({_short(path)}:{line})" if is_class else f"module {module}"
        defs = [
            s
            for s in body
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name
        ]
        rest = ast.ClassDef(
            name="",
            bases=[],
            keywords=[],
            body=[s for s in body if s not in defs],
            decorator_list=[],
        )
        if len(defs) != 1 or name in _class_binds(rest):
            return f"{where} binds `{name}` other than by one def"
        fn = defs[0]
        kind = FUNCTION if not is_class else METHOD
        for dec in fn.decorator_list:
            text = ast.unparse(dec)
            if text in (STATIC, CLASS) and is_class:
                kind = text
        if is_class and fn.name in _IMPLICIT_CLASSMETHODS:
            kind = CLASS
        found.append(Candidate(path, fn.lineno, owner if is_class else module, kind))
    return ""


def receiver_obstacle(recv: ast.expr, module_level: bool, classmethod_param: bool) -> str:
    """Why the receiver may be a class or a module rather than an instance ("" if not)."""
    if isinstance(recv, ast.Name):
        if module_level:
            return f"`{recv.id}` is a module-level name: a class or a module may be bound to it"
        if classmethod_param:
            return f"`{recv.id}` is the class a classmethod runs with"
    if isinstance(recv, ast.Attribute) and recv.attr == "__class__":
        return "the receiver is a class"
    if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "type":
        return "the receiver is a class (`type(...)`)"
    return ""


_CLASS_DECORATORS = frozenset(
    {
        "builtins.staticmethod",
        "builtins.classmethod",
        "abc.abstractmethod",
        "typing.override",
        "typing_extensions.override",
    }
)


def dispatch_callees(
    engine: Summaries, scope: Scope, func: ast.expr, qual: str | None
) -> tuple[list[Callee], str] | None:
    """The defs `func(...)` may run when `func` is `<receiver>.name` on a receiver of unknown
    type: (callees, "") when every one is certain, ([], why) when not, None when the call is no
    such method call (a module's function, a plain name) or the closed world is off."""
    from zeroopt.analysis.methods import TREE_DEP, ClassWorld
    from zeroopt.analysis.summaries import _module_level

    if not engine.closed_world or not isinstance(func, ast.Attribute) or qual is not None:
        return None
    recv = func.value
    module_level = isinstance(recv, ast.Name) and _module_level(scope, recv.id)
    why = receiver_obstacle(recv, module_level, _class_param(scope, recv)) or _class_local(
        scope, recv
    )
    if why:
        return [], why
    world = engine.world
    assert isinstance(world, ClassWorld)
    if world.dispatch is None:
        world.dispatch = NameDispatch(world)
    found, why = world.dispatch.candidates(func.attr)
    if engine.project is not None:
        engine.project.deps[TREE_DEP] = world.digest  # any file may add a def of the name
    if why:
        return [], why
    callees: list[Callee] = []
    for c in found:
        callee = _callee(engine, world.dispatch, c, func.attr)
        if isinstance(callee, str):
            return [], callee
        callees.append(callee)
    return callees, ""


def _class_local(scope: Scope, recv: ast.expr) -> str:
    """A local receiver bound from a name, attribute or subscript not rooted at a parameter
    (`k = A if flag else B`, `k = lib.A`, `k = REGISTRY[key]`), `type(x)`, `x.__class__`,
    unpacking, or a loop over anything but a parameter's attribute or a call may hold a class: its
    methods would bind the arguments one place earlier. A copy of a parameter, of an attribute of
    one (`self.impl`) or of a call's result is taken as an instance, as those receivers are."""
    fn = scope.node
    if not isinstance(recv, ast.Name) or not isinstance(
        fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        return ""
    stored = {
        n.id for n in walk_bfs([fn]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - stored

    def may_be_class(v: ast.expr | None) -> bool:
        """A local copy of what the closed world takes as an instance (a parameter, an attribute,
        an item of an attribute, a call's result) is one too; another name, `type(x)` or
        `x.__class__` may be a class; a literal, a comprehension or an operator is none."""
        if isinstance(v, ast.IfExp):
            return may_be_class(v.body) or may_be_class(v.orelse)
        if isinstance(v, ast.BoolOp):
            return any(may_be_class(x) for x in v.values)
        if isinstance(v, ast.NamedExpr):
            return may_be_class(v.value)
        if isinstance(v, ast.Call):
            return isinstance(v.func, ast.Name) and v.func.id == "type"
        if isinstance(v, ast.Attribute) and v.attr == "__class__":
            return True
        if isinstance(v, ast.Attribute | ast.Subscript | ast.Name):
            return not from_param(v)  # `lib.Cls`, `CLASSES[i]`: a module's class
        return isinstance(v, ast.Starred | ast.Await)

    def from_param(v: ast.expr) -> bool:
        """`p`, `p.a.b`, `p.a[i]` for a parameter `p` never rebound."""
        while isinstance(v, ast.Attribute | ast.Subscript):
            v = v.value
        return isinstance(v, ast.Name) and v.id in params

    for n in walk_bfs([scope.node]):
        value: ast.expr | None = None
        if (
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == recv.id for t in n.targets)
        ) or (
            isinstance(n, ast.AnnAssign | ast.NamedExpr | ast.AugAssign)
            and (isinstance(n.target, ast.Name) and n.target.id == recv.id)
        ):
            value = n.value
        elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension) and _names(
            n.target, recv.id
        ):
            # Over a parameter's attribute or what a call returns, like a receiver that is such
            # an attribute, the items are taken as instances; over anything else, maybe not.
            for source in _iter_sources(n.iter):
                if not (isinstance(source, ast.Call) or from_param(source)):
                    if isinstance(source, ast.List | ast.Tuple | ast.Set) and not any(
                        may_be_class(x) for x in source.elts
                    ):
                        continue
                    loop = ast.unparse(n.iter)[:40]
                    return f"`{recv.id}` is bound by a loop over `{loop}`: it may hold a class"
            continue
        elif isinstance(n, ast.Assign | ast.With | ast.AsyncWith):
            targets = (
                n.targets
                if isinstance(n, ast.Assign)
                else [i.optional_vars for i in n.items if i.optional_vars is not None]
            )
            if any(_names(t, recv.id) for t in targets):
                return f"`{recv.id}` is bound by unpacking or `with`: it may hold a class"
            continue
        else:
            continue
        if value is not None and may_be_class(value):
            return f"`{recv.id}` is bound from `{ast.unparse(value)[:40]}`: it may hold a class"
    return ""


def _names(target: ast.expr, name: str) -> bool:
    return any(isinstance(x, ast.Name) and x.id == name for x in walk_all(target))


def _iter_sources(it: ast.expr) -> list[ast.expr]:
    """What a loop's items come from: `enumerate(xs)`, `zip(xs, ys)`, `reversed(xs)`, ... look
    through to their arguments."""
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id in ("enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter")
    ):
        return [x for a in it.args for x in _iter_sources(a)]
    return [it]


def _class_param(scope: Scope, recv: ast.expr) -> bool:
    """`recv` is, or may be, the first parameter of an enclosing classmethod."""
    if not isinstance(recv, ast.Name):
        return False
    current: Scope | None = scope
    while current is not None:
        fn = current.node
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            params = [*fn.args.posonlyargs, *fn.args.args]
            if params and params[0].arg == recv.id:
                return fn.name in _IMPLICIT_CLASSMETHODS or any(
                    "classmethod" in ast.unparse(d) for d in fn.decorator_list
                )
        current = current.parent
    return False


def _callee(engine: Summaries, nd: NameDispatch, c: Candidate, name: str) -> Callee | str:
    """The candidate as a callee whose summary can be computed, or why not."""
    import os

    from zeroopt.analysis.summaries import Callee, load_unit, plain_decorators

    label = c.label.format(name)
    project = engine.project
    own = engine.unit
    unit: Unit | None = None
    if project is None or os.path.abspath(own.path) == os.path.abspath(c.path):
        unit = own
    else:
        module = project.index.names.get(c.path)
        if module is not None and module == own.module:
            unit = own
        elif module is not None and project.index.modules.get(module) == c.path:
            unit = load_unit(project, module)
    if unit is None:
        return f"{label} is in a file not importable by one name: no summary"
    fn = nd.def_at(unit, c.line, name)
    if fn is None:
        return f"{label} is not found again"
    allowed = _CLASS_DECORATORS if c.kind != FUNCTION else frozenset()
    if not plain_decorators(fn, unit, allowed):
        return f"{label} has a decorator that may change what runs"
    shift = 0 if c.kind in (STATIC, FUNCTION) else 1
    return Callee(fn, unit, shift, f"{c.owner}.{name}", "by name, closed world")
