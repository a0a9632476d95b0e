# UNSOUND (engine at 49151dc): `torch.nn.functional.unfold(x, ...)` (im2col, a COPY) is taken as the
# view method Tensor.unfold; likewise `torch.nested.narrow(x, ..., layout=torch.strided)` (a copy).
# zeroopt says `safe` for the torch.zeros at line 17 ("written in full (line 19)") and line 24 ("line 26").
# Why: analysis/buffer_flow.py _call treats any `torch.*` function whose LAST name is in _FUNCTIONAL_VIEWS
# (built from FULL_VIEW/PARTIAL_VIEW/MAYBE_COPY/SPLIT_METHODS of analysis/semantics/entries.py) as that tensor
# method on its first argument, whatever the namespace: torch.nn.functional.unfold -> "unfold"
# (PARTIAL_VIEW), torch.nested.narrow -> "narrow". The result is taken as a view of x, so reading it
# after x.fill_(1) counts as reading written data; but it is a copy of the zeros made at the call.
# (The same check also ignores OPAQUE_NAMESPACES: torch.ops.<ns>.t/view/... of a custom op.)
# Run `python 048.py`: the two printed results differ.

import torch
import torch.nn.functional as F


def f():
    x = torch.zeros(1, 1, 4, 4)
    y = F.unfold(x, kernel_size=2)
    x.fill_(1)
    return y.sum()


def g():
    x = torch.zeros(4, 3)
    y = torch.nested.narrow(x, 0, 0, 2, layout=torch.strided)
    x.fill_(1)
    return y


if __name__ == "__main__":
    print("with torch.zeros:", f(), [t.sum() for t in g().unbind()])
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(), [t.sum() for t in g().unbind()])
