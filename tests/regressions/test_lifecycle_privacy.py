"""Lifecycle models: who else can see the buffer (class attributes, other instances, module code).

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "class_attribute_shared_between_instances",
        why=(
            "`safe` would be wrong for `Backend.shared = torch.zeros(n)` at line 10 (class "
            'attribute, shared by every instance): "lifecycle sglang-attention-backend: '
            "`Backend.shared` is written in full (line 18) before any read on every path; "
            'torch.empty is equivalent". Why: the lifecycle program models ONE object; a buffer '
            "stored on the class (`Backend.shared`, not `self.x`) is shared with every other "
            "instance, whose modelled methods run on their own schedule. Instance B's __init__ "
            "takes the `else` branch (the buffer exists already) and reads it; in B's own program "
            "that branch holds no buffer, and in A's program the store into `Backend.shared` is "
            'only an "escape", which lifecycle mode never checks (check_exit=False: the end of the '
            "program is not an exit to unknown readers). Every object's own order is one the model "
            "allows: A = Backend(4); B = Backend(4) (A's __init__ then B's __init__; each then its "
            "own init_cuda_graph_state / init_forward_metadata / forward_decode). "
            '(`type(self).shared = ...` and a module global `global _BUF` are skipped, "not stored '
            'on self"; any `<Name>.attr` store counts. Second site: `REG.buf = torch.zeros(max_bs)`'
            ' at line 38 (REG a module-level SimpleNamespace), also `safe` ("written in full (line '
            '41)"), though the module function `peek()` reads it at any time: here right after '
            "init_cuda_graph_state.) The scenario returns (B.prev, peek())."
        ),
        source=r"""
import types

import torch


class Backend:
    shared = None

    def __init__(self, n):
        self.n = n
        if Backend.shared is None:
            Backend.shared = torch.zeros(n)  # <- site
        else:
            self.prev = Backend.shared.sum().item()  # the previous backend's last metadata

    def init_cuda_graph_state(self, max_bs):
        pass

    def init_forward_metadata_capture_cuda_graph(self, bs):
        Backend.shared.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        Backend.shared.fill_(1)

    def init_forward_metadata(self, bs):
        Backend.shared.fill_(1)

    def forward_decode(self):
        return Backend.shared.sum()


REG = types.SimpleNamespace()  # a module-level namespace object


class RegBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        REG.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        REG.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        REG.buf.fill_(1)

    def init_forward_metadata(self, bs):
        REG.buf.fill_(1)

    def forward_decode(self):
        return REG.buf.sum()


def peek():  # module code, not a method: reads the buffer at any time
    return REG.buf.sum().item()
""",
        scenario=r"""
def run():
    Backend.shared = None
    a = Backend(4)
    b = Backend(4)
    for obj in (a, b):
        obj.init_cuda_graph_state(4)
        obj.init_forward_metadata(4)
        obj.forward_decode()
    r = RegBackend(4)
    r.init_cuda_graph_state(4)
    return b.prev, peek()
""",
    ),
    Case(
        "buffer_reachable_from_a_module_global",
        why=(
            "`safe` would be wrong for `self.buf = torch.zeros(max_bs)` at line 9 and for `self.buf"
            ' = torch.zeros(max_bs)` at line 35: "lifecycle sglang-attention-backend: `self.buf` is'
            " written in full (line 12 / line 38) before any read on every path; torch.empty is "
            'equivalent". Why: each class has a method OUTSIDE the model (`debug_checksum`), which '
            "the driver (or any code) may call at any time, e.g. right after init_cuda_graph_state,"
            " before any metadata setup. The analysis knows this is a risk: "
            "rules/lifecycle_analysis._used_outside rejects a buffer when an outside method touches"
            " `self.<attr>` or uses `self` whole. But it only looks at the outside method's own "
            "body: `self._checksum()` / `self.forward_decode()` are attribute uses of other names, "
            "and the methods they call are excluded from the check because they are in "
            "program.methods (inlined somewhere in the program). So an outside method that reaches "
            "the buffer through a modelled method (HelperBackend: the helper `_checksum`, inlined "
            "by forward_decode) or by calling a forward method out of order (ForwardBackend: "
            "`self.forward_decode()`) is not seen. Order: Backend(4); init_cuda_graph_state(4); "
            "debug_checksum() (later cycles as the model says). zeros, then poisoned (NaN)."
        ),
        source=r"""
