"""Witness schedules of a CUDA-graph backend: what the capture warm-up reads on one path.

SGLang's graph runner calls `init_cuda_graph_state` and captures at once; the capture setup
branches on the configuration (draft decode, target verify, topk) and stores views of the graph
buffers in a metadata record, which the warm-up forward hands to the attention kernel. Each case
below is a small backend of that shape (sglang 0.4.6.post5's `FlashAttentionBackend` in
miniature). Cases are checked and executed by `tests/regressions/harness.py` (zeros, then
poison); the near-misses at the end are programs where the poisoned runs give the zeros result,
so `unsafe` there would be wrong: their verdict must stay `unproven`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_verdict,
    params,
    poisoned_runs,
    site_verdicts,
)

HEADER = r'''
import sys
import types
from dataclasses import dataclass

import torch


def _stand_in(q, k_cache, v_cache, cache_seqlens=None, page_table=None, **kw):
    """What FlashAttention reads: each length, and a page-table row up to it."""
    out = torch.zeros_like(q)
    for b in range(q.shape[0]):
        n = int(cache_seqlens[b])
        rows = page_table[b, :n].long() if page_table is not None else torch.zeros(0).long()
        out[b] = q[b] * (n + k_cache[rows].sum())
    return out


_pkg = types.ModuleType("sgl_kernel")
_mod = types.ModuleType("sgl_kernel.flash_attn")
_mod.flash_attn_with_kvcache = _stand_in
_pkg.flash_attn = _mod
sys.modules.setdefault("sgl_kernel", _pkg)
sys.modules.setdefault("sgl_kernel.flash_attn", _mod)

from sgl_kernel.flash_attn import flash_attn_with_kvcache  # noqa: E402


@dataclass
class Meta:
    lens: torch.Tensor = None
    table: torch.Tensor = None
    local: object = None


class Backend:
    def __init__(self, topk):
        self.topk = topk
        self.meta = None
        self.expand = None
        self.by_size = {}

    def init_cuda_graph_state(self, max_bs):
'''

CAPTURE = """
    def init_forward_metadata_capture_cuda_graph(self, bs, num_tokens, req_pool_indices, seq_lens):
"""

REST = """
    def init_forward_metadata_replay_cuda_graph(self, bs, num_tokens, req_pool_indices, seq_lens):
        self.meta.lens.copy_(seq_lens[:bs])

    def init_forward_metadata(self, bs, seq_lens):
        self.meta = Meta(seq_lens)

    def forward_decode(self, q, k_cache, v_cache):
"""

# The witness schedule run for real: graph init, the capture setup, one warm-up forward.
WARMUP = r"""
def warm_up(topk, indices=(0, 1, 2, 3)):
    b = Backend(topk)
    b.init_cuda_graph_state(4)
    idx = torch.tensor(indices, dtype=torch.int64)
    b.init_forward_metadata_capture_cuda_graph(4, 4, idx, torch.ones(4, dtype=torch.int32))
    q = torch.ones(4, 2)
    kc = torch.ones(8, 2)
    return b.forward_decode(q, kc, kc)


def run():
    return warm_up(1), warm_up(2)
"""

# Graph buffers: lengths for draft decode (topk > 1) and target verify (topk 1), a page table.
INIT = """
self.draft = {"lens": torch.zeros(max_bs, dtype=torch.int32)}  # <- draft
self.verify = {"lens": torch.zeros(max_bs, dtype=torch.int32)}  # <- verify
self.tables = {"table": torch.zeros(max_bs, 8, dtype=torch.int32)}  # <- table
self.expand_lens = torch.ones(max_bs, dtype=torch.int32)
"""

# Draft decode stores a view of its lengths (unwritten); target verify writes its own first.
BRANCHES = """
meta = Meta()
expand = Meta()
if self.topk > 1:
    meta.lens = self.draft["lens"][:bs]
    expand.lens = self.expand_lens[:bs]
else:
    meta.lens = self.verify["lens"][:bs]
    meta.lens.copy_(seq_lens)
