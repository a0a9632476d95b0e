# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 18
# ("written in full (line 21)"). `torch.cuda.graph(g)` entered by calling `__enter__()` by hand: the `fill_` is
# recorded into the graph, not run, and the read after `__exit__` sees the allocation's memory. Only `with
# torch.cuda.graph(...)` was recognised. Responsible: analysis/capture.py. Needs CUDA: `python 104.py`.
import sys

import torch


class Capturer:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()


def f(n):
    if not torch.cuda.is_available():
        return None
    buf = torch.zeros(n, device="cuda")
    cm = torch.cuda.graph(Capturer().graph)
    cm.__enter__()
    buf.fill_(1.0)
    cm.__exit__(None, None, None)
    return buf.sum().item()


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("needs CUDA")
        sys.exit(0)
    real = f(8)
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f(8)
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
