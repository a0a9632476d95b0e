# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 13.
# a draft backend reads the target backend's buffer through an attribute chain (`self.target.lens`): another
# instance of the class, whose buffer its own cycles have not written
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 082.py`
import torch


class Backend:
    def __init__(self, target=None):
        self.target = target

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        if self.target is not None:
            return q * self.lens.sum() + q * self.target.lens.sum()
        return q * self.lens.sum()


def run():
    target = Backend()
    target.init_cuda_graph_state(4, 4)  # target: graph state built, no step yet
    draft = Backend(target)
    draft.init_cuda_graph_state(4, 4)
    draft.init_forward_metadata(2, None)
    return draft.forward_decode(torch.ones(2), None, None)

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
