"""Calls of functions of the scanned tree, applied through their summaries (analysis/summaries.py).

A summary describes the callee's effect on a fresh buffer that only its parameter reaches. It
is used at a call only when that holds for the caller's buffer too: exactly one argument (a
plain positional or keyword one, no `*`/`**` at the call) evaluates to the buffer or a view of
it, it binds a named parameter of the callee (not `*args`/`**kwargs`), and the buffer has not
escaped, been handed on or been parked in a container before the call (a callee could reach it
through a global, an attribute or a holder) nor while the arguments were evaluated (a holder of
it passed as another argument makes it lost). Otherwise the call is what any unknown call is.
"""

from __future__ import annotations

import ast

from zeroopt.analysis.dataflow.stores import Stores
from zeroopt.analysis.resolve import walk_all
from zeroopt.analysis.state import MAYBE, Ref
from zeroopt.analysis.summaries import READS, UNTOUCHED, WRITES, Callee, Summary
from zeroopt.analysis.summary_conditions import reached_with


class SummaryCalls(Stores):
    def _arguments_reaching(self, e: ast.Call) -> list[tuple[int | str, ast.expr, Ref]]:
        """(position or keyword, argument, reference) of each argument of `e` that reaches the
        buffer, every argument evaluated in order (no starred ones: the callers check)."""
        found: list[tuple[int | str, ast.expr, Ref]] = []
        for i, a in enumerate(e.args):
            ref = self.eval(a)
            if ref is not None:
                found.append((i, a, ref))
        for k in e.keywords:
            assert k.arg is not None
            ref = self.eval(k.value)
            if ref is not None:
                found.append((k.arg, k.value, ref))
        return found

    def _summary_call(self, e: ast.Call, qual: str | None) -> tuple[bool, Ref | None]:
        """(handled, result): False when the call is left to the generic handling untouched."""
        engine = self.ctx.summaries
        if engine is None or any(isinstance(a, ast.Starred) for a in e.args):
            return False, None
        if any(k.arg is None for k in e.keywords) or _reachable(self):
            return False, None
        callee = engine.callee(self.ctx.scope, e.func, qual)
        if callee is None:
            refused = engine.refused.get(id(e.func))
            if refused is not None and refused[0] is e.func:
                engine.obstacles[id(e)] = (e, refused[1])  # named in the evidence
            return self._unreplaced_read(e, qual), None
        found = self._arguments_reaching(e)
        param = callee.parameter(found[0][0]) if len(found) == 1 else None
        if param is None or _reachable(self):
            why = (
                "more than one argument reaches it"
                if len(found) > 1
                else "it reaches the callee otherwise than as one named parameter"
            )
            self._unknown_summary_call(e, callee, found, why if found else "")
            return True, None
        _, a, ref = found[0]
        summary = engine.summary(callee, param)
        return True, self._apply_summary(e, callee, param, summary, a, ref)

    def _unreplaced_read(self, e: ast.Call, qual: str | None) -> bool:
        """A call refused only because other code may replace its def (summaries.py
        `possible_callee`), whose def reads the argument before writing it: a definite read on
        the path where nothing replaces the def, with that assumption in the evidence (an
        `unsafe` only: a read never proves a `safe`). False, with nothing evaluated, otherwise:
        the call is then any unknown call."""
        engine = self.ctx.summaries
        assert engine is not None
        possible = engine.possible_callee(self.ctx.scope, e.func, qual)
        if possible is None or not possible[1] or self.st.full:
            return False
        callee, assumption = possible
        # The arguments that may reach the buffer, told from the syntax alone (nothing is
        # evaluated unless the call is taken): a name it may be reached through, or the
        # allocation itself written as an argument (the buffer is not live before it runs).
        roots = self._roots() if self.st.live else frozenset()
        alloc = self.ctx.alloc
        named = [
            key
            for key, a in [*enumerate(e.args), *((k.arg, k.value) for k in e.keywords)]
            if any(n is alloc or (isinstance(n, ast.Name) and n.id in roots) for n in walk_all(a))
        ]
        param = callee.parameter(named[0]) if len(named) == 1 and named[0] is not None else None
        if param is None:
            return False
        summary = engine.summary(callee, param)
        if summary.kind != READS:
            return False
        found = self._arguments_reaching(e)
        if len(found) != 1 or callee.parameter(found[0][0]) != param or _reachable(self):
            self._unknown_summary_call(e, callee, found, assumption)
            return True
        _, a, ref = found[0]
        self._apply_summary(e, callee, param, summary, a, ref, assumption)
        return True

    def _apply_summary(
        self,
        e: ast.Call,
        callee: Callee,
        param: str,
        summary: Summary,
        a: ast.expr,
        ref: Ref,
        assumption: str = "",
    ) -> Ref | None:
        name = callee.name
        basis = f"summary of `{name}` ({callee.where}, parameter `{param}`; {callee.why})"
        if assumption:
            basis = f"{basis[:-1]}; {assumption})"
        if summary.kind == WRITES:
            self.write(
                ref,
                a,
                full=True,
                region=None,
                how=f"`{self._src(e)[:60]}` writes it in full before any read on every path ({basis})",
            )
            return MAYBE if summary.returns else None
        if summary.kind == UNTOUCHED:
            if self.rec is not None and not self.st.full:
                self.rec.note(
                    self.rec.outcome.contracts,
                    e.lineno,
                    f"`{name}` neither reads, writes nor keeps it: only its metadata ({basis})",
                )
            return None
        why = summary.why
        if summary.kind == READS:
            fixed, names, assumes = condition_arguments(e, callee, summary, param)
            if fixed:
                why = (
                    f"it reads it first only where {fixed} allows (line {summary.line} of "
                    f"{callee.unit.path}), and this call fixes it"
                )
            else:
                if names and self.rec is not None:
                    self.rec.note(self.rec.outcome.conditioned, e.lineno, ",".join(sorted(names)))
                self.read(
                    ref,
                    a,
                    definite=True,
                    how=f"read by `{name}` (line {summary.line} of {callee.unit.path}) before it "
                    f"writes it: {summary.why} ({basis}){assumes}",
                )
        self._unknown_summary_call(e, callee, [("", a, ref)], why)
        return None

    def _unknown_summary_call(
        self, e: ast.Call, callee: Callee, found: list[tuple[int | str, ast.expr, Ref]], why: str
    ) -> None:
        """What any call of code the analysis cannot see does (calls.py's generic handling)."""
        name = callee.name
        for _, a, ref in found:
            self.handed_to(ref, a, name, why)
        self.unknown_call(e, f"call to `{name}`")

    def handed_to(self, ref: Ref, a: ast.expr, name: str, why: str = "") -> None:
        """The buffer passed to `name`, code not known to only write it: a possible read, and
        lost from then on."""
        self.read(
            ref,
            a,
            definite=False,
            how=f"passed to `{name}`, which is not known to only write it"
            + (f" ({why[:120]})" if why else ""),
        )
        self.lost(a, f"passed to `{name}`")


