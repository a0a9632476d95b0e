"""Resolve names to qualified names (`th.zeros` -> `torch.zeros`) with Python's scoping rules.

Flow-insensitive on purpose: a name is resolved only when every binding of it in its scope agrees
(imports of the same thing, optionally next to `= None` fallbacks). Anything else stays unresolved,
which only ever makes the analysis more conservative: an unresolved callee is an unknown call.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

_BUILTINS = frozenset(dir(builtins))
_OPAQUE = "<opaque>"  # a binding that is not an import: assignment, parameter, def, ...
_NONE = "<none>"  # `name = None`: the usual `except ImportError` fallback, harmless for resolution


@dataclass
class Scope:
    node: ast.AST
    parent: Scope | None
    is_class: bool = False
    bindings: dict[str, set[str]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    # Names of this scope that some nested function, lambda or class body refers to: closures can
    # read them at any later call, so the analysis treats them as escaped.
    captured: set[str] = field(default_factory=set)
    free_loads: set[str] = field(default_factory=set)

    def bind(self, name: str, what: str) -> None:
        self.bindings.setdefault(name, set()).add(what)


def _collect_declarations(body: list[ast.AST], scope: Scope) -> None:
    """`global`/`nonlocal` of this scope only: nested defs and classes have their own."""
    for node in walk_scope(body):
        if isinstance(node, ast.Global):
            scope.global_names.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocal_names.update(node.names)


def walk_scope(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Nodes of this scope: nested functions, classes and comprehensions bind their own names.
    A walrus inside a comprehension binds a name of *this* scope but is not yielded: callers that
    collect bindings must look for those themselves (scalars.int_names does)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


class _ScopeBuilder(ast.NodeVisitor):
    """One pass collecting bindings per scope; comprehensions are folded into their enclosing scope
    (their iteration variables are handled by the analysis as short-lived shadows)."""

    def __init__(self) -> None:
        self.scopes: dict[ast.AST, Scope] = {}
        self.current: Scope | None = None

    def _push(self, node: ast.AST, is_class: bool = False) -> Scope:
        scope = Scope(node=node, parent=self.current, is_class=is_class)
        self.scopes[node] = scope
        return scope

    def _bind(self, name: str, what: str = _OPAQUE) -> None:
        assert self.current is not None
        scope = self.current
        if name in scope.global_names:
            scope = self._module()
        scope.bind(name, what)

    def _module(self) -> Scope:
        scope = self.current
        assert scope is not None
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def visit_Module(self, node: ast.Module) -> None:
        self.current = self._push(node)
        self.generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        # Decorators, defaults and annotations are evaluated in the enclosing scope.
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                self.visit(dec)
            if node.returns:
                self.visit(node.returns)
            self._bind(node.name)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        outer = self.current
        self.current = self._push(node)
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                self._bind(arg.arg)
        # Globals/nonlocals first so that bindings after them land in the right scope.
        body: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]
        _collect_declarations(body, self.current)
        for stmt in body:
            self.visit(stmt)
        self.current = outer

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec)
        for base in [*node.bases, *node.keywords]:
            self.visit(base)
        self._bind(node.name)
        outer = self.current
        self.current = self._push(node, is_class=True)
        for stmt in node.body:
            self.visit(stmt)
        self.current = outer

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._bind(alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                self._bind(top, top)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                continue
            qual = f"{module}.{alias.name}" if module and node.level == 0 else _OPAQUE
            self._bind(alias.asname or alias.name, qual)

    def visit_Name(self, node: ast.Name) -> None:
        assert self.current is not None
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._bind(node.id)
        else:
            self.current.free_loads.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            if (
                isinstance(target, ast.Name)
                and isinstance(node.value, ast.Constant)
                and node.value.value is None
            ):
                self._bind(target.id, _NONE)
            else:
                self.visit(target)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self._bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self._bind(node.rest)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        # A walrus inside a comprehension binds in the enclosing function: same scope here.
        self.visit(node.value)
        self._bind(node.target.id)


@dataclass
class Resolver:
    scopes: dict[ast.AST, Scope]

    @classmethod
    def build(cls, module: ast.Module) -> Resolver:
        builder = _ScopeBuilder()
        builder.visit(module)
        resolver = cls(builder.scopes)
        resolver._mark_captured()
        return resolver

    def _mark_captured(self) -> None:
        for scope in self.scopes.values():
            if scope.parent is None:
                continue
            for name in scope.free_loads | scope.nonlocal_names:
                if name in scope.bindings and name not in scope.nonlocal_names:
                    continue
                owner = self._owner(scope.parent, name)
                if owner is not None and owner.parent is not None:
                    owner.captured.add(name)

    def _owner(self, scope: Scope | None, name: str) -> Scope | None:
        """The function scope that binds `name` as seen from a nested scope (class scopes skipped)."""
        while scope is not None:
            if not scope.is_class and name in scope.bindings and name not in scope.global_names:
                return scope
            scope = scope.parent
        return None

    def scope_of(self, node: ast.AST) -> Scope:
        return self.scopes[node]

    def resolve_name(self, scope: Scope, name: str) -> str | None:
        """Qualified name of a module or imported object that `name` denotes in `scope`, if certain."""
        first = True
        current: Scope | None = scope
        if name in scope.global_names:
            current = self._root(scope)
        while current is not None:
            # Class bodies are visible only to code directly in them, not to nested functions.
            if (first or not current.is_class) and name in current.bindings:
                kinds = current.bindings[name] - {_NONE}
                if len(kinds) == 1:
                    (only,) = kinds
                    return None if only == _OPAQUE else only
                return None
            first = False
            current = current.parent
        return f"builtins.{name}" if name in _BUILTINS else None

    def _root(self, scope: Scope) -> Scope:
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def qualified(self, scope: Scope, expr: ast.expr) -> str | None:
        """`th.nn.functional.pad` -> `torch.nn.functional.pad` when `th` is `import torch as th`."""
        if isinstance(expr, ast.Name):
            return self.resolve_name(scope, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.qualified(scope, expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None
