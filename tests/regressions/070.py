# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 25 ("written in full (line 27)").
# A field shadowed by a property: the generated __init__ runs the setter (which stores a copy) and `m.a` runs the getter;
# records._fields only rejects functions named __init__/__post_init__/__setattr__/..., not descriptors on field names,
# so Meta counts as a plain record and `m.a.fill_` is taken as a full write of buf. Responsible: analysis/records.py
# _fields / _CODE_METHODS. `python 070.py`
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    a: torch.Tensor

    @property
    def a(self):
        return self._a

    @a.setter
    def a(self, v):
        self._a = v.clone()


def f(n):
    buf = torch.zeros(n)
    m = Meta(a=buf)
    m.a.fill_(1.0)
    return buf.sum()


if __name__ == "__main__":
    real = f(4)
    _zeros = torch.zeros

    def _poisoned(*a, **k):
        return _zeros(*a, **k).fill_(float("nan"))

    torch.zeros = _poisoned
    poisoned = f(4)
    torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
