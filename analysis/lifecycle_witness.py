"""Witness programs: schedules the engine really runs, to show a read, never to prove.

A lifecycle program (lifecycle_program.py) joins every order the engine may run the methods in,
so a read before any write on one of them is hidden once another order (eager steps handing the
object to unknown code first) reaches the same point. But `unsafe` needs only one execution. A
model's `witness` names the cycles the engine runs straight after `init` and `graph_init` on its
ordinary start-up (`witness_at` cites the call site); each gives straight-line programs:

    <init methods>; <graph_init methods>; <the cycle's setup methods>; <one forward method>

with no loop and no other cycle. Only the forward is a choice (any one of them runs). The first
program keeps the setup's branches joined. The setup branches on the configuration (forward
mode, speculative settings): then one program follows each path through its `if` statements
(a test with the same text as one taken earlier on the path goes the same way; loops, `try` and
`with` bodies stay whole), so a view stored on one branch is still provably what the forward
reads. A read before any write on one of these programs is a read of unwritten memory on that
schedule, with that configuration: the caller reports `unsafe` naming the schedule and the path
as assumptions. Nothing else may be taken from a witness: it is one path, not all, so it never
makes anything `safe`.

Arguments the model says the engine passes as tensors there (`witness_tensors`) are named to the
dataflow: an index by one of them is a gather, a read of the indexed rows.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from zeroopt.analysis.cfg import CFG, Builder, InlineBlock
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, Context
from zeroopt.analysis.lifecycle_program import (
    RENAME_MARK,
    Program,
    _choice,
    _Inliner,
    class_methods,
)
from zeroopt.analysis.lifecycles import Lifecycle
from zeroopt.analysis.resolve import Resolver, Scope, walk
from zeroopt.analysis.scalars import int_names, volatile_bounds

# Paths through the setup of one witness cycle: beyond this many, only the joined setup is used.
MAX_PATHS = 24


@dataclass
class Witness:
    schedule: str  # "__init__ -> init_cuda_graph_state -> capture warm-up"
    program: Program
    # Renamed parameters the engine passes a tensor for (`req_pool_indices·capture_setup`).
    tensor_names: frozenset[str] = frozenset()
    path: str = ""  # "line 1353 if, line 1357 else"; "" for the joined setup


def build_witnesses(
    cls: ast.ClassDef,
    model: Lifecycle,
    resolver: Resolver,
    shadowed: frozenset[str] = frozenset(),
) -> list[Witness]:
    """The programs of each witness cycle of the model (none without `graph_init`): the joined
    setup first, then one per path through the setup's branches (none past MAX_PATHS)."""
    if not model.graph_init or not model.witness:
        return []
    methods = class_methods(cls)
    tensors = _tensor_names(model, methods)
    out: list[Witness] = []
    for cycle in model.cycles:
        if cycle.name not in model.witness:
            continue
        program = Program(body=[])
        inliner = _Inliner(methods, resolver, program, shadowed)
        steps: list[str] = []
        for phase, names in (("init", model.init), ("graphs enabled", model.graph_init)):
            for name in names:
                if name in methods:
                    program.body += inliner.inline(name, f"{phase}: {name}", None, None, ())
                    steps.append(name)
        prefix = list(program.body)
        setup: list[ast.stmt] = []
        for name in cycle.setup:
            if name in methods:
                setup += inliner.inline(name, f"{cycle.name}: {name}", None, None, ())
                steps.append(name)
        forward: list[ast.stmt] = []
        if cycle.runs_forward:
            forwards = [
                inliner.inline(f, f"{cycle.name}: {f}", None, None, ())
                for f in model.forward
                if f in methods
            ]
            forward = _choice(forwards, cls.lineno)
            steps.append("one forward")
        schedule = f"{' -> '.join(steps)} ({cycle.name}, once)"
        program.body = [*prefix, *setup, *forward]
        out.append(Witness(schedule, program, tensors))
        paths = list(itertools.islice(_paths(setup, {}), MAX_PATHS + 1))
        if len(paths) < 2 or len(paths) > MAX_PATHS:
            continue
        for body, taken, _ in paths:
            # The variants share the inlined statements: the CFG builder and the dataflow only
            # read them, and every program gets its own CFG and source memo.
            variant = Program(
                body=[*prefix, *body, *forward],
                copies=program.copies,
                escape_on_bind=program.escape_on_bind,
                methods=program.methods,
                params=program.params,
            )
            out.append(Witness(schedule, variant, tensors, ", ".join(taken)))
    return out


_Path = tuple[list[ast.stmt], list[str], dict[str, bool]]


