# UNSOUND (engine at 48bd965): zeroopt says `safe` for `self.seq_lens = torch.zeros(max_bs)` at line 26
# ("lifecycle sglang-cuda-graph-runner: `self.seq_lens` is written in full (line 40) before any read on every path").
# Why: the model runs `replay_prepare` only where `replay` calls it (inlined after replay's own writes), but the
# real sglang driver calls `graph_runner.replay_prepare(batch)` by itself (speculative verify: eagle/ngram workers do
# `if graph_runner.can_run(b): graph_runner.replay_prepare(b)` and later `replay(b, skip_attn_backend_init=True)`).
# analysis/lifecycles.py gives sglang-cuda-graph-runner only the cycles (capture) and (replay); replay_prepare is a
# required method the program never runs as a driver entry (rules/lifecycle_program.build_program runs only
# cycle.setup). Here replay_prepare reads self.seq_lens, which only replay writes, so the direct call reads the zeros.
# Run `python 067.py`: prints (prepared max_len, replay result) with real torch.zeros, then with torch.zeros
# poisoned (filled with 1e9, as torch.empty may hand back). Observed on CPU torch: (0, 0) then (1000000000, 1000000000).

import torch

_real_zeros = torch.zeros


def _poisoned(*shape, **kw):
    t = _real_zeros(*shape, **kw)
    if t.is_floating_point():
        return t.fill_(1e9)
    return t.fill_(10**9 if t.dtype != torch.bool else True)


class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros(max_bs)
        self.max_len = 0
        self.capture()

    def capture_one_batch_size(self, bs):
        pass

    def capture(self):
        pass

    def replay_prepare(self, seq_lens):
        self.max_len = int(self.seq_lens.max())

    def replay(self, seq_lens, skip_attn_backend_init=False):
        self.seq_lens.copy_(seq_lens)
        if not skip_attn_backend_init:
            self.replay_prepare(seq_lens)
        return self.max_len


def run():
    r = Runner(4)
    batch = torch.tensor([3.0, 5.0, 2.0, 1.0])
    r.replay_prepare(batch)  # sglang spec verify: replay_prepare called directly
    prepared = r.max_len
    return prepared, r.replay(batch, skip_attn_backend_init=True)


if __name__ == "__main__":
    print(run())
    torch.zeros = _poisoned
    print(run())
