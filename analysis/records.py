"""Plain dataclasses of a module: classes whose constructor only stores its arguments.

`Meta(page_table=buf[:bs])` then needs no contract: the generated `__init__` assigns each
argument to the field of that name and runs nothing else. Anything that could run code of its
own (a base class, `__init__`/`__post_init__`/`__setattr__`, a `default_factory` that is not a
builtin container, `InitVar`, `KW_ONLY`, a name bound twice) disqualifies the class.

Methods decorated by the builtin `classmethod`, `staticmethod` or `property` (names the module
never binds) are allowed when none is named like a field: the generated `__init__` assigns only
the fields, and none of those descriptors runs code when the class is made (no `__set_name__`
that could put an `__init__` on it). `slots=True` makes a new class with the same generated
`__init__`; `kw_only=True` makes every field keyword-only: its fields start with `KW_ONLY_MARK`,
and a call with a positional argument is not read as the constructor, nor is one where a field's
annotation may be `typing.ClassVar` under another name (`_Heads`).

A class handed to code as a value in its module (`patch(Meta)`, `C = Meta`) may be changed by
that code: only one whose name is called, has an attribute read, stands in an annotation, a
base list or an `isinstance` test is read (`_touched_classes`).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from zeroopt.analysis.resolve import _SYNTAX_CHILDREN, child_nodes, statements, walk, walk_all

_SAFE_FACTORIES = {"list", "dict", "set", "tuple"}
_CODE_METHODS = {"__init__", "__post_init__", "__setattr__", "__new__", "__init_subclass__"}
# Builtin decorators of a record's methods: descriptors made at class creation, running nothing
# then, never a data descriptor named like a field (`_fields` checks the names).
_METHOD_DECORATORS = ("classmethod", "staticmethod", "property")
KW_ONLY_MARK = "*"  # first of the fields of a `kw_only=True` dataclass: no positional arguments


def plain_dataclasses(
    module: ast.Module, declared_global: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """Class name -> its fields in `__init__` order. `declared_global`: the names some function
    declares `global` (the resolver knows them): such a function may rebind the class."""
    cached: dict[str, tuple[str, ...]] | None = getattr(module, "_zeroopt_records", None)
    if cached is not None:
        return cached
    if not any(isinstance(s, ast.ClassDef) and s.decorator_list for s in module.body):
        # No class below could qualify (`_fields` needs its one decorator): no walk.
        module._zeroopt_records = {}  # type: ignore[attr-defined]
        return {}
    bound, touched = _bound_and_touched(module)
    excluded = set(declared_global) | touched
    names = _Dataclasses.of(module, bound, excluded)
    records: dict[str, tuple[str, ...]] = {}
    heads = _Heads.of(module, bound, names)
    if names.unsure:
        module._zeroopt_records = records  # type: ignore[attr-defined]
        return records
    for stmt in module.body:
        if not isinstance(stmt, ast.ClassDef) or bound[stmt.name] != 1:
            continue
        if stmt.name in excluded:
            continue
        builtins = {d for d in _METHOD_DECORATORS if not bound[d] and not bound["*"]}
        fields = _fields(stmt, names, builtins, heads)
        if fields is not None:
            records[stmt.name] = fields
    module._zeroopt_records = records  # type: ignore[attr-defined]
    return records


def imported_names(module: ast.Module, declared_global: Iterable[str] = ()) -> list[str]:
    """Names bound once in the module's scope, by an `import` at its top level, that nothing
    here rebinds or changes (`Meta.__init__ = f`, `setattr(Meta, ...)`, `global Meta`): where
    they denote another module's plain dataclass, a call runs that class's generated
    `__init__`."""
    bound, touched = _bound_and_touched(module)
    excluded = set(declared_global) | touched
    if "*" in excluded or "*" in bound:
        return []  # `globals()`, or a star import that may rebind any name
    found: list[str] = []
    for stmt in module.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name
                if alias.name != "*" and bound[name] == 1 and name not in excluded:
                    found.append(name)
    return found


class _Dataclasses:
    """The names that certainly are `dataclasses.dataclass` and `dataclasses.field` here: bound
    once, at module level, by an import from the stdlib module (a module's own `dataclass`
    decorator may do anything)."""

    def __init__(self, modules: set[str], names: dict[str, str], unsure: bool = False) -> None:
        self.modules = modules  # `import dataclasses [as dc]`
        self.names = names  # local name -> "dataclass" / "field"
        # `ClassVar as CV` and the like: a field list read off annotations could be wrong.
        self.unsure = unsure

    @classmethod
    def of(cls, module: ast.Module, bound: Counter[str], excluded: set[str]) -> _Dataclasses:
        modules: set[str] = set()
        names: dict[str, str] = {}
        unsure = False
        for stmt in statements(module):  # order-free: any match decides
            if isinstance(stmt, ast.ImportFrom):
                unsure = unsure or any(
                    a.asname and a.name in ("ClassVar", "InitVar", "KW_ONLY") for a in stmt.names
                )
        for stmt in module.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "dataclasses":
                        modules.add(alias.asname or alias.name)
            elif (
                isinstance(stmt, ast.ImportFrom) and stmt.module == "dataclasses" and not stmt.level
            ):
                for alias in stmt.names:
                    if alias.name in ("dataclass", "field"):
                        names[alias.asname or alias.name] = alias.name
        # A star import may bind any name, `dataclass` included, before or after the import
        # from `dataclasses`: nothing here is certain then.
        stable = set() if bound["*"] else {n for n in bound if bound[n] == 1 and n not in excluded}
        return cls(modules & stable, {k: v for k, v in names.items() if k in stable}, unsure)

    def means(self, node: ast.expr, what: str) -> bool:
        if isinstance(node, ast.Name):
            return self.names.get(node.id) == what
        return (
            isinstance(node, ast.Attribute)
            and node.attr == what
            and isinstance(node.value, ast.Name)
            and node.value.id in self.modules
        )


def _fields(
    cls: ast.ClassDef, dataclasses: _Dataclasses, builtin_decorators: set[str], heads: _Heads
) -> tuple[str, ...] | None:
    if cls.bases or cls.keywords or len(cls.decorator_list) != 1:
        return None
    dec = cls.decorator_list[0]
    kw_only = False
    if isinstance(dec, ast.Call):
        if dec.args or any(k.arg in ("init", None) for k in dec.keywords):
            return None
        for k in dec.keywords:
            if k.arg in ("slots", "kw_only"):
                if not (isinstance(k.value, ast.Constant) and type(k.value.value) is bool):
                    return None
                kw_only = kw_only or (k.arg == "kw_only" and k.value.value)
        dec = dec.func
    if not dataclasses.means(dec, "dataclass"):
        return None
    fields: list[str] = []
    methods: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            # Special methods run code of their own (`__getattribute__`, `__init__`, ...);
            # another decorator may return an object whose `__set_name__` changes the class,
            # or a data descriptor the generated __init__ stores through.
            if stmt.name.startswith("__") or not all(
                isinstance(d, ast.Name) and d.id in builtin_decorators for d in stmt.decorator_list
            ):
                return None
            methods.add(stmt.name)
            if _hands_on_cls(stmt):
                return None  # `return cls`: the caller may store into the class
            continue
        if isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if not isinstance(stmt, ast.AnnAssign):
            return None  # `__post_init__ = f`, a field under `if`: the fields are not these
        if not isinstance(stmt.target, ast.Name):
            return None
        annotation = ast.unparse(stmt.annotation)
        if "InitVar" in annotation or "KW_ONLY" in annotation:
            return None
        kind = heads.kind(stmt.annotation)
        if kind == _CLASSVAR:
            continue
        if kind is None:
            return None  # a head named like `ClassVar` that may not be typing's
        kw_only = kw_only or kind == _UNSURE
        if stmt.value is not None and not _plain_default(stmt.value, dataclasses):
            return None
        fields.append(stmt.target.id)
    if (methods | builtin_decorators) & set(fields) or methods & builtin_decorators:
        # A def named like a field: the field's default, or a property over it; a field or a
        # def named like a decorator: the class body's own binding is what `@classmethod` calls.
        return None
    return (KW_ONLY_MARK, *fields) if kw_only else tuple(fields)


_CLASSVAR, _FIELD, _UNSURE = "classvar", "field", "unsure"
# Modules whose attributes (but `ClassVar`, `InitVar`, `KW_ONLY`) are no alias of those
# (assumed unpatched, like the builtins).
_KNOWN_MODULES = frozenset({"torch", "typing", "typing_extensions", "collections", "numpy"})
_SPECIAL = frozenset({"ClassVar", "InitVar", "KW_ONLY"})
_BUILTIN_TYPES = frozenset(
    {"int", "float", "bool", "str", "bytes", "complex", "list", "dict", "tuple", "set",
     "frozenset", "object", "type"}
)  # fmt: skip


class _Heads:
    """What a field's annotation is to `dataclasses`: a `ClassVar` (no field), a field, or
    unsure. dataclasses tests only the annotation's head (`X` in `X[...]`; for a string, its
    first dotted name looked up in the module) for `typing.ClassVar`: any name may be bound to
    it (`CV = ClassVar`, `from .types import CV`, a class whose `__class_getitem__` returns
    it). A head is certainly no `ClassVar` when it is a builtin type the module never binds,
    a name imported once from a known module, an attribute of such a module, or a class of the
    module with no base, keyword or decorator (unsubscripted). Where unsure, the class's fields
    are still the annotated names but their order may not be: only calls by keyword are read
    (as for `kw_only=True`)."""

    def __init__(self, names: dict[str, str], modules: set[str]) -> None:
        self.names = names  # local name -> the name it imports from a known module
        self.modules = modules  # local names of known modules

    @classmethod
    def of(cls, module: ast.Module, bound: Counter[str], dataclasses: _Dataclasses) -> _Heads:
        names: dict[str, str] = {}
        modules: set[str] = set()
        star = bound["*"] > 0
        for stmt in module.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if alias.name.split(".")[0] in _KNOWN_MODULES and bound[local] == 1:
                        modules.add(local)
            elif isinstance(stmt, ast.ImportFrom) and not stmt.level:
                root = (stmt.module or "").split(".")[0]
                for alias in stmt.names:
                    local = alias.asname or alias.name
                    if root in _KNOWN_MODULES and bound[local] == 1:
                        names[local] = alias.name
            elif (
                isinstance(stmt, ast.ClassDef)
                and bound[stmt.name] == 1
                and not (stmt.bases or stmt.keywords or stmt.decorator_list)
            ):
                names[stmt.name] = ""  # a class of the module: no `__class_getitem__` use
        for name in _BUILTIN_TYPES:
            if not bound[name]:
                names[name] = name
        if star:
            names.clear()
            modules.clear()
        return cls(names, modules)

    def kind(self, annotation: ast.expr) -> str | None:
        head: ast.expr = annotation
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            try:
                head = ast.parse(head.value.strip(), mode="eval").body
            except SyntaxError:
                return _UNSURE
        subscripted = False
        while isinstance(head, ast.Subscript):
            head, subscripted = head.value, True
        if isinstance(head, ast.BinOp) and isinstance(head.op, ast.BitOr):
            parts = [self.kind(head.left), self.kind(head.right)]
            return _FIELD if parts == [_FIELD, _FIELD] else _UNSURE
        if isinstance(head, ast.Constant) and head.value is None:
            return _FIELD
        if isinstance(head, ast.Name):
            imported = self.names.get(head.id)
            if imported == "ClassVar":
                return _CLASSVAR
            if head.id in _SPECIAL:
                return None
            if imported is None or (imported == "" and subscripted):
                return _UNSURE
            return _FIELD
        if isinstance(head, ast.Attribute):
            root: ast.expr = head
            while isinstance(root, ast.Attribute):
                root = root.value
            known = isinstance(root, ast.Name) and root.id in self.modules
            if head.attr == "ClassVar":
                return _CLASSVAR if known and isinstance(head.value, ast.Name) else None
            if head.attr in _SPECIAL:
                return None
            return _FIELD if known else _UNSURE
        return _UNSURE


def _plain_default(value: ast.expr, dataclasses: _Dataclasses) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call) and dataclasses.means(value.func, "field"):
        for k in value.keywords:
            if k.arg in ("init", "kw_only") or k.arg is None:
                return False  # kw_only: positional arguments skip the field
            if k.arg == "default_factory" and _dotted(k.value) not in _SAFE_FACTORIES:
                return False
            if k.arg == "default" and not isinstance(k.value, ast.Constant):
                return False
        return not value.args
    return False


def _bound_and_touched(module: ast.Module) -> tuple[Counter[str], frozenset[str]]:
    """`_module_bindings` and `_touched_classes` of the module, walked once for both callers
    (`plain_dataclasses`, `imported_names`) and kept on the tree, which the analysis never
    changes (it changes copies)."""
    memo: tuple[Counter[str], frozenset[str]] | None = getattr(module, "_zeroopt_bound", None)
    if memo is None:
        memo = (_module_bindings(module), frozenset(_touched_classes(module)))
        module._zeroopt_bound = memo  # type: ignore[attr-defined]
    return memo


def _touched_classes(module: ast.Module) -> set[str]:
    """Classes of the module that code may change after the fact: a store into one
    (`Q.__init__ = f`, `setattr(Q, ...)`), or the class used as a value (`patch(Q)`, `C = Q`,
    `for c in [Q]`, `type.__setattr__(Q, ...)`): whatever receives it may store into it, so its
    generated methods may not be the ones that run. A name of the class is read without letting
    it escape only where it is called, where an attribute of it is read, in an annotation, as a
    base, or tested by `isinstance`/`issubclass`. The module's name of a class may be rebound
    through the module object: an attribute store or `setattr` under the class's name touches
    it. `globals()`, `vars()`, a store into a `__dict__`, `setattr` with a computed name (on
    anything but `self`/`cls`), or a store through `type(x).attr` / `x.__class__.attr`, may
    reach any of them."""
    classes = {
        c.name: frozenset(
            d.name for d in c.body if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)
        )
        for c in module.body
        if isinstance(c, ast.ClassDef)
    }
    touched: set[str] = set()
    # One walk gathers every node (any order: all below is order-free), each node's parent,
    # the names read in annotations, the decorators and the imported names; the checks need
    # all of these complete, so they run over the list after it.
    nodes, parents, hidden, decorators, imported = _module_facts(module)
    # This module's object may be reached (and its names rebound by a computed `setattr`)
    # where it reaches module objects, or hands an imported name on as a value (an import
    # of itself passed to a helper).
    module_reached = False
    computed: list[ast.expr] = []  # `setattr(o, name, v)` with a computed name: `o`
    for node in nodes:  # order-free: a set
        t = type(node)
        if t is ast.Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            if attr == "modules" or attr in ("import_module", "__import__"):
                module_reached = True
            if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                root = _root(value)
                if isinstance(root, ast.Name):
                    touched.add(root.id)  # `Meta.x = v`, `Meta.__init__.__code__ = c`
                if _reaches_a_class(root) or _reaches_a_class(value):
                    touched.add("*")
                # `sys.modules[__name__].Meta = Other`, `import m as me; me.Meta = Other`: the
                # module's name rebound through the module object.
                touched.add(attr)
            elif (
                attr in ("update", "setdefault")
                and isinstance(node.value, ast.Attribute)  # type: ignore[attr-defined]
                and node.value.attr == "__dict__"  # type: ignore[attr-defined]
                and not (
                    isinstance(node.value.value, ast.Name)  # type: ignore[attr-defined]
                    and node.value.value.id == "self"  # type: ignore[attr-defined]
                )
            ):
                touched.add("*")  # `m.__dict__.update(Meta=v)`
            elif attr == "__class__" and _escapes(node, parents, frozenset()):  # type: ignore[arg-type]
                touched.add("*")  # `C = x.__class__`: any class of the module, handed on
        elif t is ast.Name:
            name = node.id  # type: ignore[attr-defined]
            if name in ("import_module", "__import__"):
                module_reached = True
            if isinstance(node.ctx, ast.Load) and id(node) not in hidden:  # type: ignore[attr-defined]
                if (
                    not module_reached
                    and name in imported
                    and id(node) not in decorators
                    and _handed_on(node, parents)  # type: ignore[arg-type]
                ):
                    module_reached = True
                if name in classes and _escapes(node, parents, classes[name]):  # type: ignore[arg-type]
                    touched.add(name)
        elif t is ast.Call and isinstance(node.func, ast.Name):  # type: ignore[attr-defined]
            func = node.func.id  # type: ignore[attr-defined]
            args = node.args  # type: ignore[attr-defined]
            if func in ("setattr", "delattr") and len(args) >= 2:
                first, key = args[0], args[1]
                if isinstance(first, ast.Name):
                    touched.add(first.id)
                elif _reaches_a_class(first):
                    touched.add("*")
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    touched.add(key.value)  # `setattr(sys.modules[__name__], "Meta", v)`
                else:
                    computed.append(first)
            elif func in ("globals", "vars"):
                touched.add("*")
            if _reaches_a_class(node) and _escapes(node, parents, frozenset()):  # type: ignore[arg-type]
                touched.add("*")  # `C = type(m)`: any class of the module, handed on
        elif (
            t is ast.Subscript
            and not isinstance(node.ctx, ast.Load)  # type: ignore[attr-defined]
            and isinstance(node.value, ast.Attribute)  # type: ignore[attr-defined]
            and node.value.attr == "__dict__"  # type: ignore[attr-defined]
        ):
            touched.add("*")  # `sys.modules[__name__].__dict__["Meta"] = v`
    if any(_may_be_the_module(first, imported, module_reached) for first in computed):
        touched.add("*")  # a computed name on what may be this module
    if "*" in touched:
        touched |= set(classes)
    return touched


def _module_facts(
    module: ast.Module,
) -> tuple[list[ast.AST], dict[int, ast.AST], set[int], set[int], set[str]]:
    """Every node of the module (context and operator leaves left out, in no particular order),
    each one's parent, the ids of the nodes inside annotations (evaluated, never handed to
    code), the ids of decorators, and the names imports bind: one walk for `_touched_classes`."""
    nodes: list[ast.AST] = []
    parents: dict[int, ast.AST] = {}
    hidden: set[int] = set()
    decorators: set[int] = set()
    imported: set[str] = set()
    stack: list[ast.AST] = [module]
    pop, push, children = stack.pop, stack.append, _SYNTAX_CHILDREN
    while stack:
        node = pop()
        t = type(node)
        fields = children[t]
        if fields is None:
            continue
        nodes.append(node)
        for f in fields:
            v = getattr(node, f)
            if type(v) is list:
                for c in v:
                    parents[id(c)] = node
                    push(c)
            elif v is not None:
                parents[id(v)] = node
                push(v)
        annotation = None
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            decorators.update(id(d) for d in node.decorator_list)  # type: ignore[attr-defined]
            annotation = node.returns  # type: ignore[attr-defined]
        elif t is ast.ClassDef:
            decorators.update(id(d) for d in node.decorator_list)  # type: ignore[attr-defined]
        elif t is ast.AnnAssign or t is ast.arg:
            annotation = node.annotation  # type: ignore[attr-defined]
        elif t is ast.Import or t is ast.ImportFrom:
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)  # type: ignore[attr-defined]
        if annotation is not None:
            hidden.update(id(n) for n in walk([annotation]))
    return nodes, parents, hidden, decorators, imported


def _hands_on_cls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A classmethod whose first parameter (the class) is used but called or read from."""
    if not any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list):
        return False
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params:
        return True
    first = params[0].arg
    parents = {id(c): n for n in walk_all(fn) for c in child_nodes(n)}
    return any(
        isinstance(n, ast.Name)
        and n.id == first
        and isinstance(n.ctx, ast.Load)
        and _escapes(n, parents, frozenset())
        for n in walk_all(fn)
    )


