# UNSOUND: a module-level function with `global K` changes the bound used by two slices.
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 22, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: bump() rebinds the global K (0 -> 1): x[0] is never written.
# Evidence the analysis gave:
#   line 22: alloc: x = torch.zeros(8)
#   line 25: write: slices together cover the buffer: x[K:] = 2
# Run `python 004.py`: the two printed results differ.

import torch
K = 0


def bump():
    global K
    K += 1


def f(inp, n, k, flag):
    global K
    K = k
    x = torch.zeros(8)
    x[:K] = 1
    bump()
    x[K:] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
