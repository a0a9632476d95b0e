"""Buffer views a runner's per-shape method hands to the draft forward inside a speculative input.

Speculative-decoding draft runners do not hand every static input to the ForwardBatch directly:
`capture_one_shape` builds an input object (`s = EagleDraftInput(topk_index=v, ...)`, `v` a
view of `self.buffers.F`), passes it as the batch's `spec_info=s`, and the warm-up runs the
worker's draft forward on the batch (`w.draft_forward(fb)`), which reads the object's field.
This module finds those views for the fields a model's `spec_reads` names; the caller
(analysis/capture_inputs.py) checks the rest of the capture path, as for a direct keyword.

Relied on, checked here:
- `s` is bound once, on every path (through `with` and `try` bodies), before the batch, to a
  call of the named class with keywords only, and loaded only as the batch keyword, as the test
  of an `if` expression or statement, or as the receiver of an attribute other than the field;
- no use of the batch's `spec_info` names the field, and none stores or deletes `spec_info`;
- the call that runs the draft forward, `self.w.draft_forward(fb)` (an attribute's, not the
  runner's own method), is handed the batch.
What the draft forward reads, and that the calls handed the batch before it do not write the
field, are the model's ASSUMPTIONS (capture_runners.py, `SpecInputRead`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

from zeroopt.analysis.capture_runners import CaptureRunnerModel, SpecInputRead
from zeroopt.analysis.resolve import Resolver, Scope, child_nodes, walk_all

# (field of the buffers object, line of its view, line of the keyword, line of the forward call,
# the model's read)
SpecView = tuple[str, int, int, int, SpecInputRead]
ViewOf = Callable[[ast.expr], "tuple[str, int] | None"]


def spec_inputs(
    body: Sequence[ast.stmt],
    straight: Sequence[ast.stmt],
    call: ast.Call,
    fb: str,
    model: CaptureRunnerModel,
    scope: Scope,
    resolver: Resolver,
    view_of: ViewOf,
) -> dict[str, SpecView]:
    """By `spec_info.G`: the views of buffers fields the batch built by `call` (bound to `fb`)
    carries in its speculative input, for the fields the model says the draft forward reads."""
    kw = next((k for k in call.keywords if k.arg == model.spec_key), None)
    if kw is None or not isinstance(kw.value, ast.Name) or not model.spec_reads:
        return {}
    name = kw.value.id
    nodes = list(_walk(body))
    parents = {id(c): n for n in nodes for c in child_nodes(n)}
    uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == name]
    binds = [n for n in uses if not isinstance(n.ctx, ast.Load)]
    if len(binds) != 1:
        return {}
    stmt = next(
        (
            s
            for s in straight
            if isinstance(s, ast.Assign) and s.targets == [binds[0]] and s.lineno < call.lineno
        ),
        None,
    )
    if stmt is None or not isinstance(stmt.value, ast.Call) or stmt.value.args:
        return {}
    built = stmt.value
    cls = resolver.qualified(scope, built.func)
    attrs = _attributes_used(uses, kw.value, parents)
    if attrs is None or _batch_spec_rebound(nodes, fb, model.spec_key):
        return {}
    found: dict[str, SpecView] = {}
    for read in model.spec_reads:
        if cls not in read.cls or read.field in attrs:
            continue
        if _batch_spec_names(nodes, fb, model.spec_key, read.field, parents):
            continue
        value = next((k.value for k in built.keywords if k.arg == read.field), None)
        view = view_of(value) if value is not None else None
        forward = _forward_call(nodes, fb, read.forward)
        if value is None or view is None or not forward:
            continue
        found[f"{model.spec_key}.{read.field}"] = (view[0], view[1], value.lineno, forward, read)
    return found


def _walk(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    for stmt in body:
        yield from walk_all(stmt)


def _attributes_used(
    uses: list[ast.Name], keyword: ast.Name, parents: dict[int, ast.AST]
) -> frozenset[str] | None:
    """The attributes read or stored on the input object; None when it is used any other way
    (handed to a call, aliased, returned)."""
    attrs: set[str] = set()
    for use in uses:
        if use is keyword or not isinstance(use.ctx, ast.Load):
            continue
        parent = parents.get(id(use))
        if isinstance(parent, ast.Attribute) and parent.value is use:
            attrs.add(parent.attr)
        elif isinstance(parent, ast.IfExp | ast.If) and parent.test is use:
            continue
        else:
            return None
    return frozenset(attrs)


def _is_spec(node: ast.AST, fb: str, key: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == key
        and isinstance(node.value, ast.Name)
        and node.value.id == fb
    )


def _batch_spec_rebound(nodes: list[ast.AST], fb: str, key: str) -> bool:
    return any(
        isinstance(n, ast.Attribute) and _is_spec(n, fb, key) and not isinstance(n.ctx, ast.Load)
        for n in nodes
    )


def _batch_spec_names(
    nodes: list[ast.AST], fb: str, key: str, field: str, parents: dict[int, ast.AST]
) -> bool:
    """`fb.spec_info.field` appears in the method (read or written): not judged."""
    for node in nodes:
        if _is_spec(node, fb, key):
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.attr == field:
                return True
    return False


def _forward_call(nodes: list[ast.AST], fb: str, method: str) -> int:
    """The first line calling `self.w.method(fb)` (the worker's, not the runner's own), 0 if
    none."""
    lines = [
        n.lineno
        for n in nodes
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == method
        and isinstance(n.func.value, ast.Attribute)
        and [ast.dump(a) for a in n.args] == [ast.dump(ast.Name(fb, ast.Load()))]
    ]
    return min(lines, default=0)
