# UNSOUND FIX (engine at 9d0f8b9): zeroopt says `safe` for `zeros(3)` at line 20 (class body, "written in full (line 21)"),
# and `zeroopt apply` rewrites it to `empty(3)`, adding `empty` to the import in the class body: `from torch import zeros, empty`.
# That import binds `empty` as a class attribute of `Jobs`, which shadows the inherited method queue.Queue.empty:
# `Jobs().empty()` now calls torch.empty(<the queue>) and raises TypeError.
# Why: patcher/codemod.py _via_zeros_import checks only that the name `empty` is unused as a *Name* anywhere in the
# module (`self.taken`); an import in a class body creates an attribute, visible through instances and subclasses,
# where an inherited `empty` (spelled only as `q.empty`, an attribute) may live. (The `_torch_empty` alias is
# visible there too, only less likely to clash.) Safer: never extend an import that sits in a class body.
# Run `python 064.py`: the original prints `True tensor(...)`; with the patched import it raises TypeError.
# (`zeroopt apply 004.py` writes exactly that: `from torch import zeros, empty` and `weights = empty(3)`.)

import queue

import torch


class Jobs(queue.Queue):
    from torch import zeros

    weights = zeros(3)
    weights.fill_(1)


if __name__ == "__main__":
    print("with zeros:", Jobs().empty(), Jobs.weights)
    Jobs.empty = torch.empty  # what the patched `from torch import zeros, empty` in the class body binds
    try:
        print("as empty  :", Jobs().empty(), Jobs.weights)
    except TypeError as e:
        print("as empty  : TypeError:", e)
