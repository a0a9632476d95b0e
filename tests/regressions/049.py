# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 18 ("slices together cover the buffer (line 21): x[k:] = 2").
# Why: rules/scalars._is_int takes `int(...)` (likewise len/max/min/abs/round) as a Python int by the bare name; `shadowed` only
# looks at bindings *in the function itself*. Here `int` is rebound at module level (a nested function's enclosing local, or a
# `from mod import int` behaves the same), so `k = int(kt)` is the 0-dim tensor kt itself; `kt.add_(2)` moves k in place and
# the region text `x[:k]` (= x[:1]) and `x[k:]` (= x[3:]) no longer meet: elements 1..2 keep their initial contents.
# Regression 033 fixed this for `range` only (it is resolved through `qualify`); these builtins are still matched by text.
# Run `python 049.py`: the two printed results differ.

import torch


def int(v):  # a module-level rebinding of a builtin the scalar analysis trusts by name
    return v


def f(kt):
    k = int(kt)
    x = torch.zeros(8)
    x[:k] = 1
    kt.add_(2)
    x[k:] = 2
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f(torch.tensor(1)))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(torch.tensor(1)))