self.meta = meta
self.expand = expand
"""

FORWARD = """
meta = self.meta
local = getattr(meta, "local", None)
return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=meta.lens)
"""


def backend(
    site: str,
    capture: str = BRANCHES,
    forward: str = FORWARD,
    init: str = INIT,
    classes: str = "",
    methods: str = "",
) -> str:
    """The backend with the allocation tagged `# <- site` marked as the case's site; `classes`
    are module-level classes defined before it, `methods` more methods of it."""

    def body(code: str) -> str:
        return textwrap.indent(textwrap.dedent(code).strip(), "        ")

    header = HEADER.replace("class Backend:", textwrap.dedent(classes).strip() + "\n\n\nclass Backend:")
    text = header + body(init) + "\n" + CAPTURE + body(capture) + "\n" + REST + body(forward)
    if methods:
        text += "\n\n" + textwrap.indent(textwrap.dedent(methods).strip(), "    ")
    lines = []
    for line in text.splitlines():
        tag = line.rsplit("# <- ", 1)[-1] if "# <- " in line else None
        if tag is not None:
            line = line.rsplit("  # <- ", 1)[0] + ("  # <- site" if tag == site else "")
        lines.append(line)
    return "\n".join(lines) + "\n"


TABLE_FORWARD = (
    "meta = self.meta\n"
    "return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=meta.lens, "
    "page_table=meta.table)"
)
PLAIN_FORWARD = "return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=self.meta.lens)"

CASES = [
    Case(
        "capture_branch_view_read_by_warm_up_forward",
        why=(
            "`self.draft['lens']` is stored as `meta.lens` only on the capture setup's topk > 1 "
            "branch, and the warm-up forward hands `self.meta.lens` to the attention kernel "
            "before any replay writes it (sglang 0.4.6.post5 flashattention_backend.py:1191, "
            "crashed on an H200). With the setup's branches joined, `meta.lens` may be either "
            "view there and the read is only possible; the witness follows each path of the "
            "setup."
        ),
        source=backend(
            "draft",
            capture="meta = Meta()\nif self.topk > 1:\n    meta.lens = self.draft['lens'][:bs]\n"
            "else:\n    meta.lens = self.verify['lens'][:bs]\n    meta.lens.copy_(seq_lens)\n"
            "self.meta = meta",
            forward=PLAIN_FORWARD,
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "second_record_store_leaves_the_first",
        why=(
            "`meta = Meta()` and `expand = Meta()` are two objects (a plain dataclass called "
            "twice): the store `expand.lens = ...` cannot re-point `meta.lens`, which still "
            "holds the unwritten view when the forward reads it. Without knowing that, every "
            "`.lens` path is demoted to a may-alias and the read is only possible (sglang "
            "0.4.6.post5's capture setup fills `metadata` and `metadata_expand` this way)."
        ),
        source=backend(
            "draft",
            capture="meta = Meta()\nexpand = Meta()\nmeta.lens = self.draft['lens'][:bs]\n"
            "expand.lens = self.expand_lens[:bs]\nself.meta = meta\nself.expand = expand",
            forward=PLAIN_FORWARD,
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "constant_getattr_is_the_attribute",
        why=(
            "`getattr(meta, 'local', None)` is `meta.local` (or None): it reads no other field of "
            "the record, so `meta.lens` still holds the unwritten view the kernel reads next "
            "(sglang 0.4.6.post5 forward_decode, line 915). Taken as a use of the whole record, "
            "the view was handed to unknown code and the read only possible."
        ),
        source=backend(
            "draft",
            capture="meta = Meta()\nmeta.lens = self.draft['lens'][:bs]\nself.meta = meta",
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "capture_gathers_rows_at_engine_request_indices",
        why=(
            "The capture setup gathers `self.tables['table'][req_pool_indices, :]`: the engine "
            "passes a tensor of request indices third (sglang 0.4.6.post5 cuda_graph_runner.py"
            ":400, :475-478), so the index is a gather that copies unwritten rows (sglang "
            "flashattention_backend.py:1144, :1260, crashed on an H200). Without the engine's "
            "argument the index might be an int (a view), and the read only possible."
        ),
        source=backend(
            "table",
            capture="meta = Meta()\nmeta.table = self.tables['table'][req_pool_indices, :]\n"
            "meta.lens = seq_lens\nself.meta = meta",
            forward="return q * self.meta.table.float().sum()",
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    ),
    Case(
        "computed_key_store_into_another_dict",
        why=(
            "`self.by_size[bs] = meta` stores under a computed key: through another name for "
            "the same dict it could replace any entry, `self.tables['table']` included. But "
            "`self.by_size` and `self.tables` are only ever assigned dict displays: two dicts, "
            "so the table's entry still holds the unwritten buffer the capture setup then views "
            "and the forward reads (sglang 0.4.6.post5 stores `self.decode_cuda_graph_metadata"
            "[bs] = metadata` before viewing `self.encoder_metadata[...]`, line 1326)."
        ),
        source=backend(
            "table",
            capture="meta = Meta()\nmeta.lens = seq_lens\nself.by_size[bs] = meta\n"
            "meta.table = self.tables['table'][:bs]\nself.meta = meta",
            forward=TABLE_FORWARD,
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    ),
]

# The kernel reads rows of `self.expand.table` up to `self.expand.lens`, which hold written
# lengths; another graph buffer (zeros, never written) is stored in the same-named slot of
# another record first. Near misses below make the two records one object.
EXPAND_FORWARD = (
    "return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=self.expand.lens, "
    "page_table=self.expand.table)"
)
EXPAND_TAIL = (
    "expand.lens = self.expand_lens[:bs]\nexpand.table = self.tables['table'][:bs]\n"
    "meta.lens = self.draft['lens'][:bs]\nself.meta = meta\nself.expand = expand"
)
CASES.append(
    Case(
        "bound_of_the_rows_is_another_records_slot",
        why=(
            "`meta` and `expand` are bound only to calls of a plain dataclass: two objects. The "
            "zeros lengths stored into `meta.lens` are not the `self.expand.lens` that bounds "
            "the rows of the table the forward reads, so the unwritten table rows are read "
            "(sglang 0.4.6.post5 flashattention_backend.py:1234, `metadata_expand.page_table`, "
            "crashed on an H200). Were `meta.lens` taken to be any object's `.lens`, the zeros "
            "there could bound the rows to none, and the read was only possible."
        ),
        source=backend(
            "table",
            capture="meta = Meta()\nexpand = Meta()\n" + EXPAND_TAIL,
            forward=EXPAND_FORWARD,
        ),
        scenario=WARMUP,
        expect=frozenset({Verdict.UNSAFE}),
    )
)

# Equivalent programs (every poisoned run gives the zeros result) close to the cases above.
NEAR_MISSES = [
    Case(
        "dict_shared_by_two_attributes",
        why=(
            "`self.by_size = self.tables` makes the two attributes one dict: the store "
            "`self.by_size['table'] = ...` replaces the table, and the forward reads the "
            "replacement, never the zeros buffer. Only attributes assigned nothing but displays "
            "(or new records) are taken as distinct objects."
        ),
        source=backend(
            "table",
            init=INIT + "self.by_size = self.tables\n",
            capture="meta = Meta()\nself.by_size['table'] = torch.ones(4, 8, dtype=torch.int32)\n"
            "meta.table = self.tables['table'][:bs]\nself.meta = meta",
            forward="return q * self.meta.table.float().sum()",
        ),
        scenario=WARMUP,
    ),
    Case(
        "view_written_on_its_own_branch",
        why=(
            "Target verify (topk 1) stores `self.verify['lens'][:bs]` and copies the lengths in "
            "before the forward (sglang flashattention_backend.py:1247, equivalent on an H200); "
            "on the topk > 1 path the view is never stored. No path reads it unwritten."
        ),
        source=backend("verify"),
        scenario=WARMUP,
    ),
    Case(
        "aliased_record_is_re_pointed",
        why=(
            "`expand = meta` is the same object: `expand.lens = self.expand_lens[:bs]` re-points "
            "`meta.lens`, and the forward reads the written lengths, never the draft buffer."
        ),
        source=backend(
            "draft",
            capture="meta = Meta()\nexpand = meta\nmeta.lens = self.draft['lens'][:bs]\n"
            "expand.lens = self.expand_lens[:bs]\nself.meta = meta",
            forward=PLAIN_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "same_test_takes_the_same_branch",
        why=(
            "Two `if self.topk > 1:` in the setup: the view stored under the first is written "
            "under the second. A path taking the first and skipping the second does not exist; "
            "the witness follows a test it decided already the same way."
        ),
        source=backend(
            "draft",
            capture="meta = Meta()\nmeta.lens = self.expand_lens[:bs]\nif self.topk > 1:\n"
            "    meta.lens = self.draft['lens'][:bs]\nif self.topk > 1:\n"
            "    meta.lens.copy_(seq_lens)\nself.meta = meta",
            forward=PLAIN_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "int_argument_index_is_a_view",
        why=(
            "`self.tables['table'][num_tokens, :]` indexes by the second argument, an int the "
            "engine passes (the batch's token count): a view of one row, not a gather, and the "
            "forward never reads it. Only the engine's tensor argument makes an index a gather."
        ),
        source=backend(
            "table",
            capture="meta = Meta()\nmeta.table = self.tables['table'][num_tokens - 4, :]\n"
            "meta.lens = seq_lens\nself.meta = meta",
            forward=PLAIN_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "table_rows_bounded_by_unwritten_lengths",
        why=(
            "The kernel reads page-table rows up to the lengths it is given; those lengths are "
            "another graph buffer the warm-up never writes, zeros in the original program, so "
            "no row of the table is read (sglang flashattention_backend.py:1311, bounded by "
            "1295, equivalent on an H200 when rewritten alone)."
        ),
        source=backend(
            "table",
            capture="meta = Meta()\nmeta.table = self.tables['table'][:bs]\n"
            "meta.lens = self.draft['lens'][:bs]\nself.meta = meta",
            forward="return flash_attn_with_kvcache(q, k_cache, v_cache, "
            "cache_seqlens=self.meta.lens, page_table=self.meta.table)",
        ),
        scenario=WARMUP,
    ),
    # Near misses of bound_of_the_rows_is_another_records_slot: `expand` is `meta`, so the
    # zeros lengths bound the rows and none is read.
    Case(
        "rows_bound_through_a_rebound_name",
        why="`expand = meta`: one record, whose `.lens` is last the zeros draft lengths.",
        source=backend(
            "table", capture="meta = Meta()\nexpand = meta\n" + EXPAND_TAIL, forward=EXPAND_FORWARD
        ),
        scenario=WARMUP,
    ),
    Case(
        "rows_bound_through_a_container_of_both",
        why="`self.expand = both[0]` is `meta`, taken out of a list that holds both records.",
        source=backend(
            "table",
            capture="meta = Meta()\nexpand = Meta()\n"
            + EXPAND_TAIL.replace("self.expand = expand", "both = [meta, expand]\nself.expand = both[0]")
            + "\nmeta.table = expand.table",
            forward=EXPAND_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "rows_bound_through_a_shared_instance",
        why="`Shared()` hands back one instance every time (`__new__`): `meta` is `expand`.",
        source=backend(
            "table",
            classes="""
            class Shared:
                one = None

                def __new__(cls):
                    if Shared.one is None:
                        Shared.one = super().__new__(cls)
                    return Shared.one
            """,
            capture="meta = Shared()\nexpand = Shared()\n" + EXPAND_TAIL,
            forward=EXPAND_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "rows_bound_through_a_forwarding_record",
        why=(
            "`Fwd` is a dataclass whose property `lens` hands back `other.lens`: "
            "`self.expand.lens` is `meta.lens`, though `expand` was made by its own call."
        ),
        source=backend(
            "table",
            classes="""
            @dataclass
            class Fwd:
                table: torch.Tensor = None
                other: object = None

                @property
                def lens(self):
                    return self.other.lens
            """,
            capture="meta = Meta()\nexpand = Fwd()\nexpand.other = meta\n"
            "expand.table = self.tables['table'][:bs]\nmeta.lens = self.draft['lens'][:bs]\n"
            "self.meta = meta\nself.expand = expand",
            forward=EXPAND_FORWARD,
        ),
        scenario=WARMUP,
    ),
    Case(
        "rows_bound_through_a_parameter",
        why="`expand = self.same(meta)` hands back its parameter: one record.",
        source=backend(
            "table",
            capture="meta = Meta()\nexpand = self.same(meta)\n" + EXPAND_TAIL,
            forward=EXPAND_FORWARD,
            methods="""
            def same(self, m):
                return m
            """,
        ),
        scenario=WARMUP,
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    """Judged, never `unsafe` (nor `safe`: these need the replay too), and really equivalent:
    every poisoned run gives the zeros result."""
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts == [Verdict.UNPROVEN], (line, verdicts)
    _, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), differences
