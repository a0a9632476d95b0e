# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 21.
# mangled method shadowed: `self.__fill = _skip` stores `_Backend__fill`, the same name the class's `def
# __fill` has
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 093.py`
import torch


def _skip():
    return None


class Backend:
    def __init__(self, lazy=True):
        if lazy:
            self.__fill = _skip

    def __fill(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)
        self.__fill()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


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
