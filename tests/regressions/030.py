# UNSOUND (engine at 689dd3b): a plain dataclass with a `field(kw_only=True)`: positional arguments skip that field.
# zeroopt says `safe` for the torch.zeros at line 21: "written in full (line 23): m.a.fill_(1)".
# Why: M's __init__ is (self, b=None, *, a=None), so M(x, a=other) stores x in m.b, not m.a;
# m.a.fill_(1) writes `other` and m.b.sum() reads the zeros. records.py lists fields in declaration
# order and accepts any field() keyword but init/default/default_factory; _record then zips
# positional args with that order. Responsible: analysis/records.py _plain_default (kw_only) and
# buffer_flow._record.
# Run `python 030.py`: the two printed results differ.

import torch
from dataclasses import dataclass, field


@dataclass
class M:
    a: object = field(default=None, kw_only=True)
    b: object = None


def f(inp):
    x = torch.zeros(8)
    m = M(x, a=inp.clone())
    m.a.fill_(1)
    return m.b.sum()


if __name__ == "__main__":
    inp = torch.ones(8)
    print("with torch.zeros:", f(inp))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp))
