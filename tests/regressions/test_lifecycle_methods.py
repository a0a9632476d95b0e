"""Lifecycle models: which modelled methods run, in which order, and what code they are.

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
        "dict_item_store_rebinds_the_attribute",
        why=(
            "`self.__dict__['a'] = ...` rebinds self.a without an attribute store, so the later "
            "`self.a.fill_(1)` writes the NEW tensor; the buffer allocated at line 13, col 18 "
            "(still reachable as self.keep and read by forward_decode) is never written. `safe` "
            "would be wrong. What the zeros do: pattern nan|max, input (0, 0, 0, False): result[0]:"
            " NaN at different places. Any store through self.__dict__ (or vars(self), which it "
            "handles) must kill self's buffers."
        ),
        source=r"""
import torch


def reset(obj):
    obj.a = torch.ones(8)


class Backend:
    def __init__(self):
        self.max_bs = 8

    def init_cuda_graph_state(self, max_bs):
        self.a = torch.zeros(max_bs)  # <- site
        self.keep = self.a

    def init_forward_metadata_capture_cuda_graph(self, bs, k, flag):
        self.__dict__['a'] = torch.ones(8)
        self.a.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, k, flag):
        self.a.fill_(1)

    def forward_decode(self, q, bs):
        return self.keep.sum()

    def init_forward_metadata(self, bs, k, flag):
        self.a.fill_(1)

    def _reset(self):
        self.a = torch.ones(8)


def f(inp, n, k, flag):
    b = Backend()
    b.init_cuda_graph_state(8)
    b.init_forward_metadata_capture_cuda_graph(8, k, flag)
    warm = b.forward_decode(inp, 8)
    b.init_forward_metadata_replay_cuda_graph(8, k, flag)
    rep = b.forward_decode(inp, 8)
    return warm, rep
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "dict_update_rebinds_the_attribute",
        why=(
            "`self.__dict__.update(a=...)` rebinds self.a without an attribute store, so the later "
            "`self.a.fill_(1)` writes the NEW tensor; the buffer allocated at line 13, col 18 "
            "(still reachable as self.keep and read by forward_decode) is never written. `safe` "
            "would be wrong. What the zeros do: pattern nan|max, input (0, 0, 0, False): result[0]:"
            " NaN at different places. Any store through self.__dict__ (or vars(self), which it "
            "handles) must kill self's buffers."
        ),
        source=r"""
import torch


def reset(obj):
    obj.a = torch.ones(8)


class Backend:
    def __init__(self):
        self.max_bs = 8

    def init_cuda_graph_state(self, max_bs):
        self.a = torch.zeros(max_bs)  # <- site
        self.keep = self.a

    def init_forward_metadata_capture_cuda_graph(self, bs, k, flag):
        self.__dict__.update(a=torch.ones(8))
        self.a.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, k, flag):
        self.a.fill_(1)

    def forward_decode(self, q, bs):
        return self.keep.sum()

    def init_forward_metadata(self, bs, k, flag):
        self.a.fill_(1)

    def _reset(self):
        self.a = torch.ones(8)


def f(inp, n, k, flag):
    b = Backend()
    b.init_cuda_graph_state(8)
    b.init_forward_metadata_capture_cuda_graph(8, k, flag)
    warm = b.forward_decode(inp, 8)
    b.init_forward_metadata_replay_cuda_graph(8, k, flag)
    rep = b.forward_decode(inp, 8)
    return warm, rep
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
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
        "read_through_instance_dict",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 6, col 19 ("`self.buf` '
            'is never read"). `forward_decode` reads the buffer as `self.__dict__["buf"]`. a nearby'
            " case *stores* through `self.__dict__` kill self's buffers, but a *load* through "
            "`self.__dict__[...]` is not taken as a read of `self.buf` (the `self.__dict__` "
            "attribute path is not the `self.buf` key, and `self` counts as a private root, so "
            'handing `self.__dict__` around is not an escape either). `vars(self)["buf"]` is '
            "handled (unproven)."
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
        return x + self.__dict__["buf"].sum()
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
        "writer_redefined_later_in_the_class",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 13, col 19 ("`self.buf` '
            'is written in full (line 16) before any read on every path"). The `def '
            "init_forward_metadata` that writes the buffer is replaced, later in the class body, by"
            " `init_forward_metadata = _no_metadata`, which writes nothing: eager steps then read "
            "the initial contents in forward_decode. rules/lifecycle_program.class_methods builds "
            "the class's methods from its `def` statements only, so the program runs the shadowed "
            "body (the same blind spot as 001, here believing a write that never happens)."
        ),
        source=r"""
import torch


def _no_metadata(self, n):
    pass


class Backend:
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata(self, n):
        self.buf.fill_(1)

    init_forward_metadata = _no_metadata

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
        "instance_attribute_shadows_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 18. an instance attribute shadows a "
            "method: `self._fill = _skip` in `__init__`, so `self._fill()` runs `_skip`, not the "
            "class's `def _fill` that writes the buffer"
        ),
        source=r"""
import torch


def _skip():
    return None


class Backend:
    def __init__(self, max_bs=4, fast=True):
        if fast:
            self._fill = _skip
        self.max_bs = max_bs

    def _fill(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self._fill()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "attribute_stored_from_a_module_function_shadows_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 12. an attribute stored from a module "
            "function (`backend.write_lens = ...`) shadows the method `write_lens` that "
            "init_cuda_graph_state calls"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.max_bs = max_bs

    def write_lens(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self.write_lens()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def make_backend(lazy):
    b = Backend()
    if lazy:
        b.write_lens = lambda: None
    return b
""",
        scenario=r"""
def run():
    b = make_backend(True)
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "class_decorator_replaces_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 12. a class decorator replaces a modelled "
            "method (init_forward_metadata becomes a no-op); class decorators were never looked at"
        ),
        source=r"""
import torch


def lazy_metadata(cls):
    cls.init_forward_metadata_capture_cuda_graph = lambda self, bs, seq_lens: None
    return cls


@lazy_metadata
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
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "method_rebound_at_module_level",
        why=(
            "`safe` would be wrong for the zeros at line 6. module-level rebinding after the class "
            "body (`Backend.init_forward_metadata = ...`) replaces the method that writes the "
            "buffer"
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


def _metadata_only(self, bs, seq_lens):
    self.bs = bs


Backend.init_forward_metadata = _metadata_only
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
        "setattr_from_a_function_replaces_setup",
        why=(
            "`safe` would be wrong for the zeros at line 6. `setattr(Backend, ...)` from a function"
            " of the module replaces the capture-time setup"
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


def patch_for_tests():
    setattr(Backend, "init_forward_metadata_capture_cuda_graph", lambda self, bs, seq_lens: None)  # noqa: B010
""",
        scenario=r"""
def run():
    patch_for_tests()
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
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
    Case(
        "mangled_method_shadowed_by_an_attribute",
        why=(
            "`safe` would be wrong for the zeros at line 17. mangled method shadowed: `self.__fill "
            "= _skip` stores `_Backend__fill`, the same name the class's `def __fill` has"
        ),
        source=r"""
import torch


def _skip():
    return None


class Backend:
    def __init__(self, lazy=True):
        if lazy:
            self.__fill = _skip

    def __fill(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self.__fill()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
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
    Case(
        "exec_of_a_string_rebinds_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 6. `exec` of a string at module level "
            "rebinds a modelled method; a string can do anything the analysis cannot read"
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


exec("Backend.init_forward_metadata = lambda self, bs, seq_lens: None")
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
