# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 18 ("written in full (line 20)").
# A dataclass defining __getattribute__ (not in records._CODE_METHODS) counts as a plain record, but every `m.a` runs it
# (here: returns a copy), so `m.a.fill_` does not write buf. Responsible: analysis/records.py _CODE_METHODS. `python 072.py`
from dataclasses import dataclass

import torch


@dataclass
class S:
    a: torch.Tensor

    def __getattribute__(self, name):
        return object.__getattribute__(self, name).clone()


def f(n):
    buf = torch.zeros(n)
    m = S(a=buf)
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
