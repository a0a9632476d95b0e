"""A returned buffer that one caller of the tree reads before writing it: `unsafe`, with no
closed world over callers.

returned.py judges a function's returned buffer at ALL its callers, which needs every caller to
be known (a private function, or `callers-closed`). An `unsafe` needs only one path: one call in
the scanned tree that surely runs the function, in a caller whose own dataflow (the call taken as
an allocation nothing has written, returned.py's `_analyse`) reads the buffer before any write on
some path, while the function wrote no element of it before returning it (on any path); or
wrote only parts of known extent, which then start the caller's dataflow and the read must take
an element none of them covers (partial_reads.py). Then
"call the caller" is an execution that reads memory nobody wrote, whoever else calls the
function. Not where the allocation runs only under an `if` that compares with 0 or negates a
value (`if x.shape[0] == 0: return torch.empty(x.shape[0], ...)`): it may have no element
there, and a read of it reads nothing (`empty_guard`).

A call runs the function when summaries.py resolves it to this very def: a module-level name
bound once in its module (`f(...)`, never rebound; `unit.dynamic` refuses), an import of it from
another module of the tree (`from m import f`, `import m; m.f(...)`, through the project index),
or `self.m(...)` in a method of the def's own class where no class of the tree that derives from
it binds `m` (methods.py; where methods.py refuses only for a class made at run time from a base
of unknown class, or for bindings under computed names outside the class's files,
loose_lineage.py reads them, and the evidence names what it assumed). Where summaries.py refuses
only because other code may replace the def (a store of an attribute of its name, a
`sys.modules` entry or import hook that may stand for its module: `possible_callee`), the call
runs it wherever nothing replaces it; that is the path shown, and the evidence says so. Public
functions and methods count: code outside the tree may call them too, which only adds paths.

Assumptions, named in each finding's evidence (docs/whole-program.md, the rule page): the
caller can run (a function of the tree is called by someone; its own dataflow shows the path);
the calls the caller makes with the buffer are judged by the caller's dataflow as for any
allocation (an unknown callee handed it is a possible read, never a certain one).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Issue
from zeroopt.analysis.loose_lineage import loose_method_of
from zeroopt.analysis.methods import TREE_DEP
from zeroopt.analysis.partial_reads import carried, empty_guard, written
from zeroopt.analysis.resolve import Scope, runs_body_when_called
from zeroopt.analysis.returned import (
    UNSAFE_,
    Judgement,
    ReturnedJudge,
    _decide,
    _own_layout,
    _wrote_nothing,
    returned_only,
)
from zeroopt.analysis.returned_slots import describe, returned_as
from zeroopt.analysis.summaries import load_unit
from zeroopt.analysis.tree_naming import files_naming

if TYPE_CHECKING:
    from zeroopt.analysis.summaries import Unit

Function = ast.FunctionDef | ast.AsyncFunctionDef
_MAX_FILES = 24  # other files naming the function that are searched, at most
_MAX_CALLS = 16  # callers analysed, at most (the first that reads it decides)


class CallerRead(Judgement):
    """An `unsafe` shown by one caller: the message says so (not "judged at each")."""


def read_by_a_caller(
    judge: ReturnedJudge,
    fn: ast.AST,
    scope: Scope,
    outcome: BufferOutcome,
    contiguous: bool,
    certain: bool,
    alloc: ast.Call,
) -> CallerRead | None:
    """`unsafe` when one call of the tree that surely runs `fn` reads the buffer before any
    write, and `fn` wrote none of it; None otherwise (the verdict stays what it was)."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not runs_body_when_called(fn):
        return None
    if not returned_only(outcome):
        return None
    seed = None
    if not _wrote_nothing(outcome):
        got = carried(fn, alloc, outcome)  # partly written: its writes start the caller's flow
        if isinstance(got, str):
            return None
        seed = got
    if scope.parent is None or isinstance(
        scope.parent.node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        return None  # a nested def: returned.py judges its calls (they are all in sight)
    if empty_guard(fn, alloc):
        return None
    assert outcome.exit_state is not None  # returned_only
    slot, why = returned_as(outcome.exit_state.escapes)
    if why:
        return None
    contiguous = contiguous and _own_layout(outcome)
    for call, cscope, j, how in sure_calls(judge, fn, scope.parent.is_class):
        owner = cscope.node
        if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef) or owner is fn:
            continue
        at = j._analyse(owner, cscope, call, contiguous, certain, slot, seed)
        if _decide(at) != UNSAFE_:
            continue
        place = "" if j is judge else f"{j.unit.path}:"
        where = f"`{fn.name}(...)` at {place or 'line '}{call.lineno}{describe(slot)}"

        def here(line: int, text: str, place: str = place) -> tuple[int, str]:
            return (fn.lineno, f"{place}{line}: {text}") if place else (line, text)

        issues = [
            Issue(
                UNSAFE,
                here(i.line, "")[0],
                i.kind,
                here(i.line, f"{i.text} (in `{owner.name}`, which gets it from {where})")[1],
            )
            for i in at.issues
            if i.severity == UNSAFE
        ]
        wrote = (
            f"`{fn.name}` writes no element of the buffer on any path before returning it, and "
            f"`{owner.name}` reads it before any write on some path of its own"
            if seed is None
            else f"{written(seed, fn.name)}, and `{owner.name}` reads an element none of them "
            "covers before any write of its own covers it, on some path of its own"
        )
        assumption = (
            f"one path: `{owner.name}` ({place or 'line '}{call.lineno}) calls `{fn.name}`, "
            f"and that call surely runs this def ({how}); {wrote} (other callers, in or outside "
            "the tree, only add paths)"
        )
        result = BufferOutcome(issues=issues, reached=True, assumed=at.assumed)
        caller = f"`{owner.name}` ({place or 'line '}{call.lineno}{describe(slot)})"
        return CallerRead(
            UNSAFE_, f"read by the caller `{owner.name}`", result, assumption, [caller]
        )
    return None


