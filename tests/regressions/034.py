# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 31,
# col 19 ("lifecycle sglang-attention-backend: `self.buf` is never read; torch.empty is equivalent").
# But the class defines `forward_extend` by a class-body assignment (`forward_extend = _extend`),
# not by a `def`; the model runs `forward_extend` after every setup (it is one of the forwards),
# and `_extend` reads `self.buf`. rules/lifecycle_program.class_methods only collects top-level
# `def`s, so `forward_extend` counts as "not defined" and Lifecycle.matches/`optional` treats it as
# the base class's harmless default; rules/lifecycle_analysis._all_methods/_used_outside never see it.
# Same verdict (safe) for `forward_extend = lambda self, x: self.buf.sum()`,
# `forward_extend = functools.partialmethod(...)`, and a `def forward_extend` nested in an
# `if True:` block of the class body.
# Run `python 034.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


def _extend(self, x):
    return x + self.buf.sum()


class Backend:
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

    forward_extend = _extend


def run():
    # The lifecycle's eager cycle: init methods, then init_forward_metadata + a forward.
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)
    return b.forward_extend(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
