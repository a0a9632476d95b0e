"""Lifecycle models: the order in which a class's methods run, declared as data.

A buffer stored on `self` in one method and read in another can only be judged with that order
known. A model names the methods that always run first (`init`), then the cycles the driver
repeats in any order and any number of times (capture warm-up, replay, eager), each a list of
setup methods followed by one of the forward methods. Names carry no meaning: which methods run
under which configuration is data. A cycle marked `graphs_only` runs only when CUDA graphs are
enabled, and `graph_init` methods (run only then, once, by the graph runner, which may be built
after eager steps) come before it; `graph_first` names the cycles of which one runs
first after each `graph_init` (a replay needs a captured graph). Every built-in entry carries the
file and line of the engine's real call site. `witness` names the cycles the engine runs straight
after graph init on its ordinary start-up: lifecycle_witness.py builds that one schedule, used
only to show a read before any write (`unsafe`), never to prove. Methods a class does not define are skipped (the
base class default is a no-op in the engines modelled here).

The analysis assumes what a model declares: these methods, and the `self` methods they call, are
the only code that reads the object's buffers, apart from callees explicitly handed a buffer. It
checks what it can see in the module: a class is judged only if the methods the model runs are
its own plain `def`s (no class-body rebinding, no decorator but known transparent ones, no
generator or coroutine, no class decorator, no store into the class or of an attribute named like
a method anywhere in the module, no computed setattr or `exec`), its bases are none, object, or
the model's `default_bases` (and `super()` reaches only `harmless_super` methods of those), no
class of the module derives from it, and no code of the module reaches its buffers or methods
other than through a method's own `self` (a module function is treated like a method the model
does not run), or through a wrapper that forwards every hook to objects it made, in its own
hook of the same name (lifecycle_delegation.py). Subclasses and callers in other modules are assumed not to change those methods or
call them out of order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cycle:
    name: str  # "capture warm-up", "replay", "eager"
    setup: tuple[str, ...]  # run in order
    runs_forward: bool = True
    graphs_only: bool = False  # runs only with CUDA graphs enabled
    called_at: str = ""  # the engine's call site (file:line at a version) that runs it


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
    # Methods run only when CUDA graphs are enabled, before the graphs-only cycles, each time the
    # graph runner is built (zero or more times, after any number of eager cycles).
    graph_init: tuple[str, ...] = ()
    graph_first: tuple[str, ...] = ()  # cycle names: one of them runs first after graph_init
    called_at: str = ""  # where the engine calls `init` and `graph_init` (file:line at a version)
    # Methods of `default_bases` that a `super().m(...)` may call: they touch no buffer and call
    # no method of the object (read in the base's source at the version in `source`).
    harmless_super: tuple[str, ...] = ()
    # Methods whose presence means the class may run under another engine generation, which
    # calls other methods: such a class is not judged under this model.
    excludes: tuple[str, ...] = ()
    # Witness schedules, used only to show a read (`unsafe`), never to prove anything: cycles the
    # engine runs straight after `init` and `graph_init` on its ordinary start-up (the graph
    # runner captures in its constructor). Each gives one straight-line program (init methods,
    # graph_init methods, the cycle's setup, one forward): a read before any write on it is a
    # read a real execution performs. `witness_at` cites that call site.
    witness: tuple[str, ...] = ()
    witness_at: str = ""
    # On a witness schedule, the arguments the engine passes as tensors: (method, position
    # after `self`). An index by one of them (`table[req_pool_indices, :]`) is then a gather,
    # which copies the indexed rows: a read. `witness_tensors_at` cites the call site.
    witness_tensors: tuple[tuple[str, int], ...] = ()
    witness_tensors_at: str = ""

    def allocating(self) -> tuple[str, ...]:
        """The methods whose allocations the model judges: they run before every cycle."""
        return (*self.init, *self.graph_init)

    def method_names(self) -> frozenset[str]:
        """Every method the model may call on the object."""
        cycles = {m for c in self.cycles for m in c.setup}
        return frozenset(
            {*self.init, *self.graph_init, *cycles, *self.forward, *self.optional, *self.requires}
        )

    def matches(self, methods: set[str]) -> bool:
        """Every method the model runs must be defined by the class (or be a declared harmless
        default): a method we cannot see could read anything."""
        if not all(m in methods for m in self.requires):
            return False
        run = {m for c in self.cycles for m in c.setup} | set(self.init[1:]) | set(self.graph_init)
        missing = (run - methods) - set(self.optional)
        if missing:
            return False
        return not self.forward or any(f in methods for f in self.forward)


_SGLANG_FORWARD = ("forward_decode", "forward_extend", "forward_mixed", "forward")
# sglang/srt/layers/attention/base_attn_backend.py (0.5.23): `forward` only dispatches to
# forward_decode/forward_extend/forward_mixed (which the model runs itself when defined; the base
# versions raise NotImplementedError), init_forward_metadata_in_graph is documented "Default: no-op".
_SGLANG_DEFAULTS = ("forward", "forward_mixed", "forward_extend", "init_forward_metadata_in_graph")
# The base defines no __init__ (sglang 0.5.23 layers/attention/base_attn_backend.py:38-556): a
# `super().__init__()` runs object's.
_SGLANG_SUPER = ("__init__",)
_SGLANG_BASE = ("sglang.srt.layers.attention.base_attn_backend.AttentionBackend",)

_SG = "sglang 0.5.23 sglang/srt/"
_SG4 = "sglang 0.4.6.post5 sglang/srt/"
_VL = "vllm 0.33.0 vllm/"
# SGLang calls init_cuda_graph_state only from the decode CUDA-graph runner, which ModelRunner
# builds only with CUDA graphs enabled (`--disable-cuda-graph` never calls it), once per backend
# object (pdmux builds separate backends for its group: model_runner_components/
# attention_backend_setup.py:115), possibly after eager steps: ensure_decode_cuda_graphs
# (model_executor/model_runner.py:1640) enables graphs on a role switch, idempotently. No capture
# needs to follow for a given object: wrappers forward init_cuda_graph_state to inner backends
# whose capture hooks they may never call (layers/attention/hybrid_attn_backend.py:149-154
# initialises the prefill backend too, which then runs eager steps only).
_SG_GRAPH_INIT = (
    f"{_SG}model_executor/runner/decode_cuda_graph_runner.py:429 and :722 (maybe_init_pdmux); "
    f"{_SG4}model_executor/cuda_graph_runner.py (CudaGraphRunner.__init__)"
)
_SG_EAGER = f"{_SG}model_executor/runner/eager_runner.py:257, :328, :454 (init_forward_metadata)"
# The graph runner's constructor calls init_cuda_graph_state and then captures at once, before
# it returns: the first capture's warm-up follows graph init with no other step in between.
_SG_WITNESS = (
    f"{_SG4}model_executor/model_runner.py:304-305 (initialize: init_attention_backend() then "
    "init_cuda_graphs() at once), cuda_graph_runner.py:222/:224 (CudaGraphRunner.__init__: "
    "init_cuda_graph_state), :307 (self.capture()), :475 then :505-509 (capture_one_batch_size: "
    "init_forward_metadata_capture_cuda_graph, then the warm-up forwards); "
    f"{_SG}model_executor/runner/decode_cuda_graph_runner.py:429 (init_cuda_graph_state), :600 "
    "(self.capture() in the same __init__)"
)

# The capture setup's third argument is a tensor of request indices: CudaGraphRunner passes
# `self.req_pool_indices[:bs]` (an int32 tensor, :243), positionally (:475-478); the EAGLE
# multi-step backend passes `forward_batch.req_pool_indices` third (layers/attention/
# flashattention_backend.py:1966-1969). sglang 0.5.23 calls this hook from no runner.
_SG4_REQ_POOL_INDICES = (
    f"{_SG4}model_executor/cuda_graph_runner.py:243 (req_pool_indices = torch.zeros((max_bs,), "
    "dtype=torch.int32)), :400 (req_pool_indices = self.req_pool_indices[:bs]), :475-478 "
    "(passed third to init_forward_metadata_capture_cuda_graph)"
)

BUILTIN_LIFECYCLES: tuple[Lifecycle, ...] = (
    Lifecycle(
        name="sglang-attention-backend",
        requires=("init_cuda_graph_state", "init_forward_metadata_capture_cuda_graph", "init_forward_metadata_replay_cuda_graph"),
        init=("__init__",),
        graph_init=("init_cuda_graph_state",),
        cycles=(
            # CudaGraphRunner.capture_one_batch_size: capture-time metadata, then warm-up
            # forwards that execute for real, then the recorded forward (replayed later).
            Cycle("capture warm-up", ("init_forward_metadata_capture_cuda_graph",), graphs_only=True,
                  called_at=f"{_SG4}model_executor/cuda_graph_runner.py (capture_one_batch_size)"),
            Cycle("replay", ("init_forward_metadata_replay_cuda_graph",), graphs_only=True,
                  called_at=f"{_SG4}model_executor/cuda_graph_runner.py (replay_prepare)"),
            Cycle("eager", ("init_forward_metadata",), called_at=_SG_EAGER),
        ),
        forward=_SGLANG_FORWARD,
        source="sglang AttentionBackend + CudaGraphRunner (capture_one_batch_size, replay)",
        optional=_SGLANG_DEFAULTS,
        # Engines from 0.5.x on call out_graph/in_graph instead (sglang 0.5.23
        # layers/attention/base_attn_backend.py:55: the legacy hooks are removed from the ABC):
        # a class defining both generations may run under either, so it is not judged.
        excludes=("init_forward_metadata_out_graph",),
        default_bases=_SGLANG_BASE,
        harmless_super=_SGLANG_SUPER,
        called_at=_SG_GRAPH_INIT,
        witness=("capture warm-up",),
        witness_at=_SG_WITNESS,
        witness_tensors=(("init_forward_metadata_capture_cuda_graph", 2),),
        witness_tensors_at=_SG4_REQ_POOL_INDICES,
    ),
    Lifecycle(
        name="sglang-attention-backend-graph-hooks",
        requires=("init_cuda_graph_state", "init_forward_metadata_out_graph"),
        init=("__init__",),
        graph_init=("init_cuda_graph_state",),
        cycles=(
            # out_graph runs eagerly before capture and before each replay; in_graph is
            # recorded at capture and re-executed by every replay, before the forward kernels.
            Cycle("capture warm-up", ("init_forward_metadata_out_graph", "init_forward_metadata_in_graph"), graphs_only=True,
                  called_at=f"{_SG}model_executor/runner/decode_cuda_graph_runner.py:1400 (out_graph, in_capture=True), :638 (in_graph)"),
            Cycle("replay", ("init_forward_metadata_out_graph", "init_forward_metadata_in_graph"), graphs_only=True,
                  called_at=f"{_SG}model_executor/runner/decode_cuda_graph_runner.py:1812; model_executor/runner/metadata_glue_graph.py:108"),
            Cycle("eager", ("init_forward_metadata",), called_at=_SG_EAGER),
        ),
        forward=_SGLANG_FORWARD,
        source="sglang 0.5.x AttentionBackend (init_forward_metadata_out_graph / _in_graph)",
        optional=_SGLANG_DEFAULTS,
        default_bases=_SGLANG_BASE,
        harmless_super=_SGLANG_SUPER,
        called_at=_SG_GRAPH_INIT,
        witness=("capture warm-up",),
        witness_at=_SG_WITNESS,
    ),
    Lifecycle(
        name="sglang-cuda-graph-runner",
        requires=("capture_one_batch_size", "replay_prepare", "capture", "replay"),
        init=("__init__",),
        # sglang's speculative workers also call replay_prepare on its own (then replay with
        # skip_attn_backend_init), so it is a cycle of its own too. The runner object exists
        # only with graphs enabled; its own methods run in any order after __init__.
        cycles=(Cycle("capture", ("capture",), runs_forward=False), Cycle("replay", ("replay",), runs_forward=False),
                Cycle("replay prepare", ("replay_prepare",), runs_forward=False)),
        forward=(),
        source="sglang CudaGraphRunner",
        called_at=f"{_SG4}model_executor/model_runner.py (init_cuda_graphs)",
    ),
    Lifecycle(
        name="vllm-attention-metadata-builder",
        requires=("build", "build_for_cudagraph_capture"),
        init=("__init__",),
        cycles=(Cycle("capture", ("build_for_cudagraph_capture",), runs_forward=False, graphs_only=True,
                      called_at=f"{_VL}v1/worker/utils.py:357; v1/worker/gpu/model_states/encoder_only.py:227"),
                Cycle("step", ("build",), runs_forward=False,
                      called_at=f"{_VL}v1/worker/utils.py:348; v1/worker/gpu/model_states/encoder_only.py:229")),
        forward=(),
        source="vllm v1 AttentionMetadataBuilder",
        # vllm/v1/attention/backend.py:592 (0.33.0); its __init__ (line 613) only stores
        # kv_cache_spec, layer_names, vllm_config and device.
        default_bases=("vllm.v1.attention.backend.AttentionMetadataBuilder",),
        harmless_super=("__init__",),
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
