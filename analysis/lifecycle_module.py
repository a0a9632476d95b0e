"""What the rest of a module does to a class a lifecycle model judges: stores into it, rebinding,
foreign uses of its buffers and methods, records that may hold another instance.

The model assumes its methods are the only code reaching the object; these facts, gathered in one
walk of the module, say where that assumption fails and why.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zeroopt.analysis.lifecycle_instances import plain_class, vars_instance_class
from zeroopt.analysis.lifecycle_program import (
    decorator_name,
)
from zeroopt.analysis.lifecycles import Lifecycle
from zeroopt.analysis.resolve import _SYNTAX_CHILDREN, Resolver, parameter_names, walk

# The words of a module-level reason that only adds paths (another object's method called).
OUTSIDE_ORDER = "outside the modelled order"


def _all_methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function in the class body, properties and static methods included."""
    return {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}


def _self_param(fn: ast.AST) -> str | None:
    """The name a method calls its own object by; None for a static or class method."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params or any(
        decorator_name(d) in ("staticmethod", "classmethod") for d in fn.decorator_list
    ):
        return None
    return params[0].arg


def mangle(attr: str, cls_name: str | None) -> str:
    """What `x.__attr` written inside class `cls_name` names at run time (`_Cls__attr`)."""
    if cls_name and attr.startswith("__") and not attr.endswith("__") and cls_name.strip("_"):
        return f"_{cls_name.lstrip('_')}{attr}"
    return attr


@dataclass
class _Use:
    attr: str  # mangled
    node: ast.expr  # the Attribute (or the getattr/setattr call)
    cls: ast.ClassDef | None  # the class whose method this is in, if any
    where: str  # "method `m`", "function `f`", "module level"
    own: bool  # `me.attr` with `me` the method's own first parameter
    store: bool  # assigned or deleted
    fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the innermost function around it
    me: str | None = None  # the first parameter of the method it is in


class ModuleFacts:
    """What the whole module does with attributes, walked once per file: every attribute use
    (mangled as Python does), and the statements that may replace a class's methods."""

    def __init__(self, tree: ast.Module) -> None:
        self.uses: list[_Use] = []
        # (line, text, class, own, of): may read or set any attribute; `own` when the object is
        # the enclosing method's own `self` (then only instances of that class are reached); `of`
        # the plain class whose fresh instance the object provably is (lifecycle_instances.py)
        self.any_setattr: list[tuple[int, str, ast.ClassDef | None, bool, str]] = []
        self.class_stores: list[tuple[str, int, str]] = []  # (class name or "", line, text)
        self._fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        # Per function (by id: the tree lives as long as these facts), what its body binds.
        self.fn_names: dict[int, _FnNames] = {}
        self._visit(tree.body, None, None, "module level")

    def names_of(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> _FnNames:
        found = self.fn_names.get(id(fn))
        if found is None:
            found = self.fn_names[id(fn)] = _FnNames(fn)
        return found

    def _visit(
        self,
        body: Sequence[ast.AST],
        cls: ast.ClassDef | None,
        me: str | None,
        where: str,
    ) -> None:
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            node = stack.pop()
            if isinstance(node, ast.ClassDef):
                for sub in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                    self._visit([sub], cls, me, where)
                self._visit(node.body, node, None, f"class `{node.name}` body")
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for sub in [*node.decorator_list, *_defaults(node.args)]:
                    self._visit([sub], cls, me, where)
                method = cls is not None and where.startswith("class ")
                inner_me = _self_param(node) if method else me
                label = f"method `{node.name}`" if method else where
                if cls is None:
                    label = f"function `{node.name}`"
                outer_fn, self._fn = self._fn, node
                self._visit(node.body, cls, inner_me, label)
                self._fn = outer_fn
                continue
            if isinstance(node, ast.Attribute):
                self._attribute(node, cls, me, where)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
                self._call(node, cls, me, where)
            # The children `ast.iter_child_nodes` yields, in its order, but the context and
            # operator leaves (nothing above looks at them) and without a generator per node.
            fields = _SYNTAX_CHILDREN[type(node)]
            for f in fields or ():
                v = getattr(node, f)
                if type(v) is list:
                    stack.extend(reversed(v))
                elif v is not None:
                    stack.append(v)

    def _attribute(
        self, node: ast.Attribute, cls: ast.ClassDef | None, me: str | None, where: str
    ) -> None:
        own = isinstance(node.value, ast.Name) and me is not None and node.value.id == me
        name = cls.name if cls is not None else None
        store = not isinstance(node.ctx, ast.Load)
        self.uses.append(_Use(mangle(node.attr, name), node, cls, where, own, store, self._fn, me))
        if store:
            self._class_store(node.value, node.lineno, node, me)
        if node.attr in ("__dict__", "__setattr__", "__delattr__", "__getattribute__") or (
            store and node.attr in ("__class__", "__bases__", "__mro__")
        ):  # `self.__class__ = Other` swaps every method at once
            self.any_setattr.append((node.lineno, ast.unparse(node), cls, False, ""))

    def _call(self, node: ast.Call, cls: ast.ClassDef | None, me: str | None, where: str) -> None:
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if called in ("attrgetter", "methodcaller"):  # `operator.attrgetter("buf")(backend)`
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    for part in arg.value.split("."):
                        self.uses.append(_Use(part, node, cls, where, False, False, self._fn, me))
                else:
                    self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False, ""))
            return
        if isinstance(func, ast.Name):
            fname = func.id
        elif isinstance(func, ast.Attribute) and _dotted_root(func.value) == "builtins":
            fname = func.attr  # `builtins.setattr(...)`
        else:
            return
        if fname in ("exec", "eval", "__import__"):
            self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False, ""))
            return
        if fname in ("setattr", "delattr", "getattr", "hasattr") and len(node.args) >= 2:
            key, obj = node.args[1], node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                own = isinstance(obj, ast.Name) and me is not None and obj.id == me
                store = fname in ("setattr", "delattr")
                attr = mangle(key.value, None)  # getattr does not mangle
                self.uses.append(_Use(attr, node, cls, where, own, store, self._fn, me))
                if store:
                    self._class_store(obj, node.lineno, node, me)
            elif fname in ("setattr", "delattr", "getattr"):
                own = isinstance(obj, ast.Name) and me is not None and obj.id == me
                self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, own, ""))
        elif fname in ("vars", "globals"):
            of = vars_instance_class(node, self._fn) if fname == "vars" else ""
            self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False, of))

    def _class_store(self, obj: ast.expr, line: int, node: ast.AST, me: str | None) -> None:
        """`Cls.m = f`, `setattr(Cls, ...)`, `type(x).m = f`, `x.__class__.m = f`."""
        text = ast.unparse(node)[:80]
        if isinstance(obj, ast.Name) and obj.id != me:
            self.class_stores.append((obj.id, line, text))
        elif (
            isinstance(obj, ast.Call) and isinstance(obj.func, ast.Name) and obj.func.id == "type"
        ) or (isinstance(obj, ast.Attribute) and obj.attr == "__class__"):
            self.class_stores.append(("", line, text))


