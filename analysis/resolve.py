"""Resolve names to qualified names (`th.zeros` -> `torch.zeros`) with Python's scoping rules.

Flow-insensitive on purpose: a name is resolved only when every binding of it in its scope agrees
(imports of the same thing, optionally next to `= None` fallbacks). Anything else stays unresolved,
which only ever makes the analysis more conservative: an unresolved callee is an unknown call.
"""

from __future__ import annotations

import ast
import builtins
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView

_BUILTINS = frozenset(dir(builtins))
_FRAME_FUNCTIONS = frozenset({"sys._getframe", "inspect.currentframe", "inspect.stack"})
# Builtins whose semantics prove writes (loop counts, sizes, ints; `dict(k=v)` a new holder whose
# paths are the values given) and that a module binding its names dynamically may have rebound
# (`globals()["range"] = f`): unresolved there, they are unknown calls. Not the reflective ones
# (`vars`, `getattr`, `exec`, ...): resolving those is what makes the analysis give up on what
# they reach.
_VALUE_BUILTINS = frozenset(
    {"range", "enumerate", "len", "zip", "reversed", "int", "float", "bool", "min", "max", "abs",
     "round", "dict"}
)  # fmt: skip
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
    # Memo of the dataflow (Context.mask_names): computed once per function scope.
    _mask_names: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def bind(self, name: str, what: str) -> None:
        self.bindings.setdefault(name, set()).add(what)


# Fields that never hold a node: identifiers, numbers, strings and constants. Leaving them out
# is most of what makes the walks below cheaper than `ast.iter_child_nodes`, which inspects every
# field of every node. A field wrongly listed here would hide nodes, so the list is exact for 3.11+
# (a str in a field not listed is harmless: the walks skip anything that is not a node).
_SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "asname", "module", "level", "name", "type_comment", "kind", "simple",
     "is_async", "conversion", "rest", "kwd_attrs", "tag", "lineno"}
)  # fmt: skip
_SCALAR_FIELDS_OF: dict[type, frozenset[str]] = {
    ast.Constant: frozenset({"value"}),
    ast.MatchSingleton: frozenset({"value"}),
    ast.Global: frozenset({"names"}),
    ast.Nonlocal: frozenset({"names"}),
}
# Leaf nodes (Load, Add, Eq, ...) that bind, load and call nothing.
_MARKER_FIELDS = frozenset({"ctx", "op", "ops"})
_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
               ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


class _ChildFields(dict[type, tuple[str, ...] | None]):
    """Per node class, the fields that can hold child nodes, last field first (the walks push
    them onto a LIFO stack); None for anything that is not a node (a `None` key of a dict
    display, a str). Filled on first sight of a class, so synthetic nodes work too."""

    def __init__(self, skip: frozenset[str], leaf: tuple[type, ...] = ()) -> None:
        super().__init__()
        self._skip = skip
        self._leaf = leaf  # classes whose children are not walked

    def __missing__(self, cls: type) -> tuple[str, ...] | None:
        fields: tuple[str, ...] | None = None
        if issubclass(cls, ast.AST):
            if issubclass(cls, self._leaf):
                fields = ()
            else:
                skip = self._skip | _SCALAR_FIELDS_OF.get(cls, frozenset())
                fields = tuple(f for f in reversed(cls._fields) if f not in skip)
        self[cls] = fields
        return fields


# Exactly the children `ast.iter_child_nodes` yields, and in walk_scope nested scopes as leaves.
_CHILDREN = _ChildFields(_SCALAR_FIELDS)
_SCOPE_CHILDREN = _ChildFields(_SCALAR_FIELDS, _NEW_SCOPES)
# Without context and operator leaves: for walks that look for names, calls and statements.
_SYNTAX_CHILDREN = _ChildFields(_SCALAR_FIELDS | _MARKER_FIELDS)


class _ForwardFields(_ChildFields):
    """`_ChildFields` in field order, for a breadth-first walk."""

    def __missing__(self, cls: type) -> tuple[str, ...] | None:
        fields = super().__missing__(cls)
        self[cls] = found = None if fields is None else fields[::-1]
        return found


_ALL_FORWARD = _ForwardFields(_SCALAR_FIELDS)
# _SYNTAX_CHILDREN's fields in field order, for walk_bfs (a dict looked up once per node: a
# class without child fields, Name or Constant, is not computed again each time).
_SYNTAX_FORWARD = _ForwardFields(_SCALAR_FIELDS | _MARKER_FIELDS)


