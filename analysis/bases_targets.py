"""Which classes the target `T` of a store of a class's bases may be (anyorder_stores.py reads
`T.__bases__ = T.__bases__ + (E1, ...)`), so that the code of the added classes is judged only
on the objects it may come to run on.

`T` is followed back through the calls of the tree under the closed world over callers: a name
its module binds only by class statements and imports (`from m import K`, no `as`), no function
binds, and nothing else rebinds (anyorder_forms.py `_name_rebound`) is that class; a parameter
of a function is every value the function's calls pass there. The calls of a function are
every use of its name: in the function it is nested in, or, for a module-level one, in every
file of the tree whose text has the name as a word. Each use must be a call (its argument at
the parameter's position or keyword), a class decorator (`@f class D` passes `D` first), or,
nested in `g`, `return f` (then every result of `g(...)` must be called at once, decorate a
class or be dropped, and those calls' first arguments are what `f` gets; `@g class D` binds `D`
to `g(D)`, which is no function only when `g` returns `f` after an `if p is not None:` on its
first parameter whose body always returns). Anything else gives any class, with why: a use of
the name as a value, a string naming it (not a docstring), an import of it under another name,
in a file whose syntax names it `globals()`, `locals()`, `exec`/`eval`, `attrgetter`,
`methodcaller`, `x.__dict__[...]`, `vars(x)` or a computed `getattr(x, k)` with `x` not
`self`/`cls` (it may fetch the function from a module), a decorator below it (`@f @g class D` is
`f(g(D))`), a decorated def or another binding of its name (`typing.overload` stubs excepted), a
parameter of a method (its callers are not followed), a value that is not such a name (a class
name bound otherwise anywhere, `K = ...`, `as K`, counts as not), `*args`/`**kwargs` at a call.
A public function (no leading `_`) may be called from outside the tree with any class: it is
followed only under `callers-closed = true`, and the answer then carries that assumption. Calls
through a string resolved at run time (a qualified name from a configuration) are assumed to
name none of these functions, as for every private or callers-closed function of the tree.
"""

from __future__ import annotations

import ast
import os
import re
from contextvars import ContextVar
from dataclasses import dataclass

from zeroopt.analysis.anyorder_classes import class_statements, parsed
from zeroopt.analysis.anyorder_forms import _name_rebound
from zeroopt.analysis.anyorder_stores import BasesStore, family
from zeroopt.analysis.methods import ClassWorld, _short
from zeroopt.analysis.resolve import child_nodes, walk_all
from zeroopt.analysis.tree_naming import _naming

Function = ast.FunctionDef | ast.AsyncFunctionDef
_NAMESPACES = frozenset({"globals", "locals", "exec", "eval", "attrgetter", "methodcaller"})
_INSTANCE = frozenset({"self", "cls"})  # receivers that hold no module
_MAX_STEPS = 64  # functions followed, at most
# `callers-closed` for the any-order pass's reach (anyorder_reach.py, a method's `self` that a
# store of bases may give another class): set by lifecycle_anyorder.py while it judges.
CALLERS_CLOSED: ContextVar[bool] = ContextVar("callers_closed", default=False)


@dataclass(frozen=True)
class Targets:
    """`names`: the classes (by name) `T` may be; None: any class, `why` says why. `assumed`:
    the closed world over callers the names rest on."""

    names: frozenset[str] | None
    why: str = ""
    assumed: str = ""


_CACHE: dict[tuple[str, str, bool], Targets] = {}


def store_targets(world: ClassWorld, store: BasesStore, callers_closed: bool) -> Targets:
    """The classes the target of `store` may be, once per tree digest."""
    key = (world.digest or f"id:{id(world)}", store.at, callers_closed)
    hit = _CACHE.get(key) if world.digest else None
    if hit is None:
        hit = _Search(world, callers_closed).run(store)
        if world.digest:
            if len(_CACHE) > 256:
                _CACHE.clear()
            _CACHE[key] = hit
    return hit


class _Fail(Exception):
    pass


@dataclass
class _Site:
    tree: ast.Module
    path: str
    parents: dict[int, ast.AST]


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    out: dict[int, ast.AST] = {}
    for n in walk_all(tree):
        for child in child_nodes(n):
            out[id(child)] = n
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for n in walk_all(tree):
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = n.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _binds(n: ast.AST, name: str) -> bool:
    """`n` binds `name` (any binding form)."""
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
        return n.id == name
    if isinstance(n, ast.arg):
        return n.arg == name
    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return n.name == name
    if isinstance(n, ast.alias):
        return (n.asname or n.name.split(".")[0]) == name
    if isinstance(n, ast.Global | ast.Nonlocal):
        return name in n.names
    if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return n.name == name
    return False


