# UNSOUND (engine at f8afc6f, checked on an H200): zeroopt says `safe` for `buf = torch.zeros(...)` at line 31.
# A context manager of the file yields inside `with torch.cuda.graph(...)`; the caller enters it through an
# ExitStack (no `with`, no `__enter__` in sight), so the `fill_` after `enter_context` is recorded, not run, and the
# read after `close()` sees the allocation's memory. Responsible: analysis/capture.py (a function that yields inside
# a capture opens it for its caller; code that uses it is not analysed). Needs CUDA: `python 105.py`.
import contextlib
import sys

import torch


@contextlib.contextmanager
def recording(g):
    with torch.cuda.graph(g):
        yield g


class Runner:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()

    def capture(self):
        return recording(self.g)


def f(n):
    if not torch.cuda.is_available():
        return None
    r = Runner()
    stack = contextlib.ExitStack()
    buf = torch.zeros(n, device="cuda")
    stack.enter_context(r.capture())
    buf.fill_(1.0)
    stack.close()
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
