"""Static inputs of a CUDA-graph runner read by its capture warm-up before anything writes them.

A runner matched by a model of capture_runners.py allocates a buffer in `__init__`
(`x = torch.zeros(...)`), stores it as field `F` of its buffers object
(`self.buffers = B(F=x, ...)`, B a plain dataclass of the module deriving from the model's
buffers base) and then calls `self.capture()`. The inherited capture path runs the runner's own
per-shape method, which builds the ForwardBatch from `self.buffers.F[:bs]` under a field `K`
the model's forward is assumed to read, and runs that forward for real (warm-up) before
recording it. When nothing writes `x` between the allocation and that forward, the forward reads
the allocation's contents: `unsafe` (the zeros are what makes the warm-up well defined).

Only what the module shows is relied on, and anything else gives up (the site keeps its
verdict); every condition below is checked, the rest is the model's data and its ASSUMPTIONS:
- the class lists one of the model's bases, has no decorator, metaclass or keyword, defines
  `__init__` and the per-shape method as plain undecorated functions, defines none of the
  inherited capture methods, binds none of those names in its body, and no class of the module
  derives from it; the module stores nothing into the class and calls no `setattr`;
- in `__init__`: `x` is bound once, by the allocation (or `alloc if c else None`: then "when
  `c`"), and loaded once, as the keyword `F=x` of the one store `self.buffers = B(...)`; the
  capture call `self.capture()` follows that store on every path that reaches it (only `with` and
  `try` bodies around it); the code between the store and the capture mentions `self` only in
  `self.buffers.share_buffers(...)`, stores `self.a = e` with `e` free of `self`, and the
  model's `harmless` calls; no nested function there;
- in the per-shape method: no store of `self.buffers`; the ForwardBatch call is reached on every
  path; its keyword `K` is `v` or `R.F[slices]` (R: `self.buffers` or a name bound once to it),
  `v` bound once to `R.F[slices]` and loaded only there; other uses of `R.F` only read `.device`,
  `.dtype` or `.shape`; every use of `fb.K` (fb: the name bound to the batch) is an argument of
  a call, never stored, deleted or a method's receiver;
- nowhere in the class is attribute `F` of anything stored or deleted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.capture_runners import (
    BUILTIN_CAPTURE_RUNNERS,
    CaptureRunnerModel,
    SpecInputRead,
)
from zeroopt.analysis.capture_spec_inputs import spec_inputs
from zeroopt.analysis.resolve import Resolver, Scope, child_nodes, walk_all

_Def = ast.FunctionDef | ast.AsyncFunctionDef
_META = frozenset({"device", "dtype", "shape"})
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class CaptureRead:
    """One allocation the capture warm-up reads before any write, with the lines that show it."""

    alloc: ast.Call
    model: CaptureRunnerModel
    cls: str
    field: str  # the field of the buffers object
    key: str  # the ForwardBatch field the forward is assumed to read
    stored: int  # line of `F=x` in the buffers constructor
    capture: int  # line of `self.capture()`
    view: int  # line of the view `R.F[...]` of the field
    batch: int  # line of `K=...` in the ForwardBatch call
    handed: int  # line where `fb.K` is handed to a call (the forward), 0 if not seen
    shared: int  # line of the share_buffers call when it may replace the field, else 0
    conditions: tuple[str, ...]  # "`c` holds" for each branch the allocation sits in
    # the speculative input's field the draft forward reads, when the view goes there
    spec: SpecInputRead | None = None


def capture_reads(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    models: Sequence[CaptureRunnerModel] = BUILTIN_CAPTURE_RUNNERS,
) -> dict[int, CaptureRead]:
    """By id of the allocation call: the sites a model's capture warm-up reads unwritten."""
    by_call = {id(s.call): s for s in sites}
    found: dict[int, CaptureRead] = {}
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    root = resolver.scope_of(tree)
    matched = [(c, m) for c in classes if (m := _model_of(c, resolver, root, models))]
    if not matched or _patches_classes(tree):  # the cheap test first: most files match none
        return found
    for cls, model in matched:
        if _subclassed(cls, tree):
            continue
        for read in _class_reads(cls, model, resolver, root, classes, by_call):
            found[id(read.alloc)] = read
    return found


