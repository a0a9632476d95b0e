"""Attributes a program binds by names its text need not spell: what calls by method name must see.

Dispatch by name (analysis/dispatch.py) takes an attribute `f` of an object the tree made to be a
`def f` of the tree unless the text binds `f` some other way; its patterns look for the name as
written (`obj.f = `, `f=`, `"f"`). These bind attributes whose names are computed, joined or
listed inside a longer string, so no pattern of the name finds them:

- `setattr(obj, name, v)`, `object.__setattr__(obj, name, v)`, `vars(obj)[k] = v`,
  `obj.__dict__[k] = v`, `obj.__dict__.update(d)`, `obj.__dict__ = d`, `globals()[k] = v`,
  `globals().update(d)`: any name, unless the name is a string constant (implicit concatenation
  `"stuff_" "into"` is one constant, and it is read here);
- `SimpleNamespace(**d)`, `argparse.Namespace(**d)`: any name;
- the functional forms of `namedtuple`, `NamedTuple`, `make_dataclass` and the enums, whose
  field names may sit in one string (`"other f"`), a list, a variable, or across lines.

`bound_names(tree)` reads one module: the names it binds that way, where it may bind any, and
where it may bind any on a module object: the target is a name the file binds by an import,
`sys.modules[...]`, `importlib.import_module(...)`, `__import__(...)` or `globals()` (a module's
function is replaced that way, never through `self` or an object a call made). A module object
handed to a function as a plain value and patched there by a computed name is not seen.
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.resolve import walk_bfs

ANY = "*"
MODULE_ANY = "**"  # + a module's dotted name ("" any): `setattr(mod, k, v)` binds any name there
SELF = "<self>"  # the module the text is in (`globals()[k] = v`)
# What a file must mention to be read at all.
# (`vars(?<!\wvars)` is `\bvars`: a pattern whose alternatives all start with a literal is searched
# for those characters only, several times faster over a large tree.)
MENTIONS = re.compile(
    rb"setattr|__dict__|vars(?<!\wvars)\(|globals(?<!\wglobals)\(|Namespace\(|namedtuple"
    rb"|NamedTuple|make_dataclass|Enum\(|Flag\("
)
_FIELDS = frozenset(
    {"namedtuple", "NamedTuple", "make_dataclass", "Enum", "IntEnum", "StrEnum", "Flag",
     "IntFlag"}
)  # fmt: skip
_NAMESPACES = frozenset({"SimpleNamespace", "Namespace"})


def last_name(e: ast.expr) -> str:
    """The last identifier of a name or dotted attribute (`a.b.c` -> "c"), else ""."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    return ""


def _dict_of(e: ast.expr) -> bool:
    """`x.__dict__`, `vars(x)`, `globals()`: a namespace as a mapping."""
    if isinstance(e, ast.Attribute):
        return e.attr == "__dict__"
    return isinstance(e, ast.Call) and last_name(e.func) in ("vars", "globals") and len(e.args) <= 1


def _owner(mapping: ast.expr) -> ast.expr | None:
    """The object whose namespace `x.__dict__` / `vars(x)` / `globals()` is."""
    if isinstance(mapping, ast.Attribute):
        return mapping.value
    if isinstance(mapping, ast.Call):
        return mapping.args[0] if mapping.args else mapping  # `globals()`, `vars()`: a module's
    return None


