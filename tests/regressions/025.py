# UNSOUND (engine at 689dd3b): a class body runs where the `class` statement is, and it reads the buffer.
# zeroopt says `safe` for the torch.zeros at line 12: "written in full (line 17)".
# Why: `class C: s = x.sum()` evaluates x.sum() at definition time, before x.fill_(1). The analysis
# evaluates only a class's decorators, bases and keywords, never its body. Responsible:
# analysis/buffer_flow.py _Eval._definition (ClassDef).
# Run `python 025.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(8)

    class C:
        s = x.sum()

    x.fill_(1)
    return C.s, x


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
