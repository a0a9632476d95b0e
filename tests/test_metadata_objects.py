"""Buffers held by metadata objects: dataclass fields, dicts keyed by batch size, other names
for the same object, and views written in full through the path that later reads them.

Every case is analysed *and executed*: the allocation is poisoned (NaN, max, 2**30, -1, 1) and
the result compared with the zeros run. A `safe` must run equivalent; each case expected to be
`unsafe` must be seen to differ, so the analysis is checked against Python in both directions.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from tests.soundness.oracle import check_program, engine_findings
from zeroopt.analysis.records import plain_dataclasses
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

S, U, P = Verdict.SAFE, Verdict.UNSAFE, Verdict.UNPROVEN

HEADER = """\
import sys
import types
import torch
from dataclasses import dataclass, field

sys.modules.setdefault(__name__, types.ModuleType(__name__))  # the oracle execs this source


@dataclass
class Meta:
    lens: torch.Tensor = None
    table: torch.Tensor = None
    extra: list = field(default_factory=list)


class Opaque:
    def __init__(self, **kw):
        for name, value in kw.items():
            setattr(self, name, value)


def helper(m):
    m.lens = torch.ones(3)


def f(inp, n, k, flag):
"""

CASES: dict[str, tuple[Verdict, str]] = {
    # A view stored in a record, written in full through the record, read through it.
    "record-view-written-then-read": (
        S,
        """
        buf = torch.zeros(8)
        m = Meta(lens=buf[:4])
        m.lens.copy_(inp[0, :4])
        return m.lens.sum()
        """,
    ),
    "record-view-read-unwritten": (
        U,
        """
        buf = torch.zeros(8)
        m = Meta(lens=buf[:4])
        return m.lens.sum()
        """,
    ),
    # Written through the record, then the field is re-pointed at unwritten memory: the only
    # write, `buf[:4]`, leaves buf[4] alone, and `buf[4:].sum()` reads it (uncovered reads).
    "record-field-rebound": (
        U,
        """
        buf = torch.zeros(8)
        m = Meta(lens=buf[:4])
        m.lens.fill_(1.0)
        m.lens = buf[4:]
        return m.lens.sum()
        """,
    ),
    # Another name for the record re-points the field: the write through `m` hits `y`.
    "record-alias-store": (
        U,
        """
        buf = torch.zeros(8)
        y = torch.ones(4)
        m = Meta(lens=buf[:4])
        a = m
        a.lens = y
        m.lens.fill_(2.0)
        return buf[:4].sum() + y.sum()
        """,
    ),
    # The object travels under another name and the write goes through the new name.
    "record-carried-to-new-name": (
        S,
        """
        buf = torch.zeros(4)
        m = Meta(lens=buf)
        holder = {}
        t = m
        t.lens.copy_(inp[1, :4])
        return m.lens.sum()
        """,
    ),
    # A computed key may be any key: the entry read back may be the one just stored (a dict
    # display only subscripted in its function is private, dataflow/containers.py, but the
    # entry read back is then maybe the record: its field is read unwritten).
    "dict-computed-key-entry": (
        P,
        """
        buf = torch.zeros(4)
        d = {}
        m = Meta(lens=buf)
        d[k] = m
        back = d[k]
        return back.lens.sum()
        """,
    ),
    # Written through the entry read back under a computed key, then read through it: the
    # private dict hands the buffer to no one, and the read is of what that path wrote in full.
    "dict-computed-key-written": (
        S,
        """
        buf = torch.zeros(4)
        d = {}
        m = Meta(lens=buf)
        d[k] = m
        back = d[k]
        back.lens.fill_(3.0)
        return back.lens.sum()
        """,
    ),
    # Written through one entry, read through a lookup that is not provably the same entry.
    "dict-other-lookup": (
        P,
        """
        buf = torch.zeros(4)
        d = {}
        m = Meta(lens=buf)
        d[k] = m
        d[k].lens.fill_(3.0) if flag else None
        back = d[k]
        return back.lens.sum()
        """,
    ),
    # Handing the record to code we cannot see: it may re-point the field.
    "record-passed-to-opaque": (
        P,
        """
        buf = torch.zeros(4)
        m = Meta(lens=buf)
        m.lens.fill_(1.0) if flag else None
        helper(m)
        return m.lens.sum() + buf.sum()
        """,
    ),
    # An object that is not a plain dataclass runs its own __init__: the buffer escapes.
    "non-record-constructor": (
        P,
        """
        buf = torch.zeros(4)
        m = Opaque(lens=buf)
        m.lens.fill_(1.0)
        return m.lens.sum()
        """,
    ),
    # A write on only one branch proves nothing for the read after the join.
    "record-write-on-one-branch": (
        U,
        """
        buf = torch.zeros(4)
        m = Meta(lens=buf)
        if flag:
            m.lens.fill_(1.0)
        return m.lens.sum()
        """,
    ),
}


def _program(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_metadata_object_case(name: str) -> None:
    expected, body = CASES[name]
    source = _program(body)
    report = check_program(source, analyse=engine_findings)
    assert report.valid, report.reason
    assert not report.analysis_error, report.analysis_error
    first = min((s for s in report.sites if s.finding is not None), key=lambda s: s.site.key)
    assert first.verdict is expected, (
        f"{name}: {first.verdict} ({first.finding and first.finding.message})"
    )
    assert not first.unsound, f"{name}: safe, yet poisoning changed the result: {first.detail}"
    if expected is Verdict.UNSAFE:
        assert first.unsafe, f"{name}: said unsafe, but every poisoned run was equivalent"


@pytest.mark.parametrize(
    "rebinding",
    [
        "try:\n    pass\nexcept ValueError as Meta:\n    pass\n",
        "match 1:\n    case int() as Meta:\n        pass\n",
        "def f(x: (Meta := int)) -> None:\n    pass\n",
        "ok = [Meta := 1 for _ in range(1)]\n",
    ],
    ids=["except-as", "match-as", "walrus-in-annotation", "walrus-in-comprehension"],
)
def test_a_class_name_bound_again_in_module_scope_is_not_a_plain_record(rebinding: str) -> None:
    """A second binding may replace the dataclass with anything, whose constructor could read."""
    source = (
        textwrap.dedent(
            """
        import dataclasses
        import torch

        @dataclasses.dataclass
        class Meta:
            lens: torch.Tensor
        """
        )
        + rebinding
    )
    assert plain_dataclasses(ast.parse(source)) == {}
    assert plain_dataclasses(
        ast.parse(source.replace("Meta :=", "Other :=").replace("as Meta", "as Other"))
    ) == {"Meta": ("lens",)}


def test_locals_and_globals_of_functions() -> None:
    source = textwrap.dedent(
        """
        import dataclasses

        @dataclasses.dataclass
        class Meta:
            lens: int

        def local():
            Meta = 3  # a local of its own: the module's Meta stays a record
        """
    )
    assert plain_dataclasses(ast.parse(source)) == {"Meta": ("lens",)}
    declared = source + "\ndef rebinds():\n    global Meta\n    Meta = 3\n"
    assert plain_dataclasses(ast.parse(declared), declared_global=["Meta"]) == {}


META_BACKEND = """
import torch
from dataclasses import dataclass


