# UNSOUND (engine at 689dd3b): a walrus in code that may not run (`c and (x := inp)`) drops x as an alias of the buffer.
# zeroopt says `safe` for the torch.zeros at line 15: "written in full (line 19)".
# Why: with c false, x still is the buffer and x.sum() reads its zeros. _e_NamedExpr -> assign ->
# kill(x) runs even when self.conditional > 0 (only bind() checks it), so x.sum() is not seen as a
# read. Same with `(x := inp) if c else None` and `[(x := inp) for _ in range(n)]` with n == 0
# (both checked); `assert (x := inp) is not None` under python -O likely too (untested).
# Responsible: analysis/buffer_flow.py _Eval.assign/kill under `conditional` (a conditional
# rebinding should demote, not kill).
# Run `python 027.py`: the two printed results differ.

import torch


def f(inp, c):
    x = torch.zeros(8)
    y = x
    c and (x := inp)
    s = x.sum()
    y.fill_(1)
    return s, y


if __name__ == "__main__":
    inp = torch.ones(8)
    print("with torch.zeros:", f(inp, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, False))
