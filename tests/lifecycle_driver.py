"""A CPU driver for synthetic attention backends: runs each class in an order a lifecycle model
allows, with the opaque kernels replaced by stand-ins that read what their contracts say.

The order is the model's (`analysis/lifecycles.py`): init methods; then eager steps; with CUDA
graphs enabled, at some point the graph init methods (init_cuda_graph_state) once, a capture,
then replays, eager steps and re-captures in any order.

SGLang's runner is followed where the model leaves room: captures go largest batch first, each
running the capture-time setup then two warm-up forwards that execute for real (the recorded
third forward executes nothing at capture time; the replay cycle runs it); a capture uses
`seq_len_fill_value` lengths; a replay may pad a smaller batch up to a captured size, padding
its lengths with the fill value. Graph replay is emulated by calling the forward again after the
replay-time setup, which is how the analysis models it too.

The `flash_attn` kernels are CPU stand-ins built from their contracts in
`analysis/kernel_contracts.py`: every tensor argument the contract does not exempt is read in full,
`page_table` row b is read up to ceil(lengths[b] / page size) entries (in flat order: a length past
its row reads on into the next row, past the table is an emulated illegal memory access), and an
argument listed as unread unless others are passed is read only then. Every value read is summed
into a log and into the result, so no poisoned read can hide behind clamping or a discarded output.
`run` executes a program once, with one zeros allocation poisoned or none
(tests/test_lifecycles_executed.py runs every pattern and schedule).
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from tests.soundness.oracle import Site, poison_value
from tests.soundness.oracle import poisoned_variant as _poisoned_variant
from zeroopt.analysis.kernel_contracts import KERNEL_CONTRACTS, KernelContract
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES, Lifecycle

MAX_BS = 2  # small enough that every synthetic `copy_(seq_lens)` broadcasts for bs in {1, 2}
PAGE_SIZE = 1  # SGLang's FlashAttention backend default: one token per page, the most rows read
CAPTURE_FILL = 1  # CudaGraphRunner's seq_len_fill_value for FlashAttention backends
MODULE = "zo_lifecycle_case"

SGLANG = next(m for m in BUILTIN_LIFECYCLES if m.name == "sglang-attention-backend")


# ---- CPU stand-ins for the opaque kernels ---------------------------------------------------------

KERNEL_LOG: list[tuple[str, torch.Tensor]] = []  # (kernel, sums of what it read), per run
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
        KERNEL_LOG.append((contract.name, checksum))
        result = bound["q"].detach().to(torch.float64) + checksum.sum()
        out = bound.get("out")
        if isinstance(out, torch.Tensor):
            return out.copy_(result)
        return result

    kernel.__name__ = contract.name
    return kernel


def kernel_contract(name: str) -> KernelContract:
    return next(c for c in KERNEL_CONTRACTS if c.name == name)


def my_kernel(*tensors: torch.Tensor) -> None:
    """An opaque kernel: the worst case for what it does with its arguments is to read them."""
    KERNEL_LOG.append(("my_kernel", torch.stack([_checksum(t) for t in tensors])))


def register(obj: object) -> None:
    """Unknown code handed `self`: does nothing here (the analysis may not assume so)."""


def make_helper() -> Callable[..., None]:
    return lambda *args, **kwargs: None


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
        KERNEL_LOG.clear()
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
        outputs.append((cls.__name__, "kernel reads", list(KERNEL_LOG)))
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
