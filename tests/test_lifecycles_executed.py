"""The lifecycle cases of tests/test_lifecycles.py, *executed*: each `safe` must survive poisoning.

The static tests check what the analysis says about synthetic attention backends judged across
methods under a lifecycle model. Here the same classes run on CPU in the order the model
prescribes (`analysis/lifecycles.py`, built into one program by `analysis/lifecycle_program.py`):

    init methods; then eager steps; with CUDA graphs enabled, at some point the graph init
    methods (init_cuda_graph_state) once, a capture, then replays, eager steps and re-captures
    in any order.

SGLang's runner is followed where the model leaves room: captures go largest batch first, each
running the capture-time setup then two warm-up forwards that execute for real (the recorded
third forward executes nothing at capture time; the replay cycle runs it); a capture uses
`seq_len_fill_value` lengths; a replay may pad a smaller batch up to a captured size, padding
its lengths with the fill value. Graph replay is emulated by calling the forward again after the
replay-time setup, which is how the analysis models it too.

Each zeros allocation is poisoned in turn (tests/soundness/oracle.py rewrites exactly that call
to fill the fresh buffer with NaN / max, 2**30 / 1e30, -1, 1) and every forward's return value,
plus everything the stand-in kernels read, is compared with the zeros run, NaN-aware. A `safe`
must run equivalent on every pattern and schedule; an `unsafe` whose read the driver can observe
must differ at least once (the harness can fail); `unproven` cases only have to run.

The `flash_attn` kernels are CPU stand-ins built from their contracts in
`analysis/kernel_contracts.py`: every tensor argument the contract does not exempt is read in full,
`page_table` row b is read up to ceil(lengths[b] / page_size) entries (in flat order: a length past
its row reads on into the next row, past the table is an emulated illegal memory access), and an
argument listed as unread unless others are passed is read only then. Every value read is summed
into a log and into the result, so no poisoned read can hide behind clamping or a discarded output.
"""

from __future__ import annotations

import ast
import math
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from tests.soundness.oracle import PATTERNS, Site, difference, find_sites, poison_value
from tests.soundness.oracle import poisoned_variant as _poisoned_variant
from tests.test_lifecycles import (
    CAPTURE_VIEWS,
    EAGER_FRESH,
    FORWARD_FA,
    REPLAY_VIEWS,
    RUNNER,
    RUNNER_MODEL,
    STATE,
    backend,
    with_record,
)
from zeroopt.analysis.kernel_contracts import KERNEL_CONTRACTS, KernelContract
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES, Lifecycle
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Finding, Verdict

S, U, P = Verdict.SAFE, Verdict.UNSAFE, Verdict.UNPROVEN

MAX_BS = 2  # small enough that every synthetic `copy_(seq_lens)` broadcasts for bs in {1, 2}
PAGE_SIZE = 1  # SGLang's FlashAttention backend default: one token per page, the most rows read
CAPTURE_FILL = 1  # CudaGraphRunner's seq_len_fill_value for FlashAttention backends
MODULE = "zo_lifecycle_case"

SGLANG = next(m for m in BUILTIN_LIFECYCLES if m.name == "sglang-attention-backend")


# ---- CPU stand-ins for the opaque kernels ---------------------------------------------------------

_KERNEL_LOG: list[tuple[str, torch.Tensor]] = []  # (kernel, sums of what it read), per run
_PAGE_SIZE = [PAGE_SIZE]  # tokens per page-table entry: set per case by `run`


class IllegalAccess(IndexError):
    """What a GPU kernel reading outside its tensor would do, emulated."""


def _checksum(t: torch.Tensor) -> torch.Tensor:
    values = t.detach().reshape(-1)
    if values.is_complex():
        values = torch.view_as_real(values).reshape(-1)
    return values.to(torch.float64).sum()