def _model_of(
    cls: ast.ClassDef, resolver: Resolver, root: Scope, models: Sequence[CaptureRunnerModel]
) -> CaptureRunnerModel | None:
    if cls.decorator_list or cls.keywords:
        return None
    quals = {resolver.qualified(root, b) for b in cls.bases}
    for model in models:
        if quals & set(model.bases):
            return model
    return None


def _patches_classes(tree: ast.Module) -> bool:
    """`setattr(...)` anywhere, or a store into an attribute of a module-level class name."""
    names = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    for node in walk_all(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr", "exec", "eval")
        ):
            return True
        if (
            isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
        ):
            return True
    return False


def _subclassed(cls: ast.ClassDef, tree: ast.Module) -> bool:
    for node in walk_all(tree):
        if (
            isinstance(node, ast.ClassDef)
            and node is not cls
            and any(isinstance(b, ast.Name) and b.id == cls.name for b in node.bases)
        ):
            return True
    return False


def _methods(cls: ast.ClassDef, model: CaptureRunnerModel) -> dict[str, _Def] | None:
    """The class's methods by name, or None when its body may rebind one the model relies on."""
    relied = {*model.inherited, model.per_shape, "__init__", model.capture_call}
    relied |= {"__getattr__", "__getattribute__", "__setattr__", "__init_subclass__"}
    methods: dict[str, _Def] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in methods or stmt.name in relied - {"__init__", model.per_shape}:
                return None
            methods[stmt.name] = stmt
            continue
        for node in walk_all(stmt):
            if (
                isinstance(node, ast.Name)
                and not isinstance(node.ctx, ast.Load)
                and node.id in relied
            ):
                return None
    for name in ("__init__", model.per_shape):
        fn = methods.get(name)
        if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or _yields(fn):
            return None
    return methods


def _yields(fn: _Def) -> bool:
    return any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await) for n in _walk_own(fn.body))


