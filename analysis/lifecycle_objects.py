"""Names and `self` attributes of a lifecycle program that never share an object: each holds
only what its own constructor call (or display) made.

`metadata = Meta()` and `expand = Meta()` in one capture setup are two objects, so a store into
`expand.page_table` leaves `metadata.page_table` holding the view it held. The dataflow demotes
every `.page_table` path on such a store unless it knows that (effects.rebind_elsewhere). A name
qualifies when every binding of it in the program is `name = C(...)` for a class `C` whose call
can only make a new instance (lifecycle_module.record_classes: bound once at module level, no
base, metaclass, `__new__` or decorator but `dataclass`), or the program's "unbound at method
entry" marker; parameters, names a nested scope may bind, and names bound any other way do not.
Two such names then never name one object: an object made by one's constructor call reaches
the other only through a binding of the other, which is another constructor call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from zeroopt.analysis.lifecycle_program import _UNKNOWN, RENAME_MARK, Program
from zeroopt.analysis.resolve import walk_bfs

_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip


def distinct_objects(
    program: Program, classes: Iterable[str], attributes: bool = False
) -> frozenset[str]:
    """The distinct names of the program; with `attributes`, its distinct `self` places too
    (asked for witness programs only: on one straight schedule no other method of the class
    runs, so only the program's own stores can re-point `self.x`)."""
    makers = frozenset(classes)
    places = _distinct_attributes(program, makers) if attributes else frozenset()
    if not makers:
        return places
    made: set[str] = set()
    allowed: set[int] = set()
    for node in _walk(program.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if not isinstance(target, ast.Name):
                continue
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in makers
                and RENAME_MARK not in value.func.id
            ):
                made.add(target.id)
                allowed.add(id(target))
            elif isinstance(value, ast.Name) and value.id == _UNKNOWN:
                allowed.add(id(target))
    other = _bound_elsewise(program, allowed)
    return frozenset(made - other) | places


def _bound_elsewise(program: Program, allowed: set[int]) -> set[str]:
    """Names bound other than by the assignments in `allowed`, or that code which may run at
    another time can rebind: parameters, names a nested scope mentions, globals, imports."""
    other: set[str] = set(program.params)
    for node in _walk(program.body):
        if isinstance(node, _SCOPES):
            for n in walk_bfs([node]):
                if isinstance(n, ast.Name):
                    other.add(n.id)
                elif isinstance(n, ast.arg):
                    other.add(n.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in allowed:
                other.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other |= set(node.names)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
    return other


def object_origins(
    program: Program, classes: Iterable[str], attributes: bool = False
) -> dict[str, frozenset[str]]:
    """Per name (and, with `attributes`, per `self.x` place) of the program, the sites whose
    new objects it may hold, by label: `n` for `n = C(...)` or `n = {...}`, `self.x` for
    `self.x = C(...)`. Every object a label names was made by a call or display bound there,
    so two places with no label in common never hold one object. A place is left out (not
    known) where any binding of it is not a plain assignment of a new object, `None`, or a
    place known here: parameters, names bound another way, `self.x` where `.x` is stored any
    other way through any object (or `setattr`, `vars`, `__dict__` appear). `classes` must be
    classes whose instances keep attributes plainly (`plain_classes`): loading `o.a` of one
    then runs no code that could hand back another object's `.a`."""
    makers = frozenset(classes)
    values: dict[str, list[ast.expr]] = {}
    allowed: set[int] = set()
    spoiled = not attributes
    stores: dict[str, list[bool]] = {}
    for node in _walk(program.body):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "setattr", "delattr", "vars",
        ):  # fmt: skip
            spoiled = True
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            spoiled = True
        target, value = _sole_target(node)
        if isinstance(target, ast.Name) and value is not None:
            values.setdefault(target.id, []).append(value)
            allowed.add(id(target))
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and value is not None
        ):
            values.setdefault(f"self.{target.attr}", []).append(value)
            allowed.add(id(target))
    for node in _walk(program.body):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            stores.setdefault(node.attr, []).append(id(node) in allowed)
    unknown = _bound_elsewise(program, allowed)
    spoiled = spoiled or any(  # `self` rebound: its stores need not be the object's
        isinstance(n, ast.Name) and n.id == "self" and not isinstance(n.ctx, ast.Load)
        for n in _walk(program.body)
    )
    unknown |= {
        key
        for key in values
        if key.startswith("self.") and (spoiled or not all(stores[key[len("self.") :]]))
    }

    def made(v: ast.expr) -> bool:
        if isinstance(v, _DISPLAYS):
            return True
        return (
            isinstance(v, ast.Call)
            and isinstance(v.func, ast.Name)
            and v.func.id in makers
            and RENAME_MARK not in v.func.id
        )

    found: dict[str, frozenset[str]] = {k: frozenset() for k in values if k not in unknown}
    changed = True
    while changed:
        changed = False
        for key in list(found):
            labels: set[str] = set()
            for v in values[key]:
                source = _place(v)
                if made(v):
                    labels.add(key)
                elif isinstance(v, ast.Constant) and v.value is None:
                    continue
                elif isinstance(v, ast.Name) and v.id == _UNKNOWN:
                    continue  # a local at method entry: unbound
                elif source is not None and source in found:
                    labels |= found[source]
                else:
                    del found[key]  # something else: may hold any object
                    changed = True
                    break
            else:
                if labels != found[key]:
                    found[key] = frozenset(labels)
                    changed = True
    return found


