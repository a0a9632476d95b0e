# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for the torch.zeros at line 16 ("written in full (line 19)").
# Why: a chained comparison `a < b < c` short-circuits: c is evaluated only when `a < b` holds. Here, with lo >= 0,
# `(x := buf)` never runs, x stays `other`, x.fill_(1) writes `other`, and buf.sum() reads the zeros.
# analysis/buffer_flow.py _Eval._e_Compare evaluates every comparator unconditionally, so the walrus counts as a
# definite rebinding (x must be buf) and the fill as a full write of buf. Regression 027 fixed the same for
# `c and (x := ...)` (BoolOp) but not for the comparators after the first of a chain: evaluate
# `e.comparators[1:]` under `self.conditional += 1`.
# Run `python 066.py`: the two printed results differ.

import torch


def f(n, lo):
    other = torch.ones(n)
    x = other
    buf = torch.zeros(n)
    if lo < 0 < (x := buf).numel():
        pass
    x.fill_(1)
    return buf.sum()


if __name__ == "__main__":
    print("with torch.zeros:", f(3, 5))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(3, 5))
