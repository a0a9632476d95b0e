"""The forward fixpoint over a CFG for one buffer, then the recording pass that decides it."""

from __future__ import annotations

import ast
import heapq
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from zeroopt.analysis.capture import direct_capture, referenced
from zeroopt.analysis.cfg import CFG, Kind
from zeroopt.analysis.dataflow.calls import _ANY, _FRAME_NAMES, _REFLECTIVE_ATTRS
from zeroopt.analysis.dataflow.holders import node_slots, touches_exposed
from zeroopt.analysis.dataflow.outcome import BufferOutcome, Context, _Recorder
from zeroopt.analysis.dataflow.places import place_key
from zeroopt.analysis.dataflow.statements import Evaluator
from zeroopt.analysis.resolve import walk, walk_all
from zeroopt.analysis.state import UNREACHED, State, evolve, join

_MAX_ITERATIONS = 200_000

# --- the fixpoint --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mentions:
    """What one CFG node can touch, for skipping nodes that cannot affect a buffer's state."""

    bare: frozenset[str]  # names used other than as `name.attr`
    dotted: frozenset[str]  # "name.attr" accesses
    attr_roots: frozenset[str]  # names used as `name.attr`
    called_roots: frozenset[str]  # names used as `name.method(...)`
    runs_code: bool  # calls, awaits, yields, defs, returns: code we cannot see may run
    # Attributes stored into (`x.a = v`, through any object) and whether an item is: through
    # another name for an object the state tracks, the store re-points its `.a` / `[k]` paths.
    stored_attrs: frozenset[str] = frozenset()
    stores_item: bool = False
    slots: frozenset[str] = frozenset()  # holders.node_slots: `.a` and `[` loaded or stored
    # Roots of what the node changes in place without a call: `t += 1` (a tensor's `__iadd__`),
    # `t[0] = v`, `t.data = v`. A volatile bound may be a view of that object.
    mutated: frozenset[str] = frozenset()

    @cached_property
    def names(self) -> frozenset[str]:
        return self.bare | self.attr_roots


# Methods that open or close a CUDA-graph capture by hand: between them, tensor operations are
# recorded, not run, and no order of this function's statements says which writes happened.


def _capture_reason(cfg: CFG, ctx: Context) -> str:
    """Why a CUDA-graph capture may open or close inside this CFG other than by a `with` the CFG
    models (capture.py): between the two, tensor operations are recorded, not run, and no order
    of the statements says which writes happened. The same for every buffer of one CFG."""
    cached = getattr(cfg, "_capture", None)
    if cached is not None:
        return cached
    roots = [n.ast_node for n in cfg.nodes if n.ast_node is not None]
    managers = [
        n.ast_node
        for n in cfg.nodes
        if n.label in ("with", "__enter__") and isinstance(n.ast_node, ast.expr)
    ]

    def qualify(e: ast.expr) -> str | None:
        return ctx.resolver.qualified(ctx.scope, e)

    reason = direct_capture(roots, qualify, managers)
    if not reason and any(
        isinstance(sub, ast.Yield | ast.YieldFrom)
        for i in cfg.capture_nodes
        if (stmt := cfg.nodes[i].ast_node) is not None
        for sub in walk_all(stmt)
    ):
        reason = "it yields inside a CUDA-graph capture: code elsewhere runs under it"
    if not reason:
        starters = ctx.capture_functions
        via = referenced(roots, starters)
        if via:
            reason = f"it calls {starters[via]}"
    cfg._capture = reason
    return reason


