"""Buffers a class stores on `self` in `__init__`, judged under the weakest order of its methods.

A class no lifecycle model matches has no known driver. The weakest description of any driver
is: after `__init__`, any method of the class may run, any number of times, in any order. That
is a lifecycle (lifecycles.py) with `init=("__init__",)` and one cycle per method, built and
analysed as every model is (lifecycle_program.py inlines the methods and their `self` helpers;
the must-write dataflow runs unchanged), so it is sound for every real runner. At the loop head
the state after `__init__` joins the state after every method: a method that reads the buffer
is proven only if it writes it in full first itself, and a write in any method makes a later
read in another one a possible read, never a certain one.

Who else reaches the buffer is settled by the whole-program view under the closed world
(docs/whole-program.md, "Any order of a class's methods"): every attribute access `.X` (any
receiver) and every string naming `X` in the scanned tree must be `self.X` in a method of the
class itself (or `.X` on an object of an unrelated class), for `X` and every attribute that may
hold the buffer; no subclass in the tree
overrides a method but `__init__` (methods.py finds them); the class binds no attribute hook,
has no class decorator, no base but `object`, `ABC`, `Generic`, `Protocol` or `torch.nn.Module`
(whose own code names its attributes by fixed names only; a buffer named like a library
attribute is given up); its module reads no attribute by a computed name, no `__dict__`,
`vars()`, copy, pickle or frames on a receiver that may hold an instance of the class, and no
other file of the tree either (analysis/anyorder_reach.py: each use judged by its receiver); a
base of the tree is taken in under analysis/anyorder_bases.py's conditions.

`unsafe` only where the any-order program shows a read before any write (no method writes the
buffer, or no code writes the elements read) AND the straight program "`__init__`, then the
method holding the read" shows it too: one execution a runner may perform.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.anyorder_bases import (
    base_reason,
    joined_assumptions,
    joined_reason,
    rebindable,
)
from zeroopt.analysis.anyorder_classes import attribute_index
from zeroopt.analysis.anyorder_reach import (
    NOTES,
    elsewhere_others_only,
    others_only,
    reach_reason,
)
from zeroopt.analysis.bases_targets import CALLERS_CLOSED
from zeroopt.analysis.dataflow import UNPROVEN, UNSAFE, BufferOutcome, analyse_buffer
from zeroopt.analysis.kernel_contracts import KernelContract
from zeroopt.analysis.lifecycle_analysis import (
    _TRANSPARENT_DECORATORS,
    _data_statement,
    _object_makers,
    _rebinds_self,
    _self_attribute,
    _stored_attributes,
)
from zeroopt.analysis.lifecycle_module import (
    ModuleFacts,
    _all_methods,
    _self_param,
    mangle,
    shadowed_methods,
)
from zeroopt.analysis.lifecycle_objects import distinct_objects
from zeroopt.analysis.lifecycle_program import (
    RENAME_MARK,
    Program,
    build_program,
    class_methods,
    decorator_name,
)
from zeroopt.analysis.lifecycle_witness import compile_program, program_context
from zeroopt.analysis.lifecycles import Cycle, Lifecycle
from zeroopt.analysis.methods import ANY, TREE_DEP, ClassWorld, _short
from zeroopt.analysis.options import Contract
from zeroopt.analysis.records import _module_bindings
from zeroopt.analysis.resolve import Resolver, Scope, child_nodes, runs_body_when_called, walk
from zeroopt.analysis.semantics.library_methods import LIBRARY_ATTRIBUTES

NAME = "any-order"
INIT = "__init__"
_MAX_METHODS = 40  # methods naming the buffer, at most: the program grows with each
# Library bases whose own code names none of a subclass's attributes but its own fixed ones
# (those are library attributes: a buffer of that name is given up). torch.nn.Module's
# `__setattr__` stores a plain tensor in the instance `__dict__` (torch/nn/modules/module.py,
# `Module.__setattr__`: only Parameters, registered buffer names and Modules go elsewhere), which
# none of its methods but pickling and `__dir__` iterate.
_BASES = frozenset(
    {"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol", "torch.nn.Module",
     "torch.nn.modules.module.Module"}
)  # fmt: skip
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# What torch.nn.Module's own code names on an instance besides its methods (the names of
# library_attributes.json): `sorted(vars(torch.nn.Module()))` under torch 2.13.0.
_MODULE_STATE = frozenset(
    {"_backward_hooks", "_backward_pre_hooks", "_buffers", "_forward_hooks",
     "_forward_hooks_always_called", "_forward_hooks_with_kwargs", "_forward_pre_hooks",
     "_forward_pre_hooks_with_kwargs", "_is_full_backward_hook", "_load_state_dict_post_hooks",
     "_load_state_dict_pre_hooks", "_modules", "_non_persistent_buffers_set", "_parameters",
     "_state_dict_hooks", "_state_dict_pre_hooks", "training"}
)  # fmt: skip
_HOOKS = ("__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__", "__dict__")
_DOTTED = re.compile(r"[\w.]+")
# Text that may reach an object's attributes by a name computed at run time, its whole state, or
# make a class whose bases are values (`type(name, bases, ns)`): the files of the tree that
# anyorder_reach.py parses to judge each use by its receiver. `getattr(o, "lit")` is fine.
_BY_NAME_CALL = re.compile(rb"\b(?:get|set|has|del)attr\s*\(")
_LITERAL_SECOND = re.compile(rb"[^(),]*,\s*[rRbB]?['\"]\w*['\"]\s*[,)]")
_WHOLE_STATE = re.compile(
    rb"__dict__|\bvars\s*\(|\bdir\s*\(|(?<![.\w])copy\s*\(|\bcopy\.copy\s*\(|\bdeepcopy\s*\("
    rb"|(?<![.\w])replace\s*\(|\bdataclasses\.replace\s*\(|\bpickle\b"
    rb"|\bcloudpickle\b|\b(?:asdict|astuple|attrgetter|methodcaller|getmembers(?:_static)?)\b"
    rb"|\bget_(?:objects|referents|referrers)\b|\bexec\s*\("
    rb"|\beval\s*\(|__getstate__|__reduce|\bf_locals\b|\bf_globals\b|\btype\s*\([^()]*,\s*\("
    rb"|__getattribute__"  # `object.__getattribute__(o, name)`, `o.__getattribute__(name)`
    rb"|\bsave\s*\("  # `torch.save(o, f)`, `save(o, f)` (`from torch import save`): pickled
)


@dataclass
class AnyOrderOutcome:
    site: Allocation
    cls: ast.ClassDef
    model: Lifecycle
    outcome: BufferOutcome | None  # None: not judged (why in `skipped`)
    skipped: str = ""
    reader: str = ""  # the method whose read is certain right after `__init__` (`unsafe`)
    assumptions: tuple[str, ...] = ()


def analyse_any_order(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    wanted: Callable[[Allocation], bool],
    modelled: Callable[[ast.ClassDef], bool],
    contracts: dict[str, Contract],
    source_lines: list[str],
    kernels: tuple[KernelContract, ...],
    frames_read: bool,
    world: ClassWorld,
    own_paths: set[str],
    deps: dict[str, str] | None,
    certain_reads: Callable[[Allocation], bool],
    callers_closed: bool = False,
) -> list[AnyOrderOutcome]:
    """Judge the wanted allocations of `__init__` methods stored on `self`, in classes no model
    matches (`modelled`). `certain_reads`: the site's rule calls a read `unsafe` only where no
    write ran before it on any path (the guard). `callers_closed`: the classes a store of bases
    may extend are those the tree's calls pass, public functions' too (bases_targets.py)."""
    token = CALLERS_CLOSED.set(callers_closed)
    try:
        return _any_order(
            tree, resolver, sites, wanted, modelled, contracts, source_lines, kernels,
            frames_read, world, own_paths, deps, certain_reads, callers_closed,
        )  # fmt: skip
    finally:
        CALLERS_CLOSED.reset(token)


def _any_order(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    wanted: Callable[[Allocation], bool],
    modelled: Callable[[ast.ClassDef], bool],
    contracts: dict[str, Contract],
    source_lines: list[str],
    kernels: tuple[KernelContract, ...],
    frames_read: bool,
    world: ClassWorld,
    own_paths: set[str],
    deps: dict[str, str] | None,
    certain_reads: Callable[[Allocation], bool],
    callers_closed: bool,
) -> list[AnyOrderOutcome]:
    by_owner: dict[int, list[Allocation]] = {}
    for s in sites:
        if wanted(s) and isinstance(s.owner, ast.FunctionDef) and s.owner.name == INIT:
            by_owner.setdefault(id(s.owner), []).append(s)
    if not by_owner:
        return []
    results: list[AnyOrderOutcome] = []
    module_reason: str | None = None
    facts: ModuleFacts | None = None
    module_scope = resolver.scope_of(tree)
    classes = [n for n in resolver.scopes if isinstance(n, ast.ClassDef)]
    for cls in sorted(classes, key=lambda c: (c.lineno, c.col_offset)):
        init = _all_methods(cls).get(INIT)
        if init is None or id(init) not in by_owner or modelled(cls):
            continue
        if deps is not None and world.digest:
            deps[TREE_DEP] = world.digest  # any file of the tree may name the buffer
        if module_reason is None:
            module_reason = "frames are read in this module" if frames_read else ""
            facts = ModuleFacts(tree)
        assert facts is not None
        reason = module_reason or _class_reason(
            cls, resolver, world, tree, own_paths, callers_closed
        )
        for site in by_owner[id(init)]:
            attr = _self_attribute(site)
            model = Lifecycle(NAME, (INIT,), (INIT,), (), (), "any order of the class's methods")
            if attr is None:
                continue  # not stored on self: nothing any order of methods could decide
            NOTES.clear()
            why = reason or _reached_elsewhere(
                cls, attr, tree, world, own_paths, _library_base(cls, resolver)
            )
            if why:
                results.append(AnyOrderOutcome(site, cls, model, None, why))
                continue
            # Lookups by a computed name passed by the names they may look up: the evidence.
            passed = tuple(f"{n}, none of them an attribute that may hold it" for n in NOTES[:3])
            passed += tuple(joined_assumptions(cls, world, callers_closed))
            judged = _judge(cls, site, attr, tree, resolver, module_scope, facts, contracts,
                            source_lines, kernels, frames_read, certain_reads(site),
                            _stored_elsewhere(cls, world))  # fmt: skip
            results.append(replace(judged, assumptions=(*judged.assumptions, *passed)))
    return results


def _judge(
    cls: ast.ClassDef,
    site: Allocation,
    attr: str,
    tree: ast.Module,
    resolver: Resolver,
    module_scope: Scope,
    facts: ModuleFacts,
    contracts: dict[str, Contract],
    source_lines: list[str],
    kernels: tuple[KernelContract, ...],
    frames_read: bool,
    certain: bool,
    stored: frozenset[str] = frozenset(),
) -> AnyOrderOutcome:
    """`stored`: methods of the class whose name some file of the tree stores an attribute
    under (`_stored_elsewhere`)."""
    held = holders(cls, attr)
    methods = class_methods(cls)
    props = _properties(cls)
    naming = [m for m, fn in {**methods, **props}.items() if m != INIT and _names(fn, held)]
    cycles = tuple(Cycle(m, (m,), runs_forward=False) for m in naming)
    model = Lifecycle(NAME, (INIT,), (INIT,), cycles, (), "any order of the class's methods")
    if len(naming) > _MAX_METHODS:
        why = f"{len(naming)} methods name the buffer: more than the program takes"
        return AnyOrderOutcome(site, cls, model, None, why)
    shadowed = shadowed_methods(cls, facts) | stored
    program = build_program(cls, model, resolver, shadowed, props)
    copies = program.copies.get(id(site.call), [])
    if len(copies) != 1:
        why = f"`__init__` (line {site.call.lineno}) is inlined more than once"
        return AnyOrderOutcome(site, cls, model, None, why)
    if "self" in program.escape_on_bind:
        return AnyOrderOutcome(
            site, cls, model, None, "a nested function or lambda captures `self`"
        )
    stored = _stored_attributes(cls, set(methods))
    bindings = _module_bindings(tree)
    makers = _object_makers(tree, cls, [c for c in tree.body if isinstance(c, ast.ClassDef)],
                            bindings, resolver)  # fmt: skip

    def judge(prog: Program, straight: bool) -> BufferOutcome:
        # A straight program only ever shows a read: its slices keep to proven ints.
        compiled = compile_program(prog, resolver, module_scope, volatile=not straight)
        ctx = program_context(
            prog, compiled, (prog.copies.get(id(site.call)) or copies)[0], site.contiguous,
            resolver, module_scope, source_lines, stored, contracts=contracts, kernels=kernels,
            frames_read=frames_read, distinct_objects=distinct_objects(prog, makers, straight),
            certain_reads_only=certain,
        )  # fmt: skip
        return analyse_buffer(compiled[0], ctx)

    outcome = judge(program, False)
    unsafe = [i for i in outcome.issues if i.severity == UNSAFE]
    if outcome.gave_up or not outcome.reached or not unsafe:
        return AnyOrderOutcome(site, cls, model, outcome)
    if _written_somewhere(outcome):
        # The join at the loop head keeps a path from `__init__` to the read with no write on
        # it, but some method may write the buffer, and a runner may always call it first:
        # only elements no write of any method covers are certainly read unwritten.
        outcome = not_certain(outcome, keep=_UNCOVERED)
        unsafe = [i for i in outcome.issues if i.severity == UNSAFE]
        if not unsafe:
            return AnyOrderOutcome(site, cls, model, outcome)
    # A read before any write in any order: shown only if the straight program `__init__`,
    # then the method holding the read, reads it too (one execution a runner may perform).
    reader = _method_at(cls, unsafe[0].line) or INIT
    straight_model = Lifecycle(
        NAME, (INIT,), (INIT,) if reader == INIT else (INIT, reader), (), (), model.source
    )
    straight_prog = build_program(cls, straight_model, resolver, shadowed, props)
    if len(straight_prog.copies.get(id(site.call), [])) == 1:
        straight = judge(straight_prog, True)
        if not straight.gave_up and any(i.severity == UNSAFE for i in straight.issues):
            shown = reader.split(RENAME_MARK)[0]
            assumption = (
                f"assuming `{cls.name}.{shown}` runs after `{cls.name}.__init__` (any method may "
                "run after it, in any order)"
                if reader != INIT
                else f"`{cls.name}.__init__` reads it itself"
            )
            return AnyOrderOutcome(site, cls, model, straight, reader=shown,
                                   assumptions=(assumption,))  # fmt: skip
    return AnyOrderOutcome(site, cls, model, not_certain(outcome), reader=reader)


def _stored_elsewhere(cls: ast.ClassDef, world: ClassWorld) -> frozenset[str]:
    """Methods of the class under whose name some file of the tree stores an attribute
    (`g._fill = f`, `setattr(g, "_fill", f)`; methods.py `stored_in`): a call `self._fill()`
    may run what was stored there (the module's own stores: `shadowed_methods`)."""
    return frozenset(m for m in _all_methods(cls) if world.stored_in(mangle(m, cls.name)))


# The words uncovered.py gives a read of elements that no write on any path covers.
_UNCOVERED = "which no write on any path covers"


def not_certain(outcome: BufferOutcome, keep: str = "") -> BufferOutcome:
    """The outcome with its `unsafe` reads made `unproven` (but those whose text holds `keep`):
    not shown on a straight schedule, or some method may write the buffer first."""
    issues = [
        replace(i, severity=UNPROVEN)
        if i.severity == UNSAFE and not (keep and keep in i.text)
        else i
        for i in outcome.issues
    ]
    return replace(outcome, issues=issues)


def _written_somewhere(outcome: BufferOutcome) -> bool:
    """Some code of the program may write the buffer: a write, a write of part or through a
    view, or anything that hands it on (an escape, a call given it, a store elsewhere)."""
    return bool(
        outcome.writes
        or outcome.partial_writes
        or outcome.view_writes
        or any("write" in kind for _, kind in outcome.phase_events)
        or any(i.severity == UNPROVEN and i.kind not in _READS for i in outcome.issues)
    )


_READS = frozenset({"read", "possible-read", "capture"})


_PROPERTY = frozenset({"property", "setter", "getter", "deleter", "cached_property"})


def _properties(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Property getters, setters and deleters, under keys no attribute spells (`head·0`):
    each may run at any time, like a method."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for i, stmt in enumerate(cls.body):
        if (
            isinstance(stmt, ast.FunctionDef)
            and stmt.args.args
            and any(decorator_name(d) in _PROPERTY for d in stmt.decorator_list)
        ):
            out[f"{stmt.name}{RENAME_MARK}{i}"] = stmt
    return out


def _method_at(cls: ast.ClassDef, line: int) -> str:
    for i, stmt in enumerate(cls.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and (
            stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
        ):
            return stmt.name if stmt.name in class_methods(cls) else f"{stmt.name}{RENAME_MARK}{i}"
    return ""


def _names(fn: ast.FunctionDef | ast.AsyncFunctionDef, held: set[str]) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in held for n in walk([fn]))


def holders(cls: ast.ClassDef, attr: str) -> set[str]:
    """`attr` and every `self` attribute the buffer may flow into, to a fixpoint: a statement
    whose value names something that may hold it (`self.<held>`, or a name bound from one, in
    any method: names are not told apart by method) stores into its targets' roots
    (`self.head = self.buf[:1]`, `self.d[k] = b`), and a call given it on `self.<y>.m(...)`
    (`self.q.append(b)`) or `self.m(...)` (then every parameter of `m` may hold it), or a value
    from a method that may return it."""
    methods = _all_methods(cls)
    held = {attr}
    names: set[str] = set()
    me_of = {id(fn): _self_param(fn) for fn in methods.values()}
    # Names a method binds (locals, parameters): module names such as `torch` never hold it.
    local: set[str] = set()
    for fn in methods.values():
        for n in walk([fn]):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                local.add(n.id)
            elif isinstance(n, ast.arg):
                local.add(n.arg)
    changed = True

    returning: set[str] = set()  # methods that may return it (`self.y = self.get()`)

    def tainted(e: ast.AST | None, me: str | None) -> bool:
        for n in walk([e]) if e is not None else ():
            if isinstance(n, ast.Name) and n.id in names:
                return True
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == me
                and n.func.attr in returning
            ):
                return True
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == me
                and n.attr in held
            ):
                return True
        return False

    def mark(target: ast.AST, me: str | None) -> None:
        nonlocal changed
        for t in walk([target]):
            root = t
            while isinstance(root, ast.Attribute | ast.Subscript | ast.Starred):
                if (
                    isinstance(root, ast.Attribute)
                    and isinstance(root.value, ast.Name)
                    and root.value.id == me
                ):
                    if root.attr not in held:
                        held.add(root.attr)
                        changed = True
                    break
                root = root.value
            if (
                isinstance(root, ast.Name)
                and root.id != me
                and root.id in local
                and root.id not in names
            ):
                names.add(root.id)
                changed = True

    while changed:
        changed = False
        for fn in methods.values():
            me = me_of[id(fn)]
            for n in walk([fn]):
                if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                    if tainted(n.value, me):
                        for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                            mark(t, me)
                elif isinstance(n, ast.Return | ast.Yield | ast.YieldFrom):
                    if fn.name not in returning and tainted(n.value, me):
                        returning.add(fn.name)
                        changed = True
                elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
                    if tainted(n.iter, me):
                        mark(n.target, me)
                elif isinstance(n, ast.withitem):
                    if n.optional_vars is not None and tainted(n.context_expr, me):
                        mark(n.optional_vars, me)
                elif isinstance(n, ast.Call) and any(
                    tainted(a, me) for a in [*n.args, *(k.value for k in n.keywords)]
                ):
                    f = n.func
                    if isinstance(f, ast.Attribute):
                        mark(f.value, me)
                        if isinstance(f.value, ast.Name) and f.value.id == me:
                            callee = methods.get(f.attr)
                            for a in callee.args.args[1:] if callee is not None else []:
                                if a.arg not in names:
                                    names.add(a.arg)
                                    changed = True
    return held


