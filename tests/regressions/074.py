# UNSOUND (engine at 48bd965): zeroopt says `safe` for `buf = torch.zeros(n)` at line 19 ("written in full (line 22)").
# A field annotated inside an `if` of the class body is a dataclass field, but records._fields only walks the body's
# top-level statements: it sees fields (b,), maps R(buf) to m.b (really m.a), and then `m.a.sum()` on a record that
# "holds only m.b" is no read at all. Responsible: analysis/records.py _fields (nested annotations) and buffer_flow
# _e_Attribute trusting the field list. `python 074.py`
from dataclasses import dataclass

import torch


@dataclass
class R:
    if True:
        a: torch.Tensor
    b: int = 0


def f(n):
    buf = torch.zeros(n)
    m = R(buf)
    s = m.a.sum()
    buf.fill_(1.0)
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