def _paths(stmts: list[ast.stmt], seen: dict[str, bool]) -> Iterator[_Path]:
    """Every path through `stmts`: the statements run, the branches taken, and the tests
    decided so far (by source text)."""
    if not stmts:
        yield [], [], seen
        return
    head, rest = stmts[0], stmts[1:]
    heads: Iterator[_Path]
    if isinstance(head, ast.If):
        heads = _branches(head, seen)
    elif isinstance(head, InlineBlock):
        heads = (
            ([InlineBlock(body, head.label, head.lineno)], taken, after)
            for body, taken, after in _paths(head.body, seen)
        )
    else:
        heads = iter([([head], [], seen)])
    for first, taken, after in heads:
        for more, taken_more, final in _paths(rest, after):
            yield [*first, *more], [*taken, *taken_more], final


def _branches(stmt: ast.If, seen: dict[str, bool]) -> Iterator[_Path]:
    key = ast.dump(stmt.test)
    test = ast.Expr(value=stmt.test, lineno=stmt.lineno, col_offset=stmt.col_offset)
    for taken in (True, False) if key not in seen else (seen[key],):
        branch = stmt.body if taken else stmt.orelse
        label = f"line {stmt.lineno} {'if' if taken else 'else'}"
        for body, more, after in _paths(branch, {**seen, key: taken}):
            yield [test, *body], [label, *more], after


def _tensor_names(
    model: Lifecycle, methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> frozenset[str]:
    """The renamed parameters of `witness_tensors`, where the method never rebinds them (nor
    defines a nested scope that might)."""
    out: set[str] = set()
    for method, position in model.witness_tensors:
        fn = methods.get(method)
        if fn is None:
            continue
        params = [*fn.args.posonlyargs, *fn.args.args][1:]
        if position >= len(params):
            continue
        name = params[position].arg
        rebound = any(
            (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
            or (isinstance(n, ast.Global | ast.Nonlocal) and name in n.names)
            or (isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == name)
            or isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
            for n in walk(fn.body)
        )
        if not rebound:
            out.add(f"{name}{RENAME_MARK}{method}")
    return frozenset(out)


# The CFG, the names slices may be bounded by (of which the volatile ones: scalars.py), a memo.
Compiled = tuple[CFG, frozenset[str], frozenset[str], dict[int, tuple[ast.AST, str]]]


def compile_program(
    program: Program, resolver: Resolver, scope: Scope, volatile: bool = True
) -> Compiled:
    """`volatile`: also bound slices by names that are not proven ints (scalars.py); not on
    witness schedules, which only ever show a read (slices that prove more writes only hide
    one)."""
    cfg = Builder(lambda e: resolver.qualified(scope, e)).build(program.body)
    qualify = partial(resolver.qualified, scope)
    unstable = set(program.escape_on_bind)
    ints = int_names(program.body, [], unstable, qualify)
    if not volatile:
        return cfg, ints, frozenset(), {}
    volatile_names = volatile_bounds(program.body, [], unstable, ints, qualify)
    return cfg, ints | volatile_names, volatile_names, {}


def program_context(
    program: Program,
    compiled: Compiled,
    alloc: ast.Call,
    contiguous: bool,
    resolver: Resolver,
    scope: Scope,
    source_lines: list[str],
    stored: frozenset[str],
    **more: Any,
) -> Context:
    """The dataflow context of a compiled program of a class's methods (the lifecycle models and
    the any-order pass): `self` is the object the methods share, its stored callables are its
    own, and the program's end is no function exit. `more` holds the caller's own settings
    (contracts, kernels, frames read, the objects a maker returns, ...)."""
    cfg, ints, volatile, src_memo = compiled
    return Context(
        alloc=alloc,
        resolver=resolver,
        scope=scope,
        source_lines=source_lines,
        escape_on_bind=frozenset(program.escape_on_bind),
        contiguous=contiguous,
        capture_nodes=frozenset(cfg.capture_nodes),
        private_roots=frozenset({"self"}),
        check_exit=False,
        self_callables=stored,
        int_names=ints,
        volatile_bounds=volatile,
        src_memo=src_memo,  # one per program: its nodes are its own
        **more,
    )


def shown_unsafe(outcome: BufferOutcome) -> bool:
    """A read before any write was seen (what rules/verdict.py's `decide` calls `unsafe`)."""
    return (
        not outcome.gave_up
        and outcome.reached
        and any(i.severity == UNSAFE for i in outcome.issues)
    )


def decisive(outcome: BufferOutcome) -> bool:
    """`safe` or `unsafe` already: a witness could add nothing."""
    return shown_unsafe(outcome) or (not outcome.gave_up and outcome.reached and not outcome.issues)
