# UNSOUND: zeroopt (engine at 39622fb) says `safe` for `buf = torch.zeros(n)` at line 16: "written in
# full (line 22) before any read". But `sorted` calls the key function `key`, a closure over `buf`,
# on line 21, before the write. `buf` was known to escape into the closure, yet `sorted` counted as
# a built-in that only reads its arguments, not as code that may run what it is handed.
# Oracle: with the allocation poisoned, `order` changes.
# Run `python 018.py`: prints the result with zeros, then with the memory filled with ones.

import torch


def _ones_instead(*shape, **kw):
    return torch.ones(*shape, **kw)


def f(n):
    buf = torch.zeros(n)

    def key(i):
        return (buf[i].item() * i, -i)

    order = sorted(range(n), key=key)
    buf.fill_(1)
    return order, buf


if __name__ == "__main__":
    print(f(3))
    torch.zeros = _ones_instead  # what torch.empty may hand back
    print(f(3))
