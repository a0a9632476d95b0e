# UNSOUND (engine at 9d0f8b9, site + fix): zeroopt says `safe` for the torch.zeros at line 29 ("written in full (line 30)"),
# and `zeroopt apply` rewrites it to `torch.empty(n)`. But `torch` is not the torch module there.
# Why: a class body may declare `global torch` and rebind the module's `torch` (here to a wrapper without `empty`).
# analysis/resolve.py _ScopeBuilder ignores `global`/`nonlocal` in class bodies ("module and class bodies ignore them")
# and binds `torch` in the class scope, so the module's `torch` still resolves to `import torch` alone. (libcst's
# QualifiedNameProvider, used by patcher/codemod.py, is fooled the same way, so the rewrite goes through.)
# A class body's `global` does rebind module names; it must send the binding to the module scope (and `nonlocal`
# to the enclosing function, see 003.py).
# Run `python 062.py`: the original prints the tensor; the patched call raises AttributeError.

import torch


class Counter:
    def __init__(self, real):
        self.real, self.n = real, 0

    def zeros(self, *shape):
        self.n += 1
        return self.real.zeros(*shape)


class Config:
    global torch
    torch = Counter(torch)


def f(n):
    x = torch.zeros(n)
    x.fill_(1)
    return x


if __name__ == "__main__":
    print("with torch.zeros:", f(3))
    try:
        x = torch.empty(3)  # the fix: `x = torch.empty(n)`
        x.fill_(1)
        print("as torch.empty  :", x)
    except AttributeError as e:
        print("as torch.empty  : AttributeError:", e)
