"""Lifecycle models: the order in which a class's methods run, declared as data.

A buffer stored on `self` in one method and read in another can only be judged with that order
known. A model names the methods that allocate (`init`), then the cycles the driver repeats in
any order and any number of times (capture warm-up, replay, eager), each a list of setup
methods followed by one of the forward methods. Methods a class does not define are skipped
(the base class default is a no-op in the engines modelled here).

The analysis assumes what a model declares: these methods, and the `self` methods they call, are
the only code that reads the object's buffers, apart from callees explicitly handed a buffer. It
checks what it can see in the module: a class is judged only if the methods the model runs are
its own plain `def`s (no class-body rebinding, no decorator but known transparent ones, no
generator or coroutine), its bases are none or the model's `default_bases`, and no class of the
module derives from it. Subclasses in other modules are assumed not to change those methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cycle:
    name: str  # "capture warm-up", "replay", "eager"
    setup: tuple[str, ...]  # run in order
    runs_forward: bool = True


@dataclass(frozen=True)
class Lifecycle:
    name: str
    requires: tuple[str, ...]  # a class defining all of these gets this model
    init: tuple[str, ...]
    cycles: tuple[Cycle, ...]
    forward: tuple[str, ...]  # any one of these runs after a cycle's setup
    source: str
    # Methods the class may inherit instead of defining, whose inherited default is known to touch
    # no buffer (a no-op, a NotImplementedError, or a dispatch to methods the model runs itself).
    optional: tuple[str, ...] = ()
    # The base classes those defaults come from (qualified names). A class that leaves an optional
    # method undefined must derive from these only, or from nothing: another base may define it.
    default_bases: tuple[str, ...] = ()

    def method_names(self) -> frozenset[str]:
        """Every method the model may call on the object."""
        cycles = {m for c in self.cycles for m in c.setup}
        return frozenset({*self.init, *cycles, *self.forward, *self.optional, *self.requires})

    def matches(self, methods: set[str]) -> bool:
        """Every method the model runs must be defined by the class (or be a declared harmless
        default): a method we cannot see could read anything."""
        if not all(m in methods for m in self.requires):
            return False
        run = {m for c in self.cycles for m in c.setup} | set(self.init[1:])
        missing = (run - methods) - set(self.optional)
        if missing:
            return False
        return not self.forward or any(f in methods for f in self.forward)


_SGLANG_FORWARD = ("forward_decode", "forward_extend", "forward_mixed", "forward")
# sglang/srt/layers/attention/base_attn_backend.py (0.5.23): `forward` only dispatches to
# forward_decode/forward_extend/forward_mixed (which the model runs itself when defined; the base
# versions raise NotImplementedError), init_forward_metadata_in_graph is documented "Default: no-op".
_SGLANG_DEFAULTS = ("forward", "forward_mixed", "forward_extend", "init_forward_metadata_in_graph")
_SGLANG_BASE = ("sglang.srt.layers.attention.base_attn_backend.AttentionBackend",)

BUILTIN_LIFECYCLES: tuple[Lifecycle, ...] = (
    Lifecycle(
        name="sglang-attention-backend",
        requires=("init_cuda_graph_state", "init_forward_metadata_capture_cuda_graph", "init_forward_metadata_replay_cuda_graph"),
        init=("__init__", "init_cuda_graph_state"),
        cycles=(
            # CudaGraphRunner.capture_one_batch_size: capture-time metadata, then warm-up
            # forwards that execute for real, then the recorded forward (replayed later).
            Cycle("capture warm-up", ("init_forward_metadata_capture_cuda_graph",)),
            Cycle("replay", ("init_forward_metadata_replay_cuda_graph",)),
            Cycle("eager", ("init_forward_metadata",)),
        ),
        forward=_SGLANG_FORWARD,
        source="sglang AttentionBackend + CudaGraphRunner (capture_one_batch_size, replay)",
        optional=_SGLANG_DEFAULTS,
        default_bases=_SGLANG_BASE,
    ),
    Lifecycle(
        name="sglang-attention-backend-graph-hooks",
        requires=("init_cuda_graph_state", "init_forward_metadata_out_graph"),
        init=("__init__", "init_cuda_graph_state"),
        cycles=(
            # out_graph runs eagerly before capture and before each replay; in_graph is
            # recorded at capture and re-executed by every replay, before the forward kernels.
            Cycle("capture warm-up", ("init_forward_metadata_out_graph", "init_forward_metadata_in_graph")),
            Cycle("replay", ("init_forward_metadata_out_graph", "init_forward_metadata_in_graph")),
            Cycle("eager", ("init_forward_metadata",)),
        ),
        forward=_SGLANG_FORWARD,
        source="sglang 0.5.x AttentionBackend (init_forward_metadata_out_graph / _in_graph)",
        optional=_SGLANG_DEFAULTS,
        default_bases=_SGLANG_BASE,
    ),
    Lifecycle(
        name="sglang-cuda-graph-runner",
        requires=("capture_one_batch_size", "replay_prepare", "capture", "replay"),
        init=("__init__",),
        # sglang's speculative workers also call replay_prepare on its own (then replay with
        # skip_attn_backend_init), so it is a cycle of its own too.
        cycles=(Cycle("capture", ("capture",), runs_forward=False), Cycle("replay", ("replay",), runs_forward=False),
                Cycle("replay prepare", ("replay_prepare",), runs_forward=False)),
        forward=(),
        source="sglang CudaGraphRunner",
    ),
    Lifecycle(
        name="vllm-attention-metadata-builder",
        requires=("build", "build_for_cudagraph_capture"),
        init=("__init__",),
        cycles=(Cycle("capture", ("build_for_cudagraph_capture",), runs_forward=False), Cycle("step", ("build",), runs_forward=False)),
        forward=(),
        source="vllm v1 AttentionMetadataBuilder",
    ),
)  # fmt: skip


def lifecycles_from_config(raw: dict[str, Any]) -> tuple[Lifecycle, ...]:
    """`[tool.zeroopt.lifecycles.NAME]` with requires, init, forward and
    `cycles = [{name = "replay", setup = ["prepare"]}, ...]`."""
    models = []
    for name, spec in raw.items():
        if not isinstance(spec, dict):
            raise ValueError(f"lifecycles.{name}: expected a table")
        try:
            cycles = tuple(
                Cycle(str(c["name"]), tuple(c.get("setup", ())), bool(c.get("runs_forward", True)))
                for c in spec.get("cycles", ())
            )
            models.append(
                Lifecycle(
                    name=name,
                    requires=tuple(spec.get("requires", ())),
                    init=tuple(spec.get("init", ("__init__",))),
                    cycles=cycles,
                    forward=tuple(spec.get("forward", ())),
                    source=f"[tool.zeroopt.lifecycles.{name}]",
                )
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"lifecycles.{name}: {exc}") from exc
        if not models[-1].requires:
            raise ValueError(f"lifecycles.{name}: `requires` must name at least one method")
    return tuple(models)