def _field_names(e: ast.expr) -> set[str] | None:
    """Names a field specification spells: a string of names, a list or tuple of names or of
    (name, type) pairs, a dict with string keys; None when it is anything else."""
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return set(e.value.replace(",", " ").split())
    if isinstance(e, ast.List | ast.Tuple | ast.Set):
        out: set[str] = set()
        for x in e.elts:
            if isinstance(x, ast.Tuple | ast.List) and x.elts:
                x = x.elts[0]
            got = _field_names(x) if isinstance(x, ast.Constant) else None
            if got is None:
                return None
            out |= got
        return out
    if isinstance(e, ast.Dict):
        keys = [k for k in e.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if len(keys) != len(e.keys):
            return None
        return {str(k.value) for k in keys if isinstance(k, ast.Constant)}
    return None


def _const_name(e: ast.expr | None) -> str | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return e.value
    return None


def bound_names(tree: ast.Module) -> dict[str, int]:
    """name -> first line where the module binds an attribute of that name by one of the forms
    above; `ANY` -> the first line where it may bind any name."""
    found: dict[str, int] = {}
    imported: dict[str, str] = {}  # name -> the module it is bound to ("" if not certain)
    # One walk (ast.walk's order, without context leaves, which no test below looks at): the
    # imports first, then every call and assignment in that order.
    imports: list[ast.Import | ast.ImportFrom] = []
    binders: list[ast.AST] = []
    # Loop variables over a literal list or tuple (`for mod, name in [(helpers, "f")]`): name ->
    # the elements it takes, so a `setattr(mod, name, v)` in the loop stores into those.
    looped: dict[str, list[ast.expr]] = {}
    # `setattr` handed on as a value (`partial(setattr, m)`, `map(setattr, ...)`): it may bind
    # any name of any object, a module too.
    taken: list[ast.Name] = []
    called: set[int] = set()
    add_later: list[tuple[str | None, ast.AST, ast.expr]] = []
    for n in walk_bfs([tree]):
        if isinstance(n, ast.Import | ast.ImportFrom):
            imports.append(n)
        elif isinstance(n, ast.Call | ast.Assign | ast.AugAssign | ast.AnnAssign):
            binders.append(n)
            if isinstance(n, ast.Call):
                called.add(id(n.func))
        elif isinstance(n, ast.Name) and n.id == "setattr":
            taken.append(n)
        elif isinstance(n, ast.For | ast.comprehension) and isinstance(
            n.iter, ast.List | ast.Tuple
        ):
            slots = n.target.elts if isinstance(n.target, ast.Tuple | ast.List) else [n.target]
            for i, slot in enumerate(slots):
                if isinstance(slot, ast.Name):
                    looped.setdefault(slot.id, []).extend(
                        el.elts[i] if isinstance(el, ast.Tuple | ast.List) and i < len(el.elts)
                        else el
                        for el in n.iter.elts
                    )
    handed: dict[int, tuple[ast.expr | None, ast.expr | None]] = {}
    for c in binders:  # `addCleanup(setattr, m, "f", v)`, `partial(setattr, m)`: what follows
        if isinstance(c, ast.Call):
            for i, arg in enumerate(c.args):
                if isinstance(arg, ast.Name) and arg.id == "setattr":
                    rest = [*c.args[i + 1 : i + 3], None, None]
                    handed[id(arg)] = (rest[0], rest[1])
    for n in taken:
        if id(n) in called:
            continue
        given, spelled = handed.get(id(n), (None, None))
        if not isinstance(given, ast.Name | ast.Attribute):
            found.setdefault(ANY, n.lineno)
            found.setdefault(MODULE_ANY, n.lineno)
        else:
            add_later.append((_const_name(spelled), n, given))
    for n in imports:
        if isinstance(n, ast.Import):
            for a in n.names:
                imported[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(n, ast.ImportFrom):
            for a in n.names:
                known = n.module and not n.level and a.name != "*"
                imported[a.asname or a.name] = f"{n.module}.{a.name}" if known else ""

    following: set[str] = set()  # loop variables being resolved (a loop over itself: none)

    def module_of(e: ast.expr | None) -> str | None:
        """The module `e` may be: its dotted name, SELF (`globals()`), "" (any module), or None
        (no module: not an import, `sys.modules`, `import_module`, `__import__`, `globals()`)."""
        parts: list[str] = []
        while isinstance(e, ast.Attribute | ast.Subscript):
            if isinstance(e, ast.Subscript):
                return "" if last_name(e.value) == "modules" else None
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Call):
            if last_name(e.func) in ("globals", "vars") and not e.args and not parts:
                return SELF
            return "" if last_name(e.func) in ("import_module", "__import__", "getmodule") else None
        if isinstance(e, ast.Name) and e.id in imported:
            base = imported[e.id]
            return ".".join([base, *reversed(parts)]) if base else ""
        if isinstance(e, ast.Name) and e.id in looped and e.id not in following and not parts:
            following.add(e.id)
            known = {module_of(el) for el in looped[e.id]} - {None}
            following.discard(e.id)
            return next(iter(known)) if len(known) == 1 else ("" if known else None)
        return None

    def add(name: str | None, node: ast.AST, target: ast.expr | None = None) -> None:
        line = getattr(node, "lineno", 0)
        found.setdefault(ANY if name is None else name, line)
        module = module_of(target) if name is None else None
        if module is not None:
            found.setdefault(MODULE_ANY + module, line)

    for later in add_later:
        add(*later)
    for node in binders:
        if isinstance(node, ast.Call):
            func = node.func
            last = last_name(func)
            if last in ("setattr", "__setattr__"):
                # `setattr(obj, k, v)`, `object.__setattr__(obj, k, v)`, `obj.__setattr__(k, v)`
                args = node.args
                bound_self = (
                    isinstance(func, ast.Attribute)
                    and last == "__setattr__"
                    and not (
                        isinstance(func.value, ast.Name) and func.value.id in ("object", "super")
                    )
                    and not isinstance(func.value, ast.Call)
                )
                at = 0 if bound_self else 1
                target: ast.expr | None = (
                    func.value
                    if bound_self and isinstance(func, ast.Attribute)
                    else (args[0] if args else None)
                )
                add(_const_name(args[at]) if len(args) > at else None, node, target)
            elif isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault"):
                if _dict_of(func.value):
                    if node.args or any(k.arg is None for k in node.keywords):
                        add(None, node, _owner(func.value))
                    for k in node.keywords:
                        if k.arg is not None:
                            add(k.arg, node)
            elif last in _NAMESPACES:
                if node.args or any(k.arg is None for k in node.keywords):
                    add(None, node)
            elif last in _FIELDS:
                for k in node.keywords:
                    if k.arg is None:
                        add(None, node)
                for spec in [
                    *node.args[1:],
                    *(
                        k.value
                        for k in node.keywords
                        if k.arg in ("field_names", "fields", "names")
                    ),
                ]:
                    names = _field_names(spec)
                    if names is None:
                        add(None, node)
                    else:
                        for field in names:
                            add(field, node)
                if last == "NamedTuple" or last == "make_dataclass":
                    for k in node.keywords:  # `NamedTuple("P", a=int)`
                        if k.arg is not None and k.arg not in ("fields", "bases", "namespace"):
                            add(k.arg, node)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets: list[ast.expr] = (
                list(node.targets) if isinstance(node, ast.Assign) else [node.target]
            )
            flat: list[ast.expr] = []
            while targets:
                t = targets.pop()
                if isinstance(t, ast.Tuple | ast.List):
                    targets.extend(t.elts)
                else:
                    flat.append(t.value if isinstance(t, ast.Starred) else t)
            for sub in flat:
                if isinstance(sub, ast.Subscript) and _dict_of(sub.value):
                    add(_const_name(sub.slice), node, _owner(sub.value))
                elif isinstance(sub, ast.Attribute) and sub.attr == "__dict__":
                    add(None, node, sub.value)  # `obj.__dict__ = d`
    return found
