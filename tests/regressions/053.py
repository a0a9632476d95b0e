# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros_like at line 39 ("written in full (line 41): `out=` of
# flash_attn_with_kvcache (kernel contract ...)").
# Why: rules/buffer_flow._kernel_call walks the bound arguments in source order (positional, then keywords as written) and
# applies `out=` (a contract `writes` parameter) as a full write when it meets it. `out=buf` written before `q=buf` therefore
# marks buf written in full, and the later `q=buf` read is a read of written data. The kernel reads q before it writes out.
# Regression 024 fixed this order for torch functions in `_call` (sorted by `written`), not for kernel contracts.
# The stand-in follows the documented read pattern: q read in full, k/v cache rows read up to cache_seqlens, out written.
# Run `python 053.py`: the two printed results differ.

import sys
import types

import torch


def _stand_in(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, out=None, **kw):
    res = torch.empty_like(q)
    for b in range(q.shape[0]):
        n = int(cache_seqlens[b])
        kk, vv = k_cache[b, :n], v_cache[b, :n]
        res[b] = torch.softmax(q[b] @ kk.T, -1) @ vv
    if out is not None:
        out.copy_(res)
        return out
    return res


_pkg = types.ModuleType("sgl_kernel")
_mod = types.ModuleType("sgl_kernel.flash_attn")
_mod.flash_attn_with_kvcache = _stand_in
_pkg.flash_attn = _mod
sys.modules.setdefault("sgl_kernel", _pkg)
sys.modules.setdefault("sgl_kernel.flash_attn", _mod)

from sgl_kernel.flash_attn import flash_attn_with_kvcache  # noqa: E402


def f(q, kc, vc, lens):
    buf = torch.zeros_like(q)
    buf[:, :1] = q[:, :1]
    flash_attn_with_kvcache(k_cache=kc, v_cache=vc, out=buf, q=buf, cache_seqlens=lens)
    return buf


if __name__ == "__main__":
    def args():
        q = torch.arange(2 * 3 * 4.0).reshape(2, 3, 4) / 10
        kc = torch.arange(2 * 5 * 4.0).reshape(2, 5, 4) / 10
        return q, kc, kc * 2, torch.tensor([3, 5])

    print("with torch.zeros:", f(*args()))
    _zeros = torch.zeros_like
    torch.zeros_like = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty_like may hold
    print("as torch.empty  :", f(*args()))