def _dotted_root(e: ast.expr) -> str:
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else ""


def _defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


# Bases whose code never runs on an instance's buffers: no methods of their own that matter.
_HARMLESS_BASES = frozenset({"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"})


_TRANSPARENT_CLASS_DECORATORS = frozenset({"typing.final", "typing_extensions.final"})


def module_class_reason(
    cls: ast.ClassDef,
    tree: ast.Module,
    facts: ModuleFacts,
    model: Lifecycle,
    resolver: Resolver,
    bindings: Counter[str],
    classes: Sequence[ast.ClassDef] = (),
    forwarded: Callable[[ast.Attribute, ast.ClassDef], str | None] | None = None,
) -> str:
    """Why code elsewhere in the module may replace or wrap what the model runs, or "": a class
    decorator, a store into the class or its instances under a modelled method's name, a
    setattr of any name, a rebinding of the class's name, or a `super()` into a base the model
    does not know. `forwarded(node, wrapper)` says why a call `<child>.h` in another class's
    own hook `h` may break the child's order ("" when it keeps it, None when `h` is no hook:
    lifecycle_delegation.py)."""
    scope = resolver.scope_of(cls)
    outer = scope.parent or scope
    for d in cls.decorator_list:
        func = d.func if isinstance(d, ast.Call) else d
        if resolver.qualified(outer, func) not in _TRANSPARENT_CLASS_DECORATORS:
            return (
                f"its class decorator `{ast.unparse(d)}` (line {d.lineno}) may wrap or replace "
                "its methods"
            )
    if bindings[cls.name] > 1:
        return f"the module binds the name `{cls.name}` more than once: it may name another class"
    for node in walk([tree]):
        if isinstance(node, ast.Global) and cls.name in node.names:
            return f"`global {cls.name}` (line {node.lineno}) lets a function rebind the class"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "globals"
        ):
            return f"`globals()` (line {node.lineno}) may rebind the class's name"
    for name, line, text in facts.class_stores:
        if name in ("", cls.name):
            return f"`{text}` (line {line}) may replace a method of the class"
    related = _related_classes(cls, classes)
    for line, text, where, own, of in facts.any_setattr:
        if own and where is not None and where.name not in related:
            continue  # another class's own `self`: never an instance of this one
        if of and of not in related and plain_class(of, tree, bindings, facts.class_stores):
            continue  # a fresh instance of a plain unrelated class: never an instance of this one
        return f"`{text}` (line {line}) may read or set any attribute, a method included"
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in model.excludes:
            return (
                f"method `{stmt.name}` (line {stmt.lineno}) belongs to another engine generation, "
                "which calls other methods than this model runs"
            )
    runs = {mangle(m, cls.name) for m in model.method_names()}
    for use in facts.uses:
        if use.store and use.attr in runs:
            return (
                f"`{ast.unparse(use.node)[:60]}` in {use.where} (line {use.node.lineno}) stores "
                f"an attribute named like the modelled method `{use.attr}`: a call may run what "
                "was stored"
            )
    # Instance methods only: a static or class method gets no instance (what it does with one
    # handed to it is read in its body like any other code).
    # The model's forward methods are exempt: wherever they are called from (a model layer's
    # `backend.forward_decode(q, k, v)`), that call is the engine's forward within a cycle.
    mine = {
        mangle(m, cls.name)
        for m, fn in _all_methods(cls).items()
        if _self_param(fn) and m not in model.forward
    }
    for use in facts.uses:
        if use.own or use.store or use.attr not in mine:
            continue
        value = use.node.value if isinstance(use.node, ast.Attribute) else None
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "super":
            continue  # judged below
        why: str | None = None
        if (
            forwarded is not None
            and isinstance(use.node, ast.Attribute)
            and use.cls is not None
            and use.cls is not cls
            and use.where == f"method `{use.attr}`"
        ):
            why = forwarded(use.node, use.cls)
            if why == "":
                continue  # a wrapper forwarding the hook keeps the object in the model's order
        return (
            f"`{ast.unparse(use.node)[:60]}` in {use.where} (line {use.node.lineno}) may call "
            f"method `{use.attr}` of an instance {OUTSIDE_ORDER}" + (f" ({why})" if why else "")
        )
    bases = [b.value if isinstance(b, ast.Subscript) else b for b in cls.bases]
    known = set(model.default_bases) | _HARMLESS_BASES
    for base in bases:
        qual = resolver.qualified(outer, base)
        if qual not in known:
            return (
                f"its base `{ast.unparse(base)}` (line {base.lineno}) is not one the model "
                "knows: its code may run on the object"
            )
    plain = all(resolver.qualified(outer, b) in _HARMLESS_BASES for b in bases)
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in walk(fn.body):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "super"
            ):
                continue
            called = _super_method(node, fn)
            if called == "__init__" and (plain or "__init__" in model.harmless_super):
                continue
            what = f"`super().{called}`" if called else "`super()`"
            return (
                f"{what} in method `{fn.name}` (line {node.lineno}) runs code of a base the "
                "model does not know on the object"
            )
    return ""


