# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for the torch.zeros at line 14 ("slices together cover the buffer (line 21): x[k:] = 2").
# Why: the class body declares `nonlocal k` and rebinds f's `k` (2 -> 3) when the `class` statement runs, between the
# two slices. analysis/resolve.py _ScopeBuilder ignores `nonlocal`/`global` in class bodies, so the class body's `k = 3`
# binds a class attribute: f's `k` is not in `captured`/`nonlocal_names`, int_names keeps trusting it, and
# buffer_flow._definition only checks the class body against the *buffer's* roots, never against slice-bound names.
# x[:k] is x[:2], x[k:] is x[3:]: x[2] is never written. (Same resolver gap as 002.py, a different consequence.)
# Run `python 063.py`: the two printed results differ.

import torch


def f():
    k = 2
    x = torch.zeros(4)
    x[:k] = 1

    class C:
        nonlocal k
        k = 3

    x[k:] = 2
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