def _node_index(cfg: CFG) -> tuple[list[_Mentions], dict[int, list[int]], str]:
    """What each node mentions, which node evaluates each call (by the call's id), and why the
    function cannot be analysed at all (or ""): one walk of the function, the same for every
    buffer in it, so computed once per CFG."""
    cached = getattr(cfg, "_index", None)
    if cached is not None:
        return cached
    out: list[_Mentions] = []
    call_nodes: dict[int, list[int]] = {}  # a finally body is built twice: two nodes
    unmodelled = ""
    for node in cfg.nodes:
        bare: set[str] = set()
        dotted: set[str] = set()
        attr_roots: set[str] = set()
        called: set[str] = set()
        stored_attrs: set[str] = set()
        stores_item = False
        mutated: set[str] = set()
        runs_code = node.kind in (Kind.CALL, Kind.EXIT) or node.iterates
        a = node.ast_node
        if isinstance(a, ast.AugAssign | ast.Assign | ast.AnnAssign):
            for t in a.targets if isinstance(a, ast.Assign) else [a.target]:
                if isinstance(a, ast.AugAssign) and not isinstance(t, ast.Starred):
                    mutated.add(_changed_object(t))  # `t += 1`: t's `__iadd__`
                if isinstance(t, ast.Subscript | ast.Attribute):
                    mutated.add(_changed_object(t.value))  # `t[0] = v`, `t.data = v`: t
        if a is not None and node.kind not in (Kind.JOIN, Kind.ENTRY, Kind.RAISE):
            under_attr: set[int] = set()
            names: list[ast.Name] = []
            for sub in walk([a]):
                if isinstance(sub, ast.Name):
                    names.append(sub)
                elif isinstance(sub, ast.Attribute):
                    if not isinstance(sub.ctx, ast.Load):
                        stored_attrs.add(sub.attr)
                    if sub.attr in _FRAME_NAMES:
                        bare.add(_ANY)
                    if isinstance(sub.value, ast.Name):
                        under_attr.add(id(sub.value))
                        dotted.add(f"{sub.value.id}.{sub.attr}")
                        attr_roots.add(sub.value.id)
                        if sub.attr in _REFLECTIVE_ATTRS:
                            bare.add(sub.value.id)  # the object is used whole
                elif isinstance(sub, ast.Subscript) and not isinstance(sub.ctx, ast.Load):
                    stores_item = True
                elif isinstance(sub, ast.Call):
                    runs_code = True
                    if node.kind not in (Kind.EXIT, Kind.CALL):
                        call_nodes.setdefault(id(sub), []).append(node.index)
                    f = sub.func
                    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                        called.add(f.value.id)
                elif (
                    isinstance(
                        sub, ast.Await | ast.Yield | ast.YieldFrom | ast.comprehension | ast.Starred
                    )
                    or (
                        isinstance(sub, ast.Compare)
                        and any(isinstance(op, ast.In | ast.NotIn) for op in sub.ops)
                    )
                    or (
                        isinstance(sub, ast.Assign)
                        and any(isinstance(t, ast.Tuple | ast.List) for t in sub.targets)
                    )
                ):
                    runs_code = True  # iterating may step a generator: its code runs
                elif isinstance(sub, ast.alias):
                    bare.add((sub.asname or sub.name).split(".")[0])
                elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    bare.add(sub.name)
                    runs_code = True
                if isinstance(sub, ast.ExceptHandler | ast.pattern):
                    for field_name in ("name", "rest"):
                        value = getattr(sub, field_name, None)
                        if isinstance(value, str):
                            bare.add(value)
            bare.update(n.id for n in names if id(n) not in under_attr)
            if isinstance(a, ast.stmt) and not isinstance(
                a, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign
            ):
                runs_code = True  # return/raise/import/def/...: keep them exact
        if node.loop is not None:
            # The exit of a loop that may cover a buffer it writes by index (loops.py).
            bare.update(
                t.value.id
                for t in walk_all(node.loop)
                if isinstance(t, ast.Subscript)
                and isinstance(t.ctx, ast.Store)
                and isinstance(t.value, ast.Name)
            )
        if bare & _FRAME_NAMES:
            bare.add(_ANY)
        out.append(
            _Mentions(
                frozenset(bare),
                frozenset(dotted),
                frozenset(attr_roots),
                frozenset(called),
                runs_code,
                frozenset(stored_attrs),
                stores_item,
                node_slots(a) if a is not None else frozenset(),
                frozenset(mutated),
            )
        )
    cfg._index = out, call_nodes, unmodelled
    return out, call_nodes, unmodelled


