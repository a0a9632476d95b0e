# UNSOUND (engine at 49151dc): `x.grad` is taken as metadata (not the buffer), but it can alias the buffer.
# zeroopt says `safe` for the torch.zeros at line 13: "written in full (line 16)".
# Why: analysis/buffer_flow.py _buffer_attribute returns None for `attr == "grad"` (beside METADATA_ATTRS),
# so `x.grad.sum()` at line 15 is not a read of anything tracked; the store `x.grad = x.view(4)`
# (line 14) does not lose or alias the buffer either. x.grad is an ordinary tensor attribute that
# may hold any tensor of x's shape, here a view of x itself, so the zeros are read.
# Run `python 047.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(4)
    x.grad = x.view(4)
    s = x.grad.sum()
    x.fill_(1)
    return s


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
