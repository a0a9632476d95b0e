"""Wrappers that drive other backends through the same hooks: when `child.h(...)`, called in a
wrapper's own hook `h`, keeps the child in the order the lifecycle model declares.

SGLang's multi-step draft backends hold one backend per speculative step and forward each hook to
them (sglang 0.5.23 layers/attention/flashattention_backend.py:3507-3540, xpu_backend.py:
2026-2057). The engine drives the wrapper as it drives any backend (speculative/
eagle_draft_cuda_graph_runner.py:164 init_cuda_graph_state, :504 in_graph, :531 and :738
out_graph; eagle_worker_v2.py:711 init_forward_metadata). A child then sees exactly the hooks the
wrapper forwards, in the wrapper's order. That order is one the model allows for the child when:

- every hook of the model the judged class defines is forwarded by the wrapper's hook of that
  name, exactly once, on every run of it (a statement of its body, or of a `for` loop of its body, in a hook
  with no `return` but a last statement, no `break`, `continue`, `try`, `with` or `yield`), to
  the same objects: the same attribute, iterated the same way (`for i in range(R): self.A[i]`,
  `for x in self.A`, or `self.A` itself), with `R` and `A` bound only in the wrapper's
  `__init__`. A wrapper that forwards the capture hooks but not `init_cuda_graph_state` hands the
  child a capture before its graph state; one that forwards only part of a cycle's setup runs the
  child's forward after a setup the model never runs;
- the objects are the wrapper's own: its `__init__` binds `A` once, to a constructor call of a
  class of the module (no `__new__`) or a list of such calls (appended one by one), so each is a
  distinct object no other code was handed at construction; after `__init__` the wrapper only
  indexes, iterates or measures `A` or reads an element's attribute, never stores into one,
  hands `A` or an element on, and no other code of the module names `.A`;
- the wrapper is itself driven by the engine as the model says: it defines the model's required
  hooks, calls none of its own hooks, has no base but `object`/`ABC`/the model's default bases,
  and no class of the module derives from it.

Arguments are free: the model binds every hook parameter to an unknown value (a different `bs`,
`in_capture`, a buffer handed in as `kv_indices_buf`), so a forwarded call with other arguments
is still a call the model covers. Code in other modules reaching the children is assumed, as for
every modelled class, not to call their hooks out of order.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Sequence

from zeroopt.analysis.lifecycle_module import (
    ModuleFacts,
    _all_methods,
    _related_classes,
    _self_param,
)
from zeroopt.analysis.lifecycles import Lifecycle
from zeroopt.analysis.resolve import Resolver, child_nodes, walk, walk_all, walk_scope

_PLAIN_BASES = frozenset({"builtins.object", "abc.ABC"})
# Builtins a loop bound may call: they read their arguments and return a fresh int or range.
_PURE = frozenset({"range", "len", "min", "max", "int"})


def hooks(model: Lifecycle) -> frozenset[str]:
    """The hooks a wrapper may forward: graph init and every cycle's setup (not `__init__`,
    which runs when the child is made, nor the forwards, called by the model's layers)."""
    return frozenset({*model.graph_init, *(m for c in model.cycles for m in c.setup)})


def delegation_reason(
    node: ast.Attribute,
    wrapper: ast.ClassDef,
    judged: set[str],
    model: Lifecycle,
    facts: ModuleFacts,
    resolver: Resolver,
    classes: Sequence[ast.ClassDef],
    bindings: Counter[str],
) -> str:
    """ "" when `node` (`<child>.h`, in the wrapper's method `h`) forwards the hook in a way that
    keeps every child in the model's order for a class defining the hooks `judged`; else why
    not, naming the hook or the use that breaks it."""
    h = node.attr
    methods = _all_methods(wrapper)
    fn = methods.get(h)
    if fn is None:
        return "it is not in the wrapper's own hook"
    key, why = _site(fn, node)
    if key is None:
        return why
    shadowed = sorted(
        n for n in _PURE if bindings[n] or any(_rebinds(m.body, n) for m in methods.values())
    )
    if key[0] == "index" and shadowed:
        return f"the name `{shadowed[0]}` is bound in the module: the loop bound may not be the builtin's"
    why = _wrapper_reason(wrapper, model, facts, resolver, classes)
    if why:
        return why
    init = methods.get("__init__")
    held = {key[1], *(_aliases(init, key[1]) if init is not None else ())}
    for hook in sorted(hooks(model) & judged):
        other = methods.get(hook)
        if other is None:
            return (
                f"`{wrapper.name}` forwards `{h}` but defines no `{hook}`: a child of it misses "
                f"that hook, which the model runs before or with `{h}`"
            )
        found = _forwarded(other, hook, held)
        if found != [key]:
            return (
                f"`{wrapper.name}.{hook}` (line {other.lineno}) does not call `{hook}` once, on "
                f"the same objects, on every run, while `{wrapper.name}.{h}` forwards `{h}`"
            )
    return _holder_reason(wrapper, key, facts, classes, bindings)


