# UNSOUND (engine at 689dd3b): out= with a smaller result shrinks x (same storage); as_strided then views all 8 elements.
# zeroopt says `safe` for the torch.zeros at line 14: "written in full (line 15)".
# Why: torch.add(<2 elements>, 1, out=x) resizes x to 2 elements and writes those; the storage keeps
# its 8 elements, and torch.as_strided(x, (8,), (1,)) reads 6 never-written ones. After a full write
# every read is trusted, but out= is "full" only for the elements x has now (cf. 010/011: resize_,
# earlier views). Responsible: analysis/buffer_flow.py _call, `key == "out"` branch; as_strided (and
# x.untyped_storage(), set_ onto its storage) after a shrinking out= is not considered.
# Run `python 022.py`: the two printed results differ.

import torch


def f(inp):
    x = torch.zeros(8)
    torch.add(inp[:2], 1, out=x)
    return torch.as_strided(x, (8,), (1,))


if __name__ == "__main__":
    inp = torch.arange(8.0)
    print("with torch.zeros:", f(inp))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp))