def _related_classes(cls: ast.ClassDef, classes: Sequence[ast.ClassDef]) -> set[str]:
    """Names of this module's classes an instance of `cls` may also be: itself, its bases and
    the classes derived from it (matched by name, as the subclass check does)."""
    related = {cls.name} | {getattr(b, "id", getattr(b, "attr", "")) for b in cls.bases}
    grew = True
    while grew:
        grew = False
        for other in classes:
            if other.name not in related and any(
                getattr(b, "id", getattr(b, "attr", None)) in related for b in other.bases
            ):
                related.add(other.name)
                grew = True
    return related


def _super_method(call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """`m` for `super().m(...)` called at once; "" for any other use of `super()`."""
    for node in walk(fn.body):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.value is call
        ):
            return node.func.attr
    return ""


def shadowed_methods(cls: ast.ClassDef, facts: ModuleFacts) -> frozenset[str]:
    """Methods of the class that some attribute store anywhere in the module may shadow with an
    instance attribute (`self._fill = _skip`): a call through the name runs what was stored."""
    names = {mangle(n, cls.name): n for n in _all_methods(cls)}
    return frozenset(names[u.attr] for u in facts.uses if u.store and u.attr in names)


def foreign_uses(
    cls: ast.ClassDef,
    facts: ModuleFacts,
    records: frozenset[str] = frozenset(),
) -> dict[str, tuple[str, str, int]]:
    """Per mangled attribute: the first use anywhere in the module that is not a method's use of
    its own object (`other.buf`, `self.target.buf`, `getattr(obj, "buf")`, a module function's
    `backend.buf`): it may reach an instance of this class, outside the modelled order. A use
    whose object is provably an instance of one of `records` (classes that never make an instance
    of this one) is not: `meta.cache_seqlens` of a metadata dataclass beside `self.cache_seqlens`.
    """
    typed = _RecordTyping(cls, facts, records) if records else None
    out: dict[str, tuple[str, str, int]] = {}
    for use in facts.uses:
        if use.own:
            continue
        if (
            typed is not None
            and isinstance(use.node, ast.Attribute)
            and typed.is_record(use.node.value, use.fn, use.me)
        ):
            continue
        out.setdefault(use.attr, (use.where, ast.unparse(use.node)[:60], use.node.lineno))
    return out


