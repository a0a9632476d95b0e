# UNSOUND (engine at 689dd3b): parameter annotations of a nested def are evaluated at definition time (Python < 3.14,
# no `from __future__ import annotations`), and this one reads the buffer.
# zeroopt says `safe` for the torch.zeros at line 13: "written in full (line 18)".
# Why: `def g(a: x.sum() = 0)` runs x.sum() when the def statement runs, before x.fill_(1); the value
# is kept in g.__annotations__. Responsible: analysis/buffer_flow.py _Eval._definition evaluates
# decorators and defaults but not annotations (args' and the return annotation).
# Run `python 026.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(8)

    def g(a: x.sum() = 0):
        pass

    x.fill_(1)
    return g.__annotations__["a"], x


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
