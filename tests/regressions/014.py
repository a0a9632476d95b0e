# UNSOUND FIX (receiver is not a tensor): zeroopt (engine at fc31c0e) says `safe` for `pool.new_zeros(8)`
# at line 21, col 9, with the fix `pool.new_empty(8)`. But `pool` is an instance of a class defined in
# this very module whose `new_zeros` is its own method; it has no `new_empty`. `zeroopt apply` would turn
# working code into an AttributeError. Oracle: the fix text, run in place of the call, raises
# "AttributeError: 'Pool' object has no attribute 'new_empty'".
# Like a user's own `zeros` function (issue 2: "a user's own zeros function ... is not [found]"),
# `.new_zeros` on a receiver known to be a non-tensor (an instance of a local class, or any module that
# defines a `new_zeros` method) should not be a finding, or at least get no fix.
# Run `python 014.py`: the second call raises.

import torch


class Pool:
    def new_zeros(self, n):
        return torch.ones(n)


def f(inp, n, k, flag):
    pool = Pool()
    x = pool.new_zeros(8)
    x.fill_(1)
    return x


def f_fixed(inp, n, k, flag):  # what `zeroopt apply` writes
    pool = Pool()
    x = pool.new_empty(8)
    x.fill_(1)
    return x


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("original:", f(inp, 0, 0, False))
    print("after apply:", f_fixed(inp, 0, 0, False))
