"""The lifecycle cases of tests/test_lifecycles.py, *executed*: each `safe` must survive poisoning.

The static tests check what the analysis says about synthetic attention backends judged across
methods under a lifecycle model. Here the same classes run on CPU in the order the model
prescribes (`analysis/lifecycles.py`, built into one program by `analysis/lifecycle_program.py`),
driven by tests/lifecycle_driver.py: SGLang's runner where the model leaves room, graph replay
emulated by calling the forward again, the `flash_attn` kernels replaced by CPU stand-ins that
read what their contracts say.

Each zeros allocation is poisoned in turn (tests/soundness/oracle.py rewrites exactly that call
to fill the fresh buffer with NaN / max, 2**30 / 1e30, -1, 1) and every forward's return value,
plus everything the stand-in kernels read, is compared with the zeros run, NaN-aware. A `safe`
must run equivalent on every pattern and schedule; an `unsafe` whose read the driver can observe
must differ at least once (the harness can fail); `unproven` cases only have to run.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from tests.lifecycle_driver import (
    KERNEL_LOG,
    MAX_BS,
    MODULE,
    PAGE_SIZE,
    SGLANG,
    SGLANG_SCHEDULES,
    IllegalAccess,
    Run,
    Step,
    fake_kernel,
    kernel_contract,
    run,
)
from tests.soundness.oracle import PATTERNS, Site, difference, find_sites
from tests.test_lifecycles import (
    CAPTURE_VIEWS,
    EAGER_FRESH,
    FORWARD_FA,
    REPLAY_VIEWS,
    RUNNER,
    RUNNER_MODEL,
    STATE,
    backend,
    with_record,
)
from zeroopt.analysis.lifecycles import Lifecycle
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Finding, Verdict

S, U, P = Verdict.SAFE, Verdict.UNSAFE, Verdict.UNPROVEN


@pytest.fixture
def fake_flash_attn(monkeypatch: pytest.MonkeyPatch) -> None:
    top = types.ModuleType("flash_attn")
    cute = types.ModuleType("flash_attn.cute")
    top.flash_attn_with_kvcache = fake_kernel(kernel_contract("flash_attn_with_kvcache"))  # type: ignore[attr-defined]
    cute.flash_attn_varlen_func = fake_kernel(kernel_contract("flash_attn_varlen_func"))  # type: ignore[attr-defined]
    top.cute = cute  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flash_attn", top)
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    monkeypatch.setitem(sys.modules, MODULE, types.ModuleType(MODULE))  # dataclasses look it up


# ---- the cases -----------------------------------------------------------------------------------


def _lens_arg() -> torch.Tensor:
    return torch.tensor([2, 3], dtype=torch.int32)


def _table() -> torch.Tensor:
    return torch.arange(MAX_BS * 16, dtype=torch.int32).view(MAX_BS, 16)


@dataclass(frozen=True)
class Case:
    source: str
    # Static verdict per target, as tests/test_lifecycles.py asserts it (a tuple: any of these).
    expected: dict[str, Verdict | tuple[Verdict, ...]]
    # Unsafe targets whose early read the driver sees in what it collects: those must diverge.
    observable: frozenset[str] = frozenset()
    attrs: dict[str, Callable[[], Any]] = field(default_factory=dict)  # set on `self` after init
    model: Lifecycle = SGLANG
    options: AnalysisOptions | None = None
    schedules: dict[str, tuple[Step, ...]] = field(default_factory=lambda: SGLANG_SCHEDULES)
    page_size: int = PAGE_SIZE


LENS = "self.lens = torch.zeros(max_bs)"
SUM = "return q * self.lens.sum()"
PT = "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)"
VARLEN_PT = "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens_arg, page_table=self.pt)"
KV = "self.cu = torch.zeros(max_bs + 1, dtype=torch.int32)"
REFRESH = """
def _refresh(self, seq_lens):
    self.lens.copy_(seq_lens)
"""
REFRESH_EARLY = """
def _refresh(self, seq_lens):
    if seq_lens is None:
        return
    self.lens.copy_(seq_lens)
