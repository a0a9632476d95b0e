"""Findings for buffers judged under any order of their class's methods
(analysis/lifecycle_anyorder.py): the verdict, the method that blocks or reads, and every
assumption that decided it, in the message and the evidence."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Sequence
from dataclasses import replace

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.analysis.lifecycle_anyorder import AnyOrderOutcome, analyse_any_order
from zeroopt.analysis.lifecycle_program import class_methods
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES
from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.options import AnalysisOptions, Contract
from zeroopt.analysis.project import ProjectView
from zeroopt.analysis.resolve import Resolver
from zeroopt.rules import Rule, rule_for_call
from zeroopt.rules.decision import decide
from zeroopt.scan.findings import Evidence, Finding, LifecycleBuffer, LifecycleReport, Verdict

MakeFinding = Callable[[Allocation, str, Verdict, BufferOutcome, list[str], str], Finding]

CLOSED_WORLD = (
    "closed world: every `.{attr}` and every string naming `{attr}` in the scanned tree is "
    "`self.{attr}` in a method of {cls}, or `.{attr}` on an object of an unrelated class "
    "(checked, with the attributes that may hold it); no code of the tree reaches attributes of "
    "a {cls} by a computed name, `__dict__`, copying or pickling (checked: no such use on a "
    "receiver that may hold one); a method runs with a `self` of its class unless the text "
    "takes it from a class (assumed); calls not handed the buffer do not write it (assumed)"
)


def any_order_pass(
    tree: ast.Module,
    resolver: Resolver,
    sites: Sequence[Allocation],
    by_site: dict[int, Finding],
    decided: dict[int, Verdict],
    contracts: dict[str, Contract],
    lines: list[str],
    path: str,
    options: AnalysisOptions,
    frames_read: bool,
    world: ClassWorld,
    real_path: str | None,
    project: ProjectView | None,
    make: MakeFinding,
) -> list[LifecycleReport]:
    """Re-judge `unproven` allocations of `__init__` stored on `self` in classes no lifecycle
    model matches, zeros and empties alike (as the lifecycle pass does)."""
    models = (*options.lifecycles, *BUILTIN_LIFECYCLES)

    def rule_of(site: Allocation) -> type[Rule] | None:
        return rule_for_call(site.name)

    def wanted(site: Allocation) -> bool:
        return decided.get(id(site.call)) is Verdict.UNPROVEN and rule_of(site) is not None

    def modelled(cls: ast.ClassDef) -> bool:
        methods = set(class_methods(cls))
        return any(m.matches(methods) for m in models)

    def certain(site: Allocation) -> bool:
        rule = rule_of(site)
        return rule is not None and rule.certain_reads_only

    own = {path}
    if real_path is not None:
        own |= {real_path, os.path.realpath(real_path)}
    outcomes = analyse_any_order(
        tree, resolver, sites, wanted, modelled, contracts, lines, tuple(options.kernels),
        frames_read, world, own, project.deps if project is not None else None, certain,
        options.callers_closed,
    )  # fmt: skip
    rows: dict[int, list[tuple[AnyOrderOutcome, Finding]]] = {}
    for ao in outcomes:
        key = id(ao.site.call)
        old = by_site.get(key)
        rule = rule_of(ao.site)
        assert rule is not None
        if ao.outcome is None:
            if old is not None:
                by_site[key] = replace(
                    old, message=f"{old.message} (any order of methods: {ao.skipped})"
                )
            continue
        verdict = rule.report(ao.site.name, ao.outcome, options.judge_empties)
        if verdict is None:
            continue
        new = make(ao.site, rule.code, verdict, ao.outcome, lines, path)
        line = ao.site.call.lineno
        notes = [Evidence(line, "assumption", a) for a in ao.assumptions]
        notes.append(
            Evidence(line, "assumption", CLOSED_WORLD.format(attr=_attr(new), cls=ao.cls.name))
        )
        if verdict is not Verdict.UNSAFE:
            notes.append(
                Evidence(
                    line,
                    "assumption",
                    f"after `{ao.cls.name}.__init__` any method of {ao.cls.name} may run, any "
                    "number of times, in any order",
                )
            )
        message = new.message
        if verdict is Verdict.UNPROVEN:
            blocking = [i for i in ao.outcome.issues if i.line]
            where = _method_of(ao.cls, blocking[0].line) if blocking else ""
            if where:
                message = f"{message} (in method `{where}`)"
        by_site[key] = replace(new, message=message).explained(
            f"any order of {ao.cls.name}'s methods after __init__", notes
        )
        decided[key] = decide(ao.outcome)
        rows.setdefault(id(ao.cls), []).append((ao, by_site[key]))
    reports = []
    for members in rows.values():
        cls = members[0][0].cls
        buffers = tuple(
            LifecycleBuffer(target=f.target, line=f.line, verdict=f.verdict, written=(), read=())
            for _, f in members
        )
        reports.append(LifecycleReport(path, cls.name, cls.lineno, "any-order", buffers, ()))
    return reports


def _attr(finding: Finding) -> str:
    target = finding.target
    return target.split(".", 1)[1].split("[", 1)[0] if target.startswith("self.") else target


def _method_of(cls: ast.ClassDef, line: int) -> str:
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and (
            stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
        ):
            return stmt.name
    return ""
