"""Static inputs of a CUDA-graph runner read by the capture warm-up before any replay writes them.

sglang 0.5.23's speculative runners derive from `DecodeCudaGraphRunner`: `__init__` allocates
the static inputs, stores them in a buffers dataclass, and calls `self.capture()`, whose
inherited path fills `seq_lens`, zeroes the index fields (`reset_index_buffers`) and then runs
the runner's own `capture_one_shape`, which builds a ForwardBatch from views of the buffers and
runs the model's forward on it for real (warm-up) before recording. Each program below stands
in for that shape with a small runner: stand-in modules under the engine's module names provide
the base (its capture path as sglang's), the buffers base, the batch and the backend resolver;
the model's forward gathers embedding rows by `input_ids` and rotary rows by `positions`.
Cases are checked and executed by `tests/regressions/harness.py` (zeros, then poison); the near
misses at the end are programs where every poisoned run gives the zeros result, so `unsafe`
there would be wrong.
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
ROPE = torch.arange(32, dtype=torch.float32).reshape(16, 2)


def _model_forward(input_ids, positions, forward_batch):
    """What a model's forward reads: embedding rows by token id, rope rows by position."""
    return EMBED[input_ids].sum() + ROPE[positions].sum()


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


class _Runner:
    """sglang's DecodeCudaGraphRunner capture path: fills, index reset, then every shape."""

    def capture(self):
        self._capture()

    def _capture(self):
        self.buffers.seq_lens.fill_(self.seq_len_fill_value)
        self.buffers.reset_index_buffers()
        self.captured = []
        for bs in reversed(self.capture_bs):
            self.capture_one_shape(bs, _model_forward)


def _resolve(runner):
    return object()


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules.setdefault(name, mod)


for _pkg in ("sglang", "sglang.srt", "sglang.srt.model_executor",
             "sglang.srt.model_executor.runner_backend"):
    _module(_pkg)
_module("sglang.srt.model_executor.runner", DecodeCudaGraphRunner=_Runner)
_module("sglang.srt.model_executor.input_buffers", ForwardInputBuffers=_Buffers)
_module("sglang.srt.model_executor.forward_batch_info", ForwardBatch=_Batch)
_module("sglang.srt.model_executor.runner_backend.utils", resolve_decode_backend=_resolve)

from sglang.srt.model_executor.forward_batch_info import ForwardBatch  # noqa: E402
from sglang.srt.model_executor.input_buffers import ForwardInputBuffers  # noqa: E402
from sglang.srt.model_executor.runner import DecodeCudaGraphRunner  # noqa: E402
from sglang.srt.model_executor.runner_backend.utils import resolve_decode_backend  # noqa: E402


@dataclass
class DraftInputBuffers(ForwardInputBuffers):
    input_ids: torch.Tensor
    positions: torch.Tensor
    seq_lens: torch.Tensor
    topk_p: torch.Tensor
