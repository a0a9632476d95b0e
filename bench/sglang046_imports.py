"""What SGLang 0.4.6.post5's flashattention_backend.py imports, stood in for (its scenario:
bench/sglang046_cuda_graph.py).

The sglang types it uses, as 0.4.6.post5 defines them (ForwardMode and its predicates, the base
class's decode/extend dispatch, AttentionArch, the EAGLE inputs as plain records), and the
sgl_kernel kernels: `flash_attn_with_kvcache` (FlashAttention 3) by an adapter that reads exactly
what that kernel reads, calling FlashAttention 4 on CUDA (`FA4` set) or a torch reference, and
`merge_state_v2` as its formula in torch.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch


# -- what the file imports, as 0.4.6.post5 defines it ---------------------------------------------
class ForwardMode(enum.IntEnum):
    """model_executor/forward_batch_info.py: the modes and predicates the file uses."""

    EXTEND = enum.auto()
    DECODE = enum.auto()
    MIXED = enum.auto()
    IDLE = enum.auto()
    TARGET_VERIFY = enum.auto()
    DRAFT_EXTEND = enum.auto()
    DUMMY_FIRST = enum.auto()

    def is_decode(self) -> bool:
        return self == ForwardMode.DECODE

    def is_idle(self) -> bool:
        return self == ForwardMode.IDLE

    def is_decode_or_idle(self) -> bool:
        return self in (ForwardMode.DECODE, ForwardMode.IDLE)

    def is_target_verify(self) -> bool:
        return self == ForwardMode.TARGET_VERIFY

    def is_extend_or_draft_extend_or_mixed(self) -> bool:
        return self in (ForwardMode.EXTEND, ForwardMode.DRAFT_EXTEND, ForwardMode.MIXED)


class AttentionArch(enum.Enum):
    MLA = enum.auto()
    MHA = enum.auto()


class AttentionBackend:
    """layers/attention/base_attn_backend.py: `forward` dispatches on the batch's mode."""

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        layer: Any,
        forward_batch: Any,
        save_kv_cache: bool = True,
        **kwargs: Any,
    ) -> torch.Tensor:
        if forward_batch.forward_mode.is_decode():
            return self.forward_decode(  # type: ignore[attr-defined]
                q, k, v, layer, forward_batch, save_kv_cache=save_kv_cache, **kwargs
            )
        return self.forward_extend(  # type: ignore[attr-defined]
            q, k, v, layer, forward_batch, save_kv_cache=save_kv_cache, **kwargs
        )


@dataclass
class EagleDraftInput:
    topk_p: torch.Tensor | None = None
    topk_index: torch.Tensor | None = None
    hidden_states: torch.Tensor | None = None


@dataclass
class EagleVerifyInput:
    custom_mask: torch.Tensor
    positions: torch.Tensor | None
    draft_token_num: int


# -- the kernels -----------------------------------------------------------------------------------
FA4: Callable[..., Any] | None = None  # set by build() when FlashAttention 4 runs


def _int32_ceil_pages(length: int, page_size: int) -> int:
    total = (length + page_size - 1) & 0xFFFFFFFF
    if total > 2**31 - 1:
        total -= 2**32
    return int(total / page_size)


