"""Static inputs a draft runner's capture warm-up reads through its speculative input.

sglang 0.5.23's EAGLE draft runner (speculative/eagle_draft_cuda_graph_runner.py) derives from
`DecodeCudaGraphRunner` and captures in `__init__`; its `capture_one_shape` puts the view
`self.buffers.topk_index[:bs]` into an `EagleDraftInput`, hands that to the ForwardBatch as
`spec_info`, and the warm-up runs the worker's `draft_forward(forward_batch)`, whose first step
embeds `spec_info.topk_index` as token ids (eagle_worker_v2.py:749-751, :809-849). Each program
below stands in for that shape: stand-in modules under the engine's module names provide the
base (its capture path as sglang's), the buffers base, the batch, the backend resolver and the
input class; the draft forward gathers embedding rows by `topk_index`. Cases are executed by
`tests/regressions/harness.py` (zeros, then poison); the near misses are programs where every
poisoned run gives the zeros result, so `unsafe` there would be wrong.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_verdict,
    params,
    poisoned_runs,
    site_verdicts,
)

HEADER = r'''
import sys
import types
from dataclasses import dataclass

import torch

EMBED = torch.arange(64, dtype=torch.float32).reshape(16, 4)


class _Buffers:
    def reset_index_buffers(self):
        for name in ("positions", "out_cache_loc", "req_pool_indices"):
            buf = getattr(self, name, None)
            if buf is not None:
                buf.zero_()

    def share_buffers(self, *, exclude=()):
        pass  # the first registrant of each key keeps its own tensor


class _Batch:
    def __init__(self, **fields):
        self.__dict__.update(fields)


@dataclass
class _DraftInput:
    topk_p: torch.Tensor = None
    topk_index: torch.Tensor = None


class _Worker:
    def draft_forward(self, forward_batch):
        """The EAGLE draft forward's first step: the top-k ids are the input ids."""
        input_ids = forward_batch.spec_info.topk_index.flatten()
        return EMBED[input_ids].sum() + forward_batch.positions.sum()


class _Runner:
    """sglang's DecodeCudaGraphRunner capture path: fills, index reset, then every shape."""

    def capture(self):
        self._capture()

    def _capture(self):
        self.buffers.seq_lens.fill_(self.seq_len_fill_value)
        self.buffers.reset_index_buffers()
        self.captured = []
        for bs in reversed(self.capture_bs):
            self.capture_one_shape(bs, None)


def _resolve(runner):
    return object()


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules.setdefault(name, mod)


for _pkg in ("sglang", "sglang.srt", "sglang.srt.model_executor", "sglang.srt.speculative",
             "sglang.srt.model_executor.runner_backend"):
    _module(_pkg)
_module("sglang.srt.model_executor.runner", DecodeCudaGraphRunner=_Runner)
_module("sglang.srt.model_executor.input_buffers", ForwardInputBuffers=_Buffers)
_module("sglang.srt.model_executor.forward_batch_info", ForwardBatch=_Batch)
_module("sglang.srt.model_executor.runner_backend.utils", resolve_decode_backend=_resolve)
_module("sglang.srt.speculative.eagle_info", EagleDraftInput=_DraftInput)

from sglang.srt.model_executor.forward_batch_info import ForwardBatch  # noqa: E402
from sglang.srt.model_executor.input_buffers import ForwardInputBuffers  # noqa: E402
from sglang.srt.model_executor.runner import DecodeCudaGraphRunner  # noqa: E402
from sglang.srt.model_executor.runner_backend.utils import resolve_decode_backend  # noqa: E402
from sglang.srt.speculative.eagle_info import EagleDraftInput  # noqa: E402


@dataclass
class DraftInputBuffers(ForwardInputBuffers):
    positions: torch.Tensor
    seq_lens: torch.Tensor
    topk_p: torch.Tensor
    topk_index: torch.Tensor
