# UNSOUND (engine at f8afc6f): zeroopt says `safe` for `out = torch.zeros(...)` at line 26 ("`out=` of
# flash_attn_varlen_func (kernel contract ...)"). The built-in FlashAttention contract matched by SUBSTRING:
# `flash_attn_ref` contains `flash_attn`, so a local module named like the kernel got the contract that its `out=` is
# written in full. This one writes nothing. Responsible: analysis/kernel_contracts.py KernelContract.matches; a
# contract now applies only to the exact modules whose source it was read from. Run `python 100.py`: results differ.
import sys
import types

import torch

_ref = types.ModuleType("flash_attn_ref")


def _reference(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, out=None):
    return q * 2  # a reference implementation: it never touches `out`


_ref.flash_attn_varlen_func = _reference
sys.modules["flash_attn_ref"] = _ref

from flash_attn_ref import flash_attn_varlen_func  # noqa: E402


def f(n):
    q = torch.ones(n, 2)
    out = torch.zeros(n, 2)
    flash_attn_varlen_func(q, q, q, out=out)
    return out.sum()


if __name__ == "__main__":
    real = f(4)
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f(4)
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
