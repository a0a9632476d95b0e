"""Lifecycle models: what code the modelled methods are (a closure, a class-body alias, a mixin,
a subclass, a decorator, a generator, `super()` and a base of another module).

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
        "closure_in_forward_reads_the_buffer",
        why=(
            "`safe` would be wrong for `self.b1 = torch.zeros(...)` at line 6, judged through the "
            'sglang-attention-backend lifecycle ("never read"). But `forward_decode` defines a '
            "closure `inner` that reads `self.b1`, and calls it. The lifecycle model took `self` as"
            " private to the modelled methods, yet a nested function holds it; and calling a local "
            "function counted as an unknown call, which only matters for buffers reachable from "
            "outside. What the zeros do: with the allocation poisoned, `acc` changes."
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, inp, n):
        self.b1 = torch.zeros(4, 8, dtype=torch.bool, device=inp.device)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, inp, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, inp, n):
        pass

    def init_forward_metadata(self, inp, n):
        pass

    def forward_decode(self, inp, n):
        acc = inp.sum() * 0

        def inner():
            nonlocal acc
            acc = acc + torch.stack([self.b1[j].float().sum() for j in range(n)]).sum()

        inner()
        return acc


def f(inp, n):
    m = Backend()
    m.init_cuda_graph_state(inp, n)
    m.init_forward_metadata(inp, n)
    return m.forward_decode(inp, n)
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 2)
""",
    ),
    Case(
        "other_forward_method_reads_the_buffer",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 13, col 19 ("lifecycle '
            'sglang-attention-backend: `self.buf` is never read; torch.empty is equivalent"). But '
            "the class defines `forward_extend` by a class-body assignment (`forward_extend = "
            "_extend`), not by a `def`; the model runs `forward_extend` after every setup (it is "
            "one of the forwards), and `_extend` reads `self.buf`. "
            "rules/lifecycle_program.class_methods only collects top-level `def`s, so "
            '`forward_extend` counts as "not defined" and Lifecycle.matches/`optional` treats it as'
            " the base class's harmless default; "
            "rules/lifecycle_analysis._all_methods/_used_outside never see it. Same verdict (safe) "
            "for `forward_extend = lambda self, x: self.buf.sum()`, `forward_extend = "
            "functools.partialmethod(...)`, and a `def forward_extend` nested in an `if True:` "
            "block of the class body."
        ),
        source=r"""
import torch


def _extend(self, x):
    return x + self.buf.sum()


class Backend:
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x

    forward_extend = _extend
""",
        scenario=r"""
def run():
    # The lifecycle's eager cycle: init methods, then init_forward_metadata + a forward.
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)
    return b.forward_extend(torch.ones(2))
""",
    ),
    Case(
        "inherited_forward_from_a_mixin",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 14, col 19 ("`self.buf` '
            'is never read"). `Backend` inherits `forward_extend` from `ExtendMixin`, defined in '
            "this same module, whose body reads `self.buf`. The sglang model lists `forward_extend`"
            ' in `optional` (analysis/lifecycles.py _SGLANG_DEFAULTS: "the base versions raise '
            'NotImplementedError"), so a method the class does not define itself is assumed to be '
            "that harmless default: the bases are never looked at (lifecycle_analysis builds the "
            "program from the class's own `def`s only). Here the base is visible and its "
            "forward_extend reads the buffer."
        ),
        source=r"""
import torch


class ExtendMixin:
    def forward_extend(self, x):
        return x + self.buf.sum()


class Backend(ExtendMixin):
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_extend(torch.ones(2))
""",
    ),
    Case(
        "subclass_adds_a_forward_method",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 6, col 19 ("`self.buf` '
            'is never read"). The subclass `ExtendBackend` adds `forward_extend`, which `Backend` '
            "does not define, and it reads `self.buf`; an `ExtendBackend` runs Backend's "
            "init_cuda_graph_state (the allocation) and then, under the same lifecycle, its "
            "forward_extend. rules/lifecycle_analysis._overridden_in_subclass only asks whether a "
            "subclass overrides a method already in the program (`set(class_methods(other)) & "
            "used`): a subclass *adding* one of the model's optional methods (forward_extend, "
            "forward_mixed, forward, init_forward_metadata_in_graph) or any other method touching "
            "the buffer goes unnoticed."
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x


class ExtendBackend(Backend):
    def forward_extend(self, x):
        return x + self.buf.sum()
""",
        scenario=r"""
def run():
    b = ExtendBackend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_extend(torch.ones(2))
""",
    ),
    Case(
        "override_in_a_class_of_another_base",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 6, col 19 ("`self.buf` '
            'is never read"). `Leaf` overrides `forward_decode` to read `self.buf`, but it derives '
            "from `Backend` only through `Mid`: rules/lifecycle_analysis._overridden_in_subclass "
            "looks only at classes naming `Backend` directly in their bases (`b.id == cls.name`), "
            "not at subclasses of subclasses (nor at `class X(module.Backend)`, an ast.Attribute "
            "base)."
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x


class Mid(Backend):
    pass


class Leaf(Mid):
    def forward_decode(self, x):
        return x + self.buf.sum()
""",
        scenario=r"""
def run():
    b = Leaf()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "decorated_forward_method",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 14, col 19 ("`self.buf` '
            'is never read"). `forward_decode` is wrapped by `log_stats`, a decorator defined in '
            "this module whose wrapper reads `self.buf` before calling the method. The lifecycle "
            "program inlines the undecorated body: rules/lifecycle_program.class_methods only drops"
            " staticmethod/classmethod/property-like decorators and keeps every other decorated "
            "`def` as if the decorator were not there (the wrapper's code never enters the "
            "program)."
        ),
        source=r"""
import torch


def log_stats(fn):
    def wrapper(self, *args):
        wrapper.last = float(self.buf.sum())
        return fn(self, *args) + wrapper.last

    return wrapper


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    @log_stats
    def forward_decode(self, x):
        return x
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "writer_is_a_generator_function",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 6, col 19 ("`self.buf` '
            'is written in full (line 9) before any read on every path"). But `_refresh` is a '
            "generator function (it contains `yield`): the statement `self._refresh()` in each "
            "setup only creates a generator object and runs none of its body, so "
            "`self.buf.fill_(1)` never executes and forward_decode reads the initial contents. "
            "rules/lifecycle_program._Inliner._inline_self_calls inlines the body of any "
            "`self.m(...)` statement without checking that `m` is a generator (or an `async def`: "
            "the same happens with `async def _refresh(self): self.buf.fill_(1)`, a coroutine that "
            "is never awaited; also safe)."
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def _refresh(self):
        self.buf.fill_(1)
        yield

    def init_forward_metadata_capture_cuda_graph(self, n):
        self._refresh()

    def init_forward_metadata_replay_cuda_graph(self, n):
        self._refresh()

    def init_forward_metadata(self, n):
        self._refresh()

    def forward_decode(self, x):
        return x + self.buf.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "super_call_runs_a_base_that_reads",
        why=(
            "`safe` would be wrong for the zeros at line 25. `super().init_forward_metadata(...)` "
            "runs a base of another module on `self`; the base reads the buffer before the subclass"
            " writes it"
        ),
        source=r"""
import pathlib
import sys
import tempfile

import torch

# A base class of another module (written here so that the file runs on its own).
_dir = tempfile.mkdtemp()
pathlib.Path(_dir, "attn_base.py").write_text(
    "class BaseBackend:\n"
    "    def init_forward_metadata(self, bs, seq_lens):\n"
    "        self.total = self.lens.sum()\n"
)
sys.path.insert(0, _dir)
sys.modules.pop("attn_base", None)

from attn_base import BaseBackend  # noqa: E402


class Backend(BaseBackend):
    def __init__(self):
        self.total = None

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        super().init_forward_metadata(bs, seq_lens)
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.total

    def forward_extend(self, q, k, v):
        return q

    def forward_mixed(self, q, k, v):
        return q

    def forward(self, q, k, v):
        return self.forward_decode(q, k, v)

    def init_forward_metadata_in_graph(self, forward_batch):
        pass
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "base_of_another_module_runs_its_own_code",
        why=(
            "`safe` would be wrong for the zeros at line 29. a class that defines every modelled "
            "method was accepted whatever its base: a base of another module may run its own code "
            "on the object (here its `__init__` hook reads the buffer through an overridden method)"
            ""
        ),
        source=r"""
import pathlib
import sys
import tempfile

import torch

# A base class of another module (written here so that the file runs on its own).
_dir = tempfile.mkdtemp()
pathlib.Path(_dir, "attn_base.py").write_text(
    "class BaseBackend:\n"
    "    def __init_subclass__(cls, **kw):\n"
    "        orig = cls.init_forward_metadata\n"
    "        def wrapped(self, bs, seq_lens):\n"
    "            self.before = self.lens.sum()\n"
    "            orig(self, bs, seq_lens)\n"
    "        cls.init_forward_metadata = wrapped\n"
)
sys.path.insert(0, _dir)
sys.modules.pop("attn_base", None)

from attn_base import BaseBackend  # noqa: E402


class Backend(BaseBackend):
    def __init__(self):
        self.total = None

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum() + self.before

    def forward_extend(self, q, k, v):
        return q

    def forward_mixed(self, q, k, v):
        return q

    def forward(self, q, k, v):
        return self.forward_decode(q, k, v)

    def init_forward_metadata_in_graph(self, forward_batch):
        pass
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "builder_super_build_reads_first",
        why=(
            "`safe` would be wrong for the zeros at line 22. vLLM builder: `super().build(...)` in "
            "`build` runs a base of another module that reads the buffer before `build` writes it"
        ),
        source=r"""
import pathlib
import sys
import tempfile

import torch

# A base class of another module (written here so that the file runs on its own).
_dir = tempfile.mkdtemp()
pathlib.Path(_dir, "attn_base.py").write_text(
    "class BaseBackend:\n"
    "    def build(self, common_prefix_len, m):\n"
    "        return self.seq_lens.sum()\n"
)
sys.path.insert(0, _dir)
sys.modules.pop("attn_base", None)

from attn_base import BaseBackend  # noqa: E402


class Builder(BaseBackend):
    def __init__(self, max_reqs=4):
        self.seq_lens = torch.zeros(max_reqs)  # <- site

    def build(self, common_prefix_len, m):
        before = super().build(common_prefix_len, m)
        self.seq_lens.fill_(1)
        return before + self.seq_lens.sum()

    def build_for_cudagraph_capture(self, m):
        return self.build(0, m)
""",
        scenario=r"""
def run():
    return Builder().build(0, None)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
