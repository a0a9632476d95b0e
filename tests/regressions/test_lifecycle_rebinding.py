"""Lifecycle models: a method or attribute rebound or reached where the class body does not show
it (`self.__dict__`, an instance attribute, a class decorator, module-level stores, `setattr`,
`exec`, a later definition in the class).

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
        "dict_item_store_rebinds_the_attribute",
        why=(
            "`self.__dict__['a'] = ...` rebinds self.a without an attribute store, so the later "
            "`self.a.fill_(1)` writes the NEW tensor; the buffer allocated at line 13, col 18 "
            "(still reachable as self.keep and read by forward_decode) is never written. `safe` "
            "would be wrong. What the zeros do: pattern nan|max, input (0, 0, 0, False): result[0]:"
            " NaN at different places. Any store through self.__dict__ (or vars(self), which it "
            "handles) must kill self's buffers."
        ),
        source=r"""
import torch


def reset(obj):
    obj.a = torch.ones(8)


class Backend:
    def __init__(self):
        self.max_bs = 8

    def init_cuda_graph_state(self, max_bs):
        self.a = torch.zeros(max_bs)  # <- site
        self.keep = self.a

    def init_forward_metadata_capture_cuda_graph(self, bs, k, flag):
        self.__dict__['a'] = torch.ones(8)
        self.a.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, k, flag):
        self.a.fill_(1)

    def forward_decode(self, q, bs):
        return self.keep.sum()

    def init_forward_metadata(self, bs, k, flag):
        self.a.fill_(1)

    def _reset(self):
        self.a = torch.ones(8)


def f(inp, n, k, flag):
    b = Backend()
    b.init_cuda_graph_state(8)
    b.init_forward_metadata_capture_cuda_graph(8, k, flag)
    warm = b.forward_decode(inp, 8)
    b.init_forward_metadata_replay_cuda_graph(8, k, flag)
    rep = b.forward_decode(inp, 8)
    return warm, rep
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "dict_update_rebinds_the_attribute",
        why=(
            "`self.__dict__.update(a=...)` rebinds self.a without an attribute store, so the later "
            "`self.a.fill_(1)` writes the NEW tensor; the buffer allocated at line 13, col 18 "
            "(still reachable as self.keep and read by forward_decode) is never written. `safe` "
            "would be wrong. What the zeros do: pattern nan|max, input (0, 0, 0, False): result[0]:"
            " NaN at different places. Any store through self.__dict__ (or vars(self), which it "
            "handles) must kill self's buffers."
        ),
        source=r"""
import torch


def reset(obj):
    obj.a = torch.ones(8)


class Backend:
    def __init__(self):
        self.max_bs = 8

    def init_cuda_graph_state(self, max_bs):
        self.a = torch.zeros(max_bs)  # <- site
        self.keep = self.a

    def init_forward_metadata_capture_cuda_graph(self, bs, k, flag):
        self.__dict__.update(a=torch.ones(8))
        self.a.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, bs, k, flag):
        self.a.fill_(1)

    def forward_decode(self, q, bs):
        return self.keep.sum()

    def init_forward_metadata(self, bs, k, flag):
        self.a.fill_(1)

    def _reset(self):
        self.a = torch.ones(8)


def f(inp, n, k, flag):
    b = Backend()
    b.init_cuda_graph_state(8)
    b.init_forward_metadata_capture_cuda_graph(8, k, flag)
    warm = b.forward_decode(inp, 8)
    b.init_forward_metadata_replay_cuda_graph(8, k, flag)
    rep = b.forward_decode(inp, 8)
    return warm, rep
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "read_through_instance_dict",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 6, col 19 ("`self.buf` '
            'is never read"). `forward_decode` reads the buffer as `self.__dict__["buf"]`. a nearby'
            " case *stores* through `self.__dict__` kill self's buffers, but a *load* through "
            "`self.__dict__[...]` is not taken as a read of `self.buf` (the `self.__dict__` "
            "attribute path is not the `self.buf` key, and `self` counts as a private root, so "
            'handing `self.__dict__` around is not an escape either). `vars(self)["buf"]` is '
            "handled (unproven)."
        ),
        source=r"""
