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
- no file names the undecorated function or the class's namespace (`__func__` in a file that
  names the method, `C.__dict__`, `vars(C)`, `inspect.getattr_static(C, ...)`): those can call
  it with any first argument. Assumed: no lookup by a computed name fetches `__func__`.

Assumed, as everywhere under the closed world: no code outside the scanned tree derives from
the class or calls the function with another `cls`.
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.methods import TREE_DEP, ClassWorld, _short
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
    fn = scope.node
    owner = scope.parent
    if (
        not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        or owner is None
        or not owner.is_class
        or not isinstance(owner.node, ast.ClassDef)
    ):
        return None, ""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params or params[0].arg != name:
        return None, ""
    quals = [resolver.qualified(owner, d) for d in fn.decorator_list]
    if quals != ["builtins.classmethod"]:
        return None, ""
    cls = owner.node
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


def _reflected(world: ClassWorld, cls_name: str, method: str) -> str:
    """A file naming the method (as a word) and `__func__` anywhere (`g = C.make` on one line,
    `g.__func__(Other)` on another), or the class's namespace."""
    c, m = re.escape(cls_name.encode()), re.escape(method.encode())
    word = re.compile(rb"\b" + m + rb"\b")
    pattern = re.compile(
        rb"\b" + c + rb"[ \t]*\.[ \t]*__dict__|vars\([ \t]*" + c + rb"[ \t]*\)"
        rb"|getattr_static\([ \t]*" + c + rb"\b"
    )
    for path, data in world.files:
        if (b"__func__" in data and word.search(data)) or (
            cls_name.encode() in data and pattern.search(data)
        ):
            return (
                f"{_short(path)} reaches `{method}` of {cls_name} without its class: "
                "it may run with another `cls`"
            )
    return ""
