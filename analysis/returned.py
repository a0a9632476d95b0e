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
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Context, Issue, analyse_buffer
from zeroopt.analysis.dataflow.outcome import RETURNED, RETURNED_VIEW, returned_slot
from zeroopt.analysis.methods import TREE_DEP, ClassWorld
from zeroopt.analysis.resolve import Scope, runs_body_when_called, walk_bfs
from zeroopt.analysis.returned_methods import method_callers
from zeroopt.analysis.returned_modules import foreign_callers
from zeroopt.analysis.returned_slots import Slot, caller_copy, describe, returned_as
from zeroopt.analysis.scalars import int_names
from zeroopt.analysis.summaries import plain_decorators

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld
    from zeroopt.analysis.summaries import Summaries, Unit

MAX_DEPTH = 3  # functions up the chain of callers that return the buffer again, at most
SAFE_ = "safe"
UNSAFE_ = "unsafe"
UNPROVEN_ = "unproven"
_EXIT_TEXT = f"not fully written before the function returns, and {RETURNED}"
# Code that may reach a module's names without spelling them: `globals()`, `vars()`,
# `sys.modules[__name__]`, `__dict__[`, `exec(` / `eval(` (not `get_exec()`, not `.eval()`).
_DYNAMIC = re.compile(
    r"\bglobals\(\)|\bvars\(\)|sys\.modules\[__name__\]|__dict__\[|(?<![\w.])(?:exec|eval)\("
)
Function = ast.FunctionDef | ast.AsyncFunctionDef
_METHOD_DECORATORS = frozenset({"builtins.staticmethod", "builtins.classmethod"})


@dataclass
class Judgement:
    verdict: str  # SAFE_, UNSAFE_ or UNPROVEN_
    why: str  # what decided it (UNPROVEN_: what could not be decided)
    outcome: BufferOutcome | None = None  # SAFE_/UNSAFE_: what the finding is built from
    assumption: str = ""
    callers: list[str] = field(default_factory=list)  # "function (line N)" of each call judged


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
            return Judgement(UNPROVEN_, why)
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
        if unit.frames_read or any(_DYNAMIC.search(line) for line in unit.lines):
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
            if public and method and not _baseless(parent.node):
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
            more, other = foreign_callers(self, fn, public, self._child, _DYNAMIC)
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

    def naming_files(
        self, name: str, method: bool = False, reexports: frozenset[str] = frozenset()
    ) -> tuple[list[int], str]:
        """(the files of the tree other than this one that may name this module's `name`, why
        a file may look it up without naming it). A file may name it when its text
        has `name` as a word and, unless this module is a package's `__init__` (reached by
        `from . import name`) or binds `__all__` other than by one literal list, the last part
        of this module's name as a word too (an import of a private name spells its module:
        `from .mod import _f`, `import pkg.mod`; a re-export is such a file itself). For a
        public name (`callers-closed`), the modules that star-import this one, to a fixpoint,
        count as its names too: a star import re-exports the name without spelling it; so do
        `reexports`, the last parts of names of modules that import it."""
        world = self.summaries.world
        own = {self.unit.path}
        if self.real_path is not None:
            own.add(os.path.realpath(self.real_path))
        module = (self.unit.module or "").rpartition(".")[2]
        package = self.real_path is None or self.real_path.endswith("__init__.py")
        spelled = None
        own_text = "\n".join(self.unit.lines).encode("utf-8", "surrogatepass")
        # A method is reached through any instance, which any file may be handed: no import
        # of its module need be spelled there.
        if (
            module
            and not package
            and not method
            and _literal_all(self.unit.tree)
            and not _HANDS.search(own_text)
        ):
            # A star import re-exports a public name without spelling it: the modules that do
            # (and those that star-import them, ...) are names of this module too.
            words = {module} if name.startswith("_") else _star_importers(world, module)
            if words is not None:
                words = words | reexports
                alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
                spelled = re.compile(rb"(?<!\w)(?:" + alternatives + rb")(?!\w)")
        index = _word_index(world.digest, world.files)
        named = index.get(name, ()) if name.startswith("_") else _naming(world, name)
        files: list[int] = []
        for i in named:
            path, data = world.files[i]
            if path in own or os.path.realpath(path) in own:
                continue
            if spelled is not None and not spelled.search(data) and not _HANDS.search(data):
                continue  # never names this module nor reaches module objects otherwise
            files.append(i)
        for i, (path, data) in enumerate(world.files):
            if path in own or os.path.realpath(path) in own or not _LOOKUP.search(data):
                continue
            if spelled is not None and not spelled.search(data) and not _HANDS.search(data):
                continue
            # A method: lookups by a computed name are anyorder_reach's (returned_methods.py),
            # by the receiver they may reach; a joined literal is no computed name there.
            line = _unspelled_lookup(world.digest, i, data, name, method, joined_only=method)
            if line:
                return files, (
                    f"{path}:{line} looks an attribute up by a name its text does not spell "
                    f"(a computed or joined string): it may be `{name}`"
                )
        return files, ""

    # --- one caller --------------------------------------------------------------------------
    def _analyse(
        self,
        owner: Function,
        scope: Scope,
        call: ast.Call,
        contiguous: bool,
        certain: bool,
        slot: Slot | None = None,
    ) -> BufferOutcome:
        """The caller's dataflow with the call as the allocation; for a slot of a display, run on
        a copy of the caller in which the call is that display (returned_slots.py)."""
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
        unstable = set(scope.captured | scope.global_names | scope.nonlocal_names)
        ctx = Context(
            alloc=call,
            resolver=unit.resolver,
            scope=scope,
            contracts=self.summaries.contracts,
            source_lines=unit.lines,
            escape_on_bind=frozenset(unstable),
            contiguous=contiguous,
            capture_nodes=frozenset(cfg.capture_nodes),
            int_names=int_names(owner.body, params, unstable, qualify),
            kernels=self.summaries.kernels,
            frames_read=unit.frames_read,
            certain_reads_only=certain,
            src_memo=unit.src_memo,
            summaries=self.summaries,
            shape_known=False,
        )
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