# A site's key: ("index", A, loop bound text), ("each", A, "") or ("attr", A, "").
_Key = tuple[str, str, str]


def _site(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.Attribute
) -> tuple[_Key | None, str]:
    """The objects the call at `node` reaches, if it runs on every run of `fn`."""
    why = _straight(fn)
    if why:
        return None, why
    me = _self_param(fn)
    for stmt in fn.body:
        call = _call_of(stmt, last=stmt is fn.body[-1])
        if call is not None and call.func is node:
            key = _receiver(node.value, me, None)
            return (
                (key, "")
                if key
                else (None, f"`{ast.unparse(node.value)}` is not an attribute of `{me}`")
            )
        if isinstance(stmt, ast.For) and not stmt.orelse:
            for inner in stmt.body:
                call = _call_of(inner, last=False)
                if call is not None and call.func is node:
                    key = _receiver(node.value, me, stmt)
                    if key is None:
                        return None, (
                            f"`{ast.unparse(node.value)}` is not `{me}.A[i]` over `range(...)` "
                            f"or an element of `for x in {me}.A`"
                        )
                    return key, ""
    return None, (
        f"the call (line {node.lineno}) is not a statement run on every run of `{fn.name}` "
        "(it is nested in a condition, a nested function or a loop the model does not follow)"
    )


def _call_of(stmt: ast.stmt, last: bool) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return stmt.value
    if last and isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


def _straight(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Why a statement of `fn`'s body (or of a loop in it) may not run when `fn` returns."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return f"`{fn.name}` (line {fn.lineno}) is decorated or a coroutine"
    for node in walk_scope(fn.body):
        kind = None
        if isinstance(node, ast.Return) and node is not fn.body[-1]:
            kind = "a `return` before its end"
        elif isinstance(node, ast.Break | ast.Continue):
            kind = "a `break` or `continue`"
        elif (
            isinstance(node, ast.Try | ast.With | ast.AsyncWith) or type(node).__name__ == "TryStar"
        ):
            kind = "a `try` or `with`"
        elif isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
            kind = "a `yield` or `await`"
        if kind:
            return f"`{fn.name}` has {kind} (line {getattr(node, 'lineno', fn.lineno)})"
    return ""


def _receiver(e: ast.expr, me: str | None, loop: ast.For | None) -> _Key | None:
    if me is None:
        return None
    if loop is None:
        if _is_own(e, me):
            assert isinstance(e, ast.Attribute)
            return ("attr", e.attr, "")
        return None
    target = loop.target
    if not isinstance(target, ast.Name) or _rebinds(loop.body, target.id):
        return None
    if isinstance(e, ast.Name) and e.id == target.id and _is_own(loop.iter, me):
        assert isinstance(loop.iter, ast.Attribute)
        return ("each", loop.iter.attr, "")
    if (
        isinstance(e, ast.Subscript)
        and _is_own(e.value, me)
        and isinstance(e.slice, ast.Name)
        and e.slice.id == target.id
        and isinstance(loop.iter, ast.Call)
        and isinstance(loop.iter.func, ast.Name)
        and loop.iter.func.id == "range"
        and _bound_ok(loop.iter, me)
    ):
        assert isinstance(e.value, ast.Attribute)
        return ("index", e.value.attr, _normal(loop.iter, me))
    return None


def _is_own(e: ast.expr, me: str) -> bool:
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == me


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in walk(body)
    )


def _bound_ok(e: ast.expr, me: str) -> bool:
    """A loop bound built of constants, `me.X`, arithmetic and `range`/`len`/`min`/`max`."""
    for n in walk([e]):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in _PURE) or n.keywords:
                return False
        elif isinstance(n, ast.Name):
            if n.id != me and n.id not in _PURE:
                return False
        elif not isinstance(n, ast.Constant | ast.BinOp | ast.UnaryOp | ast.Attribute):
            return False
        if isinstance(n, ast.Attribute) and not _is_own(n, me):
            return False
    return True


def _normal(e: ast.expr, me: str) -> str:
    """`e`'s text with the method's own name spelled `self`."""
    copy = ast.parse(ast.unparse(e), mode="eval").body
    for n in walk([copy]):
        if isinstance(n, ast.Name) and n.id == me:
            n.id = "self"
    return ast.unparse(copy)


