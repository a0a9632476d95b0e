"""Function summaries (analysis/summaries.py): a call of a def of the scanned tree applied as what
the def does to its parameter, and every condition under which it must not be.

"fix" cases are calls a summary proves (the site is `safe` and the rewritten program behaves the
same); the others are programs whose allocation is read unwritten on some run: the summary must
not make them `safe`, and a read-first summary must make them `unsafe` where the read is certain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    AnalysisOptions,
    Case,
    Verdict,
    check_case,
    check_never_read,
    params,
)

UNSAFE_ONLY = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "callee_writes_in_full",
        kind="fix",
        why="`fill` writes its parameter in full before reading it on every path: the call is a "
        "full write of the buffer, so zeros -> empty keeps the result.",
        source=r"""
import torch


def fill(p, value):
    p.fill_(value)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf, 2.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "callee_touches_only_metadata",
        kind="fix",
        why="`rows` reads only the shape of its parameter: the call neither reads nor writes the "
        "buffer, and the full write after it decides.",
        source=r"""
import torch


def rows(p):
    return p.shape[0] * 2


def f(n):
    buf = torch.zeros(n)  # <- site
    k = rows(buf)
    buf.fill_(k)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "callee_makes_a_new_tensor_like_it",
        kind="fix",
        why="`scratch` calls `p.new_zeros(...)` and `p.new_full(...)`, which take only dtype and "
        "device from `p`: the call neither reads nor writes the buffer, and the full write "
        "after it decides.",
        source=r"""
import torch


def scratch(p, k):
    a = p.new_zeros(k, 2)
    b = p.new_full((k,), 3.0)
    return a.sum() + b.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    s = scratch(buf, 3)
    buf.fill_(s)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "new_tensor_reads_its_data_argument",
        why="`p.new_tensor(q)` copies `q`: the receiver lends only dtype and device, the argument is "
        "read, so the zeros of `q` reach the result.",
        source=r"""
import torch


def f(n):
    q = torch.zeros(n)  # <- site
    p = torch.ones(1)
    return p.new_tensor(q).sum() + 1.0
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "method_of_the_class_writes_in_full",
        kind="fix",
        why="`self._fill(buf)` runs Model._fill (no class derives from Model): a full write.",
        source=r"""
import torch


