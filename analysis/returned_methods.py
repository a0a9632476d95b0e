"""Every call that may run a private method, for a buffer the method returns (returned.py).

`def _alloc(self): return torch.zeros(n)` of class X is judged at each call that may dispatch to
it. Under the closed world of methods.py (every class deriving from X is a class statement of
the tree, through its first base only), such a call is found when it is one of:

- `self._alloc(...)` / `cls._alloc(...)` in a plain method (or classmethod) of a class D related
  to X (X, a base of X, a subclass of X, or a class some class of the tree derives from together
  with X; anyorder_reach.py's receiver classification), unless D is a subclass of X and a class
  on the way from D up to X surely binds `_alloc` again (an override: `self._alloc` there never
  runs X's def; one top-level statement of its body, `ClassInfo.surely`: a def under `if` or
  `try`, or one deleted, may leave X's);
- `super()._alloc(...)` in a method of a subclass of X (the override that calls X's def);
- `k._alloc(...)` on a local `k = K(...)` of a related class.

Anything else that names the method in its module refuses, naming it: `self._alloc` not called
(a callback, a decorator, `functools.partial`), a receiver the classification cannot place (a
parameter, a container's element), the bare name, a string. A reflective use that may reach an
instance of X (`getattr(obj, name)`, `vars(obj)`, ...; anyorder_reach.reach_reason) refuses, as
does a class decorator, `__getattribute__` in the family, and a name a library base may call
(semantics/library_methods.py) when X has a base. A `self._alloc(...)` on an object of an
unrelated class is no call of it only while that class's methods run with their own `self`
(anyorder_reach.others_only). An attribute `_alloc` stored on an object or bound under a computed
name anywhere in the tree may shadow the def at a call (the call then runs something else, never
the def where it was not called before): the calls still count, but may not make the site
`unsafe`. Other files that name the method are the caller's concern (returned.py
`_named_elsewhere`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from zeroopt.analysis.anyorder_reach import (
    CLASS,
    GET,
    MAKE,
    NEW,
    OPAQUE,
    SELF,
    SET,
    Receiver,
    Use,
    others_only,
    reach_reason,
    receivers,
)
from zeroopt.analysis.lifecycle_anyorder import _flagged
from zeroopt.analysis.methods import ClassInfo, _short
from zeroopt.analysis.records import plain_dataclasses
from zeroopt.analysis.resolve import Scope, declared_globals, walk_bfs
from zeroopt.analysis.semantics.library_methods import LIBRARY_ATTRIBUTES

if TYPE_CHECKING:
    from zeroopt.analysis.methods import ClassWorld
    from zeroopt.analysis.summaries import Unit

Calls = list[tuple[ast.Call, Scope]]
_NOT_FIRST = "other than through its first base only"
_MAX_CHAIN = 64


def method_callers(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    cls: ast.ClassDef,
    unit: Unit,
    world: ClassWorld,
    calls: dict[int, tuple[ast.Call, Scope]],
    own_paths: set[str],
) -> tuple[Calls, set[int], str]:
    """(every call in the module that may run `fn`, the ids of those that may run another def
    instead, "") or ([], set(), why they may not be all)."""
    name = fn.name
    found, why = world.lineage(cls.name)
    why = why or world.bases_stored(cls.name)
    if why and not why.endswith(_NOT_FIRST):
        return [], set(), f"the classes deriving from {cls.name} are not certain: {why}"
    # A class deriving from it through another base than its first (a class made at run time
    # from `(Mixin, type(obj))`, say) may put other classes' methods before or after it: their
    # `self._m(...)` are still calls of it, and all are in this module; they are only possible.
    loose = bool(why)
    family = [info for _, info in found]
    if cls.decorator_list and not _plain_dataclass(cls, unit):
        return [], set(), f"class {cls.name} is decorated: the decorator may replace `{name}`"
    for info in family:
        if info.decorated or "__getattribute__" in info.binds or "*" in info.binds:
            return (
                [],
                set(),
                f"class {info.name} may rebind `{name}` (a class decorator or computed names)",
            )
    owner = LIBRARY_ATTRIBUTES.get(name)
    if owner is not None and (cls.bases or cls.keywords):
        return (
            [],
            set(),
            f"`{name}` is also an attribute of {owner}: a library base may call it by name",
        )
    # An attribute `_m` stored on an object, or bound under a computed name, may shadow the def
    # where it is called: no more calls of the def, but a call may run something else. Such
    # calls still count, and can keep the site unproven but never make it `unsafe`.
    stored = world.stored_in(name)
    shadowed = world.bound_dynamically(name) or (
        f"{_short(stored)} assigns an attribute `{name}`" if stored is not None else ""
    )
    descendants = {info.name for info in family}
    # A class made at run time whose bases may derive from it (`Meta(name, (Mixin, Own), ns)`,
    # beyond the `type(...)` forms of the lineage): any class of this module may come before it.
    made = reach_reason(cls, unit.tree, world, own_paths, _flagged, _kind(MAKE))
    loose = loose or bool(made)
    chain = _Chain(cls, family, name)
    found_calls: Calls = []
    possible: set[int] = set()  # ids of calls that may run it, or another class's def
    unrelated: list[ast.Attribute] = []
    placed: dict[int, Receiver] | None = None
    for n in walk_bfs([unit.tree]):
        if not isinstance(n, ast.Attribute) or n.attr != name:
            continue
        hit = calls.get(id(n))
        where = f"`{ast.unparse(n)[:60]}` (line {n.lineno})"
        if _super_call(n.value):
            if hit is None:
                return [], set(), f"{where} takes `{name}` without calling it"
            enclosing = _enclosing_class(hit[1])
            if enclosing is None:
                return [], set(), f"{where} is `super()` outside a method"
            mine = enclosing.name in descendants or (
                enclosing.name == cls.name and enclosing is not cls
            )
            if mine and not chain.shadowed_above(enclosing.name):
                found_calls.append(hit)
            elif not mine and enclosing is not cls and loose:
                found_calls.append(hit)  # a class before it in a made class's bases
                possible.add(id(hit[0]))
            continue
        if placed is None:
            reach = _reach(cls, unit, world, own_paths, name)
            if reach:
                return [], set(), reach
            placed = receivers(unit.tree, frozenset({name}))
        r = placed.get(id(n), Receiver("any"))
        if r.kind not in (SELF, CLASS, NEW) or not r.name:
            return (
                [],
                set(),
                (
                    f"{where}: its object may be an instance of {cls.name} (only `self`, `cls` and "
                    "`super()` in methods of its classes are followed)"
                ),
            )
        if not made and not _related(r.name, cls.name, world, descendants):
            unrelated.append(n)
            continue
        if hit is None or not isinstance(n.ctx, ast.Load):
            return (
                [],
                set(),
                f"{where} uses `{name}` other than as a call of it (a callback, a store)",
            )
        if r.kind in (SELF, CLASS) and chain.shadowed(r.name):
            continue  # a subclass's override runs there, never this def
        found_calls.append(hit)
        if r.name != cls.name and r.name not in descendants:
            possible.add(id(hit[0]))  # shares an instance with it only through another class
    if placed is None:
        reach = _reach(cls, unit, world, own_paths, name)
        if reach:
            return [], set(), reach
    # A reflective use that binds attributes by a computed name may shadow the def too.
    shadowed = shadowed or reach_reason(
        cls, unit.tree, world, own_paths, _flagged, _kind(SET), frozenset({name})
    )
    if unrelated:
        why = others_only(
            cls, unit.tree, unit.tree, unrelated, world, own_paths, _flagged, frozenset({name})
        )
        if why:
            return [], set(), why
    if shadowed:
        possible |= {id(call) for call, _ in found_calls}
    return found_calls, possible, ""


def _reach(cls: ast.ClassDef, unit: Unit, world: ClassWorld, own_paths: set[str], name: str) -> str:
    """Why a reflective use that may fetch an attribute of an instance of `cls` by a computed
    name (or reach anything: `exec`, frames, `attrgetter`) may hand out its bound method. Uses
    that copy objects or make classes call no method by a name the text does not show: a class
    made at run time is in methods.py's lineage, its methods' calls in the walk above."""
    why = reach_reason(cls, unit.tree, world, own_paths, _flagged, _fetches, frozenset({name}))
    return f"a reflective use may reach an instance of {cls.name}: {why}" if why else ""


def _plain_dataclass(cls: ast.ClassDef, unit: Unit) -> bool:
    """A module-level plain dataclass (records.py): `dataclasses.dataclass` adds dunder methods
    and, with `slots=True`, copies the class, keeping every def of its body."""
    if not any(s is cls for s in unit.tree.body):
        return False
    return cls.name in plain_dataclasses(unit.tree, declared_globals(unit.tree))


def _kind(kind: str) -> Callable[[Use], bool]:
    return lambda use: use.kind == kind


def _fetches(use: Use) -> bool:
    """A use that may hand out a def of a class body: anything opaque, `getattr` or
    `getmembers` by a computed name, or any read of a class object's namespace. The shallow reads
    of an instance (`vars(obj)`, `obj.__dict__`, `copy.copy`, `dataclasses.replace`) see its own
    attributes only, never its class's functions (a function stored on the instance is an
    attribute stored: a shadow, judged above)."""
    if use.kind == OPAQUE:
        return True
    if use.kind != GET:
        return False
    return use.recv.kind == CLASS or not _SHALLOW.match(use.text)


# The shallow reads of anyorder_reach's GET uses: `vars(x)`, `x.__dict__`, `copy.copy(x)`,
# `dataclasses.replace(x, ...)`, `x.__getstate__()`, `x.__reduce_ex__(...)` (a `getattr`,
# `getmembers`, `__getattribute__` or anything else counts).
_SHALLOW = re.compile(
    r"vars\(|(?:[\w.]*\.)?(?:copy|replace)\(|[\w.]+\.__dict__(?:\[|$)"
    r"|[\w.]+\.__(?:getstate|reduce|reduce_ex)__\("
)


def _related(other: str, name: str, world: ClassWorld, descendants: set[str]) -> bool:
    """A class called `other` may share an instance with class `name`: the same, a subclass, or
    a class some class of the tree derives from together with it (by name, as anyorder_reach)."""
    if other == name or other in descendants:
        return True
    theirs, why = world.lineage(other)
    return bool(why) or bool(({other} | {i.name for _, i in theirs}) & ({name} | descendants))


class _Chain:
    """The first-base chains of the classes deriving from the judged one, by name."""

    def __init__(self, cls: ast.ClassDef, family: list[ClassInfo], attr: str) -> None:
        self.root = cls.name
        self.attr = attr
        self.by_name: dict[str, list[ClassInfo]] = {}
        for info in family:
            self.by_name.setdefault(info.name, []).append(info)

    def shadowed_above(self, start: str) -> bool:
        """`super().<attr>` in class `start` certainly runs an override below the judged class."""
        infos = self.by_name.get(start, [])
        if len(infos) != 1:
            return False
        up = [b for b in infos[0].bases[0] if b == self.root or b in self.by_name]
        return len(up) == 1 and self.shadowed(up[0])

    def shadowed(self, start: str) -> bool:
        """Every class called `start` is a subclass whose way up to the judged class passes a
        class that binds the attribute again (start included): certain, or False."""
        current = start
        for _ in range(_MAX_CHAIN):
            if current == self.root:
                return False
            infos = self.by_name.get(current, [])
            if len(infos) != 1:
                return False  # not a subclass, or two classes of that name: not certain
            info = infos[0]
            if self.attr in info.surely:
                return True
            if self.attr in info.binds:
                return False  # bound under a condition, or deleted: a base's def may remain
            up = [b for b in info.bases[0] if b == self.root or b in self.by_name]
            if len(up) != 1:
                return False
            current = up[0]
        return False


def _super_call(e: ast.expr) -> bool:
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "super"
        and not e.args
        and not e.keywords
    )


def _enclosing_class(scope: Scope) -> ast.ClassDef | None:
    """The class whose body defines the method `scope` is (zero-argument `super()` binds it)."""
    if not isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    parent = scope.parent
    if parent is None or not parent.is_class or not isinstance(parent.node, ast.ClassDef):
        return None
    return parent.node
