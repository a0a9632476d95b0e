"""Wrappers that forward a backend's hooks to backends they hold (analysis/lifecycle_delegation.py).

A multi-step draft backend calls each hook of the model on its per-step backends from its own hook
of that name. The children then run in the wrapper's order, which is the model's only when every
hook the child defines is forwarded, on every run, to the same objects the wrapper made itself.
The engine (another module, as in SGLang) drives the wrapper in the model's order; each near miss
breaks one condition and a child reads its buffer before any write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_execution, check_verdict, params

# The engine: graph init, a capture (out_graph, in_graph, the forwards), then an eager step,
# as SGLang's draft runners drive a multi-step backend.
_ENGINE = r"""
import torch


def drive(wrapper):
    fb = torch.arange(1.0, 4.0)
    wrapper.init_cuda_graph_state(4, 8)
    wrapper.init_forward_metadata_out_graph(fb, in_capture=True)
    wrapper.init_forward_metadata_in_graph(fb)
    outs = [b.forward_decode(fb) for b in wrapper.attn_backends]
    wrapper.init_forward_metadata(fb)
    outs += [b.forward_decode(fb) for b in wrapper.attn_backends]
    return outs


def drive_eager(wrapper):
    fb = torch.arange(1.0, 4.0)
    wrapper.init_forward_metadata(fb)
    return [b.forward_decode(fb) for b in wrapper.attn_backends]
"""

_SCENARIO = r"""
def run():
    from engine import drive

    return drive(MultiStep())
"""

# A child whose `__init__` buffer is filled by init_cuda_graph_state (graphs) or by
# init_forward_metadata (eager) and read by every forward: `safe` under the model's order.
_CHILD = r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.lens = torch.zeros(max_bs)  # <- site
        self.bs = 0

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens.fill_(2.0)

    def init_forward_metadata_out_graph(self, forward_batch, in_capture=False):
        self.bs = forward_batch.numel()

    def init_forward_metadata_in_graph(self, forward_batch):
        self.bs = forward_batch.numel()

    def init_forward_metadata(self, forward_batch):
        self.lens.fill_(3.0)
        self.bs = forward_batch.numel()

    def forward_decode(self, q):
        return q * self.lens[: self.bs].sum()
"""


def _wrapper(
    cgs: str = "self.attn_backends[i].init_cuda_graph_state(max_bs, max_num_tokens)",
    out: str = "self.attn_backends[i].init_forward_metadata_out_graph(fb, in_capture=in_capture)",
    inner: str = "self.attn_backends[i].init_forward_metadata_in_graph(fb)",
    eager: str = "self.attn_backends[i].init_forward_metadata(fb)",
    build: str = "self.attn_backends.append(Backend())",
    extra: str = "",
) -> str:
    return _CHILD + (
        r"""

class MultiStep:
    def __init__(self, steps=3):
        self.steps = steps
        self.attn_backends = []
        for i in range(self.steps - 1):
            BUILD

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        for i in range(self.steps - 1):
            CGS

    def init_forward_metadata_out_graph(self, fb, in_capture=False):
        for i in range(self.steps - 1):
            OUT

    def init_forward_metadata_in_graph(self, fb):
        for i in range(self.steps - 1):
            INNER

    def init_forward_metadata(self, fb):
        for i in range(self.steps - 1):
            EAGER
EXTRA""".replace("BUILD", build)
        .replace("CGS", cgs)
        .replace("OUT", out)
        .replace("INNER", inner)
        .replace("EAGER", eager)
        .replace("EXTRA", extra)
    )


_MODULES = (("engine", _ENGINE),)