class Model:
    def _fill(self, p):
        p.copy_(torch.arange(p.numel(), dtype=p.dtype))

    def forward(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf * 2
""",
        scenario=r"""
def run():
    return Model().forward(5)
""",
    ),
    Case(
        "callee_writes_in_part",
        why="`head` writes only the first two elements: the rest of the buffer is read unwritten "
        "by the caller's sum.",
        source=r"""
import torch


def head(p):
    p[:2].fill_(1.0)


def f(n):
    buf = torch.zeros(n)  # <- site
    head(buf)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(6)
""",
    ),
    Case(
        "callee_reads_first",
        expect=UNSAFE_ONLY,
        why="`total` sums its parameter before anything writes it: the call is a definite read "
        "of the unwritten buffer (`unsafe`).",
        source=r"""
import torch


def total(p):
    return p.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    s = total(buf)
    buf.fill_(1.0)
    return buf + s
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "callee_raises_after_a_partial_write",
        why="`fill` writes two elements, then raises before the full write: on the exception edge "
        "of the call nothing is proven, and the handler's caller reads the rest.",
        source=r"""
import torch


def fill(p, n):
    p[:2].fill_(1.0)
    if n > 2:
        raise ValueError("too long")
    p.fill_(1.0)


def f(n):
    buf = torch.zeros(n)  # <- site
    try:
        fill(buf, n)
    except ValueError:
        pass
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(5)
""",
    ),
    Case(
        "buffer_reaches_two_parameters",
        why="`fill(p, q)` reads q, then writes p in full: alone, p's summary is a full write, but "
        "the caller passes the buffer as both, so the read of q reads it unwritten.",
        source=r"""
import torch


def fill(p, q):
    s = q.sum()
    p.fill_(1.0)
    p.add_(s)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf, buf[:2])
    return buf
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "callee_keeps_the_parameter_in_a_global",
        why="`keep` stores its parameter in a global that `peek` reads before the caller writes "
        "the buffer: the store makes the call unknown.",
        source=r"""
import torch

SAVED = None


def keep(p):
    global SAVED
    SAVED = p


def peek():
    return SAVED.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    keep(buf)
    s = peek()
    buf.fill_(1.0)
    return buf + s
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "decorated_callee",
        why="`checked` wraps `fill` in a function that reads its argument first: a decorator that "
        "is not a known harmless one leaves the call unknown.",
        source=r"""
import torch


def checked(fn):
    def wrapper(p):
        s = p.sum()
        fn(p)
        p.add_(s)

    return wrapper


@checked
def fill(p):
    p.fill_(1.0)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "generator_callee",
        why="Calling a generator function runs none of its body: `fill(buf)` writes nothing.",
        source=r"""
import torch


def fill(p):
    p.fill_(1.0)
    yield p


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "recursive_callee",
        why="`fill` calls itself: the recursion is not summarised, and its base case writes only "
        "one element.",
        source=r"""
import torch


def fill(p, k):
    if k > 0:
        fill(p, k - 1)
    else:
        p[:1].fill_(1.0)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf, 3)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "method_overridden_by_a_subclass",
        why="`self._fill` in Base.forward runs Partial._fill for a Partial: the subclass writes "
        "one element only, so Base._fill's full write proves nothing.",
        source=r"""
import torch


class Base:
    def _fill(self, p):
        p.fill_(1.0)

    def forward(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf.sum()


class Partial(Base):
    def _fill(self, p):
        p[:1].fill_(1.0)
""",
        scenario=r"""
def run():
    return Partial().forward(4)
""",
    ),
    Case(
        "subclass_outside_the_scanned_code",
        options=AnalysisOptions(closed_world=False),
        why="The subclass that overrides `_fill` is defined outside the analysed program (here, "
        "in the scenario): only the closed-world assumption would resolve `self._fill` to "
        "Base._fill, and with `closed-world = false` the call stays unknown.",
        source=r"""
import torch


class Base:
    def _fill(self, p):
        p.fill_(1.0)

    def forward(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf.sum()
""",
        scenario=r"""
class Outside(Base):
    def _fill(self, p):
        p[:1].fill_(1.0)


def run():
    return Outside().forward(4)
""",
    ),
    Case(
        "method_shadowed_by_a_computed_setattr",
        why="`setattr(self, name, ...)` over names split from a string gives the instance an "
        "attribute `_fill` that shadows the method and writes nothing; no text spells `_fill` as "
        "an attribute store.",
        source=r"""
import torch


class Box:
    def __init__(self, names):
        for name in names.split():
            setattr(self, name, lambda t: None)

    def _fill(self, t):
        t.fill_(1.0)

    def f(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf
""",
        scenario='def run():\n    return Box("other _fill").f(4)\n',
    ),
    Case(
        "method_shadowed_through_dict_update",
        why="`self.__dict__.update(kw)` with keyword arguments spelled by a joined string "
        "(`'_fi' 'll'`) binds an instance attribute `_fill` that shadows the method.",
        source=r"""
import torch


class Box:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def _fill(self, t):
        t.fill_(1.0)

    def f(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf


def make():
    return Box(**{"_fi" "ll": lambda t: None})
""",
        scenario="def run():\n    return make().f(4)\n",
    ),
    Case(
        "method_beside_a_literal_setattr_of_another_name",
        kind="fix",
        why="`setattr(self, 'scale', 2.0)` binds one attribute, named in full: `self._fill` is "
        "still the class's def, which writes the buffer in full.",
        source=r"""
import torch


class Box:
    def __init__(self):
        setattr(self, "scale", 2.0)

    def _fill(self, t):
        t.fill_(self.scale)

    def f(self, n):
        buf = torch.zeros(n)  # <- site
        self._fill(buf)
        return buf
""",
        scenario="def run():\n    return Box().f(4)\n",
    ),
    Case(
        "function_replaced_through_its_package",
        why="`rpkg.g` is re-exported from `rpkg.impl`, whose `g` writes in full; importing the "
        "package runs `rpkg/patch.py`, which assigns `rpkg.g = lambda x: x`: the call runs "
        "the lambda.",
        source=r"""
import torch

import rpkg


def f(n):
    buf = torch.zeros(n)  # <- site
    rpkg.g(buf)
    return buf
""",
        modules=(
            ("rpkg/__init__", "from rpkg.impl import g\nimport rpkg.patch\n"),
            ("rpkg/impl", "def g(x):\n    x.fill_(1.0)\n"),
            ("rpkg/patch", "import rpkg\n\nrpkg.g = lambda x: x\n"),
        ),
        scenario="def run():\n    return f(4)\n",
    ),
    Case(
        "same_module_function_replaced_from_another_module",
        why="Another module of the tree assigns the analysed module's `fill` through "
        "`sys.modules[...]`: the name's only def in its module is not what `fill(buf)` runs.",
        source=r"""
import torch

import smp_patch


def fill(x):
    x.fill_(1.0)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf
""",
        modules=(
            (
                "smp_patch",
                "import sys\n\n\ndef patch():\n"
                "    sys.modules['same_module_function_replaced_from_another_module'].fill = "
                "lambda x: x\n",
            ),
        ),
        scenario="def run():\n    smp_patch.patch()\n    return f(4)\n",
    ),
    Case(
        "function_beside_a_store_of_another_attribute",
        kind="fix",
        why="Another module assigns `cfg.scale`, not `fill`: `fill` is still the def that runs, "
        "and it writes the buffer in full.",
        source=r"""
import torch

import sba_cfg


def fill(x):
    x.fill_(sba_cfg.cfg.scale)


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf
""",
        modules=(
            (
                "sba_cfg",
                "import types\n\ncfg = types.SimpleNamespace(scale=1.0)\ncfg.scale = 2.0\n",
            ),
        ),
        scenario="def run():\n    return f(4)\n",
    ),
]

CASES += [
    Case(
        "callee_reads_under_a_flag_the_caller_passes_on",
        expect=UNSAFE_ONLY,
        why="`h` reads its parameter first only where `flag` is true; the caller passes its own "
        "`flag`, which may be true (the evidence names that assumption), and the run passes True.",
        source=r"""
import torch


def h(x, flag):
    if flag:
        return x.sum()
    x.fill_(0.0)
    return x.sum()


def f(n, flag):
    buf = torch.zeros(n)  # <- site
    return h(buf, flag)
""",
        scenario=r"""
def run():
    return f(4, True)
""",
    ),
    Case(
        "callee_reads_under_a_flag_set_true",
        expect=UNSAFE_ONLY,
        why="`h(buf, flag=True)` takes the reading branch: the literal is evaluated in the test "
        "`if flag:` that encloses the read, and the evidence says so.",
        source=r"""
import torch


def h(x, flag):
    if flag:
        return x.sum()
    x.fill_(0.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, flag=True)
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
]

CASES.append(
    Case(
        "callee_reads_past_a_literal_kind_under_a_scale",
        expect=UNSAFE_ONLY,
        why="`degrade` returns early where `scale <= 0` or `kind == 'ddpm'`: the call's literal "
        "kind is evaluated (not 'ddpm'), and the caller's scale is assumed positive (named in "
        "the evidence), as it is in the run.",
        source=r"""
import torch


def degrade(x, scale, kind="ddpm"):
    if scale <= 0:
        return x
    if kind == "ddpm":
        return x * 0.0
    return (1 - scale) * x


def f(n, scale):
    buf = torch.zeros(n)  # <- site
    return degrade(buf, scale, kind="linear")
""",
        scenario=r"""
def run():
    return f(4, 0.5)
""",
    )
)

# Calls of a callee whose reading path a test of another argument excludes at this call: never
# read unwritten, so never `unsafe` (`unproven`: the analysis does not evaluate the test), and
# poison changes nothing.
NOT_READS = [
    Case(
        "callee_reads_only_under_a_flag_passed_false",
        why="`h` reads first only where `flag` is true: `h(buf, False)` fills it, then reads "
        "what it wrote.",
        source=r"""
import torch


def h(x, flag):
    if flag:
        return x.sum()
    x.fill_(0.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, False)
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "wrapper_hands_the_flag_to_the_reader",
        why="`k` passes its own `flag` to `h`, which reads first only where it is true: the "
        "condition is carried into `k`'s summary, and `k(buf, False)` never reads unwritten.",
        source=r"""
import torch


def h(x, flag):
    if flag:
        return x.sum()
    x.fill_(0.0)
    return x.sum()


def k(x, flag):
    return h(x, flag)


def f(n):
    buf = torch.zeros(n)  # <- site
    return k(buf, False)
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "callee_returns_early_under_a_default",
        why="`early` writes and returns where `flag` is true, its default: the read after the "
        "test runs only where the caller passes a false flag, and this one passes none.",
        source=r"""
import torch


def early(x, flag=True):
    if flag:
        x.fill_(1.0)
        return x.sum()
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return early(buf)
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("case", params(NOT_READS))
def test_excluded_reading_path_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)
