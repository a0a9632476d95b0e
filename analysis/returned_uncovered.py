"""A buffer a function writes in part and returns to callers the tree does not show: `unsafe`
when an element no write on any path covers is handed back.

`cu_seqlens = torch.zeros(n + 1); cu_seqlens[1:] = lens.cumsum(0); return cu_seqlens` gives its
callers element 0 as the allocation left it: with `torch.empty` the function's result changes.
returned.py judges a returned buffer at its callers, which needs them all in sight (a private
function, or `callers-closed`); returned_reads.py needs one caller of the tree that reads it.
Neither applies to a public function whose callers live outside the tree, the usual home of
such producers (`build_varlen_mask_meta`, `compute_cu_seqlens`). What decides here is the
function's own dataflow at its normal exit (joined over every path, so its may-writes hold
every write of any path that returns the buffer): an element that no write covers
(dataflow/uncovered.py, the same test as a definite read of the whole buffer) is in the result
on every path that returns it.

Assumed, and named in the evidence: the callers read what the function returns (a result is
returned to be used), and what they hand it to does not write that element first. The callers
the tree shows are checked against that: every call that may run the function (those
summaries.py resolves to it, and every call spelled with its name or an alias of it, resolved or
not: a module that reaches its names through `globals()`, an object of unknown class, in its
module and in the files that name it, at most 16) is analysed from the function's writes
(partial_reads.py). One that surely runs it and reads the element before writing it decides
(a path that reads it); otherwise each must write no element, read only elements no write
covers (a possible read of `y[1:]` may take none), and hand the result only to code out of sight
(a call of a name it did not bind itself, an attribute of an object, whose readers are assumed
to read what it holds) or return it to callers that do the same (three up). No claim where one
writes some (`y = mk(n); y[0] = 3.0`), reads only what was written, hands on a part with no
such element (`relu(y[1:])`), hands it to a callable it was given (`fn(y)`: its own callers
choose the reader) or to a container of its own, nor where the tree may call the function out
of sight: a use of its name as a value (`apply(mk)`, `{"mk": mk}`), a decorator of the tree, a
dunder, or `forward` of a class the tree makes objects of (`Module.__call__`).
For the rule of `torch.zeros` only: the guard (`certain_reads_only`) claims no read it cannot
see. Not claimed where nothing was written (an allocator's callers may fill the buffer; returned.py
and returned_reads.py judge those), where the allocation runs under a test that it may be empty
(partial_reads.py `empty_guard`), where a dimension is 0 whatever its names hold (`n - n`), or
where the function binds a name of the shape to a negative literal (`zeros(e + 1)` after
`e = -1`).
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.allocations import shape_args
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Issue, uncovered
from zeroopt.analysis.dataflow.const_gaps import negative_size_name
from zeroopt.analysis.dataflow.outcome import RETURNED, RETURNED_VIEW, returned_slot
from zeroopt.analysis.partial_reads import carried, empty_guard
from zeroopt.analysis.resolve import Scope, walk_bfs
from zeroopt.analysis.returned import (
    SAFE_,
    UNPROVEN_,
    UNSAFE_,
    Judgement,
    ReturnedJudge,
    _decide,
    _own_layout,
    returned_only,
)
from zeroopt.analysis.returned_modules import _own_def_only
from zeroopt.analysis.returned_reads import sure_calls
from zeroopt.analysis.returned_slots import Slot, returned_as
from zeroopt.analysis.state import SELF, State
from zeroopt.analysis.summaries import load_unit
from zeroopt.analysis.tree_naming import files_naming

_MAX_CALLS = 16  # calls of the tree analysed, at most (more: no claim)
_MAX_FILES = 24  # other files naming the function, at most (more: no claim)
_MAX_DEPTH = 3  # callers up a chain that returns the result again, at most
Function = ast.FunctionDef | ast.AsyncFunctionDef


class ReturnedUncovered(Judgement):
    """An `unsafe` shown by the function's own writes: the message says so."""


