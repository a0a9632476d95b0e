# UNSOUND (engine at 48bd965): zeroopt says `safe` for `self.seq_lens = torch.zeros(max_bs)` at line 26
# ("lifecycle sglang-cuda-graph-runner: `self.seq_lens` is written in full (line 40) before any read on every path").
# Why: `can_run` is not in the model; the sglang driver calls it before every replay
# (`can_run_graph = graph_runner.can_run(forward_batch)`). rules/lifecycle_analysis._used_outside is meant to
# catch an unmodelled method that reaches the buffer, but it only looks for `self.<attr>` with the buffer's own
# attribute name (or `self` whole / a call of a class method). Here __init__ stores a view of the buffer under a
# second attribute (`self.head = self.seq_lens[:1]`) and can_run reads `self.head`: the outside-method check is
# sidestepped, and the dataflow (which follows self.head as a view) never sees can_run.
# Run `python 068.py`: prints (can_run before first replay, replay result) with real torch.zeros, then with
# torch.zeros poisoned (NaN, as torch.empty may hand back). Observed on CPU torch: (True, 11.0) then (False, 11.0).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    t = _real_zeros(*shape, **kw)
    if t.is_floating_point():
        return t.fill_(float("nan"))
    return t.fill_(10**9 if t.dtype != torch.bool else True)


class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros(max_bs)
        self.head = self.seq_lens[:1]
        self.capture()

    def can_run(self, bs):
        return bool(self.head.item() < 100)

    def capture_one_batch_size(self, bs):
        pass

    def capture(self):
        pass

    def replay_prepare(self, seq_lens):
        self.seq_lens.copy_(seq_lens)

    def replay(self, seq_lens):
        self.replay_prepare(seq_lens)
        return self.seq_lens.sum().item()


def run():
    r = Runner(4)
    batch = torch.tensor([3.0, 5.0, 2.0, 1.0])
    ok = r.can_run(4)  # sglang ModelRunner: can_run, then replay
    return ok, r.replay(batch)


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned
    print(run())
