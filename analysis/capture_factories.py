"""Allocations of a buffers factory whose result an engine's graph runner captures on at once.

SGLang's decode runner does not allocate its static inputs itself: `DecodeInputBuffers.create`
(a classmethod of another module) does, and returns `cls(input_ids=input_ids, ...)`; the runner
stores the result, adopts its tensors in its slot registry and captures in the same `__init__`
(capture_runners.BUILTIN_CAPTURE_FACTORIES traces that chain in the engine's source). In the
factory's module the analysis checks what it can see, and relies on the model for the rest:
- the module is the model's module (by name, or by the end of the file's path), the class a plain dataclass of it deriving from the model's
  base (no `__post_init__`, `__init__`, `__setattr__`, no default that calls anything);
- the factory is a plain `@classmethod` whose body ends with `return cls(F=x, ...)`, reached on
  every path through the body's `with` blocks (no other `return`);
- `x` is bound once in the factory, before the return, by the allocation (or `alloc if c else
  None`, or under `if c:`: then "when `c` holds"), and loaded only as that keyword.
It only ever shows a read (`unsafe`), never proves anything.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.capture_inputs import allocation_in, plain_buffers_class
from zeroopt.analysis.capture_runners import BUILTIN_CAPTURE_FACTORIES, CaptureFactoryModel
from zeroopt.analysis.resolve import Resolver, Scope, walk_all


@dataclass(frozen=True)
class FactoryRead:
    alloc: ast.Call
    model: CaptureFactoryModel
    field: str
    stored: int  # line of `F=x` in the returned constructor call
    conditions: tuple[str, ...]


def factory_reads(
    tree: ast.Module,
    resolver: Resolver,
    module: str | None,
    path: str,
    sites: Sequence[Allocation],
    models: Sequence[CaptureFactoryModel] = BUILTIN_CAPTURE_FACTORIES,
) -> dict[int, FactoryRead]:
    """By id of the allocation call: the sites a modelled factory hands to a captured field."""
    found: dict[int, FactoryRead] = {}
    by_call = {id(s.call): s for s in sites}
    root = resolver.scope_of(tree)
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    for model in models:
        if module != model.module and not path.replace("\\", "/").endswith("/" + model.path):
            continue
        cls = next((c for c in classes if c.name == model.cls), None)
        if cls is None or not plain_buffers_class(cls.name, classes, model.bases, resolver, root):
            continue
        fns = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == model.method]
        if len(fns) != 1 or not _plain_classmethod(fns[0], resolver, root):
            continue
        fn = fns[0]
        ret = _final_return(fn)
        if ret is None:
            continue
        fields = dict(model.fields)
        for kw in ret.keywords:
            if kw.arg not in fields:
                continue
            alloc = allocation_in(fn, kw.value, ret.lineno, by_call)
            if alloc is not None:
                call, conditions = alloc
                found[id(call)] = FactoryRead(call, model, kw.arg, kw.value.lineno, conditions)
    return found


def _plain_classmethod(fn: ast.FunctionDef, resolver: Resolver, root: Scope) -> bool:
    if len(fn.decorator_list) != 1:
        return False
    return resolver.qualified(root, fn.decorator_list[0]) == "builtins.classmethod"


def _final_return(fn: ast.FunctionDef) -> ast.Call | None:
    """`return cls(k=v, ...)` ending the body (through `with` blocks), the only `return`."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return None
    me = params[0].arg
    returns = [n for n in walk_all(fn) if isinstance(n, ast.Return)]
    body = fn.body
    while body and isinstance(body[-1], ast.With):
        body = body[-1].body
    last = body[-1] if body else None
    if not isinstance(last, ast.Return) or returns != [last]:
        return None
    value = last.value
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == me
        and not value.args
        and all(k.arg is not None for k in value.keywords)
    ):
        return None
    return value