import torch


class HelperBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self.buf.fill_(1)

    def forward_decode(self):
        return self._checksum()

    def _checksum(self):
        return self.buf.sum()

    def debug_checksum(self):
        return self._checksum()


class ForwardBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self.buf.fill_(1)

    def forward_decode(self):
        return self.buf.sum()

    def debug_checksum(self):
        return self.forward_decode()
""",
        scenario=r"""
def run():
    out = []
    for cls in (HelperBackend, ForwardBackend):
        b = cls(4)
        b.init_cuda_graph_state(4)
        out.append(b.debug_checksum().item())
        b.init_forward_metadata(4)
        b.forward_decode()
    return out
""",
    ),
    Case(
        "buffer_read_by_another_instance",
        why=(
            "`safe` would be wrong for `self.buf = torch.zeros(max_bs)` at line 13 and at line 34: "
            '"lifecycle sglang-attention-backend: `self.buf` is written in full (line 16 / line 37)'
            ' before any read on every path; torch.empty is equivalent". But the eager cycle '
            "(init_forward_metadata, then forward_decode) never writes the buffer, and "
            "forward_decode reads it. Why: rules/lifecycle_program._Inliner.inline renames every "
            "method's first parameter to the one shared name `self` of the program. A method that "
            "rebinds or deletes its own `self` parameter (`self = self.inner`, `del self`: a local "
            "effect in Python, gone when the method returns) becomes, in the program, a rebinding "
            'of the object itself: buffer_flow.kill("self") drops `self.buf` and every path under '
            "it, for the rest of the program. The next method's `self.buf.sum()` then no longer "
            "names the buffer, so the read is not seen. Here the rebinding is in "
            "init_forward_metadata (the eager setup): with CUDA graphs disabled the program is "
            "`init; (init_forward_metadata; forward_decode)*` and the only read of the buffer is "
            "lost. (A `for self in ...` loop is only demoted: unproven.) Order (the model's graphs-"
            "disabled schedule): B(4); init_cuda_graph_state(4); init_forward_metadata(1); "
            "forward_decode(). zeros, then poisoned (NaN)."
        ),
        source=r"""
import torch


class Inner:
    pass


class RebindBackend:
    def __init__(self, n):
        self.inner = Inner()

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self = self.inner  # work on the inner object from here on
        self.bs = bs

    def forward_decode(self):
        return self.buf.sum()


class DelBackend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        del self

    def forward_decode(self):
        return self.buf.sum()
""",
        scenario=r"""
def run():
    out = []
    for cls in (RebindBackend, DelBackend):
        b = cls(4)
        b.init_cuda_graph_state(4)
        b.init_forward_metadata(1)
        out.append(b.forward_decode().item())
    return out
