"""The names a lookup by a computed name may look up, from the syntax alone.

`getattr(obj, name)` reaches any attribute only when nothing shows what `name` holds. Often the
function shows it: `for name in ("host", "port"): getattr(args, name)`. A set of possible names
is built per expression, by rules of the language that need no assumption:

- a string literal: itself;
- an f-string: the strings that start with its literal head and end with its literal tail (an
  f-string always makes a `str`: each `{x}` part is `format(x, spec)`, which must return one);
- `a + b` where both sides have known names (each a literal set or a pattern): their
  concatenations. `"lit" + x` with `x` unknown is any name: `x.__radd__` may return any string;
- `a if c else b`: the names of either side;
- a local of a function, when every binding of it in the function is one of: an assignment of
  an expression with known names; a `for` target (a name, or a name inside a tuple target) over
  a display (tuple, list, set, or dict keys) of such expressions, a tuple display bound once to a
  local, a string literal (its characters), `"a b".split()` / `"a,b".split(",")`, or `.keys()`
  / `.items()` / `.values()` of a dict display. A comprehension's variable is bound by its
  generators only (the language forbids rebinding it by `:=`);
- anything else is any name: a parameter, a name declared `global`/`nonlocal` here or in any
  function nested here, a free variable, a module or class body's name (another module may
  rebind it), an attribute, a call, a subscript, a `del`, `with ... as`, `except ... as`, import.

A set is a frozenset of patterns `(prefix, suffix, exact)`: `exact` means the prefix is the
whole name; otherwise any name starting with the prefix and ending with the suffix (not
overlapping them). None stands for any name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from zeroopt.analysis.resolve import child_nodes, walk_all

Pattern = tuple[str, str, bool]
Names = frozenset[Pattern]

_MAX_NAMES = 64  # names a set holds at most: a larger product is any name
_MAX_DEPTH = 8  # bindings followed from one expression at most
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)
# Names of the builtins and library functions that reach attributes or objects by name or
# whole: a lookup that may hand one out hands out a reflective use the text does not show.
REFLECTIVE = frozenset(
    {"getattr", "setattr", "delattr", "vars", "eval", "exec", "compile", "globals", "locals",
     "deepcopy", "copy", "replace", "asdict", "astuple", "attrgetter", "methodcaller",
     "getmembers", "getmembers_static", "getattr_static", "get_objects", "get_referents",
     "get_referrers", "import_module", "new_class", "type", "save", "dump", "dumps", "load",
     "loads", "f_locals", "f_globals", "f_back", "gi_frame", "cr_frame", "modules"}
)  # fmt: skip


def exact(*names: str) -> Names:
    return frozenset((n, "", True) for n in names)


def may_name(names: Names | None, attrs: frozenset[str] = frozenset()) -> bool:
    """A lookup of one of `names` may touch one of `attrs`, a dunder (`__dict__`, `__class__`,
    `__setattr__`...: ways to the whole object) or a reflective function taken as a value."""
    if names is None:
        return True
    for prefix, suffix, whole in names:
        if whole:
            if prefix in attrs or prefix in REFLECTIVE or _dunder(prefix):
                return True
            continue
        if _dunder_possible(prefix, suffix):
            return True
        for a in (*attrs, *REFLECTIVE):
            if len(a) >= len(prefix) + len(suffix) and a.startswith(prefix) and a.endswith(suffix):
                return True
    return False


def shown(names: Names) -> str:
    """The names as the evidence shows them: `'host', 'port'`, `'_b...'`."""
    parts = sorted(_shown(p, s, whole) for p, s, whole in names)
    return ", ".join(parts[:6]) + (f" and {len(parts) - 6} more" if len(parts) > 6 else "")


def _shown(prefix: str, suffix: str, whole: bool) -> str:
    if whole:
        return repr(prefix)
    if prefix and suffix:
        return f"names starting {prefix!r} and ending {suffix!r}"
    return f"names starting {prefix!r}" if prefix else f"names ending {suffix!r}"


def _dunder(name: str) -> bool:
    return len(name) >= 4 and name.startswith("__") and name.endswith("__")


def _dunder_possible(prefix: str, suffix: str) -> bool:
    head = prefix.startswith("__") or "__".startswith(prefix)
    tail = suffix.endswith("__") or "__".endswith(suffix)
    return head and tail


def _concat(left: Names, right: Names) -> Names | None:
    out: set[Pattern] = set()
    for p1, s1, w1 in left:
        for p2, s2, w2 in right:
            if w1 and w2:
                out.add((p1 + p2, "", True))
            elif w1:
                out.add((p1 + p2, s2, False))
            elif w2:
                out.add((p1, s1 + p2, False))
            else:
                out.add((p1, s2, False))
            if len(out) > _MAX_NAMES:
                return None
    return frozenset(out)


_Binding = tuple[ast.expr, tuple[int, ...]] | None


@dataclass
class _Scope:
    """The bindings of one function: each name's binding sites, in the function proper."""

    params: set[str] = field(default_factory=set)
    other: set[str] = field(default_factory=set)  # bound some other way: any name
    assigned: dict[str, list[ast.expr]] = field(default_factory=dict)
    loops: dict[str, list[tuple[ast.expr, tuple[int, ...]]]] = field(default_factory=dict)
    # id of a Name read in a comprehension -> the iterable and target path binding it (None: a
    # target the syntax does not follow)
    comprehension: dict[int, _Binding] = field(default_factory=dict)