def returned_uncovered(
    judge: ReturnedJudge,
    fn: ast.AST,
    scope: Scope,
    outcome: BufferOutcome,
    contiguous: bool,
    certain: bool,
    alloc: ast.Call,
    why_callers: str,
) -> Judgement | None:
    """`unsafe` when `fn` returns the buffer (itself, a view of all of it, or one slot of a
    display) with an element no write of any path covers, to callers the tree does not show
    (`why_callers`: why, from returned.py); `unproven` naming that element where the calls the
    tree shows keep it from `unsafe`; None otherwise (the verdict stays)."""
    if certain or not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if not returned_only(outcome):
        return None
    end = outcome.exit_state
    assert end is not None  # returned_only
    if not end.may_writes or empty_guard(fn, alloc) or negative_size_name(alloc, fn):
        return None
    if _always_empty(alloc):
        return None
    returns = [
        (line, how)
        for line, how in end.escapes
        if how in (RETURNED, RETURNED_VIEW) or returned_slot(how) is not None
    ]
    element = uncovered.uncovered_element(end.may_writes, SELF, end.dims)
    if element is None or not returns:
        return None
    shown_calls = _callers_hand_on(judge, fn, scope, outcome, contiguous, alloc)
    if shown_calls is None:
        # Left `unproven`, but the reader learns what is at stake and what decides it.
        which = "the first element" if not any(element) else f"element {element}"
        return Judgement(
            UNPROVEN_,
            f"{why_callers}; it hands back {which} as allocated (no write on any path covers "
            "it), but the calls the tree shows do not all hand the result on unwritten and "
            "unread (a caller that writes or reads only part of it, or one out of sight)",
        )
    seen, read = shown_calls
    line, how = min(returns)
    note = uncovered.nonempty_note(end.dims, element, SELF)
    text = uncovered.evidence(end.may_writes, element, end.dims, how, note)
    text = text.replace("reads ", "hands back ", 1)
    listed = f"{', '.join(seen[:3])}{' and more' if len(seen) > 3 else ''}"
    shown = (
        f"; a call of the tree that surely runs it reads that element before any write of its "
        f"own: {' <- '.join(seen)}"
        if read
        else f"; its calls the tree shows ({listed}) write none of it before handing it on"
        if seen
        else ""
    )
    assumption = (
        f"the callers of `{fn.name}` read what it returns, and what they hand it to does not "
        f"write that element first (the tree does not show every caller: {why_callers}){shown}"
    )
    result = BufferOutcome(issues=[Issue(UNSAFE, line, "read", text)], reached=True)
    return ReturnedUncovered(
        UNSAFE_, f"returned with an element no write covers by `{fn.name}`", result, assumption
    )


def _always_empty(alloc: ast.Call) -> bool:
    """A dimension that is 0 whatever its names hold (`n - n`, `n * 0`, `0`): no element."""
    return any(_zero(d) for d in shape_args(alloc))


def _zero(e: ast.expr) -> bool:
    if isinstance(e, ast.Constant):
        return type(e.value) is int and e.value == 0
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub | ast.UAdd):
        return _zero(e.operand)
    if not isinstance(e, ast.BinOp):
        return False
    if isinstance(e.op, ast.Sub) and ast.dump(e.left) == ast.dump(e.right):
        return True
    if isinstance(e.op, ast.Mult):
        return _zero(e.left) or _zero(e.right)
    return isinstance(e.op, ast.Add | ast.Sub) and _zero(e.left) and _zero(e.right)


def _callers_hand_on(
    judge: ReturnedJudge,
    fn: Function,
    scope: Scope,
    outcome: BufferOutcome,
    contiguous: bool,
    alloc: ast.Call,
) -> tuple[list[str], bool] | None:
    """The calls of the tree that may run `fn` as the evidence names them, and whether one of
    them reads the element (`_hand_on`); None where they are not shown to read the result or
    only to hand it on."""
    end = outcome.exit_state
    assert end is not None  # returned_only
    slot, why = returned_as(end.escapes)
    if why:
        return None
    seed = carried(fn, alloc, outcome)
    return _hand_on(judge, fn, scope, seed, slot, contiguous and _own_layout(outcome), 0)


