# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 22,
# col 19 ("`self.buf` is never read"). The subclass `ExtendBackend` adds `forward_extend`, which
# `Backend` does not define, and it reads `self.buf`; an `ExtendBackend` runs Backend's
# init_cuda_graph_state (the allocation) and then, under the same lifecycle, its forward_extend.
# rules/lifecycle_analysis._overridden_in_subclass only asks whether a subclass overrides a method
# already in the program (`set(class_methods(other)) & used`): a subclass *adding* one of the
# model's optional methods (forward_extend, forward_mixed, forward, init_forward_metadata_in_graph)
# or any other method touching the buffer goes unnoticed.
# Run `python 036.py`: prints the result with zeros, then with the allocation poisoned (NaN).

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
        return x


class ExtendBackend(Backend):
    def forward_extend(self, x):
        return x + self.buf.sum()


def run():
    b = ExtendBackend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_extend(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
