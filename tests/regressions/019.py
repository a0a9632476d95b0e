# UNSOUND: zeroopt (engine at d00c3b8) says `safe` for `buf = torch.zeros(n)` at line 21: "written in
# full (line 25) before any read". But the loop on line 23 steps the generator `it`, made on line 20
# from the nested generator function `gen`, whose body reads `buf` at every step, before the write.
# Stepping an iterator was not taken as running code. (Same with `a, = it` and `[x for x in it]`.)
# Oracle: with the allocation poisoned, `total` changes.
# Run `python 019.py`: prints the result with zeros, then with the memory filled with ones.

import torch


def _ones_instead(*shape, **kw):
    return torch.ones(*shape, **kw)


def f(n):
    def gen():
        for i in range(n):
            yield buf[i]

    it = gen()
    buf = torch.zeros(n)
    total = 0
    for x in it:
        total = total + x
    buf.fill_(1)
    return total, buf


if __name__ == "__main__":
    print(f(3))
    torch.zeros = _ones_instead  # what torch.empty may hand back
    print(f(3))
