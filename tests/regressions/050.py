# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 15 ("slices together cover the buffer (line 18): x[k:] = 2").
# Why: rules/scalars._is_int accepts `math.ceil/floor/prod/lcm/gcd(...)` as a Python int when the receiver is *spelled* `math`,
# without resolving it (no `qualify`, no check of local/module bindings). Here `math` is torch (`import torch as math`; a
# parameter or local named `math` is the same), so `k = math.ceil(t)` is a 0-dim int tensor. `k.add_(2)` then moves the
# bound in place (as in regression 005, which int_names now guards only for names it does not believe are ints): x[:k] is
# x[:1], x[k:] is x[3:], and elements 1..2 are never written.
# Run `python 050.py`: the two printed results differ.

import torch
import torch as math


def f(t):
    k = math.ceil(t)
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
