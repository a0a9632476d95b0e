# UNSOUND: a closure with `nonlocal k` called between complementary slices changes the bound.
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 17, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: bump() rebinds k (0 -> 3): x[:0] and x[3:] leave x[0:3] unwritten. Any call to a function that may rebind a bound name (nonlocal/global) must kill regions using it.
# Evidence the analysis gave:
#   line 17: alloc: x = torch.zeros(8)
#   line 20: write: slices together cover the buffer: x[k:] = 2
# Run `python 003.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    def bump():
        nonlocal k
        k = k + 3
    x = torch.zeros(8)
    x[:k] = 1
    bump()
    x[k:] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