_NAMING: dict[tuple[str, str], list[int]] = {}  # (tree digest, public name) -> files naming it


def _naming(world: ClassWorld, name: str) -> list[int]:
    """The files of the tree whose text has `name` as a word (public names are not in the word
    index of `_` names: searched once per name and worker)."""
    key = (world.digest, name)
    hit = _NAMING.get(key) if world.digest else None
    if hit is None:
        raw = name.encode()
        word = re.compile(rb"(?<!\w)" + re.escape(raw) + rb"(?!\w)")
        hit = [i for i, (_, data) in enumerate(world.files) if raw in data and word.search(data)]
        if world.digest:
            if len(_NAMING) > 4096:
                _NAMING.clear()
            _NAMING[key] = hit
    return hit


_STAR_HINT = re.compile(rb"import\s*\*")
_STAR = re.compile(rb"(?<![\w.])from\s+(\.*)([\w.]*)\s+import\s*\*")
_STAR_EDGES: dict[str, list[tuple[str, str]] | None] = {}  # tree digest -> star imports


def _star_importers(world: ClassWorld, module: str) -> set[str] | None:
    """`module` and the last part of the name of every module that star-imports one of these,
    to a fixpoint (a package's `__init__` by its package's name; `from . import *` by the
    package the importing file is in, `from .. import *` by the one above)."""
    edges = _star_edges(world)
    if edges is None:
        return None
    words = {module}
    grew = True
    while grew:
        grew = False
        for source, importer in edges:
            if source in words and importer not in words:
                words.add(importer)
                grew = True
    return words


def _star_edges(world: ClassWorld) -> list[tuple[str, str]] | None:
    """(the last part of the module star-imported, the importer's) for every star import of
    the tree, found once per tree and worker; None if one imports from a package not known."""
    if world.digest and world.digest in _STAR_EDGES:
        return _STAR_EDGES[world.digest]
    edges: list[tuple[str, str]] | None = []
    for path, data in world.files:
        if edges is None:
            break
        if not _STAR_HINT.search(data):
            continue
        parts = os.path.normpath(path).split(os.sep)
        stem = parts[-1].removesuffix(".py")
        package = parts[-2] if len(parts) > 1 else ""
        me = package if stem == "__init__" else stem
        for m in _STAR.finditer(data):
            dots, name = len(m.group(1)), m.group(2).decode("utf-8", "replace")
            if name:
                edges.append((name.rpartition(".")[2], me))
            elif 0 < dots < len(parts):
                edges.append((parts[-1 - dots], me))  # `from .. import *`: that package
            else:
                edges = None  # a star import from somewhere unknown: any file may re-export it
                break
    if world.digest:
        _STAR_EDGES.clear()
        _STAR_EDGES[world.digest] = edges
    return edges


def _literal_all(tree: ast.Module) -> bool:
    """Every mention of `__all__` is the one target of an assignment of a literal list of
    strings: a star import of the module exports what they say, or no private name."""
    assigned: set[int] = set()
    for n in walk_bfs([tree]):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.List | ast.Tuple)
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.value.elts)
        ):
            assigned.add(id(n.targets[0]))
    return all(
        id(n) in assigned
        for n in walk_bfs([tree])
        if (isinstance(n, ast.Name) and n.id == "__all__")
        or (isinstance(n, ast.Attribute) and n.attr == "__all__")
    )


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


