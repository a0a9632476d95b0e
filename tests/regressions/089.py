# UNSOUND (lifecycle models before this fix): zeroopt says `safe` for the zeros at line 33.
# a class that defines every modelled method was accepted whatever its base: a base of another module may run
# its own code on the object (here its `__init__` hook reads the buffer through an overridden method)
# Responsible: analysis/lifecycle_analysis.py, analysis/lifecycle_program.py, analysis/lifecycles.py. `python 089.py`
import pathlib
import sys
import tempfile

import torch

# A base class of another module (written here so that the file runs on its own).
_dir = tempfile.mkdtemp()
pathlib.Path(_dir, "attn_base.py").write_text(
    "class BaseBackend:\n"
    "    def __init_subclass__(cls, **kw):\n"
    "        orig = cls.init_forward_metadata\n"
    "        def wrapped(self, bs, seq_lens):\n"
    "            self.before = self.lens.sum()\n"
    "            orig(self, bs, seq_lens)\n"
    "        cls.init_forward_metadata = wrapped\n"
)
sys.path.insert(0, _dir)
sys.modules.pop("attn_base", None)

from attn_base import BaseBackend  # noqa: E402


class Backend(BaseBackend):
    def __init__(self):
        self.total = None

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum() + self.before

    def forward_extend(self, q, k, v):
        return q

    def forward_mixed(self, q, k, v):
        return q

    def forward(self, q, k, v):
        return self.forward_decode(q, k, v)

    def init_forward_metadata_in_graph(self, forward_batch):
        pass


def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)

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
