# UNSOUND (engine at 9d0f8b9): zeroopt says `safe` for `Backend.shared = torch.zeros(n)` at line 32 (class
# attribute, shared by every instance): "lifecycle sglang-attention-backend: `Backend.shared` is written in
# full (line 40) before any read on every path; torch.empty is equivalent".
# Why: the lifecycle program models ONE object; a buffer stored on the class (`Backend.shared`, not
# `self.x`) is shared with every other instance, whose modelled methods run on their own schedule.
# Instance B's __init__ takes the `else` branch (the buffer exists already) and reads it; in B's own
# program that branch holds no buffer, and in A's program the store into `Backend.shared` is only an
# "escape", which lifecycle mode never checks (check_exit=False: the end of the program is not an exit
# to unknown readers). Responsible code: rules/lifecycle_analysis._self_attribute accepts any
# `<Name>.<attr>` target (it never checks that the Name is the method's `self`), so a class-level
# (or any other object's) attribute is judged as if it were private to the instance; private_roots
# = {"self"} makes the store an unchecked escape. Every object's own order is one the model allows:
# A = Backend(4); B = Backend(4) (A's __init__ then B's __init__; each then its own
# init_cuda_graph_state / init_forward_metadata / forward_decode).
# (`type(self).shared = ...` and a module global `global _BUF` are skipped, "not stored on self";
# any `<Name>.attr` store counts. Second site: `REG.buf = torch.zeros(max_bs)` at line 60 (REG a module-level
# SimpleNamespace), also `safe` ("written in full (line 63)"), though the module function `peek()` reads it
# at any time: here right after init_cuda_graph_state.)
# Run `python 056.py`: prints (B.prev, peek()) with real torch.zeros, then with the allocation poisoned (NaN).

import types

import torch

_real_zeros = torch.zeros


class Backend:
    shared = None

    def __init__(self, n):
        self.n = n
        if Backend.shared is None:
            Backend.shared = torch.zeros(n)
        else:
            self.prev = Backend.shared.sum().item()  # the previous backend's last metadata

    def init_cuda_graph_state(self, max_bs):
        pass

    def init_forward_metadata_capture_cuda_graph(self, bs):
        Backend.shared.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        Backend.shared.fill_(1)

    def init_forward_metadata(self, bs):
        Backend.shared.fill_(1)

    def forward_decode(self):
        return Backend.shared.sum()


REG = types.SimpleNamespace()  # a module-level namespace object


class RegBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        REG.buf = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs):
        REG.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        REG.buf.fill_(1)

    def init_forward_metadata(self, bs):
        REG.buf.fill_(1)

    def forward_decode(self):
        return REG.buf.sum()


def peek():  # module code, not a method: reads the buffer at any time
    return REG.buf.sum().item()


def run():
    Backend.shared = None
    a = Backend(4)
    b = Backend(4)
    for obj in (a, b):
        obj.init_cuda_graph_state(4)
        obj.init_forward_metadata(4)
        obj.forward_decode()
    r = RegBackend(4)
    r.init_cuda_graph_state(4)
    return b.prev, peek()


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


if __name__ == "__main__":
    print("zeros   :", run())
    torch.zeros = _poisoned
    try:
        print("poisoned:", run())
    finally:
        torch.zeros = _real_zeros
