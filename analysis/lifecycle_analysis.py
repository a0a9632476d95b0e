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
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, analyse_buffer
from zeroopt.analysis.kernel_contracts import KernelContract
from zeroopt.analysis.lifecycle_delegation import delegation_reason, hooks
from zeroopt.analysis.lifecycle_module import (
    OUTSIDE_ORDER,
    ModuleFacts,
    _all_methods,
    _self_param,
    foreign_uses,
    mangle,
    module_class_reason,
    record_classes,
    shadowed_methods,
)
from zeroopt.analysis.lifecycle_objects import distinct_objects, object_origins, plain_classes
from zeroopt.analysis.lifecycle_program import (
    Program,
    build_program,
    class_methods,
    decorator_name,
)
from zeroopt.analysis.lifecycle_witness import (
    Compiled,
    Witness,
    build_witnesses,
    compile_program,
    decisive,
    program_context,
    shown_unsafe,
)
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES, Lifecycle
from zeroopt.analysis.options import Contract
from zeroopt.analysis.records import _module_bindings
from zeroopt.analysis.resolve import Resolver, runs_body_when_called, walk, walk_all, walk_scope


@dataclass
class LifecycleOutcome:
    site: Allocation
    model: Lifecycle
    cls: ast.ClassDef
    outcome: BufferOutcome | None  # None: could not be judged (reason in `skipped`)
    skipped: str = ""
    # Set with both `outcome` and `skipped`: code outside the modelled order may also reach the
    # buffer, which only adds paths. The modelled order is still one the engine runs, so a read
    # before any write on it stands (`unsafe`, with `skipped` named as the assumption); no other
    # verdict of `outcome` may be used.
    unsafe_only: bool = False
    # The buffer on a witness schedule (lifecycle_witness.py), computed only where `outcome` is
    # neither `safe` nor `unsafe`: only a read before any write on it may be used (`unsafe`,
    # with `witness_schedule` and the model's `witness_at` named as the assumption).
    witness: BufferOutcome | None = None
    witness_schedule: str = ""
    witness_path: str = ""  # the setup branches the witness follows ("" for all joined)


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
        own_sites = [s for s in sites if id(s.owner) in init]
        cls_sites = [s for s in own_sites if wanted(s)]
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
        # Reasons of two kinds: the first leave the modelled code in doubt (bases, decorators,
        # rebinding: what runs may not be what the model inlines), the second only add paths
        # (a closure or code elsewhere may also reach the object): those still let a modelled
        # read before any write stand as `unsafe`.
        module_reason = module_class_reason(
            cls,
            tree,
            facts,
            model,
            resolver,
            bindings,
            classes,
            _forwarding(cls, model, facts, resolver, classes, bindings),
        )
        class_reason = _class_reason(cls, classes, model, set(methods), resolver) or (
            module_reason if OUTSIDE_ORDER not in module_reason else ""
        )
        adds_paths = (module_reason if OUTSIDE_ORDER in module_reason else "") or (
            _closure_reason(cls, program.methods) if "self" in program.escape_on_bind else ""
        )
        stored = _stored_attributes(cls, set(methods))
        makers = _object_makers(tree, cls, classes, bindings, resolver)
        distinct_memo: dict[int, frozenset[str]] = {}
        origins_memo: dict[int, dict[str, frozenset[str]]] = {}
        plain = plain_classes(tree, makers)

        def judge(
            prog: Program,
            compiled: Compiled,
            alloc: ast.Call,
            site: Allocation,
            stored: frozenset[str] = stored,
            tensors: frozenset[str] = frozenset(),
            makers: frozenset[str] = makers,
            distinct_memo: dict[int, frozenset[str]] = distinct_memo,
            origins_memo: dict[int, dict[str, frozenset[str]]] = origins_memo,
            plain: frozenset[str] = plain,
            full: Program = program,
        ) -> BufferOutcome:
            if id(prog) not in distinct_memo:
                distinct_memo[id(prog)] = distinct_objects(prog, makers, prog is not full)
                origins_memo[id(prog)] = object_origins(prog, plain, prog is not full)
            ctx = program_context(
                prog, compiled, alloc, site.contiguous, resolver, module_scope, source_lines,
                stored, contracts=contracts, kernels=kernels, frames_read=frames_read,
                tensor_names=tensors, distinct_objects=distinct_memo[id(prog)],
                object_origins=origins_memo[id(prog)],
            )  # fmt: skip
            return analyse_buffer(compiled[0], ctx)

        compiled = compile_program(program, resolver, module_scope)
        # Witness schedules (lifecycle_witness.py): never where the modelled code is in doubt.
        witnesses = (
            []
            if class_reason
            else [
                (w, compile_program(w.program, resolver, module_scope, volatile=False))
                for w in build_witnesses(cls, model, resolver, shadowed_methods(cls, facts))
            ]
        )
        # Per witness program, each allocation's outcome there (computed when first needed).
        on_witness: dict[tuple[int, int], BufferOutcome | None] = {}

        def witness_outcome(
            index: int,
            other: Allocation,
            stored: frozenset[str] = stored,
            on_witness: dict[tuple[int, int], BufferOutcome | None] = on_witness,
            witnesses: list[tuple[Witness, Compiled]] = witnesses,
            judge: Callable[..., BufferOutcome] = judge,
        ) -> BufferOutcome | None:
            key = (index, id(other.call))
            if key not in on_witness:
                w, w_compiled = witnesses[index]
                w_copies = w.program.copies.get(id(other.call), [])
                on_witness[key] = (
                    judge(w.program, w_compiled, w_copies[0], other, stored, w.tensor_names)
                    if len(w_copies) == 1
                    else None
                )
            return on_witness[key]

        def bounded_by_another(
            index: int,
            site: Allocation,
            shown: BufferOutcome,
            own_sites: list[Allocation] = own_sites,
            witness_outcome: Callable[[int, Allocation], BufferOutcome | None] = witness_outcome,
        ) -> bool:
            """Every read before any write is of rows up to lengths some other allocation of
            the class may hold on this program: with that one still zeros no row is read."""
            if not all(
                _COUPLED in i.text
                for i in shown.issues
                if i.severity == UNSAFE and i.kind == "read"
            ):
                return False
            for other in own_sites:
                if other is site:
                    continue
                theirs = witness_outcome(index, other)
                if theirs is not None and theirs.kernel_args & shown.couplings:
                    return True
            return False

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
            )
            if reason:
                results.append(LifecycleOutcome(site, model, cls, None, reason))
                continue
            more_paths = adds_paths or outside
            outcome = judge(program, compiled, copies[0], site)
            result = LifecycleOutcome(site, model, cls, outcome, more_paths, bool(more_paths))
            if not decisive(outcome):
                for index, (w, _) in enumerate(witnesses):
                    shown = witness_outcome(index, site)
                    if shown is None:
                        continue
                    if shown_unsafe(shown) and not bounded_by_another(index, site, shown):
                        result.witness, result.witness_schedule = shown, w.schedule
                        result.witness_path = w.path
                        break
            results.append(result)
    return results


