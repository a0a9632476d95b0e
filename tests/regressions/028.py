# UNSOUND (engine at 689dd3b): a statement rebinds a slice bound and then raises; the exception edge carries the state
# from before the statement, in which the region text `x[:k]` still means the old k.
# zeroopt says `safe` for the torch.zeros at line 15: "slices together cover the buffer (line 19): x[k:] = 2".
# Why: with k=0, x[:0] writes nothing; `(k := 3) + inp[100]` binds k = 3, then raises IndexError;
# the handler's x[3:] leaves x[0:3] unwritten. cfg.py gives exceptional successors the node's IN
# state: sound for writes (not done yet) but not for kills/rebindings that happened before the raise
# (also `k = x[9] = 3`, checked; untested: `k, x[9] = 3, 1`, an alias rebound before the raise).
# Responsible: analysis/cfg.py Node.exc_succ / buffer_flow.analyse_buffer (exc edges use in_states).
# Run `python 028.py`: the two printed results differ.

import torch


def f(inp, k: int):
    x = torch.zeros(8)
    x[:k] = 1
    try:
        y = (k := 3) + inp[100]
    except IndexError:
        x[k:] = 2
        return x
    x.fill_(1)
    return x


if __name__ == "__main__":
    inp = torch.ones(8)
    print("with torch.zeros:", f(inp, 0))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0))
