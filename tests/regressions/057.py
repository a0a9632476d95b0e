# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for `self.buf = torch.zeros(max_bs)` at line 28 and for
# `self.buf = torch.zeros(max_bs)` at line 54: "lifecycle sglang-attention-backend: `self.buf` is written
# in full (line 31 / line 57) before any read on every path; torch.empty is equivalent".
# Why: each class has a method OUTSIDE the model (`debug_checksum`), which the driver (or any code) may
# call at any time, e.g. right after init_cuda_graph_state, before any metadata setup. The analysis
# knows this is a risk: rules/lifecycle_analysis._used_outside rejects a buffer when an outside method
# touches `self.<attr>` or uses `self` whole. But it only looks at the outside method's own body:
# `self._checksum()` / `self.forward_decode()` are attribute uses of other names, and the methods they
# call are excluded from the check because they are in program.methods (inlined somewhere in the
# program). So an outside method that reaches the buffer through a modelled method (HelperBackend:
# the helper `_checksum`, inlined by forward_decode) or by calling a forward method out of order
# (ForwardBackend: `self.forward_decode()`) is not seen. Responsible code: _used_outside (and its
# caller's filter `name not in program.methods`) does not follow `self.m(...)` calls from outside
# methods into the methods the program inlines.
# Order: Backend(4); init_cuda_graph_state(4); debug_checksum() (later cycles as the model says).
# Run `python 057.py`: prints debug_checksum() of both classes with real torch.zeros, then poisoned (NaN).

import torch

_real_zeros = torch.zeros


class HelperBackend:
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

    def forward_decode(self):
        return self._checksum()

    def _checksum(self):
        return self.buf.sum()

    def debug_checksum(self):
        return self._checksum()


class ForwardBackend:
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

    def forward_decode(self):
        return self.buf.sum()

    def debug_checksum(self):
        return self.forward_decode()


def run():
    out = []
    for cls in (HelperBackend, ForwardBackend):
        b = cls(4)
        b.init_cuda_graph_state(4)
        out.append(b.debug_checksum().item())
        b.init_forward_metadata(4)
        b.forward_decode()
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
