# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 21 ("written in full (line 23)").
# `__post_init__ = _post` binds the hook by an assignment in the class body; records._fields only rejects a *def* named
# __post_init__ (the same holds for __init__/__setattr__ = ...), so P counts as a plain record although its __init__
# replaces m.a by a copy. Responsible: analysis/records.py _fields (only FunctionDef checked). `python 071.py`
from dataclasses import dataclass

import torch


def _post(self):
    self.a = self.a.clone()


@dataclass
class P:
    a: torch.Tensor
    __post_init__ = _post


def f(n):
    buf = torch.zeros(n)
    m = P(a=buf)
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
