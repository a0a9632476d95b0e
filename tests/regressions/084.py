# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 10.
# private name mangling: `self.__lens` in class Backend is `_Backend__lens`, which a module function reads on
# an object whose cycles have not run
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 084.py`
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.__lens = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.__lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.__lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.__lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.__lens.sum()


def total_length(backend):
    return backend._Backend__lens.sum()


def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    return total_length(b)

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