def sure_calls(
    judge: ReturnedJudge, fn: Function, method: bool
) -> list[tuple[ast.Call, Scope, ReturnedJudge, str]]:
    """The calls of the tree that summaries.py resolves to `fn` itself, with why each is
    certain: those of its own module first, then those of the files that name it."""
    found: list[tuple[ast.Call, Scope, ReturnedJudge, str]] = []
    found += _calls_to(judge, fn, None)
    if len(found) >= _MAX_CALLS:
        return found[:_MAX_CALLS]
    home = judge.unit.module
    project = judge.summaries.project
    if home is None or project is None or method:
        return found  # a method: only `self.m(...)` in its own class resolves (methods.py)
    world = judge.summaries.world
    named = files_naming(world, judge.unit.path, judge.real_path, fn.name)
    for i in named[:_MAX_FILES]:
        path = world.files[i][0]
        module = project.index.names.get(path)
        if module is None or project.index.modules.get(module) != path:
            continue
        unit = load_unit(project, module)
        if unit is None or unit.dynamic:  # project.DYNAMIC_PATTERN: `globals()`, `vars()`, ...
            continue
        found += _calls_to(judge._child(unit, path), fn, home)
        if len(found) >= _MAX_CALLS:
            break
    return found[:_MAX_CALLS]


def _loose_call(
    j: ReturnedJudge, fn: Function, call: ast.Call, scope: Scope, home: str | None
) -> list[tuple[ast.Call, Scope, ReturnedJudge, str]]:
    """`self.m(...)` in its own module that methods.py refuses only for a class made at run
    time from a base of unknown class (loose_lineage.py)."""
    func = call.func
    if home is not None or not j.summaries.closed_world:
        return []
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return []
    found = loose_method_of(scope, func.value.id, func.attr, j.unit, j.summaries.world)
    if found is None or found[0] is not fn:
        return []
    project = j.summaries.project
    if project is not None:
        project.deps[TREE_DEP] = j.summaries.world.digest  # any file may add a subclass
    return [(call, scope, j, f"`{func.value.id}.{func.attr}`: {found[2]}")]


def _calls_to(
    j: ReturnedJudge, fn: Function, home: str | None
) -> list[tuple[ast.Call, Scope, ReturnedJudge, str]]:
    """The calls in `j`'s module that resolve to `fn` (`home`: its module, when another)."""
    unit: Unit = j.unit
    resolver = unit.resolver
    found = []
    for call, scope in resolver.calls:
        func = call.func
        spelled = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else None
        )
        if spelled is None or (spelled != fn.name and home is None):
            continue
        if isinstance(func, ast.Attribute) and spelled != fn.name:
            continue
        possible = j.summaries.possible_callee(scope, func, resolver.qualified(scope, func))
        if possible is None:
            found += _loose_call(j, fn, call, scope, home)
            continue
        callee, assumed = possible
        if home is None:
            if callee.fn is not fn:
                continue
        elif (
            callee.unit.module != home or callee.fn.name != fn.name or callee.fn.lineno != fn.lineno
        ):
            continue
        found.append((call, scope, j, f"`{callee.name}`: {assumed or callee.why}"))
    return found
