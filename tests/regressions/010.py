# UNSOUND: out= whose result is smaller than the buffer resizes it; a view taken before still sees the old elements.
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 14, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: torch.cat(..., out=x) with a k-element result resizes x to k elements (a warning, not an error); only those are written. v = x[:] keeps viewing the original 8 elements. out= is a full write only when the result shape provably equals the buffer's.
# Evidence the analysis gave:
#   line 14: alloc: x = torch.zeros(8)
#   line 16: write: torch.cat([inp[1][:k]], out=x) (out= is resized to the result and written in full)
# Run `python 010.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)
    v = x[:]
    torch.cat([inp[1][:k]], out=x)
    return v


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