_HARMLESS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})


def _escapes(name: ast.expr, parents: dict[int, ast.AST], methods: frozenset[str]) -> bool:
    """The class `name` reads is handed to code as a value (see `_touched_classes`). An
    attribute chain on it not called at once hands on what it reads: a method (`f =
    Meta.make`, whose `__self__` is the class), a dunder (`Meta.__mro__`, `Meta.__init__`,
    whose `__code__` may be replaced); a field's default or its name is harmless."""
    node: ast.expr = name
    up = parents.get(id(node))
    chain: list[str] = []
    while isinstance(up, ast.Attribute) and up.value is node and isinstance(up.ctx, ast.Load):
        chain.append(up.attr)
        node, up = up, parents.get(id(up))
    if isinstance(up, ast.Call) and up.func is node:
        return False  # `Meta(...)`, `Meta.make(...)`
    if chain:
        last = chain[-1]
        if last in _HARMLESS:
            return False
        dunder = any(a.startswith("__") and a not in _HARMLESS for a in chain)
        return dunder or len(chain) > 1 or last in methods
    if isinstance(up, ast.ClassDef) and name in up.bases:
        return False
    if isinstance(up, ast.Compare | ast.FormattedValue):
        return False  # `type(x) is Meta`, `f"{type(x)}"`
    if (
        isinstance(up, ast.Call)
        and isinstance(up.func, ast.Name)
        and up.func.id in ("str", "repr", "format", "print", "id", "hash")
    ):
        return False  # formatted or printed: no code of the module receives it
    if isinstance(up, ast.Tuple):
        up = parents.get(id(up))  # `isinstance(x, (A, B))`
    return not (
        isinstance(up, ast.Call)
        and isinstance(up.func, ast.Name)
        and up.func.id in ("isinstance", "issubclass")
        and len(up.args) == 2
        and not up.keywords
    )


