# UNSOUND (engine at 689dd3b): scalars.int_names takes the target of `for k in range(...)` as an int by the name
# `range` alone, even where `range` is rebound (here a local; a module-level def works the same).
# zeroopt says `safe` for the torch.zeros at line 14: "slices together cover the buffer (line 18): x[k:] = 2".
# Why: k is a 0-dim tensor; k.add_(1) moves it from 0 to 1 without rebinding, so x[:k] then x[k:]
# leave x[0] unwritten (cf. 005). cfg._surely_nonempty resolves `range` through the resolver;
# scalars.int_names checks only `node.iter.func.id == "range"`. Responsible: analysis/scalars.py.
# Run `python 033.py`: the two printed results differ.

import torch


def f():
    range = lambda n: [torch.tensor(0)]
    x = torch.zeros(8)
    for k in range(1):
        x[:k] = 1
        k.add_(1)
        x[k:] = 2
        return x
    x.fill_(1)
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
