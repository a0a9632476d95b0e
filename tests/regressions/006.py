# UNSOUND: the allocation size name is changed by augmented assignment before x[k:m].
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 15, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: x has n+2 elements but x[k:m] stops at n+1: the last element is never written ('m' still compared equal to the size text).
# Evidence the analysis gave:
#   line 15: alloc: x = torch.zeros(m)
#   line 18: write: slices together cover the buffer: x[k:m] = 2
# Run `python 006.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    m = n + 2
    x = torch.zeros(m)
    m -= 1
    x[:k] = 1
    x[k:m] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