def _sole_target(node: ast.AST) -> tuple[ast.expr | None, ast.expr | None]:
    """(target, value) of `t = v` or `t: T = v` with one target; (None, None) otherwise."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0], node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return node.target, node.value
    return None, None


def _place(v: ast.expr) -> str | None:
    if isinstance(v, ast.Name):
        return v.id
    if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "self":
        return f"self.{v.attr}"
    return None


def plain_classes(tree: ast.Module, names: Iterable[str]) -> frozenset[str]:
    """Those of the module's classes `names` whose instances keep attributes plainly: no special
    method (`__getattr__`, `__getattribute__`, `__setattr__`, ...), no decorated method (a
    property), and class attributes only constants, `field(...)`, annotations or nested classes
    (no descriptor object)."""
    wanted = set(names)
    out: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name not in wanted:
            continue
        if all(_plain_member(s) for s in node.body):
            out.add(node.name)
    return frozenset(out)


def _plain_member(s: ast.stmt) -> bool:
    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef):
        return not s.name.startswith("__") and not s.decorator_list
    if isinstance(s, ast.ClassDef):
        return not s.bases and not s.keywords  # a metaclass could make it a descriptor
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Expr):
        return isinstance(s.value, ast.Constant)
    if isinstance(s, ast.AnnAssign | ast.Assign):
        v = s.value
        return v is None or _literal(v) or _plain_field(v)
    return False


def _plain_field(v: ast.expr) -> bool:
    """`field(...)` whose default, if any, is a literal (a default object is the class
    attribute, which could be a descriptor)."""
    return (
        isinstance(v, ast.Call)
        and getattr(v.func, "id", getattr(v.func, "attr", "")) == "field"
        and not v.args
        and all(k.arg is not None and (k.arg != "default" or _literal(k.value)) for k in v.keywords)
    )


def _literal(v: ast.expr) -> bool:
    """A constant, or a tuple of them (`(-1, -1)`): no object with methods of its own."""
    try:
        ast.literal_eval(v)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return not isinstance(v, ast.Dict | ast.List | ast.Set)


# Values that are a new object each time they are evaluated.
_DISPLAYS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _distinct_attributes(program: Program, makers: frozenset[str]) -> frozenset[str]:
    """`self.x` places stored only as `self.x = {...}` (a display or a maker's call) anywhere in
    the program, with no `.x` stored any other way through any object: each holds an object of
    its own (`self.decode_metadata` and `self.encoder_metadata` are two dicts). Code outside
    the program that is handed `self` may store anything there; the dataflow already counts
    such a call as a possible write of what `self` holds."""
    for node in _walk(program.body):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "setattr", "delattr", "vars",
        ):  # fmt: skip
            return frozenset()
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return frozenset()
    stores = _allowed_attribute_stores(program, makers)
    return frozenset(f"self.{a}" for a, allowed in stores.items() if all(allowed))


def _allowed_attribute_stores(program: Program, makers: frozenset[str]) -> dict[str, list[bool]]:
    """Per attribute name, for each store into `<anything>.<name>`: whether it is
    `self.<name> = <display or maker call>` as the sole target of an assignment."""
    ok: set[int] = set()
    for node in _walk(program.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t, value = node.targets[0], node.value
            if (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                and (
                    isinstance(value, _DISPLAYS)
                    or (
                        isinstance(value, ast.Call)
                        and isinstance(value.func, ast.Name)
                        and value.func.id in makers
                    )
                )
            ):
                ok.add(id(t))
    stores: dict[str, list[bool]] = {}
    for node in _walk(program.body):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            stores.setdefault(node.attr, []).append(id(node) in ok)
    return stores


def _walk(body: list[ast.stmt]) -> Iterable[ast.AST]:
    """`ast.walk` of each statement in turn, without the context and operator leaves (Load,
    Add, ...) no caller looks for: the same nodes otherwise, in the same order, faster."""
    return walk_bfs(body)