def _hand_on(
    judge: ReturnedJudge,
    fn: Function,
    scope: Scope,
    seed: State | str,
    slot: Slot | None,
    contiguous: bool,
    depth: int,
) -> tuple[list[str], bool] | None:
    """The calls of the tree that may run `fn` (`_calls_in_sight`), each analysed from `seed`
    (what the allocating function wrote), as "`f` (line N)", and whether one of them that
    surely runs `fn` reads an element no write covers before any write of its own (then that
    one decides: a path that reads it; one not sure to run `fn` reads it only where it does).
    Otherwise each must write no element and hand the result only to code out of sight
    (`_passes_on`) or return it to callers that do the same (at most `_MAX_DEPTH` up). None
    where one writes some (`y = mk(n); y[0] = 3.0`), reads only what was written (`safe` from
    the writes), hands on a part that holds no element left unwritten (`relu(y[1:])`), stores
    it in a container or a global, hands it to a callable it was given (`fn(y)`: its own
    callers choose the reader), or cannot be followed; and where a decorator of the tree wraps
    `fn` (its wrapper may write the result) or code may call it unspelled."""
    parent = scope.parent
    if parent is None or isinstance(
        parent.node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        return None  # a nested def: every call is in sight, returned.py judges them
    if not _foreign_decorators(judge, fn, parent) or _called_unspelled(judge, fn, parent):
        return None
    calls = _calls_in_sight(judge, fn, parent.is_class)
    if calls is None or (calls and isinstance(seed, str)):
        return None  # `carried` says why the writes cannot start a caller's dataflow
    seen: list[str] = []
    blocked = False  # a caller not shown to hand it on: only one that reads it may still decide
    for call, cscope, j, sure in calls:
        owner = cscope.node
        if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef) or owner is fn:
            blocked = True  # a call outside a function, or recursion
            continue
        assert not isinstance(seed, str)
        at = j._analyse(owner, cscope, call, contiguous, False, slot, seed)
        where = f"`{owner.name}` ({'line ' if j is judge else j.unit.path + ':'}{call.lineno})"
        if at.gave_up or not at.reached:
            blocked = True
        elif _decide(at) == UNSAFE_ and sure:
            return [f"{where}, which reads it"], True
        elif _decide(at) == UNSAFE_:
            seen.append(where)  # reads it, where the call runs `fn` at all
        elif not blocked and _passes_on(at, owner):
            seen.append(where)
            if at.exit_state is not None and _returned(at.exit_state.escapes):
                up = _returned_again(j, owner, cscope, at, seed, contiguous, depth)
                if up is not None and up[1]:
                    return [where, *up[0]], True
                blocked = up is None
                seen += up[0] if up is not None else []
        else:
            blocked = True
    return None if blocked else (seen, False)


def _passes_on(at: BufferOutcome, owner: Function) -> bool:
    """A caller's dataflow that writes no element, reads only elements no write covers, and
    hands the result only to code out of sight (`_handed_on`) or returns it."""
    if at.writes or at.partial_writes or at.view_writes or at.contracts or at.relayouts:
        return False
    if _decide(at) == SAFE_ or at.unsure_reads:
        return False  # reads no such element: `safe` from the writes, `relu(y[1:])`
    end = at.exit_state
    if end is not None and not all(
        how == RETURNED or returned_slot(how) or _handed_to_code(how) for _, how in end.escapes
    ):
        return False  # a view in another layout, a container, a global
    mine = _own_names(owner)
    return all(
        _handed_on(i, mine)
        for i in at.issues
        if i.severity != UNSAFE and not (i.kind == "escape" and i.text.startswith(_AT_EXIT))
    )


def _returned(escapes: frozenset[tuple[int, str]]) -> bool:
    return any(how == RETURNED or returned_slot(how) for _, how in escapes)


def _returned_again(
    j: ReturnedJudge,
    owner: Function,
    cscope: Scope,
    at: BufferOutcome,
    seed: State,
    contiguous: bool,
    depth: int,
) -> tuple[list[str], bool] | None:
    """A caller that returns the result again (itself or in a display, in its own layout; any
    other escape is to code out of sight, `_passes_on`): its own calls in the tree, judged
    alike (`_hand_on`), at most `_MAX_DEPTH` up."""
    end = at.exit_state
    assert end is not None
    returns = [(line, how) for line, how in end.escapes if how == RETURNED or returned_slot(how)]
    slot, why = returned_as(frozenset(returns))  # the others: code out of sight (`_passes_on`)
    if why or depth >= _MAX_DEPTH:
        return None
    return _hand_on(j, owner, cscope, seed, slot, contiguous, depth + 1)


