# UNSOUND (engine at 689dd3b): a dict display with a repeated key: the last value wins, but d["a"] is bound to the first.
# zeroopt says `safe` for the torch.zeros at line 12: "written in full (line 14): d['a'].fill_(1)".
# Why: {"a": x, "a": other} holds `other` under "a"; d["a"].fill_(1) writes `other`, and x.sum()
# reads the zeros. Responsible: analysis/buffer_flow.py _assign_stmt, the `ast.Dict` branch binds
# f"{key}[{k!r}]" for every entry that is the buffer, ignoring later entries with the same key.
# Run `python 029.py`: the two printed results differ.

import torch


def f(inp):
    x = torch.zeros(8)
    d = {"a": x, "a": inp.clone()}
    d["a"].fill_(1)
    return x.sum()


if __name__ == "__main__":
    inp = torch.ones(8)
    print("with torch.zeros:", f(inp))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp))
