# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 10.
# the same for the out_graph/in_graph hook generation: init_cuda_graph_state is graphs-only, the eager path
# reads the `__init__` buffer unwritten
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 078.py`
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.kv_indptr = torch.zeros(max_bs + 1, dtype=torch.int64)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.kv_indptr.copy_(torch.arange(max_bs + 1))

    def init_forward_metadata_out_graph(self, forward_batch, in_capture=False):
        self.kv_indptr[1:].copy_(forward_batch.cumsum(0))

    def init_forward_metadata(self, forward_batch):
        self.bs = forward_batch.numel()

    def forward_decode(self, q, k, v):
        return q * self.kv_indptr[: self.bs + 1].sum()


def run():
    b = Backend()
    b.init_forward_metadata(torch.ones(2, dtype=torch.int64))
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
