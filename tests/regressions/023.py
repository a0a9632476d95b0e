# UNSOUND (engine at 689dd3b): the unbound form `torch.Tensor.resize_(x, 8)` after a shrinking out= (011 fixed only x.resize_).
# zeroopt says `safe` for the torch.zeros at line 13: "written in full (line 14)".
# Why: out= shrinks x to 2 elements; torch.Tensor.resize_(x, 8) grows it back over the same storage,
# whose elements 2..7 were never written. The unbound call is an unknown call, and `lost()` does
# nothing once the state is `full`, so nothing clears `full`. Responsible: analysis/buffer_flow.py
# _call (RESIZE_METHODS are only recognised as bound methods in _buffer_method) and lost().
# Run `python 023.py`: the two printed results differ.

import torch


def f(inp):
    x = torch.zeros(8)
    torch.add(inp[:2], 1, out=x)
    torch.Tensor.resize_(x, 8)
    return x


if __name__ == "__main__":
    inp = torch.arange(8.0)
    print("with torch.zeros:", f(inp))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp))
