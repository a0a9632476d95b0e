# UNSOUND (engine at 689dd3b): `out=x` written before `input=x` as keywords of the same call.
# zeroopt says `safe` for the torch.zeros at line 14: "written in full (line 15)".
# Why: the arguments of a call are processed in source order, out= first counts as a full write,
# and the later `input=x` is then a read after a full write. But the call reads its inputs before it
# writes out=: torch.add(out=x, input=x, other=inp) computes zeros+inp. Responsible:
# analysis/buffer_flow.py _call: the loop over self._args(e) writes out= (and contract outputs) in the
# middle of the argument reads; outputs should be written after all inputs are read.
# Run `python 024.py`: the two printed results differ.

import torch


def f(inp):
    x = torch.zeros(8)
    torch.add(out=x, input=x, other=inp)
    return x


if __name__ == "__main__":
    inp = torch.arange(8.0)
    print("with torch.zeros:", f(inp))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp))
