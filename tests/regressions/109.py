# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 27. A class
# of the file enters `torch.cuda.graph` in its own `__enter__`, and an ExitStack enters it: no `with`, no name of the
# class at the call. Its special methods run where no name shows it, so every call in the file may open a capture.
# Responsible: analysis/capture.py (a capturing special method of a class of the file makes every call suspect).
# Needs CUDA: `python 109.py`.
import contextlib
import sys

import torch


class Capture:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        self.cm = None

    def __enter__(self):
        self.cm = torch.cuda.graph(self.g)
        self.cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)


def f(n, c):
    buf = torch.zeros(n, device="cuda")
    stack = contextlib.ExitStack()
    stack.enter_context(c)
    buf.fill_(1.0)
    stack.close()
    return buf.sum().item()


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("needs CUDA")
        sys.exit(0)
    real = f(8, Capture())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **k: _zeros(*a, **k).fill_(float("nan"))  # what torch.empty may hold
    try:
        poisoned = f(8, Capture())
    finally:
        torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
