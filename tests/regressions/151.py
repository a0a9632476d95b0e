# UNSOUND (engine at b5ffc56): zeroopt says `safe` for `s = torch.zeros(1)` at line 23. The kernel body never
# dereferences `scale_ptr`, but `@triton.heuristics` runs its lambda on the host with the launch's arguments, and
# this one reads the tensor's first element. Responsible: analysis/triton_summary.py (a decorator's hook that may
# read an argument makes that parameter unknown; a hook it cannot see makes every parameter so). Runs on CPU
# (TRITON_INTERPRET=1).
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch
import triton
import triton.language as tl


@triton.heuristics({"SCALE": lambda args: float(args["scale_ptr"][0])})
@triton.jit
def _scale(x_ptr, scale_ptr, out_ptr, N: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * SCALE)


def f():
    s = torch.zeros(1)
    x = torch.ones(8)
    out = torch.empty(8)
    _scale[(1,)](x, s, out, N=8)
    s.fill_(2.0)
    return out, s


if __name__ == "__main__":
    real = f()[0].tolist()
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f()[0].tolist()
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