class LookupNames:
    """The names of expressions in the functions of one module, each function read once."""

    def __init__(self) -> None:
        self._scopes: dict[int, _Scope | None] = {}

    def names(self, e: ast.expr, scope: ast.AST | None) -> Names | None:
        """The names `e`, an expression of `scope` (a function, or None: a module or class
        body), may evaluate to; None: any."""
        info = self._scope(scope) if scope is not None else None
        return self._value(e, info, 0, frozenset())

    def parameter_only(self, name: str, scope: ast.AST) -> bool:
        """`name` is a parameter of the function `scope` that nothing in it binds again (no
        assignment, loop, `global`/`nonlocal` here or in a nested function, ...)."""
        info = self._scope(scope)
        return (
            info is not None
            and name in info.params
            and name not in info.other
            and name not in info.assigned
            and name not in info.loops
        )

    def in_comprehension(self, e: ast.Name, scope: ast.AST) -> bool:
        """`e` is read inside a comprehension of the function `scope` that binds its name."""
        info = self._scope(scope)
        return info is None or id(e) in info.comprehension

    def _scope(self, scope: ast.AST) -> _Scope | None:
        key = id(scope)
        if key not in self._scopes:
            self._scopes[key] = _read_scope(scope) if isinstance(scope, _FUNCTIONS) else None
        return self._scopes[key]

    def _value(
        self, e: ast.expr, info: _Scope | None, depth: int, seen: frozenset[str]
    ) -> Names | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(e, ast.Constant):
            return exact(e.value) if isinstance(e.value, str) else None
        if isinstance(e, ast.JoinedStr):
            return _fstring(e)
        if isinstance(e, ast.IfExp):
            a = self._value(e.body, info, depth + 1, seen)
            b = self._value(e.orelse, info, depth + 1, seen) if a is not None else None
            return None if a is None or b is None else a | b
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            a = self._value(e.left, info, depth + 1, seen)
            b = self._value(e.right, info, depth + 1, seen) if a is not None else None
            return None if a is None or b is None else _concat(a, b)
        if isinstance(e, ast.Name) and info is not None:
            if id(e) in info.comprehension:
                bound = info.comprehension[id(e)]
                return None if bound is None else self._iterated(*bound, info, depth + 1, seen)
            return self._local(e.id, info, depth, seen)
        return None

    def _local(self, name: str, info: _Scope, depth: int, seen: frozenset[str]) -> Names | None:
        if name in info.params or name in info.other or name in seen:
            return None
        sites = info.assigned.get(name, [])
        loops = info.loops.get(name, [])
        if not sites and not loops:
            return None  # a free variable: the enclosing scope may rebind it
        seen = seen | {name}
        out: set[Pattern] = set()
        for value in sites:
            got = self._value(value, info, depth + 1, seen)
            if got is None:
                return None
            out |= got
        for it, path in loops:
            got = self._iterated(it, path, info, depth + 1, seen)
            if got is None:
                return None
            out |= got
        return frozenset(out) if len(out) <= _MAX_NAMES else None

    def _iterated(
        self, it: ast.expr, path: tuple[int, ...], info: _Scope, depth: int, seen: frozenset[str]
    ) -> Names | None:
        """The names a loop target at `path` (indices into nested tuple targets) takes over
        `it`."""
        elements = _elements(it, len(path) > 0)
        if elements is None and isinstance(it, ast.Name) and not path:
            if id(it) in info.comprehension:
                return None
            # A local bound only to tuple displays (immutable) or string literals.
            if it.id in info.params or it.id in info.other or it.id in info.loops:
                return None
            values = info.assigned.get(it.id, [])
            if not values or not all(isinstance(v, ast.Tuple | ast.Constant) for v in values):
                return None
            elements = []
            for v in values:
                more = _elements(v, False)
                if more is None:
                    return None
                elements.extend(more)
        if elements is None:
            return None
        out: set[Pattern] = set()
        for el in elements:
            for i in path:
                if not isinstance(el, ast.Tuple | ast.List) or i >= len(el.elts):
                    return None
                if any(isinstance(x, ast.Starred) for x in el.elts):
                    return None
                el = el.elts[i]
            got = self._value(el, info, depth, seen)
            if got is None:
                return None
            out |= got
        return frozenset(out)