def walk_all(root: ast.AST) -> Iterator[ast.AST]:
    """Exactly the nodes `ast.walk(root)` yields, in its order, leaves (Load, Add, ...) included,
    at about half the cost: no generator per node, and the fields that never hold a node are not
    read. Anything that is not a node (a `None` key of a dict display) is dropped when taken from
    the queue rather than when put on it, which yields the same sequence; a node's children are
    queued before it is yielded, as `ast.walk` does."""
    return _breadth_first(root, _ALL_FORWARD)


def _breadth_first(root: ast.AST, table: _ForwardFields) -> Iterator[ast.AST]:
    """The breadth-first walk both `walk_all` and `walk_bfs` are: the nodes `table` gives child
    fields for, each yielded after its children are queued, as `ast.walk` does."""
    queue = deque([root])
    pop, extend, push = queue.popleft, queue.extend, queue.append
    while queue:
        node = pop()
        fields = table[type(node)]
        if fields is None:
            continue
        for f in fields:
            v = getattr(node, f, None)
            if type(v) is list:
                extend(v)
            elif v is not None:
                push(v)
        yield node


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """Exactly the nodes `ast.iter_child_nodes(node)` yields, in its order, as a list, at about
    half the cost: the fields that never hold a node are not read."""
    out: list[ast.AST] = []
    append = out.append
    for f in _ALL_FORWARD[type(node)] or ():
        v = getattr(node, f, None)
        if isinstance(v, list):
            for item in v:
                if isinstance(item, ast.AST):
                    append(item)
        elif isinstance(v, ast.AST):
            append(v)
    return out


