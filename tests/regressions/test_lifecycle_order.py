"""Lifecycle models: which modelled methods run and in which order (CUDA-graph capture and
replay, methods called outside the model, graphs-only setup, cycles of a configured lifecycle).

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    AnalysisOptions,
    Case,
    check_execution,
    check_verdict,
    lifecycles_from_config,
    params,
)

CASES = [
    Case(
        "cuda_graph_runner_capture_records_the_write",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(...)` at line 8, col 19 ("lifecycle '
            "sglang-cuda-graph-runner: `self.buf` is written in full (line 20) before any read on "
            'every path"), and for `buf = torch.zeros(...)` at line 32 in the plain function '
            "`step`. But the write `copy_` runs between `g.capture_begin()` and `g.capture_end()`: "
            "it is only recorded into the graph, not executed, so the read right after capture "
            "(`self.buf.sum()`) sees the initial contents. rules/cfg.Builder._with only marks "
            "capture regions opened by `with torch.cuda.graph(...)` (CAPTURE_CONTEXTS, or "
            '"graph_capture" in the name); the explicit CUDAGraph.capture_begin() / capture_end() '
            "API (which starts/stops capture of the work queued on the current stream; nothing runs"
            " until replay) is an ordinary call on an unrelated object, so the write counts as "
            "executed. Needs a CUDA GPU: with zeros (0.0, 4.0, 0.0), with NaN poison "
            "(nan, 4.0, nan): the post-capture reads of both sites change."
        ),
        source=r"""
import torch


class Runner:
    def __init__(self):
        self.src = torch.ones(4, device="cuda")
        self.stream = torch.cuda.Stream()
        self.buf = torch.zeros(4, device="cuda")  # <- site

    def capture_one_batch_size(self, bs):
        return bs

    def replay_prepare(self, bs):
        return bs

    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(self.stream):
            g.capture_begin()
            self.buf.copy_(self.src)
            g.capture_end()
        torch.cuda.synchronize()
        self.graph = g
        return self.buf.sum().item()  # at capture time the copy has not run

    def replay(self):
        self.graph.replay()
        return self.buf.sum().item()


def step(x, stream):
    buf = torch.zeros(4, device="cuda")  # <- site
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        g.capture_begin()
        buf.copy_(x)
        g.capture_end()
    torch.cuda.synchronize()
    return buf.sum().item()
""",
        scenario=r"""
def run():
    r = Runner()
    first = r.capture()  # the model: __init__, then a capture cycle, then replays
    return first, r.replay(), step(torch.ones(4, device="cuda"), torch.cuda.Stream())
""",
        gpu=True,
    ),
    Case(
        "replay_runs_without_capture",
        why=(
            '`safe` would be wrong for `self.seq_lens = torch.zeros(max_bs)` at line 6 ("lifecycle '
            "sglang-cuda-graph-runner: `self.seq_lens` is written in full (line 20) before any read"
            ' on every path"). Why: the model runs `replay_prepare` only where `replay` calls it '
            "(inlined after replay's own writes), but the real sglang driver calls "
            "`graph_runner.replay_prepare(batch)` by itself (speculative verify: eagle/ngram "
            "workers do `if graph_runner.can_run(b): graph_runner.replay_prepare(b)` and later "
            "`replay(b, skip_attn_backend_init=True)`). analysis/lifecycles.py gives sglang-cuda-"
            "graph-runner only the cycles (capture) and (replay); replay_prepare is a required "
            "method the program never runs as a driver entry (rules/lifecycle_program.build_program"
            " runs only cycle.setup). Here replay_prepare reads self.seq_lens, which only replay "
            "writes, so the direct call reads the zeros: (0, 0) with zeros, "
            "and with NaN poison `int(nan)` raises."
        ),
        source=r"""
import torch


class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros(max_bs)  # <- site
        self.max_len = 0
        self.capture()

    def capture_one_batch_size(self, bs):
        pass

    def capture(self):
        pass

    def replay_prepare(self, seq_lens):
        self.max_len = int(self.seq_lens.max())

    def replay(self, seq_lens, skip_attn_backend_init=False):
        self.seq_lens.copy_(seq_lens)
        if not skip_attn_backend_init:
            self.replay_prepare(seq_lens)
        return self.max_len
""",
        scenario=r"""
def run():
    r = Runner(4)
    batch = torch.tensor([3.0, 5.0, 2.0, 1.0])
    r.replay_prepare(batch)  # sglang spec verify: replay_prepare called directly
    prepared = r.max_len
    return prepared, r.replay(batch, skip_attn_backend_init=True)
""",
    ),
    Case(
        "can_run_outside_the_model",
        why=(
            '`safe` would be wrong for `self.seq_lens = torch.zeros(max_bs)` at line 6 ("lifecycle '
            "sglang-cuda-graph-runner: `self.seq_lens` is written in full (line 20) before any read"
            ' on every path"). Why: `can_run` is not in the model; the sglang driver calls it '
            "before every replay (`can_run_graph = graph_runner.can_run(forward_batch)`). "
            "rules/lifecycle_analysis._used_outside is meant to catch an unmodelled method that "
            "reaches the buffer, but it only looks for `self.<attr>` with the buffer's own "
            "attribute name (or `self` whole / a call of a class method). Here __init__ stores a "
            "view of the buffer under a second attribute (`self.head = self.seq_lens[:1]`) and "
            "can_run reads `self.head`: the outside-method check is sidestepped, and the dataflow "
            "(which follows self.head as a view) never sees can_run: (True, 11.0) with zeros, (False, "
            "11.0) with NaN poison."
        ),
        source=r"""
