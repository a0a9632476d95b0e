# UNSOUND: zeroopt (engine at 39622fb) says `safe` for `h.buf = torch.zeros(n)` at line 21: "written in
# full (line 24) before any read". But the generator expression on line 22 reads `h.buf`, and `sum`
# runs it on line 23, before the write. A generator (or lambda) was taken to reach the buffer only if
# it named a bare alias (`buf`), not the root of a path that holds it (`h` of `h.buf`).
# Oracle: with the allocation poisoned, `total` changes.
# Run `python 016.py`: prints the result with zeros, then with the memory filled with ones.

import torch


def _ones_instead(*shape, **kw):
    return torch.ones(*shape, **kw)


class Holder:
    pass


def f(n):
    h = Holder()
    h.buf = torch.zeros(n)
    g = (h.buf[i] for i in range(n))
    total = sum(g)
    h.buf.fill_(1)
    return total, h.buf


if __name__ == "__main__":
    print(f(3))
    torch.zeros = _ones_instead  # what torch.empty may hand back
    print(f(3))