def _elements(it: ast.expr, tuples: bool) -> list[ast.expr] | None:
    """The elements a loop over `it` takes, as expressions, or None when the syntax does not
    show them all. `tuples`: the target unpacks each element."""
    if isinstance(it, ast.Tuple | ast.List | ast.Set):
        if any(isinstance(x, ast.Starred) for x in it.elts):
            return None
        return list(it.elts)
    if isinstance(it, ast.Dict):
        if any(k is None for k in it.keys):
            return None  # `**d`
        return [k for k in it.keys if k is not None]
    if isinstance(it, ast.Constant) and isinstance(it.value, str) and not tuples:
        return [ast.Constant(c) for c in it.value]
    if not isinstance(it, ast.Call) or not isinstance(it.func, ast.Attribute) or it.keywords:
        return None
    owner, method = it.func.value, it.func.attr
    if isinstance(owner, ast.Constant) and isinstance(owner.value, str) and method == "split":
        if not it.args:
            return [ast.Constant(w) for w in owner.value.split()]
        sep = it.args[0]
        if len(it.args) == 1 and isinstance(sep, ast.Constant) and isinstance(sep.value, str):
            return [ast.Constant(w) for w in owner.value.split(sep.value)] if sep.value else None
        return None
    if isinstance(owner, ast.Dict) and not it.args and all(k is not None for k in owner.keys):
        keys = [k for k in owner.keys if k is not None]
        if method == "keys":
            return keys
        if method == "values":
            return list(owner.values)
        if method == "items":
            return [ast.Tuple([k, v], ast.Load()) for k, v in zip(keys, owner.values, strict=True)]
    return None


