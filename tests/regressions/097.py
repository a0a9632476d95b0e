# COUNTEREXAMPLE: zeroopt must not say `safe` for the zeros at line 20 (a looser lifecycle model would).
# a module function stores another backend into `forward_metadata`, so `metadata.lens` in forward may be that
# backend's buffer: a metadata field named like the buffer is exempt only where every store makes a record
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 097.py`
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    lens: object = None


class Backend:
    def __init__(self):
        self.forward_metadata = None

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def forward_decode(self, q, k, v):
        metadata = self.forward_metadata
        return q * metadata.lens.sum()


def share_metadata(b, other):
    b.forward_metadata = other


def run():
    other = Backend()
    other.init_cuda_graph_state(4, 4)
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    share_metadata(b, other)
    return b.forward_decode(torch.ones(2), None, None)

if __name__ == "__main__":
    real = run()
    _zeros = torch.zeros

    def _poisoned(*a, **k):
        t = _zeros(*a, **k)
        return t.fill_(float("nan") if t.is_floating_point() else 2**30)

    torch.zeros = _poisoned
    poisoned = run()
    torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