def _class_reason(
    cls: ast.ClassDef,
    resolver: Resolver,
    world: ClassWorld,
    home: ast.Module | None = None,
    own_paths: set[str] | None = None,
    callers_closed: bool = False,
) -> str:
    """Why the class's own defs may not be all the code that runs on its objects, or ""."""
    if cls.decorator_list:
        return f"class decorator (line {cls.decorator_list[0].lineno}) may change the class"
    if cls.keywords:
        return "a metaclass or class keyword may change what its methods are"
    scope = resolver.scope_of(cls)
    outer = scope.parent or scope
    tree_bases = 0
    for base in cls.bases:
        b = base.value if isinstance(base, ast.Subscript) else base
        if resolver.qualified(outer, b) not in _BASES:
            tree_bases += 1
            why = (
                base_reason(cls, base, home, own_paths or set(), world)
                if home is not None and tree_bases == 1
                else "a second base of the tree"
            )
            if why:
                return (
                    f"its base `{ast.unparse(base)[:40]}` (line {base.lineno}) has code that may "
                    f"run on the object ({why})"
                )
    seen: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in seen:
                return f"the class binds `{stmt.name}` twice (line {stmt.lineno})"
            seen.add(stmt.name)
            if stmt.name in _HOOKS:
                return f"the class defines `{stmt.name}` (line {stmt.lineno})"
            if _rebinds_self(stmt):
                return f"`{stmt.name}` rebinds its `self` parameter (line {_rebinds_self(stmt)})"
            for node in walk(stmt.body):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Call)
                    and getattr(node.func.value.func, "id", "") == "super"
                    and (node.func.attr != INIT or stmt.name != INIT)
                ):
                    return (
                        f"`super().{node.func.attr}` in `{stmt.name}` (line {node.lineno}) runs "
                        "a base's code on the object"
                    )
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and any(
            isinstance(t, ast.Name) and t.id in _HOOKS
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        ):
            return f"the class binds a hook or `__slots__` (line {stmt.lineno})"
        elif not _data_statement(stmt):
            return (
                f"the class body binds names other than by `def` (line {stmt.lineno}): a method "
                "may be one of them"
            )
    return _subclass_reason(cls, world, tree_bases > 0, callers_closed)


