"""Calls `<receiver>.f(buf)` on a receiver of unknown type, applied through the summaries of every
def named `f` in the tree (analysis/dispatch.py says which and under what assumption).

The call-site conditions are those of summary_calls.py (one argument reaches the buffer, as one
named parameter of every candidate, and nothing else can reach it). The candidates' summaries
for the parameter the argument binds decide only when they agree: all `writes` is a full write,
all `untouched` is neutral, all `reads` is a definite read; anything else is an unknown call whose
evidence names the obstacle.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.dataflow.summary_calls import SummaryCalls, _reachable, condition_arguments
from zeroopt.analysis.dispatch import dispatch_callees
from zeroopt.analysis.state import MAYBE, Ref
from zeroopt.analysis.summaries import READS, UNTOUCHED, WRITES, Callee, Summary


def binds_as_function(fn: ast.FunctionDef | ast.AsyncFunctionDef, e: ast.Call) -> bool:
    """Whether `e`'s arguments (no `*`/`**`) bind to `fn`'s parameters with nothing before them,
    as when the method is reached through its class: then a receiver that is a class runs it
    without a TypeError, each argument bound to the parameter before the one it would bind."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    if len(e.args) > len(positional) and a.vararg is None:
        return False
    filled = {p.arg for p in positional[: len(e.args)]}
    by_name = {p.arg for p in [*a.args, *a.kwonlyargs]}
    for k in e.keywords:
        if k.arg is None:
            return True  # not reached: `**` calls are not dispatched
        if k.arg in filled or (k.arg not in by_name and a.kwarg is None):
            return False
        filled.add(k.arg)
    defaults = positional[len(positional) - len(a.defaults) :] if a.defaults else []
    required = [p.arg for p in positional if p not in defaults]
    required += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None]
    return all(r in filled for r in required)


def _classmethod(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Bound to the class however it is reached."""
    return fn.name in ("__new__", "__init_subclass__", "__class_getitem__") or any(
        ast.unparse(d) == "classmethod" for d in fn.decorator_list
    )


class DispatchCalls(SummaryCalls):
    def _tree_call(self, e: ast.Call, qual: str | None) -> tuple[bool, Ref | None]:
        """A def of the scanned tree: resolved by name and module, or as `self.m`; else, for a
        method call on a receiver of unknown type, every def of that name."""
        handled, result = self._summary_call(e, qual)
        if handled:
            return handled, result
        return self._dispatch_call(e, qual)

    def obstacle(self, e: ast.Call) -> str:
        """Why the call's callee was not resolved by name ("" if not tried)."""
        memo = self.ctx.summaries
        if memo is None:
            return ""
        hit = memo.obstacles.get(id(e))
        return hit[1] if hit is not None and hit[0] is e else ""

    def _dispatch_call(self, e: ast.Call, qual: str | None) -> tuple[bool, Ref | None]:
        engine = self.ctx.summaries
        if engine is None or any(isinstance(a, ast.Starred) for a in e.args):
            return False, None
        if any(k.arg is None for k in e.keywords) or _reachable(self):
            return False, None
        resolved = dispatch_callees(engine, self.ctx.scope, e.func, qual)
        if resolved is None:
            return False, None
        callees, why = resolved
        assert isinstance(e.func, ast.Attribute)
        name = f"{self._src(e.func.value)[:40]}.{e.func.attr}"
        if why:
            engine.obstacles[id(e)] = (e, why)
            return False, None
        for c in callees:
            if c.shift and not _classmethod(c.fn) and binds_as_function(c.fn, e):
                # `Cls.m(buf, x)` binds `buf` to `self`: through a receiver that is the class
                # itself, the call still binds, one place earlier, and runs without an error.
                why = (
                    f"the receiver may be a class: {c.name} accepts these arguments one place "
                    f"earlier too ({c.where})"
                )
                engine.obstacles[id(e)] = (e, why)
                return False, None
        found = self._arguments_reaching(e)
        if len(found) != 1 or _reachable(self):
            why = "more than one argument reaches it" if len(found) > 1 else ""
            self._unknown_dispatch(e, name, found, why)
            return True, None
        key, a, ref = found[0]
        params = [c.parameter(key) for c in callees]
        missing = [c for c, p in zip(callees, params, strict=True) if p is None]
        if missing:
            why = f"{missing[0].name} ({missing[0].where}) has no named parameter it binds"
            self._unknown_dispatch(e, name, found, why)
            return True, None
        pairs = [(c, p) for c, p in zip(callees, params, strict=True) if p is not None]
        summaries = [(c, p, engine.summary(c, p)) for c, p in pairs]
        return True, self._combine(e, name, summaries, a, ref)

    def _combine(
        self,
        e: ast.Call,
        name: str,
        summaries: list[tuple[Callee, str, Summary]],
        a: ast.expr,
        ref: Ref,
    ) -> Ref | None:
        attr = name.rpartition(".")[2]
        kinds = {s.kind for _, _, s in summaries}
        listed = ", ".join(f"{c.name} ({c.where}, parameter `{p}`)" for c, p, _ in summaries)
        basis = (
            f"every def named `{attr}` in the tree: {listed}; closed world: every method that "
            "can run is defined in the scanned tree or is a listed library attribute, and the "
            "receiver is an instance"
        )
        if kinds == {WRITES}:
            self.write(
                ref,
                a,
                full=True,
                region=None,
                how=f"`{self._src(e)[:60]}` writes it in full before any read on every path ({basis})",
            )
            return MAYBE if any(s.returns for _, _, s in summaries) else None
        if kinds == {UNTOUCHED}:
            if self.rec is not None and not self.st.full:
                self.rec.note(
                    self.rec.outcome.contracts,
                    e.lineno,
                    f"`{name}` neither reads, writes nor keeps it: only its metadata ({basis})",
                )
            return None
        conditioned = [condition_arguments(e, c, s, p) for c, p, s in summaries]
        fixed = next((f for f, _, _ in conditioned if f), "")
        if kinds == {READS} and not fixed:
            first = "; ".join(f"{c.name} line {s.line}: {s.why[:80]}" for c, _, s in summaries)
            names = {n for _, found, _ in conditioned for n in found}
            if names and self.rec is not None:
                self.rec.note(self.rec.outcome.conditioned, e.lineno, ",".join(sorted(names)))
            assumes = next((text for _, _, text in conditioned if text), "")
            self.read(
                ref,
                a,
                definite=True,
                how=f"read by every def named `{attr}` in the tree before it writes it: {first} "
                f"({basis}){assumes}",
            )
            self._unknown_dispatch(e, name, [("", a, ref)], "")
            return None
        if kinds == {READS}:
            why = f"each reads it first only where {fixed} allows, and this call fixes it"
            self._unknown_dispatch(e, name, [("", a, ref)], why)
            return None
        why = "defs named `{}` disagree: {}".format(
            attr,
            ", ".join(
                f"{c.name} {s.kind}" + (f" ({s.why[:60]})" if s.why and s.kind != READS else "")
                for c, _, s in summaries
            ),
        )
        self._unknown_dispatch(e, name, [("", a, ref)], why)
        return None

    def _unknown_dispatch(
        self, e: ast.Call, name: str, found: list[tuple[int | str, ast.expr, Ref]], why: str
    ) -> None:
        for _, a, ref in found:
            self.handed_to(ref, a, name, why)
        self.unknown_call(e, f"call to `{name}`")
