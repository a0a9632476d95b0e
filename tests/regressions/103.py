# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 28
# ("written in full (line 33)"). `begin`/`end` open and close a CUDA-graph capture by hand in small helpers: the
# `fill_` between them is recorded, not run, so the read after the capture sees the allocation's memory. Only a
# `capture_begin` in the function itself was recognised. Responsible: analysis/capture.py (a function that may open or
# close a capture, directly or through a function of the file, is not analysed). Needs CUDA: `python 103.py`.
import sys

import torch


def begin(g):
    g.capture_begin()


def end(g):
    g.capture_end()


def open_capture(g):
    begin(g)  # through a second helper


def f(n):
    if not torch.cuda.is_available():
        return None
    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    buf = torch.zeros(n, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        open_capture(g)
        buf.fill_(1.0)
        end(g)
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