def _changed_object(expr: ast.expr) -> str:
    """The object a store changes in place, as a place key (`self.b1` for `self.b1[:k] = v`,
    so a store into a buffer held on `self` is known as one), else the name the access path
    starts from."""
    key = place_key(expr)
    if key is not None:
        return key
    while isinstance(expr, ast.Subscript | ast.Attribute | ast.Starred):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else ""


def _inert(m: _Mentions, state: State, recording: bool = True) -> bool:
    """True when evaluating the node provably leaves `state` unchanged and, when `recording`,
    records nothing. Code that runs while the buffer is reachable from it records a possible
    read, but the state after it is the same: in the fixpoint such a node is inert too."""
    if _ANY in m.bare or (recording and m.runs_code and state.escaped and not state.lost):
        return False
    if m.runs_code and state.hidden and not state.touched and not state.full:
        return False  # code not handed the buffer is assumed not to write it: say where
    if (m.stored_attrs or m.stores_item) and _may_repoint(m, state):
        return False
    if m.slots and touches_exposed(m.slots, state):
        return False
    plain, dotted, roots = state.footprint
    return (
        plain.isdisjoint(m.names)
        and dotted.isdisjoint(m.dotted)
        and roots.isdisjoint(m.bare)
        and roots.isdisjoint(m.called_roots)
    )


def _code_ran(state: State, m: _Mentions, ctx: Context) -> State:
    """Before and after a node that runs code: a volatile bound (scalars.volatile_bounds) may
    hold another value there, so the slices, views and shape sizes it bounds are forgotten."""
    if not (m.runs_code or m.mutated) or not ctx.volatile_bounds or not state.live:
        return state
    gone = ctx.volatile_bounds & state.footprint[0]
    if not gone:
        return state
    proven = ctx.int_names - ctx.volatile_bounds
    if not m.runs_code and not (m.mutated - proven - state.must_map().keys()):
        return state  # an int rebound, or a store into the buffer (or a view of it) itself

    def kept(names: frozenset[str]) -> bool:
        return names.isdisjoint(gone)

    must = {
        k: replace(v, region=None, elements=None)
        if (v.region and not kept(v.region.names))
        or (v.elements and v.elements.region and not kept(v.elements.region.names))
        else v
        for k, v in state.must
    }
    return evolve(
        state,
        regions=frozenset(r for r in state.regions if kept(r.names)),
        dims=tuple(d if kept(d[1]) else (None, frozenset()) for d in state.dims),
    ).with_must(must)


def _may_repoint(m: _Mentions, state: State) -> bool:
    """The node stores `.a` (or an item) through some object, and a tracked path ends in or
    passes through `.a` (or an item): that object may be the one the path goes through."""
    attrs, item = state.stored_through
    return (m.stores_item and item) or not m.stored_attrs.isdisjoint(attrs)