import torch


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        pass

    def init_forward_metadata_replay_cuda_graph(self, n):
        pass

    def init_forward_metadata(self, n):
        pass

    def forward_decode(self, x):
        return x + self.__dict__["buf"].sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "writer_redefined_later_in_the_class",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 13, col 19 ("`self.buf` '
            'is written in full (line 16) before any read on every path"). The `def '
            "init_forward_metadata` that writes the buffer is replaced, later in the class body, by"
            " `init_forward_metadata = _no_metadata`, which writes nothing: eager steps then read "
            "the initial contents in forward_decode. rules/lifecycle_program.class_methods builds "
            "the class's methods from its `def` statements only, so the program runs the shadowed "
            "body (the same blind spot as 001, here believing a write that never happens)."
        ),
        source=r"""
import torch


def _no_metadata(self, n):
    pass


class Backend:
    def __init__(self):
        pass

    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, n):
        self.buf.fill_(1)

    def init_forward_metadata(self, n):
        self.buf.fill_(1)

    init_forward_metadata = _no_metadata

    def forward_decode(self, x):
        return x + self.buf.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "instance_attribute_shadows_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 18. an instance attribute shadows a "
            "method: `self._fill = _skip` in `__init__`, so `self._fill()` runs `_skip`, not the "
            "class's `def _fill` that writes the buffer"
        ),
        source=r"""
import torch


def _skip():
    return None


class Backend:
    def __init__(self, max_bs=4, fast=True):
        if fast:
            self._fill = _skip
        self.max_bs = max_bs

    def _fill(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self._fill()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "attribute_stored_from_a_module_function_shadows_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 12. an attribute stored from a module "
            "function (`backend.write_lens = ...`) shadows the method `write_lens` that "
            "init_cuda_graph_state calls"
        ),
        source=r"""
import torch


class Backend:
    def __init__(self, max_bs=4):
        self.max_bs = max_bs

    def write_lens(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self.write_lens()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()


def make_backend(lazy):
    b = Backend()
    if lazy:
        b.write_lens = lambda: None
    return b
""",
        scenario=r"""
def run():
    b = make_backend(True)
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "class_decorator_replaces_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 12. a class decorator replaces a modelled "
            "method (init_forward_metadata becomes a no-op); class decorators were never looked at"
        ),
        source=r"""
import torch


def lazy_metadata(cls):
    cls.init_forward_metadata_capture_cuda_graph = lambda self, bs, seq_lens: None
    return cls


@lazy_metadata
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
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "method_rebound_at_module_level",
        why=(
            "`safe` would be wrong for the zeros at line 6. module-level rebinding after the class "
            "body (`Backend.init_forward_metadata = ...`) replaces the method that writes the "
            "buffer"
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


def _metadata_only(self, bs, seq_lens):
    self.bs = bs


Backend.init_forward_metadata = _metadata_only
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "setattr_from_a_function_replaces_setup",
        why=(
            "`safe` would be wrong for the zeros at line 6. `setattr(Backend, ...)` from a function"
            " of the module replaces the capture-time setup"
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


def patch_for_tests():
    setattr(Backend, "init_forward_metadata_capture_cuda_graph", lambda self, bs, seq_lens: None)  # noqa: B010
""",
        scenario=r"""
def run():
    patch_for_tests()
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata_capture_cuda_graph(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "mangled_method_shadowed_by_an_attribute",
        why=(
            "`safe` would be wrong for the zeros at line 17. mangled method shadowed: `self.__fill "
            "= _skip` stores `_Backend__fill`, the same name the class's `def __fill` has"
        ),
        source=r"""
import torch


def _skip():
    return None


class Backend:
    def __init__(self, lazy=True):
        if lazy:
            self.__fill = _skip

    def __fill(self):
        self.lens.fill_(1)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.lens = torch.zeros(max_bs)  # <- site
        self.__fill()

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.bs = bs

    def init_forward_metadata(self, bs, seq_lens):
        self.bs = bs

    def forward_decode(self, q, k, v):
        return q * self.lens.sum()
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
    return b.forward_decode(torch.ones(2), None, None)
""",
    ),
    Case(
        "exec_of_a_string_rebinds_a_method",
        why=(
            "`safe` would be wrong for the zeros at line 6. `exec` of a string at module level "
            "rebinds a modelled method; a string can do anything the analysis cannot read"
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


exec("Backend.init_forward_metadata = lambda self, bs, seq_lens: None")
""",
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4, 4)
    b.init_forward_metadata(2, None)
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
