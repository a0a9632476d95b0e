# UNSOUND (records) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(n)` at line 39, col 19
# ("`self.buf` is written in full (line 43) before any read on every path"), the write being
# `self.meta.lens.fill_(1)` through the record `Meta(lens=self.buf)`. But `dataclass` here is this
# module's own decorator (it wraps dataclasses.dataclass with an __init__ that stores copies), not
# dataclasses.dataclass: `self.meta.lens` is a copy, the fill never reaches `self.buf`, and
# forward_decode reads the initial contents. rules/records._fields accepts the decorator by its text
# alone (`_dotted(dec) in {"dataclass", "dataclasses.dataclass"}`) without resolving the name to the
# `dataclasses` module (a `from somelib import dataclass`, e.g. a validating/converting dataclass,
# is accepted the same way). The intra-procedural analysis is fooled the same way:
# `buf = torch.zeros(n); m = Meta(lens=buf); m.lens.fill_(1); return buf.sum()` is also `safe`.
# Run `python 042.py`: prints the result with zeros, then with the allocation poisoned (NaN).

import dataclasses

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


def dataclass(cls):
    """The project's record decorator: fields are snapshots of what the caller passed."""
    cls = dataclasses.dataclass(cls)
    init = cls.__init__
    cls.__init__ = lambda self, **kw: init(self, **{k: v.clone() for k, v in kw.items()})
    return cls


@dataclass
class Meta:
    lens: torch.Tensor = None


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)

    def init_forward_metadata_capture_cuda_graph(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

    def init_forward_metadata(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

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
