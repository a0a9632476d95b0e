"""Function summaries: what a function of the scanned tree does to one tensor parameter.

A call `helper(buf)` hands the buffer to code the analysis of the caller cannot see. When the
callee is one plain `def` of the scanned tree, the same engine runs on the callee with the
parameter bound to a fresh, unwritten buffer at entry, and the result is kept as a summary:

- WRITES: on every path to a normal return the parameter is written in full before any read,
  escape or hand-off, and nothing is recorded against it (a call is then a full write of the
  argument; an exception leaving the callee proves nothing, like any raising write);
- READS: some path reads it before any write, with no assumption about other callees (the call
  is a definite read of the argument);
- UNTOUCHED: never read, written, stored, returned or handed on (only metadata): the call is
  neutral for the buffer;
- UNKNOWN: anything else, or a callee that cannot be summarised (why says so).

Summaries are memoised per (function, parameter): those of this file's module per file, those of
other modules once per worker, with the modules read recorded as dependencies of every file that
uses them (project.py), so the per-file cache is invalidated when one changes. The call-site
conditions (one argument reaches the buffer, nothing else can) are checked in
dataflow/summary_calls.py; method resolution under the closed-world assumption in methods.py.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from zeroopt.analysis.cfg import Builder
from zeroopt.analysis.import_time import replaced_at_import
from zeroopt.analysis.methods import TREE_DEP, ClassWorld, _short, method_of
from zeroopt.analysis.project import binds_dynamically
from zeroopt.analysis.resolve import (
    Resolver,
    Scope,
    declared_globals,
    runs_body_when_called,
    walk_bfs,
    walk_scope,
)
from zeroopt.analysis.scalars import int_names
from zeroopt.analysis.summary_conditions import read_conditions

if TYPE_CHECKING:
    from collections.abc import Callable

    from zeroopt.analysis.cfg import CFG
    from zeroopt.analysis.dataflow import Context
    from zeroopt.analysis.kernel_contracts import KernelContract
    from zeroopt.analysis.options import Contract
    from zeroopt.analysis.project import ProjectView

WRITES = "writes"
READS = "reads"
UNTOUCHED = "untouched"
UNKNOWN = "unknown"

_MAX_DEPTH = 4  # summaries computed inside the computation of a summary, at most
PARAMETER_MARKER = "__zeroopt_parameter__"
# Decorators that call the function with the same arguments and change no tensor.
HARMLESS_DECORATORS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)


@dataclass(frozen=True)
class Summary:
    kind: str
    why: str = ""  # UNKNOWN: why; READS: what reads it first
    line: int = 0  # READS: the line of that read
    # READS: the other parameters a test on the way to that read depends on (summary_conditions.py)
    conditions: tuple[str, ...] = ()
    # Of those, the ones a callee's test depends on (handed on to it): never evaluated here.
    handed: tuple[str, ...] = ()
    returns: bool = False  # WRITES: the function returns a value (it may be the parameter)


@dataclass
class Unit:
    """One parsed module whose functions may be summarised."""

    tree: ast.Module
    resolver: Resolver
    lines: list[str]
    path: str  # as shown in evidence
    module: str | None
    frames_read: bool
    dynamic: bool  # may rebind its names at run time (globals(), setattr(), exec(), ...)
    src_memo: dict[int, tuple[ast.AST, str]] = field(default_factory=dict)
    _defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None

    def function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module's top-level `def name` when it is the name's only binding in the module."""
        if self._defs is None:
            self._defs = unique_defs(self.tree)
        return self._defs.get(name)


