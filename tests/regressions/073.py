# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 17 ("written in full (line 24)").
# `m.a` is fresh (buf[:2], written in full through m.a). `m2.__dict__["a"] = buf` through an alias m2 of m re-points m.a
# to all of buf, but rebind_elsewhere only drops paths ending in the component `['a']`, not `.a`, and the store is not
# `lost`, so `m.a.sum()` (reading buf[2:]) still counts as a read of a fresh path. Responsible: analysis/buffer_flow.py
# assign/_store_through/rebind_elsewhere (a store into `X.__dict__[k]`). `python 073.py`
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    a: torch.Tensor


def f(n):
    buf = torch.zeros(n)
    m = Meta(a=None)
    m2 = m
    m.a = buf[:2]
    m.a.fill_(1.0)
    m2.__dict__["a"] = buf
    s = m.a.sum()
    buf.fill_(0.0)
    return s


if __name__ == "__main__":
    real = f(4)
    _zeros = torch.zeros

    def _poisoned(*a, **k):
        return _zeros(*a, **k).fill_(float("nan"))

    torch.zeros = _poisoned
    poisoned = f(4)
    torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
