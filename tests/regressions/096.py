# COUNTEREXAMPLE: zeroopt must not say `safe` for the zeros at line 14 (a looser lifecycle model would).
# no capture needs to follow init_cuda_graph_state on a given object (a hybrid backend builds its prefill
# half's graph state, then runs it eagerly): a buffer of init_cuda_graph_state written only by the capture and
# replay setup is read by the eager path
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 096.py`
import torch


class Backend:
    def __init__(self):
        self.ready = False

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)
        self.ready = True

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        if self.ready:
            return q * self.lens.sum()
        return q


def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
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