def _forwarding(
    cls: ast.ClassDef,
    model: Lifecycle,
    facts: ModuleFacts,
    resolver: Resolver,
    classes: Sequence[ast.ClassDef],
    bindings: Counter[str],
) -> Callable[[ast.Attribute, ast.ClassDef], str | None]:
    """Judges a wrapper's `<child>.h(...)` in its own hook `h` (lifecycle_delegation.py) for
    children of `cls`'s kind: only the model's hooks `cls` defines must be forwarded. None for a
    method that is no hook of the model (its call stays outside the modelled order)."""
    judged = set(class_methods(cls))

    def why(node: ast.Attribute, wrapper: ast.ClassDef) -> str | None:
        if node.attr not in hooks(model):
            return None
        return delegation_reason(node, wrapper, judged, model, facts, resolver, classes, bindings)

    return why


def _object_makers(
    tree: ast.Module,
    cls: ast.ClassDef,
    classes: Sequence[ast.ClassDef],
    bindings: Counter[str],
    resolver: Resolver,
) -> frozenset[str]:
    """Classes whose call in the class's methods makes a new instance of them: record_classes,
    less names some function declares `global` (it may rebind them). Only for a class at module
    level, whose methods see the module's names (a class in a function sees its locals too)."""
    if cls not in tree.body:
        return frozenset()
    declared = {n for scope in resolver.scopes.values() for n in scope.global_names}
    return record_classes(tree, cls, classes, bindings) - declared


# The words calls.py gives a read of table rows up to the values of another argument.
_COUPLED = "rows are read up to the values of"


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
        for node in walk_all(fn):
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
                            isinstance(v, ast.Name) and v.id == me for v in walk_all(node.value)
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
