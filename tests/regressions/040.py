# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 22,
# col 19 ("`self.buf` is written in full (line 25) before any read on every path"). But `_refresh`
# is a generator function (it contains `yield`): the statement `self._refresh()` in each setup only
# creates a generator object and runs none of its body, so `self.buf.fill_(1)` never executes and
# forward_decode reads the initial contents. rules/lifecycle_program._Inliner._inline_self_calls
# inlines the body of any `self.m(...)` statement without checking that `m` is a generator (or an
# `async def`: the same happens with `async def _refresh(self): self.buf.fill_(1)`, a coroutine
# that is never awaited; also safe).
# Run `python 040.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def _refresh(self):
        self.buf.fill_(1)
        yield

    def init_forward_metadata_capture_cuda_graph(self, n):
        self._refresh()

    def init_forward_metadata_replay_cuda_graph(self, n):
        self._refresh()

    def init_forward_metadata(self, n):
        self._refresh()

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