def _fstring(e: ast.JoinedStr) -> Names | None:
    parts = e.values
    if all(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
        return exact("".join(str(p.value) for p in parts if isinstance(p, ast.Constant)))
    head = parts[0] if parts else None
    tail = parts[-1] if parts else None
    prefix = head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else ""
    suffix = tail.value if isinstance(tail, ast.Constant) and isinstance(tail.value, str) else ""
    if not prefix and not suffix:
        return None
    return frozenset({(prefix, suffix, False)})


def _read_scope(fn: ast.AST) -> _Scope:
    """Every binding of a function's names, the function proper only (a nested function's
    `nonlocal`/`global` makes the name any, wherever it is)."""
    info = _Scope()
    assert isinstance(fn, _FUNCTIONS)
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(v for v in (a.vararg, a.kwarg) if v)]
    info.params = {x.arg for x in every}
    body: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    handled: set[int] = set()  # ids of Name targets read as a loop or an assignment
    stack: list[tuple[ast.AST, dict[str, _Binding]]] = [(n, {}) for n in body]
    while stack:
        n, env = stack.pop()
        if isinstance(n, _SCOPES):
            # Evaluated here: decorators, defaults, bases; the body is a scope of its own.
            if not isinstance(n, ast.Lambda):
                info.other.add(n.name)
            outer: list[ast.AST] = []
            if isinstance(n, ast.ClassDef):
                outer = [*n.decorator_list, *n.bases, *(k.value for k in n.keywords)]
            else:
                outer = [*n.args.defaults, *(d for d in n.args.kw_defaults if d)]
                if not isinstance(n, ast.Lambda):
                    outer += n.decorator_list
            stack.extend((x, env) for x in outer)
            for inner in walk_all(n):
                if isinstance(inner, ast.Nonlocal | ast.Global):
                    info.other.update(inner.names)
            continue
        if isinstance(n, _COMPREHENSIONS):
            inner_env: dict[str, _Binding] = dict(env)
            for k, gen in enumerate(n.generators):
                # The first iterable runs in the enclosing scope, the rest in the comprehension.
                stack.append((gen.iter, env if k == 0 else dict(inner_env)))
                for target, path in _targets(gen.target, ()):
                    handled.add(id(target))
                    inner_env[target.id] = (gen.iter, path)
                for cond in gen.ifs:
                    stack.append((cond, dict(inner_env)))
                for other in walk_all(gen.target):
                    if isinstance(other, ast.Name) and id(other) not in handled:
                        inner_env[other.id] = None
                        handled.add(id(other))
                # A target may evaluate expressions (`d[getattr(o, n)]`), its names bound here.
                stack.append((gen.target, dict(inner_env)))
            elts = [n.key, n.value] if isinstance(n, ast.DictComp) else [n.elt]
            stack.extend((x, inner_env) for x in elts)
            continue
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                if n.id in env:
                    info.comprehension[id(n)] = env[n.id]
            elif id(n) not in handled:
                info.other.add(n.id)
            continue
        if isinstance(n, ast.For | ast.AsyncFor):
            for target, path in _targets(n.target, ()):
                handled.add(id(target))
                info.loops.setdefault(target.id, []).append((n.iter, path))
        elif isinstance(n, ast.Assign) and len(n.targets) == 1:
            t = n.targets[0]
            if isinstance(t, ast.Name):
                handled.add(id(t))
                info.assigned.setdefault(t.id, []).append(n.value)
        elif (
            isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value
        ) or isinstance(n, ast.NamedExpr):
            assert isinstance(n.target, ast.Name) and n.value is not None
            handled.add(id(n.target))
            info.assigned.setdefault(n.target.id, []).append(n.value)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            info.other.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            info.other.add(n.name)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            info.other.update((x.asname or x.name).split(".")[0] for x in n.names)
        elif isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            info.other.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            info.other.add(n.rest)
        stack.extend((c, env) for c in child_nodes(n))
    return info


def _targets(t: ast.expr, path: tuple[int, ...]) -> list[tuple[ast.Name, tuple[int, ...]]]:
    """The names a loop target binds, each with its path into nested tuple targets (a starred
    or attribute target binds nothing read here: its names are found as plain stores)."""
    if isinstance(t, ast.Name):
        return [(t, path)]
    if isinstance(t, ast.Tuple | ast.List) and not any(isinstance(x, ast.Starred) for x in t.elts):
        return [m for i, x in enumerate(t.elts) for m in _targets(x, (*path, i))]
    return []