def paged_varlen_reference(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    page_table: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    max_seqlen_q: int,
    softmax_scale: float,
    causal: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(out (total_q, H, D), lse (H, total_q)) of FlashAttention over a paged KV cache.

    Sequence b's queries are rows [cu_seqlens_q[b], cu_seqlens_q[b+1]), of which the first
    max_seqlen_q are computed (the kernel's grid covers no more); causal masks align to the bottom
    right of its cache_seqlens[b] keys; page_table row b is read flat up to ceil(len / page_size)
    entries in int32 arithmetic, through its row stride (a column-sliced view reads on into the
    columns it leaves out, as the kernel does). A row no sequence computes is 0 (lse -inf), as is a row with no
    visible key. Reads outside q, the page table or the cache raise IndexError.
    """
    total_q, heads, dim = q.shape
    num_pages, page_size, kv_heads, _ = k_cache.shape
    group = heads // kv_heads
    batch = cu_seqlens_q.numel() - 1
    if cache_seqlens.numel() != batch or page_table.shape[0] != batch:  # the kernels' own checks
        raise ValueError(
            f"batch {batch}: cache_seqlens has {cache_seqlens.numel()}, page_table "
            f"{page_table.shape[0]} rows"
        )
    starts = [int(x) for x in cu_seqlens_q.tolist()]
    lengths = [int(x) for x in cache_seqlens.tolist()]
    # The kernel reads row b at page_table's address + b * stride(0), whatever the view's shape:
    # the memory from the view's first element to the end of its allocation.
    if page_table.stride(-1) != 1:
        raise ValueError("page_table must have a contiguous last dimension")
    flat_table = torch.as_strided(
        page_table,
        (
            page_table.untyped_storage().nbytes() // page_table.element_size()
            - page_table.storage_offset(),
        ),
        (1,),
    )
    out = torch.zeros(total_q, heads, dim, dtype=torch.float32, device=q.device)
    lse = torch.full((heads, total_q), float("-inf"), dtype=torch.float32, device=q.device)
    for b in range(batch):
        start, end = starts[b], starts[b + 1]
        seqlen_q = min(end - start, max_seqlen_q)
        if seqlen_q <= 0:
            continue
        if start < 0 or start + seqlen_q > total_q:
            raise IndexError(
                f"emulated illegal memory access: sequence {b} reads query rows "
                f"[{start}, {start + seqlen_q}) of {total_q}"
            )
        length = lengths[b]
        n_pages = _int32_ceil_pages(length, page_size)
        if length <= 0 or n_pages <= 0:
            continue
        first = b * page_table.stride(0)
        if first + n_pages > flat_table.numel():
            raise IndexError(
                f"emulated illegal memory access: sequence {b} reads {n_pages} page-table "
                f"entries (cache_seqlens={length}) past the end of the page table's memory"
            )
        pages = flat_table[first : first + n_pages].to(torch.int64)
        if int(pages.min()) < 0 or int(pages.max()) >= num_pages:
            bad = int(pages.min()) if int(pages.min()) < 0 else int(pages.max())
            raise IndexError(
                f"emulated illegal memory access: sequence {b} reads page {bad} of {num_pages}"
            )
        keys = k_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
        values = v_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
        keys = keys.repeat_interleave(group, dim=1)
        values = values.repeat_interleave(group, dim=1)
        rows_q = q[start : start + seqlen_q].float()
        scores = torch.einsum("qhd,khd->hqk", rows_q, keys) * softmax_scale
        if causal:
            rows = torch.arange(seqlen_q, device=q.device)[:, None]
            cols = torch.arange(length, device=q.device)[None, :]
            visible = cols <= rows + (length - (end - start))
        else:
            visible = torch.ones(seqlen_q, length, dtype=torch.bool, device=q.device)
        scores = scores.masked_fill(~visible, float("-inf"))
        any_visible = visible.any(dim=1)  # (Q,)
        row_lse = torch.logsumexp(scores, dim=-1)  # (H, Q)
        probs = torch.where(any_visible[None, :, None], scores.softmax(dim=-1), 0.0)
        out[start : start + seqlen_q] = torch.einsum("hqk,khd->qhd", probs, values)
        lse[:, start : start + seqlen_q] = torch.where(any_visible[None, :], row_lse, -math.inf)
    return out.to(q.dtype), lse


def flash_attn_with_kvcache(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    k: torch.Tensor | None = None,
    v: torch.Tensor | None = None,
    qv: torch.Tensor | None = None,
    cache_seqlens: torch.Tensor | None = None,
    page_table: torch.Tensor | None = None,
    cu_seqlens_q: torch.Tensor | None = None,
    cu_seqlens_k_new: torch.Tensor | None = None,  # read only with new K/V (k, v): never here
    max_seqlen_q: int | None = None,
    softmax_scale: float | None = None,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    k_descale: torch.Tensor | None = None,
    v_descale: torch.Tensor | None = None,
    return_softmax_lse: bool = False,
    **unused: Any,
) -> Any:
    """sgl_kernel.flash_attn.flash_attn_with_kvcache as the file calls it (paged, varlen q)."""
    if k is not None or v is not None or qv is not None or unused:
        raise NotImplementedError("new K/V, qv and other options are not used by this scenario")
    if window_size != (-1, -1) or softcap or k_descale is not None or v_descale is not None:
        raise NotImplementedError("sliding windows, softcap and fp8 descales are not modelled")
    assert cache_seqlens is not None and page_table is not None and cu_seqlens_q is not None
    scale = softmax_scale if softmax_scale is not None else q.shape[-1] ** -0.5
    max_q = int(max_seqlen_q) if max_seqlen_q is not None else q.shape[0]
    if FA4 is not None:
        result = FA4(
            q=q,
            k=k_cache,
            v=v_cache,
            cu_seqlens_q=cu_seqlens_q,
            seqused_k=cache_seqlens,
            max_seqlen_q=max_q,
            page_table=page_table,
            softmax_scale=scale,
            causal=causal,
            softcap=None,
            window_size=(None, None),
            num_splits=1,  # the only value FA4 accepts on SM90
            return_lse=return_softmax_lse,
        )
        if return_softmax_lse:
            out, lse = result[0], result[1]
            return out, lse
        return result[0] if isinstance(result, tuple) else result
    out, lse = paged_varlen_reference(
        q, k_cache, v_cache, cache_seqlens, page_table, cu_seqlens_q, max_q, scale, causal
    )
    return (out, lse) if return_softmax_lse else out


def merge_state_v2(
    v_a: torch.Tensor, s_a: torch.Tensor, v_b: torch.Tensor, s_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """sgl_kernel.merge_state_v2: two partial attentions (tokens, heads, dim) with their natural
    log-sum-exps (tokens, heads) merged into one."""
    s_a32, s_b32 = s_a.float(), s_b.float()
    s_a32 = torch.where(torch.isinf(s_a32), -math.inf, s_a32)
    s_b32 = torch.where(torch.isinf(s_b32), -math.inf, s_b32)
    top = torch.maximum(s_a32, s_b32)
    w_a, w_b = torch.exp(s_a32 - top), torch.exp(s_b32 - top)
    total = w_a + w_b
    out = (v_a.float() * (w_a / total)[..., None] + v_b.float() * (w_b / total)[..., None]).to(
        v_a.dtype
    )
    return out, torch.log(total) + top


def flash_attn_varlen_func(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("flash_attn_varlen_func: only the prefill / MLA paths call it")
