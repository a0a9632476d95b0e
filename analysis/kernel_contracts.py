"""What opaque attention kernels read, as data with its source: the analysis cannot see inside.

A contract lists the parameters read in full, those read only in part with the extent set by
another argument's *values* (which couples the two buffers: neither is safe alone), and those
not read at all unless other arguments are passed. Every parameter not listed is read in full.

A contract applies to a call whose callee resolves, through the file's imports, to exactly one of
its modules: never by a substring of the name (a local `my_flash_attn` module is not the kernel).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelContract:
    name: str  # the function's own name
    modules: tuple[str, ...]  # the callee's module, resolved through the imports: one of these
    params: tuple[str, ...]  # positional order
    row_reads: tuple[tuple[str, str], ...] = ()  # (param, param whose values bound the read)
    unread_unless: tuple[tuple[str, tuple[str, ...]], ...] = ()
    writes: tuple[str, ...] = ()  # written in full without being read
    # (param, params): a `writes` parameter that is written only in part when one of the other
    # parameters is passed (varlen `out=`: rows past cu_seqlens_q[-1] keep their values).
    partial_when: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ignored: tuple[str, ...] = ()  # scalars and flags: not tensors
    source: str = ""
    # How many leading parameters are certain by position; None: all of `params`. A built-in
    # contract matches several implementations (FA2, FA3, FA4, vllm's copy) whose parameter
    # orders differ after q, k, v: a call passing more by position is an unknown call.
    positional: int | None = None

    def matches(self, qualified: str) -> bool:
        """Exactly `module.name` for one of the modules: `kern` is not `kern_ref`, and a local
        module named like the kernel's (`my_flash_attn`, `vllm_xpu_kernels.flash_attn_interface`)
        is another implementation, whose writes nobody has read."""
        head, _, last = qualified.rpartition(".")
        return last == self.name and head in self.modules


# The implementations whose source the contracts were read from, by the module a caller imports
# them from (an `__init__` re-export is the same function). Versions: flash-attention at
# 0251105a (2026-08-15); sglang 0.5.23; vllm 0.33.0.
_FA_MODULES = (
    "flash_attn",  # FA2 flash_attn/__init__.py re-exports flash_attn_interface
    "flash_attn.flash_attn_interface",
    "flash_attn_interface",  # FA3: hopper/flash_attn_interface.py, installed as a top-level module
    "flash_attn_3.flash_attn_interface",  # FA3: hopper/flash_attn_3/flash_attn_interface.py
    "sgl_kernel.flash_attn",  # sgl-kernel's copy of FA3
    "vllm.vllm_flash_attn",  # vllm's fork (vllm/vllm_flash_attn/__init__.py re-exports)
    "vllm.vllm_flash_attn.flash_attn_interface",
    # sglang's dispatcher to FA3 (flash_attention_v3) or FA4 by `ver`: flash_attention.py:9, :228
    "sglang.kernels.ops.attention.flash_attention",
    "sglang.kernels.ops.attention.flash_attention_v3",
)
_FA4_MODULES = ("flash_attn.cute", "flash_attn.cute.interface")  # FA4 has no with_kvcache

# Which rows of `out` the forward kernel stores: FA3 hopper/seqlen.h:20-26 (SeqlenInfo: with
# cu_seqlens_q the batch's rows are cu_seqlens_q[b]..cu_seqlens_q[b+1], or only seqused_q[b] of
# them) and hopper/epilogue_fwd.hpp:275-278, :358 (the store of O is predicated on
# `seqlen_o - m_block * kBlockM`); FA4 flash_attn/cute/seqlen_info.py:97-116 and
# flash_attn/cute/flash_fwd.py:438 (the same predicate). Rows past cu_seqlens_q[-1] of a padded
# varlen `out`, and rows past seqused_q[b], are never stored. Without either argument every row
# of every batch is stored (store_zero for empty tiles, epilogue_fwd.hpp:411; `out.zero_()`
# when there are no keys, hopper/flash_api.cpp:1190-1192).
_VARLEN_OUT = (
    "rows past cu_seqlens_q[-1] / seqused_q[b] are not stored: flash-attention "
    "hopper/epilogue_fwd.hpp:275-278,358, hopper/seqlen.h:20-26, flash_attn/cute/flash_fwd.py:438"
)

KERNEL_CONTRACTS: tuple[KernelContract, ...] = (
    KernelContract(
        name="flash_attn_with_kvcache",
        modules=_FA_MODULES,
        params=(
            "q", "k_cache", "v_cache", "k", "v", "qv", "rotary_cos", "rotary_sin", "cache_seqlens",
            "cache_batch_idx", "cache_leftpad", "page_table", "cu_seqlens_q", "cu_seqlens_k_new",
            "max_seqlen_q", "rotary_seqlens", "q_descale", "k_descale", "v_descale",
            "softmax_scale", "causal", "window_size", "attention_chunk", "softcap",
            "rotary_interleaved", "scheduler_metadata", "num_splits", "pack_gqa", "only_qv",
            "sm_margin", "return_softmax_lse", "sinks", "out",
        ),
        # page_table[b, :ceil(cache_seqlens[b] / page_size)] is all the kernel reads.
        row_reads=(("page_table", "cache_seqlens"),),
        unread_unless=(("cu_seqlens_k_new", ("k", "v")),),
        writes=("out",),
        partial_when=(("out", ("cu_seqlens_q", "seqused_q")),),
        positional=3,
        ignored=("max_seqlen_q", "softmax_scale", "causal", "window_size", "attention_chunk",
                 "softcap", "rotary_interleaved", "num_splits", "pack_gqa", "only_qv",
                 "sm_margin", "return_softmax_lse"),
        source="flash-attention hopper/flash_attn_interface.py flash_attn_with_kvcache docstring "
        "(page_table rows read up to cache_seqlens; k/v new tokens appended via cu_seqlens_k_new); "
        f"varlen out=: {_VARLEN_OUT}",
    ),
    KernelContract(
        name="flash_attn_varlen_func",
        modules=_FA_MODULES + _FA4_MODULES,
        params=(
            "q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
            "seqused_q", "seqused_k", "page_table", "softmax_scale", "causal", "qv", "q_descale",
            "k_descale", "v_descale", "window_size", "attention_chunk", "softcap", "num_splits",
            "pack_gqa", "sm_margin", "return_softmax_lse", "sinks", "out",
        ),
        row_reads=(("page_table", "seqused_k"),),
        writes=("out",),
        partial_when=(("out", ("cu_seqlens_q", "seqused_q")),),
        positional=3,
        ignored=("max_seqlen_q", "max_seqlen_k", "softmax_scale", "causal", "window_size",
                 "attention_chunk", "softcap", "num_splits", "pack_gqa", "sm_margin",
                 "return_softmax_lse"),
        source="flash-attention flash_attn/cute/interface.py flash_attn_varlen_func "
        "(page_table read up to ceil(seqused_k[b] / page_size) per row; checked on H100 2026-11-21); "
        f"varlen out=: {_VARLEN_OUT}",
    ),
)  # fmt: skip


def kernel_from_config(function: str, spec: dict[str, object], where: str) -> KernelContract:
    """`[tool.zeroopt.kernels."pkg.mod.fn"]`: params (positional order), row-reads
    (`{ table = "lengths" }`), writes, ignored, source. Raises ValueError with the problem."""
    known = {"params", "row-reads", "writes", "ignored", "source"}
    extra = sorted(set(spec) - known)
    if extra:
        raise ValueError(f"unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})")

    def names(key: str) -> tuple[str, ...]:
        value = spec.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} must be a list of parameter names")
        return tuple(value)

    params = names("params")
    if not params:
        raise ValueError("params must list the parameters in positional order")
    rows = spec.get("row-reads", {})
    if not isinstance(rows, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rows.items()
    ):
        raise ValueError('row-reads must be a table like { page_table = "seqused_k" }')
    for name in (*rows, *rows.values(), *names("writes"), *names("ignored")):
        if name not in params:
            raise ValueError(f"{name!r} is not one of params")
    head, _, last = function.rpartition(".")
    if not head:
        raise ValueError("name the function with its module, e.g. my_kernels.attention")
    source = spec.get("source", where)
    return KernelContract(
        name=last,
        modules=(head,),
        params=params,
        row_reads=tuple(rows.items()),
        writes=names("writes"),
        ignored=names("ignored"),
        source=str(source),
    )


def kernel_contract_for(
    qualified: str | None, extra: tuple[KernelContract, ...] = ()
) -> KernelContract | None:
    if not qualified:
        return None
    for contract in (*extra, *KERNEL_CONTRACTS):
        if contract.matches(qualified):
            return contract
    return None
