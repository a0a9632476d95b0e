# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 29,
# col 19 ("`self.buf` is never read"). `Backend` inherits `forward_extend` from `ExtendMixin`,
# defined in this same module, whose body reads `self.buf`. The sglang model lists
# `forward_extend` in `optional` (analysis/lifecycles.py _SGLANG_DEFAULTS: "the base versions raise
# NotImplementedError"), so a method the class does not define itself is assumed to be that
# harmless default: the bases are never looked at (lifecycle_analysis builds the program from
# the class's own `def`s only). Here the base is visible and its forward_extend reads the buffer.
# Run `python 035.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


class ExtendMixin:
    def forward_extend(self, x):
        return x + self.buf.sum()


class Backend(ExtendMixin):
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x


def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_extend(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
