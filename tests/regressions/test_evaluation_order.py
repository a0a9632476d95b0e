"""Code that runs somewhere else than where it is written: closures, generators, class bodies, annotations, short-circuits, exceptions, frames.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "generator_expression_run_by_sum_before_the_write",
        why=(
            '`safe` would be wrong for `h.buf = torch.zeros(n)` at line 10: "written in full (line '
            '13) before any read". But the generator expression on line 11 reads `h.buf`, and `sum`'
            " runs it on line 12, before the write. A generator (or lambda) was taken to reach the "
            "buffer only if it named a bare alias (`buf`), not the root of a path that holds it "
            "(`h` of `h.buf`). What the zeros do: with the allocation poisoned, `total` changes."
        ),
        source=r"""
import torch


class Holder:
    pass


def f(n):
    h = Holder()
    h.buf = torch.zeros(n)  # <- site
    g = (h.buf[i] for i in range(n))
    total = sum(g)
    h.buf.fill_(1)
    return total, h.buf
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "generator_over_a_dict_entry_run_before_the_write",
        why=(
            '`safe` would be wrong for `d["k"] = torch.zeros(n)` at line 6: "written in full (line '
            '9) before any read". But the generator expression on line 7 reads `d["k"]`, and `sum` '
            "runs it on line 8, before the write: as in 016, only bare aliases were looked for. "
            "What the zeros do: with the allocation poisoned, `total` changes."
        ),
        source=r"""
import torch


def f(n):
    d = {}
    d["k"] = torch.zeros(n)  # <- site
    g = (d["k"][i] for i in range(n))
    total = sum(g)
    d["k"].fill_(1)
    return total, d["k"]
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "sort_key_closure_reads_the_buffer",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 5: "written in full (line 11)'
            ' before any read". But `sorted` calls the key function `key`, a closure over `buf`, on'
            " line 10, before the write. `buf` was known to escape into the closure, yet `sorted` "
            "counted as a built-in that only reads its arguments, not as code that may run what it "
            "is handed. What the zeros do: with the allocation poisoned, `order` changes."
        ),
        source=r"""
import torch


def f(n):
    buf = torch.zeros(n)  # <- site

    def key(i):
        return (buf[i].item() * i, -i)

    order = sorted(range(n), key=key)
    buf.fill_(1)
    return order, buf
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "nested_generator_function_stepped_before_the_write",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 10: "written in full (line '
            '14) before any read". But the loop on line 12 steps the generator `it`, made on line 9'
            " from the nested generator function `gen`, whose body reads `buf` at every step, "
            "before the write. Stepping an iterator was not taken as running code. (Same with `a, ="
            " it` and `[x for x in it]`.) What the zeros do: with the allocation poisoned, `total` "
            "changes."
        ),
        source=r"""
import torch


def f(n):
    def gen():
        for i in range(n):
            yield buf[i]

    it = gen()
    buf = torch.zeros(n)  # <- site
    total = 0
    for x in it:
        total = total + x
    buf.fill_(1)
    return total, buf
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "torch_cond_runs_the_branch_function",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 11: "written in full (line '
            '13) before any read". But `torch.cond` on line 12 runs the nested function `yes`, '
            "which reads `buf`, before the write: `torch.cond` counted as a torch function that "
            "only reads its tensor arguments, not as control flow that runs the functions it is "
            'handed (torch docs: "cond ... applies true_fn if pred is True"). A constant predicate '
            "lets eager torch.cond run without torch.compile."
        ),
        source=r"""
import torch