def _bound_attrs(key: _Key) -> set[str]:
    if key[0] != "index":
        return set()
    expr = ast.parse(key[2], mode="eval").body
    return {n.attr for n in walk([expr]) if isinstance(n, ast.Attribute) and _is_own(n, "self")}


def _forwarded(fn: ast.FunctionDef | ast.AsyncFunctionDef, hook: str, held: set[str]) -> list[_Key]:
    """The objects each call `<child>.hook(...)` in `fn` reaches, for the calls that run on
    every run of `fn` on objects held in one of the attributes `held` (the attribute and its
    aliases). Any other call of the hook is a use judged on its own (and fails). A child
    reached twice in one hook would see the hook twice in a row, which the model never runs."""
    me = _self_param(fn) or ""
    out: list[_Key] = []
    for node in walk(fn.body):
        if isinstance(node, ast.Attribute) and node.attr == hook and not _is_own(node, me):
            found, _ = _site(fn, node)
            if found is not None and found[1] in held:
                out.append(found)
    return out


def _wrapper_reason(
    wrapper: ast.ClassDef,
    model: Lifecycle,
    facts: ModuleFacts,
    resolver: Resolver,
    classes: Sequence[ast.ClassDef],
) -> str:
    """Why the engine may not drive the wrapper itself in the model's order."""
    methods = _all_methods(wrapper)
    missing = [m for m in model.requires if m not in methods]
    if missing:
        return (
            f"`{wrapper.name}` defines no `{missing[0]}`: it may not be a backend the engine "
            "drives in the model's order"
        )
    excluded = [m for m in model.excludes if m in methods]
    if excluded:
        return f"`{wrapper.name}` defines `{excluded[0]}`, of another engine generation"
    if wrapper.decorator_list or wrapper.keywords:
        return f"`{wrapper.name}` has a class decorator or keyword"
    scope = resolver.scope_of(wrapper)
    outer = scope.parent or scope
    known = _PLAIN_BASES | set(model.default_bases)
    for base in wrapper.bases:
        if resolver.qualified(outer, base) not in known:
            return f"`{wrapper.name}`'s base `{ast.unparse(base)}` may call the hooks itself"
    related = _related_classes(wrapper, classes) - {wrapper.name}
    related -= {getattr(b, "id", getattr(b, "attr", "")) for b in wrapper.bases}
    if related:
        return (
            f"class `{sorted(related)[0]}` derives from `{wrapper.name}` and may override its hooks"
        )
    names = hooks(model)
    for use in facts.uses:
        if use.cls is wrapper and use.own and use.attr in names:
            return (
                f"`{wrapper.name}` calls its own hook `{use.attr}` in {use.where} (line "
                f"{use.node.lineno}): its children may see that hook out of order"
            )
    return ""


def _holder_reason(
    wrapper: ast.ClassDef,
    key: _Key,
    facts: ModuleFacts,
    classes: Sequence[ast.ClassDef],
    bindings: Counter[str],
) -> str:
    """Why the objects `key` names may change between hooks, be shared, or be reached by other
    code of the module: "" when `A` is bound once in `__init__` to fresh objects and only
    indexed, iterated or measured afterwards, and the bound's attributes are bound there only."""
    attr = key[1]
    init = _all_methods(wrapper).get("__init__")
    if init is None:
        return f"`{wrapper.name}` has no `__init__` binding `.{attr}`"
    parents = {id(c): p for p in walk_all(wrapper) for c in child_nodes(p)}
    fresh = _fresh_classes(classes, bindings)
    aliases = _aliases(init, attr)
    held = {attr, *aliases}
    bound = _bound_attrs(key) - held
    binds = 0
    for use in facts.uses:
        other = use.own and use.cls is not wrapper  # another class's own object, never this one
        if use.attr in held and not other:
            where = f"`{ast.unparse(use.node)[:60]}` in {use.where} (line {use.node.lineno})"
            if not (use.own and use.cls is wrapper):
                return f"{where} may reach the objects `{wrapper.name}` forwards to"
            in_init = use.fn is init
            parent = parents.get(id(use.node))
            if use.store:
                value = _assigned(parent, use.node)
                if use.attr == attr:
                    # A list for `self.A[i]` and `for x in self.A` (a list's own indexing and
                    # iteration), one object for `self.A.h(...)`.
                    ok = _fresh_value(value, fresh) and (
                        isinstance(value, ast.List | ast.ListComp) == (key[0] != "attr")
                    )
                else:  # the alias: `self.B = self.A`, found by _aliases
                    ok = (
                        value is not None
                        and _is_own(value, _self_param(init) or "")
                        and getattr(value, "attr", "") == attr
                    )
                if not in_init or not ok:
                    return f"{where} binds `.{use.attr}` to other than fresh objects of this module"
                binds += use.attr == attr
            elif not _reads_only(use.node, parents, in_init, fresh, aliases):
                return f"{where} may hand on or change the objects `{wrapper.name}` forwards to"
        elif use.attr in bound and not other and not (use.own and use.fn is init):
            # The bound's attributes: bound in `__init__` only, then read as values (an int or
            # a length), never changed in place (`self.steps_list.append(...)`).
            parent = parents.get(id(use.node))
            if (
                not use.own
                or use.store
                or (isinstance(parent, ast.Attribute) and parent.value is use.node)
                or (isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load))
                or (
                    isinstance(parent, ast.Call)
                    and use.node in parent.args
                    and getattr(parent.func, "id", "") not in _PURE
                )
            ):
                return (
                    f"`{ast.unparse(use.node)[:60]}` in {use.where} (line {use.node.lineno}) "
                    "may change the loop bound between hooks"
                )
    if binds != 1:
        return f"`{wrapper.name}.__init__` binds `.{attr}` {binds} times"
    return ""