import torch


class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros(max_bs)  # <- site
        self.head = self.seq_lens[:1]
        self.capture()

    def can_run(self, bs):
        return bool(self.head.item() < 100)

    def capture_one_batch_size(self, bs):
        pass

    def capture(self):
        pass

    def replay_prepare(self, seq_lens):
        self.seq_lens.copy_(seq_lens)

    def replay(self, seq_lens):
        self.replay_prepare(seq_lens)
        return self.seq_lens.sum().item()
""",
        scenario=r"""
def run():
    r = Runner(4)
    batch = torch.tensor([3.0, 5.0, 2.0, 1.0])
    ok = r.can_run(4)  # sglang ModelRunner: can_run, then replay
    return ok, r.replay(batch)
""",
    ),
    Case(
        "cuda_graph_state_runs_only_with_graphs",
        why=(
            "`safe` would be wrong for the zeros at line 6. init_cuda_graph_state runs only with "
            "CUDA graphs enabled (SGLang calls it from the decode CUDA-graph runner only); the "
            "models ran it on every path, so the eager-only run's read of the `__init__` buffer it "
            "writes was taken as written"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens.fill_(1)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()  # --disable-cuda-graph: no graph runner, no init_cuda_graph_state
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "graph_hooks_run_only_with_graphs",
        why=(
            "`safe` would be wrong for the zeros at line 6. the same for the out_graph/in_graph "
            "hook generation: init_cuda_graph_state is graphs-only, the eager path reads the "
            "`__init__` buffer unwritten"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.kv_indptr = torch.zeros(max_bs + 1, dtype=torch.int64)  # <- site

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.kv_indptr.copy_(torch.arange(max_bs + 1))

    def init_forward_metadata_out_graph(self, forward_batch, in_capture=False):
        self.kv_indptr[1:].copy_(forward_batch.cumsum(0))

    def init_forward_metadata(self, forward_batch):
        self.bs = forward_batch.numel()

    def forward_decode(self, q, k, v):
        return q * self.kv_indptr[: self.bs + 1].sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_forward_metadata(torch.ones(2, dtype=torch.int64))
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "cuda_graph_state_writes_through_a_helper",
        why=(
            "`safe` would be wrong for the zeros at line 6. init_cuda_graph_state writes the "
            "`__init__` buffer through a helper (`self._reset_graph_state()`); the eager-only run "
            "never calls it"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.lens = torch.zeros(max_bs)  # <- site
        self.max_bs = max_bs

    def _reset_graph_state(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self._reset_graph_state()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens[:bs].fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "user_lifecycle_cycles_run_in_any_order",
        why=(
            "`safe` would be wrong for the zeros at line 6. user lifecycle (configured in the test,"
            ' cycles `capture` and `replay`): a cycle whose name contains "capture" was forced to '
            "run first, though cycles run in any order"
        ),
        source=r"""
import torch


class Engine:
    def __init__(self, n=4):
        self.buf = torch.zeros(n)  # <- site

    def capture_prepare(self):
        self.buf.fill_(1)

    def step(self):
        return self.buf.sum()
""",
        scenario=r"""
def run():
    e = Engine()
    return e.step()  # a step before any capture
""",
        options=AnalysisOptions(
            lifecycles=lifecycles_from_config(
                {
                    "engine": {
                        "requires": ["capture_prepare", "step"],
                        "cycles": [
                            {
                                "name": "capture",
                                "setup": ["capture_prepare"],
                                "runs_forward": False,
                            },
                            {"name": "replay", "setup": ["step"], "runs_forward": False},
                        ],
                    }
                }
            )
        ),
    ),
    Case(
        "graph_state_without_a_capture_after_it",
        why=(
            "The analysis must not say `safe` for the zeros at line 9 (a looser lifecycle model "
            "would). no capture needs to follow init_cuda_graph_state on a given object (a hybrid "
            "backend builds its prefill half's graph state, then runs it eagerly): a buffer of "
            "init_cuda_graph_state written only by the capture and replay setup is read by the "
            "eager path"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self):
        self.ready = False

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self.ready = True

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        if self.ready:
            return q * self.lens.sum()
        return q
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
        "module_function_calls_forward_out_of_order",
        why=(
            "`safe` would be wrong for the zeros at line 6. a module function calls a modelled "
            "method out of the modelled order (a warm-up forward right after init_cuda_graph_state,"
            " before any metadata setup), as a method outside the model calling "
            "`self.forward_decode` would"
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def warm_up(backend):
    backend.init_cuda_graph_state(4, 4)
    return backend.forward_decode(torch.ones(2), None, None)
""",
        scenario=r"""
def run():
    return warm_up(Backend())
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