def _self_called(cls: ast.ClassDef) -> set[str]:
    """Methods of the class called through `self` in its methods (the program inlines them)."""
    methods = _all_methods(cls)
    out: set[str] = set()
    for fn in methods.values():
        me = _self_param(fn)
        for n in walk([fn]):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == me
                and n.func.attr in methods
            ):
                out.add(n.func.attr)
    return out


def _subclass_reason(
    cls: ast.ClassDef, world: ClassWorld, tree_base: bool = True, callers_closed: bool = False
) -> str:
    """A class of the tree that may derive from `cls` and may change what a `self.m()` of its
    methods runs (the program inlines the class's own def), or "". Overriding a method no
    method calls through `self` only adds code that may run at any time, and that code names
    no attribute holding the buffer (checked over the tree): any order covers it. A class
    deriving through a later base (`type(name, (Mixin, type(x)), {})`) puts the bases before
    it first in the method resolution order: those must be classes of its own file that bind
    none of those names and derive from `object` or torch.nn.Module only."""
    found, why = world.lineage(cls.name)
    if why and not why.endswith("other than through its first base only"):
        return why
    why = joined_reason(cls, world, tree_base, callers_closed)
    if why:
        return why
    called = _self_called(cls)
    clash = called | set(_HOOKS) | {ANY}
    names = {cls.name} | {info.name for _, info in found}
    for path, info in found:
        if info.decorated:
            return f"class {info.name} ({_short(path)}:{info.line}) has a class decorator"
        over = sorted(info.binds & clash)
        if over:
            return (
                f"class {info.name} ({_short(path)}:{info.line}) may derive from it and binds "
                f"`{over[0]}`"
            )
        for ids in info.bases:
            if ids & names or ANY in ids:
                break  # the bases from here on come after the class's own lineage
            why = _preceding_base(ids, path, world, called)
            if why:
                return (
                    f"class {info.name} ({_short(path)}:{info.line}) may derive from it through "
                    f"a later base: {why}"
                )
    return ""


