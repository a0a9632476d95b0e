# UNSOUND (cross-method lifecycle) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 19,
# col 19 ("`self.buf` is never read"). `Leaf` overrides `forward_decode` to read `self.buf`, but
# it derives from `Backend` only through `Mid`: rules/lifecycle_analysis._overridden_in_subclass
# looks only at classes naming `Backend` directly in their bases (`b.id == cls.name`), not at
# subclasses of subclasses (nor at `class X(module.Backend)`, an ast.Attribute base).
# Run `python 037.py`: prints the result with zeros, then with the allocation poisoned (NaN).

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


class Mid(Backend):
    pass


class Leaf(Mid):
    def forward_decode(self, x):
        return x + self.buf.sum()


def run():
    b = Leaf()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