def analyse_buffer(cfg: CFG, ctx: Context) -> BufferOutcome:
    outcome = BufferOutcome()
    preds, order, position = _graph_orders(cfg)
    in_states: list[State | None] = [None] * len(cfg.nodes)
    out_states: list[State | None] = [None] * len(cfg.nodes)
    # What an exception raised inside a node hands its handlers: any prefix of the node may have
    # run (`(k := 3) + a[100]` rebinds k, then raises). Its input joined with the node run as
    # code that may not run: writes there prove nothing, rebindings may have happened.
    exc_states: list[State | None] = [None] * len(cfg.nodes)
    in_states[cfg.entry] = UNREACHED
    names, call_nodes, unmodelled = _node_index(cfg)
    if not unmodelled:
        capture = _capture_reason(cfg, ctx)
        if capture:
            unmodelled = f"a CUDA-graph capture may open or close here: {capture}"
    if unmodelled:
        outcome.gave_up = unmodelled
        return outcome
    alloc_nodes = set(call_nodes.get(id(ctx.alloc), ()))
    heap = list(range(len(order)))  # positions in reverse postorder: a min-heap as it stands
    pending = set(order)
    steps = 0
    while heap:
        steps += 1
        if steps > _MAX_ITERATIONS:
            outcome.gave_up = "the function is too large to analyse"
            return outcome
        idx = order[heapq.heappop(heap)]
        pending.discard(idx)
        state: State | None = UNREACHED if idx == cfg.entry else None
        for p, exceptional in preds[idx]:
            state = join(state, exc_states[p] if exceptional else out_states[p])
        if state is None:
            continue
        node = cfg.nodes[idx]
        # Identity first: along a chain of untouched nodes one State object is passed on, and
        # the generated __eq__ would build and compare two tuples of every field each time.
        previous = in_states[idx]
        in_changed = state is not previous and state != previous
        in_states[idx] = state
        if not in_changed and out_states[idx] is not None:
            continue  # evaluated before from this very state: the result cannot differ
        mentions = names[idx]
        ran = _code_ran(state, mentions, ctx)
        if not state.live and idx not in alloc_nodes:
            new_out = state
        elif idx not in alloc_nodes and _inert(mentions, ran, recording=False):
            new_out = ran  # the node cannot touch anything this state depends on
        else:
            new_out = Evaluator(ctx, ran, None, node).run()
            if new_out is not state and new_out == state:
                new_out = state  # pass the same object on: later comparisons are by identity
        new_out = _code_ran(new_out, mentions, ctx)
        targets: list[int] = []
        if node.exc_succ and in_changed:
            exc = ran
            if idx in alloc_nodes or (ran.live and not _inert(mentions, ran, recording=False)):
                partial = Evaluator(ctx, ran, None, node)
                partial.conditional = 1
                partial.raised = True
                exc = join(ran, partial.run()) or ran
                if partial.wrote_raising and exc.live and not exc.touched:
                    # The raise may come before or after the write: a read on this path is
                    # possible but not proven (a failing `fill_` is no evidence).
                    exc = evolve(exc, touched=True)
            exc = _code_ran(exc, mentions, ctx)
            if exc is not exc_states[idx] and exc != exc_states[idx]:
                exc_states[idx] = exc
                targets += node.exc_succ
        previous = out_states[idx]
        if new_out is not previous and new_out != previous:
            out_states[idx] = new_out
            targets += node.succ
        for t in targets:
            if t not in pending and t in position:
                pending.add(t)
                heapq.heappush(heap, position[t])
    outcome.exit_state = in_states[cfg.exit]
    # Final pass over the fixpoint: record what decides the verdict.
    rec = _Recorder(outcome)
    for idx in order:
        state = in_states[idx]
        if state is None:
            continue
        if state.live:
            outcome.reached = True
        state = _code_ran(state, names[idx], ctx)
        if idx in alloc_nodes or (state.live and not _inert(names[idx], state)):
            Evaluator(ctx, state, rec, cfg.nodes[idx]).run()
    return outcome


def _graph_orders(
    cfg: CFG,
) -> tuple[list[list[tuple[int, bool]]], list[int], dict[int, int]]:
    """Predecessors, reverse postorder and each node's place in it: the same for every buffer
    of one function, so computed once per CFG (a lifecycle program has thousands of nodes)."""
    cached = getattr(cfg, "_orders", None)
    if cached is None:
        order = _reverse_postorder(cfg)
        cached = (cfg.preds(), order, {n: i for i, n in enumerate(order)})
        cfg._orders = cached
    return cached


def _reverse_postorder(cfg: CFG) -> list[int]:
    seen: set[int] = set()
    order: list[int] = []
    stack: list[tuple[int, Iterator[int]]] = [(cfg.entry, iter([*cfg.nodes[cfg.entry].succ]))]
    seen.add(cfg.entry)
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                n = cfg.nodes[s]
                stack.append((s, iter([*n.succ, *n.exc_succ])))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order
