# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 24 ("written in full (line 26)").
# `globals()["Q"] = _Copying` at module level rebinds the name Q to another class (whose __init__ stores a copy);
# records._module_bindings counts only syntactic bindings of Q (once), so `Q(a=buf)` is still taken as the plain
# dataclass that stores buf in m.a. Responsible: analysis/records.py plain_dataclasses/_module_bindings. `python 076.py`
from dataclasses import dataclass

import torch


@dataclass
class Q:
    a: torch.Tensor


class _Copying:
    def __init__(self, a):
        self.a = a.clone()


globals()["Q"] = _Copying


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
