# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 10.
# user lifecycle (configured in the test, cycles `capture` and `replay`): a cycle whose name contains
# "capture" was forced to run first, though cycles run in any order
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 094.py`
import torch


class Engine:
    def __init__(self, n=4):
        self.buf = torch.zeros(n)

    def capture_prepare(self):
        self.buf.fill_(1)

    def step(self):
        return self.buf.sum()


def run():
    e = Engine()
    return e.step()  # a step before any capture

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
