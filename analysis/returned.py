"""A buffer a function returns to its caller, judged at every call of the function.

`def _alloc(n): return torch.zeros(n)` cannot prove anything alone: what matters is what its
callers do with the result. Under the closed-world assumption over callers, each call
`x = _alloc(...)` in the scanned tree is analysed as if the call allocated a fresh buffer that
nothing has written (what the callee wrote before returning is forgotten, which only makes a
`safe` harder), and the site is

- `safe` when the callee's own analysis has nothing against the buffer but `return` of the
  buffer itself, and every call is proven to write it in full before any read (or never to read
  it);
- `unsafe` when some caller reads it before any write on some path and the callee wrote no
  element of it before returning it (the evidence names that caller);
- `unproven` otherwise, naming the first caller (or reference) that could not be decided.

Conditions, each a reason for `unproven` when it fails (docs/whole-program.md, the rule page):
the callee is a plain `def` (not async, not a generator, no decorator but harmless ones) that no
outside code can reasonably call: a module-level def whose name starts with one `_`, a `_method`
of a class (resolved through `self._m(...)` by analysis/methods.py's closed world), or a def
nested in a function; every occurrence of its name in the tree (every file, strings included) is
the callee of a call in its own module that resolves to it (a method's name in any file: an
instance may be handed anywhere, no import of its module need be spelled there); no file that
may reach it looks an attribute up by a name its text does not spell (`getattr(x, name)`,
`attrgetter`, `methodcaller`, `getmembers`, a joined literal `"_al" "loc"`); each such call runs inside a
function; the returned value is the buffer itself on every `return` that returns it (not a view,
not inside a tuple). A caller that returns it again is judged at its own callers, at most
`MAX_DEPTH` functions up, never through recursion. `closed-world = false` turns it off.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from zeroopt.analysis.cfg import CFG, Builder
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Issue, analyse_buffer
from zeroopt.analysis.dataflow.outcome import RETURNED, RETURNED_VIEW, returned_slot
from zeroopt.analysis.methods import TREE_DEP
from zeroopt.analysis.records import plain_dataclasses
from zeroopt.analysis.resolve import Scope, declared_globals, runs_body_when_called, walk_bfs
from zeroopt.analysis.returned_methods import method_callers
from zeroopt.analysis.returned_modules import foreign_callers
from zeroopt.analysis.returned_slots import Slot, caller_copy, describe, returned_as
from zeroopt.analysis.summaries import function_context, plain_decorators
from zeroopt.analysis.tree_naming import naming_files

if TYPE_CHECKING:
    from zeroopt.analysis.state import State
    from zeroopt.analysis.summaries import Summaries, Unit

MAX_DEPTH = 3  # functions up the chain of callers that return the buffer again, at most
SAFE_ = "safe"
UNSAFE_ = "unsafe"
UNPROVEN_ = "unproven"
_EXIT_TEXT = f"not fully written before the function returns, and {RETURNED}"
Function = ast.FunctionDef | ast.AsyncFunctionDef


_METHOD_DECORATORS = frozenset({"builtins.staticmethod", "builtins.classmethod"})


@dataclass
class Judgement:
    verdict: str  # SAFE_, UNSAFE_ or UNPROVEN_
    why: str  # what decided it (UNPROVEN_: what could not be decided)
    outcome: BufferOutcome | None = None  # SAFE_/UNSAFE_: what the finding is built from
    assumption: str = ""
    callers: list[str] = field(default_factory=list)  # "function (line N)" of each call judged
    callers_unknown: bool = False  # UNPROVEN_ because the tree may not show every caller


def returned_only(outcome: BufferOutcome) -> bool:
    """The function's own analysis has nothing against the buffer but returning it itself, or
    a view of every element of it."""
    end = outcome.exit_state
    if outcome.gave_up or not outcome.reached or end is None or not end.escapes:
        return False
    if any(
        how not in (RETURNED, RETURNED_VIEW) and returned_slot(how) is None
        for _, how in end.escapes
    ):
        return False
    return (
        len(outcome.issues) == 1
        and outcome.issues[0].kind == "escape"
        and outcome.issues[0].text.startswith(_EXIT_TEXT)
    )


def _own_layout(outcome: BufferOutcome) -> bool:
    """Every return hands back the buffer itself (alone or in a display), not a view in another
    layout."""
    end = outcome.exit_state
    return end is not None and all(how != RETURNED_VIEW for _, how in end.escapes)


def _wrote_nothing(outcome: BufferOutcome) -> bool:
    end = outcome.exit_state
    return (
        end is not None
        and not outcome.writes
        and not outcome.partial_writes
        and not outcome.view_writes
        and not end.touched
        and not end.some_write
    )


def _decide(outcome: BufferOutcome) -> str:
    if outcome.gave_up or not outcome.reached:
        return UNPROVEN_
    if any(i.severity == UNSAFE for i in outcome.issues):
        return UNSAFE_
    return UNPROVEN_ if outcome.issues else SAFE_


class ReturnedJudge:
    """Judges the returned buffers of one file's functions at their callers in that file."""

    def __init__(
        self, summaries: Summaries, real_path: str | None, callers_closed: bool = False
    ) -> None:
        self.summaries = summaries
        self.callers_closed = callers_closed  # public functions' callers too (options.py)
        self.unit = summaries.unit
        self.real_path = real_path
        self._cfgs: dict[tuple[int, ...], CFG] = {}
        self._copies: dict[tuple[int, ...], tuple[Function, Scope]] = {}
        self._calls: dict[int, tuple[ast.Call, Scope]] | None = None
        self._via: dict[int, ReturnedJudge] = {}  # id of a call in another module -> its judge
        self._children: dict[str, ReturnedJudge] = {}
        self._possible: set[int] = set()  # ids of calls that may run another def instead

    # --- the entry point -------------------------------------------------------------------
    def judge(
        self,
        fn: ast.AST,
        scope: Scope,
        outcome: BufferOutcome,
        contiguous: bool,
        certain: bool,
        chain: tuple[int, ...] = (),
    ) -> Judgement | None:
        """None where the rule does not apply (not returned only, or closed world off)."""
        if not self.summaries.closed_world or not returned_only(outcome):
            return None
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        name = fn.name
        if not runs_body_when_called(fn):
            return Judgement(UNPROVEN_, f"`{name}` is a generator or an async def")
        if id(fn) in chain:
            return Judgement(UNPROVEN_, f"`{name}` calls itself through its callers (recursion)")
        if len(chain) >= MAX_DEPTH:
            return Judgement(UNPROVEN_, f"returned through more than {MAX_DEPTH} functions")
        # A view in another layout (`.t()`, `.view(-1)`): the caller's "buffer" is the view, every
        # element of the buffer once; its layout proves nothing.
        contiguous = contiguous and _own_layout(outcome)
        assert outcome.exit_state is not None  # returned_only
        slot, why = returned_as(outcome.exit_state.escapes)
        if why:
            return Judgement(UNPROVEN_, f"`{name}`: {why}")
        calls, why, assumption = self._callers(fn, scope)
        if why:
            return Judgement(UNPROVEN_, why, callers_unknown=True)
        if not calls:
            return Judgement(UNPROVEN_, f"`{name}` is never called in the scanned tree")
        written: list[tuple[int, str]] = []
        undecided: Judgement | None = None
        judged: list[str] = []
        for call, cscope in calls:
            owner = cscope.node
            j = self._via.get(id(call), self)
            # A call in another module: its lines are shown with its path, at the def's line.
            place = "" if j is self else f"{j.unit.path}:"
            where = f"`{name}(...)` at {place or 'line '}{call.lineno}{describe(slot)}"

            def here(line: int, text: str, place: str = place) -> tuple[int, str]:
                return (fn.lineno, f"{place}{line}: {text}") if place else (line, text)

            if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef):
                undecided = undecided or Judgement(
                    UNPROVEN_, f"{where} runs outside a function (module or class body)"
                )
                continue
            judged.append(f"`{owner.name}` ({place or 'line '}{call.lineno}{describe(slot)})")
            at = j._analyse(owner, cscope, call, contiguous, certain, slot)
            verdict = _decide(at)
            if verdict == UNSAFE_:
                if id(call) in self._possible:
                    undecided = undecided or Judgement(
                        UNPROVEN_,
                        f"{where} in `{owner.name}` reads it before writing it, but that call "
                        f"may run another class's `{name}` (its class shares instances with "
                        f"`{name}`'s only through a class made from several bases)",
                    )
                    continue
                if not _wrote_nothing(outcome):
                    undecided = undecided or Judgement(
                        UNPROVEN_,
                        f"{where} in `{owner.name}` reads it before writing it, but `{name}` "
                        "wrote part of it before returning it",
                    )
                    continue
                issues = [
                    Issue(
                        UNSAFE,
                        here(i.line, "")[0],
                        i.kind,
                        here(i.line, f"{i.text} (in `{owner.name}`, which gets it from {where})")[
                            1
                        ],
                    )
                    for i in at.issues
                    if i.severity == UNSAFE
                ]
                result = BufferOutcome(issues=issues, reached=True, assumed=at.assumed)
                return Judgement(
                    UNSAFE_, f"read by the caller `{owner.name}`", result, assumption, judged[-1:]
                )
            if verdict == SAFE_:
                first = at.writes[0] if at.writes else None
                written.append(
                    here(
                        first[0] if first else call.lineno,
                        f"`{owner.name}` gets it from {where} and "
                        + (f"writes it in full: {first[1]}" if first else "never reads it"),
                    )
                )
                continue
            up = j.judge(owner, cscope, at, contiguous, certain, (*chain, id(fn)))
            if up is not None and up.verdict == UNSAFE_ and id(call) in self._possible:
                up = Judgement(UNPROVEN_, f"{up.why}, but {where} may run another class's def")
            if up is not None and up.verdict == UNSAFE_ and up.outcome is not None:
                if _wrote_nothing(outcome):
                    moved = [
                        Issue(i.severity, here(i.line, "")[0], i.kind, here(i.line, i.text)[1])
                        for i in up.outcome.issues
                    ]
                    result = BufferOutcome(issues=moved, reached=True, assumed=up.outcome.assumed)
                    return Judgement(UNSAFE_, up.why, result, assumption, judged[-1:])
                up = Judgement(UNPROVEN_, f"{up.why}, but `{name}` wrote part of it")
            if up is not None and up.verdict == SAFE_ and up.outcome is not None:
                written.append(
                    here(call.lineno, f"`{owner.name}` gets it from {where} and returns it")
                )
                written += [here(line, text) for line, text in up.outcome.writes]
                if up.assumption and up.assumption not in assumption:
                    # What the callers up the chain were assumed to be decides this verdict too.
                    assumption = f"{assumption}; {up.assumption}" if assumption else up.assumption
                continue
            first_issue = at.gave_up or (at.issues[0].text if at.issues else "not reached")
            detail = up.why if up is not None else first_issue
            if slot is not None and up is None:
                detail += " (the call read as the display it returns, `None` in the other slots)"
            undecided = undecided or Judgement(
                UNPROVEN_, f"the caller `{owner.name}` ({where}) is not proven: {detail}"
            )
        if undecided is not None:
            undecided.callers = judged
            return undecided
        return Judgement(
            SAFE_,
            "written in full by every caller before any read",
            BufferOutcome(writes=written, reached=True),
            assumption,
            judged,
        )

    # --- the callers -----------------------------------------------------------------------
    def _callers(self, fn: Function, scope: Scope) -> tuple[list[tuple[ast.Call, Scope]], str, str]:
        """(calls, why not, the assumption): every call of `fn` in the tree, or why they may not
        be all the uses of it."""
        unit = self.unit
        name = fn.name
        parent = scope.parent
        if unit.frames_read or unit.dynamic:  # project.DYNAMIC_PATTERN
            return [], "its module may reach its names at run time (globals(), frames, ...)", ""
        if parent is None:
            return [], "no enclosing scope", ""
        nested = isinstance(parent.node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        method = parent.is_class
        public = not nested and not name.startswith("_")
        if not nested:
            kind = "a public method" if method else "a public function"
            if name.startswith("__"):
                return [], f"`{name}` is {kind}: callers outside the tree may read it", ""
            if public and not self.callers_closed:
                return (
                    [],
                    (
                        f"`{name}` is {kind}: callers outside the tree may read it "
                        "(`callers-closed = true` would judge it at its calls in the tree)"
                    ),
                    "",
                )
            if public and method and not _baseless(parent.node) and not _record(parent, unit):
                return (
                    [],
                    (
                        f"`{name}` is a public method of a class with a base: a base class or a "
                        "framework may call it by its name"
                    ),
                    "",
                )
            if not method and (parent.parent is not None or unit.function(name) is not fn):
                return [], f"`{name}` is not the only binding of its name in its module", ""
        allowed = _METHOD_DECORATORS if method else frozenset()
        if not plain_decorators(fn, unit, allowed):
            return [], f"`{name}` is decorated: the decorator may call it or hand it on", ""
        region: ast.AST = parent.node if nested else unit.tree
        calls = self.call_index()
        found: list[tuple[ast.Call, Scope]] = []
        if method and isinstance(parent.node, ast.ClassDef):
            found, possible, why = method_callers(
                fn, parent.node, unit, self.summaries.world, calls, self._own_paths()
            )
            if why:
                return [], why, ""
            self._possible |= possible
            for n in walk_bfs([unit.tree]):
                if isinstance(n, ast.Name) and n.id == name:
                    return [], f"line {n.lineno} uses `{name}` as a name", ""
                if (
                    isinstance(n, ast.Constant)
                    and isinstance(n.value, str)
                    and _word(name, n.value)
                ):
                    return [], f"line {n.lineno} names `{name}` in a string (getattr, __all__)", ""
            return self._outside(fn, method, public, found)
        word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        for n in walk_bfs([region]):
            if n is fn:
                continue
            if isinstance(n, ast.Name | ast.Attribute):
                spelled = n.id if isinstance(n, ast.Name) else n.attr
                if spelled != name:
                    continue
                hit = calls.get(id(n))
                if hit is None:
                    return [], f"line {n.lineno} uses `{name}` other than as a call of it", ""
                if not self._resolves(fn, hit, nested):
                    return [], f"the call at line {n.lineno} is not certain to run this def", ""
                found.append(hit)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                if word.search(n.value):
                    return [], f"line {n.lineno} names `{name}` in a string (getattr, __all__)", ""
            elif _computed_getattr(n):
                return (
                    [],
                    f"line {getattr(n, 'lineno', 0)} looks an attribute up by a computed name",
                    "",
                )
            elif nested and _binds(n, name):
                return [], f"line {getattr(n, 'lineno', 0)} binds `{name}` again", ""
            elif nested and _reflective(n):
                return [], f"line {getattr(n, 'lineno', 0)} may reach `{name}` by its name", ""
        if nested:
            return found, "", ""
        return self._outside(fn, method, public, found)

    def _outside(
        self, fn: Function, method: bool, public: bool, found: list[tuple[ast.Call, Scope]]
    ) -> tuple[list[tuple[ast.Call, Scope]], str, str]:
        """The calls of this module and those of the other modules that call it
        (returned_modules.py); a method's calls are all in this module."""
        name = fn.name
        if method:
            other = self._named_elsewhere(name, method)
            if other:
                return [], other, ""
        else:
            more, other = foreign_callers(self, fn, public, self._child)
            if other:
                return [], other, ""
            for call, _, judge in more:
                self._via[id(call)] = judge
            found = [*found, *((call, scope) for call, scope, _ in more)]
        project = self.summaries.project
        if project is not None:
            project.deps[TREE_DEP] = self.summaries.world.digest  # a new caller anywhere
        assumption = (
            f"closed world over callers: `{name}` is private to its "
            + ("class" if method else "module")
            + " (a leading `_`); no code outside the scanned tree calls it, and every file of the "
            "tree was searched for its name"
        )
        if method:
            assumption += (
                "; every call that may dispatch to it is `self`/`cls`/`super()` in a method of its "
                "class, a subclass or a base in the tree (closed world over classes: methods.py)"
            )
        if public:
            assumption = (
                f"callers closed (`callers-closed = true`): `{name}` is public, but no code "
                "outside the scanned tree calls it (no user of the package, no library calling "
                "it by its name); every file of the tree was searched for its name"
            )
        return found, "", assumption

    def _child(self, unit: Unit, path: str) -> ReturnedJudge:
        """The judge of calls in another module, with that module's engine of summaries."""
        key = unit.module or unit.path
        hit = self._children.get(key)
        if hit is None or hit.unit is not unit:
            hit = ReturnedJudge(self.summaries.for_unit(unit), path, self.callers_closed)
            self._children[key] = hit
        return hit

    def _own_paths(self) -> set[str]:
        own = {self.unit.path}
        if self.real_path is not None:
            own.add(os.path.realpath(self.real_path))
        return own

    def _resolves(self, fn: Function, hit: tuple[ast.Call, Scope], nested: bool) -> bool:
        call, cscope = hit
        if nested:
            return isinstance(call.func, ast.Name)
        qual = (
            self.unit.resolver.qualified(cscope, call.func)
            if isinstance(call.func, ast.Name | ast.Attribute)
            else None
        )
        callee = self.summaries.callee(cscope, call.func, qual)
        return callee is not None and callee.fn is fn

    def call_index(self) -> dict[int, tuple[ast.Call, Scope]]:
        """The calls of the file, by the id of their `func` node."""
        if self._calls is None:
            self._calls = {id(c.func): (c, s) for c, s in self.unit.resolver.calls}
        return self._calls

    def _named_elsewhere(self, name: str, method: bool = False) -> str:
        """Why a file of the tree other than this one may name this module's `name`, or ""."""
        files, why = self.naming_files(name, method)
        if why or not files:
            return why
        return f"{self.summaries.world.files[files[0]][0]} names `{name}`: callers in other modules are not followed"

    def naming_files(self, name: str, method: bool = False) -> tuple[list[int], str]:
        """The files of the tree other than this one that may name this module's `name`, and
        why a file may look it up without naming it (tree_naming.py)."""
        world = self.summaries.world
        return naming_files(world, self.unit.path, self.real_path, name, method)

    # --- one caller --------------------------------------------------------------------------
    def _analyse(
        self,
        owner: Function,
        scope: Scope,
        call: ast.Call,
        contiguous: bool,
        certain: bool,
        slot: Slot | None = None,
        seed: State | None = None,
    ) -> BufferOutcome:
        """The caller's dataflow with the call as the allocation; for a slot of a display, run on
        a copy of the caller in which the call is that display (returned_slots.py); `seed`: what
        the callee may have written (partial_reads.py)."""
        unit = self.unit
        key: tuple[int, ...] = (id(owner),)
        if slot is not None:
            key = (id(owner), id(call))
            if key not in self._copies:
                made = caller_copy(owner, scope, call, slot)
                if isinstance(made, str):
                    return BufferOutcome(gave_up=made)
                self._copies[key] = made  # kept alive: the memos below are keyed by ids
            owner, scope = self._copies[key]
        qualify = partial(unit.resolver.qualified, scope)
        cfg = self._cfgs.get(key)
        if cfg is None:
            cfg = self._cfgs[key] = Builder(qualify).build(owner.body)
        args = owner.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        ctx = function_context(
            self.summaries, unit, call, scope, cfg, owner.body, params, qualify,
            certain=certain, contiguous=contiguous, shape_known=False, seed=seed,
        )  # fmt: skip
        return analyse_buffer(cfg, ctx)


def _word(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _binds(n: ast.AST, name: str) -> bool:
    """`n` binds `name` (for a nested def: anything that could make a use mean something else)."""
    if isinstance(n, ast.Name):
        return n.id == name and isinstance(n.ctx, ast.Store | ast.Del)
    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return n.name == name
    if isinstance(n, ast.arg):
        return n.arg == name
    if isinstance(n, ast.alias):
        return (n.asname or n.name).split(".")[0] == name
    if isinstance(n, ast.Global | ast.Nonlocal):
        return name in n.names
    if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return n.name == name
    if isinstance(n, ast.MatchMapping):
        return n.rest == name
    return False


def _baseless(cls: ast.AST) -> bool:
    """A class statement with no base but `object`, no keyword (metaclass) and no decorator: only
    code that spells a method's name calls it (not a base class's, nor a framework's by name)."""
    return (
        isinstance(cls, ast.ClassDef)
        and not cls.keywords
        and not cls.decorator_list
        and all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases)
    )


def _record(parent: Scope, unit: Unit) -> bool:
    """A module-level plain dataclass (records.py): no base, and its one decorator,
    `dataclasses.dataclass`, calls none of its methods by name."""
    cls = parent.node
    if not isinstance(cls, ast.ClassDef) or parent.parent is None or parent.parent.parent:
        return False
    return cls.name in plain_dataclasses(unit.tree, declared_globals(unit.tree))


def _computed_getattr(n: ast.AST) -> bool:
    """`getattr(obj, name)`, `operator.attrgetter(name)`, `operator.methodcaller(name)` with a
    name that is not a literal, or `inspect.getmembers(obj)`: it may be this def's."""
    if not isinstance(n, ast.Call):
        return False
    f = n.func
    called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if called == "getmembers":
        return True
    at = {"getattr": 1, "attrgetter": 0, "methodcaller": 0}.get(called)
    if at is None:
        return False
    names = n.args if called == "attrgetter" else n.args[at : at + 1]
    return not names or any(
        not (isinstance(a, ast.Constant) and isinstance(a.value, str)) for a in names
    )


def _reflective(n: ast.AST) -> bool:
    """`locals()`, `vars()`, `eval(...)`, `exec(...)`: a local def reached without its name."""
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("locals", "vars", "eval", "exec", "globals", "dir")
    )