def _walk_own(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of a function body, not those of functions, lambdas or classes in it."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _NESTED):
            continue
        stack.extend(reversed(list(child_nodes(node))))


def _walk_all(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    for stmt in body:
        yield from walk_all(stmt)


def _straight(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run on every path that runs to the end of `body` (through `with` and
    `try` bodies, which run unless something raises)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.With | ast.AsyncWith | ast.Try):
            yield from _straight(stmt.body)


def _self_name(fn: _Def) -> str | None:
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else None


def _is_attr(node: ast.AST, base: str, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == base
    )


def _class_reads(
    cls: ast.ClassDef,
    model: CaptureRunnerModel,
    resolver: Resolver,
    root: Scope,
    classes: list[ast.ClassDef],
    by_call: dict[int, Allocation],
) -> Iterator[CaptureRead]:
    methods = _methods(cls, model)
    if methods is None:
        return
    init, per_shape = methods["__init__"], methods[model.per_shape]
    if not (isinstance(init, ast.FunctionDef) and isinstance(per_shape, ast.FunctionDef)):
        return
    me = _self_name(init)
    if me is None:
        return
    setup = _buffers_store(init, me, model, resolver, root, classes)
    if setup is None:
        return
    store, fields, capture = setup
    assumed = model.assumed_reads()
    written = model.written()
    batch = _batch_inputs(per_shape, model, resolver)
    if batch is None:
        return
    reach = _reach(per_shape, methods, model, resolver, root)
    if reach is None:
        return
    stored_fields = _stored_attrs(cls)
    shared = _share_line(init, me, model)
    for key, (field, view, batch_line, handed, spec) in batch.items():
        if (spec is None and key not in assumed) or field in written or field in stored_fields:
            continue
        if spec is not None and (spec.field in written or spec.field in stored_fields):
            continue
        if _reach_may_write(field, reach, methods, per_shape, model):
            continue
        if spec is not None and _reach_may_write(spec.field, reach, methods, per_shape, model):
            continue
        kw = fields.get(field)
        if kw is None:
            continue
        alloc = allocation_in(init, kw.value, store.lineno, by_call)
        if alloc is None:
            continue
        call, conditions = alloc
        excluded = shared[1] if shared else frozenset()
        yield CaptureRead(
            alloc=call,
            model=model,
            cls=cls.name,
            field=field,
            key=key,
            stored=kw.value.lineno,
            capture=capture,
            view=view,
            batch=batch_line,
            handed=handed,
            shared=shared[0] if shared and field not in excluded else 0,
            conditions=conditions,
            spec=spec,
        )


def _reach(
    per_shape: ast.FunctionDef,
    methods: dict[str, _Def],
    model: CaptureRunnerModel,
    resolver: Resolver,
    root: Scope,
) -> frozenset[str] | None:
    """The names `self.X` the per-shape method reaches, through the class's own methods; None
    when one of them hands `self` to a call the model does not know, or names an attribute of
    `self` by a string (`getattr`)."""
    seen: set[str] = set()
    todo: list[_Def] = [per_shape]
    harmless = dict(model.harmless)
    while todo:
        fn = todo.pop()
        me = _self_name(fn)
        if me is None:
            return None
        for node in _walk_all(fn.body):
            if isinstance(node, ast.Call):
                handed = [*node.args, *(k.value for k in node.keywords)]
                if (
                    any(isinstance(a, ast.Name) and a.id == me for a in handed)
                    and resolver.qualified(root, node.func) not in harmless
                ):
                    return None
                if (
                    isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "vars")
                    and node.args
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id == me
                ):
                    return None  # an attribute of `self` named by a string
            if isinstance(node, ast.Attribute) and _is_attr_of(node, me) and node.attr not in seen:
                seen.add(node.attr)
                if node.attr in methods:
                    todo.append(methods[node.attr])
    return frozenset(seen)


def _is_attr_of(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and (node.value.id == name)
    )


def _reach_may_write(
    field: str,
    reach: frozenset[str],
    methods: dict[str, _Def],
    per_shape: ast.FunctionDef,
    model: CaptureRunnerModel,
) -> bool:
    """A method the per-shape method reaches may write the field: one of the class's own that
    names the field at all, or one of the base's that writes it."""
    for writer_field, writers, _ in model.base_writers:
        if writer_field == field and reach & set(writers):
            return True
    for name in reach:
        fn = methods.get(name)
        if fn is None or fn is per_shape:
            continue
        if any(isinstance(n, ast.Attribute) and n.attr == field for n in _walk_all(fn.body)):
            return True
    return False


def _buffers_store(
    init: ast.FunctionDef,
    me: str,
    model: CaptureRunnerModel,
    resolver: Resolver,
    root: Scope,
    classes: list[ast.ClassDef],
) -> tuple[ast.Assign, dict[str, ast.keyword], int] | None:
    """The one store `self.buffers = B(F=..., ...)`, its keywords, and the line of the capture
    call that follows it on every path; None unless the code between them is as the module
    docstring says."""
    stores = [
        n
        for n in _walk_all(init.body)
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
        and _is_attr(n, me, model.buffers_attr)
    ]  # fmt: skip
    straight = list(_straight(init.body))
    assign = next(
        (s for s in straight if isinstance(s, ast.Assign) and s.targets[0] in stores), None
    )
    if assign is None or len(stores) != 1 or len(assign.targets) != 1:
        return None
    value = assign.value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args):
        return None
    if any(k.arg is None for k in value.keywords):
        return None
    if not plain_buffers_class(value.func.id, classes, model.buffers_bases, resolver, root):
        return None
    after = straight[straight.index(assign) + 1 :]
    capture = next((s for s in after if _is_capture(s, me, model)), None)
    if capture is None:
        return None
    end = assign.end_lineno or assign.lineno
    for node in _walk_all(init.body):
        if not isinstance(node, ast.stmt) or not (end < node.lineno < capture.lineno):
            continue
        if not _harmless_between(node, me, model, resolver, root):
            return None
    return assign, {k.arg: k for k in value.keywords if k.arg}, capture.lineno


def _is_capture(stmt: ast.stmt, me: str, model: CaptureRunnerModel) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and _is_attr(stmt.value.func, me, model.capture_call)
        and not stmt.value.args
        and not stmt.value.keywords
    )


def _mentions(node: ast.AST | None, name: str) -> bool:
    if node is None:
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in walk_all(node))