_ATTRIBUTE = re.compile(r"stored in `[A-Za-z_][\w.]*\.\w+`")


def _handed_to_code(how: str) -> bool:
    """An escape to code out of the caller's sight: a call (`passed to `f``, judged at its
    issues), an attribute of an object (`stored in `batch.starts``: its readers are assumed to
    read what it holds, as callers are), an object or container holding it used as a whole;
    not a store in a container's slot or a global of the tree."""
    return (
        how.startswith("passed to `")
        or bool(_ATTRIBUTE.match(how))
        or how.endswith("which holds the buffer, is used as a whole")
    )


def _foreign_decorators(judge: ReturnedJudge, fn: Function, parent: Scope) -> bool:
    """Every decorator of `fn` is code from outside the tree (`torch.no_grad()`,
    `functools.lru_cache`, `staticmethod`): one of the tree, or one the analysis cannot
    name, may wrap it in code that writes the result before its callers get it."""
    project = judge.summaries.project
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        qual = (
            judge.unit.resolver.qualified(parent, target)
            if isinstance(target, ast.Name | ast.Attribute)
            else None
        )
        if qual is None or (project is not None and qual.split(".")[0] in project.index.tops):
            return False
        if judge.unit.module is not None and qual.startswith(f"{judge.unit.module}."):
            return False
    return True


def _called_unspelled(judge: ReturnedJudge, fn: Function, parent: Scope) -> bool:
    """A method that code runs without spelling its name: any dunder (`obj(n)`, `obj[n]`,
    operators), or `forward`/`backward` (`nn.Module.__call__`, `Function.apply`) of a class
    the tree may make objects of (its name is used besides its def, in its module or in another
    file, or its methods call `self(...)`): such calls are in the tree and out of sight."""
    name = fn.name
    if not parent.is_class or not isinstance(parent.node, ast.ClassDef):
        return False
    if name.startswith("__") and name.endswith("__"):
        return True
    if name not in ("forward", "backward"):
        return False
    cls = parent.node
    for n in walk_bfs([judge.unit.tree]):
        if (isinstance(n, ast.Name) and n.id == cls.name) or (
            isinstance(n, ast.Attribute | ast.Constant)
            and cls.name in (getattr(n, "attr", None), getattr(n, "value", None))
        ):
            return True
    for n in walk_bfs(cls.body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "self":
            return True
    return bool(_naming_files(judge, cls.name))


def _naming_files(judge: ReturnedJudge, name: str) -> list[int]:
    """The files of the tree other than the judge's own whose text has `name` as a word."""
    return files_naming(judge.summaries.world, judge.unit.path, judge.real_path, name)


def _calls_in_sight(
    judge: ReturnedJudge, fn: Function, method: bool
) -> list[tuple[ast.Call, Scope, ReturnedJudge, bool]] | None:
    """Every call of the tree that may run `fn`: those summaries.py resolves to it
    (returned_reads.py `sure_calls`: an alias of an import too) and every call spelled with its
    name (`fn(...)`, `m.fn(...)`, `obj.fn(...)`), resolved or not (a module reaching its names
    through `globals()`, a receiver of unknown class), in its module and in the files of the
    tree that name it. None where they are more than `_MAX_CALLS`, more than `_MAX_FILES` files
    name it, or such a file cannot be read as a module: a caller out of sight may be one that
    reads only what `fn` wrote."""
    name = fn.name
    found = {id(c): (c, s, j, True) for c, s, j, _ in sure_calls(judge, fn, method)}
    here = _spelled(judge, name)
    if here is None:
        return None
    found.update((k, v) for k, v in here.items() if k not in found)
    world = judge.summaries.world
    files = _naming_files(judge, name)
    project = judge.summaries.project
    if len(files) > _MAX_FILES:
        return None
    for i in files:
        path, data = world.files[i]
        if _own_def_only(data, name):
            continue  # every `name` there is that file's own def
        module = project.index.names.get(path) if project is not None else None
        if project is None or module is None or project.index.modules.get(module) != path:
            return None
        unit = load_unit(project, module)
        if unit is None:
            return None
        there = _spelled(judge._child(unit, path), name)
        if there is None:
            return None
        found.update((k, v) for k, v in there.items() if k not in found)
    return list(found.values()) if len(found) <= _MAX_CALLS else None


def _spelled(
    j: ReturnedJudge, name: str
) -> dict[int, tuple[ast.Call, Scope, ReturnedJudge, bool]] | None:
    """The calls of `j`'s module whose callee is spelled `name`, `<anything>.name`,
    `getattr(<anything>, "name")` or an alias of it (`from m import name as mk`, `mk = name`);
    None where the module uses one of these names otherwise (`apply(name)`,
    `functools.partial(name, n)`, `{"name": ...}`; `__all__` aside): code it is handed to, or
    that looks it up, calls it out of sight."""
    tree = j.unit.tree
    names = {name}
    uses: set[int] = set()  # the nodes that spell it in a call, an alias or `__all__`
    for _ in range(4):  # aliases of aliases, a few deep
        before = len(names)
        for n in walk_bfs([tree]):
            if isinstance(n, ast.ImportFrom):
                names |= {a.asname or a.name for a in n.names if a.name in names}
            elif isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and _exported(n):
                uses |= {id(c) for c in walk_bfs([n])}
            elif isinstance(n, ast.Assign) and _spells(n.value, names):
                if not all(isinstance(t, ast.Name) for t in n.targets):
                    return None
                uses.add(id(n.value))
                names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        if len(names) == before:
            break
    out = {}
    for call, scope in j.unit.resolver.calls:
        func = call.func
        looked = _looked_up(func)
        if _spells(func, names) or (looked is not None and looked.value in names):
            out[id(call)] = (call, scope, j, False)
            uses |= {id(func), id(looked)}
    for n in walk_bfs([tree]):
        spelled = _spells(n, names) and isinstance(getattr(n, "ctx", None), ast.Load)
        if (spelled or (isinstance(n, ast.Constant) and n.value in names)) and id(n) not in uses:
            return None
    return out


def _looked_up(func: ast.expr) -> ast.Constant | None:
    """The literal name of `getattr(x, "name")`."""
    if (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Name)
        and func.func.id == "getattr"
        and len(func.args) >= 2
        and isinstance(func.args[1], ast.Constant)
        and isinstance(func.args[1].value, str)
    ):
        return func.args[1]
    return None