class _Search:
    def __init__(self, world: ClassWorld, callers_closed: bool) -> None:
        self.world = world
        self.callers_closed = callers_closed
        self.classes: set[str] = set()
        self.followed: list[str] = []  # the functions whose callers are taken as closed
        self.public: list[str] = []
        self.sites: dict[str, _Site] = {}
        self.todo: list[tuple[str, Function, _Site, int | None, str]] = []
        self.done: set[tuple[str, int, str]] = set()
        self.uses_of: dict[int, list[tuple[ast.AST, ast.AST, _Site]]] = {}

    def run(self, store: BasesStore) -> Targets:
        node, tree = store.node, store.module
        if node is None or tree is None:
            return Targets(None, "the store is not of the form read")
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        assert isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
        site = _Site(tree, store.path, _parents(tree))
        self.sites[store.path] = site
        try:
            self._resolve(target.value, site)
            steps = 0
            while self.todo:
                steps += 1
                if steps > _MAX_STEPS:
                    raise _Fail(f"more than {_MAX_STEPS} functions pass it on")
                kind, fn, fsite, index, pname = self.todo.pop()
                key = (kind, id(fn), pname)
                if key in self.done:
                    continue
                self.done.add(key)
                if kind == "param":
                    self._param(fn, fsite, index, pname)
                else:
                    self._applied(fn, fsite, index, pname)
        except _Fail as e:
            return Targets(None, str(e))
        assumed = ""
        if self.followed:
            assumed = (
                f"the classes whose bases {store.at} extends are those the tree passes to "
                + ", ".join(f"`{f}`" for f in self.followed[:4])
                + ": closed world over callers (every file of the tree searched for their "
                "names; no code outside the tree calls them, no string resolved at run time "
                "names them"
                + (
                    f"; `{self.public[0]}` is public: `callers-closed = true`)"
                    if self.public
                    else ")"
                )
            )
        return Targets(frozenset(self.classes), "", assumed)

    # --- values -------------------------------------------------------------------------------
    def _resolve(self, e: ast.expr, site: _Site) -> None:
        """Add what `e` (an argument, or the store's target) may be."""
        where = f"{_short(site.path)}:{getattr(e, 'lineno', 0)}"
        if not isinstance(e, ast.Name):
            raise _Fail(f"{where} passes `{ast.unparse(e)[:40]}`, not a class's name")
        name = e.id
        scope = site.parents.get(id(e))
        while scope is not None and not isinstance(scope, ast.Module):
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if isinstance(scope, ast.Lambda):
                    if any(a.arg == name for a in _params(scope.args)):
                        raise _Fail(f"{where} passes `{name}`, a parameter of a lambda")
                else:
                    index, kind = _position(scope, name)
                    if kind:
                        if _rebound(scope, name, kind):
                            raise _Fail(f"{where}: `{name}` is bound again in `{scope.name}`")
                        self.todo.append(("param", scope, site, index, name))
                        return
                    if _rebound(scope, name, None):
                        raise _Fail(f"{where} passes `{name}`, a local of `{scope.name}`")
            elif isinstance(scope, ast.ClassDef) and any(
                _binds(n, name) for s in scope.body for n in walk_all(s)
            ):
                raise _Fail(f"{where} passes `{name}`, bound in a class body")
            scope = site.parents.get(id(scope))
        self._module_class(name, site, where)

    def _module_class(self, name: str, site: _Site, where: str) -> None:
        bound = False
        for n in walk_all(site.tree):
            if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names):
                raise _Fail(f"{where} passes `{name}`, and its module has a star import")
            if not _binds(n, name):
                continue
            scope = site.parents.get(id(n))
            if isinstance(n, ast.ClassDef) and isinstance(scope, ast.Module):
                bound = True
            elif isinstance(n, ast.alias) and isinstance(scope, ast.ImportFrom):
                if n.asname not in (None, n.name):
                    raise _Fail(f"{where} passes `{name}`, imported as another name")
                bound = True
            else:
                raise _Fail(f"{where} passes `{name}`, which its module binds otherwise")
        if not bound:
            raise _Fail(f"{where} passes `{name}`, which no class statement or import binds")
        if name not in class_statements(self.world):
            raise _Fail(f"{where} passes `{name}`, which no class statement of the tree defines")
        pattern = _other_binding(name)
        for i in _naming(self.world, name):
            path, data = self.world.files[i]
            m = pattern.search(data)
            if m:
                line = data.count(b"\n", 0, m.start()) + 1
                raise _Fail(f"{where} passes `{name}`, which {_short(path)}:{line} may bind")
        why = _name_rebound(self.world, name, (site.path,))
        if why:
            raise _Fail(f"{where} passes `{name}`, which may be rebound: {why}")
        self.classes.add(name)

    # --- functions ----------------------------------------------------------------------------
    def _param(self, fn: Function, site: _Site, index: int | None, pname: str) -> None:
        """Add what calls of `fn` pass as its parameter `pname` (position `index`)."""
        for use, parent, usite in self._uses(fn, site):
            at = f"{_short(usite.path)}:{getattr(use, 'lineno', 0)}"
            if isinstance(parent, ast.ClassDef) and use in parent.decorator_list:
                if index == 0:
                    _innermost(parent, use, at)
                    self.classes.add(parent.name)
            elif isinstance(parent, ast.Call) and parent.func is use:
                arg = _argument(parent, index, pname, at)
                if arg is not None:
                    self._resolve(arg, usite)
            elif isinstance(parent, ast.Return) and parent.value is use:
                outer = usite.parents.get(id(fn))
                if not isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef) or (
                    _function_of(parent, usite) is not outer
                ):
                    raise _Fail(f"{at} returns `{fn.name}`")
                self.todo.append(("applied", outer, usite, index, pname))
            else:
                raise _Fail(f"{at} uses `{fn.name}` other than by calling it or decorating a class")

    def _applied(self, g: Function, site: _Site, index: int | None, pname: str) -> None:
        """`g` may return a function that passes its parameter on: add what the results of
        `g(...)` are called with."""
        guarded = _returns_after_guard(g)
        for use, parent, usite in self._uses(g, site):
            at = f"{_short(usite.path)}:{getattr(use, 'lineno', 0)}"
            if isinstance(parent, ast.ClassDef) and use in parent.decorator_list:
                if not guarded:
                    raise _Fail(
                        f"{at}: `@{g.name}` may bind the class's name to the function "
                        f"`{g.name}` returns"
                    )
                continue
            if not (isinstance(parent, ast.Call) and parent.func is use):
                continue  # judged by `_param`
            outer = usite.parents.get(id(parent))
            if isinstance(outer, ast.ClassDef) and parent in outer.decorator_list:
                if index == 0:
                    _innermost(outer, parent, at)
                    self.classes.add(outer.name)
            elif isinstance(outer, ast.Call) and outer.func is parent:
                arg = _argument(outer, index, pname, at)
                if arg is not None:
                    self._resolve(arg, usite)
            elif not isinstance(outer, ast.Expr):
                raise _Fail(
                    f"{at} keeps the result of `{g.name}(...)`, which may be a function that "
                    "extends a class's bases"
                )

    def _uses(self, fn: Function, site: _Site) -> list[tuple[ast.AST, ast.AST, _Site]]:
        hit = self.uses_of.get(id(fn))
        if hit is None:
            hit = self.uses_of[id(fn)] = self._find_uses(fn, site)
        return hit

    def _find_uses(self, fn: Function, site: _Site) -> list[tuple[ast.AST, ast.AST, _Site]]:
        name = fn.name
        outer = site.parents.get(id(fn))
        out: list[tuple[ast.AST, ast.AST, _Site]] = []
        if fn.decorator_list:
            raise _Fail(f"`{name}` ({_short(site.path)}:{fn.lineno}) is decorated")
        if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
            for n in walk_all(outer):
                if n is fn or n is outer:
                    continue
                if _binds(n, name):
                    raise _Fail(f"`{name}` is bound again in `{outer.name}`")
                if _names_in_string(n, name, set()):
                    raise _Fail(f"`{outer.name}` names `{name}` in a string")
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") in {"locals", "vars"}:
                    raise _Fail(f"`{outer.name}` reads its locals by name")
                if isinstance(n, ast.Name) and n.id == name:
                    out.append((n, site.parents[id(n)], site))
            return out
        if not isinstance(outer, ast.Module):
            raise _Fail(
                f"`{name}` ({_short(site.path)}:{fn.lineno}) is neither nested in a function nor "
                "a statement of its module: a method's callers are not followed"
            )
        for n in outer.body:
            if n is not fn and _binds_top(n, name) and not _overload(n):
                raise _Fail(f"`{name}` is bound more than once in {_short(site.path)}")
        if not name.startswith("_"):
            if not self.callers_closed:
                raise _Fail(
                    f"`{name}` ({_short(site.path)}:{fn.lineno}) is public: code outside the "
                    "tree may pass it any class (`callers-closed = true` would follow its calls "
                    "in the tree)"
                )
            self.public.append(name)
        self.followed.append(name)
        out = []
        real = os.path.realpath(site.path)
        for i in _naming(self.world, name):
            path, data = self.world.files[i]
            if os.path.realpath(path) == real:
                usite = site
            else:
                tree = parsed(path, data)
                if tree is None:
                    raise _Fail(f"{_short(path)} names `{name}` and cannot be parsed")
                usite = self.sites.get(path) or _Site(tree, path, _parents(tree))
                self.sites[path] = usite
            docs = _docstrings(usite.tree)
            lookup: tuple[ast.AST, str] | None = None
            named = False  # the file's syntax names it (not only a comment)
            for n in walk_all(usite.tree):
                how = _computed_lookup(n)
                if how and lookup is None:
                    lookup = (n, how)
                if isinstance(n, ast.alias) and n.name == name:
                    named = True
                    if n.asname not in (None, name):
                        raise _Fail(f"{_short(path)} imports `{name}` as `{n.asname}`")
                if _names_in_string(n, name, docs):
                    raise _Fail(
                        f"{_short(path)}:{getattr(n, 'lineno', 0)} names `{name}` in a string"
                    )
                if (isinstance(n, ast.Name) and n.id == name) or (
                    isinstance(n, ast.Attribute) and n.attr == name
                ):
                    named = True
                    if not isinstance(n.ctx, ast.Load):
                        raise _Fail(f"{_short(path)}:{n.lineno} binds `{name}`")
                    out.append((n, usite.parents[id(n)], usite))
            if named and lookup is not None:
                raise _Fail(
                    f"{_short(path)}:{getattr(lookup[0], 'lineno', 0)} may look `{name}` up by "
                    f"a computed name (`{lookup[1]}`)"
                )
        return out