def _harmless_between(
    stmt: ast.stmt, me: str, model: CaptureRunnerModel, resolver: Resolver, root: Scope
) -> bool:
    """A statement between the store and the capture: `self` only where the model allows."""
    if isinstance(stmt, _NESTED):
        return False
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return not any(_mentions(i, me) for i in stmt.items)
    if isinstance(stmt, ast.If | ast.While):
        return not _mentions(stmt.test, me)
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return not _mentions(stmt.iter, me) and not _mentions(stmt.target, me)
    if isinstance(stmt, ast.Try):
        return True  # its statements are checked one by one
    if not _mentions(stmt, me):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == model.sharing
            and _is_attr(func.value, me, model.buffers_attr)
        ):
            return not any(_mentions(a, me) for a in (*call.args, *call.keywords))
        return False
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            return False
        if target.value.id != me or target.attr == model.buffers_attr:
            return False
        value = stmt.value
        if not _mentions(value, me):
            return True
        return (
            isinstance(value, ast.Call)
            and resolver.qualified(root, value.func) in dict(model.harmless)
            and [ast.dump(a) for a in value.args] == [ast.dump(ast.Name(me, ast.Load()))]
            and not value.keywords
        )
    return False


def plain_buffers_class(
    name: str,
    classes: list[ast.ClassDef],
    bases: tuple[str, ...],
    resolver: Resolver,
    root: Scope,
) -> bool:
    """A dataclass of this module deriving from the model's buffers base whose `__init__` only
    stores its fields: no `__post_init__`, `__init__`, `__setattr__`, no `init=False` field."""
    cls = next((c for c in classes if c.name == name), None)
    if cls is None or cls.keywords or len(cls.bases) != 1:
        return False
    if resolver.qualified(root, cls.bases[0]) not in bases:
        return False
    if len(cls.decorator_list) != 1:
        return False
    deco = cls.decorator_list[0]
    if isinstance(deco, ast.Call):
        if deco.args or any(k.arg in (None, "init") for k in deco.keywords):
            return False
        deco = deco.func
    if resolver.qualified(root, deco) != "dataclasses.dataclass":
        return False
    special = {"__post_init__", "__init__", "__setattr__", "__getattribute__", "__new__"}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in special:
            return False
        # a default that calls (`field(init=False)` and the like)
        if (
            isinstance(stmt, ast.AnnAssign)
            and stmt.value is not None
            and any(isinstance(n, ast.Call) for n in walk_all(stmt.value))
        ):
            return False
    return True


