# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 16.
# an attribute stored from a module function (`backend.write_lens = ...`) shadows the method `write_lens` that
# init_cuda_graph_state calls
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 081.py`
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.max_bs = max_bs

    def write_lens(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)
        self.write_lens()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def make_backend(lazy):
    b = Backend()
    if lazy:
        b.write_lens = lambda: None
    return b


def run():
    b = make_backend(True)
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
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