@dataclass
class Meta:
    cache_seqlens: torch.Tensor = None


class Backend:
    def __init__(self, peer=None):
        self.forward_metadata = None
        self.peer = peer

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.cache_seqlens = torch.zeros(max_bs, dtype=torch.int32)

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.cache_seqlens.copy_(seq_lens)
        metadata = Meta(cache_seqlens=self.cache_seqlens)
        self.forward_metadata = metadata

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):
        self.cache_seqlens.copy_(seq_lens)
        self.forward_metadata = Meta(cache_seqlens=self.cache_seqlens)

    def init_forward_metadata(self, bs, seq_lens):
        metadata = Meta()
        metadata.cache_seqlens = seq_lens.to(torch.int32)
        self.forward_metadata = METADATA

    def forward_decode(self, q, k, v):
        metadata = self.forward_metadata
        return q * metadata.cache_seqlens.sum()
"""


def _lifecycle_verdict(source: str) -> tuple[Verdict, str]:
    result = analyse_source(source, "backend.py")
    assert not result.errors, result.errors
    (f,) = [f for f in result.findings if f.rule == "ZO001"]
    return f.verdict, f.message


def test_metadata_field_named_like_the_buffer_does_not_unjudge_the_class() -> None:
    """`metadata.cache_seqlens` of a metadata dataclass beside `self.cache_seqlens` is no other
    backend's buffer: the class is judged (and the buffer written before every read)."""
    verdict, message = _lifecycle_verdict(META_BACKEND.replace("METADATA", "metadata"))
    assert verdict is Verdict.SAFE, message


@pytest.mark.parametrize(
    "stored",
    [
        "self.peer",  # another backend: `metadata.cache_seqlens` is its buffer
        "make_meta()",  # whatever a function returns
        "Meta() if bs else self.peer",
    ],
)
def test_metadata_that_may_be_another_backend_keeps_the_class_unjudged(stored: str) -> None:
    source = META_BACKEND.replace("METADATA", stored) + "\n\ndef make_meta():\n    return None\n"
    verdict, message = _lifecycle_verdict(source)
    assert verdict is not Verdict.SAFE, message
    assert "another object's buffer" in message, message
