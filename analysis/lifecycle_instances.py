"""`vars(box)` where `box` is provably a fresh instance of a plain class of the module.

`vars(obj)` is `obj.__dict__`: it may read or set any attribute of `obj`, a method included, so
a lifecycle model must assume it reaches an instance of the modelled class unless `obj` cannot
be one. It cannot when every binding of the local name `obj` in its function is `obj = C()`
with `C` a plain class: defined once at module level, no bases, keywords (metaclass) or
decorators, no `__new__`, `__class__` or `__init_subclass__` in its body, never stored into
(`C.__new__ = ...`) nor declared `global` anywhere. `C()` then makes an instance whose type is
exactly `C`, and `obj.__class__ = Other` (the only way to change it) is itself a reflective
store that the module facts record on its own.
"""

from __future__ import annotations

import ast
from collections import Counter

from zeroopt.analysis.resolve import parameter_names, walk

_SPECIAL = frozenset({"__new__", "__class__", "__init_subclass__", "__class_getitem__"})


def vars_instance_class(call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str:
    """The class `C` when `call` is `vars(obj)` and `obj` is bound in `fn` only by `obj = C()`;
    "" when that is not certain."""
    if fn is None or len(call.args) != 1 or call.keywords:
        return ""
    obj = call.args[0]
    if not isinstance(obj, ast.Name):
        return ""
    name = obj.id
    made: set[str] = set()
    for node in walk(fn.body):
        if isinstance(node, ast.arg) and node.arg == name:
            return ""  # a parameter of a nested def or lambda: another variable there
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return ""
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ):
            return ""
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name:
            return ""
        if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name == name:
            return ""
        if isinstance(node, ast.MatchMapping) and node.rest == name:
            return ""
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            if not (
                len(node.targets) == 1
                and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and not value.args
                and not value.keywords
            ):
                return ""
            made.add(value.func.id)
            continue
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and not isinstance(node.ctx, ast.Load)
            and not _plain_target(node, fn)
        ):
            return ""
    if any(fn_param == name for fn_param in _params(fn)) or len(made) != 1:
        return ""
    (cls,) = made
    if _binds(fn, cls):
        return ""  # `C` is a local of the function, not the module's class
    return cls


def _plain_target(name: ast.Name, fn: ast.AST) -> bool:
    """`name` is the sole target of an `obj = C()` assignment (checked by the caller)."""
    for node in walk([fn]):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is name:
            return True
    return False


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return parameter_names(fn)


def _binds(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    if name in _params(fn):
        return True
    for node in walk(fn.body):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name == name
        ):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name:
            return True
        if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name == name:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
    return False


def plain_class(
    name: str,
    tree: ast.Module,
    bindings: Counter[str],
    class_stores: list[tuple[str, int, str]],
) -> bool:
    """`name` is a module-level class whose call makes an instance of exactly that class."""
    if bindings[name] != 1 or any(store == name for store, _, _ in class_stores):
        return False
    cls = next(
        (s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name),
        None,
    )
    if cls is None or cls.bases or cls.keywords or cls.decorator_list:
        return False
    for node in walk([tree]):
        if isinstance(node, ast.Global) and name in node.names:
            return False
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and len(node.args) >= 2
        ):
            first, key = node.args[0], node.args[1]
            if (
                not isinstance(first, ast.Name)
                or first.id == name
                or not isinstance(key, ast.Constant)
                or key.value in _SPECIAL
            ):
                return False  # `setattr(C, "__new__", f)`, `setattr(obj, "__class__", D)`
    for stmt in walk(cls.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in _SPECIAL:
            return False
        if isinstance(stmt, ast.Name) and stmt.id in _SPECIAL:
            return False
    return True
