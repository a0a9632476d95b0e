# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 41 ("`cu_k` is never read; torch.empty is equivalent").
# Why: rules/kernel_contracts binds *positional* arguments by one fixed parameter order (the FA3/hopper
# flash_attn_varlen_func: q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, ...), but
# KernelContract.matches accepts any module whose path contains "flash_attn"/"flash_attention"/"sgl_kernel". vllm's
# vllm.vllm_flash_attn.flash_attn_varlen_func has another order: (q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k,
# cu_seqlens_k, seqused_k, q_v, ...). The 7th positional argument, cu_seqlens_k here, is taken as `max_seqlen_k`, which
# the contract lists as `ignored` (a scalar): _kernel_call only evaluates it, so the read of cu_k by the kernel is lost.
# cu_k[0] is never written (cumsum fills cu_k[1:]) and the kernel reads it as the start of sequence 0.
# (Same family: sglang's kernels/ops/attention/flash_attention_v4_sm120.flash_attn_varlen_func puts qv at 5 and
# seqused_q at 6, so a seqused_q buffer passed positionally is also `ignored`; FA2's flash_attn positional orders differ
# too.) The stand-in below follows vllm's documented signature and reads k/v rows [cu_k[b], cu_k[b+1]).
# Run `python 052.py`: the printed results differ (poison -1 and 2**30 for the int32 buffer).

import sys
import types

import torch


def _stand_in(q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k, cu_seqlens_k=None, seqused_k=None):
    out = torch.empty_like(q)
    for b in range(cu_seqlens_q.numel() - 1):
        qs, qe = int(cu_seqlens_q[b]), int(cu_seqlens_q[b + 1])
        ks, ke = int(cu_seqlens_k[b]), int(cu_seqlens_k[b + 1])
        kk, vv = k[ks:ke], v[ks:ke]
        out[qs:qe] = torch.softmax(q[qs:qe] @ kk.T, -1) @ vv if kk.shape[0] else 0
    return out


_pkg = types.ModuleType("vllm")
_mod = types.ModuleType("vllm.vllm_flash_attn")
_mod.flash_attn_varlen_func = _stand_in
_pkg.vllm_flash_attn = _mod
sys.modules.setdefault("vllm", _pkg)
sys.modules.setdefault("vllm.vllm_flash_attn", _mod)

from vllm.vllm_flash_attn import flash_attn_varlen_func  # noqa: E402


def f(q, k, v, cu_q, k_lens, max_q, max_k):
    cu_k = torch.zeros(k_lens.numel() + 1, dtype=torch.int32)
    torch.cumsum(k_lens, 0, out=cu_k[1:])
    return flash_attn_varlen_func(q, k, v, max_q, cu_q, max_k, cu_k)


if __name__ == "__main__":
    def args():
        q = torch.arange(32.0).reshape(4, 8) / 10
        k = torch.arange(48.0).reshape(6, 8) / 10
        v = torch.arange(48.0).reshape(6, 8)
        return q, k, v, torch.tensor([0, 2, 4]), torch.tensor([3, 3]), 2, 3

    print("with torch.zeros:", f(*args())[:2])
    _zeros = torch.zeros
    for poison in (-1, 2**30):
        torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(poison)  # what torch.empty may hold
        print(f"as torch.empty ({poison}):", f(*args())[:2])