def _row_read(table: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The entries of `table` a paged kernel reads: row b up to ceil(lengths[b] / page size)."""
    if table.dim() < 2:
        raise IllegalAccess(f"page_table of shape {tuple(table.shape)}: expected (batch, pages)")
    batch, width = table.shape[0], table[0].numel()
    flat = table.reshape(-1)  # logical row-major order: reading past a row reads the next one
    lens = lengths.reshape(-1)
    if lens.numel() < batch:
        raise IllegalAccess(f"{lens.numel()} lengths for a page table of {batch} rows")
    pieces = []
    for b in range(batch):
        length = lens[b].item()
        if isinstance(length, float):
            if not math.isfinite(length):
                raise IllegalAccess(f"row {b}: length {length}")
            length = math.ceil(length)
        pages = -(-int(length) // _PAGE_SIZE[0]) if length > 0 else 0  # no int32 wrap: reads more
        if pages == 0:
            continue
        start = b * width
        if start + pages > flat.numel():
            raise IllegalAccess(
                f"emulated illegal memory access: row {b} reads {pages} page-table entries "
                f"(length {length}) past the end of a table of {tuple(table.shape)}"
            )
        pieces.append(flat[start : start + pages])
    return torch.cat(pieces) if pieces else flat[:0]


def fake_kernel(contract: KernelContract) -> Callable[..., torch.Tensor]:
    """A kernel that reads exactly what `contract` says and returns something depending on all of
    it: q (as float64) plus the sum of every value read."""
    row_bounds = dict(contract.row_reads)
    unread_unless = dict(contract.unread_unless)

    def kernel(*args: Any, **kwargs: Any) -> torch.Tensor:
        if len(args) > len(contract.params):
            raise TypeError(f"{contract.name}: too many positional arguments")
        bound = dict(zip(contract.params, args, strict=False))
        for key, value in kwargs.items():
            if key not in contract.params or key in bound:
                raise TypeError(f"{contract.name}: unexpected or repeated argument {key!r}")
            bound[key] = value
        sums = []
        for name in contract.params:
            value = bound.get(name)
            if not isinstance(value, torch.Tensor):
                continue
            if name in contract.ignored or name in contract.writes:
                continue
            if name in unread_unless and all(bound.get(o) is None for o in unread_unless[name]):
                continue
            limit = bound.get(row_bounds.get(name, ""))
            read = _row_read(value, limit) if isinstance(limit, torch.Tensor) else value
            sums.append(_checksum(read))
        checksum = torch.stack(sums) if sums else torch.zeros(1, dtype=torch.float64)
        _KERNEL_LOG.append((contract.name, checksum))
        result = bound["q"].detach().to(torch.float64) + checksum.sum()
        out = bound.get("out")
        if isinstance(out, torch.Tensor):
            return out.copy_(result)
        return result

    kernel.__name__ = contract.name
    return kernel


def _contract(name: str) -> KernelContract:
    return next(c for c in KERNEL_CONTRACTS if c.name == name)


def my_kernel(*tensors: torch.Tensor) -> None:
    """An opaque kernel: the worst case for what it does with its arguments is to read them."""
    _KERNEL_LOG.append(("my_kernel", torch.stack([_checksum(t) for t in tensors])))


def register(obj: object) -> None:
    """Unknown code handed `self`: does nothing here (the analysis may not assume so)."""


def make_helper() -> Callable[..., None]:
    return lambda *args, **kwargs: None


@pytest.fixture
def fake_flash_attn(monkeypatch: pytest.MonkeyPatch) -> None:
    top = types.ModuleType("flash_attn")
    cute = types.ModuleType("flash_attn.cute")
    top.flash_attn_with_kvcache = fake_kernel(_contract("flash_attn_with_kvcache"))  # type: ignore[attr-defined]
    cute.flash_attn_varlen_func = fake_kernel(_contract("flash_attn_varlen_func"))  # type: ignore[attr-defined]
    top.cute = cute  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flash_attn", top)
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    monkeypatch.setitem(sys.modules, MODULE, types.ModuleType(MODULE))  # dataclasses look it up


# ---- the driver ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    cycle: str  # a cycle of the model, by name
    bs: int
    raw_bs: int | None = None  # a replay padded up to a captured size: the real requests
    forwards: int = 1  # forward calls after the setup


def capture_all(sizes: tuple[int, ...]) -> tuple[Step, ...]:
    """CudaGraphRunner.capture: largest batch first, capture-time setup, two warm-up forwards."""
    return tuple(Step("capture warm-up", bs, forwards=2) for bs in sorted(sizes, reverse=True))


def eager(bs: int) -> Step:
    return Step("eager", bs)


def replay(bs: int, raw_bs: int | None = None) -> Step:
    return Step("replay", bs, raw_bs)


GRAPH_INIT = Step("graph init", 0)  # the graph runner is built: the model's graph_init methods

SGLANG_SCHEDULES: dict[str, tuple[Step, ...]] = {
    # --disable-cuda-graph: init_forward_metadata + forward, nothing else (a class that
    # allocates only in init_cuda_graph_state raises here, as it would in the engine).
    "graphs-disabled": (eager(2), eager(1), eager(2)),
    # A hybrid backend's half: graph state built, then eager steps only.
    "graph-state-then-eager": (GRAPH_INIT, eager(2), eager(1)),
    # Graphs enabled late (a role switch): eager steps first, then the graph runner.
    "graphs-late": (eager(2), GRAPH_INIT, *capture_all((1, 2)), replay(1), eager(2)),
    # Capture every size, replay (one padded), eager steps in between, a re-capture that sees
    # what the replays left, more replays.
    "graphs": (
        GRAPH_INIT,
        *capture_all((1, 2)),
        replay(1),
        replay(2),
        replay(2, raw_bs=1),
        eager(2),
        replay(1),
        eager(1),
        *capture_all((1, 2)),
        replay(2),
        replay(1),
        eager(2),
    ),
    # Orders the model allows beyond SGLang's own: a small capture first, eager before the
    # larger capture, replays of both.
    "graphs-small-first": (
        GRAPH_INIT,
        Step("capture warm-up", 1, forwards=2),
        eager(2),
        replay(1),
        Step("capture warm-up", 2, forwards=2),
        replay(2, raw_bs=1),
        replay(1),
    ),
}


def _seq_lens(index: int, step: Step) -> torch.Tensor:
    if "capture" in step.cycle:
        return torch.full((step.bs,), CAPTURE_FILL, dtype=torch.int32)
    raw = step.bs if step.raw_bs is None else step.raw_bs
    real = [(3 * index + 2 * b) % 4 + 1 for b in range(raw)]  # 1..4: within every page table
    return torch.tensor(real + [CAPTURE_FILL] * (step.bs - raw), dtype=torch.int32)


def _qkv(index: int, call: int, bs: int) -> dict[str, torch.Tensor]:
    base = torch.arange(bs * 4, dtype=torch.float32).view(bs, 4) / 8 + index + call / 4
    return {"q": base, "k": base + 0.5, "v": base - 0.5}


def _call(obj: object, name: str, values: dict[str, Any]) -> Any:
    method = getattr(obj, name)
    code = method.__func__.__code__
    params = code.co_varnames[1 : code.co_argcount]
    missing = [p for p in params if p not in values]
    if missing:
        raise TypeError(f"driver has no value for {name}({', '.join(missing)})")
    return method(*(values[p] for p in params))


def _driven_classes(namespace: dict[str, Any], source: str, model: Lifecycle) -> list[type]:
    names = [n.name for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]
    return [namespace[n] for n in names if all(hasattr(namespace[n], m) for m in model.requires)]


def drive(
    namespace: dict[str, Any],
    source: str,
    model: Lifecycle,
    schedule: tuple[Step, ...],
    attrs: dict[str, Callable[[], Any]],
) -> list[Any]:
    """Run every class the model applies to through `schedule`; collect each forward's return
    value and what the kernels read."""
    cycles = {c.name: c for c in model.cycles}
    outputs: list[Any] = []
    classes = _driven_classes(namespace, source, model)
    assert classes, "no class in the source has the model's methods"
    for cls in classes:
        _KERNEL_LOG.clear()
        obj = cls()
        for attr, make in attrs.items():
            setattr(obj, attr, make())
        for name in model.init:
            if name != "__init__" and hasattr(obj, name):
                _call(obj, name, {"max_bs": MAX_BS, "n": MAX_BS})
        forwards = [f for f in model.forward if hasattr(obj, f)]
        try:
            _steps(obj, cls, model, schedule, cycles, forwards, outputs)
        except AttributeError as exc:  # state the engine would not have built either
            outputs.append((cls.__name__, "raised", str(exc)))
        outputs.append((cls.__name__, "kernel reads", list(_KERNEL_LOG)))
    return outputs


def _steps(
    obj: Any,
    cls: type,
    model: Lifecycle,
    schedule: tuple[Step, ...],
    cycles: dict[str, Any],
    forwards: list[str],
    outputs: list[Any],
) -> None:
    for index, step in enumerate(schedule):
        if step is GRAPH_INIT:
            for name in model.graph_init:
                if hasattr(obj, name):
                    _call(obj, name, {"max_bs": MAX_BS, "n": MAX_BS})
            continue
        cycle = cycles[step.cycle]
        lens = _seq_lens(index, step)
        values: dict[str, Any] = {"bs": step.bs, "seq_lens": lens, "x": lens}
        for name in cycle.setup:
            if hasattr(obj, name):
                _call(obj, name, values)
        if not cycle.runs_forward:
            continue
        forward = forwards[index % len(forwards)]
        for call in range(step.forwards):
            result = _call(obj, forward, {**values, **_qkv(index, call, step.bs)})
            outputs.append((cls.__name__, step.cycle, step.bs, result))


# ---- poisoned runs -------------------------------------------------------------------------------


@dataclass
class Run:
    outputs: list[Any] | None
    error: str = ""
    poisoned: int = 0  # how many times the poisoned allocation ran


def run(
    source: str,
    model: Lifecycle,
    schedule: tuple[Step, ...],
    attrs: dict[str, Callable[[], Any]],
    site: Site | None = None,
    pattern: str = "",
    page_size: int = PAGE_SIZE,
) -> Run:
    hits = [0]

    def poison(t: torch.Tensor, pattern: str) -> torch.Tensor:
        hits[0] += 1
        return t.fill_(poison_value(t.dtype, pattern))

    text = source if site is None else _poisoned_variant(source, site, pattern)
    namespace: dict[str, Any] = {
        "__name__": MODULE,
        "_zo_poison": poison,
        "my_kernel": my_kernel,
        "MAX_BS": MAX_BS,
        "register": register,
        "make_helper": make_helper,
    }
    _PAGE_SIZE[0] = page_size
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(text, "backend.py", "exec"), namespace)
            outputs = drive(namespace, source, model, schedule, attrs)
    except Exception as exc:
        if site is None:
            raise
        return Run(None, f"{type(exc).__name__}: {exc}", hits[0])
    finally:
        _PAGE_SIZE[0] = PAGE_SIZE
    return Run(outputs, "", hits[0])


# ---- the cases -----------------------------------------------------------------------------------


def _lens_arg() -> torch.Tensor:
    return torch.tensor([2, 3], dtype=torch.int32)


def _table() -> torch.Tensor:
    return torch.arange(MAX_BS * 16, dtype=torch.int32).view(MAX_BS, 16)


@dataclass(frozen=True)
class Case:
    source: str
    # Static verdict per target, as tests/test_lifecycles.py asserts it (a tuple: any of these).
    expected: dict[str, Verdict | tuple[Verdict, ...]]
    # Unsafe targets whose early read the driver sees in what it collects: those must diverge.
    observable: frozenset[str] = frozenset()
    attrs: dict[str, Callable[[], Any]] = field(default_factory=dict)  # set on `self` after init
    model: Lifecycle = SGLANG
    options: AnalysisOptions | None = None
    schedules: dict[str, tuple[Step, ...]] = field(default_factory=lambda: SGLANG_SCHEDULES)
    page_size: int = PAGE_SIZE


LENS = "self.lens = torch.zeros(max_bs)"
SUM = "return q * self.lens.sum()"
PT = "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)"
VARLEN_PT = "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens_arg, page_table=self.pt)"
KV = "self.cu = torch.zeros(max_bs + 1, dtype=torch.int32)"
REFRESH = """
def _refresh(self, seq_lens):
    self.lens.copy_(seq_lens)
"""
REFRESH_EARLY = """
def _refresh(self, seq_lens):
    if seq_lens is None:
        return
    self.lens.copy_(seq_lens)
"""
IF_CALLS = """
def _enabled(self, bs):
    return bs > 0

def _refresh(self, seq_lens):
    self.lens.copy_(seq_lens)
    return True
"""
PEEK = """
def _peek(self):
    return self.lens.sum()
"""
IDLE = """
def idle_stats(self):
    return self.lens.sum()
"""
CHILD = (
    "\n\nclass Child(Backend):\n"
    "    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):\n        pass\n"
)
PAIR = "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)\nself.lens = torch.zeros(max_bs, dtype=torch.int32)"
REQ_TO_TOKEN = "self.req_to_token = torch.arange(max_bs * 4, dtype=torch.int32).view(max_bs, 4)"

CASES: dict[str, Case] = {
    # ---- from tests/test_lifecycles.py (same builder, same code) ----
    "warmup-read-before-replay-write": Case(
        backend(LENS, "self.bs = bs", "self.lens.copy_(seq_lens)", SUM),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "written-in-full-by-every-setup": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM), {"self.lens": S}
    ),
    "eager-setup-without-write": Case(
        backend(
            LENS,
            "self.lens.fill_(1)",
            "self.lens.copy_(seq_lens)",
            SUM,
            eager="self.other = seq_lens",
        ),
        # A wrapper may build the graph state and then run only eager steps on this object.
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "init-buffer-written-only-with-graphs": Case(
        backend(
            "self.lens.fill_(1)",
            "self.lens.fill_(2)",
            "self.lens.copy_(seq_lens)",
            SUM,
            eager="self.other = seq_lens",
            extra="def __init__(self, max_bs=MAX_BS):\n    self.lens = torch.zeros(max_bs)\n",
        ),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),  # graphs disabled: nothing writes before the read
    ),
    "partial-writes-full-read": Case(
        backend(LENS, "self.lens[:bs].copy_(seq_lens)", "self.lens[:bs].copy_(seq_lens)", SUM),
        {"self.lens": P},
    ),
    "page-table-coupled-partly-written": Case(
        backend(
            PT, "self.pt[:bs, :2].copy_(seq_lens)", "self.pt[:bs, :2].copy_(seq_lens)", VARLEN_PT
        ),
        {"self.pt": P},
        attrs={"lens_arg": _lens_arg},
    ),
    "page-table-never-written": Case(
        backend(PT, "pass", "pass", VARLEN_PT),
        {"self.pt": U},
        observable=frozenset({"self.pt"}),
        attrs={"lens_arg": _lens_arg},
    ),
    "new-kv-lengths-unread-without-new-kv": Case(
        backend(
            KV,
            "",
            "",
            "return flash_attn_with_kvcache(q, k, v, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)",
        ),
        {"self.cu": S},
        attrs={"l": _lens_arg},
    ),
    "new-kv-lengths-read-with-new-kv": Case(
        backend(
            KV,
            "",
            "",
            "return flash_attn_with_kvcache(q, k, v, k=q, v=q, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)",
        ),
        {"self.cu": U},
        observable=frozenset({"self.cu"}),
        attrs={"l": _lens_arg},
    ),
    "unknown-kernel-after-full-write": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.fill_(1)", "my_kernel(self.lens)\nreturn q"),
        {"self.lens": S},
    ),
    "unknown-kernel-capture-unwritten": Case(
        backend(LENS, "", "self.lens.fill_(1)", "my_kernel(self.lens)\nreturn q"), {"self.lens": P}
    ),
    "helper-methods-inlined": Case(
        backend(LENS, "self._refresh(seq_lens)", "self._refresh(seq_lens)", SUM, REFRESH),
        {"self.lens": S},
    ),
    # Unsafe on the path where seq_lens is None, which SGLang's runner never takes.
    "helper-early-return": Case(
        backend(LENS, "self._refresh(seq_lens)", "self._refresh(seq_lens)", SUM, REFRESH_EARLY),
        {"self.lens": U},
    ),
    "locals-of-methods-do-not-alias": Case(
        backend(
            LENS,
            "view = self.lens",
            "view = self.lens",
            "view = q\nview.fill_(1)\nreturn self.lens.sum()",
        ),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "self-passed-to-unknown-code": Case(
        backend(LENS, "register(self)\nself.lens.fill_(1)", "self.lens.fill_(1)", SUM),
        {"self.lens": P},
    ),
    "subclass-overrides-replay": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM) + CHILD,
        {"self.lens": P},
    ),
    "dict-entry-constant-key": Case(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            'return q * self.meta["lens"].sum()',
        ),
        {'self.meta["lens"]': S},
    ),
    "dict-entry-read-by-get": Case(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.total = self.meta.get("lens").sum()\nself.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            "return q",
        ),
        {'self.meta["lens"]': P},
    ),
    "user-declared-lifecycle": Case(
        RUNNER,
        {"self.buf": S},
        model=RUNNER_MODEL[0],
        options=AnalysisOptions(lifecycles=RUNNER_MODEL),
        schedules={"runs": (Step("run", 2), Step("run", 1), Step("run", 2))},
    ),
    "stored-callable-not-handed-self": Case(
        backend(
            "self.lens = torch.zeros(max_bs)\nself.helper_fn = make_helper()",
            "self.helper_fn(bs)\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            SUM,
        ),
        {"self.lens": S},
    ),
    "inherited-hook-handed-self": Case(
        backend(
            LENS, "x = 1 + self.inherited_hook(bs)\nself.lens.fill_(1)", "self.lens.fill_(1)", SUM
        ),
        {"self.lens": P},
        attrs={"inherited_hook": lambda: lambda bs: 0},
    ),
    "self-calls-in-if-tests-inlined": Case(
        backend(
            LENS,
            "if self._enabled(bs):\n    pass\nif not self._refresh(seq_lens):\n    pass",
            "self.lens.fill_(1)",
            SUM,
            IF_CALLS,
        ),
        {"self.lens": S},
    ),
    # Unsafe, but the value read only decides an `if` whose branches both do nothing.
    "inlined-if-test-reads-first": Case(
        backend(
            LENS,
            "if self._peek():\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            PEEK,
        ),
        {"self.lens": U},
    ),
    "if-test-read-not-first": Case(
        backend(
            LENS,
            "if self._peek() > 0:\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            PEEK,
        ),
        {"self.lens": P},
    ),
    "method-outside-model-touches-buffer": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM, IDLE),
        {"self.lens": P},
    ),
    # EAGER_FRESH's page table is the lengths themselves, one column: pages of 4 tokens keep the
    # kernel inside it for lengths 1..4.
    "record-view-written-by-every-setup": Case(
        with_record(backend(STATE, CAPTURE_VIEWS, REPLAY_VIEWS, FORWARD_FA, eager=EAGER_FRESH)),
        {'self.state["lens"]': S},
        page_size=4,
    ),
    "record-view-partly-written-by-replay": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS,
                REPLAY_VIEWS.replace("meta.lens.copy_(seq_lens)", "meta.lens[:2].copy_(seq_lens)"),
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        {'self.state["lens"]': P},
        page_size=4,
    ),
    "record-view-bound-unwritten-at-capture": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS.replace("lens.copy_(seq_lens)\n", ""),
                REPLAY_VIEWS,
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        # A replay may come before the first capture too: `unproven` is as right as `unsafe`.
        {'self.state["lens"]': (U, P)},
        observable=frozenset({'self.state["lens"]'}),
        page_size=4,
    ),
    "computed-key-store-may-replace-entry": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS.replace("self.graph_meta[bs] = meta", "self.state[bs] = meta"),
                'self.state["lens"].copy_(seq_lens)\n'
                'self.forward_metadata = Meta(lens=self.state["lens"], table=seq_lens[:, None])',
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        {'self.state["lens"]': (U, P)},  # the static test asserts only "not safe"
        page_size=4,
    ),
    "coupled-group-lengths-written-table-not": Case(
        backend(
            PAIR,
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt)",
        ),
        {"self.pt": U, "self.lens": S},
        observable=frozenset({"self.pt"}),
    ),
    "unrelated-calls-form-no-group": Case(
        backend(
            PAIR,
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "o = flash_attn_varlen_func(q, k, v, seqused_k=self.other, page_table=self.pt)\n"
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt2)",
        ),
        {"self.pt": U, "self.lens": S},
        observable=frozenset({"self.pt"}),  # the first call's output is dropped; its reads are not
        attrs={"other": _lens_arg, "pt2": _table},
    ),
    # ---- new: the mechanisms a `safe` most often rests on, executed ----
    # Both halves of a coupled pair live in a dict, written in full by every setup, read by the
    # kernel through the same constant keys.
    "new-dict-of-buffers-page-table": Case(
        backend(
            'self.meta = {"page_table": torch.zeros(max_bs, 4, dtype=torch.int32), '
            '"lens": torch.zeros(max_bs, dtype=torch.int32)}\n' + REQ_TO_TOKEN,
            'self.meta["lens"].fill_(1)\nself.meta["page_table"].copy_(self.req_to_token)',
            'self.meta["lens"].copy_(seq_lens)\nself.meta["page_table"].copy_(self.req_to_token)',
            'return flash_attn_varlen_func(q, k, v, seqused_k=self.meta["lens"], '
            'page_table=self.meta["page_table"])',
        ),
        {'self.meta["page_table"]': S, 'self.meta["lens"]': S},
    ),
    # A page table and the lengths that bound its reads, each written in full by every setup.
    "new-page-table-and-lengths-written-in-full": Case(
        backend(
            "self.pt = torch.zeros(max_bs, 4, dtype=torch.int32)\n"
            "self.lens = torch.zeros(max_bs, dtype=torch.int32)\n" + REQ_TO_TOKEN,
            "self.lens.fill_(1)\nself.pt.copy_(self.req_to_token)",
            "self.lens.copy_(seq_lens)\nself.pt.copy_(self.req_to_token)",
            "return flash_attn_with_kvcache(q, k, v, cache_seqlens=self.lens, page_table=self.pt)",
        ),
        {"self.pt": S, "self.lens": S},
    ),
    # Per-batch-size records of [:bs] views of zeros lengths *and* a zeros page table: each
    # setup writes both views in full, the forward reads them through the record.
    "new-record-views-of-lengths-and-table": Case(
        with_record(
            backend(
                STATE.replace("torch.ones(max_bs, 4)", "torch.zeros(max_bs, 4, dtype=torch.int32)"),
                CAPTURE_VIEWS,
                REPLAY_VIEWS,
                FORWARD_FA,
                eager=EAGER_FRESH.replace("seq_lens[:, None]", "seq_lens[:, None].repeat(1, 4)"),
            )
        ),
        {'self.state["lens"]': S, 'self.state["table"]': S},
    ),
}
# Not executed: the classes of tests/test_lifecycles.py that no lifecycle model applies to
# (`Plain`, `Plugin`: unproven, nothing to drive), and the phase-table test (same source as
# "warmup-read-before-replay-write").


def _findings(case: Case) -> dict[tuple[int, int], Finding]:
    result = analyse_source(case.source, "backend.py", case.options)
    assert not result.errors, result.errors
    return {(f.line, f.col): f for f in result.findings if f.rule == "ZO001"}


def _trials(case: Case, site: Site) -> Iterator[tuple[str, str, Run, list[Any]]]:
    for schedule_name, schedule in case.schedules.items():
        args = (case.source, case.model, schedule, case.attrs)
        base = run(*args, page_size=case.page_size)
        again = run(*args, page_size=case.page_size)
        assert base.outputs is not None and again.outputs is not None
        assert difference(base.outputs, again.outputs) is None, "zeros run is not deterministic"
        for pattern in PATTERNS:
            poisoned = run(*args, site, pattern, page_size=case.page_size)
            yield schedule_name, pattern, poisoned, base.outputs


@pytest.mark.usefixtures("fake_flash_attn")
@pytest.mark.parametrize("name", list(CASES))
def test_lifecycle_case_executed(name: str) -> None:
    case = CASES[name]
    findings = _findings(case)
    sites = {s.key: s for s in find_sites(case.source)}
    assert set(findings) <= set(sites), "a finding at no zeros call"
    by_target = {f.target: f for f in findings.values()}
    assert set(by_target) == set(case.expected), sorted(by_target)
    for target, finding in by_target.items():
        allowed = case.expected[target]
        allowed = allowed if isinstance(allowed, tuple) else (allowed,)
        assert finding.verdict in allowed, f"{target}: {finding.verdict}: {finding.message}"
        site = sites[(finding.line, finding.col)]
        diverged: list[str] = []
        ran = 0  # poisoned runs in which the allocation ran (not every schedule builds it)
        for schedule, pattern, poisoned, base in _trials(case, site):
            where = f"{target} poisoned {pattern!r}, schedule {schedule!r}"
            if poisoned.error:
                diverged.append(f"{where}: raised {poisoned.error}")
            else:
                ran += poisoned.poisoned > 0
                d = difference(base, poisoned.outputs)
                if d:
                    diverged.append(f"{where}: {d}")
        assert ran, f"{target}: the allocation never ran"
        if finding.verdict is Verdict.SAFE:
            assert not diverged, "UNSOUND: safe, yet poisoning changed the run:\n" + "\n".join(
                diverged
            )
        elif finding.verdict is Verdict.UNSAFE and target in case.observable:
            assert diverged, f"{target}: said unsafe, but every poisoned run was equivalent"


# ---- the stand-ins read what the contracts say, no more, no less --------------------------------


def test_stand_in_kernels_read_what_the_contracts_say() -> None:
    varlen = fake_kernel(_contract("flash_attn_varlen_func"))
    kvcache = fake_kernel(_contract("flash_attn_with_kvcache"))
    q = torch.ones(2, 4)
    lens = torch.tensor([2, 1], dtype=torch.int32)
    table = torch.tensor([[5, 6, 7], [8, 9, 10]], dtype=torch.int32)
    out = varlen(q, q, q, seqused_k=lens, page_table=table)
    beyond = table.clone()
    beyond[0, 2], beyond[1, 1:] = 2**30, -1  # past each row's length: never read
    assert torch.equal(varlen(q, q, q, seqused_k=lens, page_table=beyond), out)
    inside = table.clone()
    inside[0, 1] = -1  # within row 0's two pages
    assert not torch.equal(varlen(q, q, q, seqused_k=lens, page_table=inside), out)
    nan_q = q.clone()
    nan_q[1, 3] = math.nan
    assert torch.isnan(varlen(nan_q, q, q, seqused_k=lens, page_table=table)).all()
    with pytest.raises(IllegalAccess):  # a length past the whole table
        varlen(q, q, q, seqused_k=torch.tensor([2, 2**30], dtype=torch.int32), page_table=table)
    # A length past its row reads on into the next row, as the kernel's pointer arithmetic does.
    long = varlen(q, q, q, seqused_k=torch.tensor([4, 1], dtype=torch.int32), page_table=table)
    assert not torch.equal(long, varlen(q, q, q, seqused_k=lens, page_table=table))
    # cu_seqlens_k_new: unread unless new keys/values come with it.
    cu, garbage = torch.zeros(3, dtype=torch.int32), torch.full((3,), 2**30, dtype=torch.int32)
    assert torch.equal(
        kvcache(q, q, q, cache_seqlens=lens, cu_seqlens_k_new=cu),
        kvcache(q, q, q, cache_seqlens=lens, cu_seqlens_k_new=garbage),
    )
    assert not torch.equal(
        kvcache(q, q, q, k=q, v=q, cache_seqlens=lens, cu_seqlens_k_new=cu),
        kvcache(q, q, q, k=q, v=q, cache_seqlens=lens, cu_seqlens_k_new=garbage),
    )
    _KERNEL_LOG.clear()
