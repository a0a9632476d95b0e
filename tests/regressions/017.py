# UNSOUND: zeroopt (engine at 39622fb) says `safe` for `d["k"] = torch.zeros(n)` at line 16: "written in
# full (line 19) before any read". But the generator expression on line 17 reads `d["k"]`, and `sum`
# runs it on line 18, before the write: as in 016, only bare aliases were looked for.
# Oracle: with the allocation poisoned, `total` changes.
# Run `python 017.py`: prints the result with zeros, then with the memory filled with ones.

import torch


def _ones_instead(*shape, **kw):
    return torch.ones(*shape, **kw)


def f(n):
    d = {}
    d["k"] = torch.zeros(n)
    g = (d["k"][i] for i in range(n))
    total = sum(g)
    d["k"].fill_(1)
    return total, d["k"]


if __name__ == "__main__":
    print(f(3))
    torch.zeros = _ones_instead  # what torch.empty may hand back
    print(f(3))
