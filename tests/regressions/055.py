# UNSOUND, assumption-dependent (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 15 ("slices together cover
# the buffer (line 20): x[k:] = 2").
# Why: rules/scalars.int_names trusts a parameter annotation `k: int` as proof that k holds an immutable Python int.
# Annotations are not enforced, and the documented assumptions do not mention them; a caller passing a 0-dim integer
# tensor (common for lengths computed on device) gets k mutated in place by `k.add_(2)`, so x[:k] is x[:1] and x[k:] is
# x[3:]: elements 1..2 keep their initial contents. (Regression 005 is the same effect for an unannotated k, which is
# now distrusted; only the annotation makes the difference.) If annotations are meant to be trusted, this belongs in the
# rule's documented assumptions.
# Run `python 055.py`: the two printed results differ.

import torch


def f(k: int):
    x = torch.zeros(8)
    x[:k] = 1
    k.add_(2)
    x[k:] = 2
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f(torch.tensor(1)))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(torch.tensor(1)))
