# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 20 ("written in full (line 22): x.copy_(src)").
# Why: a callee defined in this module reads its caller's locals through the frame (`sys._getframe(1).f_locals`; the same
# with `inspect.currentframe().f_back`, `inspect.stack()`, or a logging/debug helper doing so). Frame introspection is
# recognised only *inside* the analysed function (semantics.FRAME_INTROSPECTION, buffer_flow._FRAME_ATTRS, regression 031);
# a call to a helper is an unknown call, and buffer_flow.unknown_call reports nothing for a buffer that has not escaped.
# The local x never escaped, but `debug_sum("x")` reads it before `x.copy_(src)`. The documented assumptions exempt only
# callables handed in by a caller; `debug_sum` is module code.
# Run `python 054.py`: the two printed results differ.

import sys

import torch


def debug_sum(name):
    return sys._getframe(1).f_locals[name].sum()


def f(src):
    x = torch.zeros(4)
    s = debug_sum("x")
    x.copy_(src)
    return x + s


if __name__ == "__main__":
    print("with torch.zeros:", f(torch.ones(4)))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(torch.ones(4)))
