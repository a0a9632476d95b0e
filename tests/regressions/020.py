# UNSOUND: zeroopt (engine at d00c3b8) says `safe` for `buf = torch.zeros(n)` at line 18: "written in
# full (line 20) before any read". But `torch.cond` on line 19 runs the nested function `yes`, which
# reads `buf`, before the write: `torch.cond` counted as a torch function that only reads its tensor
# arguments, not as control flow that runs the functions it is handed (torch docs: "cond ... applies
# true_fn if pred is True"). Found by reading torch's namespace for functions that take callables
# (also `torch.while_loop`, `torch.vmap`). Not run here: eager torch.cond wants torch.compile.

import torch


def f(n):
    def yes(x):
        return x + buf.sum()

    def no(x):
        return x

    buf = torch.zeros(n)
    out = torch.cond(torch.tensor(True), yes, no, (torch.ones(1),))
    buf.fill_(1)
    return out, buf

