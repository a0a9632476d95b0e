"""Plain dataclasses of a module: classes whose constructor only stores its arguments.

`Meta(page_table=buf[:bs])` then needs no contract: the generated `__init__` assigns each
argument to the field of that name and runs nothing else. Anything that could run code of its
own (a base class, `__init__`/`__post_init__`/`__setattr__`, a `default_factory` that is not a
builtin container, `InitVar`, `KW_ONLY`, a name bound twice) disqualifies the class.
"""

from __future__ import annotations

import ast

_DATACLASS = {"dataclass", "dataclasses.dataclass"}
_SAFE_FACTORIES = {"list", "dict", "set", "tuple"}
_CODE_METHODS = {"__init__", "__post_init__", "__setattr__", "__new__", "__init_subclass__"}


def plain_dataclasses(module: ast.Module) -> dict[str, tuple[str, ...]]:
    """Class name -> its fields in `__init__` order."""
    cached: dict[str, tuple[str, ...]] | None = getattr(module, "_zeroopt_records", None)
    if cached is not None:
        return cached
    bound: dict[str, int] = {}
    for stmt in module.body:
        for name in _bound_names(stmt):
            bound[name] = bound.get(name, 0) + 1
    declared_global = {
        n for node in ast.walk(module) if isinstance(node, ast.Global) for n in node.names
    }
    records: dict[str, tuple[str, ...]] = {}
    for stmt in module.body:
        if not isinstance(stmt, ast.ClassDef) or bound.get(stmt.name) != 1:
            continue
        if stmt.name in declared_global:
            continue
        fields = _fields(stmt)
        if fields is not None:
            records[stmt.name] = fields
    module._zeroopt_records = records  # type: ignore[attr-defined]
    return records


def _fields(cls: ast.ClassDef) -> tuple[str, ...] | None:
    if cls.bases or cls.keywords or len(cls.decorator_list) != 1:
        return None
    dec = cls.decorator_list[0]
    if isinstance(dec, ast.Call):
        if dec.args or any(k.arg in ("init", "slots") for k in dec.keywords):
            return None
        dec = dec.func
    if _dotted(dec) not in _DATACLASS:
        return None
    fields: list[str] = []
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in _CODE_METHODS:
            return None
        if not isinstance(stmt, ast.AnnAssign):
            continue
        if not isinstance(stmt.target, ast.Name):
            return None
        annotation = ast.unparse(stmt.annotation)
        if "ClassVar" in annotation:
            continue
        if "InitVar" in annotation or "KW_ONLY" in annotation:
            return None
        if stmt.value is not None and not _plain_default(stmt.value):
            return None
        fields.append(stmt.target.id)
    return tuple(fields)


def _plain_default(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call) and _dotted(value.func) in ("field", "dataclasses.field"):
        for k in value.keywords:
            if k.arg == "init" or k.arg is None:
                return False
            if k.arg == "default_factory" and _dotted(k.value) not in _SAFE_FACTORIES:
                return False
            if k.arg == "default" and not isinstance(k.value, ast.Constant):
                return False
        return not value.args
    return False


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _bound_names(stmt: ast.stmt) -> list[str]:
    """Names a module-level statement binds (nested blocks included: `if`/`try` at top level)."""
    names: list[str] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.append(node.id)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
    return names
