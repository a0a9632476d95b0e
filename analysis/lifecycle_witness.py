"""Witness programs: one schedule the engine really runs, to show a read, never to prove.

A lifecycle program (lifecycle_program.py) joins every order the engine may run the methods in,
so a read before any write on one of them is hidden once another order (eager steps handing the
object to unknown code first) reaches the same point. But `unsafe` needs only one execution. A
model's `witness` names the cycles the engine runs straight after `init` and `graph_init` on its
ordinary start-up (`witness_at` cites the call site); each gives one straight-line program:

    <init methods>; <graph_init methods>; <the cycle's setup methods>; <one forward method>

with no loop and no other cycle. Only the forward is a choice (any one of them runs). A read
before any write on that program is a read of unwritten memory on that schedule, so the caller
may report `unsafe` with the schedule named as an assumption. Nothing else may be taken from a
witness: it is one path, not all, so it never makes anything `safe`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from zeroopt.analysis.cfg import CFG, Builder
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome
from zeroopt.analysis.lifecycle_program import (
    Program,
    _choice,
    _Inliner,
    class_methods,
)
from zeroopt.analysis.lifecycles import Lifecycle
from zeroopt.analysis.resolve import Resolver, Scope
from zeroopt.analysis.scalars import int_names


@dataclass
class Witness:
    schedule: str  # "__init__ -> init_cuda_graph_state -> capture warm-up"
    program: Program


def build_witnesses(
    cls: ast.ClassDef,
    model: Lifecycle,
    resolver: Resolver,
    shadowed: frozenset[str] = frozenset(),
) -> list[Witness]:
    """One straight-line program per witness cycle of the model (none without `graph_init`)."""
    if not model.graph_init or not model.witness:
        return []
    methods = class_methods(cls)
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
        for name in cycle.setup:
            if name in methods:
                program.body += inliner.inline(name, f"{cycle.name}: {name}", None, None, ())
                steps.append(name)
        if cycle.runs_forward:
            forwards = [
                inliner.inline(f, f"{cycle.name}: {f}", None, None, ())
                for f in model.forward
                if f in methods
            ]
            program.body += _choice(forwards, cls.lineno)
            steps.append("one forward")
        out.append(Witness(f"{' -> '.join(steps)} ({cycle.name}, once)", program))
    return out


Compiled = tuple[CFG, frozenset[str], dict[int, tuple[ast.AST, str]]]


def compile_program(program: Program, resolver: Resolver, scope: Scope) -> Compiled:
    cfg = Builder(lambda e: resolver.qualified(scope, e)).build(program.body)
    ints = int_names(
        program.body,
        [],
        set(program.escape_on_bind),
        lambda e: resolver.qualified(scope, e),
    )
    return cfg, ints, {}


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
