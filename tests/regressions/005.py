# UNSOUND: a 0-dim tensor used as a slice bound is mutated in place (kt.add_(1)) between the slices.
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 15, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: the bound's text 'kt' is unchanged but its value moved from 0 to 1: x[0] is never written. Bounds that may be tensors are mutable.
# Evidence the analysis gave:
#   line 15: alloc: x = torch.zeros(8)
#   line 18: write: slices together cover the buffer: x[kt:] = 2
# Run `python 005.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    kt = torch.tensor(k)
    x = torch.zeros(8)
    x[:kt] = 1
    kt.add_(1)
    x[kt:] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
