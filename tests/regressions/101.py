# UNSOUND (engine at f8afc6f): zeroopt says `safe` for `out = torch.zeros(...)` at line 34: the FA4 contract said
# varlen `out=` is written in full, but the kernel stores only rows < cu_seqlens_q[-1] (flash-attention
# flash_attn/cute/seqlen_info.py:97-116, flash_attn/cute/flash_fwd.py:438; FA3 hopper/epilogue_fwd.hpp:275-278,358):
# with a padded batch (capture-size out, fewer real tokens) the padding rows keep what the allocation left there.
# The stand-in below stores exactly the rows the kernel stores. Responsible: analysis/kernel_contracts.py (varlen
# `out=` is written only in part when cu_seqlens_q or seqused_q is passed). Run `python 101.py`: results differ.
import sys
import types

import torch

_top = types.ModuleType("flash_attn")
_cute = types.ModuleType("flash_attn.cute")


def _varlen(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None, out=None):
    total = int(cu_seqlens_q[-1])
    result = q[:total] * 2
    if out is not None:
        out[:total] = result  # rows past cu_seqlens_q[-1] are never stored
    return out


_cute.flash_attn_varlen_func = _varlen
_top.cute = _cute
sys.modules.setdefault("flash_attn", _top)
sys.modules.setdefault("flash_attn.cute", _cute)

from flash_attn.cute import flash_attn_varlen_func  # noqa: E402


def f(padded, real_tokens):
    q = torch.ones(padded, 2)
    out = torch.zeros(padded, 2)
    cu = torch.tensor([0, real_tokens], dtype=torch.int32)
    flash_attn_varlen_func(q, q, q, cu_seqlens_q=cu, cu_seqlens_k=cu, out=out)
    return out.sum()


if __name__ == "__main__":
    real = f(8, 5)
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f(8, 5)
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
