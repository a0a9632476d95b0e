"""SGLang 0.4.6.post5's FlashAttention backend driven through its CUDA-graph life, on CPU.

bench/sglang046_cuda_graph.py compiles the released file (taken from the pinned wheel at run time;
these tests skip, saying why, where it cannot be had) with its own path and runs its own methods
through SGLang's graph runners with a torch reference for FlashAttention. Here: its 23
`init_cuda_graph_state` zeros are exactly the scan's, the reference computes attention, the
merge of two partial attentions is the attention over their union, and the runtime checker
separates a buffer the capture warm-ups read unwritten (the draft-decode page table, line 1150:
poisoned, a page index far outside the cache) from one written before every read (the
target-verify sequence lengths, line 1247). The GPU table: docs/sglang046-cuda-graph.md.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.scan.config import load_config
from zeroopt.scan.file_analysis import analyse_file
from zeroopt.scan.findings import ZEROS_CALLS

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_FILE = ROOT / "bench" / "sglang046_cuda_graph.py"
NAME = "zeroopt_bench_sglang046_cuda_graph"

pytestmark = pytest.mark.slow


def _load() -> ModuleType:
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, SCENARIO_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module  # its dataclasses look the module up
    spec.loader.exec_module(module)
    return module


def _harness() -> ModuleType:
    module = _load()
    reason = module.pinned_source.unavailable_reason(module.PIN)
    if reason is not None:
        pytest.skip(f"SGLang 0.4.6.post5's released file is not available: {reason}")
    return module


def test_the_23_zeros_of_init_cuda_graph_state_are_the_scans() -> None:
    harness = _harness()
    path = harness.released_file()
    result = analyse_file(path, str(path), load_config([str(path)]).analysis)
    first, last = harness.INIT_CUDA_GRAPH_STATE_LINES
    scanned = {
        (f.line, f.col)
        for f in result.findings
        if first <= f.line <= last and f.call in ZEROS_CALLS
    }
    sites = harness.zeros_sites()
    assert len(sites) == 23
    assert {(line, col) for line, col, _ in sites} == scanned
    real = harness.load_real_module()
    code = real.FlashAttentionBackend.init_cuda_graph_state.__code__
    assert code.co_filename == str(path.resolve()) and code.co_firstlineno == first


def test_reference_matches_dense_attention_and_merge_is_attention_over_the_union() -> None:
    harness = _load()  # needs no released file
    gen = torch.Generator().manual_seed(3)
    page, kvh, heads, dim = 2, 1, 2, 8
    k_cache = torch.randn(10, page, kvh, dim, generator=gen)
    v_cache = torch.randn(10, page, kvh, dim, generator=gen)
    q = torch.randn(3, heads, dim, generator=gen)  # one sequence, 3 queries over 7 keys
    table = torch.tensor([[4, 9, 1, 7]], dtype=torch.int32)
    cu = torch.tensor([0, 3], dtype=torch.int32)
    lens = torch.tensor([7], dtype=torch.int32)
    out, lse = harness.imports.paged_varlen_reference(
        q, k_cache, v_cache, lens, table, cu, 3, 0.5, True
    )
    slots = torch.cat([torch.arange(p * page, (p + 1) * page) for p in table[0].tolist()])[:7]
    keys = k_cache.reshape(-1, kvh, dim)[slots].expand(7, heads, dim)
    values = v_cache.reshape(-1, kvh, dim)[slots].expand(7, heads, dim)
    mask = torch.ones(3, 7, dtype=torch.bool).tril(4)
    scores = torch.einsum("qhd,khd->hqk", q, keys) * 0.5
    expected = torch.einsum(
        "hqk,khd->qhd", scores.masked_fill(~mask, -math.inf).softmax(-1), values
    )
    assert torch.allclose(out, expected, atol=1e-5)
    assert torch.allclose(lse, torch.logsumexp(scores.masked_fill(~mask, -math.inf), -1), atol=1e-5)
    # Cascade: keys 0-3 (pages 4, 9) and keys 4-6 (pages 1, 7) attended apart, then merged.
    first = harness.imports.paged_varlen_reference(
        q, k_cache, v_cache, torch.tensor([4], dtype=torch.int32), table, cu, 3, 0.5, False
    )
    second = harness.imports.paged_varlen_reference(
        q,
        k_cache,
        v_cache,
        torch.tensor([3], dtype=torch.int32),
        torch.tensor([[1, 7]], dtype=torch.int32),
        cu,
        3,
        0.5,
        False,
    )
    merged, _ = harness.imports.merge_state_v2(first[0], first[1].T, second[0], second[1].T)
    full = torch.einsum("qhd,khd->hqk", q, keys) * 0.5
    assert torch.allclose(merged, torch.einsum("hqk,khd->qhd", full.softmax(-1), values), atol=1e-5)
    with pytest.raises(IndexError, match="illegal memory access"):
        harness.imports.paged_varlen_reference(
            q,
            k_cache,
            v_cache,
            lens,
            torch.tensor([[4, 2**30, 1, 7]], dtype=torch.int32),
            cu,
            3,
            0.5,
            True,
        )


def test_verify_separates_a_buffer_read_unwritten_from_one_written_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    harness = _harness()
    monkeypatch.setenv(harness.CONFIGS_ENV, "eagle1")  # target verify + draft decode, topk 1
    path = str(harness.released_file())
    draft_table, verify_lens = PoisonSite(path, 1150, 40), PoisonSite(path, 1247, 34)
    report = Checker(f"{SCENARIO_FILE}:scenario", device="cpu", jobs=2, patterns=("large",)).verify(
        [draft_table, verify_lens]
    )
    assert report.deterministic
    by_line = {s.line: s for s in report.sites}
    assert by_line[1150].reached and str(by_line[1150].verdict) == "crashed"
    assert "illegal memory access" in by_line[1150].trials[0].detail
    assert by_line[1247].reached and by_line[1247].hits >= 1
    assert str(by_line[1247].verdict) == "equivalent"
