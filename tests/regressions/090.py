# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 26.
# vLLM builder: `super().build(...)` in `build` runs a base of another module that reads the buffer before
# `build` writes it
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 090.py`
import pathlib
import sys
import tempfile

import torch

# A base class of another module (written here so that the file runs on its own).
_dir = tempfile.mkdtemp()
pathlib.Path(_dir, "attn_base.py").write_text(
    "class BaseBackend:\n"
    "    def build(self, common_prefix_len, m):\n"
    "        return self.seq_lens.sum()\n"
)
sys.path.insert(0, _dir)
sys.modules.pop("attn_base", None)

from attn_base import BaseBackend  # noqa: E402


class Builder(BaseBackend):
    def __init__(self, max_reqs=4):
        self.seq_lens = torch.zeros(max_reqs)

    def build(self, common_prefix_len, m):
        before = super().build(common_prefix_len, m)
        self.seq_lens.fill_(1)
        return before + self.seq_lens.sum()

    def build_for_cudagraph_capture(self, m):
        return self.build(0, m)


def run():
    return Builder().build(0, None)

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
