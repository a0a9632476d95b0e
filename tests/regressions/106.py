# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 24.
# The capture methods are stored as attributes (`self._start = self.g.capture_begin`) and called later through
# them; a graph pool is shared with another capture. The `fill_` between start and stop is recorded, not run.
# Responsible: analysis/capture.py (stored callables that capture count as capture functions, by attribute name).
# Needs CUDA: `python 106.py`.
import sys

import torch


class Graph:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        self.pool = torch.cuda.graph_pool_handle()
        self._start = self.g.capture_begin
        self._stop = self.g.capture_end


def f(n):
    if not torch.cuda.is_available():
        return None
    gr = Graph()
    s = torch.cuda.Stream()
    buf = torch.zeros(n, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gr._start(pool=gr.pool)
        buf.fill_(1.0)
        gr._stop()
    torch.cuda.current_stream().wait_stream(s)
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