def _computed_lookup(n: ast.AST) -> str:
    """What in `n` may fetch a function of a module by a name its text does not spell:
    `globals()`, `locals()`, `exec`/`eval`, `vars(m)` or `getattr(m, k)` with a computed `k`
    (on a receiver other than `self`/`cls`), `attrgetter`, `methodcaller`, `x.__dict__[...]`."""
    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute):
        return "__dict__[...]" if n.value.attr == "__dict__" else ""
    if not isinstance(n, ast.Call):
        return ""
    f = n.func
    called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if called in _NAMESPACES:
        return f"{called}(...)"
    first = n.args[0] if n.args else None
    on_instance = isinstance(first, ast.Name) and first.id in _INSTANCE
    if called == "vars" and not on_instance:
        return "vars(...)"
    if (
        called == "getattr"
        and len(n.args) >= 2
        and not isinstance(n.args[1], ast.Constant)
        and not on_instance
    ):
        return "getattr(x, name)"
    return ""


def _function_of(n: ast.AST, site: _Site) -> ast.AST | None:
    """The function or lambda whose body holds `n`."""
    scope = site.parents.get(id(n))
    while scope is not None and not isinstance(
        scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        scope = site.parents.get(id(scope))
    return scope


def _innermost(cls: ast.ClassDef, decorator: ast.expr, at: str) -> None:
    """`decorator` is the one applied to the class statement itself (the last one listed: `@a
    @b class D` is `a(b(D))`, and `b(D)` may be any class)."""
    if cls.decorator_list[-1] is not decorator:
        raise _Fail(f"{at} decorates what another decorator of `{cls.name}` returns")


def _other_binding(name: str) -> re.Pattern[bytes]:
    """A binding of `name` other than by a class statement or `from M import name`: an
    assignment (`K = ...`, `a, K = ...`, `K: T = ...`, `K := ...`), `as K`, `def K`, `for K`."""
    n = re.escape(name.encode())
    return re.compile(
        rb"(?m)^[ \t]*[\w, \t()\[\]*]*\b" + n + rb"\b[\w, \t()\[\]*]*(?::[^=\n]*)?=(?!=)"
        rb"|\b" + n + rb"[ \t]*:=|\bas[ \t]+" + n + rb"\b|\bdef[ \t]+" + n + rb"\b"
        rb"|\bfor\b[^\n]*\b" + n + rb"\b[^\n]*\bin\b"
    )


def _params(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _position(fn: Function, name: str) -> tuple[int | None, ast.arg | None]:
    """`name`'s position among `fn`'s positional parameters (None: keyword-only), and its
    `arg`; (None, None) when it is no named parameter of `fn` (`*args` and `**kw` are not)."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    for i, a in enumerate(positional):
        if a.arg == name:
            return i, a
    for a in fn.args.kwonlyargs:
        if a.arg == name:
            return None, a
    for star in (fn.args.vararg, fn.args.kwarg):
        if star is not None and star.arg == name:
            raise _Fail(f"`{name}` is `*{name}` or `**{name}` of `{fn.name}`")
    return None, None


def _argument(call: ast.Call, index: int | None, pname: str, at: str) -> ast.expr | None:
    """The argument `call` passes as the parameter (None: none, the default)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise _Fail(f"{at} passes `*args` or `**kwargs`")
    if index is not None and index < len(call.args):
        return call.args[index]
    for k in call.keywords:
        if k.arg == pname:
            return k.value
    return None


def _own_scope(fn: Function) -> list[ast.AST]:
    """The nodes of `fn`'s own scope: a nested def, lambda or class is in it by its name,
    decorators, defaults and bases, not by its body."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [*fn.body]
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            todo += [*n.decorator_list, *n.args.defaults]
            todo += [d for d in n.args.kw_defaults if d is not None]
        elif isinstance(n, ast.Lambda):
            todo += [*n.args.defaults, *(d for d in n.args.kw_defaults if d is not None)]
        elif isinstance(n, ast.ClassDef):
            todo += [*n.decorator_list, *n.bases, *n.keywords]
        else:
            todo += [c for c in child_nodes(n) if c is not None]
    return out


def _own_scope_of(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes of a statement outside the bodies of the functions and classes it holds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt]
    out: list[ast.AST] = []
    todo: list[ast.AST] = [stmt]
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo += list(child_nodes(n))
    return out


def _rebound(fn: Function, name: str, param: ast.arg | None) -> bool:
    """`fn`'s own scope binds `name` (other than as the parameter `param`), or a nested
    function rebinds it through `nonlocal`."""
    if any(_binds(n, name) for n in _own_scope(fn)):
        return True
    others = [a for a in _params(fn.args) if a is not param]
    others += [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
    if any(a.arg == name for a in others):
        return True
    return any(isinstance(n, ast.Nonlocal) and name in n.names for n in walk_all(fn))


def _binds_top(stmt: ast.stmt, name: str) -> bool:
    return any(_binds(n, name) for n in walk_all(stmt))


def _overload(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        (isinstance(d, ast.Name) and d.id == "overload")
        or (isinstance(d, ast.Attribute) and d.attr == "overload")
        for d in stmt.decorator_list
    )


def _names_in_string(n: ast.AST, name: str, docs: set[int]) -> bool:
    return (
        isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docs
        and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", n.value) is not None
    )


def _returns_after_guard(g: Function) -> bool:
    """Every `return` of `g` that returns a plain name comes after a top-level `if p is not
    None:` on `g`'s first parameter whose body ends in `return`: `@g class D` passes `D` (not
    None), so `g` returns a call's result, never that name."""
    positional = [*g.args.posonlyargs, *g.args.args]
    if not positional:
        return False
    first = positional[0].arg
    if _rebound(g, first, positional[0]):
        return False
    guard_at: int | None = None
    for i, stmt in enumerate(g.body):
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and isinstance(stmt.test, ast.Compare)
            and isinstance(stmt.test.left, ast.Name)
            and stmt.test.left.id == first
            and len(stmt.test.ops) == 1
            and isinstance(stmt.test.ops[0], ast.IsNot)
            and isinstance(stmt.test.comparators[0], ast.Constant)
            and stmt.test.comparators[0].value is None
            and stmt.body
            and isinstance(stmt.body[-1], ast.Return)
        ):
            guard_at = i
            break
    for i, stmt in enumerate(g.body):
        for n in _own_scope_of(stmt):
            if (
                isinstance(n, ast.Return)
                and isinstance(n.value, ast.Name)
                and (guard_at is None or i <= guard_at or n not in g.body)
            ):
                return False
    return True


def store_reaches(
    world: ClassWorld, store: BasesStore, cls_name: str, callers_closed: bool
) -> tuple[bool, str]:
    """Whether the target of `store` may be a class some of whose objects are objects of
    `cls_name`'s: the two share a class that derives from both, or is one of them (the class
    itself, a base of it: its method order changes; a class deriving from it, or from both: its
    objects hold the buffer), by name, aliases included (`family`); with why it may, or the
    assumption the answer that it may not rests on."""
    found = store_targets(world, store, callers_closed)
    if found.names is None:
        return True, found.why
    mine = family(world, cls_name)
    for name in sorted(found.names):
        theirs = family(world, name)
        if mine is None or theirs is None or mine & theirs:
            return True, f"it may be `{name}`, related to this class"
    return False, found.assumed