@dataclass(frozen=True)
class Callee:
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    unit: Unit
    shift: int  # leading parameters bound by the receiver (`self` of a bound method)
    name: str  # for the evidence
    why: str  # the conditions that made the resolution certain, for the evidence

    @property
    def where(self) -> str:
        return f"{self.unit.path}:{self.fn.lineno}"

    def parameter(self, key: int | str) -> str | None:
        """The parameter an argument at position `key` (or keyword `key`) binds, if certain."""
        a = self.fn.args
        positional = [*a.posonlyargs, *a.args]
        if isinstance(key, int):
            i = key + self.shift
            return positional[i].arg if i < len(positional) else None
        names = [p.arg for p in a.args[max(0, self.shift - len(a.posonlyargs)) :]]
        names += [p.arg for p in a.kwonlyargs]
        return key if key in names else None


# (tree digest, module) -> why an import of the module may yield another object ("" if none).
_REPLACED: dict[tuple[str, str], str] = {}


def unique_defs(module: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level defs whose name nothing else in the module binds (no other statement, no
    `global` declaration anywhere, no second def)."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    other: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.setdefault(stmt.name, []).append(stmt)
            roots: list[ast.AST] = [*stmt.decorator_list, stmt.args]
        else:
            roots = [stmt]
        for root in roots:
            for n in walk_bfs([root]):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                    other.add(n.id)
                elif isinstance(n, ast.alias):
                    other.add((n.asname or n.name).split(".")[0])
                elif isinstance(
                    n,
                    ast.FunctionDef
                    | ast.ClassDef
                    | ast.AsyncFunctionDef
                    | ast.ExceptHandler
                    | ast.MatchAs
                    | ast.MatchStar,
                ):
                    if n.name:
                        other.add(n.name)
                elif isinstance(n, ast.MatchMapping) and n.rest:
                    other.add(n.rest)
    other |= declared_globals(module)
    return {k: v[0] for k, v in defs.items() if len(v) == 1 and k not in other}


def _returns_value(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(n, ast.Return)
        and n.value is not None
        and not (isinstance(n.value, ast.Constant) and n.value.value is None)
        for n in walk_scope(fn.body)
    )


class Summaries:
    """Resolves callees and computes their summaries for the analysis of one file."""

    def __init__(
        self,
        unit: Unit,
        project: ProjectView | None,
        contracts: dict[str, Contract],
        kernels: tuple[KernelContract, ...],
        closed_world: bool,
        partial_tree: str = "",
    ) -> None:
        self.unit = unit
        self.project = project
        self.contracts = contracts
        self.kernels = kernels
        self.closed_world = closed_world
        self.partial_tree = partial_tree  # why the closed world is off (options.py), or ""
        # (id of the def, parameter) -> (the def, kept so that its id is not reused; summary;
        # the deps computing it recorded): shared by the engines of every module this file's
        # analysis reaches. A hit records the deps again: it may come while another module's
        # summary is computed, which `summary_memo` keeps, with what it recorded, for later files.
        self._memo: dict[tuple[int, str], tuple[ast.AST, Summary, dict[str, str]]] = {}
        self._stack: list[tuple[int, str]] = []
        self._callees: dict[int, tuple[ast.expr, Callee | None, dict[str, str]]] = {}
        self._world: ClassWorld | None = None
        # id of a call -> (the call, why its method was not resolved by name): dispatch.py.
        self.obstacles: dict[int, tuple[ast.expr, str]] = {}
        # Per called expression: why the def its name resolves to is not the one that runs.
        self.refused: dict[int, tuple[ast.expr, str]] = {}
        self._refusal = ""
        # Per called expression refused only because other code may replace the def: that def,
        # which runs wherever nothing replaces it (an `unsafe` may rest on it: possible_callee).
        self._unreplaced: dict[int, tuple[ast.expr, Callee]] = {}
        self._candidate: Callee | None = None
        self._at_import: dict[tuple[str | None, str | None, str, bool], str] = {}

    # --- resolution ------------------------------------------------------------------------
    def callee(self, scope: Scope, func: ast.expr, qual: str | None) -> Callee | None:
        """The one plain def a call of `func` in `scope` runs, or None when not certain. Asked at
        every visit of the call in the fixpoint: memoised per call (with what it recorded)."""
        key = id(func)
        hit = self._callees.get(key)
        if hit is not None and hit[0] is func:
            if hit[2] and self.project is not None:
                self.project.deps.update(hit[2])
            return hit[1]
        self._refusal = ""
        self._candidate = None

        def resolve() -> Callee | None:
            found = self._resolve(scope, func, qual)
            if self._refusal:
                self.refused[key] = (func, self._refusal)
                if self._candidate is not None:
                    self._unreplaced[key] = (func, self._candidate)
            return found

        consulted: dict[str, str] = {}
        if self.project is None:
            found = resolve()
        else:
            found, consulted = self.project.recording(resolve)
        self._callees[key] = (func, found, consulted)
        return found

    def possible_callee(
        self, scope: Scope, func: ast.expr, qual: str | None
    ) -> tuple[Callee, str] | None:
        """For an `unsafe` only: (the def a call runs, the assumption it rests on). The def is
        `callee`'s where that is certain (no assumption), else the module's own def of the name
        where `callee` refused only because other code may replace it (a store of an attribute
        of that name, a `sys.modules` entry or import hook that may stand for its module): where
        nothing replaces it, that def runs, so a read it makes is a read on that path. A `safe`
        never rests on this."""
        found = self.callee(scope, func, qual)
        if found is not None:
            return found, ""
        hit = self._unreplaced.get(id(func))
        refused = self.refused.get(id(func))
        if hit is None or hit[0] is not func or refused is None or refused[0] is not func:
            return None
        if self.partial_tree:
            return None  # the files that may replace it, at import or later, were not read
        # A bare name (`f(...)`, bound by `from D import f` or a def of the module) reaches the
        # def without the attributes of the packages above D; `pkg.mod.f(...)` goes through them.
        key = (
            self.unit.module,
            hit[1].unit.module,
            hit[1].fn.name,
            not isinstance(func, ast.Name),
        )
        if key not in self._at_import:
            self._at_import[key] = replaced_at_import(self.project, list(key[:2]), key[2], key[3])
        if self._at_import[key]:
            return None  # replaced before any call can run (import_time.py)
        return hit[1], (
            f"assuming the call runs `{hit[1].name}` ({hit[1].where}), as it does wherever "
            f"nothing replaces it: {refused[1][:160]}"
        )

    def _resolve(self, scope: Scope, func: ast.expr, qual: str | None) -> Callee | None:
        if isinstance(func, ast.Name) and qual is None:
            if self.unit.dynamic or not _module_level(scope, func.id):
                return None
            fn = self.unit.function(func.id)
            return self._plain(
                fn, self.unit, 0, func.id, "the only binding of the name in its module"
            )
        if qual is not None and self.project is not None:
            return self._imported(qual)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if not self.closed_world:
                if self.partial_tree:
                    self._refusal = f"the closed world is off: {self.partial_tree}"
                return None
            found = method_of(scope, func.value.id, func.attr, self.unit, self.world)
            if found is None:
                return None
            fn, shift, why = found
            if self.project is not None:
                self.project.deps[TREE_DEP] = self.world.digest  # any file may add a subclass
            return Callee(fn, self.unit, shift, f"{func.value.id}.{func.attr}", why)
        return None

    @property
    def world(self) -> ClassWorld:
        if self._world is None:
            self._world = ClassWorld.of(self.project, self.unit)
        return self._world

    def _plain(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef | None,
        unit: Unit,
        shift: int,
        name: str,
        why: str,
    ) -> Callee | None:
        if fn is None or not plain_decorators(fn, unit, frozenset()):
            return None
        patched = self._patched(fn.name, unit)
        if patched:
            self._refusal = patched
            self._candidate = Callee(fn, unit, shift, name, why)
            return None
        return Callee(fn, unit, shift, name, why)

    def _patched(self, name: str, unit: Unit) -> str:
        """Why a module's function `name` may be replaced from outside its module: a file of the
        tree assigns an attribute `name` (`pkg.g = ...`, the spellings methods.py reads) or binds
        attributes under names its text need not spell (a computed `setattr`, ...)."""
        if self.partial_tree:
            return f"a file not scanned may replace the function ({self.partial_tree})"
        world = self.world
        if self.project is not None:
            self.project.deps[TREE_DEP] = world.digest  # any file may add such a store
        stored = world.stored_in(name)
        if stored is not None:
            return f"{_short(stored)} assigns an attribute `{name}`: it may replace the function"
        return world.bound_dynamically(name, (unit.module or "", unit.path))

    def replaced(self, module: str) -> str:
        """Why an import of `module` may yield another object than its file's module: a file of
        the tree may put one in `sys.modules` under its name or a package's above it
        (anyorder_stores.modules_replaced), or change where imports find modules (an import
        hook in `sys.meta_path`, a folder put on `sys.path` or a package's `__path__`:
        anyorder_stores.import_system_altered); once per tree digest and module."""
        from zeroopt.analysis.anyorder_stores import import_system_altered, modules_replaced

        world = self.world
        assert self.project is not None
        self.project.deps[TREE_DEP] = world.digest  # any file may add such a store
        key = (world.digest or f"id:{id(world)}", module)
        if key not in _REPLACED:
            if len(_REPLACED) > 4096:
                _REPLACED.clear()
            _REPLACED[key] = modules_replaced(
                world, (self.project.index.modules[module],)
            ) or import_system_altered(world)
        return _REPLACED[key]

    def _imported(self, qual: str) -> Callee | None:
        project = self.project
        assert project is not None
        module, _, name = qual.rpartition(".")
        if not module or not project.is_module(module):
            return None
        if module == self.unit.module:
            unit: Unit | None = self.unit
        else:
            if project.function_binding(module, name) is None:
                return None
            unit = load_unit(project, module)
            if unit is not None and not unit.dynamic:
                replaced = self.replaced(module)
                if replaced:
                    fn = unit.function(name)
                    if fn is not None and self._plain(fn, unit, 0, qual, "") is not None:
                        why = f"the only binding of `{name}` in {module}"
                        self._candidate = Callee(fn, unit, 0, qual, why)
                    elif self._candidate is not None:
                        replaced = f"{replaced}; {self._refusal}"
                    self._refusal = replaced
                    return None
        if unit is None or unit.dynamic:
            return None
        return self._plain(
            unit.function(name), unit, 0, qual, f"the only binding of `{name}` in {module}"
        )

    # --- summaries -------------------------------------------------------------------------
    def summary(self, callee: Callee, param: str) -> Summary:
        key = (id(callee.fn), param)
        if callee.unit is not self.unit and self.project is not None:
            return self._shared(callee, param)
        hit = self._memo.get(key)
        project = self.project
        if hit is None:
            if project is None:
                hit = (callee.fn, self._compute(callee, param), {})
            else:
                result, consulted = project.recording(lambda: self._compute(callee, param))
                hit = (callee.fn, result, consulted)
            self._memo[key] = hit
        elif project is not None:
            project.deps.update(hit[2])
        return hit[1]

    def _shared(self, callee: Callee, param: str) -> Summary:
        """Summaries of other modules, kept for the life of the worker with what they read."""
        project = self.project
        assert project is not None
        memo = project.summary_memo
        key = (callee.unit.module, callee.fn.lineno, callee.fn.name, param)
        hit = memo.get(key)
        if hit is not None:
            project.deps.update(hit[1])
            return hit[0]

        def compute() -> Summary:
            if callee.unit.module:
                project.entry(callee.unit.module)  # records the module's SHA
            return self._compute(callee, param)

        memo[key] = project.recording(compute)
        return memo[key][0]

    def _compute(self, callee: Callee, param: str) -> Summary:
        key = (id(callee.fn), param)
        if key in self._stack:
            return Summary(UNKNOWN, "it calls itself (recursion)")
        if len(self._stack) >= _MAX_DEPTH:
            return Summary(UNKNOWN, f"summaries nested more than {_MAX_DEPTH} deep")
        fn = callee.fn
        if not runs_body_when_called(fn):
            kind = "an async def" if isinstance(fn, ast.AsyncFunctionDef) else "a generator"
            return Summary(UNKNOWN, f"{kind}: its body does not run at the call")
        self._stack.append(key)
        try:
            return self._run(callee, param)
        finally:
            self._stack.pop()

    def _run(self, callee: Callee, param: str) -> Summary:
        from zeroopt.analysis.dataflow import UNSAFE, analyse_buffer

        fn = callee.fn
        unit = callee.unit
        scope = unit.resolver.scopes.get(fn)
        if scope is None:
            return Summary(UNKNOWN, "no scope")
        marker = ast.Call(func=ast.Name(id=PARAMETER_MARKER, ctx=ast.Load()), args=[], keywords=[])
        stmt = ast.Assign(targets=[ast.Name(id=param, ctx=ast.Store())], value=marker)
        for n in (marker, marker.func, stmt, stmt.targets[0]):
            n.lineno = n.end_lineno = fn.lineno
            n.col_offset = n.end_col_offset = 0
        qualify = partial(unit.resolver.qualified, scope)
        cfg = Builder(qualify).build([stmt, *fn.body])
        args = fn.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        nested = self if unit is self.unit else self._for(unit)
        ctx = function_context(
            nested, unit, marker, scope, cfg, fn.body, [p for p in params if p.arg != param],
            qualify, certain=True,  # a read first on every way in, for both rules
        )  # fmt: skip
        outcome = analyse_buffer(cfg, ctx)
        if outcome.gave_up:
            return Summary(UNKNOWN, outcome.gave_up)
        for issue in outcome.issues:
            if issue.severity == UNSAFE and issue.kind == "read":
                if any(at <= issue.line for at, _ in outcome.assumed):
                    continue  # relies on another callee not writing it
                carried = {
                    name
                    for at, names in outcome.conditioned
                    if at <= issue.line
                    for name in names.split(",")
                }
                conditions, handed = read_conditions(fn, param, issue.line, carried)
                return Summary(
                    READS,
                    issue.text.removeprefix("read before any write: "),
                    issue.line,
                    conditions=conditions,
                    handed=handed,
                )
        end = outcome.exit_state
        if outcome.issues or end is None or not end.live:
            first = outcome.issues[0].text if outcome.issues else "it never returns normally"
            return Summary(UNKNOWN, first)
        if end.full:
            return Summary(WRITES, returns=_returns_value(fn))
        if (
            not outcome.writes
            and not outcome.partial_writes
            and not outcome.view_writes
            and not outcome.relayouts
            and not end.touched
            and not end.some_write
            and not end.escapes
            and not end.lost
            and not end.hidden
        ):
            return Summary(UNTOUCHED)
        return Summary(UNKNOWN, "written in part or only on some paths")

    def for_unit(self, unit: Unit) -> Summaries:
        """The engine of another module's functions (returned.py judges calls there)."""
        return self._for(unit)

    def _for(self, unit: Unit) -> Summaries:
        """The engine of another module's functions, sharing the recursion stack."""
        other = Summaries(
            unit, self.project, self.contracts, self.kernels, self.closed_world, self.partial_tree
        )
        other._stack = self._stack
        other._world = self._world
        other._memo = self._memo
        return other


def function_context(
    summaries: Summaries,
    unit: Unit,
    alloc: ast.Call,
    scope: Scope,
    cfg: CFG,
    body: list[ast.stmt],
    params: list[ast.arg],
    qualify: Callable[[ast.expr], str | None],
    *,
    certain: bool,
    contiguous: bool = False,
    **more: Any,
) -> Context:
    """The dataflow context of one function of `unit` analysed with an allocation at its start
    (a parameter for a summary, a caller of a returned buffer, a method reading `self`'s): what
    those analyses share, built in one place so they cannot drift apart. `params` are the
    parameters whose integer values are unknown; `more` holds the analysis's own settings."""
    from zeroopt.analysis.dataflow import Context

    unstable = set(scope.captured | scope.global_names | scope.nonlocal_names)
    return Context(
        alloc=alloc,
        resolver=unit.resolver,
        scope=scope,
        contracts=summaries.contracts,
        source_lines=unit.lines,
        escape_on_bind=frozenset(unstable),
        contiguous=contiguous,
        capture_nodes=frozenset(cfg.capture_nodes),
        int_names=int_names(body, params, unstable, qualify),
        kernels=summaries.kernels,
        frames_read=unit.frames_read,
        certain_reads_only=certain,
        src_memo=unit.src_memo,
        summaries=summaries,
        **more,
    )


def _module_level(scope: Scope, name: str) -> bool:
    """`name` in `scope` denotes the module's binding: no function or comprehension in between
    binds it (a class body binds for its own statements only)."""
    current: Scope | None = scope
    first = True
    while current is not None:
        if current.parent is None:
            return True
        if name in current.global_names:
            return True
        if (first or not current.is_class) and name in current.bindings:
            return False
        first = False
        current = current.parent
    return False


def plain_decorators(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, unit: Unit, allowed: frozenset[str]
) -> bool:
    """Every decorator is a known harmless one (or one of `allowed`, e.g. staticmethod)."""
    scope = unit.resolver.scopes.get(fn)
    outer = scope.parent if scope is not None else None
    if outer is None:
        return not fn.decorator_list
    for dec in fn.decorator_list:
        target = (
            dec.func if isinstance(dec, ast.Call) and not dec.args and not dec.keywords else dec
        )
        if not isinstance(target, ast.Name | ast.Attribute):
            return False
        qual = unit.resolver.qualified(outer, target)
        if qual is None or (qual not in HARMLESS_DECORATORS and qual not in allowed):
            return False
        if qual in allowed and target is not dec:
            return False
    return True


def make_unit(
    tree: ast.Module,
    resolver: Resolver,
    text: str,
    path: str,
    module: str | None,
    frames_read: bool,
) -> Unit:
    lines = text.splitlines()
    return Unit(
        tree,
        resolver,
        lines,
        path,
        module,
        frames_read,
        binds_dynamically(text),
    )


# Units `load_unit` keeps, least recently used dropped first. Consecutive files of a package ask
# the same modules: over 600 consecutive files of the wheels, 16 kept made 504 parses for 246
# modules, 48 made 304 (each a parse and a resolver, about 10 ms; each unit kept about 1.3 MB).
_UNITS_KEPT = 48


def load_unit(project: ProjectView, module: str) -> Unit | None:
    """Another module of the tree, parsed once per worker (a few kept at a time). Kept with the
    dependencies its loading recorded (the module's SHA, and what the resolver's bindings were
    resolved through: star imports' exports, re-exports): a later file using the kept unit
    records them again, as the file that loaded it did."""
    units = project.summary_units
    if module in units:
        kept = units.pop(module)
        units[module] = kept  # most recently used last
        project.deps.update(kept[1])
        return kept[0]
    unit, consulted = project.recording(lambda: _read_unit(project, module))
    units[module] = (unit, consulted)
    while len(units) > _UNITS_KEPT:
        units.pop(next(iter(units)))
    return unit


def _read_unit(project: ProjectView, module: str) -> Unit | None:
    from zeroopt.analysis.semantics import FRAME_PATTERN, FRAME_WORDS

    loaded = project.module_tree(module)
    if loaded is None:
        return None
    tree, text, real = loaded
    path = os.path.relpath(real) if not os.path.relpath(real).startswith("..") else real
    resolver = Resolver.build(
        tree,
        module_name=module,
        is_package=module in project.index.packages,
        project=project,
        dynamic=binds_dynamically(text),
    )
    frames = any(w in text for w in FRAME_WORDS) and re.search(FRAME_PATTERN, text) is not None
    return make_unit(tree, resolver, text, path, module, frames)