_PLAIN_BASE_WORDS = frozenset({"nn", "Module", "torch", "object", "ABC", "abc"})


def _preceding_base(ids: frozenset[str], path: str, world: ClassWorld, called: set[str]) -> str:
    """Why a base that comes before the class in some subclass's resolution order may run
    other code for a `self.m()` of the class, or ""."""
    if len(ids) != 1:
        return f"its base naming {sorted(ids)[:3]} is not one class of its file"
    (name,) = ids
    data = next((d for p, d in world.files if p == path), b"")
    infos = world._parsed(path, data) or []
    same = [i for i in infos if i.name == name]
    if len(same) != 1:
        return f"its base `{name}` is not one class of its file"
    base = same[0]
    over = sorted(base.binds & (called | set(_HOOKS) | {ANY}))
    if over:
        return f"its base `{name}` binds `{over[0]}`"
    if any(not ids2 <= _PLAIN_BASE_WORDS for ids2 in base.bases):
        return f"the bases of `{name}` are not only object or torch.nn.Module"
    library = sorted(n for n in called if n in LIBRARY_ATTRIBUTES)
    if library:
        return f"`{library[0]}` may be torch.nn.Module's, before the class's own"
    return ""


def _method_decorators_ok(cls: ast.ClassDef, held: set[str]) -> str:
    for fn in _all_methods(cls).values():
        if not _names(fn, held):
            continue
        if not runs_body_when_called(fn):
            return f"`{fn.name}` (line {fn.lineno}) is a generator or coroutine naming the buffer"
        for d in fn.decorator_list:
            func = d.func if isinstance(d, ast.Call) else d
            text = ast.unparse(func)
            if text in ("staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod"):
                continue
            if decorator_name(d) in _PROPERTY and not isinstance(d, ast.Call):
                continue  # a cycle of its own (`_properties`)
            if text.split(".")[-1] in {q.split(".")[-1] for q in _TRANSPARENT_DECORATORS}:
                continue
            return f"a decorator of `{fn.name}` (line {d.lineno}) may run it otherwise"
    return ""