CASES = [
    Case(
        "wrapper_forwards_every_hook_to_its_own_children",
        kind="fix",
        why="MultiStep forwards all four hooks, in loops over the same range, to children it "
        "made in `__init__`: each child sees graph init before its capture and a full setup "
        "before each forward, and fills `lens` before every read.",
        source=_wrapper(),
        scenario=_SCENARIO,
        modules=_MODULES,
    ),
    Case(
        "wrapper_forwards_to_each_element_and_keeps_an_alias",
        kind="fix",
        why="The XPU shape: `for b in self.attn_backends: b.h(...)` in every hook, the list a "
        "comprehension of fresh backends, bound under a second name in `__init__` (as "
        "FlashAttentionMultiStepBackend's `attn_backend_list`) and only read.",
        source=_wrapper()
        .replace(
            "        self.attn_backends = []\n        for i in range(self.steps - 1):\n"
            "            self.attn_backends.append(Backend())\n",
            "        self.attn_backends = [Backend() for _ in range(steps - 1)]\n"
            "        self.attn_backend_list = self.attn_backends\n",
        )
        .replace(
            "        for i in range(self.steps - 1):\n            self.attn_backends[i].",
            "        for b in self.attn_backends:\n            b.",
        ),
        scenario=_SCENARIO,
        modules=_MODULES,
    ),
    Case(
        "wrapper_forwards_capture_but_not_graph_init",
        why="`safe` would be wrong: the wrapper's init_cuda_graph_state forwards nothing, so the "
        "children's capture forward reads `lens` that only their own init_cuda_graph_state "
        "fills: the zeros reach the result.",
        source=_wrapper(cgs="pass"),
        scenario=_SCENARIO,
        modules=_MODULES,
    ),
    Case(
        "wrapper_forwards_out_graph_but_not_in_graph",
        why="`safe` would be wrong: in graph mode only the child's in_graph fills `lens`; a "
        "wrapper forwarding out_graph but not in_graph runs the child's forward after a setup "
        "the model never runs, and the forward reads `lens` as allocated.",
        source=_wrapper(inner="pass")
        .replace(
            "    def init_forward_metadata_in_graph(self, forward_batch):\n"
            "        self.bs = forward_batch.numel()\n",
            "    def init_forward_metadata_in_graph(self, forward_batch):\n"
            "        self.lens.fill_(5.0)\n",
        )
        .replace("        self.lens.fill_(2.0)\n", "        self.bs = 0\n"),
        scenario=_SCENARIO,
        modules=_MODULES,
    ),
    Case(
        "wrapper_calls_the_childs_capture_hook_from_its_eager_hook",
        why="`safe` would be wrong: the wrapper's eager hook calls the children's "
        "init_forward_metadata_out_graph (another phase), which never fills `lens`; the eager "
        "forward reads it as allocated.",
        source=_wrapper(eager="self.attn_backends[i].init_forward_metadata_out_graph(fb)"),
        scenario=_SCENARIO.replace("drive(", "drive_eager(").replace(
            "import drive", "import drive_eager"
        ),
        modules=_MODULES,
    ),
    Case(
        "wrapper_forwards_graph_init_only_under_a_condition",
        why="`safe` would be wrong: graph init reaches the children only when a flag is set, "
        "which it is not; their capture then reads `lens` unfilled.",
        source=_wrapper(
            cgs="if max_bs > 99:\n                self.attn_backends[i].init_cuda_graph_state("
            "max_bs, max_num_tokens)"
        ),
        scenario=_SCENARIO,
        modules=_MODULES,
    ),
    Case(
        "wrapper_adds_a_child_after_graph_init",
        why="`safe` would be wrong: a method outside the model appends a child after graph "
        "init (the engine calls it between init and capture); the new child's capture reads "
        "`lens` its graph init never filled.",
        source=_wrapper(
            out="self.attn_backends[i].init_forward_metadata_out_graph(fb, in_capture=in_capture)",
            extra="\n    def grow(self):\n        self.attn_backends.append(Backend())\n"
            "        self.steps += 1\n",
        ),
        scenario=r"""
def run():
    import torch

    w = MultiStep()
    fb = torch.arange(1.0, 4.0)
    w.init_cuda_graph_state(4, 8)
    w.grow()
    w.init_forward_metadata_out_graph(fb, in_capture=True)
    w.init_forward_metadata_in_graph(fb)
    return [b.forward_decode(fb) for b in w.attn_backends]
""",
        modules=_MODULES,
    ),
    Case(
        "wrapper_sets_a_childs_length_between_its_hooks",
        why="`safe` would be wrong: each setup fills `lens` up to the length it stores and the "
        "forward reads up to that length; a wrapper method outside the model stores a larger "
        "length into every child between the setup and the forward, which then reads past what "
        "was filled.",
        source=_CHILD.replace(
            "        self.bs = forward_batch.numel()\n\n    def init_forward_metadata_in_graph",
            "        self.bs = forward_batch.numel()\n        self.lens[: self.bs].fill_(2.0)\n\n"
            "    def init_forward_metadata_in_graph",
        ).replace("        self.lens.fill_(2.0)\n", "        self.bs = 0\n")
        + _wrapper()[len(_CHILD) :].replace(
            "    def init_forward_metadata(self, fb):",
            "    def shrink(self):\n        for b in self.attn_backends:\n            b.bs = 4\n\n"
            "    def init_forward_metadata(self, fb):",
        ),
        scenario=r"""
def run():
    import torch

    w = MultiStep()
    fb = torch.arange(1.0, 4.0)
    w.init_cuda_graph_state(4, 8)
    w.init_forward_metadata_out_graph(fb, in_capture=True)
    w.init_forward_metadata_in_graph(fb)
    w.shrink()
    return [b.forward_decode(fb) for b in w.attn_backends]
""",
        modules=_MODULES,
    ),
    Case(
        "child_also_driven_by_a_function_of_the_module",
        why="`safe` would be wrong: besides the wrapper, a function of the module runs a child's "
        "capture hook before any graph init; the forward reads `lens` unfilled.",
        source=_wrapper()
        + r"""

def warm(wrapper, fb):
    wrapper.attn_backends[0].init_forward_metadata_out_graph(fb)
    return wrapper.attn_backends[0].forward_decode(fb)
""",
        scenario=r"""
def run():
    import torch

    return warm(MultiStep(), torch.arange(1.0, 4.0))
""",
        modules=_MODULES,
    ),
    Case(
        "wrapper_shares_one_child_handed_in",
        why="`safe` would be wrong: the wrapper holds a child it was handed, which the code that "
        "made it also drives eagerly through a capture hook; that child reads `lens` unfilled.",
        source=_wrapper(build="pass").replace(
            "    def __init__(self, steps=3):\n        self.steps = steps\n        self.attn_backends = []",
            "    def __init__(self, child, steps=2):\n        self.steps = steps\n"
            "        self.attn_backends = [child]",
        ),
        scenario=r"""
def run():
    import torch
    from engine import drive_shared

    return drive_shared(MultiStep, Backend, torch.arange(1.0, 4.0))
""",
        modules=(
            (
                "engine",
                _ENGINE
                + r"""

def drive_shared(wrapper_cls, child_cls, fb):
    child = child_cls()
    wrapper = wrapper_cls(child)
    child.init_forward_metadata_out_graph(fb)
    return child.forward_decode(fb)
""",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


def test_the_reason_names_the_hook_not_forwarded() -> None:
    """Where a wrapper forwards a capture hook but not graph init, the finding says which hook
    of which wrapper is missing, and where."""
    case = next(c for c in CASES if c.name == "wrapper_forwards_capture_but_not_graph_init")
    from tests.regressions.harness import _analyse

    result = _analyse(case, case.source.lstrip("\n"))
    messages = [f.message for f in result.findings if f.line in case.sites]
    assert messages and all(f.verdict != Verdict.SAFE for f in result.findings)
    assert any("`MultiStep.init_cuda_graph_state` (line" in m for m in messages), messages


def _reasons(source: str) -> list[str]:
    from tests.regressions.harness import _analyse

    case = Case("probe", source=source)
    result = _analyse(case, source.lstrip("\n"))
    found = [f for f in result.findings if f.line in case.sites]
    assert found and all(f.verdict != Verdict.SAFE for f in found)
    return [f.message for f in found]


def test_a_hook_forwarded_twice_is_named() -> None:
    """Two loops over the same children in one hook: each child sees the hook twice in a row."""
    loop = "self.attn_backends[i].init_forward_metadata(fb)"
    twice = f"{loop}\n        for i in range(self.steps - 1):\n            {loop}"
    messages = _reasons(_wrapper(eager=twice))
    assert any("does not call `init_forward_metadata` once" in m for m in messages), messages


def test_a_loop_bound_changed_in_place_is_named() -> None:
    """`range(len(self.sizes))` with `self.sizes.append(...)` in another method: the bound may
    reach other children at each hook."""
    source = _wrapper().replace("range(self.steps - 1)", "range(len(self.sizes))")
    source = source.replace(
        "        self.steps = steps\n", "        self.steps = steps\n        self.sizes = [1, 2]\n"
    )
    source += "\n    def grow(self):\n        self.sizes.append(3)\n"
    messages = _reasons(source)
    assert any("may change the loop bound" in m for m in messages), messages
