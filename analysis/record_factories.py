"""`cls(...)` in a classmethod of a plain dataclass (records.py): the class itself, under the
closed world.

In `@classmethod def allocate(cls, n): return cls(buf=torch.zeros(n))`, `cls` is the class the
method was looked up through: the dataclass, or any class deriving from it, whose `__init__`,
`__post_init__` or `__setattr__` may read the argument. Under the closed world (methods.py),
`cls` is the dataclass itself when:

- the method is a def of a module-level class statement that records.py reads as a plain
  dataclass (bound once, its one decorator `dataclasses.dataclass`, no base), decorated by the
  builtin `classmethod` only, and `cls` is its first parameter, never rebound;
- no class of the scanned tree may derive from it (`ClassWorld.lineage`: subclasses found by
  name in every file, classes made at run time from a computed base included);
- no file that names the class or a name the tree binds to it (`from m import Meta as M`, to
  a fixpoint: ClassWorld.aliases) reaches a namespace or a function by reflection
  (`__func__`, `__dict__`, `__get__`, `__wrapped__`, `vars(`, `inspect.getattr_static`/
  `getmembers_static`/`classify_class_attrs`, `gc.get_referents`), and no file naming the
  method has `__func__`: those can call it with any first argument. Assumed: a file that
  reaches the classmethod object names the class or one of those names.

Assumed, as everywhere under the closed world: no code outside the scanned tree derives from
the class or calls the function with another `cls`.
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.methods import TREE_DEP, ClassWorld, _short, method_scope
from zeroopt.analysis.resolve import Resolver, Scope, walk


def classmethod_class(
    scope: Scope,
    name: str,
    records: dict[str, tuple[str, ...]],
    resolver: Resolver,
    world: ClassWorld | None,
) -> tuple[str | None, str]:
    """(the record class `name` is, or None; why not, "" when `name` is no classmethod's
    `cls` at all)."""
    method = method_scope(scope)
    if method is None:
        return None, ""
    fn, owner, cls = method
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params or params[0].arg != name:
        return None, ""
    quals = [resolver.qualified(owner, d) for d in fn.decorator_list]
    if quals != ["builtins.classmethod"]:
        return None, ""
    if owner.parent is None or owner.parent.parent is not None or cls.name not in records:
        return None, f"`{name}` is a class not read as a plain dataclass ({cls.name})"
    if name in scope.nonlocal_names | scope.global_names or any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store | ast.Del)
        for n in walk(fn.body)
    ):
        return None, f"`{name}` is rebound in `{fn.name}`"
    if world is None:
        return None, f"the closed world is off: `{name}` may be any subclass of {cls.name}"
    found, why = world.lineage(cls.name)
    why = why or world.bases_stored(cls.name)
    if why:
        return None, f"`{name}` may be a subclass of {cls.name}: {why}"
    if found:
        path, info = found[0]
        return None, (
            f"`{name}` may be class {info.name} ({_short(path)}:{info.line}), "
            f"which derives from {cls.name}"
        )
    reflected = _reflected(world, cls.name, fn.name)
    if reflected:
        return None, reflected
    if resolver.project is not None:
        resolver.project.deps[TREE_DEP] = world.digest  # any file may add a subclass
    return cls.name, ""


# What reaches a class's namespace or a method's function, so that the classmethod object or
# its function may be called with another first argument (`M.__dict__["make"].__get__(None,
# Other)`, `getattr(M, "__dict__")`, `inspect.getmembers_static(M)`, `make.__func__(Other)`).
# `self.__dict__` is an instance's: no classmethod object is there.
_REFLECTION = re.compile(
    rb"__func__|(?<!\bself\.)__dict__|__get__|__wrapped__|\bvars\(|getattr_static"
    rb"|getmembers_static|classify_class_attrs|get_referents"
)


def _reflected(world: ClassWorld, cls_name: str, method: str) -> str:
    """A file naming the class, or a name the tree binds to it (`from m import Meta as M`,
    `M2 = M`, to a fixpoint), that also reaches a namespace or a function by reflection; or a
    file naming the method with `__func__` (`g = M.make` on one line, `g.__func__(Other)` on
    another)."""
    names = {cls_name}
    frontier = [cls_name]
    while frontier:
        for alias in world.aliases(frontier.pop()):
            if alias not in names:
                names.add(alias)
                frontier.append(alias)
    alt = b"|".join(re.escape(n.encode()) for n in sorted(names))
    word = re.compile(rb"\b(?:" + alt + rb")\b")
    func = re.compile(rb"\b" + re.escape(method.encode()) + rb"\b")
    for path, data in world.files:
        if (_REFLECTION.search(data) and word.search(data)) or (
            b"__func__" in data and func.search(data)
        ):
            return (
                f"{_short(path)} reaches `{method}` of {cls_name} without its class: "
                "it may run with another `cls`"
            )
    return ""
