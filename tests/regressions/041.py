# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 28,
# col 19 ("`self.buf` is written in full (line 31) before any read on every path"). The `def
# init_forward_metadata` that writes the buffer is replaced, later in the class body, by
# `init_forward_metadata = _no_metadata`, which writes nothing: eager steps then read the initial
# contents in forward_decode. rules/lifecycle_program.class_methods builds the class's methods from
# its `def` statements only, so the program runs the shadowed body (the same blind spot as 001,
# here believing a write that never happens).
# Run `python 041.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


def _no_metadata(self, n):
    pass


class Backend:
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def init_forward_metadata_capture_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata(self, n):
        self.buf.fill_(1)

    init_forward_metadata = _no_metadata

    def forward_decode(self, x):
        return x + self.buf.sum()


def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
