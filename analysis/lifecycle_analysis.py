"""Judge buffers a class allocates in its init methods across the methods that use them later.

Runs only where a lifecycle model matches the class's shape; without one the order of methods is
unknown and the intra-procedural `unproven` stands.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.cfg import Builder
from zeroopt.analysis.dataflow import BufferOutcome, Context, analyse_buffer
from zeroopt.analysis.kernel_contracts import KernelContract
from zeroopt.analysis.lifecycle_program import (
    build_program,
    class_methods,
    decorator_name,
    runs_body_when_called,
)
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES, Lifecycle
from zeroopt.analysis.options import Contract
from zeroopt.analysis.records import _module_bindings
from zeroopt.analysis.resolve import Resolver, walk, walk_scope
from zeroopt.analysis.scalars import int_names


@dataclass
class LifecycleOutcome:
    site: Allocation
    model: Lifecycle
    cls: ast.ClassDef
    outcome: BufferOutcome | None  # None: could not be judged (reason in `skipped`)
    skipped: str = ""


def analyse_lifecycles(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    wanted: Callable[[Allocation], bool],
    contracts: dict[str, Contract],
    source_lines: list[str],
    extra_models: Sequence[Lifecycle] = (),
    kernels: tuple[KernelContract, ...] = (),
    frames_read: bool = False,
) -> list[LifecycleOutcome]:
    if not any(wanted(s) for s in sites):
        return []  # the usual case: nothing is left unproven that a lifecycle could decide
    models = (*extra_models, *BUILTIN_LIFECYCLES)
    # The resolver holds every class already (walking the whole tree again was a tenth of a
    # cold scan); source order keeps reports stable.
    classes = sorted(
        (n for n in resolver.scopes if isinstance(n, ast.ClassDef)),
        key=lambda c: (c.lineno, c.col_offset),
    )
    results: list[LifecycleOutcome] = []
    module_scope = resolver.scope_of(tree)
    facts: ModuleFacts | None = None
    bindings: Counter[str] = Counter()
    for cls in classes:
        methods = class_methods(cls)
        model = next((m for m in models if m.matches(set(methods))), None)
        if model is None:
            continue
        init = {id(methods[m]) for m in model.allocating() if m in methods}
        cls_sites = [s for s in sites if id(s.owner) in init and wanted(s)]
        if not cls_sites:
            continue
        if facts is None:
            facts, bindings = ModuleFacts(tree), _module_bindings(tree)
        program = build_program(cls, model, resolver, shadowed_methods(cls, facts))
        every = _all_methods(cls)
        used_outside = _used_outside(
            {name: fn for name, fn in every.items() if name not in program.methods},
            every,
            foreign_uses(cls, facts, record_classes(tree, cls, classes, bindings)),
            cls.name,
        )
        # Why no buffer of the class can be judged, if so. `self` is private to the modelled
        # order only if no closure holds it: a nested function or lambda may run at any time.
        class_reason = (
            _class_reason(cls, classes, model, set(methods), resolver)
            or module_class_reason(cls, tree, facts, model, resolver, bindings, classes)
            or (_closure_reason(cls, program.methods) if "self" in program.escape_on_bind else "")
        )
        cfg = Builder(lambda e: resolver.qualified(module_scope, e)).build(program.body)
        ints = int_names(
            program.body,
            [],
            set(program.escape_on_bind),
            lambda e: resolver.qualified(module_scope, e),
        )
        stored = _stored_attributes(cls, set(methods))
        src_memo: dict[int, tuple[ast.AST, str]] = {}  # one per program: its nodes are its own
        for site in cls_sites:
            copies = program.copies.get(id(site.call), [])
            attr = _self_attribute(site)
            outside = used_outside(attr) if attr is not None else ""
            reason = (
                class_reason
                or (
                    f"method `{getattr(site.owner, 'name', '?')}` (line {site.call.lineno}) is "
                    "inlined more than once: the allocation runs again later in the lifecycle"
                    if len(copies) != 1
                    else ""
                )
                or (
                    f"the buffer of method `{getattr(site.owner, 'name', '?')}` (line "
                    f"{site.call.lineno}) is not stored on self"
                    if attr is None
                    else ""
                )
                or outside
            )
            if reason:
                results.append(LifecycleOutcome(site, model, cls, None, reason))
                continue
            ctx = Context(
                alloc=copies[0],
                resolver=resolver,
                scope=module_scope,
                contracts=contracts,
                source_lines=source_lines,
                escape_on_bind=frozenset(program.escape_on_bind),
                contiguous=site.contiguous,
                capture_nodes=frozenset(cfg.capture_nodes),
                private_roots=frozenset({"self"}),
                check_exit=False,
                self_callables=stored,
                int_names=ints,
                kernels=kernels,
                src_memo=src_memo,
                frames_read=frames_read,
            )
            results.append(LifecycleOutcome(site, model, cls, analyse_buffer(cfg, ctx)))
    return results


def _closure_reason(cls: ast.ClassDef, modelled: list[str]) -> str:
    """Name the nested function or lambda of a modelled method that captures `self`."""
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name not in modelled:
            continue
        me = _self_param(fn)
        for node in walk(fn.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and any(
                isinstance(n, ast.Name) and n.id == me for n in walk([node])
            ):
                kind = "a lambda" if isinstance(node, ast.Lambda) else f"`{node.name}`"
                return (
                    f"{kind} in method `{fn.name}` (line {node.lineno}) captures `{me}`: it may "
                    "run at any time"
                )
    return "a nested function or lambda in a modelled method captures `self`"


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


def _self_attribute(site: Allocation) -> str | None:
    """`buf` for `self.buf = ...` and for `self.buf = {"k": ...}` / `self.buf["k"] = ...`, where
    `self` is the method's own first parameter (not a class or a module namespace)."""
    node = site.target
    while isinstance(node, ast.Subscript):
        node = node.value
    me = _self_param(site.owner)
    if (
        me is not None
        and isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    ):
        return node.attr
    return None