def _library_base(cls: ast.ClassDef, resolver: Resolver) -> bool:
    scope = resolver.scope_of(cls)
    outer = scope.parent or scope
    return any(resolver.qualified(outer, b) in _MODULE_BASES for b in cls.bases)


def _reached_elsewhere(
    cls: ast.ClassDef,
    attr: str,
    tree: ast.Module,
    world: ClassWorld,
    own_paths: set[str],
    library_base: bool,
) -> str:
    """Where code other than `self.<a>` in a method of the class may reach an attribute `a`
    that may hold the buffer ("" if nowhere): file:line of the first such occurrence."""
    held = holders(cls, attr)
    for a in sorted(held) if library_base else ():
        if a in LIBRARY_ATTRIBUTES or a in _MODULE_STATE:
            return f"`{a}` may be named by torch.nn.Module's own code (a library attribute)"
    why = _method_decorators_ok(cls, held)
    if why:
        return why
    names = held | {mangle(a, cls.name) for a in held}
    allowed: set[int] = set()
    for fn in [*class_methods(cls).values(), *_properties(cls).values()]:
        me = _self_param(fn)
        stack: list[ast.AST] = list(fn.body)
        while stack:
            n = stack.pop()
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue  # a closure may run at any time, with the object it captured
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
                allowed.add(id(n))
            stack.extend(child_nodes(n))
    # Pre-order: an expression statement comes before its constant, so one walk knows the
    # docstrings (strings standing alone as statements) by the time it meets them.
    docstrings: set[int] = set()
    foreign: list[ast.Attribute] = []  # judged below: they may be on other classes' objects
    for n in walk([tree]):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant):
            docstrings.add(id(n.value))
        if isinstance(n, ast.Attribute) and n.attr in names and id(n) not in allowed:
            foreign.append(n)
        if (
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and id(n) not in docstrings
            and _DOTTED.fullmatch(n.value)
            and names & set(n.value.split("."))
        ):
            return f"the string {n.value[:40]!r} (line {n.lineno}) names the attribute"
    flagged = _flagged
    matter = frozenset(names)  # a lookup by a computed name of none of them passes
    far = (
        others_only(cls, tree, tree, foreign, world, own_paths, flagged, matter) if foreign else ""
    )
    # A binding by a computed name may store a function under a method's name: `self.m()`
    # then runs it, not the def the program inlines.
    defs = frozenset(n for m in _all_methods(cls) for n in (m, mangle(m, cls.name)))
    defs |= rebindable(cls, world)  # a base's name rebound: other code runs on the object
    far = far or reach_reason(cls, tree, world, own_paths, flagged, attrs=matter, bound=defs)
    if far:
        return far
    index = attribute_index(world)
    for a in sorted(names):
        for i in index.get(a, ()):
            path, data = world.files[i]
            if path in own_paths or os.path.realpath(path) in own_paths:
                continue
            if elsewhere_others_only(cls, tree, path, data, names, world, own_paths, flagged):
                continue
            m = re.search(rb"[.'\"][ \t]*" + re.escape(a.encode()) + rb"\b", data)
            line = data.count(b"\n", 0, m.start()) + 1 if m else 0
            return f"{_short(path)}:{line} names an attribute `{a}` (closed world)"
    return ""


def _flagged(data: bytes) -> bool:
    return _computed_reflection(data) >= 0


def _computed_reflection(data: bytes) -> int:
    """Offset of the first reflective use in `data` (see `_WHOLE_STATE`), or -1."""
    m = _WHOLE_STATE.search(data)
    first = m.start() if m else -1
    for c in _BY_NAME_CALL.finditer(data, 0, first if first >= 0 else len(data)):
        if not _LITERAL_SECOND.match(data, c.end()):
            return c.start()
    return first
