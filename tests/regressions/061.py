# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for the torch.zeros at line 17 ("written in full (line 24) before any read").
# Why: with `except*`, every handler whose type matches part of the ExceptionGroup runs, one after the other (PEP 654):
# here both do. analysis/cfg.py Builder._try treats TryStar exactly like Try: the handlers hang side by side off one
# `dispatch` node, as if exactly one of them ran, so no path has handler 1 followed by handler 2. Handler 1 makes `y`
# another name for the buffer; handler 2 then reads `y` (the zeros), which the analysis only ever sees as `other`.
# A fix: for TryStar, chain the handlers (each one's end, and its skip, flow into the next handler's type test),
# and let an exception raised inside a handler go on to the next handlers too.
# Run `python 061.py`: the two printed results differ.

import torch


def f(n):
    other = torch.ones(n)
    y = other
    s = None
    buf = torch.zeros(n)
    try:
        raise ExceptionGroup("g", [ValueError(), TypeError()])
    except* ValueError:
        y = buf
    except* TypeError:
        s = y.sum()
    buf.fill_(1)
    return s


if __name__ == "__main__":
    print("with torch.zeros:", f(3))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(3))
