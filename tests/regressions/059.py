# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for `self.buf = torch.zeros(max_bs)` at line 31 and at
# line 52: "lifecycle sglang-attention-backend: `self.buf` is written in full (line 34 / line 55) before any
# read on every path; torch.empty is equivalent". But the eager cycle (init_forward_metadata, then
# forward_decode) never writes the buffer, and forward_decode reads it.
# Why: rules/lifecycle_program._Inliner.inline renames every method's first parameter to the one shared
# name `self` of the program. A method that rebinds or deletes its own `self` parameter (`self =
# self.inner`, `del self`: a local effect in Python, gone when the method returns) becomes, in the
# program, a rebinding of the object itself: buffer_flow.kill("self") drops `self.buf` and every path
# under it, for the rest of the program. The next method's `self.buf.sum()` then no longer names the
# buffer, so the read is not seen. Here the rebinding is in init_forward_metadata (the eager setup):
# with CUDA graphs disabled the program is `init; (init_forward_metadata; forward_decode)*` and the only
# read of the buffer is lost. (A `for self in ...` loop is only demoted: unproven.)
# Order (the model's graphs-disabled schedule): B(4); init_cuda_graph_state(4); init_forward_metadata(1);
# forward_decode().
# Run `python 059.py`: prints forward_decode() of both classes with real torch.zeros, then poisoned (NaN).

import torch

_real_zeros = torch.zeros


class Inner:
    pass


class RebindBackend:
    def __init__(self, n):
        self.inner = Inner()

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self = self.inner  # work on the inner object from here on
        self.bs = bs

    def forward_decode(self):
        return self.buf.sum()


class DelBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        del self

    def forward_decode(self):
        return self.buf.sum()


def run():
    out = []
    for cls in (RebindBackend, DelBackend):
        b = cls(4)
        b.init_cuda_graph_state(4)
        b.init_forward_metadata(1)
        out.append(b.forward_decode().item())
    return out


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


if __name__ == "__main__":
    print("zeros   :", run())
    torch.zeros = _poisoned
    try:
        print("poisoned:", run())
    finally:
        torch.zeros = _real_zeros