def record_classes(
    tree: ast.Module, cls: ast.ClassDef, classes: Sequence[ast.ClassDef], bindings: Counter[str]
) -> frozenset[str]:
    """Module-level classes whose call can only make an instance of themselves, never of `cls`:
    bound once, no base, no metaclass or `__new__`, no decorator but `dataclass`, and neither
    `cls` nor a class derived from it."""
    related = {cls.name}
    grew = True
    while grew:
        grew = False
        for other in classes:
            if other.name not in related and any(
                getattr(b, "id", getattr(b, "attr", None)) in related for b in other.bases
            ):
                related.add(other.name)
                grew = True
    out = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name in related or bindings[node.name] != 1:
            continue
        if node.bases or node.keywords:
            continue
        if any(decorator_name(d) != "dataclass" for d in node.decorator_list):
            continue
        if any(
            isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__new__"
            for s in node.body
        ):
            continue
        out.add(node.name)
    return frozenset(out)


class _RecordTyping:
    """Which expressions provably hold an instance of a record class (or None): `R(...)`, a
    local name bound only to such values, and `self.x` where every store to `.x` in the module
    is one of the class's own methods storing such a value on its own object."""

    def __init__(self, cls: ast.ClassDef, facts: ModuleFacts, records: frozenset[str]) -> None:
        self.records = records
        self.cls = cls
        self.facts = facts
        self.attrs: dict[str, bool] = {}
        self._stores: dict[str, list[_Use]] = {}
        for use in facts.uses:
            if use.store:
                self._stores.setdefault(use.attr, []).append(use)

    def is_record(
        self,
        e: ast.expr,
        fn: ast.FunctionDef | ast.AsyncFunctionDef | None,
        me: str | None,
        depth: int = 0,
    ) -> bool:
        if depth > 3:
            return False
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            return e.func.id in self.records and (
                fn is None or not self.facts.names_of(fn).binds(e.func.id)
            )
        if isinstance(e, ast.Constant) and e.value is None:
            return True
        if isinstance(e, ast.Name) and fn is not None and e.id != me:
            values = self.facts.names_of(fn).values(e.id)
            return values is not None and all(self.is_record(v, fn, me, depth + 1) for v in values)
        if (
            isinstance(e, ast.Attribute)
            and isinstance(e.value, ast.Name)
            and me is not None
            and e.value.id == me
        ):
            return self._attr_is_record(mangle(e.attr, self.cls.name), depth)
        return False

    def _attr_is_record(self, attr: str, depth: int) -> bool:
        if attr in self.attrs:
            return self.attrs[attr]
        self.attrs[attr] = False  # while deciding (a cycle proves nothing)
        stores = self._stores.get(attr, [])
        ok = bool(stores)
        for use in stores:
            parent = _assign_of(use)
            if not (use.own and use.cls is self.cls and parent is not None):
                ok = False
                break
            if not self.is_record(parent.value, use.fn, use.me, depth + 1):
                ok = False
                break
        self.attrs[attr] = ok
        return ok