def _share_line(
    init: ast.FunctionDef, me: str, model: CaptureRunnerModel
) -> tuple[int, frozenset[str]] | None:
    """The share call on the buffers object, and the fields it certainly leaves alone."""
    for node in _walk_all(init.body):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != model.sharing or not _is_attr(node.func.value, me, model.buffers_attr):
            continue
        excluded: set[str] = set()
        for k in node.keywords:
            if k.arg == "exclude" and isinstance(k.value, ast.Set | ast.Tuple | ast.List):
                excluded = {
                    e.value
                    for e in k.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
        return node.lineno, frozenset(excluded)
    return None


def _stored_attrs(cls: ast.ClassDef) -> frozenset[str]:
    """Attribute names stored or deleted anywhere in the class."""
    return frozenset(
        n.attr
        for n in walk_all(cls)
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
    )


def allocation_in(
    init: ast.FunctionDef, value: ast.expr, before: int, by_call: dict[int, Allocation]
) -> tuple[ast.Call, tuple[str, ...]] | None:
    """The allocation a keyword value holds, with the branches it needs: the allocation itself
    (`alloc` or `alloc if c else None`), or a name bound once in `__init__` to one of those,
    before the store, and loaded only as this keyword."""
    direct = _alloc_value(value, by_call)
    if direct is not None:
        return direct
    if not isinstance(value, ast.Name):
        return None
    name = value.id
    binds: list[ast.Name] = []
    loads: list[ast.Name] = []
    for node in _walk_all(init.body):
        if isinstance(node, ast.Name) and node.id == name:
            (loads if isinstance(node.ctx, ast.Load) else binds).append(node)
        elif (isinstance(node, ast.Global | ast.Nonlocal) and name in node.names) or (
            isinstance(node, _NESTED) and _mentions(node, name)
        ):
            return None
    if len(binds) != 1 or loads != [value]:
        return None
    owner = _binding_statement(init.body, binds[0], ())
    if owner is None:
        return None
    stmt, conditions = owner
    if not isinstance(stmt, ast.Assign) or stmt.targets != [binds[0]]:
        return None
    if stmt.lineno >= before:
        return None
    found = _alloc_value(stmt.value, by_call)
    if found is None:
        return None
    return found[0], (*conditions, *found[1])


def _alloc_value(
    value: ast.expr, by_call: dict[int, Allocation]
) -> tuple[ast.Call, tuple[str, ...]] | None:
    if isinstance(value, ast.Call) and id(value) in by_call:
        return value, ()
    if (
        isinstance(value, ast.IfExp)
        and isinstance(value.body, ast.Call)
        and id(value.body) in by_call
        and isinstance(value.orelse, ast.Constant)
        and value.orelse.value is None
    ):
        return value.body, (f"`{ast.unparse(value.test)}` holds",)
    return None


def _binding_statement(
    body: Sequence[ast.stmt], target: ast.Name, conditions: tuple[str, ...]
) -> tuple[ast.stmt, tuple[str, ...]] | None:
    """The statement of `body` (through blocks) whose target is `target`, and the `if` tests it
    needs; None when it sits in a loop or an exception handler."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(t is target for t in stmt.targets):
            return stmt, conditions
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            for part, cond in ((stmt.body, f"`{test}` holds"), (stmt.orelse, f"not `{test}`")):
                found = _binding_statement(part, target, (*conditions, cond))
                if found is not None:
                    return found
        elif isinstance(stmt, ast.With | ast.AsyncWith | ast.Try):
            found = _binding_statement(stmt.body, target, conditions)
            if found is not None:
                return found
    return None


def _batch_inputs(
    fn: ast.FunctionDef, model: CaptureRunnerModel, resolver: Resolver
) -> dict[str, tuple[str, int, int, int, SpecInputRead | None]] | None:
    """Per ForwardBatch keyword that holds a slice of a buffers field: (field, line of the view,
    line of the keyword, line where the batch's field is handed to a call or 0, None); and per
    field `spec_info.G` of its speculative input holding one (capture_spec_inputs.py), the same
    with the line of the draft forward call and the model's read. None when the method does not
    build one batch on every path or may re-point the buffers."""
    me = _self_name(fn)
    if me is None:
        return None
    scope = resolver.scopes.get(fn)
    if scope is None:
        return None
    for node in _walk_all(fn.body):
        if (
            isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and _is_attr(node, me, model.buffers_attr)
        ):
            return None
    straight = list(_straight(fn.body))
    batches = [
        (s, s.value)
        for s in straight
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Call)
        and resolver.qualified(scope, s.value.func) in model.batch_class
    ]
    all_batches = [
        n
        for n in _walk_all(fn.body)
        if isinstance(n, ast.Call) and resolver.qualified(scope, n.func) in model.batch_class
    ]
    if len(batches) != 1 or len(all_batches) != 1:
        return None
    stmt, call = batches[0]
    target = stmt.targets[0]
    assert isinstance(target, ast.Name)
    fb = target.id
    if sum(1 for n in _walk_all(fn.body) if isinstance(n, ast.Name) and n.id == fb
           and not isinstance(n.ctx, ast.Load)) != 1:  # fmt: skip
        return None
    holders = _buffers_names(fn, me, model)
    result: dict[str, tuple[str, int, int, int, SpecInputRead | None]] = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        view = _sliced_field(fn, kw.value, holders, me, model, stmt.lineno)
        if view is None or not _fields_uses_read_only(fn, view[0], holders, me, model):
            continue
        handed = _handed(fn, fb, kw.arg)
        if handed is None:
            continue
        result[kw.arg] = (view[0], view[1], kw.value.lineno, handed, None)

    def view_of(value: ast.expr) -> tuple[str, int] | None:
        view = _sliced_field(fn, value, holders, me, model, stmt.lineno)
        if view is None or not _fields_uses_read_only(fn, view[0], holders, me, model):
            return None
        return view

    spec = spec_inputs(fn.body, straight, call, fb, model, scope, resolver, view_of)
    result.update(spec)
    return result


def _buffers_names(fn: ast.FunctionDef, me: str, model: CaptureRunnerModel) -> frozenset[str]:
    """Names bound once, to `self.buffers`, and never otherwise."""
    names: dict[str, int] = {}
    good: set[str] = set()
    for node in _walk_all(fn.body):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names[node.id] = names.get(node.id, 0) + 1
    for stmt in _straight(fn.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and _is_attr(stmt.value, me, model.buffers_attr)
        ):
            good.add(stmt.targets[0].id)
    return frozenset(n for n in good if names.get(n) == 1)


def _holds_buffers(
    node: ast.expr, holders: frozenset[str], me: str, model: CaptureRunnerModel
) -> bool:
    if isinstance(node, ast.Name):
        return node.id in holders
    return _is_attr(node, me, model.buffers_attr)


def _field_slice(
    value: ast.expr, holders: frozenset[str], me: str, model: CaptureRunnerModel
) -> str | None:
    """`R.F[a:b]` or `R.F[:, :n]` (basic slices: a view) -> F."""
    if not isinstance(value, ast.Subscript) or not isinstance(value.ctx, ast.Load):
        return None
    index = value.slice
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if not parts or not all(isinstance(p, ast.Slice) and p.step is None for p in parts):
        return None
    inner = value.value
    if isinstance(inner, ast.Attribute) and _holds_buffers(inner.value, holders, me, model):
        return inner.attr
    return None


def _sliced_field(
    fn: ast.FunctionDef,
    value: ast.expr,
    holders: frozenset[str],
    me: str,
    model: CaptureRunnerModel,
    batch_line: int,
) -> tuple[str, int] | None:
    """The field a keyword value is a view of, and the line that takes the view."""
    direct = _field_slice(value, holders, me, model)
    if direct is not None:
        return direct, value.lineno
    if not isinstance(value, ast.Name):
        return None
    uses = [n for n in _walk_all(fn.body) if isinstance(n, ast.Name) and n.id == value.id]
    binds = [n for n in uses if not isinstance(n.ctx, ast.Load)]
    if len(binds) != 1 or [n for n in uses if isinstance(n.ctx, ast.Load)] != [value]:
        return None
    stmt = next(
        (
            s
            for s in _straight(fn.body)
            if isinstance(s, ast.Assign) and s.targets == [binds[0]] and s.lineno < batch_line
        ),
        None,
    )
    if stmt is None:
        return None
    field = _field_slice(stmt.value, holders, me, model)
    return None if field is None else (field, stmt.lineno)


def _fields_uses_read_only(
    fn: ast.FunctionDef, field: str, holders: frozenset[str], me: str, model: CaptureRunnerModel
) -> bool:
    """Every `R.F` in the method is sliced (a view bound as above) or asked its metadata."""
    parents: dict[int, ast.AST] = {}
    for node in _walk_all(fn.body):
        for child in child_nodes(node):
            parents[id(child)] = node
    for node in _walk_all(fn.body):
        if not (isinstance(node, ast.Attribute) and node.attr == field):
            continue
        if not _holds_buffers(node.value, holders, me, model):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.attr in _META:
            continue
        if (
            isinstance(parent, ast.Subscript)
            and parent.value is node
            and _field_slice(parent, holders, me, model) == field
            and isinstance(parents.get(id(parent)), ast.Assign | ast.keyword)
        ):
            continue
        return False
    return True


def _handed(fn: ast.FunctionDef, fb: str, key: str) -> int | None:
    """The first line where `fb.key` is an argument of a call (0: never used); None when a use
    stores, deletes or calls a method on it, or it is used any other way."""
    parents: dict[int, ast.AST] = {}
    for node in _walk_all(fn.body):
        for child in child_nodes(node):
            parents[id(child)] = node
    first = 0
    for node in _walk_all(fn.body):
        if not _is_attr(node, fb, key):
            continue
        assert isinstance(node, ast.Attribute)
        if not isinstance(node.ctx, ast.Load):
            return None
        parent = parents.get(id(node))
        if isinstance(parent, ast.keyword):
            parent = parents.get(id(parent))
            if not isinstance(parent, ast.Call):
                return None
        elif not (isinstance(parent, ast.Call) and node in parent.args):
            return None
        first = node.lineno if not first else min(first, node.lineno)
    return first
