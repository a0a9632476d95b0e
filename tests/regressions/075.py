# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 23 ("written in full (line 25)").
# `Q.__init__ = _init` at module level replaces the generated __init__ (here: it stores a copy); records only counts
# Name bindings of Q, not attribute stores on it, so Q still counts as a plain record. Responsible: analysis/records.py
# plain_dataclasses/_module_bindings. `python 075.py`
from dataclasses import dataclass

import torch


@dataclass
class Q:
    a: torch.Tensor


def _init(self, a):
    self.a = a.clone()


Q.__init__ = _init


def f(n):
    buf = torch.zeros(n)
    m = Q(a=buf)
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
