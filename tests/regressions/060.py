# UNSOUND, multi-instance (engine at 9d0f8b9): zeroopt says `safe` for `self.buf = torch.zeros(max_bs)` at line 26:
# "lifecycle sglang-attention-backend: `self.buf` is written in full (line 29) before any read on
# every path; torch.empty is equivalent".
# Why: the program models one object, and `private_roots = {"self"}` makes only `self.<attr>` paths name
# its buffers. forward_decode of instance B reads `other.buf` of another instance A of the same class
# (a draft/target or per-layer pair handed in by the caller); in the program `other` is an unknown
# parameter, so the read is of no tracked buffer. A's own order is one the model allows (A only ran
# __init__ and init_cuda_graph_state so far), and so is B's (init, eager setup, forward), yet B's modelled
# method reads A's buffer before A's setup writes it. The analysis never checks that a modelled method
# reads buffers of its own object only. (Weaker than 001: it depends on the caller passing an instance;
# noted for completeness of the "several instances" probe.)
# Order: A = Backend(4); A.init_cuda_graph_state(4); B = Backend(4); B.init_cuda_graph_state(4);
# B.init_forward_metadata(4); B.forward_decode(A).
# Run `python 060.py`: prints B.forward_decode(A) with real torch.zeros, then poisoned (NaN).

import torch

_real_zeros = torch.zeros


class Backend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self.buf.fill_(1)

    def forward_decode(self, other):
        return self.buf.sum() + other.buf.sum()


def run():
    a = Backend(4)
    a.init_cuda_graph_state(4)
    b = Backend(4)
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)
    return b.forward_decode(a).item()


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


if __name__ == "__main__":
    print("zeros   :", run())
    torch.zeros = _poisoned
    try:
        print("poisoned:", run())
    finally:
        torch.zeros = _real_zeros
