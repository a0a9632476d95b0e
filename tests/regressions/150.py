# UNSOUND (engine at b5ffc56): zeroopt says `safe` for `buf = torch.zeros(...)` at line 21. The Triton kernel is
# handed the view `buf[:4]` but loads 8 elements from its pointer: a kernel gets a raw pointer, so a view lets it
# reach the rest of the buffer (unwritten when it runs). Responsible: analysis/kernel_effects.py (a load through a
# pointer into part of a buffer is a possible read of all of it). Runs on CPU (TRITON_INTERPRET=1).
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_rows(src_ptr, dst_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


def f():
    buf = torch.zeros(8)
    buf[:4].fill_(1.0)
    out = torch.empty(8)
    _copy_rows[(1,)](buf[:4], out, N=8)
    buf[4:].fill_(2.0)
    return out, buf


if __name__ == "__main__":
    real = f()[0].tolist()
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f()[0].tolist()
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
