# UNSOUND (engine at 689dd3b): an in-place layout change (t_/transpose_/squeeze_/unsqueeze_) through one name; another
# name for the same tensor object keeps its SELF alias, so its slices are matched with the old shape.
# zeroopt says `safe` for the torch.zeros at line 14: "slices together cover the buffer (line 17): y[:2] = 1".
# Why: y is x (same object); after x.t_() it has shape (8, 2); y[:2] writes 2 of its 8 rows (4 of 16
# elements), but the region [:2] on dim 0 is compared with the allocation's dim 0, "2". Responsible:
# analysis/buffer_flow.py _e_Call, INPLACE_LAYOUT_METHODS branch: re-binds only `key` to FULL, not the
# other must-aliases naming the same object (`y = x`). Same with squeeze_: zeros(1, 8), y[:1].
# Run `python 032.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(2, 8)
    y = x
    x.t_()
    y[:2] = 1
    return y


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
