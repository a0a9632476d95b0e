# UNSOUND: zeroopt (engine at 39622fb) says `safe` for `self.b1 = torch.zeros(...)` at line 19,
# judged through the sglang-attention-backend lifecycle ("never read"). But `forward_decode` defines
# a closure `inner` that reads `self.b1`, and calls it. The lifecycle model took `self` as private to
# the modelled methods, yet a nested function holds it; and calling a local function counted as an
# unknown call, which only matters for buffers reachable from outside.
# Found by bench/soundness.py, seed 301552 (minimised by hand). Oracle: with the allocation
# poisoned, `acc` changes.
# Run `python 015.py`: prints the result with zeros, then with the memory filled with ones.

import torch


def _ones_instead(*shape, **kw):
    return torch.ones(*shape, **kw)


class Backend:
    def init_cuda_graph_state(self, inp, n):
        self.b1 = torch.zeros(4, 8, dtype=torch.bool, device=inp.device)

    def init_forward_metadata_capture_cuda_graph(self, inp, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, inp, n):
        pass

    def init_forward_metadata(self, inp, n):
        pass

    def forward_decode(self, inp, n):
        acc = inp.sum() * 0

        def inner():
            nonlocal acc
            acc = acc + torch.stack([self.b1[j].float().sum() for j in range(n)]).sum()

        inner()
        return acc


def f(inp, n):
    m = Backend()
    m.init_cuda_graph_state(inp, n)
    m.init_forward_metadata(inp, n)
    return m.forward_decode(inp, n)


if __name__ == "__main__":
    print(f(torch.ones(3), 2))
    torch.zeros = _ones_instead  # what torch.empty may hand back
    print(f(torch.ones(3), 2))
