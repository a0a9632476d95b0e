# UNSOUND: k += 1 inside a branch between complementary slices (augmented assignment not treated as a rebinding).
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 14, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 2, 3, True): result: NaN at different places).
# Why: with flag, x[:3] and x[5:] are written; x[3:5] keeps its initial contents.
# Evidence the analysis gave:
#   line 14: alloc: x = torch.zeros(8)
#   line 18: write: slices together cover the buffer: x[k:] = 2
# Run `python 002.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)
    x[:k] = 1
    if flag:
        k += 2
    x[k:] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 3, 3, True))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 3, 3, True))
