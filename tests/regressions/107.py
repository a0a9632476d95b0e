# WRONG REWRITE (engine at f8afc6f): the `safe` zeros at line 17 was right, but apply turned `from torch import zeros`
# into `from torch import zeros, empty`, adding the public name `empty` to a module without `__all__`. A module that
# did `from numpy import empty` and then `from <this module> import *` got torch's `empty` over numpy's and broke
# with a TypeError. A rewrite must not change what a module exports: a module-level import gains only an underscore
# alias (`empty as _torch_empty`), or the file's own `import torch` is used. Responsible: patcher/codemod.py
# `_via_zeros_import`. tests/test_unsound_regressions.py rewrites this file and imports it from a star-importer.
from torch import zeros


def ones_like_first(n):
    buf = zeros(n)
    buf.fill_(1.0)
    return buf


def pad(n):
    out = zeros(n)
    out.copy_(ones_like_first(n))
    return out


if __name__ == "__main__":
    print(pad(3))
