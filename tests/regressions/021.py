# UNSOUND (engine at 689dd3b): `x[None]` (an index of only newaxis/Ellipsis) is taken as the buffer itself (SELF), so a
# slice of it is recorded as a region of x's dim 0, though it slices the new size-1 axis.
# zeroopt says `safe` for the torch.zeros at line 14: "slices together cover the buffer (line 16): x[None][k:] = 2".
# Why: x[:k] writes rows [0, k); x[None][k:] slices the added axis of size 1: with k=1 it is empty.
# Rows 1..3 are never written. Responsible: analysis/buffer_flow.py _classify_index returns "all" for
# `None`/`...` items and _e_Subscript returns `base` unchanged for "all" (a newaxis shifts dims).
# Same with `x[..., None][..., k:]` next to `x[..., :k]` (dim -1 is the new axis).
# Run `python 021.py`: the two printed results differ.

import torch


def f(k: int):
    x = torch.zeros(4, 2)
    x[:k] = 1
    x[None][k:] = 2
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f(1))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(1))
