# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 26. The
# capture is opened by a method name spelled as a string: `getattr(g, "capture_begin")()` here, and stored under a
# string name by `setattr(self, "go", g.capture_begin)` in `Recorder.__init__` (then called as `r.go()`). The `fill_`
# in between is recorded, not run. Responsible: analysis/capture.py (capture method names as strings; names a
# capturing function stores under through setattr / __dict__). Needs CUDA: `python 108.py`.
# ruff: noqa: B009, B010  (the string spellings are the point of this case)
import sys

import torch


class Recorder:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        setattr(self, "go", self.g.capture_begin)
        setattr(self, "stop", self.g.capture_end)


def by_string(g):
    getattr(g, "capture_end")()


def f(n, stored):
    if not torch.cuda.is_available():
        return None
    r, g, s = Recorder(), torch.cuda.CUDAGraph(), torch.cuda.Stream()
    buf = torch.zeros(n, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        if stored:
            r.go()
        else:
            getattr(g, "capture_begin")()
        buf.fill_(1.0)
        r.stop() if stored else by_string(g)
    torch.cuda.current_stream().wait_stream(s)
    return buf.sum().item()


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("needs CUDA")
        sys.exit(0)
    real = (f(8, True), f(8, False))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = (f(8, True), f(8, False))
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