def _aliases(init: ast.FunctionDef | ast.AsyncFunctionDef, attr: str) -> set[str]:
    """Attributes `__init__` binds to `self.A` itself (`self.attn_backend_list = self.attn_backends`)."""
    me = _self_param(init)
    out = set()
    for node in walk(init.body):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and me is not None
            and _is_own(node.targets[0], me)
            and _is_own(node.value, me)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == attr
        ):
            target = node.targets[0]
            assert isinstance(target, ast.Attribute)
            out.add(target.attr)
    return out - {attr}


def _assigned(parent: ast.AST | None, target: ast.AST) -> ast.expr | None:
    if isinstance(parent, ast.Assign) and parent.targets == [target]:
        return parent.value
    return None


def _fresh_classes(classes: Sequence[ast.ClassDef], bindings: Counter[str]) -> frozenset[str]:
    """Module classes whose call makes a new object: bound once, no `__new__`, no metaclass."""
    return frozenset(
        c.name
        for c in classes
        if bindings[c.name] == 1
        and not c.keywords
        and not c.decorator_list
        and "__new__" not in _all_methods(c)
    )


def _fresh_call(e: ast.expr | None, fresh: frozenset[str]) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in fresh


def _fresh_value(e: ast.expr | None, fresh: frozenset[str]) -> bool:
    if isinstance(e, ast.List):
        return all(_fresh_call(x, fresh) for x in e.elts)
    if isinstance(e, ast.ListComp):
        return _fresh_call(e.elt, fresh)
    return _fresh_call(e, fresh)


def _reads_only(
    node: ast.AST,
    parents: dict[int, ast.AST],
    in_init: bool,
    fresh: frozenset[str],
    aliases: set[str],
) -> bool:
    """`self.A` used only to index, iterate or measure it (in `__init__`, also to append a
    fresh object or bind an alias checked the same way): neither it nor an element is stored,
    handed to a call or changed."""
    parent = parents.get(id(node))
    if in_init and isinstance(parent, ast.Assign) and parent.value is node:
        return all(isinstance(t, ast.Attribute) and t.attr in aliases for t in parent.targets)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if not isinstance(parent.ctx, ast.Load):
            return False
        above = parents.get(id(parent))
        # An element: only its attributes are read (a forwarded hook is checked as a use).
        return _read_attribute(above, parent)
    if isinstance(parent, ast.For | ast.comprehension) and parent.iter is node:
        target = parent.target
        body = parent.body if isinstance(parent, ast.For) else [parents.get(id(parent))]
        if not isinstance(target, ast.Name):
            return False
        return all(
            _read_attribute(parents.get(id(n)), n)
            for b in body
            if b is not None
            for n in walk([b])
            if isinstance(n, ast.Name) and n.id == target.id and n is not target
        )
    if isinstance(parent, ast.Call) and node in parent.args:
        return isinstance(parent.func, ast.Name) and parent.func.id == "len"
    if in_init and isinstance(parent, ast.Attribute) and parent.attr == "append":
        call = parents.get(id(parent))
        return (
            isinstance(call, ast.Call)
            and call.func is parent
            and len(call.args) == 1
            and not call.keywords
            and _fresh_call(call.args[0], fresh)
        )
    return False


def _read_attribute(above: ast.AST | None, element: ast.AST) -> bool:
    """`element.x` read (a forwarded hook, a flag): never stored, so no attribute of a child
    (a length its forward reads up to) changes between its hooks."""
    return (
        isinstance(above, ast.Attribute)
        and above.value is element
        and isinstance(above.ctx, ast.Load)
    )
