"""Plain dataclasses of a module: classes whose constructor only stores its arguments.

`Meta(page_table=buf[:bs])` then needs no contract: the generated `__init__` assigns each
argument to the field of that name and runs nothing else. Anything that could run code of its
own (a base class, `__init__`/`__post_init__`/`__setattr__`, a `default_factory` that is not a
builtin container, `InitVar`, `KW_ONLY`, a name bound twice) disqualifies the class.

Methods decorated by the builtin `classmethod`, `staticmethod` or `property` (names the module
never binds) are allowed when none is named like a field: the generated `__init__` assigns only
the fields, and none of those descriptors runs code when the class is made (no `__set_name__`
that could put an `__init__` on it). `slots=True` makes a new class with the same generated
`__init__`; `kw_only=True` makes every field keyword-only: its fields start with `KW_ONLY_MARK`,
and a call with a positional argument is not read as the constructor.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from zeroopt.analysis.resolve import walk

_SAFE_FACTORIES = {"list", "dict", "set", "tuple"}
_CODE_METHODS = {"__init__", "__post_init__", "__setattr__", "__new__", "__init_subclass__"}
# Builtin decorators of a record's methods: descriptors made at class creation, running nothing
# then, never a data descriptor named like a field (`_fields` checks the names).
_METHOD_DECORATORS = ("classmethod", "staticmethod", "property")
KW_ONLY_MARK = "*"  # first of the fields of a `kw_only=True` dataclass: no positional arguments


def plain_dataclasses(
    module: ast.Module, declared_global: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """Class name -> its fields in `__init__` order. `declared_global`: the names some function
    declares `global` (the resolver knows them): such a function may rebind the class."""
    cached: dict[str, tuple[str, ...]] | None = getattr(module, "_zeroopt_records", None)
    if cached is not None:
        return cached
    if not any(isinstance(s, ast.ClassDef) and s.decorator_list for s in module.body):
        # No class below could qualify (`_fields` needs its one decorator): no walk.
        module._zeroopt_records = {}  # type: ignore[attr-defined]
        return {}
    bound, touched = _bound_and_touched(module)
    excluded = set(declared_global) | touched
    names = _Dataclasses.of(module, bound, excluded)
    records: dict[str, tuple[str, ...]] = {}
    if names.unsure:
        module._zeroopt_records = records  # type: ignore[attr-defined]
        return records
    for stmt in module.body:
        if not isinstance(stmt, ast.ClassDef) or bound[stmt.name] != 1:
            continue
        if stmt.name in excluded:
            continue
        builtins = {d for d in _METHOD_DECORATORS if not bound[d] and not bound["*"]}
        fields = _fields(stmt, names, builtins)
        if fields is not None:
            records[stmt.name] = fields
    module._zeroopt_records = records  # type: ignore[attr-defined]
    return records


def imported_names(module: ast.Module, declared_global: Iterable[str] = ()) -> list[str]:
    """Names bound once in the module's scope, by an `import` at its top level, that nothing
    here rebinds or changes (`Meta.__init__ = f`, `setattr(Meta, ...)`, `global Meta`): where
    they denote another module's plain dataclass, a call runs that class's generated
    `__init__`."""
    bound, touched = _bound_and_touched(module)
    excluded = set(declared_global) | touched
    if "*" in excluded or "*" in bound:
        return []  # `globals()`, or a star import that may rebind any name
    found: list[str] = []
    for stmt in module.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name
                if alias.name != "*" and bound[name] == 1 and name not in excluded:
                    found.append(name)
    return found


class _Dataclasses:
    """The names that certainly are `dataclasses.dataclass` and `dataclasses.field` here: bound
    once, at module level, by an import from the stdlib module (a module's own `dataclass`
    decorator may do anything)."""

    def __init__(self, modules: set[str], names: dict[str, str], unsure: bool = False) -> None:
        self.modules = modules  # `import dataclasses [as dc]`
        self.names = names  # local name -> "dataclass" / "field"
        # `ClassVar as CV` and the like: a field list read off annotations could be wrong.
        self.unsure = unsure

    @classmethod
    def of(cls, module: ast.Module, bound: Counter[str], excluded: set[str]) -> _Dataclasses:
        modules: set[str] = set()
        names: dict[str, str] = {}
        unsure = False
        for stmt in walk([module]):  # order-free: any match decides
            if isinstance(stmt, ast.ImportFrom):
                unsure = unsure or any(
                    a.asname and a.name in ("ClassVar", "InitVar", "KW_ONLY") for a in stmt.names
                )
        for stmt in module.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "dataclasses":
                        modules.add(alias.asname or alias.name)
            elif (
                isinstance(stmt, ast.ImportFrom) and stmt.module == "dataclasses" and not stmt.level
            ):
                for alias in stmt.names:
                    if alias.name in ("dataclass", "field"):
                        names[alias.asname or alias.name] = alias.name
        # A star import may bind any name, `dataclass` included, before or after the import
        # from `dataclasses`: nothing here is certain then.
        stable = set() if bound["*"] else {n for n in bound if bound[n] == 1 and n not in excluded}
        return cls(modules & stable, {k: v for k, v in names.items() if k in stable}, unsure)

    def means(self, node: ast.expr, what: str) -> bool:
        if isinstance(node, ast.Name):
            return self.names.get(node.id) == what
        return (
            isinstance(node, ast.Attribute)
            and node.attr == what
            and isinstance(node.value, ast.Name)
            and node.value.id in self.modules
        )


def _fields(
    cls: ast.ClassDef, dataclasses: _Dataclasses, builtin_decorators: set[str]
) -> tuple[str, ...] | None:
    if cls.bases or cls.keywords or len(cls.decorator_list) != 1:
        return None
    dec = cls.decorator_list[0]
    kw_only = False
    if isinstance(dec, ast.Call):
        if dec.args or any(k.arg in ("init", None) for k in dec.keywords):
            return None
        for k in dec.keywords:
            if k.arg in ("slots", "kw_only"):
                if not (isinstance(k.value, ast.Constant) and type(k.value.value) is bool):
                    return None
                kw_only = kw_only or (k.arg == "kw_only" and k.value.value)
        dec = dec.func
    if not dataclasses.means(dec, "dataclass"):
        return None
    fields: list[str] = []
    methods: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            # Special methods run code of their own (`__getattribute__`, `__init__`, ...);
            # another decorator may return an object whose `__set_name__` changes the class,
            # or a data descriptor the generated __init__ stores through.
            if stmt.name.startswith("__") or not all(
                isinstance(d, ast.Name) and d.id in builtin_decorators for d in stmt.decorator_list
            ):
                return None
            methods.add(stmt.name)
            continue
        if isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if not isinstance(stmt, ast.AnnAssign):
            return None  # `__post_init__ = f`, a field under `if`: the fields are not these
        if not isinstance(stmt.target, ast.Name):
            return None
        annotation = ast.unparse(stmt.annotation)
        if "ClassVar" in annotation:
            continue
        if "InitVar" in annotation or "KW_ONLY" in annotation:
            return None
        if stmt.value is not None and not _plain_default(stmt.value, dataclasses):
            return None
        fields.append(stmt.target.id)
    if (methods | builtin_decorators) & set(fields) or methods & builtin_decorators:
        # A def named like a field: the field's default, or a property over it; a field or a
        # def named like a decorator: the class body's own binding is what `@classmethod` calls.
        return None
    return (KW_ONLY_MARK, *fields) if kw_only else tuple(fields)


def _plain_default(value: ast.expr, dataclasses: _Dataclasses) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call) and dataclasses.means(value.func, "field"):
        for k in value.keywords:
            if k.arg in ("init", "kw_only") or k.arg is None:
                return False  # kw_only: positional arguments skip the field
            if k.arg == "default_factory" and _dotted(k.value) not in _SAFE_FACTORIES:
                return False
            if k.arg == "default" and not isinstance(k.value, ast.Constant):
                return False
        return not value.args
    return False


def _bound_and_touched(module: ast.Module) -> tuple[Counter[str], frozenset[str]]:
    """`_module_bindings` and `_touched_classes` of the module, walked once for both callers
    (`plain_dataclasses`, `imported_names`) and kept on the tree, which the analysis never
    changes (it changes copies)."""
    memo: tuple[Counter[str], frozenset[str]] | None = getattr(module, "_zeroopt_bound", None)
    if memo is None:
        memo = (_module_bindings(module), frozenset(_touched_classes(module)))
        module._zeroopt_bound = memo  # type: ignore[attr-defined]
    return memo


def _touched_classes(module: ast.Module) -> set[str]:
    """Classes of the module that code changes after the fact (`Q.__init__ = f`,
    `setattr(Q, ...)`): their generated methods may not be the ones that run. `globals()`
    anywhere may rebind any of them."""
    touched: set[str] = set()
    for node in walk([module]):  # order-free: a set
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            if isinstance(node.value, ast.Name):
                touched.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("setattr", "delattr") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name):
                    touched.add(first.id)
            elif node.func.id in ("globals", "vars"):
                touched.add("*")
    if "*" in touched:
        touched |= {c.name for c in module.body if isinstance(c, ast.ClassDef)}
    return touched


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _module_bindings(module: ast.Module) -> Counter[str]:
    """How often each name is bound in the module's own scope (nested `if`/`try` blocks
    included). Function and class bodies bind their own names and are not walked, but what runs
    in the module scope is: decorators, defaults, bases, and walruses anywhere in those (or in
    comprehensions, whose targets are counted too: over-counting only disqualifies more)."""
    counts: Counter[str] = Counter()
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            counts[node.name] += 1
            stack.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                stack.extend(node.bases)
                stack.extend(k.value for k in node.keywords)
            else:
                stack.extend(_defaults(node.args))
                stack.extend(_annotations(node))  # evaluated at definition time
            continue
        if isinstance(node, ast.Lambda):
            stack.extend(_defaults(node.args))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            counts[node.id] += 1
        elif isinstance(node, ast.alias):
            counts[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            counts[node.name] += 1  # `except E as Meta`, `case ... as Meta`
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
        stack.extend(ast.iter_child_nodes(node))
    return counts


def _defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return found if fn.returns is None else [*found, fn.returns]
