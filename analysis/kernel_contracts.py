"""What opaque attention kernels read, as data with its source: the analysis cannot see inside.

A contract lists the parameters read in full, those read only in part with the extent set by
another argument's *values* (which couples the two buffers: neither is safe alone), and those
not read at all unless other arguments are passed. Every parameter not listed is read in full.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelContract:
    name: str  # the function's own name
    module_hints: tuple[str, ...]  # one must occur in the qualified name
    params: tuple[str, ...]  # positional order
    row_reads: tuple[tuple[str, str], ...] = ()  # (param, param whose values bound the read)
    unread_unless: tuple[tuple[str, tuple[str, ...]], ...] = ()
    writes: tuple[str, ...] = ()  # written in full without being read
    ignored: tuple[str, ...] = ()  # scalars and flags: not tensors
    source: str = ""
    # How many leading parameters are certain by position; None: all of `params`. A built-in
    # contract matches several implementations (FA2, FA3, FA4, vllm's copy) whose parameter
    # orders differ after q, k, v: a call passing more by position is an unknown call.
    positional: int | None = None

    # Declared by a user for one module: the module must be exactly that one, not a name that
    # contains it (`kern` is not `kern_ref`).
    exact_module: bool = False

    def matches(self, qualified: str) -> bool:
        head, _, last = qualified.rpartition(".")
        if last != self.name:
            return False
        if self.exact_module:
            return head in self.module_hints
        return any(h in head for h in self.module_hints)


_FA_HINTS = ("flash_attn", "flash_attention", "sgl_kernel")

KERNEL_CONTRACTS: tuple[KernelContract, ...] = (
    KernelContract(
        name="flash_attn_with_kvcache",
        module_hints=_FA_HINTS,
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
        positional=3,
        ignored=("max_seqlen_q", "softmax_scale", "causal", "window_size", "attention_chunk",
                 "softcap", "rotary_interleaved", "num_splits", "pack_gqa", "only_qv",
                 "sm_margin", "return_softmax_lse"),
        source="flash-attention hopper/flash_attn_interface.py flash_attn_with_kvcache docstring "
        "(page_table rows read up to cache_seqlens; k/v new tokens appended via cu_seqlens_k_new)",
    ),
    KernelContract(
        name="flash_attn_varlen_func",
        module_hints=_FA_HINTS,
        params=(
            "q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
            "seqused_q", "seqused_k", "page_table", "softmax_scale", "causal", "qv", "q_descale",
            "k_descale", "v_descale", "window_size", "attention_chunk", "softcap", "num_splits",
            "pack_gqa", "sm_margin", "return_softmax_lse", "sinks", "out",
        ),
        row_reads=(("page_table", "seqused_k"),),
        writes=("out",),
        positional=3,
        ignored=("max_seqlen_q", "max_seqlen_k", "softmax_scale", "causal", "window_size",
                 "attention_chunk", "softcap", "num_splits", "pack_gqa", "sm_margin",
                 "return_softmax_lse"),
        source="flash-attention flash_attn/cute/interface.py flash_attn_varlen_func "
        "(page_table read up to ceil(seqused_k[b] / page_size) per row; checked on H100 2026-11-21)",
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
        module_hints=(head,),
        params=params,
        row_reads=tuple(rows.items()),
        writes=names("writes"),
        ignored=names("ignored"),
        source=str(source),
        exact_module=True,
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
