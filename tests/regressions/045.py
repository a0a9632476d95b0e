# UNSOUND (engine at 49151dc): a 0-dim buffer passed as the *fill value* of torch.full_like (or the
# low/high of torch.randint_like) is read, but the analysis takes every argument of those calls as metadata.
# zeroopt says `safe` for the torch.zeros at line 14: "written in full (line 16)" (and for line 21: "written in full (line 23)").
# Why: analysis/semantics/entries.py METADATA_FUNCTIONS lists torch.full_like / torch.randint_like (also rand_like
# etc.), and analysis/buffer_flow.py _call does `if qual in api.METADATA_FUNCTIONS: self.eval(a); continue`
# for *every* argument, not only the first (the tensor whose shape is taken). fill_value=x converts the
# 0-dim tensor to a Scalar (reads its value); randint_like(t, low=x, high=...) does the same.
# Run `python 045.py`: the printed results differ (randint_like raises with the poison).

import torch


def f():
    x = torch.zeros(())
    w = torch.full_like(torch.ones(3), x)
    x.fill_(1)
    return w


def g():
    x = torch.zeros((), dtype=torch.long)
    z = torch.randint_like(torch.ones(3), low=x, high=100)
    x.fill_(1)
    return z


if __name__ == "__main__":
    def run():
        torch.manual_seed(0)
        try:
            gz = g()
        except RuntimeError as e:
            gz = f"RuntimeError: {e}"
        return f(), gz
    print("with torch.zeros:", run())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan") if kw.get("dtype") is None else 7)
    print("as torch.empty  :", run())
