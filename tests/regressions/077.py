# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 11.
# init_cuda_graph_state runs only with CUDA graphs enabled (SGLang calls it from the decode CUDA-graph runner
# only); the models ran it on every path, so the eager-only run's read of the `__init__` buffer it writes was
# taken as written
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 077.py`
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.lens = torch.zeros(max_bs)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens.fill_(1)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def run():
    b = Backend()  # --disable-cuda-graph: no graph runner, no init_cuda_graph_state
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