"""
IF_CALLS = """
def _enabled(self, bs):
    return bs > 0

def _refresh(self, seq_lens):
    self.lens.copy_(seq_lens)
    return True
"""
PEEK = """
def _peek(self):
    return self.lens.sum()
"""
IDLE = """
def idle_stats(self):
    return self.lens.sum()
"""
CHILD = (
    "\n\nclass Child(Backend):\n"
    "    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):\n        pass\n"
)
PAIR = "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)\nself.lens = torch.zeros(max_bs, dtype=torch.int32)"
REQ_TO_TOKEN = "self.req_to_token = torch.arange(max_bs * 4, dtype=torch.int32).view(max_bs, 4)"

CASES: dict[str, Case] = {
    # ---- from tests/test_lifecycles.py (same builder, same code) ----
    "warmup-read-before-replay-write": Case(
        backend(LENS, "self.bs = bs", "self.lens.copy_(seq_lens)", SUM),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "written-in-full-by-every-setup": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM), {"self.lens": S}
    ),
    "eager-setup-without-write": Case(
        backend(
            LENS,
            "self.lens.fill_(1)",
            "self.lens.copy_(seq_lens)",
            SUM,
            eager="self.other = seq_lens",
        ),
        # A wrapper may build the graph state and then run only eager steps on this object.
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "init-buffer-written-only-with-graphs": Case(
        backend(
            "self.lens.fill_(1)",
            "self.lens.fill_(2)",
            "self.lens.copy_(seq_lens)",
            SUM,
            eager="self.other = seq_lens",
            extra="def __init__(self, max_bs=MAX_BS):\n    self.lens = torch.zeros(max_bs)\n",
        ),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),  # graphs disabled: nothing writes before the read
    ),
    "partial-writes-full-read": Case(
        backend(LENS, "self.lens[:bs].copy_(seq_lens)", "self.lens[:bs].copy_(seq_lens)", SUM),
        {"self.lens": P},
    ),
    "page-table-coupled-partly-written": Case(
        backend(
            PT, "self.pt[:bs, :2].copy_(seq_lens)", "self.pt[:bs, :2].copy_(seq_lens)", VARLEN_PT
        ),
        {"self.pt": P},
        attrs={"lens_arg": _lens_arg},
    ),
    "page-table-never-written": Case(
        backend(PT, "pass", "pass", VARLEN_PT),
        {"self.pt": U},
        observable=frozenset({"self.pt"}),
        attrs={"lens_arg": _lens_arg},
    ),
    "new-kv-lengths-unread-without-new-kv": Case(
        backend(
            KV,
            "",
            "",
            "return flash_attn_with_kvcache(q, k, v, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)",
        ),
        {"self.cu": S},
        attrs={"l": _lens_arg},
    ),
    "new-kv-lengths-read-with-new-kv": Case(
        backend(
            KV,
            "",
            "",
            "return flash_attn_with_kvcache(q, k, v, k=q, v=q, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)",
        ),
        {"self.cu": U},
        observable=frozenset({"self.cu"}),
        attrs={"l": _lens_arg},
    ),
    "unknown-kernel-after-full-write": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.fill_(1)", "my_kernel(self.lens)\nreturn q"),
        {"self.lens": S},
    ),
    "unknown-kernel-capture-unwritten": Case(
        backend(LENS, "", "self.lens.fill_(1)", "my_kernel(self.lens)\nreturn q"), {"self.lens": P}
    ),
    "helper-methods-inlined": Case(
        backend(LENS, "self._refresh(seq_lens)", "self._refresh(seq_lens)", SUM, REFRESH),
        {"self.lens": S},
    ),
    # Unsafe on the path where seq_lens is None, which SGLang's runner never takes.
    "helper-early-return": Case(
        backend(LENS, "self._refresh(seq_lens)", "self._refresh(seq_lens)", SUM, REFRESH_EARLY),
        {"self.lens": U},
    ),
    "locals-of-methods-do-not-alias": Case(
        backend(
            LENS,
            "view = self.lens",
            "view = self.lens",
            "view = q\nview.fill_(1)\nreturn self.lens.sum()",
        ),
        {"self.lens": U},
        observable=frozenset({"self.lens"}),
    ),
    "self-passed-to-unknown-code": Case(
        backend(LENS, "register(self)\nself.lens.fill_(1)", "self.lens.fill_(1)", SUM),
        {"self.lens": P},
    ),
    "subclass-overrides-replay": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM) + CHILD,
        {"self.lens": P},
    ),
    "dict-entry-constant-key": Case(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            'return q * self.meta["lens"].sum()',
        ),
        {'self.meta["lens"]': S},
    ),
    "dict-entry-read-by-get": Case(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.total = self.meta.get("lens").sum()\nself.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            "return q",
        ),
        {'self.meta["lens"]': P},
    ),
    "user-declared-lifecycle": Case(
        RUNNER,
        {"self.buf": S},
        model=RUNNER_MODEL[0],
        options=AnalysisOptions(lifecycles=RUNNER_MODEL),
        schedules={"runs": (Step("run", 2), Step("run", 1), Step("run", 2))},
    ),
    "stored-callable-not-handed-self": Case(
        backend(
            "self.lens = torch.zeros(max_bs)\nself.helper_fn = make_helper()",
            "self.helper_fn(bs)\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            SUM,
        ),
        {"self.lens": S},
    ),
    "inherited-hook-handed-self": Case(
        backend(
            LENS, "x = 1 + self.inherited_hook(bs)\nself.lens.fill_(1)", "self.lens.fill_(1)", SUM
        ),
        {"self.lens": P},
        attrs={"inherited_hook": lambda: lambda bs: 0},
    ),
    "self-calls-in-if-tests-inlined": Case(
        backend(
            LENS,
            "if self._enabled(bs):\n    pass\nif not self._refresh(seq_lens):\n    pass",
            "self.lens.fill_(1)",
            SUM,
            IF_CALLS,
        ),
        {"self.lens": S},
    ),
    # Unsafe, but the value read only decides an `if` whose branches both do nothing.
    "inlined-if-test-reads-first": Case(
        backend(
            LENS,
            "if self._peek():\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            PEEK,
        ),
        {"self.lens": U},
    ),
    "if-test-read-not-first": Case(
        backend(
            LENS,
            "if self._peek() > 0:\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            PEEK,
        ),
        {"self.lens": P},
    ),
    "method-outside-model-touches-buffer": Case(
        backend(LENS, "self.lens.fill_(1)", "self.lens.copy_(seq_lens)", SUM, IDLE),
        {"self.lens": P},
    ),
    # EAGER_FRESH's page table is the lengths themselves, one column: pages of 4 tokens keep the
    # kernel inside it for lengths 1..4.
    "record-view-written-by-every-setup": Case(
        with_record(backend(STATE, CAPTURE_VIEWS, REPLAY_VIEWS, FORWARD_FA, eager=EAGER_FRESH)),
        {'self.state["lens"]': S},
        page_size=4,
    ),
    "record-view-partly-written-by-replay": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS,
                REPLAY_VIEWS.replace("meta.lens.copy_(seq_lens)", "meta.lens[:2].copy_(seq_lens)"),
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        {'self.state["lens"]': P},
        page_size=4,
    ),
    "record-view-bound-unwritten-at-capture": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS.replace("lens.copy_(seq_lens)\n", ""),
                REPLAY_VIEWS,
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        # A replay may come before the first capture too: `unproven` is as right as `unsafe`.
        {'self.state["lens"]': (U, P)},
        observable=frozenset({'self.state["lens"]'}),
        page_size=4,
    ),
    "computed-key-store-may-replace-entry": Case(
        with_record(
            backend(
                STATE,
                CAPTURE_VIEWS.replace("self.graph_meta[bs] = meta", "self.state[bs] = meta"),
                'self.state["lens"].copy_(seq_lens)\n'
                'self.forward_metadata = Meta(lens=self.state["lens"], table=seq_lens[:, None])',
                FORWARD_FA,
                eager=EAGER_FRESH,
            )
        ),
        {'self.state["lens"]': (U, P)},  # the static test asserts only "not safe"
        page_size=4,
    ),
    "coupled-group-lengths-written-table-not": Case(
        backend(
            PAIR,
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt)",
        ),
        {"self.pt": U, "self.lens": S},
        observable=frozenset({"self.pt"}),
    ),
    "unrelated-calls-form-no-group": Case(
        backend(
            PAIR,
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "o = flash_attn_varlen_func(q, k, v, seqused_k=self.other, page_table=self.pt)\n"
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt2)",
        ),
        {"self.pt": U, "self.lens": S},
        observable=frozenset({"self.pt"}),  # the first call's output is dropped; its reads are not
        attrs={"other": _lens_arg, "pt2": _table},
    ),
    # ---- new: the mechanisms a `safe` most often rests on, executed ----
    # Both halves of a coupled pair live in a dict, written in full by every setup, read by the
    # kernel through the same constant keys.
    "new-dict-of-buffers-page-table": Case(
        backend(
            'self.meta = {"page_table": torch.zeros(max_bs, 4, dtype=torch.int32), '
            '"lens": torch.zeros(max_bs, dtype=torch.int32)}\n' + REQ_TO_TOKEN,
            'self.meta["lens"].fill_(1)\nself.meta["page_table"].copy_(self.req_to_token)',
            'self.meta["lens"].copy_(seq_lens)\nself.meta["page_table"].copy_(self.req_to_token)',
            'return flash_attn_varlen_func(q, k, v, seqused_k=self.meta["lens"], '
            'page_table=self.meta["page_table"])',
        ),
        {'self.meta["page_table"]': S, 'self.meta["lens"]': S},
    ),
    # A page table and the lengths that bound its reads, each written in full by every setup.
    "new-page-table-and-lengths-written-in-full": Case(
        backend(
            "self.pt = torch.zeros(max_bs, 4, dtype=torch.int32)\n"
            "self.lens = torch.zeros(max_bs, dtype=torch.int32)\n" + REQ_TO_TOKEN,
            "self.lens.fill_(1)\nself.pt.copy_(self.req_to_token)",
            "self.lens.copy_(seq_lens)\nself.pt.copy_(self.req_to_token)",
            "return flash_attn_with_kvcache(q, k, v, cache_seqlens=self.lens, page_table=self.pt)",
        ),
        {"self.pt": S, "self.lens": S},
    ),
    # Per-batch-size records of [:bs] views of zeros lengths *and* a zeros page table: each
    # setup writes both views in full, the forward reads them through the record.
    "new-record-views-of-lengths-and-table": Case(
        with_record(
            backend(
                STATE.replace("torch.ones(max_bs, 4)", "torch.zeros(max_bs, 4, dtype=torch.int32)"),
                CAPTURE_VIEWS,
                REPLAY_VIEWS,
                FORWARD_FA,
                eager=EAGER_FRESH.replace("seq_lens[:, None]", "seq_lens[:, None].repeat(1, 4)"),
            )
        ),
        {'self.state["lens"]': S, 'self.state["table"]': S},
    ),
}
# Not executed: the classes of tests/test_lifecycles.py that no lifecycle model applies to
# (`Plain`, `Plugin`: unproven, nothing to drive), and the phase-table test (same source as
# "warmup-read-before-replay-write").


def _findings(case: Case) -> dict[tuple[int, int], Finding]:
    result = analyse_source(case.source, "backend.py", case.options)
    assert not result.errors, result.errors
    return {(f.line, f.col): f for f in result.findings if f.rule == "ZO001"}


def _trials(case: Case, site: Site) -> Iterator[tuple[str, str, Run, list[Any]]]:
    for schedule_name, schedule in case.schedules.items():
        args = (case.source, case.model, schedule, case.attrs)
        base = run(*args, page_size=case.page_size)
        again = run(*args, page_size=case.page_size)
        assert base.outputs is not None and again.outputs is not None
        assert difference(base.outputs, again.outputs) is None, "zeros run is not deterministic"
        for pattern in PATTERNS:
            poisoned = run(*args, site, pattern, page_size=case.page_size)
            yield schedule_name, pattern, poisoned, base.outputs


@pytest.mark.usefixtures("fake_flash_attn")
@pytest.mark.parametrize("name", list(CASES))
def test_lifecycle_case_executed(name: str) -> None:
    case = CASES[name]
    findings = _findings(case)
    sites = {s.key: s for s in find_sites(case.source)}
    assert set(findings) <= set(sites), "a finding at no zeros call"
    by_target = {f.target: f for f in findings.values()}
    assert set(by_target) == set(case.expected), sorted(by_target)
    for target, finding in by_target.items():
        allowed = case.expected[target]
        allowed = allowed if isinstance(allowed, tuple) else (allowed,)
        assert finding.verdict in allowed, f"{target}: {finding.verdict}: {finding.message}"
        site = sites[(finding.line, finding.col)]
        diverged: list[str] = []
        ran = 0  # poisoned runs in which the allocation ran (not every schedule builds it)
        for schedule, pattern, poisoned, base in _trials(case, site):
            where = f"{target} poisoned {pattern!r}, schedule {schedule!r}"
            if poisoned.error:
                diverged.append(f"{where}: raised {poisoned.error}")
            else:
                ran += poisoned.poisoned > 0
                d = difference(base, poisoned.outputs)
                if d:
                    diverged.append(f"{where}: {d}")
        assert ran, f"{target}: the allocation never ran"
        if finding.verdict is Verdict.SAFE:
            assert not diverged, "UNSOUND: safe, yet poisoning changed the run:\n" + "\n".join(
                diverged
            )
        elif finding.verdict is Verdict.UNSAFE and target in case.observable:
            assert diverged, f"{target}: said unsafe, but every poisoned run was equivalent"


# ---- the stand-ins read what the contracts say, no more, no less --------------------------------


def test_stand_in_kernels_read_what_the_contracts_say() -> None:
    varlen = fake_kernel(kernel_contract("flash_attn_varlen_func"))
    kvcache = fake_kernel(kernel_contract("flash_attn_with_kvcache"))
    q = torch.ones(2, 4)
    lens = torch.tensor([2, 1], dtype=torch.int32)
    table = torch.tensor([[5, 6, 7], [8, 9, 10]], dtype=torch.int32)
    out = varlen(q, q, q, seqused_k=lens, page_table=table)
    beyond = table.clone()
    beyond[0, 2], beyond[1, 1:] = 2**30, -1  # past each row's length: never read
    assert torch.equal(varlen(q, q, q, seqused_k=lens, page_table=beyond), out)
    inside = table.clone()
    inside[0, 1] = -1  # within row 0's two pages
    assert not torch.equal(varlen(q, q, q, seqused_k=lens, page_table=inside), out)
    nan_q = q.clone()
    nan_q[1, 3] = math.nan
    assert torch.isnan(varlen(nan_q, q, q, seqused_k=lens, page_table=table)).all()
    with pytest.raises(IllegalAccess):  # a length past the whole table
        varlen(q, q, q, seqused_k=torch.tensor([2, 2**30], dtype=torch.int32), page_table=table)
    # A length past its row reads on into the next row, as the kernel's pointer arithmetic does.
    long = varlen(q, q, q, seqused_k=torch.tensor([4, 1], dtype=torch.int32), page_table=table)
    assert not torch.equal(long, varlen(q, q, q, seqused_k=lens, page_table=table))
    # cu_seqlens_k_new: unread unless new keys/values come with it.
    cu, garbage = torch.zeros(3, dtype=torch.int32), torch.full((3,), 2**30, dtype=torch.int32)
    assert torch.equal(
        kvcache(q, q, q, cache_seqlens=lens, cu_seqlens_k_new=cu),
        kvcache(q, q, q, cache_seqlens=lens, cu_seqlens_k_new=garbage),
    )
    assert not torch.equal(
        kvcache(q, q, q, k=q, v=q, cache_seqlens=lens, cu_seqlens_k_new=cu),
        kvcache(q, q, q, k=q, v=q, cache_seqlens=lens, cu_seqlens_k_new=garbage),
    )
    KERNEL_LOG.clear()
