"""Built-in contracts of custom ops and collectives, as data: what each reads, writes in full,
writes in part and accumulates, with the source it was read from (file and line at a version).

Chosen from a scan of sglang 0.5.23 + vllm 0.33.0: the ops that zeros/empty buffers were handed
to first (docs/kernel-contracts.md has the counts). `deepspeed.comm.*` entries are the same
contracts as their `torch.distributed` counterparts (deepspeed/comm/comm.py forwards each to the
backend's op of the same name with the same tensors).

Semantics, per parameter (any parameter not listed keeps the default for unknown code):
- reads: read, definitely (every call reads some element of it);
- reads_part: possibly read (which elements depends on other arguments' values);
- writes: written in full without being read;
- writes_part: some elements written;
- accumulates: possibly read, then written in part;
- reads_writes: read in full, then written in full (in-place collectives);
- writes_each: a list of tensors, each written in full without being read (a collective's
  output list). Followed only for a list of fresh buffers of the site (`bufs = [torch.zeros_like(x)
  for _ in range(n)]`, analysis/dataflow/gather_lists.py); any other argument is opaque;
- ignored: not a tensor (ranks, groups, flags, sizes);
- unless_false: the contract holds only when this argument is absent or `False`
  (`async_op=True`: the op has not run yet when the call returns).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class OpContract:
    name: str  # qualified name as resolved through imports
    params: tuple[str, ...]  # positional order
    reads: frozenset[str] = frozenset()  # read in full
    reads_part: dict[str, str] = field(default_factory=dict)  # param -> which part
    writes: frozenset[str] = frozenset()  # written in full, not read
    writes_part: dict[str, str] = field(default_factory=dict)  # param -> which part
    accumulates: frozenset[str] = frozenset()  # read (possibly) and written in part
    reads_writes: frozenset[str] = frozenset()  # read in full, then written in full
    writes_each: frozenset[str] = frozenset()  # a list: each tensor written in full, not read
    ignored: frozenset[str] = frozenset()  # scalars, flags, dtypes, groups
    unless_false: frozenset[str] = frozenset()  # the contract holds only if this is False/absent
    source: str = ""


_TORCH_C10D = "torch 2.13 torch/distributed/distributed_c10d.py"

# A rank outside a process group returns at once from every collective and point-to-point op,
# writing nothing (torch 2.13 distributed_c10d.py:1095 `_rank_not_in_group`, tested first by
# irecv :2697, all_gather :4268, all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single
# :5112; `new_group` hands such a rank the `NON_GROUP_MEMBER` sentinel). So a contract that writes
# holds only for a group this rank is in: `group` absent or `None` (the default group, every rank
# of the job), or the group a vLLM/SGLang `GroupCoordinator` keeps for its own rank, which it
# stores only from the `ranks` that hold `self.rank` (vllm 0.33.0
# vllm/distributed/parallel_state.py:514-528; sglang 0.5.23 sglang/srt/distributed/
# parallel_state.py:411-416): an attribute `device_group` or `cpu_group`, named as an assumption.
MEMBER_GROUP_ATTRS = frozenset({"device_group", "cpu_group"})
# The position of `group` in each op's signature (torch 2.13), for a group passed positionally.
GROUP_POSITION = {
    "torch.distributed.all_gather_into_tensor": 2,
    "torch.distributed.reduce_scatter_tensor": 3,
    "torch.distributed.all_to_all_single": 4,
    "torch.distributed.recv": 2,
    "deepspeed.comm.all_gather_into_tensor": 2,
    "deepspeed.comm.reduce_scatter_tensor": 3,
}
# The position of `async_op` (torch 2.13 signatures): `True` there, as by keyword, returns before
# the op has run, so its contract writes nothing yet.
ASYNC_POSITION = {
    "torch.distributed.all_gather_into_tensor": 3,
    "torch.distributed.reduce_scatter_tensor": 4,
    "torch.distributed.all_to_all_single": 5,
}


def group_membership(call: ast.Call, position: int | None) -> str | None:
    """For a collective's call: None where this rank may be outside its `group` (the op may
    write nothing), "" where it is surely in it, or the assumption it rests on."""
    arg: ast.expr | None = next((k.value for k in call.keywords if k.arg == "group"), None)
    if arg is None and position is not None and len(call.args) > position:
        arg = call.args[position]
    if arg is None or (isinstance(arg, ast.Constant) and arg.value is None):
        return ""
    if isinstance(arg, ast.Attribute) and arg.attr in MEMBER_GROUP_ATTRS:
        return (
            f"assuming this rank is in `{ast.unparse(arg)}` (a GroupCoordinator keeps there "
            "only its own rank's group; a rank outside a group writes nothing)"
        )
    return None


_DS_COMM = "deepspeed/comm/comm.py@09ce632 (forwards to the torch.distributed op)"


def _collectives(
    prefix: str, src: str, extra: tuple[str, ...], only: frozenset[str] | None = None
) -> tuple[OpContract, ...]:
    ignored = frozenset({"op", "group", "src", "dst", "tag", "group_src", "group_dst", *extra})
    every = (
        OpContract(
            f"{prefix}.all_reduce",
            ("tensor", "op", "group", "async_op", *extra),
            reads_writes=frozenset({"tensor"}),
            ignored=ignored,
            unless_false=frozenset({"async_op"}),
            source=f"{src}; {_TORCH_C10D}:3165 (all_reduce): 'tensor: Input and output of the "
            "collective. The function operates in-place.'",
        ),
        OpContract(
            f"{prefix}.broadcast",
            ("tensor", "src", "group", "async_op", *(extra or ("group_src",))),
            # Read on the source rank only, written on the others: which one runs is not known.
            accumulates=frozenset({"tensor"}),
            ignored=ignored,
            unless_false=frozenset({"async_op"}),
            source=f"{src}; {_TORCH_C10D}:3100 (broadcast): 'Data to be sent if src is the rank of "
            "current process, and tensor to be used to save received data otherwise.'",
        ),
        OpContract(
            f"{prefix}.send",
            ("tensor", "dst", "group", "tag", *(extra or ("group_dst",))),
            reads=frozenset({"tensor"}),
            ignored=ignored,
            source=f"{src}; {_TORCH_C10D}:2727 (send): 'tensor: Tensor to send.' (synchronous)",
        ),
        OpContract(
            f"{prefix}.all_gather",
            ("tensor_list", "tensor", "group", "async_op", *extra),
            # Every rank, rank i's `tensor` lands in `tensor_list[i]` of every rank: each tensor
            # of the list is written in full. A list of the wrong length, or a tensor of the
            # wrong size or dtype, raises (Gloo: 'invalid output tensor list', 'invalid tensor
            # size'; torch: 'Invalid usage of tensors with different dtypes'); NCCL with equal
            # sizes gathers into one flat buffer and copies a whole row of it into each tensor.
            reads=frozenset({"tensor"}),
            writes_each=frozenset({"tensor_list"}),
            ignored=ignored,
            unless_false=frozenset({"async_op"}),
            source=f"{src}; {_TORCH_C10D}:4192 (all_gather): 'tensor_list (list[Tensor]): Output "
            "list. It should contain correctly-sized tensors to be used for output of the "
            "collective.' 'tensor (Tensor): Tensor to be broadcast from current process.'",
        ),
        OpContract(
            f"{prefix}.all_to_all",
            ("output_tensor_list", "input_tensor_list", "group", "async_op", *extra),
            # Every rank sends `input_tensor_list[j]` to rank j and receives rank j's tensor for
            # it into `output_tensor_list[j]`: each output tensor written in full, each input
            # tensor read in full (sent).
            reads=frozenset({"input_tensor_list"}),
            writes_each=frozenset({"output_tensor_list"}),
            ignored=ignored,
            unless_false=frozenset({"async_op"}),
            source=f"{src}; {_TORCH_C10D}:5145 (all_to_all): 'output_tensor_list (list[Tensor]): "
            "List of tensors to be gathered one per rank.' 'input_tensor_list (list[Tensor]): "
            "List of tensors to scatter one per rank.'",
        ),
    )
    return tuple(
        replace(c, ignored=c.ignored & frozenset(c.params))
        for c in every
        if only is None or c.name.rsplit(".", 1)[1] in only
    )


_DS_EXTRA = ("prof", "log_name", "debug")

OP_CONTRACTS: tuple[OpContract, ...] = (
    *_collectives("torch.distributed", "torch.distributed docstring", ()),
    # Only those whose deepspeed signature was read: tensor first, then the torch parameters,
    # then prof, log_name, debug.
    *_collectives("deepspeed.comm", _DS_COMM, _DS_EXTRA, frozenset({"all_reduce", "send"})),
    OpContract(
        "deepspeed.comm.all_gather_into_tensor",
        ("output_tensor", "tensor", "group", "async_op", *_DS_EXTRA),
        writes=frozenset({"output_tensor"}),
        reads=frozenset({"tensor"}),
        ignored=frozenset({"group", *_DS_EXTRA}),
        unless_false=frozenset({"async_op"}),
        source=f"{_DS_COMM}; as torch.distributed.all_gather_into_tensor",
    ),
    OpContract(
        "deepspeed.comm.reduce_scatter_tensor",
        ("output_tensor", "tensor", "op", "group", "async_op", *_DS_EXTRA),
        writes=frozenset({"output_tensor"}),
        reads=frozenset({"tensor"}),
        ignored=frozenset({"op", "group", *_DS_EXTRA}),
        unless_false=frozenset({"async_op"}),
        source=f"{_DS_COMM}; as torch.distributed.reduce_scatter_tensor",
    ),
    # Per-row top-k over logits[row, rowStarts[row]:rowEnds[row]]: both bounds are read for
    # every row, the logits only inside them; the indices are written per row.
    *(
        OpContract(
            name,
            ("logits", "row_starts", "row_ends", "indices", "num_rows", "stride0", "stride1",
             "topk"),
            reads=frozenset({"row_starts", "row_ends"}),
            reads_part={"logits": "rows between row_starts and row_ends"},
            writes_part={"indices": "the top-k of each of num_rows rows"},
            ignored=frozenset({"num_rows", "stride0", "stride1", "topk"}),
            source="vllm csrc/sampler.cu top_k_per_row_prefill (launches topKPerRowPrefill "
            "with rowStarts/rowEnds for numRows rows); wrapper vllm 0.33.0 "
            "vllm/_custom_ops.py:3203",
        )
        for name in ("vllm._custom_ops.top_k_per_row_prefill", "torch.ops._C.top_k_per_row_prefill")
    ),
    *(
        OpContract(
            name,
            ("input", "offsets", "lengths", "k", "deterministic", "tie_break",
             "dsa_graph_safe", "row_starts"),
            reads=frozenset({"offsets", "lengths"}),
            reads_part={"input": "each row up to lengths[i]", "row_starts": "one per row"},
            ignored=frozenset({"k", "deterministic", "tie_break", "dsa_graph_safe"}),
            source="flashinfer flashinfer/topk.py@04afe8b top_k_ragged_transform docstring: "
            "'output_indices[i, j] = topk_indices[j] + offsets[i]', lengths 'Actual KV "
            "lengths per row'; the output is allocated inside (torch.empty)",
        )
        for name in ("flashinfer.top_k_ragged_transform", "flashinfer.topk.top_k_ragged_transform")
    ),
    *(
        OpContract(
            name,
            ("x", "use_ue8m0", "gran_k"),
            reads=frozenset({"x"}),
            ignored=frozenset({"use_ue8m0", "gran_k"}),
            source="DeepGEMM deep_gemm/utils/math.py per_block_cast_to_fp8 (vendored in vllm "
            "0.33.0 vllm/third_party/deep_gemm/utils/math.py:62-72: copies x into a padded "
            "buffer and reduces its absolute maximum over every block)",
        )
        for name in ("deep_gemm.per_block_cast_to_fp8", "deep_gemm.utils.per_block_cast_to_fp8",
                     "deep_gemm.utils.math.per_block_cast_to_fp8",
                     "vllm.third_party.deep_gemm.per_block_cast_to_fp8",
                     "vllm.third_party.deep_gemm.utils.math.per_block_cast_to_fp8")
    ),
    OpContract(
        "vllm._custom_ops.wvSplitKrc",
        ("a", "b", "cu_count", "bias"),
        reads=frozenset({"a", "b"}),
        reads_part={"bias": "when given"},
        ignored=frozenset({"cu_count"}),
        source="vllm 0.33.0 vllm/_custom_ops.py:2169 (torch.ops._rocm_C.wvSplitKrc(a, b, bias, "
        "cu_count): the skinny GEMM a @ b.T of csrc/rocm/skinny_gemms.cu reads both operands)",
    ),
)  # fmt: skip


def op_contract_for(qualified: str | None) -> OpContract | None:
    if not qualified:
        return None
    for op in OP_CONTRACTS:
        if op.name == qualified:
            return op
    return None
