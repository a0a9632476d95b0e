# UNSOUND (cross-method lifecycle): `self.__dict__['a'] = ...` rebinds self.a without an attribute store,
# so the later `self.a.fill_(1)` writes the NEW tensor; the buffer allocated at line 23, col 18
# (still reachable as self.keep and read by forward_decode) is never written. zeroopt (engine at fc31c0e) says `safe`.
# Oracle: pattern nan|max, input (0, 0, 0, False): result[0]: NaN at different places. Any store through self.__dict__ (or vars(self), which it handles) must kill self's buffers.
# Evidence the analysis gave:
#   line 23: alloc: self.a = torch.zeros(max_bs)
#   line 28: write: self.a.fill_(1)
#   line 37: write: self.a.fill_(1)
# Run `python 012.py`: the two printed results differ.

import torch


def reset(obj):
    obj.a = torch.ones(8)


class Backend:
    def __init__(self):
        self.max_bs = 8

    def init_cuda_graph_state(self, max_bs):
        self.a = torch.zeros(max_bs)
        self.keep = self.a

    def init_forward_metadata_capture_cuda_graph(self, bs, k, flag):
        self.__dict__['a'] = torch.ones(8)
        self.a.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, k, flag):
        self.a.fill_(1)

    def forward_decode(self, q, bs):
        return self.keep.sum()

    def init_forward_metadata(self, bs, k, flag):
        self.a.fill_(1)

    def _reset(self):
        self.a = torch.ones(8)



def f(inp, n, k, flag):
    b = Backend()
    b.init_cuda_graph_state(8)
    b.init_forward_metadata_capture_cuda_graph(8, k, flag)
    warm = b.forward_decode(inp, 8)
    b.init_forward_metadata_replay_cuda_graph(8, k, flag)
    rep = b.forward_decode(inp, 8)
    return warm, rep


if __name__ == "__main__":
    inp = torch.arange(32.0).reshape(4, 8)
    print("with torch.zeros:", f(inp, 0, 0, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(inp, 0, 0, False))
