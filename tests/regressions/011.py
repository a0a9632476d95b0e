# UNSOUND: out= with a smaller result, then resize_ back: the tail keeps its initial contents.
# zeroopt (engine at commit 2f2cb14) says `safe` for the torch.zeros at line 14, col 9,
# yet replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different places).
# Why: torch.add(<2 elements>, 1, out=x) shrinks x to 2 elements; resize_(8) grows it back over the same storage, whose elements 2..7 were never written.
# Evidence the analysis gave:
#   line 14: alloc: x = torch.zeros(8)
#   line 15: write: torch.add(inp[1][:2], 1, out=x) (out= is resized to the result and written in full)
# Run `python 011.py`: the two printed results differ.

import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)
    torch.add(inp[1][:2], 1, out=x)
    x.resize_(8)
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
