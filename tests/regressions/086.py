# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 10.
# module-level rebinding after the class body (`Backend.init_forward_metadata = ...`) replaces the method that
# writes the buffer
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 086.py`
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def _metadata_only(self, bs, seq_lens):
    self.bs = bs


Backend.init_forward_metadata = _metadata_only


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