def f(n):
    def yes(x):
        return x + buf.sum()

    def no(x):
        return x

    buf = torch.zeros(n)  # <- site
    out = torch.cond(True, yes, no, (torch.ones(1),))
    buf.fill_(1)
    return out, buf
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "class_body_runs_at_the_class_statement",
        why=(
            "A class body runs where the `class` statement is, and it reads the buffer. `safe` "
            'would be wrong for the torch.zeros at line 5: "written in full (line 10)". Why: `class'
            " C: s = x.sum()` evaluates x.sum() at definition time, before x.fill_(1). The analysis"
            " evaluates only a class's decorators, bases and keywords, never its body."
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(8)  # <- site

    class C:
        s = x.sum()

    x.fill_(1)
    return C.s, x
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "annotation_of_a_nested_def_is_evaluated",
        why=(
            "Parameter annotations of a nested def are evaluated at definition time (Python < 3.14,"
            " no `from __future__ import annotations`), and this one reads the buffer. `safe` would"
            ' be wrong for the torch.zeros at line 5: "written in full (line 10)". Why: `def g(a: '
            "x.sum() = 0)` runs x.sum() when the def statement runs, before x.fill_(1); the value "
            "is kept in g.__annotations__."
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(8)  # <- site

    def g(a: x.sum() = 0):
        pass

    x.fill_(1)
    return g.__annotations__["a"], x
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "walrus_in_code_that_may_not_run",
        why=(
            "A walrus in code that may not run (`c and (x := inp)`) drops x as an alias of the "
            'buffer. `safe` would be wrong for the torch.zeros at line 5: "written in full (line '
            '9)". Why: with c false, x still is the buffer and x.sum() reads its zeros. '
            "_e_NamedExpr -> assign -> kill(x) runs even when self.conditional > 0 (only bind() "
            "checks it), so x.sum() is not seen as a read. Same with `(x := inp) if c else None` "
            "and `[(x := inp) for _ in range(n)]` with n == 0 (both checked); `assert (x := inp) is"
            " not None` under python -O likely too (untested)."
        ),
        source=r"""
import torch


def f(inp, c):
    x = torch.zeros(8)  # <- site
    y = x
    c and (x := inp)
    s = x.sum()
    y.fill_(1)
    return s, y
""",
        scenario=r"""
def run():
    inp = torch.ones(8)
    return f(inp, False)
""",
    ),
    Case(
        "dict_display_with_a_repeated_key",
        why=(
            'A dict display with a repeated key: the last value wins, but d["a"] is bound to the '
            'first. `safe` would be wrong for the torch.zeros at line 5: "written in full (line 7):'
            ' d[\'a\'].fill_(1)". Why: {"a": x, "a": other} holds `other` under "a"; d["a"].fill_(1) '
            "writes `other`, and x.sum() reads the zeros."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros(8)  # <- site
    d = {"a": x, "a": inp.clone()}
    d["a"].fill_(1)
    return x.sum()
""",
        scenario=r"""
def run():
    inp = torch.ones(8)
    return f(inp)
""",
    ),
    Case(
        "traceback_frame_locals_reach_the_buffer",
        why=(
            "An exception's traceback reaches this very frame's locals. `safe` would be wrong for "
            'the torch.zeros at line 5: "written in full (line 10)". Why: '
            'e.__traceback__.tb_frame.f_locals["x"] is the buffer; .sum() reads it before '
            "x.fill_(1). FRAME_INTROSPECTION / _FRAME_NAMES know "
            "locals/vars/eval/exec/globals/_getframe/currentframe, not the frame attributes "
            "(tb_frame, f_locals, f_back, gi_frame, ...), nor sys.exc_info()/inspect.trace(). "
            "(Contrived; low priority.)"
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(8)  # <- site
    try:
        raise ValueError
    except ValueError as e:
        s = e.__traceback__.tb_frame.f_locals["x"].sum()
    x.fill_(1)
    return s, x
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "with_of_two_items_raising_in_the_second",
        why=(
            '`safe` would be wrong for the torch.zeros at line 12 ("written in full (line 13): '
            'x[:]"). Why: `with A, B as t:` is `with A: with B as t:`. An exception raised while B '
            "is evaluated, by B.__enter__, or while the value is bound to the target `t`, goes to "
            "B.__exit__ (for the binding) and then to A.__exit__, which may swallow it; execution "
            "then resumes after the with statement. rules/cfg.Builder._with creates the "
            "EXPR/CALL/BIND nodes of every item *before* it pushes the `__exit__ (exception)` "
            "handler, so those nodes' exception edges go to the outer target (here, out of the "
            'function) and the path "item or binding raised, suppressed, body skipped" does not '
            "exist in the CFG. Here the target is `x[:]`: the binding is the full write. With `src`"
            " of the wrong shape it raises RuntimeError, which contextlib.suppress(RuntimeError) "
            "swallows, and x is returned unwritten. Same verdict for `with "
            "contextlib.suppress(TypeError) as x[:]: pass` (one item: suppress.__enter__ returns "
            "None, binding raises TypeError, and suppress's own __exit__ swallows it), and for "
            "`with suppress(E), nullcontext(x.copy_(src)): ...` (the write is in the second item's "
            "expression)."
        ),
        source=r"""
import contextlib

import torch


@contextlib.contextmanager
def staged(src):
    yield src * 2


def f(src):
    x = torch.zeros(4)  # <- site
    with contextlib.suppress(RuntimeError), staged(src) as x[:]:
        pass
    return x
""",
        scenario=r"""
def run():
    src = torch.ones(3)
    return f(src)
""",
    ),
    Case(
        "callee_reads_caller_locals_through_the_frame",
        why=(
            '`safe` would be wrong for the torch.zeros at line 11 ("written in full (line 13): '
            "x.copy_(src)\"). Why: a callee defined in this module reads its caller's locals through"
            " the frame (`sys._getframe(1).f_locals`; the same with "
            "`inspect.currentframe().f_back`, `inspect.stack()`, or a logging/debug helper doing "
            "so). Frame introspection is recognised only *inside* the analysed function "
            "(semantics.FRAME_INTROSPECTION, buffer_flow._FRAME_ATTRS, a nearby case); a call to a "
            "helper is an unknown call, and buffer_flow.unknown_call reports nothing for a buffer "
            'that has not escaped. The local x never escaped, but `debug_sum("x")` reads it before '
            "`x.copy_(src)`. The documented assumptions exempt only callables handed in by a "
            "caller; `debug_sum` is module code."
        ),
        source=r"""
import sys

import torch


def debug_sum(name):
    return sys._getframe(1).f_locals[name].sum()


def f(src):
    x = torch.zeros(4)  # <- site
    s = debug_sum("x")
    x.copy_(src)
    return x + s
""",
        scenario=r"""
def run():
    return f(torch.ones(4))
""",
    ),
    Case(
        "except_star_runs_every_matching_handler",
        why=(
            '`safe` would be wrong for the torch.zeros at line 8 ("written in full (line 15) before'
            ' any read"). Why: with `except*`, every handler whose type matches part of the '
            "ExceptionGroup runs, one after the other (PEP 654): here both do. analysis/cfg.py "
            "Builder._try treats TryStar exactly like Try: the handlers hang side by side off one "
            "`dispatch` node, as if exactly one of them ran, so no path has handler 1 followed by "
            "handler 2. Handler 1 makes `y` another name for the buffer; handler 2 then reads `y` "
            "(the zeros), which the analysis only ever sees as `other`. A fix: for TryStar, chain "
            "the handlers (each one's end, and its skip, flow into the next handler's type test), "
            "and let an exception raised inside a handler go on to the next handlers too."
        ),
        source=r"""
import torch


def f(n):
    other = torch.ones(n)
    y = other
    s = None
    buf = torch.zeros(n)  # <- site
    try:
        raise ExceptionGroup("g", [ValueError(), TypeError()])
    except* ValueError:
        y = buf
    except* TypeError:
        s = y.sum()
    buf.fill_(1)
    return s
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "chained_comparison_short_circuits",
        why=(
            '`safe` would be wrong for the torch.zeros at line 7 ("written in full (line 10)"). '
            "Why: a chained comparison `a < b < c` short-circuits: c is evaluated only when `a < b`"
            " holds. Here, with lo >= 0, `(x := buf)` never runs, x stays `other`, x.fill_(1) "
            "writes `other`, and buf.sum() reads the zeros. analysis/buffer_flow.py "
            "_Eval._e_Compare evaluates every comparator unconditionally, so the walrus counts as a"
            " definite rebinding (x must be buf) and the fill as a full write of buf. a nearby case"
            " fixed the same for `c and (x := ...)` (BoolOp) but not for the comparators after the "
            "first of a chain: evaluate `e.comparators[1:]` under `self.conditional += 1`."
        ),
        source=r"""
import torch


def f(n, lo):
    other = torch.ones(n)
    x = other
    buf = torch.zeros(n)  # <- site
    if lo < 0 < (x := buf).numel():
        pass
    x.fill_(1)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(3, 5)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
