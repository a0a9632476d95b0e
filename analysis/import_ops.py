"""The operations in a module's code that may replace a def of another module, each with what its
target may be (import_time.py asks them of the code an import surely runs).

An operation replaces the def `name` of module D only if its target may be D's module object (or
the module object of a package above D, through which `D.name` is reached) and its attribute name
may be `name`. So each store is read as (line, attribute name, target):

- `T.a = v` (any store target, `setattr(T, a, v)`): attribute `a`, or None where the name is
  computed and lookup_names.py cannot list the names it may hold (a loop over a literal list of
  names it can);
- `T.__dict__[k] = v`, `vars(T)[k] = v`, `globals()[k] = v` (T: the module itself): the key's
  names; any other use of `__dict__`/`vars(..)`/`globals()` than a read (`[k]`, `.get`, `.items`,
  `in`, a loop over it): any name of T;
- `sys.modules[k] = v`: a store under the names `k` may hold (lookup_names.py), any other use of
  `sys.modules` than a read, `pop` or `del`: a store under any name;
- an import-system change (`meta_path`, `path_hooks`, `path_importer_cache`, `addsitedir`, a
  change of `sys.path` or of a `__path__`): refused outright, whatever the module.

The target is read with the module's own bindings (its entry in the project view, the imports
of the def that holds the store): a module of the tree; a name imported from a module outside
the tree, or an attribute of one (`transformers.models.x.Y`) — no module of the tree, dropped;
the first parameter of a method, a class or def of the module — an instance, class or function,
not a module object, dropped; anything else (a parameter, a call's result, `getattr(...)`) —
of unknown origin, kept as such. A loop over a literal list of tuples (`for mod, attr, fn in
[(a, "f", g), ...]`) is read element by element.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zeroopt.analysis.lookup_names import LookupNames, Names
from zeroopt.analysis.resolve import child_nodes, walk_all

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView

# (line, attribute names or None for any, target) with target: "mod:X" a module of the tree,
# "any" of unknown origin, "keys" a `sys.modules` store (the names are the keys'), "import" an
# import-system change.
Op = tuple[int, Names | None, str]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.Lambda, ast.ClassDef)
_READS = frozenset({"get", "items", "keys", "values", "copy", "__contains__", "__getitem__"})
_READ_CALLS = frozenset({"dict", "list", "len", "sorted", "set", "tuple", "repr", "str", "iter"})
_IMPORT_SYSTEM = frozenset({"meta_path", "path_hooks", "path_importer_cache", "addsitedir"})
_DROP = "drop"
# Binders that may be handed on as values, and attributes reached by a string that hold them.
_TAKEN = frozenset({"setattr", "vars", "globals", "__setattr__"})
_REFLECTED = frozenset(
    {"__dict__", "modules", "meta_path", "path_hooks", "path_importer_cache", "path", "__setattr__"}
)
_MARKED = re.compile(
    r"setattr|__dict__|\bvars\b|\bglobals\b|locals\(|modules|meta_path|path_hooks|"
    r"path_importer_cache|addsitedir|__path__|__class__|\bpath\b|__setattr__"
)


def _literal(e: ast.expr) -> Names | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return frozenset({(e.value, "", True)})
    return None


class ModuleOps:
    """The replacing operations of one parsed module, read def by def."""

    def __init__(
        self, project: ProjectView, module: str, is_package: bool, tree: ast.Module, text: str
    ) -> None:
        self.project = project
        self.module = module
        self.is_package = is_package
        self.tree = tree
        # Without one of these words the module holds no replacing operation but stores of
        # literal attribute names (`T.a = v`).
        self.marked = _MARKED.search(text) is not None
        entry = project.entry(module)
        self.bindings: dict[str, frozenset[str]] = dict(entry.bindings) if entry else {}
        self.lookup = LookupNames()
        self.parents: dict[int, ast.AST] = {}
        # Names any import of the module binds to `sys` or to `sys.modules`: only those are
        # looked up where they stand.
        self.sys_names: set[str] = set()
        self.modules_names: set[str] = set()
        self._locals: dict[int, dict[str, set[str]]] = {}
        for node in walk_all(tree):
            for child in child_nodes(node):
                self.parents[id(child)] = node
            if self.marked:
                if isinstance(node, ast.Import):
                    self.sys_names |= {a.asname or a.name for a in node.names if a.name == "sys"}
                elif isinstance(node, ast.ImportFrom) and node.module == "sys":
                    self.modules_names |= {
                        a.asname or a.name for a in node.names if a.name in ("modules", "*")
                    }
        self.top_defs = {
            s.name
            for s in tree.body
            if isinstance(s, (*_DEFS, ast.ClassDef))
        } - {
            t.id
            for s in tree.body
            if not isinstance(s, (*_DEFS, ast.ClassDef))
            for n in walk_all(s)
            for t in [n]
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        }

    # --- finding the operations -----------------------------------------------------------
    def ops(self, roots: list[ast.AST], nested: bool = False) -> tuple[Op, ...]:
        """The operations `roots` run (with `nested`, those of the defs, lambdas and classes
        they define too: a def's closures may run whenever it does, or later through what it
        returns)."""
        out: list[Op] = []
        stack = list(roots)
        given = {id(r) for r in roots}  # not `node in roots`: a scan of the list per node
        while stack:
            node = stack.pop()
            if id(node) not in given and isinstance(node, _SCOPES) and not nested:
                stack.extend(_evaluated_outside(node))
                continue
            self._node(node, out)
            stack.extend(child_nodes(node))
        return tuple(out)

    def _node(self, node: ast.AST, out: list[Op]) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            self._store(node.value, frozenset({(node.attr, "", True)}), node, out)
        if not self.marked:
            return
        if isinstance(node, ast.Attribute) and node.attr == "__setattr__":
            call = self.parents.get(id(node))
            args = call.args if isinstance(call, ast.Call) and call.func is node else None
            base = node.value
            if args and isinstance(base, ast.Name) and base.id in ("object", "type", "super"):
                args = args if base.id != "super" and len(args) >= 2 else None
                if args:  # `object.__setattr__(T, k, v)`
                    self._store(args[0], self._name_of(args[1], node), node, out)
            elif args:  # `T.__setattr__(k, v)`; `super().__setattr__(k, v)`: on self
                if not _is_super(base):
                    self._store(base, self._name_of(args[0], node), node, out)
            else:
                out.append((line, None, "any"))  # handed on as a value
        if isinstance(node, ast.Attribute):
            if node.attr == "__dict__" and not self._read(node):
                self._store(node.value, self._key(node), node, out)
            elif node.attr in _IMPORT_SYSTEM:
                out.append((line, None, "import"))
            elif node.attr == "modules" and self._is_sys(node.value) and not self._read(node):
                out.append((line, self._key(node), "keys"))
            elif (node.attr == "path" and self._is_sys(node.value) and not self._read(node)) or (node.attr == "__path__" and not self._read(node)):
                out.append((line, None, "import"))
        elif isinstance(node, ast.Name):
            if (node.id == "__path__" and not self._read(node)) or node.id == "addsitedir":
                out.append((line, None, "import"))
            elif (
                node.id in self.modules_names
                and self._qual(node.id, node) != {"local"}
                and not self._read(node)
            ):
                out.append((line, self._key(node), "keys"))
            elif node.id in _TAKEN and not self._called_here(node):
                # `partial(setattr, m)`, `map(setattr, ...)`: a binder handed on as a value
                out.append((line, None, "any"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            f = node.func.id
            spelled = _literal(node.args[1]) if f == "getattr" and len(node.args) >= 2 else None
            if spelled is not None and next(iter(spelled))[0] in _REFLECTED:
                # `getattr(m, "__dict__")`, `getattr(sys, "modules")`: reached by a string
                out.append((line, None, "any"))
            elif f == "setattr" and len(node.args) >= 2:
                self._store(node.args[0], self._name_of(node.args[1], node), node, out)
            elif f in ("vars", "globals", "locals") and not self._read(node):
                if f == "locals" and self._scope(node) is not None:
                    return  # a function's locals: no module's names
                if node.args:
                    self._store(node.args[0], self._key(node), node, out)
                elif self._scope(node) is None or f == "globals":
                    out.append((line, self._key(node), f"mod:{self.module}"))

    def _name_of(self, e: ast.expr, at: ast.AST) -> Names | None:
        return _literal(e) or self.lookup.names(e, self._scope(at))

    def _called_here(self, node: ast.AST) -> bool:
        p = self.parents.get(id(node))
        return isinstance(p, ast.Call) and p.func is node

    def _scope(self, node: ast.AST) -> ast.AST | None:
        """The def or lambda that holds `node` (None at module level or in a class body)."""
        p = self.parents.get(id(node))
        while p is not None and not isinstance(p, (*_DEFS, ast.Lambda)):
            p = self.parents.get(id(p))
        return p

    def _read(self, node: ast.AST) -> bool:
        """`node` (a mapping or list) is only read where it stands."""
        p = self.parents.get(id(node))
        if isinstance(p, ast.Subscript) and p.value is node:
            return isinstance(p.ctx, ast.Load | ast.Del)
        if isinstance(p, ast.Attribute) and p.value is node:
            q = self.parents.get(id(p))
            read = _READS | ({"pop"} if isinstance(node, ast.Attribute | ast.Name) else set())
            return p.attr in read and isinstance(q, ast.Call) and q.func is p
        if isinstance(p, ast.Compare) and node in p.comparators:
            return all(isinstance(o, ast.In | ast.NotIn) for o in p.ops)
        if isinstance(p, ast.For | ast.comprehension) and p.iter is node:
            return True
        if isinstance(p, ast.Call) and node in p.args and isinstance(p.func, ast.Name):
            return p.func.id in _READ_CALLS
        if isinstance(p, ast.keyword) and p.arg is None:
            return True  # `f(**vars(x))`: the names and values copied into the call
        if isinstance(p, ast.Dict) and any(
            k is None and v is node for k, v in zip(p.keys, p.values, strict=True)
        ):
            return True  # `{**vars(x)}`: copied
        return isinstance(p, ast.Starred) and isinstance(p.ctx, ast.Load)

    def _key(self, node: ast.AST) -> Names | None:
        """The names a store into the mapping `node` may use: `node[k] = v`'s key's, any name
        for any other use."""
        p = self.parents.get(id(node))
        if isinstance(p, ast.Subscript) and p.value is node and isinstance(p.ctx, ast.Store):
            return _literal(p.slice) or self.lookup.names(p.slice, self._scope(p))
        return None

    # --- what a target may be ------------------------------------------------------------
    def _store(self, target: ast.expr, names: Names | None, at: ast.AST, out: list[Op]) -> None:
        line = getattr(at, "lineno", 0)
        for t, n in self._unrolled(target, names, at):
            kind = self._target(t, at)
            if kind != _DROP:
                out.append((line, n, kind))

    def _unrolled(
        self, target: ast.expr, names: Names | None, at: ast.AST
    ) -> list[tuple[ast.expr, Names | None]]:
        """(target, names) for each element of a loop over a literal list of tuples that binds
        the target (and the name, where it is a `setattr` whose name is also bound so)."""
        if not isinstance(target, ast.Name):
            return [(target, names)]
        p = self.parents.get(id(at))
        while p is not None and not isinstance(p, _SCOPES):
            if isinstance(p, ast.For) and isinstance(p.iter, ast.List | ast.Tuple):
                slots = [p.target] if isinstance(p.target, ast.Name) else getattr(
                    p.target, "elts", []
                )
                ids = [s.id if isinstance(s, ast.Name) else None for s in slots]
                if target.id in ids:
                    i = ids.index(target.id)
                    out: list[tuple[ast.expr, Names | None]] = []
                    for el in p.iter.elts:
                        if len(slots) == 1:
                            out.append((el, names))
                        elif isinstance(el, ast.Tuple) and len(el.elts) == len(slots):
                            out.append((el.elts[i], names))
                        else:
                            return [(target, names)]
                    return out
            p = self.parents.get(id(p))
        return [(target, names)]

    def _qual(self, name: str, at: ast.AST) -> set[str] | None:
        return self._qual_in(name, self._scope(at))

    def _qual_in(self, name: str, scope: ast.AST | None) -> set[str] | None:
        """What `name` is bound to where code of `scope` reads it: import targets (`X` for
        `import X`, `X:n` for `from X import n`); {"local"} for another binding of a def;
        {"self"} for a method's first parameter; {"def"} for a class or def of the module;
        None: unknown."""
        p: ast.AST | None = scope
        while p is not None:
            bound = self._local(name, p)
            if bound is not None:
                return bound
            p = self._scope(p)
        if name in self.top_defs:
            return {"def"}
        got = self.bindings.get(name)
        if not got:
            return None
        kinds = {g for g in got if g != "<none>"}
        return None if not kinds or "<opaque>" in kinds else kinds

    def _local(self, name: str, fn: ast.AST) -> set[str] | None:
        key = id(fn)
        if key not in self._locals:
            self._locals[key] = self._bound_in(fn)
        return self._locals[key].get(name)

    def _bound_in(self, fn: ast.AST) -> dict[str, set[str]]:
        """What each name a def (or lambda) binds is bound to: import targets, "local" for any
        other binding (in it or a scope it holds), "self" for a method's first parameter."""
        out: dict[str, set[str]] = {}
        args = getattr(fn, "args", None)
        if args is None:
            return out
        for p in params_of(args):
            out[p.arg] = {"local"}
        params = [a.arg for a in (*args.posonlyargs, *args.args)]
        cls = self.parents.get(id(fn))
        if params and isinstance(cls, ast.ClassDef):
            decorators = {getattr(d, "id", "") for d in getattr(fn, "decorator_list", [])}
            module_type = any("ModuleType" in ast.unparse(b) for b in cls.bases)
            if "staticmethod" not in decorators and not module_type:
                out[params[0]] = {"self"}  # an instance or class of a class that is no module type
        for node in walk_all(fn):
            if node is not fn and isinstance(node, (*_DEFS, ast.ClassDef)):
                out[node.name] = {"local"}
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                out[node.id] = {"local"}
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for n in node.names:
                    out[n] = {"local"}
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for al in node.names:
                    bound = al.asname or al.name.split(".")[0]
                    if isinstance(node, ast.Import):
                        what = al.name if al.asname else bound
                    elif node.level == 0 and node.module:
                        what = f"{node.module}:{al.name}"
                    else:
                        what = "local"
                    if out.get(bound, {what}) != {what}:
                        what = "local"
                    out[bound] = {what}
        return out

    # --- what code calls -------------------------------------------------------------------
    def calls(
        self,
        roots: list[ast.AST],
        scope: ast.AST | None,
        decorators: Sequence[ast.AST] = (),
        nested: bool = False,
    ) -> frozenset[str]:
        """What `roots` call as they run (not inside a def, lambda or class they define), each
        as `M:f` (the def or class `f`, or the method `C.f`, of the tree module M, where the
        called name is certain) or `~f` (any def named `f`: a method of some object, a callable
        of unknown origin); calls of what lies outside the tree are left out."""
        out: set[str] = set()
        stack = list(roots)
        given = {id(r) for r in roots}
        applied = {id(d) for d in decorators}
        while stack:
            node = stack.pop()
            if id(node) not in given and isinstance(node, _SCOPES):
                # A def or class met on the way: its decorators (each called on it), defaults
                # and bases run here; with `nested`, what its body calls counts too.
                outside = _evaluated_outside(node)
                applied |= {id(d) for d in getattr(node, "decorator_list", [])}
                stack.extend(outside)
                if nested:
                    body = node.body if isinstance(node.body, list) else [node.body]
                    inner = node if not isinstance(node, ast.ClassDef) else scope
                    out |= self.calls(list(body), inner, (), nested=True)
                continue
            if isinstance(node, ast.Call):
                key = self._callee(node.func, scope)
                if key:
                    out.add(key)
            elif id(node) in applied and isinstance(node, ast.Name | ast.Attribute):
                key = self._callee(node, scope)
                if key:
                    out.add(key)
            stack.extend(child_nodes(node))
        return frozenset(out)

    def _callee(self, f: ast.expr, scope: ast.AST | None) -> str:
        if isinstance(f, ast.Name):
            kinds = self._qual_in(f.id, scope)
            if kinds is not None and len(kinds) == 1:
                (only,) = kinds
                if only == "def":
                    return f"{self.module}:{f.id}"
                if only not in ("local", "self"):
                    return self._call_key(only.replace(":", "."), f.id)
            return f"~{f.id}"
        if isinstance(f, ast.Attribute):
            base = self._chain_in(f.value, scope)
            if base is not None and base not in ("self", "def"):
                return self._call_key(f"{base}.{f.attr}", f.attr)
            cls = self._class_of(f.value, scope, base)
            return f"@{cls}|{f.attr}" if cls else f"~{f.attr}"
        return ""  # a call of a call's result, a subscript: as before, not followed

    def _class_of(self, e: ast.expr, scope: ast.AST | None, base: str | None) -> str:
        """`M:C` where `e` is the first parameter of a method of the class C of this module
        (an instance of C or of a subclass) or names the class C itself; else ""."""
        if not isinstance(e, ast.Name):
            return ""
        fn = scope
        while base == "self" and fn is not None:
            holder = self.parents.get(id(fn))
            if isinstance(holder, ast.ClassDef) and self._local(e.id, fn) == {"self"}:
                return f"{self.module}:{self.qualname(holder)}"
            fn = self._scope(fn)
        if base == "def":
            found = next((s for s in self.tree.body if getattr(s, "name", "") == e.id), None)
            return f"{self.module}:{e.id}" if isinstance(found, ast.ClassDef) else ""
        return ""

    def qualname(self, node: ast.AST) -> str:
        """The dotted path of a def or class in its module, as import_time.py keys them
        (`C.m`, `f.<locals>.g`)."""
        parts: list[str] = []
        p: ast.AST | None = node
        while p is not None and not isinstance(p, ast.Module):
            if isinstance(p, (*_DEFS, ast.ClassDef)):
                parts.append(p.name if p is node or isinstance(p, ast.ClassDef) else f"{p.name}.<locals>")
            p = self.parents.get(id(p))
        return ".".join(reversed(parts))

    def _call_key(self, qual: str, name: str) -> str:
        """`M:rest` for a dotted name under a module M of the tree, "" outside the tree, `~name`
        where no module of the tree is found."""
        parts = qual.split(".")
        if parts[0] not in self.project.index.tops:
            return ""
        found = self.project.canonical(qual).replace(":", ".")
        parts = found.split(".")
        if parts[0] not in self.project.index.tops:
            return ""
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            if self.project.is_module(prefix):
                return f"{prefix}:{'.'.join(parts[i:])}"
        return f"~{name}"

    def _target(self, t: ast.expr, at: ast.AST) -> str:
        """"mod:X" (a module of the tree), "any" (unknown) or _DROP (no module of the tree)."""
        qual = self._chain(t, at)
        if qual is None:
            return "any"
        if qual in ("self", "def"):
            return _DROP
        return self._module_of(qual)

    def _chain(self, t: ast.expr, at: ast.AST) -> str | None:
        return self._chain_in(t, self._scope(at), at)

    def _chain_in(self, t: ast.expr, scope: ast.AST | None, at: ast.AST | None = None) -> str | None:
        """A dotted name for `t` (`X.a.b`, from an import target), "self"/"def", or None."""
        if isinstance(t, ast.Name):
            if t.id == "__name__":
                return None
            kinds = self._qual_in(t.id, scope)
            if kinds is None or len(kinds) != 1:
                return None
            (only,) = kinds
            return None if only == "local" else only.replace(":", ".")
        if isinstance(t, ast.Attribute):
            base = self._chain_in(t.value, scope, at)
            if base is None or base in ("self", "def"):
                return None
            return f"{base}.{t.attr}"
        if isinstance(t, ast.Call) and t.args and isinstance(t.func, ast.Name | ast.Attribute):
            f = t.func.id if isinstance(t.func, ast.Name) else t.func.attr
            lit = _literal(t.args[0])
            if f == "import_module" and lit is not None and len(t.args) == 1:
                return next(iter(lit))[0]
        if (
            isinstance(t, ast.Subscript)
            and isinstance(t.value, ast.Attribute)
            and t.value.attr == "modules"
            and self._is_sys(t.value.value)
        ):
            lit = _literal(t.slice)
            if lit is not None:
                return next(iter(lit))[0]
            own = isinstance(t.slice, ast.Name) and t.slice.id == "__name__"
            if own and self._qual_in("__name__", scope) is None:
                return self.module
        return None

    def _module_of(self, qual: str) -> str:
        parts = qual.split(".")
        if parts[0] not in self.project.index.tops:
            return _DROP  # no module of the tree is imported under that top-level name
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            if self.project.is_module(prefix):
                return f"mod:{prefix}" if i == len(parts) else "any"
        return "any"

    def _is_sys(self, e: ast.expr) -> bool:
        """`e` may be the `sys` module: a name an import binds to it, or an attribute `sys`
        of anything (`os.sys`)."""
        if isinstance(e, ast.Attribute):
            return e.attr == "sys"
        return (
            isinstance(e, ast.Name) and e.id in self.sys_names and self._qual(e.id, e) == {"sys"}
        )


