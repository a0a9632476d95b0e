# UNSOUND FIX (engine at 9d0f8b9): zeroopt says `safe` for `zeros(n)` at line 22 ("written in full (line 23)"), and
# `zeroopt apply` rewrites it to `empty(n)`, reusing the `from torch import empty` on line 19. But that import runs
# only in the `if` branch, which returns: on the path that reaches line 22, `empty` is an unbound local, and the
# patched function raises UnboundLocalError.
# Why: patcher/codemod.py _Planner._existing_binding accepts a name when every assignment of it in the call's scope
# is an import of torch.empty *on an earlier line* (`self._start_line(a.node) < before_line`). An earlier line is
# not an import that has run: it may sit in a branch, a loop body run later, an `except`, or a `def`. It should be
# accepted only where the import dominates the call (or only at the top level of the module, before any use).
# A variant: `if TYPE_CHECKING: from torch import empty` at module level, above a function that calls `zeros`, is
# taken the same way; the patched call raises NameError at run time.
# Run `python 065.py`: the original prints the tensor; the patched function raises UnboundLocalError.

import torch
from torch import zeros


def f(n, like=None):
    if like is not None:
        from torch import empty

        return empty(like.shape)
    x = zeros(n)
    x.fill_(1)
    return x


def f_patched(n, like=None):  # f as `zeroopt apply` writes it
    if like is not None:
        from torch import empty

        return empty(like.shape)
    x = empty(n)
    x.fill_(1)
    return x


if __name__ == "__main__":
    print("with zeros:", f(3))
    try:
        print("as empty  :", f_patched(3))
    except UnboundLocalError as e:
        print("as empty  : UnboundLocalError:", e)
