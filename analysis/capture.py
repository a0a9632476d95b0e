"""Where a CUDA-graph capture may open or close in the middle of a function.

Between `capture_begin()` and `capture_end()` kernels are recorded, not run: a write there has
not happened when the code after the capture reads the buffer. A `with torch.cuda.graph(g):`
block is modelled by the CFG (cfg.py marks its nodes). Every other way of opening or closing a
capture is recognised here, and a function that may do it, directly or through a function or
method of the same file, is not analysed: no order of its statements says which writes ran.

Recognised, conservatively, anywhere in a function (nested code included):
- `.capture_begin` / `.capture_end`, and `.__enter__` / `.__exit__` called or taken by hand (a
  `torch.cuda.graph(g).__enter__()`; any context manager entered by hand may be a capture);
- `torch.cuda.graph` (and `torch.cuda.graphs.graph`) other than as the manager of a `with`
  (`cm = torch.cuda.graph(g)`, then `with cm:` or `cm.__enter__()`), and a `with` on it whose
  body yields (a context manager that leaves the capture open in its caller);
- `torch.cuda.make_graphed_callables` (it runs the callable under capture) and graph pools
  (`torch.cuda.graph_pool_handle` is only used around captures);
- a reference to a function or method of the file that does any of these, by its name: a call
  `helper(g)`, `self.begin()`, `obj.begin()`, or the function handed on as a value; and any
  name such a function stores under as a string (`setattr(self, "go", g.capture_begin)`,
  `self.__dict__["go"] = ...`);
- the method names above as strings (`getattr(g, "capture_begin")()`).

Code in other modules is assumed not to leave a capture open when it returns (the rule's page).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable

from zeroopt.analysis.resolve import _SYNTAX_CHILDREN, Resolver, Scope, walk_bfs
from zeroopt.analysis.semantics import CAPTURE_CONTEXTS

# Attribute names whose use opens or closes a capture by hand.
MANUAL_CAPTURE_ATTRS = frozenset({"capture_begin", "capture_end", "__enter__", "__exit__"})
# Capture contexts: entered by `with`, cfg.py models them; any other use is by hand.
# Functions that capture (or only serve captures) whatever the syntax around them.
CAPTURING_FUNCTIONS = frozenset(
    {
        "torch.cuda.make_graphed_callables",
        "torch.cuda.graphs.make_graphed_callables",
        "torch.cuda.graph_pool_handle",
        "torch.cuda.graphs.graph_pool_handle",
    }
)

# What `qualify` must return for `direct_capture` to name a node, and those names' last parts.
_TARGETS = CAPTURE_CONTEXTS | CAPTURING_FUNCTIONS
_TARGET_ATTRS = frozenset(t.rpartition(".")[2] for t in _TARGETS)

# A special method that may capture, of a class of the file, runs where no name shows it.
ANY = "*"
_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__"})


def direct_capture(
    roots: Iterable[ast.AST],
    qualify: Callable[[ast.expr], str | None],
    managers: Iterable[ast.expr] = (),
    marked: set[int] | None = None,
) -> str:
    """Why code under `roots` may open or close a capture by itself (or ""). `managers`: context
    expressions known to be entered by a `with` (a CFG keeps them apart from their statement).
    `marked` (from `_may_capture`): only these nodes are visited, in the same order; the others
    cannot be named here."""
    with_managers: set[int] = set()
    for ctx in managers:
        with_managers.add(id(ctx.func if isinstance(ctx, ast.Call) else ctx))
    yielding_capture = ""
    if marked is None:
        nodes = [n for root in roots for n in walk_bfs([root])]
    else:
        nodes = [n for root in roots for n in _walk_marked(root, marked)]
    for node in nodes:
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                ctx = item.context_expr
                func = ctx.func if isinstance(ctx, ast.Call) else ctx
                if qualify(func) in CAPTURE_CONTEXTS:
                    with_managers.add(id(func))
                    body = [n for s in node.body for n in walk_bfs([s])]
                    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in body):
                        yielding_capture = (
                            f"yields inside `with {ast.unparse(ctx)[:60]}` (line {node.lineno}): "
                            "its caller runs under capture"
                        )
    if yielding_capture:
        return yielding_capture
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in MANUAL_CAPTURE_ATTRS:
            return f"a CUDA graph may be captured by hand (`.{node.attr}`, line {node.lineno})"
        if isinstance(node, ast.Constant) and node.value in MANUAL_CAPTURE_ATTRS:
            # getattr(g, "capture_begin")(), operator.methodcaller("__enter__")
            return f"a CUDA graph may be captured by hand ({node.value!r}, line {node.lineno})"
        if isinstance(node, ast.Name | ast.Attribute) and id(node) not in with_managers:
            qual = qualify(node)
            if qual in CAPTURE_CONTEXTS:
                return (
                    f"`{qual}` is used other than as a `with` manager (line {node.lineno}): "
                    "the capture may be entered by hand"
                )
            if qual in CAPTURING_FUNCTIONS:
                return f"`{qual}` (line {node.lineno}) runs or serves a CUDA-graph capture"
    return ""


def capture_functions(tree: ast.Module, resolver: Resolver) -> dict[str, str]:
    """Names of the file's functions, methods and stored callables that may open or close a
    capture, directly or through another of them, each with the reason. By bare name: a method
    `begin` of any class makes every `x.begin` suspect, which can only make more code
    unanalysed. A class whose constructor may capture is named too (`Capturer(g)`); one whose
    other special methods may (`__call__`, `__enter__`, ...) runs them where no name shows it,
    so then every call is suspect (`ANY`)."""
    nodes, marked = _may_capture(tree, resolver)
    if not marked:
        return {}  # no code of the module can make `direct_capture` find anything
    defs: list[tuple[str, list[ast.AST], ast.AST, int]] = []  # (name, code, scope node, line)
    classes: dict[int, str] = {}
    for node in nodes:
        if type(node) is ast.ClassDef:
            for item in node.body:
                classes[id(item)] = node.name
    for node in nodes:  # only definitions and assignments (of every node, in the same order)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            code: list[ast.AST] = [*node.decorator_list, *node.body]
            defs.append((node.name, code, node, node.lineno))
            owner = classes.get(id(node))
            if owner is not None and node.name.startswith("__") and node.name.endswith("__"):
                defs.append((owner if node.name in _CONSTRUCTION else ANY, code, node, node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in walk_bfs([t]):
                    name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
                    if isinstance(name, str) and isinstance(sub.ctx, ast.Store):  # type: ignore[attr-defined]
                        defs.append((name, [node.value], node, node.lineno))
    root = next(s for s in resolver.scopes.values() if s.parent is None)
    found: dict[str, str] = {}
    for name, code, where, line in defs:
        if not any(id(c) in marked for c in code):
            continue  # nothing under it can be named by `direct_capture`: it returns ""
        scope = resolver.scopes.get(where, root)
        why = direct_capture(code, functools.partial(resolver.qualified, scope), (), marked)
        if why and name not in found:
            found[name] = f"`{name}` (line {line}): {why}"
        if why:
            # Names it may store the capture under: setattr(self, "go", g.capture_begin),
            # self.__dict__["go"] = ...: every identifier-like string it mentions.
            for stored in _stored_names(code):
                found.setdefault(stored, f"`{stored}`, stored by {found[name]}")
    changed = True
    while changed:
        changed = False
        for name, code, _, line in defs:
            if name in found:
                continue
            via = referenced(code, found)
            if via:
                found[name] = f"`{name}` (line {line}) uses {found[via]}"
                changed = True
    return found


def _may_capture(tree: ast.Module, resolver: Resolver) -> tuple[list[ast.AST], set[int]]:
    """The definitions and assignments of `tree` (classes, defs, `=` and annotated `=`) in
    `walk_bfs` order, and the ids of the nodes of `tree` under which (themselves included) `direct_capture` may find
    something, whatever scope it qualifies names in: a manual capture attribute or string, or a
    name or attribute that `resolver.qualified` may turn into a capture function. Every message
    of `direct_capture` names such a node, so code with none of them gets "" without the walk
    and the per-node name resolution (the same answers, in a fraction of the time). A name
    qualifies only to one of its bindings in some scope (or a builtin); an attribute to its
    base's name plus `.attr`, or, when the base is in the scanned tree, to wherever the tree's
    re-exports lead (ProjectView.canonical), so any attribute chain rooted at a name bound to
    the tree counts."""
    scopes: dict[int, Scope] = {}
    for start in resolver.scopes.values():
        current: Scope | None = start
        while current is not None and id(current) not in scopes:
            scopes[id(current)] = current
            current = current.parent
    project = resolver.project
    tops = project.index.tops if project is not None else frozenset()
    target_names: set[str] = set()
    tree_names: set[str] = set()
    for scope in scopes.values():
        for name, kinds in scope.bindings.items():
            for kind in kinds:
                if kind in _TARGETS:
                    target_names.add(name)
                if tops and kind.partition(".")[0].partition(":")[0] in tops:
                    tree_names.add(name)
    # Breadth-first with each node's parent, then marked from the leaves up.
    order: list[ast.AST] = [tree]
    parents: list[int] = [-1]
    hits: list[int] = []
    definitions: list[ast.AST] = []
    i = 0
    while i < len(order):
        node = order[i]
        cls = type(node)
        if cls in _DEFINITIONS:
            definitions.append(node)
        elif cls is ast.Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            if attr in MANUAL_CAPTURE_ATTRS or attr in _TARGET_ATTRS:
                hits.append(i)
            elif tree_names:
                base = node.value  # type: ignore[attr-defined]
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in tree_names:
                    hits.append(i)
        elif cls is ast.Name:
            if node.id in target_names:  # type: ignore[attr-defined]
                hits.append(i)
        elif cls is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, str) and value in MANUAL_CAPTURE_ATTRS:
                hits.append(i)
        fields = _SYNTAX_CHILDREN[cls]
        if fields:
            for f in reversed(fields):  # stored last field first: walk_bfs's order
                v = getattr(node, f)
                if type(v) is list:
                    for child in v:
                        if _SYNTAX_CHILDREN[type(child)] is not None:
                            order.append(child)
                            parents.append(i)
                elif v is not None and _SYNTAX_CHILDREN[type(v)] is not None:
                    order.append(v)
                    parents.append(i)
        i += 1
    marked: set[int] = set()
    done: set[int] = set()
    for h in hits:
        while h >= 0 and h not in done:
            done.add(h)
            marked.add(id(order[h]))
            h = parents[h]
    return definitions, marked


# What `capture_functions` reads of a module's nodes (exact classes: ast has no subclasses).
_DEFINITIONS = frozenset({ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign,
                          ast.AnnAssign})  # fmt: skip


def _walk_marked(root: ast.AST, marked: set[int]) -> list[ast.AST]:
    """The nodes `walk_bfs([root])` yields that are in `marked`, in its order. An unmarked node
    has no marked node under it, so its subtree is left out whole; breadth-first order among the
    nodes kept does not depend on the subtrees left out."""
    if id(root) not in marked:
        return []
    out: list[ast.AST] = [root]
    i = 0
    while i < len(out):
        node = out[i]
        for f in reversed(_SYNTAX_CHILDREN[type(node)] or ()):  # stored last field first
            v = getattr(node, f)
            if type(v) is list:
                out.extend(c for c in v if id(c) in marked)
            elif v is not None and id(v) in marked:
                out.append(v)
        i += 1
    return out


def _stored_names(code: list[ast.AST]) -> set[str]:
    """Attribute names set as strings: `setattr(o, "go", v)`, `o.__dict__["go"] = v`,
    `vars(o)["go"] = v`."""
    out: set[str] = set()
    for node in (n for c in code for n in walk_bfs([c])):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            out.add(node.args[1].value)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and (
                (isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__")
                or (
                    isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", "") == "vars"
                )
            )
        ):
            out.add(node.slice.value)
    return out


def referenced(roots: Iterable[ast.AST], names: dict[str, str] | frozenset[str]) -> str:
    """The first of `names` that code under `roots` mentions as a name or an attribute; with
    `ANY` among them, any call."""
    if not names:
        return ""
    if ANY in names:
        for root in roots:
            for node in walk_bfs([root]):
                if isinstance(node, ast.Call | ast.With | ast.AsyncWith):
                    return ANY
    for root in roots:
        for node in walk_bfs([root]):
            if isinstance(node, ast.Name) and node.id in names:
                return node.id
            if isinstance(node, ast.Attribute) and node.attr in names:
                return node.attr
    return ""
