# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 20,
# col 19 ("`self.buf` is never read"). `forward_decode` reads the buffer as
# `self.__dict__["buf"]`. Regressions 012/013 made *stores* through `self.__dict__` kill self's
# buffers, but a *load* through `self.__dict__[...]` is not taken as a read of `self.buf` (the
# `self.__dict__` attribute path is not the `self.buf` key, and `self` counts as a private root, so
# handing `self.__dict__` around is not an escape either). `vars(self)["buf"]` is handled (unproven).
# Run `python 039.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x + self.__dict__["buf"].sum()


def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