def runs_body_when_called(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """False for a coroutine or generator function: calling it only makes an object, and its
    body runs later, if ever."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return False
    return not any(isinstance(n, ast.Yield | ast.YieldFrom) for n in walk_scope(fn.body))


def walk_scope(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Nodes of this scope: nested functions, classes and comprehensions bind their own names.
    A walrus inside a comprehension binds a name of *this* scope but is not yielded: callers that
    collect bindings must look for those themselves (scalars.int_names does).

    Pre-order, the order of `ast.walk`-style recursion with `ast.iter_child_nodes`; the nested
    scope nodes themselves are yielded."""
    return _preorder(list(reversed(body)), _SCOPE_CHILDREN)


def walk(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node of the trees under `roots`, roots included, like `ast.walk` but faster and in
    pre-order; context and operator leaves (Load, Add, ...) are left out."""
    return _preorder(list(roots), _SYNTAX_CHILDREN)


def record_parent(node: ast.AST, parents: dict[int, ast.AST]) -> None:
    """Record `node` as the parent of each of its children (by id), context and operator
    leaves left out: called on every node of a walk, it builds the walk's parent map."""
    for f in _SYNTAX_CHILDREN[type(node)] or ():
        v = getattr(node, f)
        if type(v) is list:
            for child in v:
                parents[id(child)] = node
        elif v is not None:
            parents[id(v)] = node


def parameter_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """Every name a def's parameters bind, in signature order: positional-only, positional,
    keyword-only, then `*args` and `**kwargs` where present."""
    a = fn.args
    names = [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    return names + [p.arg for p in (a.vararg, a.kwarg) if p is not None]


# The fields of a statement (or of an `except` clause or `case`) that hold statements.
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def declared_globals(module: ast.Module) -> set[str]:
    """Every name a `global` statement anywhere in `module` declares. A statement sits only in
    the statement lists of other statements (an expression holds none: a lambda's body is an
    expression), so only those are walked, not the expressions."""
    out: set[str] = set()
    stack: list[Any] = list(module.body)
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if type(node) is ast.Global:
            out.update(node.names)
            continue
        for f in _STATEMENT_LISTS:
            v = getattr(node, f, None)
            if type(v) is list:
                extend(v)
    return out


def statements(module: ast.Module) -> list[ast.AST]:
    """Every statement of `module` (and `except` clause and `case`), in no particular order:
    only the statement lists are walked, as in `declared_globals`, not the expressions."""
    out: list[ast.AST] = []
    stack: list[Any] = list(module.body)
    pop, extend, append = stack.pop, stack.extend, out.append
    while stack:
        node = pop()
        append(node)
        for f in _STATEMENT_LISTS:
            v = getattr(node, f, None)
            if type(v) is list:
                extend(v)
    return out


def walk_bfs(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """The nodes `ast.walk` yields from each root in turn, in its order (breadth-first), but
    faster and without context and operator leaves (Load, Add, ...): for walks where the first
    node found decides a message."""
    for root in roots:
        yield from _breadth_first(root, _SYNTAX_FORWARD)


def _preorder(stack: list[Any], children: _ChildFields) -> Iterator[ast.AST]:
    """Pop a node, yield it, push its child fields (last first): the one walk both share."""
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        fields = children[type(node)]
        if fields is None:
            continue
        yield node
        for f in fields:
            v = getattr(node, f)
            if type(v) is list:
                extend(reversed(v))
            elif v is not None:
                push(v)


@dataclass
class _Enter:
    """A walk marker: from here on, nodes run in `scope`, and their calls are recorded or not."""

    scope: Scope
    record: bool


# How the scope pass treats a node class: anything not listed has its children walked.
_FUNCTION, _LAMBDA, _CLASS, _IMPORT, _IMPORT_FROM, _NAME, _ASSIGN, _ANN_ASSIGN, _CALL = range(9)
_NAMED, _CAPTURE, _MATCH_STAR, _MATCH_MAPPING, _GLOBAL, _NONLOCAL, _ENTER = range(9, 16)
_KINDS: dict[type, int] = {
    ast.FunctionDef: _FUNCTION,
    ast.AsyncFunctionDef: _FUNCTION,
    ast.Lambda: _LAMBDA,
    ast.ClassDef: _CLASS,
    ast.Import: _IMPORT,
    ast.ImportFrom: _IMPORT_FROM,
    ast.Name: _NAME,
    ast.Assign: _ASSIGN,
    ast.AnnAssign: _ANN_ASSIGN,
    ast.Call: _CALL,
    ast.NamedExpr: _NAMED,
    ast.ExceptHandler: _CAPTURE,
    ast.MatchAs: _CAPTURE,
    ast.MatchStar: _MATCH_STAR,
    ast.MatchMapping: _MATCH_MAPPING,
    ast.Global: _GLOBAL,
    ast.Nonlocal: _NONLOCAL,
    _Enter: _ENTER,
}


class _ScopeBuilder:
    """One pass collecting bindings per scope; comprehensions are folded into their enclosing scope
    (their iteration variables are handled by the analysis as short-lived shadows).

    Iterative (deep expressions cannot exhaust the recursion limit) and one walk only: a name
    bound in a function before its `global` statement still goes to the module, because bindings
    in function scopes are applied when the walk is over and every declaration is known.
    Parameters are bound at once: they are local even when also declared global.
    """

    def __init__(
        self,
        module: ast.Module,
        name: str | None = None,
        is_package: bool = False,
        project: ProjectView | None = None,
        raw: bool = False,
        module_only: bool = False,
    ) -> None:
        # `module_only`: the bodies of defs, lambdas and classes are not walked (their scopes
        # are made, empty). Only for callers that read the module scope's bindings and the star
        # imports, and only where no body can bind a module name (no `global`) or star-import.
        # With a project view: relative imports name absolute modules, and (unless `raw`, which
        # builds the view's own module entries) imported names are followed through the tree's
        # re-exports and star imports of scanned modules are bound name by name.
        self.name = name
        self.is_package = is_package
        self.project = project
        self.raw = raw
        self.star_targets: list[str | None] = []
        self.root = Scope(node=module, parent=None)
        self.scopes: dict[ast.AST, Scope] = {module: self.root}
        self.calls: list[tuple[ast.Call, Scope]] = []
        self.assigns: list[ast.Assign | ast.AnnAssign] = []
        # Attribute store targets (`torch.Tensor.copy_ = f`) with the scope they run in.
        self.attribute_stores: list[tuple[ast.Attribute, Scope]] = []
        self._deferred: list[tuple[Scope, str, str]] = []
        self._module_only = module_only
        self._walk(module)
        for scope, name, what in self._deferred:
            (self.root if name in scope.global_names else scope).bind(name, what)

    def _canonical(self, qual: str) -> str:
        return qual if self.project is None or self.raw else self.project.canonical(qual)

    def _star(self, scope: Scope, target: str | None) -> None:
        """`from target import *`: with a project view and a scanned target whose exports are
        certain, each exported name is bound as `from target import name`; otherwise nothing is
        bound, as without a view."""
        if self.project is None:
            return
        if self.raw:
            self.star_targets.append(target)
            return
        names = self.project.exports(target) if target is not None else None
        for n in sorted(names or ()):
            self._bind(scope, n, self.project.canonical(f"{target}:{n}"))

    def _bind(self, scope: Scope, name: str, what: str = _OPAQUE) -> None:
        if scope.parent is None:
            scope.bind(name, what)
        elif scope.is_class:
            # A class body runs once, in order: its `global` (and `nonlocal`, which marks the
            # enclosing function's name captured) is declared before any binding of the name.
            (self.root if name in scope.global_names else scope).bind(name, what)
        else:
            self._deferred.append((scope, name, what))

    def _push(self, node: ast.AST, parent: Scope, is_class: bool = False) -> Scope:
        scope = Scope(node=node, parent=parent, is_class=is_class)
        self.scopes[node] = scope
        return scope

    def _walk(self, module: ast.Module) -> None:
        """Pre-order in the order find_allocations reports calls: the decorators, defaults and bases of
        a definition (they run in the enclosing scope) before its body. A def's return
        annotation is walked for its names but its calls are not recorded."""
        current = self.root
        record = True
        stack: list[Any] = list(reversed(module.body))
        pop, push, extend = stack.pop, stack.append, stack.extend
        children, kinds, bind, calls = _SYNTAX_CHILDREN, _KINDS, self._bind, self.calls
        bodies = not self._module_only
        while stack:
            node = pop()
            kind = kinds.get(type(node))
            if kind is None or kind == _CALL:
                if kind is not None and record:
                    calls.append((node, current))
                fields = children[type(node)]
                if fields is None:
                    continue  # not a node: a `None` key of a dict display
                for f in fields:
                    v = getattr(node, f)
                    if type(v) is list:
                        extend(reversed(v))
                    elif v is not None:
                        push(v)
            elif kind == _NAME:
                if isinstance(node.ctx, ast.Store | ast.Del):
                    bind(current, node.id)
                else:
                    current.free_loads.add(node.id)
            elif kind == _ENTER:
                current, record = node.scope, node.record
            elif kind in (_ASSIGN, _ANN_ASSIGN):
                self.assigns.append(node)
                for t in node.targets if kind == _ASSIGN else (node.target,):
                    if isinstance(t, ast.Attribute):
                        self.attribute_stores.append((t, current))
                value = node.value
                if kind == _ANN_ASSIGN:
                    if value is not None:
                        push(value)
                    push(node.annotation)
                    push(node.target)
                    continue
                push(value)
                none = isinstance(value, ast.Constant) and value.value is None
                for target in reversed(node.targets):
                    if none and isinstance(target, ast.Name):
                        bind(current, target.id, _NONE)
                    else:
                        push(target)
            elif kind in (_FUNCTION, _LAMBDA):
                inner = self._push(node, current)
                args = node.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                            args.kwarg]:  # fmt: skip
                    if arg is not None:
                        inner.bind(arg.arg, _OPAQUE)
                push(_Enter(current, record))
                if kind == _LAMBDA:
                    if bodies:
                        push(node.body)
                else:
                    bind(current, node.name)
                    if bodies:
                        extend(reversed(node.body))
                push(_Enter(inner, record))
                # Evaluated in the enclosing scope, before the body runs.
                if kind == _FUNCTION and node.returns is not None:
                    push(_Enter(current, record))
                    push(node.returns)
                    push(_Enter(current, False))
                outer = [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
                if kind == _FUNCTION:
                    outer = [*node.decorator_list, *outer]
                extend(reversed(outer))
            elif kind == _CLASS:
                bind(current, node.name)
                inner = self._push(node, current, is_class=True)
                push(_Enter(current, record))
                if bodies:
                    extend(reversed(node.body))
                push(_Enter(inner, record))
                extend(reversed([*node.decorator_list, *node.bases, *node.keywords]))
            elif kind == _IMPORT:
                for alias in node.names:
                    if alias.asname:
                        bind(current, alias.asname, self._canonical(alias.name))
                    else:
                        top = alias.name.split(".")[0]
                        bind(current, top, self._canonical(top))
            elif kind == _IMPORT_FROM:
                module_name = node.module or ""
                if node.level and self.project is not None:
                    module_name = (
                        self.project.index.absolute(
                            self.name, self.is_package, node.level, module_name
                        )
                        or ""
                    )
                    absolute = bool(module_name)
                else:
                    absolute = bool(module_name) and node.level == 0
                for alias in node.names:
                    if alias.name == "*":
                        self._star(current, module_name if absolute else None)
                        continue
                    # `module:name` with a project view: the name is looked up in the module.
                    sep = ":" if self.project is not None else "."
                    qual = (
                        self._canonical(f"{module_name}{sep}{alias.name}") if absolute else _OPAQUE
                    )
                    bind(current, alias.asname or alias.name, qual)
            elif kind == _NAMED:
                # A walrus inside a comprehension binds in the enclosing function: same scope here.
                push(node.value)
                bind(current, node.target.id)
            elif kind in (_GLOBAL, _NONLOCAL):
                # Function and class scopes collect declarations; the module ignores them.
                if current.parent is not None:
                    names = current.global_names if kind == _GLOBAL else current.nonlocal_names
                    names.update(node.names)
            else:  # an ExceptHandler, MatchAs, MatchStar or MatchMapping may bind a name
                name = node.rest if kind == _MATCH_MAPPING else node.name
                if name:
                    bind(current, name)
                if kind != _MATCH_STAR:
                    fields = children[type(node)]
                    assert fields is not None
                    for f in fields:
                        v = getattr(node, f)
                        if type(v) is list:
                            extend(reversed(v))
                        elif v is not None:
                            push(v)


@dataclass
class Resolver:
    scopes: dict[ast.AST, Scope]
    # By-products of the one walk `build` makes, so that site finding need not walk again: every
    # call with the scope it runs in (pre-order, a def's decorators and defaults before its body,
    # its return annotation left out), and every assignment statement.
    calls: list[tuple[ast.Call, Scope]] = field(default_factory=list)
    assigns: list[ast.Assign | ast.AnnAssign] = field(default_factory=list)
    # Memo of the dataflow (Context.capture_functions): computed once per module.
    _capture_functions: dict[str, str] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # Memo of the dataflow (Context.store_hooks): computed once per module.
    _store_hooks: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    project: ProjectView | None = None
    star_targets: list[str | None] = field(default_factory=list)
    attribute_stores: list[tuple[ast.Attribute, Scope]] = field(default_factory=list)
    # Memo of `patched`: computed on first use.
    _patched: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    # The module may bind its own names out of sight (project.binds_dynamically: `globals()[k]
    # = v`, `exec(...)`, `builtins.range = f`): a value builtin it never binds (`range`, `len`)
    # need not be the builtin.
    dynamic: bool = False

    @classmethod
    def build(
        cls,
        module: ast.Module,
        *,
        module_name: str | None = None,
        is_package: bool = False,
        project: ProjectView | None = None,
        raw: bool = False,
        module_only: bool = False,
        dynamic: bool = False,
    ) -> Resolver:
        """`dynamic`: the module may bind its names out of sight (project.binds_dynamically of
        its text), so no value builtin resolves."""
        builder = _ScopeBuilder(module, module_name, is_package, project, raw, module_only)
        resolver = cls(
            builder.scopes,
            builder.calls,
            builder.assigns,
            None if raw else project,
            builder.star_targets,
            builder.attribute_stores,
        )
        resolver.dynamic = dynamic
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
        if name not in _BUILTINS or (self.dynamic and name in _VALUE_BUILTINS):
            return None
        return f"builtins.{name}"

    def _root(self, scope: Scope) -> Scope:
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def qualified(self, scope: Scope, expr: ast.expr) -> str | None:
        """`th.nn.functional.pad` -> `torch.nn.functional.pad` when `th` is `import torch as th`.
        None for a library attribute the module itself replaces (`patched`)."""
        if isinstance(expr, ast.Name):
            return self.resolve_name(scope, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.qualified(scope, expr.value)
            if not base:
                return None
            if self.project is not None and base.partition(".")[0] in self.project.index.tops:
                return self.project.canonical(f"{base}.{expr.attr}")
            qual = f"{base}.{expr.attr}"
            return None if qual in self.patched() else qual
        return None

    def patched(self) -> frozenset[str]:
        """Attributes of library modules and classes that this module replaces
        (`dist.all_gather_into_tensor = f`, `torch.Tensor.copy_ = f`, `setattr(torch.nn.init,
        "ones_", f)`): what runs under that name is the module's code, not the library's, so
        no built-in semantics or contract applies to it. Attributes of scanned modules are
        followed elsewhere (import_time.py)."""
        if self._patched is None:
            self._patched = frozenset()  # `qualified` below must not come back here
            found: set[str] = set()
            for target, scope in self.attribute_stores:
                base = self.qualified(scope, target.value)
                if base:
                    found.add(f"{base}.{target.attr}")
            for call, scope in self.calls:
                if (
                    len(call.args) >= 2
                    and isinstance(call.args[1], ast.Constant)
                    and isinstance(call.args[1].value, str)
                    and self.qualified(scope, call.func) == "builtins.setattr"
                ):
                    base = self.qualified(scope, call.args[0])
                    if base:
                        found.add(f"{base}.{call.args[1].value}")
            # A replaced frame function may still read frames: it stays what it was named.
            self._patched = frozenset(found) - _FRAME_FUNCTIONS
        return self._patched