def _exported(n: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _spells(e: ast.AST, names: set[str]) -> bool:
    return (isinstance(e, ast.Name) and e.id in names) or (
        isinstance(e, ast.Attribute) and e.attr in names
    )


def _own_names(fn: Function) -> set[str]:
    """The names `fn` binds itself (its parameters but `self`/`cls`, its local variables):
    what a call through one of them runs, or a store into one, may be code of the tree."""
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    names = {p.arg for p in every} - {"self", "cls"}
    for n in walk_bfs(fn.body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


_CALLEE = re.compile(r"passed to `([A-Za-z_]\w*)")
_AT_EXIT = "not fully written before the function returns, and "


def _handed_on(issue: Issue, mine: set[str]) -> bool:
    """An obstacle of a caller that reads the result or hands it to code out of sight: a
    possible read (the caller's `unsure_reads` is empty: it takes an element left unwritten;
    an object or container holding it used as a whole), a call of a name the caller did not
    bind (an import, a module function), a store in an attribute of an object (its readers are
    assumed to read what it holds, as callers are), a call made once it is out of sight
    (decided by how it got there); not a hand-off through one of the caller's own names
    (`fn(y)` of a parameter, `ys.append(y)` of a local list: the tree may show a reader of the
    part that was written there), nor any other store (a global, a container's slot)."""
    text = issue.text
    if issue.kind == "unknown-call":
        return True
    if issue.kind == "possible-read" and not text.startswith("possible read: passed to `"):
        return True
    if issue.kind == "escape" and not text.startswith("passed to `"):
        return _handed_to_code(text)
    if issue.kind not in ("escape", "possible-read"):
        return False
    callee = _CALLEE.search(text)
    return callee is not None and callee.group(1) not in mine