def _reachable(ev: SummaryCalls) -> bool:
    """The buffer may be reached by the callee other than through its arguments."""
    st = ev.st
    return st.live and bool(st.lost or st.escapes or st.hidden)


def condition_arguments(
    e: ast.Call, callee: Callee, summary: Summary, param: str
) -> tuple[str, set[str], str]:
    """For a READS summary whose reading path depends on other parameters
    (summary_conditions.py): "`flag`" for a parameter this call fixes (passes a literal or
    leaves to its default, or may pass through a starred argument) where the values fixed do not
    provably lead to the read at `line`, else ""; the names the arguments bound to the others
    mention; and the assumption the evidence names."""
    conditions, line = summary.conditions, summary.line
    if not conditions:
        return "", set(), ""
    bound: dict[str, ast.expr] = {}
    starred = any(isinstance(a, ast.Starred) for a in e.args) or any(
        k.arg is None for k in e.keywords
    )
    for i, arg in enumerate(e.args):
        key = callee.parameter(i)
        if key is not None and not isinstance(arg, ast.Starred):
            bound[key] = arg
    for k in e.keywords:
        key = callee.parameter(k.arg) if k.arg is not None else None
        if key is not None:
            bound[key] = k.value
    signature = callee.fn.args
    receivers = {p.arg for p in [*signature.posonlyargs, *signature.args][: callee.shift]}
    defaults = _defaults(callee.fn)
    names: set[str] = set()
    shown: list[str] = []
    values: dict[str, object] = {}
    first_fixed = ""
    for name in conditions:
        if name in receivers:
            value = e.func.value if isinstance(e.func, ast.Attribute) else None
            shown.append(f"`{name}`")
            if value is not None:
                names |= {n.id for n in walk_all(value) if isinstance(n, ast.Name)}
            continue
        passed: ast.expr | None = bound.get(name)
        if passed is None:
            passed = defaults.get(name)  # evaluated where the def ran: a literal only
            if starred or passed is None or not _literal(passed):
                return f"`{name}`", set(), ""
        if _literal(passed):
            first_fixed = first_fixed or f"`{name}`"
            if name in summary.handed:
                return first_fixed, set(), ""  # a callee's test of it: not evaluated here
            try:
                values[name] = ast.literal_eval(passed)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return first_fixed, set(), ""
            continue
        names |= {n.id for n in walk_all(passed) if isinstance(n, ast.Name)}
        shown.append(f"`{name}`")
    if values and not reached_with(callee.fn, param, line, values):
        return first_fixed, set(), ""
    fixed = ", ".join(f"`{k}` = {v!r}" for k, v in values.items())
    assumes = ""
    if shown:
        assumes = (
            f" (assuming {', '.join(shown)} as passed here may take a value under which "
            f"`{callee.name}` reaches that read: a test of {'it' if len(shown) == 1 else 'them'} "
            "is on the way)"
        )
    if fixed:
        assumes += f" (with {fixed} as passed here, the tests of it lead to that read)"
    return "", names, assumes


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """The default value of each parameter that has one."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    out = {
        p.arg: d
        for p, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True)
    }
    out.update(
        {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
    )
    return out


def _literal(e: ast.expr) -> bool:
    """A value the syntax fixes: a constant, a negated one, or a tuple, list, set or dict of
    those (`{}` passed is one value: no assumption that it may take another)."""
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub | ast.UAdd):
        return _literal(e.operand)
    if isinstance(e, ast.Tuple | ast.List | ast.Set):
        return all(_literal(x) for x in e.elts)
    if isinstance(e, ast.Dict):
        return all(k is not None and _literal(k) for k in e.keys) and all(
            _literal(v) for v in e.values
        )
    return False