def _assign_of(use: _Use) -> ast.Assign | None:
    """The `me.x = value` statement a store use is the sole target of, if it is one."""
    if use.fn is None or not isinstance(use.node, ast.Attribute):
        return None
    for node in walk(use.fn.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is use.node:
            return node
    return None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return set(parameter_names(fn))


class _FnNames:
    """What a function's body binds, walked once: answers `binds` (the name is a parameter or
    bound in the body in any way) and `values` (every value the name is bound to, if each binding
    is a plain `name = value`: no parameter, loop target, `with ... as`, walrus, augmented
    assignment, `del`, import, nested def, `global` or `nonlocal`; None otherwise)."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.params = _params(fn)
        self._values: dict[str, list[ast.expr]] = {}
        plain: set[int] = set()
        stored: list[ast.Name] = []
        self._args: set[str] = set()  # parameters of defs and lambdas inside the body
        self._other: set[str] = set()  # imports, defs, classes, global, nonlocal
        for node in walk(fn.body):
            if isinstance(node, ast.Name):
                if not isinstance(node.ctx, ast.Load):
                    stored.append(node)
            elif isinstance(node, ast.Assign):
                target = node.targets[0]
                if len(node.targets) == 1 and isinstance(target, ast.Name):
                    self._values.setdefault(target.id, []).append(node.value)
                    plain.add(id(target))
            elif isinstance(node, ast.arg):
                self._args.add(node.arg)
            elif isinstance(node, ast.alias):
                self._other.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self._other.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                self._other.update(node.names)
        self._stored = {n.id for n in stored}
        self._unplain = {n.id for n in stored if id(n) not in plain}

    def binds(self, name: str) -> bool:
        return name in self.params or name in self._stored or name in self._other

    def values(self, name: str) -> list[ast.expr] | None:
        if name in self.params or name in self._unplain or name in self._args:
            return None
        if name in self._other:
            return None
        return self._values.get(name) or None