def _handed_on(n: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """`n` is used as a value: not called, not the object of an attribute read."""
    up = parents.get(id(n))
    if isinstance(up, ast.Call) and up.func is n:
        return False
    return not (isinstance(up, ast.Attribute) and up.value is n)


def _may_be_the_module(e: ast.expr, imported: set[str], module_reached: bool) -> bool:
    """`e` may be this module's object: the module reaches module objects (`sys.modules`,
    `import_module`, `__import__`) and `e` is not `self`/`cls`, or `e` is a name an import
    binds (the module importing itself). Another module's store into this one is assumed
    away (docs/whole-program.md: no module assigns another module's attributes)."""
    if isinstance(e, ast.Name):
        return e.id in imported or (module_reached and e.id not in ("self", "cls"))
    return module_reached


def _root(e: ast.expr) -> ast.expr:
    while isinstance(e, ast.Attribute | ast.Subscript):
        e = e.value
    return e


def _reaches_a_class(e: ast.AST) -> bool:
    """`type(x)` or `x.__class__`: an expression that may be the class of an instance."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "type"
        and len(e.args) == 1
    ) or (isinstance(e, ast.Attribute) and e.attr == "__class__" and isinstance(e.ctx, ast.Load))


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _module_bindings(module: ast.Module) -> Counter[str]:
    """How often each name is bound in the module's own scope (nested `if`/`try` blocks
    included). Function and class bodies bind their own names and are not walked, but what runs
    in the module scope is: decorators, defaults, bases, and walruses anywhere in those (or in
    comprehensions, whose targets are counted too: over-counting only disqualifies more)."""
    counts: Counter[str] = Counter()
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            counts[node.name] += 1
            stack.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                stack.extend(node.bases)
                stack.extend(k.value for k in node.keywords)
            else:
                stack.extend(_defaults(node.args))
                stack.extend(_annotations(node))  # evaluated at definition time
            continue
        if isinstance(node, ast.Lambda):
            stack.extend(_defaults(node.args))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            counts[node.id] += 1
        elif isinstance(node, ast.alias):
            counts[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            counts[node.name] += 1  # `except E as Meta`, `case ... as Meta`
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
        stack.extend(child_nodes(node))
    return counts


def _defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return found if fn.returns is None else [*found, fn.returns]
