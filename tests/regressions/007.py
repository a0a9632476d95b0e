# UNSOUND: the allocation size is a 0-dim tensor mutated in place before x[k:m].
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 15, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: torch.zeros(m) allocates 2 elements; after m.sub_(1), x[k:m] ends at 1: x[1] never written.
# Evidence the analysis gave:
#   line 15: alloc: x = torch.zeros(m)
#   line 18: write: slices together cover the buffer: x[k:m] = 2
# Run `python 007.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    m = torch.tensor(n + 2)
    x = torch.zeros(m)
    m.sub_(1)
    x[:k] = 1
    x[k:m] = 2
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
