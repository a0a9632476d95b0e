"""Tree-wide forms that let a method run with a `self` of another class, and the calls that
make a class at run time: the text and syntax checks the reach of reflection
(anyorder_reach.py) asks about, kept apart to keep that module readable."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from zeroopt.analysis.anyorder_classes import spelled_in
from zeroopt.analysis.anyorder_stores import (
    bases_added,
    bases_stores,
    family,
    module_dict_reached,
    named_in_strings,
)
from zeroopt.analysis.dynamic_attributes import last_name
from zeroopt.analysis.lookup_names import exact, may_name
from zeroopt.analysis.methods import ClassWorld, _short

# Aliasing forms the text scan of lifecycle_anyorder.py does not see: the builtins taken as
# values, `import copy as c`, `from copy import deepcopy as d`.
ALIASES = re.compile(
    rb"\b(?:getattr|setattr|delattr|vars)\b(?![ \t]*\()|\bimport[ \t]+copy[ \t]+as\b"
    rb"|\bfrom[ \t]+copy[ \t]+import\b|\bimport[ \t]+(?:pickle|dill|cloudpickle)\b"
    # a dunder or a reflective function's name as a literal lookup; one imported as another name
    rb"|\b(?:get|set|del)attr[ \t]*\([^(),]*,[ \t]*[rRbB]?['\"](?:__|f_|getattr|setattr|delattr"
    rb"|vars|eval|exec|compile|globals|locals|deepcopy|copy|replace|asdict|astuple|attrgetter"
    rb"|methodcaller|getmembers|get_|import_module|new_class|type|save|dump|load|modules)"
    rb"|\b(?:getattr|setattr|delattr|vars|deepcopy|asdict|astuple|attrgetter|methodcaller|exec"
    rb"|eval|compile|getmembers|getmembers_static|get_objects|get_referents|get_referrers|copy"
    rb"|replace|save|dumps?)[ \t]+as\b"
)


def _literal_name(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and isinstance(e.value, str)


def _plain_literal(e: ast.expr) -> bool:
    """A literal name that is no dunder (`getattr(o, "__dict__")` is `o.__dict__`) and no
    reflective function's (`getattr(builtins, "getattr")`): a lookup of it touches one
    attribute the text names."""
    return isinstance(e, ast.Constant) and isinstance(e.value, str) and not may_name(exact(e.value))


_UNBOUND: dict[tuple[str, str], str] = {}
# A method's plain function taken off a bound method (`d.m.__func__`) or a class
# (`inspect.getattr_static`), an object's class replaced (`x.__class__ = K`, `setattr(x,
# "__class__", K)`): a method may then run with a `self` of any class. (A store of a class's
# bases: anyorder_stores.py.)
_SELF_REPLACED = re.compile(rb"__func__|getattr_static|__class__[ \t]*=(?!=)|[\"']__class__[\"']")
_REPLACED: dict[str, str] = {}


_REBOUND: dict[tuple[str, str, tuple[str, ...] | None], str] = {}


def _first_match(
    world: ClassWorld,
    pattern: re.Pattern[bytes],
    *needles: bytes,
    files: Iterable[tuple[str, bytes]] | None = None,
) -> str:
    """`path:line` of the first match of `pattern` in the tree's files, or "". `needles`: every
    match contains one of them, so only files that contain one are searched (a substring test
    costs a fraction of the pattern's search); `files`: the files, in file order, that hold
    every match (all when None)."""
    for path, data in world.files if files is None else files:
        if not needles or any(n in data for n in needles):
            m = pattern.search(data)
            if m:
                line = data.count(b"\n", 0, m.start()) + 1
                return f"{_short(path)}:{line}"
    return ""


def _name_rebound(world: ClassWorld, name: str, modules: tuple[str, ...] | None = None) -> str:
    """A file of the tree that may rebind the module-level name `name` without a statement of
    its module: an attribute store `m.name = ...`, a string `"name"` (`setattr(m, "name", v)`,
    `globals()["name"]`; with `modules`, none that is a type annotation or in `__all__`), and
    `globals()`: with `modules` (the files of the modules the name is looked up in) only there,
    and a binding under a computed name on what may be one of them
    (anyorder_stores.py `module_dict_reached`); without, `globals()` anywhere. A store of a
    class's bases is judged apart (anyorder_stores.py `bases_added`); "" if none."""
    key = (world.digest or f"id:{id(world)}", name, modules)
    hit = _REBOUND.get(key) if world.digest else None
    if hit is None:
        n = re.escape(name.encode())
        spelled = rb"\.[ \t]*" + n + rb"\b[ \t]*=(?!=)|[\"']" + n + rb"[\"']"
        if modules is None:
            pattern = re.compile(rb"\bglobals[ \t]*\(|" + spelled)
            at = _first_match(world, pattern, b"globals", name.encode())
        else:  # a string naming it, but for annotations and `__all__`: parsed
            stored = rb"\.[ \t]*" + n + rb"\b[ \t]*=(?!=)"
            at = _first_match(
                world, re.compile(stored), name.encode(), files=spelled_in(world, name)
            )
            at = at or named_in_strings(world, name)
        hit = f"{at} may rebind `{name}`: it may name another class" if at else ""
        if not hit and modules is not None:
            hit = module_dict_reached(world, name, modules)
        if world.digest:
            _REBOUND[key] = hit
    return hit


def _self_replaced(world: ClassWorld, name: str, judged: str = "") -> str:
    """A file of the tree that may run a method of the class called `name` with a `self` of
    another class without naming the method or the class: `__func__`, a store of `__class__`,
    a store of a class's bases that may add it or a class deriving from it (to a class whose
    objects may be those of the class `judged`, when given: analysis/bases_targets.py); ""
    if none."""
    key = world.digest or f"id:{id(world)}"
    hit = _REPLACED.get(key) if world.digest else None
    if hit is None:
        at = _first_match(world, _SELF_REPLACED, b"__func__", b"getattr_static", b"__class__")
        hit = (
            f"{at} takes a method's function or replaces an object's class: a method may run "
            "with another `self`"
            if at
            else ""
        )
        if world.digest:
            _REPLACED[key] = hit
    if hit:
        return hit
    names = family(world, name)
    if not judged:
        return bases_added(world, lambda e: names is None or e in names)
    from zeroopt.analysis.bases_targets import CALLERS_CLOSED, store_reaches

    for store in bases_stores(world):
        if store.added is None:
            return f"{store.at} replaces a class's bases: any class may come to derive from it"
        added = [e.id for e in store.added if names is None or e.id in names]
        if added:
            reaches, how = store_reaches(world, store, judged, CALLERS_CLOSED.get())
            if reaches:
                return (
                    f"{store.at} adds `{added[0]}` to a class's bases ({how}): its methods may run "
                    "with another `self`"
                )
    return ""


def _unbound_call(world: ClassWorld, method: str) -> str:
    """A file of the tree that may take `method` from a class object it does not name
    (`type(x).m`, `x.__class__.m`, `cls.m`), or "". A class object
    held in a plain name (`K = type(x)`; `K.m(obj)`) is not seen: the closed world's
    assumption that a method runs with a `self` of its class (docs/whole-program.md)."""
    key = (world.digest, method)
    hit = _UNBOUND.get(key)
    if hit is None:
        pattern = re.compile(
            rb"(?:__class__|\btype[ \t]*\((?:[^()\n]|\([^()\n]*\))*\)|\bcls)[ \t]*\.[ \t]*"
            + re.escape(method.encode())
            + rb"\b"
        )
        at = _first_match(world, pattern, method.encode())
        hit = (
            f"{at} takes `{method}` from a class object: it may run with another `self`"
            if at
            else ""
        )
        if world.digest:
            _UNBOUND[key] = hit
    return hit


def _class_call(n: ast.Call, last: str) -> tuple[str, str] | None:
    """`_class_made`'s bases and "", or, for a call like `type`'s with a computed name
    (`Maker(label, (A, B), ns)`), its bases and the callee's name (a class made only if the
    callee is a metaclass: `may_be_metaclass`); None when it makes no class."""
    made = _class_made(n, last)
    if made is not None:
        return made, ""
    if len(n.args) == 3 and isinstance(n.args[1], ast.Tuple | ast.List) and last:
        return _made_bases(n.args[1]), last
    return None


def _class_made(n: ast.Call, last: str) -> str | None:
    """The bases ("A,B", "" unknown) of the class `n` may make, or None if it makes none:
    `type(name, bases, ns)`, `types.new_class(name, bases)`, a metaclass called like `type`
    (`ABCMeta("N", (A, B), ns)`: a string, a bases display and a namespace, or any callee
    whose name ends in `Meta`, or `K.__class__(...)`), `M.__new__(mcs, name, bases, ns)`."""
    args = n.args[1:] if last == "__new__" else n.args
    maker = last in ("new_class", "__new__", "__class__") or last.endswith("Meta")
    if len(args) < 2 or any(isinstance(a, ast.Starred) for a in args[:2]):
        return "" if maker or (last == "type" and len(args) != 1) else None
    if maker or (len(args) == 3 and last == "type"):
        return _made_bases(args[1])
    if (
        len(args) == 3
        and isinstance(args[0], ast.Constant | ast.JoinedStr)
        and isinstance(args[1], ast.Tuple | ast.List)
    ):
        return _made_bases(args[1])  # a name, a bases display, a namespace: like `type`
    return None


def _made_bases(spec: ast.expr) -> str:
    """The names of the bases of `type(name, (A, B), ns)` ("A,B"), or "" when they are not a
    literal tuple of names."""
    if not isinstance(spec, ast.Tuple | ast.List):
        return ""
    names = [last_name(e) if isinstance(e, ast.Name | ast.Attribute) else "" for e in spec.elts]
    return ",".join(names) if names and all(names) else ""