def _used_outside(
    outside: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    every: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    foreign: dict[str, tuple[str, str, int]],
    cls_name: str,
) -> Callable[[str], str]:
    """For an attribute, why code the model does not order may reach `self.<attr>`, or "":
    a method outside the modelled order touches it, calls a method of the class (which may
    touch it), or hands `self` on whole; or any method reads `<other>.<attr>`, which may be
    another object's buffer. The methods are walked once per class, not once per buffer."""
    # Per outside method, in order: the first line using each `self.<attr>`, and the first line
    # using `self` whole or calling one of the class's methods.
    uses: list[tuple[str, str, dict[str, int], tuple[int, str] | None]] = []
    # Per method: the `self` attributes it names, and those it assigns. An attribute assigned in
    # a method that names the buffer's may hold a view of it (`self.head = self.buf[:1]`).
    names_assigns: list[tuple[set[str], set[str]]] = []
    for name, fn in every.items():
        me = _self_param(fn)
        bases: set[int] = set()
        attrs: dict[str, int] = {}
        assigned: set[str] = set()
        bare: list[ast.Name] = []
        whole: tuple[int, str] | None = None
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == me:
                    bases.add(id(node.value))
                    attrs.setdefault(node.attr, node.lineno)
                    if not isinstance(node.ctx, ast.Load):
                        assigned.add(node.attr)  # also `self.a, x = ...` and `for self.a in`
                    if whole is None and node.attr in every:
                        whole = (node.lineno, f"`{me}.{node.attr}` is called by method `{name}`")
            elif isinstance(node, ast.Name) and node.id == me:
                bare.append(node)
        if me is None:
            continue
        names_assigns.append((set(attrs), assigned))
        if name not in outside:
            continue
        first = next((n for n in bare if id(n) not in bases), None)  # walk order, as before
        if first is not None and (whole is None or first.lineno < whole[0]):
            whole = (first.lineno, f"`{me}` is used whole by method `{name}`")
        uses.append((name, me, attrs, whole))

    def holders(attr: str) -> set[str]:
        held = {attr}
        changed = True
        while changed:
            changed = False
            for named, assigned in names_assigns:
                if named & held and not assigned <= held:
                    held |= assigned
                    changed = True
        return held

    def reason(attr: str) -> str:
        held = holders(attr)
        for name, me, attrs, whole in uses:
            for a in sorted(held & set(attrs), key=lambda a: (a != attr, a)):
                via = "" if a == attr else f" (it may hold `{me}.{attr}`)"
                return f"`{me}.{a}`{via} is used by method `{name}` (line {attrs[a]}), which the lifecycle model does not order"
            if whole is not None:
                return f"{whole[1]} (line {whole[0]}), which the lifecycle model does not order"
        for a in sorted(held, key=lambda a: (a != attr, a)):
            if mangle(a, cls_name) in foreign:
                where, text, line = foreign[mangle(a, cls_name)]
                via = "" if a == attr else f" (`{a}` may hold `self.{attr}`)"
                return f"`{text}` in {where} (line {line}) may be another object's buffer{via}"
        return ""

    return reason