def _is_super(e: ast.expr) -> bool:
    """`super()` (or `super(C, self)`): the object a method runs on, as its first parameter."""
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "super"


def _evaluated_outside(node: ast.AST) -> list[ast.AST]:
    """What a def, lambda or class statement evaluates where it stands: decorators, defaults,
    bases and keywords."""
    out: list[ast.AST] = list(getattr(node, "decorator_list", []))
    args = getattr(node, "args", None)
    if isinstance(args, ast.arguments):
        out += [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
    if isinstance(node, ast.ClassDef):
        out += [*node.bases, *node.keywords]
    return out


def params_of(args: ast.arguments) -> list[ast.arg]:
    return [
        *args.posonlyargs,
        *args.args,
        *args.kwonlyargs,
        *([args.vararg] if args.vararg else []),
        *([args.kwarg] if args.kwarg else []),
    ]


def harmful(op: Op, module: str, name: str, through: bool = True) -> bool:
    """Whether the operation may replace what `module.name` yields: the def itself (the
    attribute `name` or `__class__` of the module, the attribute `name` of any module of the
    tree, which may re-export it to the caller), an entry of `sys.modules` for the module or
    a package above it, or (`through`: the call reaches the def through the attributes of the
    packages above, `pkg.mod.f(...)`) the attribute of a package naming the next module."""
    _, names, kind = op
    chain = module.split(".")
    above = [".".join(chain[: i + 1]) for i in range(len(chain))]
    if kind == "import":
        return True
    if kind == "keys":
        return names is None or any(_may(names, m) for m in above)
    attrs = {name, "__class__", *(chain[1:] if through else ())}
    if kind == "any":
        return names is None or any(_may(names, a) for a in attrs)
    target = kind[4:]
    if names is None:
        return True  # any name of a module of the tree: the def's, or its re-export's
    if _may(names, name) or (target == module and _may(names, "__class__")):
        return True  # any module of the tree: the call may get the def through its re-export
    return through and any(
        m.startswith(target + ".") and _may(names, m[len(target) + 1 :]) for m in above
    )


def _may(names: Names, value: str) -> bool:
    for prefix, suffix, whole in names:
        if whole and prefix == value:
            return True
        fits = len(value) >= len(prefix) + len(suffix)
        if not whole and fits and value.startswith(prefix) and value.endswith(suffix):
            return True
    return False