# Ways to a module object or its namespace without an import that names it: handed out by the
# module itself (`fn.__globals__`, `sys.modules[__name__]`, `import_module(__name__)`) or found
# by another file (`sys.modules.values()`, `inspect.getmodule(obj)`, `obj.__module__`).
_HANDS = re.compile(
    rb"__globals__|sys\.modules|getmodule|import_module|__import__|__module__|__dict__|vars\("
)
_WORDS = re.compile(rb"_(?<!\w_)\w+")  # `(?<!\w)_\w+`, searched for `_` first: ten times faster
# Lookups of an attribute by a name the text need not spell.
_LOOKUP = re.compile(rb"getattr\(|attrgetter\(|methodcaller\(|getmembers\(|vars\(|__dict__")
_LOOKUPS: dict[tuple[str, int], tuple[int, int, dict[str, int]]] = {}


def _unspelled_lookup(
    digest: str, i: int, data: bytes, name: str, method: bool, joined_only: bool = False
) -> int:
    """The line of a lookup in file `i` that may fetch attribute `name` though the file's text
    never spells it: `getattr(x, <not one literal>)`, `attrgetter(...)`/`methodcaller(...)` of
    one, `inspect.getmembers(x)`, `vars(x)` / `x.__dict__` not indexed by one literal, or a
    literal joined from parts (`"_al" "loc"`); 0 if none.
    For a module's function (not `method`), `getattr(self, k)` / `getattr(cls, k)` is no such
    lookup: the object is an instance or a class, not a module."""
    key = (digest, i)
    hit = _LOOKUPS.get(key) if digest else None
    if hit is None:
        computed = on_objects = 0
        joined: dict[str, int] = {}
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
            computed = 1
        # `vars(m)[k]` / `m.__dict__[k]` with `k` no literal, or the namespace handed on whole.
        literal = {
            id(n.value)
            for n in (ast.walk(tree) if tree is not None else ())
            if isinstance(n, ast.Subscript)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
        }
        for n in ast.walk(tree) if tree is not None else ():
            if _namespace(n) and id(n) not in literal:
                computed = computed or getattr(n, "lineno", 1)
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            called = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            at = {"getattr": 1, "attrgetter": 0, "methodcaller": 0}.get(called)
            if called == "getmembers":
                computed = computed or n.lineno
            elif at is not None:
                arg = n.args[at] if len(n.args) > at else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    for word in re.findall(r"\w+", arg.value):
                        joined.setdefault(word, n.lineno)
                elif arg is not None or n.keywords:
                    target = n.args[0] if called == "getattr" and n.args else None
                    if isinstance(target, ast.Name) and target.id in ("self", "cls"):
                        on_objects = on_objects or n.lineno
                    else:
                        computed = computed or n.lineno
        hit = (computed, on_objects, joined)
        if digest:
            if len(_LOOKUPS) > 4096:
                _LOOKUPS.clear()
            _LOOKUPS[key] = hit
    computed, on_objects, joined = hit
    if not joined_only and (computed or (method and on_objects)):
        return computed or on_objects
    return joined.get(name, 0) if name.encode() not in data else 0


def _namespace(n: ast.AST) -> bool:
    """`vars(x)` or `x.__dict__` of an object other than `self` / `cls` (a module's namespace)."""
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars":
        target = n.args[0] if n.args else None
    elif isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.ctx, ast.Load):
        target = n.value
    else:
        return False
    return not (isinstance(target, ast.Name) and target.id in ("self", "cls"))


_INDEX: dict[str, dict[str, list[int]]] = {}  # one tree's digest -> its `_name` words -> files


def word_index(world: ClassWorld) -> dict[str, list[int]]:
    """The files of `world` each word starting with `_` occurs in (see `_word_index`)."""
    return _word_index(world.digest, world.files)


def _word_index(digest: str, files: list[tuple[str, bytes]]) -> dict[str, list[int]]:
    """The files of the tree each word starting with `_` occurs in, built once per worker (a
    world without a digest, one file analysed alone, every time)."""
    hit = _INDEX.get(digest) if digest else None
    if hit is None:
        hit = {}
        for i, (_, data) in enumerate(files):
            for w in set(_WORDS.findall(data)):
                hit.setdefault(w.decode("utf-8", "replace"), []).append(i)
        _INDEX.clear()
        _INDEX[digest] = hit
    return hit
