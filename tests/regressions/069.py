# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 19 ("written in full (line 21)").
# records._fields skips a field only if its annotation text contains "ClassVar"; `CV[int]` (ClassVar imported as CV) is a
# ClassVar to dataclasses (excluded from __init__), so the analysis maps Meta(x, y) to n=x, a=y while really a=x, b=y:
# `m.a.fill_` writes only buf[:2], not all of buf. Responsible: analysis/records.py _fields (textual ClassVar test). `python 069.py`
from dataclasses import dataclass
from typing import ClassVar as CV

import torch


@dataclass
class Meta:
    n: CV[int] = 0
    a: torch.Tensor
    b: torch.Tensor


def f(n):
    buf = torch.zeros(n)
    m = Meta(buf[:2], buf)
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
