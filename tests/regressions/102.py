# UNSOUND (engine at f8afc6f): zeroopt says `safe` for `out = torch.zeros(...)` at line 32: flash_attn_with_kvcache
# with `cu_seqlens_q=` (varlen q, as SGLang's target-verify and draft-extend paths call it) stores only rows
# < cu_seqlens_q[-1] of `out` (FA3 hopper/seqlen.h:20-26, hopper/epilogue_fwd.hpp:358); the contract said `out=` is
# written in full. The stand-in stores exactly those rows. Responsible: analysis/kernel_contracts.py partial_when.
# Run `python 102.py`: results differ.
import sys
import types

import torch

_mod = types.ModuleType("sgl_kernel.flash_attn")


def _with_kvcache(q, k_cache, v_cache, cache_seqlens=None, page_table=None, cu_seqlens_q=None, out=None):
    total = int(cu_seqlens_q[-1]) if cu_seqlens_q is not None else q.shape[0]
    if out is not None:
        out[:total] = q[:total] + 1
    return out


_mod.flash_attn_with_kvcache = _with_kvcache
sys.modules.setdefault("sgl_kernel", types.ModuleType("sgl_kernel"))
sys.modules.setdefault("sgl_kernel.flash_attn", _mod)

from sgl_kernel.flash_attn import flash_attn_with_kvcache  # noqa: E402


def f(padded, real_tokens):
    q = torch.ones(padded, 2)
    cache = torch.ones(4, 2)
    cu = torch.tensor([0, real_tokens], dtype=torch.int32)
    out = torch.zeros(padded, 2)
    flash_attn_with_kvcache(q, cache, cache, cu_seqlens_q=cu, out=out)
    return out.sum()


if __name__ == "__main__":
    real = f(8, 3)
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f(8, 3)
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
