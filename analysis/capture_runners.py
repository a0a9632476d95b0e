"""Models of what a CUDA-graph runner's capture runs, declared as data with provenance.

A runner whose `__init__` allocates its static input buffers, stores them in a buffers object
and then captures (`self.capture()`) runs the model for real on those buffers before any replay
has copied real inputs into them: the capture's warm-up forwards (two per shape) and the
captured run itself execute the ForwardBatch built from `self.buffers.X[:bs]`. A model says,
for one family of runners, which base class gives that capture path, which methods of the base
it runs (a class overriding one of them is not matched: its version is unknown), which fields
the inherited path writes before the first forward (those are not read unwritten), which
ForwardBatch fields the model's forward is ASSUMED to read, and where each fact comes from
(file:line at the version). analysis/capture_inputs.py applies a model; it only ever shows a
read (`unsafe`), never proves anything.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecInputRead:
    """A field of a speculative-decoding input object that the worker's draft forward reads
    during the capture warm-up: the per-shape method builds the object from buffer views and
    hands it to the ForwardBatch, and the forward it runs reads the field (the ASSUMPTION, with
    the lines that show it in the engine's source)."""

    # Qualified names of the input class, and why its constructor only stores the field.
    cls: tuple[str, ...]
    cls_at: str
    field: str
    # The attribute called with the ForwardBatch that runs the draft forward (`w.draft_forward`).
    forward: str
    reads: str  # ASSUMPTION: what that forward does with the field, with file:line
    when: str  # the configuration in which it does
    # ASSUMPTION: the calls handed the batch before that forward do not write the field.
    handoffs: str


@dataclass(frozen=True)
class CaptureRunnerModel:
    name: str
    # Qualified names of the base class that provides the capture path (as imported, re-exports
    # included): a runner must list one of them among its bases.
    bases: tuple[str, ...]
    # The method of `self` that `__init__` calls to capture, and where the base defines it.
    capture_call: str
    capture_at: str
    # Methods of the base the capture path runs on `self` before the per-shape method: a runner
    # that defines any of them is not matched (its version may write the buffers first).
    inherited: tuple[str, ...]
    # The per-shape method the runner defines itself: it builds the ForwardBatch and runs the
    # warm-up forwards and the capture on it.
    per_shape: str
    warmup_at: str  # where the capture runs the forward for real before recording it
    # The attribute of `self` holding the buffers object, and the bases of that object's class
    # (a plain dataclass of this module deriving from one of them: its `__init__` only stores).
    buffers_attr: str
    buffers_bases: tuple[str, ...]
    buffers_bases_at: str
    # The buffers object's method `__init__` may call between the store and the capture, and
    # what it does (kept only on the path where the field stays the allocated tensor).
    sharing: str
    sharing_at: str
    # Methods of the base that write a buffers field, none on the capture path: a runner whose
    # per-shape method reaches one of them is not judged for that field. (field, methods, where)
    base_writers: tuple[tuple[str, tuple[str, ...], str], ...]
    # Calls `__init__` may make between the store and the capture handed `self` alone, read to
    # write no buffer: (qualified name, where it is and what it does).
    harmless: tuple[tuple[str, str], ...]
    # Calls the per-shape method makes before the forward that are handed the ForwardBatch (a
    # holder of the field): ASSUMED not to write the assumed-read fields, and why.
    handoffs: str
    # When the engine builds such a runner (the capture runs only then), with a call site.
    built_when: str
    batch_class: tuple[str, ...]  # qualified names of the ForwardBatch class
    # ForwardBatch fields the model's forward is assumed to read during warm-up (the
    # ASSUMPTION), each with the line of the base that hands it to the forward.
    forward_reads: tuple[tuple[str, str], ...]
    # Fields of the buffers object the inherited capture path writes in full before the first
    # forward: (field, what and where).
    written_before: tuple[tuple[str, str], ...]
    source: str
    # The ForwardBatch keyword holding the speculative input object, and the fields of such
    # objects the draft forward run by the per-shape method reads.
    spec_key: str = "spec_info"
    spec_reads: tuple[SpecInputRead, ...] = ()

    def assumed_reads(self) -> dict[str, str]:
        return dict(self.forward_reads)

    def written(self) -> dict[str, str]:
        return dict(self.written_before)


_SG = "sglang 0.5.23 sglang/srt/"
_DECODE = f"{_SG}model_executor/runner/decode_cuda_graph_runner.py"
_RESET = (
    f"reset_index_buffers() ({_DECODE}:1288; zero_() of each field named in "
    f"INDEX_SEMANTIC_BUFFERS, {_SG}model_executor/input_buffers.py:47-68)"
)

_SPEC = f"{_SG}speculative/"
_EAGLE_INPUT_AT = (
    f"{_SPEC}eagle_info.py:156-202 (EagleDraftInput: a dataclass whose __post_init__ only "
    f"calls SpecInput.__init__, which stores the input type: {_SPEC}spec_info.py:432-433)"
)
_SPEC_HANDOFFS = (
    "the calls handed the batch before the draft forward (attention metadata setup, KV index "
    "binding, the target-KV view) do not write the field: the only writes of `{f}` of a "
    f"speculative input in {_SG} are in the scheduler, the workers' extend paths and the "
    "inputs' own filter/merge ({w}), none of them reached from the capture"
)

# Speculative inputs whose field the draft forward run by the capture warm-up reads as indices.
_SPEC_READS: tuple[SpecInputRead, ...] = (
    SpecInputRead(
        cls=("sglang.srt.speculative.eagle_info.EagleDraftInput",),
        cls_at=_EAGLE_INPUT_AT,
        field="topk_index",
        forward="draft_forward",
        reads=(
            "the EAGLE draft forward reads `spec_info.topk_index` as token ids "
            f"({_SPEC}eagle_worker_v2.py:749-751): a hot-token map gathers by it (:757-758), and "
            "its first step makes it the input ids (:809-813, `_select_top_k_tokens_first`: "
            f"{_SPEC}spec_utils.py:423) that the draft model's forward embeds (:822, :847-849); "
            "the replay path zeroes the padded rows and checks them against the vocabulary "
            f"for the same reason ({_SPEC}eagle_draft_cuda_graph_runner.py:600, :615-620)"
        ),
        when=(
            "speculative_num_steps >= 2 or a hot-token map is set (with one step and no map "
            f"the loop breaks before the forward, {_SPEC}eagle_worker_v2.py:819-820)"
        ),
        handoffs=_SPEC_HANDOFFS.format(
            f="topk_index",
            w=(
                "model_executor/forward_batch_info.py:2121 (DP padding, eager), "
                "speculative/eagle_info.py:249, :289, :306, eagle_worker_v2.py:1750"
            ),
        ),
    ),
    SpecInputRead(
        cls=("sglang.srt.speculative.frozen_kv_mtp_info.FrozenKVMTPDraftInput",),
        cls_at=(
            f"{_SPEC}frozen_kv_mtp_info.py:44-52 (a dataclass deriving from EagleDraftInput whose "
            "__post_init__ only stores the input type)"
        ),
        field="bonus_tokens",
        forward="draft_forward",
        reads=(
            "the frozen-KV MTP draft forward makes `spec_info.bonus_tokens` the seed step's "
            f"input ids ({_SPEC}frozen_kv_mtp_worker_v2.py:559-568) and runs the draft model's "
            "forward on them (:572-579), which embeds them; this seed step runs before the "
            "step loop, at every step count (:603)"
        ),
        when="the frozen-KV MTP worker builds this runner (frozen_kv_mtp_worker_v2.py:399)",
        handoffs=_SPEC_HANDOFFS.format(
            f="bonus_tokens",
            w=(
                "managers/overlap_utils.py:514, :523, speculative/eagle_info.py:254, :287, "
                ":302, frozen_kv_mtp_worker_v2.py:439"
            ),
        ),
    ),
)

BUILTIN_CAPTURE_RUNNERS: tuple[CaptureRunnerModel, ...] = (
    CaptureRunnerModel(
        name="sglang-decode-cuda-graph-runner",
        bases=(
            "sglang.srt.model_executor.runner.decode_cuda_graph_runner.DecodeCudaGraphRunner",
            # re-exported by the package: model_executor/runner/__init__.py:34
            "sglang.srt.model_executor.runner.DecodeCudaGraphRunner",
        ),
        capture_call="capture",
        capture_at=(
            f"{_DECODE}:1249-1251 (capture: _capture), :1253-1316 (_capture: warmup(), the "
            "fills below, then _capture_one_stream), :1318-1366 (_capture_one_stream: "
            "capture_one_shape(bs, ...) for every captured batch size)"
        ),
        inherited=(
            "capture", "_capture", "_capture_one_stream", "warmup", "_warmup", "model_context",
            "_init_profile_context_and_memory_record", "_graph_batch_capture_active",
            "_set_profile_trace_tag", "_post_process_after_profile",
        ),
        per_shape="capture_one_shape",
        warmup_at=(
            f"{_SG}model_executor/runner_backend/full_cuda_graph_backend.py:159-168 (capture_one: "
            "two warm-up runs of the forward before the recorded one), "
            "runner_backend/breakable_cuda_graph_backend.py:120-125 (the same)"
        ),
        buffers_attr="buffers",
        buffers_bases=("sglang.srt.model_executor.input_buffers.ForwardInputBuffers",),
        buffers_bases_at=(
            f"{_SG}model_executor/input_buffers.py:59-99 (ForwardInputBuffers: a dataclass with "
            "no fields and no __post_init__)"
        ),
        sharing="share_buffers",
        sharing_at=(
            f"{_SG}model_executor/input_buffers.py:70-99, :36-41 (share_buffers keeps a field "
            "as it is when it is the first of its (name, numel, dtype, device) in the "
            "process-wide pool, or excluded, or on NPU; it writes no element)"
        ),
        base_writers=(
            (
                "input_ids",
                ("load_batch", "_copy_replay_inputs"),
                f"{_DECODE}:1550 (load_batch), :1914 (_copy_replay_inputs): replay only",
            ),
        ),
        harmless=(
            (
                "sglang.srt.model_executor.runner.flashinfer_autotune."
                "maybe_flashinfer_autotune_speculative_draft",
                f"{_SG}model_executor/runner/flashinfer_autotune.py:380-409 (reads the runner's "
                "model_runner and class name, runs the warm-up callable it is given)",
            ),
            (
                "sglang.srt.model_executor.runner_backend.utils.resolve_decode_backend",
                f"{_SG}model_executor/runner_backend/utils.py:48-104 (reads the runner's "
                "model_runner and the graph config, builds a backend object that stores the "
                "runner: runner_backend/full_cuda_graph_backend.py:104-124)",
            ),
        ),
        handoffs=(
            "the calls handed the ForwardBatch before the forward (attention metadata setup, KV "
            "index binding, DP buffer length) do not write its `input_ids`: the only writes of "
            f"a batch's `input_ids` in {_SG} are at replay (model_executor/cpu_graph_runner.py:"
            "965) and in DLLM algorithms after a forward (dllm/algorithm/low_confidence.py:53, "
            "joint_threshold_indel.py:310)"
        ),
        built_when=(
            "CUDA graphs are enabled and the engine builds the class itself (graph runners "
            f"exist only then; e.g. {_SG}speculative/eagle_worker_v2.py:539-542 builds "
            "EAGLEDraftExtendCudaGraphRunner on cuda and xpu)"
        ),
        batch_class=("sglang.srt.model_executor.forward_batch_info.ForwardBatch",),
        forward_reads=(
            ("input_ids", "token ids: the embedding lookup gathers rows by them"),
            ("positions", "rotary positions: an index into the rope cache"),
            ("out_cache_loc", "KV-cache slots the forward writes the new keys and values at"),
            ("req_pool_indices", "rows of req_to_token the attention backend gathers"),
            ("seq_lens", "per-request lengths the attention kernels loop to"),
        ),
        written_before=(
            ("seq_lens", f"fill_(seq_len_fill_value) ({_DECODE}:1283)"),
            ("seq_lens_cpu", f"fill_(seq_len_fill_value) ({_DECODE}:1284)"),
            ("positions", _RESET),
            ("mrope_positions", _RESET),
            ("out_cache_loc", _RESET),
            ("req_pool_indices", _RESET),
            ("mamba_track_indices", _RESET),
            ("mamba_track_mask", _RESET),
        ),
        source="sglang 0.5.23 DecodeCudaGraphRunner.capture and its subclasses' capture_one_shape",
        spec_reads=_SPEC_READS,
    ),
)  # fmt: skip


@dataclass(frozen=True)
class CaptureFactoryModel:
    """A buffers factory of one engine module whose result a runner's capture reads: the
    allocations the factory hands to the buffers class under `fields` are read by the capture
    warm-up, as `read_at` traces it in the engine's source."""

    name: str
    module: str  # the module defining the factory (the scanned file's module name)
    # ... or the end of the scanned file's path (namespace packages leave the module unnamed)
    path: str
    cls: str  # the buffers class, a plain dataclass deriving from `bases`
    method: str  # its classmethod returning `cls(F=x, ...)`
    bases: tuple[str, ...]
    # field -> the chain from the factory's result to the forward that reads it
    fields: tuple[tuple[str, str], ...]
    assumption: str  # what the model's forward is ASSUMED to read, and the warm-up
    built_when: str


_CREATE_CHAIN = (
    f"{_DECODE}:470 (DecodeCudaGraphRunner.__init__: self.buffers = "
    "DecodeInputBuffers.create(...)), :507 (share_buffers: the field is kept on the path where "
    "it is the first of its name, size, dtype and device in the process-wide pool, "
    f"{_SG}model_executor/input_buffers.py:36-41), :513-528 (build_decode_registry(source="
    "self.buffers): each slot adopts the same-named tensor, cuda_graph_buffer_registry.py:"
    "780-787, register_slot with bind stores it and writes nothing, :376-389), :595 "
    "(resolve_decode_backend), :600 (self.capture()), :1253-1316 (_capture: warmup, fills of "
    "seq_lens and the index fields, not input_ids), :1112 and :1198 (capture_prepare: "
    '_slot("input_ids") is a [:n] slice of that tensor, cuda_graph_buffer_registry.py:249-262, '
    "handed to the ForwardBatch), :1457-1461 (run_once: forward(forward_batch.input_ids, ...))"
)

BUILTIN_CAPTURE_FACTORIES: tuple[CaptureFactoryModel, ...] = (
    CaptureFactoryModel(
        name="sglang-decode-input-buffers",
        module="sglang.srt.model_executor.runner_utils.buffers",
        path="sglang/srt/model_executor/runner_utils/buffers.py",
        cls="DecodeInputBuffers",
        method="create",
        bases=("sglang.srt.model_executor.input_buffers.ForwardInputBuffers",),
        fields=(("input_ids", _CREATE_CHAIN),),
        assumption=(
            "the model's forward reads ForwardBatch field `input_ids` (token ids: the embedding "
            "lookup gathers rows by them) in the warm-up runs the capture makes before recording "
            f"({_SG}model_executor/runner_backend/full_cuda_graph_backend.py:159-168), and the "
            "calls handed the batch before it (two-batch overlap, LoRA, capture hooks, attention "
            "metadata: off or not writing token ids in the default configuration) do not write "
            "them; the capture runs in the runner's `__init__`, before any replay"
        ),
        built_when=(
            "CUDA graphs are enabled and the engine builds a DecodeCudaGraphRunner (its own "
            "capture_one_shape: no subclass overriding it)"
        ),
    ),
)
