# UNSOUND (engine at 49151dc): `y = x.requires_grad_(False)` returns x itself, but the analysis drops the alias.
# zeroopt says `safe` for the torch.zeros at line 14: "written in full (line 17)".
# Why: Tensor.requires_grad_ returns self (the same tensor object). analysis/semantics/entries.py lists it in
# METADATA_METHODS, and analysis/buffer_flow.py _buffer_method returns None (no buffer) for every
# METADATA_METHODS entry, so `y` is not an alias of the buffer and `y.sum()` (line 16) is not a read.
# The zeros are read through y before x.fill_(1). (requires_grad_ is the one METADATA_METHODS entry
# that returns its receiver; it needs the alias result of a view, not None.)
# Run `python 044.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(4)
    y = x.requires_grad_(False)
    s = y.sum()
    x.fill_(1)
    return s


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
