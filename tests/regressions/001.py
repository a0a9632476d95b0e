# UNSOUND: k -= 1 (augmented assignment) between complementary slices does not invalidate the region x[:k].
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 14, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: x[:k] writes [0, k); after k -= 1, x[k:] writes [k-1, 8): element k-1 is covered, fine, but with k=0 -> x[:0] empty and x[-1:] only the last element: x[0:7] never written.
# Evidence the analysis gave:
#   line 14: alloc: x = torch.zeros(8)
#   line 17: write: slices together cover the buffer: x[k:] = 2
# Run `python 001.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)
    x[:k] = 1
    k -= 1
    x[k:] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
