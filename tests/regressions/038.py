# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 28,
# col 19 ("`self.buf` is never read"). `forward_decode` is wrapped by `log_stats`, a decorator
# defined in this module whose wrapper reads `self.buf` before calling the method. The lifecycle
# program inlines the undecorated body: rules/lifecycle_program.class_methods only drops
# staticmethod/classmethod/property-like decorators and keeps every other decorated `def` as if
# the decorator were not there (the wrapper's code never enters the program).
# Run `python 038.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


def log_stats(fn):
    def wrapper(self, *args):
        wrapper.last = float(self.buf.sum())
        return fn(self, *args) + wrapper.last

    return wrapper


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    @log_stats
    def forward_decode(self, x):
        return x


def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