def _stored_attributes(cls: ast.ClassDef, methods: set[str]) -> frozenset[str]:
    """`self.fn = some_function` somewhere in the class: calling `self.fn(...)` does not hand
    over `self`. A stored bound method of self (`self.fn = self.other`) would, so it is left out,
    as are names that may be inherited methods (never assigned here)."""
    stored: set[str] = set()
    bound_self: set[str] = set()
    for fn in walk([cls]):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not fn.args.args:
            continue
        me = fn.args.args[0].arg
        for node in walk(fn.body):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == me
                    ):
                        stored.add(t.attr)
                        if any(
                            isinstance(v, ast.Name) and v.id == me for v in ast.walk(node.value)
                        ):
                            bound_self.add(t.attr)
    return frozenset(stored - bound_self - methods)


# Decorators that only change how a def is bound: on a method the model does not run, harmless
# (the outside-method check reads properties too; static and class methods get no instance).
_BINDING_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "setter", "getter", "deleter",
     "abstractmethod"}
)  # fmt: skip
# Decorators known to call the method as it is, whatever it is (by qualified name).
_TRANSPARENT_DECORATORS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "typing.override", "typing_extensions.override",
     "abc.abstractmethod"}
)  # fmt: skip


def _class_reason(
    cls: ast.ClassDef,
    classes: Sequence[ast.ClassDef],
    model: Lifecycle,
    methods: set[str],
    resolver: Resolver,
) -> str:
    """Why the methods the model runs cannot be read off the class's own `def`s, or "": the
    class body binds names otherwise, a decorator wraps a method, a method does not run when
    called, a base may supply a method, or a subclass here may override or add one."""
    names = model.method_names()
    scope = resolver.scope_of(cls)
    outer = scope.parent or scope  # bases run in the enclosing scope
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in stmt.decorator_list:
                func = d.func if isinstance(d, ast.Call) else d
                if resolver.qualified(scope, func) in _TRANSPARENT_DECORATORS:
                    continue
                if (
                    not isinstance(d, ast.Call)
                    and decorator_name(d) in _BINDING_DECORATORS
                    and stmt.name not in names
                ):
                    continue
                return (
                    f"a decorator of `{stmt.name}` (line {d.lineno}) may run other code around "
                    "it, or in its place"
                )
            rebinds = _rebinds_self(stmt)
            if rebinds:
                return (
                    f"`{stmt.name}` rebinds its `self` parameter (line {rebinds}): the program "
                    "names every method's object `self`"
                )
            if stmt.name in names and not runs_body_when_called(stmt):
                return (
                    f"`{stmt.name}` (line {stmt.lineno}) is a generator or coroutine function: "
                    "calling it does not run its body"
                )
        elif not _data_statement(stmt):
            return (
                f"the class body binds names other than by `def` (line {stmt.lineno}): "
                "a method may be one of them"
            )
    if cls.keywords:
        return "a metaclass or class keyword may change what its methods are"
    local = {c.name for c in classes}
    inherited = sorted(names - methods)
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in local:
            return f"its base `{base.id}` is a class of this module, which the model does not run"
        qual = resolver.qualified(outer, base)
        if inherited and qual != "builtins.object" and qual not in model.default_bases:
            return (
                f"it may inherit `{inherited[0]}` from `{ast.unparse(base)}`, whose version the "
                "model does not know"
            )
    sub = _subclass(cls, classes)
    if sub is not None:
        return f"subclass `{sub.name}` (line {sub.lineno}) may override or add methods"
    return ""