'''

INIT = """
class DraftRunner({base}):
    def __init__(self, worker, max_bs):
        self.eagle_worker = worker
        self.capture_bs = [1, 2, max_bs]
        self.seq_len_fill_value = 1
        positions = torch.zeros((max_bs,), dtype=torch.int64)
        seq_lens = torch.full((max_bs,), 1, dtype=torch.int64)
        topk_p = {topk_p}
        topk_index = {topk_index}
        self.buffers = DraftInputBuffers(
            positions=positions,
            seq_lens=seq_lens,
            topk_p=topk_p,
            topk_index=topk_index,
        )
        self.buffers.share_buffers()
        self.backend = resolve_decode_backend(self)
{capture}"""

PER_SHAPE = """
    def capture_one_shape(self, size, forward):
        buffers = self.buffers
        positions = buffers.positions[:size]
        topk_p = buffers.topk_p[:size]
        topk_index = buffers.topk_index[:size]
{before}        spec_info = EagleDraftInput(topk_p=topk_p, topk_index=topk_index)
        forward_batch = ForwardBatch(
            positions=positions,
            seq_lens=buffers.seq_lens[:size],
            spec_info=spec_info,
        )

        def run_once():
            return self.eagle_worker.draft_forward(forward_batch)

        for _ in range(2):
            out = run_once()
        self.captured.append(out)
"""

SCENARIO = """
def run():
    return torch.stack(DraftRunner(_Worker(), 4).captured)
"""

IDS = "torch.zeros((max_bs, 2), dtype=torch.int64)"
SITE = "  # <- site"


def runner(
    topk_index: str = IDS,
    topk_p: str = "torch.zeros((max_bs, 2), dtype=torch.float32)",
    site: str = "topk_index",
    base: str = "DecodeCudaGraphRunner",
    before: str = "",
    methods: str = "",
    capture: str = "        self.capture()\n",
) -> str:
    values = {"topk_index": topk_index, "topk_p": topk_p}
    values[site] += SITE
    init = INIT.format(base=base, capture=capture, **values)
    body = textwrap.indent(textwrap.dedent(before), " " * 8) if before else ""
    extra = textwrap.indent(textwrap.dedent(methods), "    ") if methods else ""
    return HEADER + init + PER_SHAPE.format(before=body) + extra


CASES = [
    Case(
        "draft_warmup_reads_topk_index_through_the_spec_input",
        why=(
            "The inherited capture fills `seq_lens` and zeroes the index fields, not "
            "`topk_index`; the warm-up draft forward embeds the spec input's `topk_index` as "
            "token ids (sglang 0.5.23 eagle_draft_cuda_graph_runner.py:198, :413, :448, :519; "
            "eagle_worker_v2.py:749-751, :809-849). Poison gives out-of-range token ids."
        ),
        source=runner(),
        scenario=SCENARIO,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "draft_warmup_reads_empty_topk_index",
        why="The rewrite the guard must catch: `torch.empty` top-k ids read by the warm-up.",
        source=runner(topk_index="torch.empty((max_bs, 2), dtype=torch.int64)"),
        scenario=SCENARIO,
        expect=frozenset({Verdict.UNSAFE}),
    ),
]

NEAR_MISSES = [
    Case(
        "spec_field_the_draft_forward_is_not_assumed_to_read",
        why="`topk_p` goes into the spec input too, but the model claims only `topk_index`.",
        source=runner(site="topk_p"),
        scenario=SCENARIO,
    ),
    Case(
        "spec_field_copied_into_before_the_warmup",
        why="The per-shape method copies top-k ids into the buffer before the spec input.",
        source=runner(before="buffers.topk_index.copy_(torch.ones((4, 2), dtype=torch.int64))\n"),
        scenario=SCENARIO,
    ),
    Case(
        "spec_input_handed_to_an_unknown_function",
        why="The spec input is handed to a function that fills its `topk_index` first.",
        source=runner().replace(
            "        forward_batch = ForwardBatch(",
            "        prime(spec_info)\n        forward_batch = ForwardBatch(",
        )
        + "\n\ndef prime(s):\n    s.topk_index.fill_(3)\n",
        scenario=SCENARIO,
    ),
    Case(
        "draft_runner_overrides_the_capture_path",
        why="The class defines `capture` itself and fills the top-k ids before capturing.",
        source=runner(
            methods="""
            def capture(self):
                self.buffers.topk_index.fill_(2)
                self._capture()
            """
        ),
        scenario=SCENARIO,
    ),
    Case(
        "draft_runner_built_without_graphs",
        why=(
            "`__init__` does not capture: the replay copies the real ids in before the forward "
            "runs, so the allocation's contents are never read."
        ),
        source=runner(
            capture="        self.captured = []\n",
            methods="""
            def replay(self, ids):
                self.buffers.topk_index.copy_(ids)
                self.captured = []
                self.capture_one_shape(4, None)
                return self.captured[0]
            """,
        ),
        scenario="""
def run():
    r = DraftRunner(_Worker(), 4)
    return r.replay(torch.ones((4, 2), dtype=torch.int64))
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    """Never `unsafe` (nor `safe`: the replay path is not modelled), and really equivalent:
    every poisoned run gives the zeros result."""
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts, (line, verdicts)
            assert Verdict.UNSAFE not in verdicts, (line, verdicts)
            assert Verdict.SAFE not in verdicts or "copied" in case.name, (line, verdicts)
    _, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), differences