'''

INIT = """
class DraftRunner({base}):
    def __init__(self, max_bs, width):
        self.capture_bs = [1, 2, max_bs]
        self.seq_len_fill_value = 1
        self.width = width
        max_num_token = max_bs * width
        input_ids = {ids}
        positions = {positions}
        seq_lens = torch.full((max_bs,), 1, dtype=torch.int64)
        topk_p = {topk}
        self.buffers = DraftInputBuffers(
            input_ids=input_ids,
            positions=positions,
            seq_lens=seq_lens,
            topk_p=topk_p,
        )
        self.buffers.share_buffers()
        self.backend = resolve_decode_backend(self)
        self.capture()
"""

PER_SHAPE = """
    def capture_one_shape(self, size, forward):
        buffers = self.buffers
        num_tokens = size * self.width
{before}{view}        positions = buffers.positions[:num_tokens]
        forward_batch = ForwardBatch(
            input_ids={ids_kw},
            positions=positions,
            seq_lens=buffers.seq_lens[:size],
            topk_p=buffers.topk_p[:size],
        )

        def run_once():
            return forward(forward_batch.input_ids, forward_batch.positions, forward_batch)

        for _ in range(2):
            out = run_once()
        self.captured.append(out)
"""

SCENARIO = """
def run():
    return torch.stack(DraftRunner(4, 2).captured)
"""

ZEROS = "torch.zeros((max_num_token,), dtype=torch.int64)"
SITE = "  # <- site"


def runner(
    ids: str = ZEROS,
    positions: str = ZEROS,
    topk: str = "torch.zeros((max_bs, 2), dtype=torch.float32)",
    base: str = "DecodeCudaGraphRunner",
    before: str = "",
    methods: str = "",
    site: str = "ids",
    view: bool = True,
) -> str:
    values = {"ids": ids, "positions": positions, "topk": topk}
    values[site] += SITE
    init = INIT.format(base=base, **values)
    body = textwrap.indent(textwrap.dedent(before), " " * 8) if before else ""
    extra = textwrap.indent(textwrap.dedent(methods), "    ") if methods else ""
    shape = PER_SHAPE.format(
        before=body,
        view="        input_ids = buffers.input_ids[:num_tokens]\n" if view else "",
        ids_kw="input_ids" if view else "buffers.input_ids[:num_tokens]",
    )
    return HEADER + init + shape + extra


CASES = [
    Case(
        "capture_warmup_reads_input_ids",
        why=(
            "The inherited capture fills `seq_lens` and zeroes the index fields, not "
            "`input_ids`: the warm-up forward gathers embedding rows by the allocation's "
            "contents (sglang 0.5.23 eagle_draft_extend_cuda_graph_runner.py:169, read at "
            ":363/:429/:475). Poison gives out-of-range token ids."
        ),
        source=runner(),
        scenario=SCENARIO,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "capture_warmup_reads_input_ids_when_enabled",
        why=(
            "The same read where the allocation is conditional (`x if flag else None`) and "
            "the ForwardBatch takes the view directly: `unsafe` when the flag holds."
        ),
        source=runner(ids=f"{ZEROS} if max_num_token > 0 else None", view=False),
        scenario=SCENARIO,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "capture_warmup_reads_empty_input_ids",
        why=(
            "The rewrite the guard must catch: `torch.empty` token ids read by the warm-up "
            "forward (ZO002 `unsafe`, the same evidence as the zeros)."
        ),
        source=runner(ids="torch.empty((max_num_token,), dtype=torch.int64)"),
        scenario=SCENARIO,
        expect=frozenset({Verdict.UNSAFE}),
    ),
]

# Equivalent programs (every poisoned run gives the zeros result) close to the cases above.
NEAR_MISSES = [
    Case(
        "index_field_reset_by_the_inherited_capture",
        why=(
            "`positions` is read by the forward too, but the inherited capture zeroes it "
            "first (reset_index_buffers, sglang decode_cuda_graph_runner.py:1288): the "
            "allocation's contents are never read."
        ),
        source=runner(site="positions"),
        scenario=SCENARIO,
    ),
    Case(
        "field_the_forward_is_not_assumed_to_read",
        why=(
            "`topk_p` goes into the ForwardBatch, but the model is assumed to read only "
            "input_ids, positions, out_cache_loc, req_pool_indices and seq_lens: no claim."
        ),
        source=runner(site="topk"),
        scenario=SCENARIO,
    ),
    Case(
        "field_written_before_the_batch",
        why="The per-shape method fills the token ids before it builds the batch.",
        source=runner(before="buffers.input_ids.fill_(3)\n"),
        scenario=SCENARIO,
    ),
    Case(
        "field_written_in_init_before_capture",
        why="`__init__` writes the buffer in full before storing it: the capture reads that.",
        source=runner().replace(
            "        self.buffers = DraftInputBuffers(",
            "        input_ids.fill_(5)\n        self.buffers = DraftInputBuffers(",
        ),
        scenario=SCENARIO,
    ),
    Case(
        "field_written_by_a_method_the_per_shape_calls",
        why="The per-shape method calls a method of the class that fills the token ids first.",
        source=runner(
            before="self._prime()\n",
            methods="""
            def _prime(self):
                self.buffers.input_ids.fill_(4)
            """,
        ),
        scenario=SCENARIO,
    ),
    Case(
        "runner_handed_to_an_unknown_function",
        why=(
            "The per-shape method hands `self` to a function the model does not know, which "
            "fills the token ids through it before the batch is built."
        ),
        source=runner(before="prime(self)\n")
        + "\n\ndef prime(r):\n    r.buffers.input_ids.fill_(4)\n",
        scenario=SCENARIO,
    ),
    Case(
        "runner_overrides_the_capture_path",
        why=(
            "The class defines `capture` itself, writing the token ids first: the model's "
            "inherited capture path is not what runs."
        ),
        source=runner(
            methods="""
            def capture(self):
                self.buffers.input_ids.fill_(2)
                self._capture()
            """
        ),
        scenario=SCENARIO,
    ),
    Case(
        "runner_of_another_base",
        why=(
            "A runner deriving from a base the model does not describe, whose capture writes "
            "the token ids before the shapes: no claim."
        ),
        source=runner(base="OtherRunner").replace(
            "\nclass DraftRunner(OtherRunner):",
            "\nclass OtherRunner(DecodeCudaGraphRunner):\n"
            "    def capture(self):\n"
            "        self.buffers.input_ids.fill_(1)\n"
            "        self._capture()\n\n\n"
            "class DraftRunner(OtherRunner):",
        ),
        scenario=SCENARIO,
    ),
]


FACTORY = r"""
import sys
import types
from dataclasses import dataclass

import torch

EMBED = torch.arange(64, dtype=torch.float32).reshape(16, 4)


class _Buffers:
    def share_buffers(self, *, exclude=()):
        pass


for _name in ("sglang", "sglang.srt", "sglang.srt.model_executor"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
_ib = types.ModuleType("sglang.srt.model_executor.input_buffers")
_ib.ForwardInputBuffers = _Buffers
sys.modules.setdefault("sglang.srt.model_executor.input_buffers", _ib)

from sglang.srt.model_executor.input_buffers import ForwardInputBuffers  # noqa: E402


@dataclass
class {cls}(ForwardInputBuffers):
    input_ids: torch.Tensor
    positions: torch.Tensor

    @classmethod
    def create(cls, *, max_num_token):
        input_ids = {ids}  # <- site
        positions = torch.zeros((max_num_token,), dtype=torch.int64)
{write}        return cls(input_ids=input_ids, positions=positions)
"""

FACTORY_SCENARIO = """
def run():
    # The runner: create, share, capture at once (warm-up forward on input_ids[:n]).
    buffers = {cls}.create(max_num_token=8)
    buffers.share_buffers()
{first}    return torch.stack([EMBED[buffers.input_ids[: 2 * bs]].sum() for bs in (4, 2, 1)])
"""

_FACTORY_PACKAGE = "sglang/srt/model_executor/runner_utils"
_FACTORY_TREE = (
    *((f"{_FACTORY_PACKAGE.rsplit('/', depth)[0]}/__init__", "") for depth in range(4)),
    (
        "sglang/srt/model_executor/input_buffers",
        "class ForwardInputBuffers:\n    def share_buffers(self, *, exclude=()):\n        pass\n",
    ),
)


def factory(
    cls: str = "DecodeInputBuffers", write: str = "", first: str = "", **kw: object
) -> Case:
    """A case whose program is the factory module, at the engine's module path."""
    return Case(
        "buffers",
        source=FACTORY.format(cls=cls, ids=ZEROS, write=write),
        scenario=FACTORY_SCENARIO.format(cls=cls, first=first),
        package=_FACTORY_PACKAGE,
        modules=_FACTORY_TREE,
        **kw,  # type: ignore[arg-type]
    )


FACTORY_CASES = [
    factory(
        why=(
            "sglang 0.5.23 runner_utils/buffers.py:158: `DecodeInputBuffers.create` returns the "
            "token ids the decode runner captures on at once (decode_cuda_graph_runner.py:470, "
            ":600, :1112, :1198, :1459): poison gives out-of-range token ids."
        ),
        expect=frozenset({Verdict.UNSAFE}),
    ),
]

FACTORY_NEAR_MISSES = [
    factory(
        write="        input_ids.fill_(1)\n",
        why="The factory writes the token ids in full before it returns them.",
    ),
    factory(
        cls="PrefillInputBuffers",
        first="    buffers.input_ids.fill_(2)\n",
        why=(
            "A buffers class the model does not name: its runner (here) writes the token ids "
            "before its warm-up, as a runner with its own capture path may."
        ),
    ),
]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"factory-{i}") for i, c in enumerate(FACTORY_CASES)]
)
def test_factory_verdict(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"factory-{i}") for i, c in enumerate(FACTORY_CASES)]
)
def test_factory_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"factory-near-{i}") for i, c in enumerate(FACTORY_NEAR_MISSES)]
)
def test_factory_near_miss_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts, (line, verdicts)
            assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    _, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), differences


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    """Judged, never `unsafe` (nor `safe`: the replay path is not modelled), and really
    equivalent: every poisoned run gives the zeros result."""
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts, (line, verdicts)
            assert Verdict.UNSAFE not in verdicts, (line, verdicts)
            assert Verdict.SAFE not in verdicts or case.name.startswith("field_written"), (
                line,
                verdicts,
            )
    _, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), differences