def _rebinds_self(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The line where a method binds or deletes its first parameter (`self = self.inner`), or 0."""
    me = _self_param(fn)
    if me is None:
        return 0  # a static or class method: its first parameter is no instance
    for node in walk_scope(fn.body):
        if isinstance(node, ast.Name) and node.id == me and not isinstance(node.ctx, ast.Load):
            return node.lineno
        bound: str | None
        if isinstance(node, ast.alias):
            bound = (node.asname or node.name).split(".")[0]
        else:  # a def, class, `except ... as`, or `case ... as` of that name
            bound = getattr(node, "name", None)
        if bound == me:
            return getattr(node, "lineno", fn.lineno)
    # A walrus in a comprehension binds in the function too, and walk_scope skips comprehensions.
    for node in walk(fn.body):
        if isinstance(node, ast.NamedExpr) and node.target.id == me:
            return node.lineno
    return 0


def _data_statement(stmt: ast.stmt) -> bool:
    """A docstring, `pass`, an annotation, or a name bound to a literal: binds no method."""
    if isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    ):
        return True
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and (stmt.value is None or _literal(stmt.value))
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets) and _literal(stmt.value)
    return False


def _literal(e: ast.expr) -> bool:
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.UnaryOp):
        return isinstance(e.operand, ast.Constant)
    if isinstance(e, ast.Tuple | ast.List | ast.Set):
        return all(_literal(x) for x in e.elts)
    if isinstance(e, ast.Dict):
        return all(k is not None and _literal(k) for k in e.keys) and all(
            _literal(v) for v in e.values
        )
    return False


def _subclass(cls: ast.ClassDef, classes: Sequence[ast.ClassDef]) -> ast.ClassDef | None:
    """A class of this module derived from `cls`, directly or not (bases matched by name)."""
    names = {cls.name}
    found: ast.ClassDef | None = None
    changed = True
    while changed:
        changed = False
        for other in classes:
            if other.name in names or other is cls:
                continue
            for b in other.bases:
                base = b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None)
                if base in names:
                    names.add(other.name)
                    found = found or other
                    changed = True
                    break
    return found


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
        # (line, text, class, own): may read or set any attribute; `own` when the object is the
        # enclosing method's own `self` (then only instances of that class are reached)
        self.any_setattr: list[tuple[int, str, ast.ClassDef | None, bool]] = []
        self.class_stores: list[tuple[str, int, str]] = []  # (class name or "", line, text)
        self._fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self._visit(tree.body, None, None, "module level")

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
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

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
            self.any_setattr.append((node.lineno, ast.unparse(node), cls, False))

    def _call(self, node: ast.Call, cls: ast.ClassDef | None, me: str | None, where: str) -> None:
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if called in ("attrgetter", "methodcaller"):  # `operator.attrgetter("buf")(backend)`
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    for part in arg.value.split("."):
                        self.uses.append(_Use(part, node, cls, where, False, False, self._fn, me))
                else:
                    self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False))
            return
        if isinstance(func, ast.Name):
            fname = func.id
        elif isinstance(func, ast.Attribute) and _dotted_root(func.value) == "builtins":
            fname = func.attr  # `builtins.setattr(...)`
        else:
            return
        if fname in ("exec", "eval", "__import__"):
            self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False))
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
                self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, own))
        elif fname in ("vars", "globals"):
            self.any_setattr.append((node.lineno, ast.unparse(node)[:80], cls, False))

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
) -> str:
    """Why code elsewhere in the module may replace or wrap what the model runs, or "": a class
    decorator, a store into the class or its instances under a modelled method's name, a
    setattr of any name, a rebinding of the class's name, or a `super()` into a base the model
    does not know."""
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
    for line, text, where, own in facts.any_setattr:
        if own and where is not None and where.name not in related:
            continue  # another class's own `self`: never an instance of this one
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
        return (
            f"`{ast.unparse(use.node)[:60]}` in {use.where} (line {use.node.lineno}) may call "
            f"method `{use.attr}` of an instance outside the modelled order"
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
            return e.func.id in self.records and (fn is None or not _binds(fn, e.func.id))
        if isinstance(e, ast.Constant) and e.value is None:
            return True
        if isinstance(e, ast.Name) and fn is not None and e.id != me:
            values = _name_values(fn, e.id)
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
    a = fn.args
    names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    return names | {p.arg for p in (a.vararg, a.kwarg) if p is not None}


def _binds(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return name in _params(fn) or any(
        (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == name)
        or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name)
        or (isinstance(n, ast.Global | ast.Nonlocal) and name in n.names)
        for n in walk(fn.body)
    )


def _name_values(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.expr] | None:
    """Every value `name` is bound to in `fn` if each binding is a plain `name = value` (no
    parameter, loop target, `with ... as`, walrus, augmented assignment, `del`, import, nested
    def, `global` or `nonlocal`); None otherwise."""
    if name in _params(fn):
        return None
    values: list[ast.expr] = []
    plain: set[int] = set()
    for node in walk(fn.body):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            values.append(node.value)
            plain.add(id(node.targets[0]))
    for node in walk(fn.body):
        if (
            (isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load))
            and id(node) not in plain
        ) or (isinstance(node, ast.arg) and node.arg == name):
            return None
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name:
            return None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name == name
        ):
            return None
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return None
    return values or None
