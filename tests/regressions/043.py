# UNSOUND (CUDA-graph capture) (engine at 689dd3b): zeroopt says `safe` for `self.buf = torch.zeros(...)` at line 27,
# col 19 ("lifecycle sglang-cuda-graph-runner: `self.buf` is written in full (line 39) before any
# read on every path"), and for `buf = torch.zeros(...)` at line 51 in the plain function `step`.
# But the write `copy_` runs between `g.capture_begin()` and `g.capture_end()`: it is only recorded
# into the graph, not executed, so the read right after capture (`self.buf.sum()`) sees the initial
# contents. rules/cfg.Builder._with only marks capture regions opened by `with torch.cuda.graph(...)`
# (CAPTURE_CONTEXTS, or "graph_capture" in the name); the explicit CUDAGraph.capture_begin() /
# capture_end() API (which starts/stops capture of the work queued on the current stream; nothing
# runs until replay) is an ordinary call on an unrelated object, so the write counts as executed.
# Needs a CUDA GPU. Run `python 043.py`: prints the results with zeros, then with the allocations
# poisoned (NaN). Observed on an NVIDIA H200 (torch CUDA): (0.0, 4.0, 0.0) then (nan, 4.0, nan):
# the post-capture reads of both sites change.

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


class Runner:
    def __init__(self):
        self.src = torch.ones(4, device="cuda")
        self.stream = torch.cuda.Stream()
        self.buf = torch.zeros(4, device="cuda")

    def capture_one_batch_size(self, bs):
        return bs

    def replay_prepare(self, bs):
        return bs

    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(self.stream):
            g.capture_begin()
            self.buf.copy_(self.src)
            g.capture_end()
        torch.cuda.synchronize()
        self.graph = g
        return self.buf.sum().item()  # at capture time the copy has not run

    def replay(self):
        self.graph.replay()
        return self.buf.sum().item()


def step(x, stream):
    buf = torch.zeros(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        g.capture_begin()
        buf.copy_(x)
        g.capture_end()
    torch.cuda.synchronize()
    return buf.sum().item()


def run():
    r = Runner()
    first = r.capture()  # the model: __init__, then a capture cycle, then replays
    return first, r.replay(), step(torch.ones(4, device="cuda"), torch.cuda.Stream())


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned  # what torch.empty may hand back
    print(run())