""",
    ),
    Case(
        "second_instance_shares_the_buffer",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(max_bs)` at line 9: "lifecycle '
            "sglang-attention-backend: `self.buf` is written in full (line 12) before any read on "
            'every path; torch.empty is equivalent". Why: the program models one object, and '
            '`private_roots = {"self"}` makes only `self.<attr>` paths name its buffers. '
            "forward_decode of instance B reads `other.buf` of another instance A of the same class"
            " (a draft/target or per-layer pair handed in by the caller); in the program `other` is"
            " an unknown parameter, so the read is of no tracked buffer. A's own order is one the "
            "model allows (A only ran __init__ and init_cuda_graph_state so far), and so is B's "
            "(init, eager setup, forward), yet B's modelled method reads A's buffer before A's "
            "setup writes it. The analysis never checks that a modelled method reads buffers of its"
            " own object only. (Weaker than 001: it depends on the caller passing an instance; "
            'noted for completeness of the "several instances" probe.) Order: A = Backend(4); '
            "A.init_cuda_graph_state(4); B = Backend(4); B.init_cuda_graph_state(4); "
            "B.init_forward_metadata(4); B.forward_decode(A). forward_decode(A) with real "
            "torch.zeros, then poisoned (NaN)."
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, n):
        self.n = n

    def init_cuda_graph_state(self, max_bs):
        self.buf = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.buf.fill_(1)

    def init_forward_metadata(self, bs):
        self.buf.fill_(1)

    def forward_decode(self, other):
        return self.buf.sum() + other.buf.sum()
""",
        scenario=r"""
def run():
    a = Backend(4)
    a.init_cuda_graph_state(4)
    b = Backend(4)
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)
    return b.forward_decode(a).item()
""",
    ),
    Case(
        "attribute_chain_to_another_instance",
        why=(
            "`safe` would be wrong for the zeros at line 9. a draft backend reads the target "
            "backend's buffer through an attribute chain (`self.target.lens`): another instance of "
            "the class, whose buffer its own cycles have not written"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, target=None):
        self.target = target

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        if self.target is not None:
            return q * self.lens.sum() + q * self.target.lens.sum()
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    target = Backend()
    target.init_cuda_graph_state(4, 4)  # target: graph state built, no step yet
    draft = Backend(target)
    draft.init_cuda_graph_state(4, 4)
    draft.init_forward_metadata(2, None)
    return draft.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "subscripted_chain_to_another_instance",
        why=(
            "`safe` would be wrong for the zeros at line 9. another instance's buffer through a "
            "subscripted chain (`self.peers[0].lens`), not `<name>.<attr>`"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, peers=()):
        self.peers = list(peers)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        out = q * self.lens.sum()
        for i in range(len(self.peers)):
            out = out + self.peers[i].lens.sum()
        return out
""",
        scenario=r"""
def run():
    peer = Backend()
    peer.init_cuda_graph_state(4, 4)
    b = Backend([peer])
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "mangled_name_read_from_a_module_function",
        why=(
            "`safe` would be wrong for the zeros at line 6. private name mangling: `self.__lens` in"
            " class Backend is `_Backend__lens`, which a module function reads on an object whose "
            "cycles have not run"
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.__lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.__lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.__lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.__lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.__lens.sum()


def total_length(backend):
    return backend._Backend__lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    return total_length(b)
""",
    ),
    Case(
        "module_function_reads_the_buffer",
        why=(
            "`safe` would be wrong for the zeros at line 6. a module-level function of the same "
            "file takes the backend and reads its buffer (a warm-up probe run before any step); the"
            " same read from a method was already handled"
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def graph_memory_probe(backend):
    return float(backend.lens.sum())
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    return graph_memory_probe(b)
""",
    ),
    Case(
        "getattr_with_a_string_reads_the_buffer",
        why=(
            "`safe` would be wrong for the zeros at line 6. a module function reads the buffer with"
            ' `getattr(backend, "lens")`'
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def dump(backend, name="lens"):
    return getattr(backend, "lens").sum()  # noqa: B009
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    return dump(b)
""",
    ),
    Case(
        "attrgetter_at_module_level",
        why=(
            '`safe` would be wrong for the zeros at line 8. `operator.attrgetter("lens")` at module'
            " level reads the buffer of whatever backend it is applied to, outside the modelled "
            "order; no `.lens` attribute is written anywhere"
        ),
        source=r"""
import operator

import torch


class Backend:
    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


_get_lens = operator.attrgetter("lens")
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    return _get_lens(b).sum()
""",
    ),
    Case(
        "metadata_field_holds_another_backend",
        why=(
            "The analysis must not say `safe` for the zeros at line 16 (a looser lifecycle model "
            "would). a module function stores another backend into `forward_metadata`, so "
            "`metadata.lens` in forward may be that backend's buffer: a metadata field named like "
            "the buffer is exempt only where every store makes a record"
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    lens: object = None


class Backend:
    def __init__(self):
        self.forward_metadata = None

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def init_forward_metadata(self, bs, seq_lens):
        self.lens.fill_(1)
        self.forward_metadata = Meta(self.lens)

    def forward_decode(self, q, k, v):
        metadata = self.forward_metadata
        return q * metadata.lens.sum()


def share_metadata(b, other):
    b.forward_metadata = other
""",
        scenario=r"""
def run():
    other = Backend()
    other.init_cuda_graph_state(4, 4)
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    share_metadata(b, other)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
