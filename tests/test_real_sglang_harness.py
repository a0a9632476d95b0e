"""The one `safe` verdict on a released SGLang file, checked at run time on CPU.

SGLang 0.5.23's FlashAttention backend (sglang/srt/layers/attention/flashattention_backend.py),
taken at run time from the pinned release wheel by bench/pinned_source.py (wheel and file sha256
checked, cached under ~/.cache/zeroopt-bench; the tests skip, saying why, where neither the
cache nor `pip download` can provide it). The scan calls line 766 (`m.cache_seqlens_int32 = torch.zeros(...)` in
`_init_full_cg_prefill_metadata`) safe. bench/sglang_full_cg_prefill.py runs that released
method through SGLang's full-prefill-CUDA-graph lifecycle (eagerly here, with a torch reference
for FlashAttention). The test needs both halves: 766 equivalent under every default pattern, and
poisoning a buffer that is not fully written (cu_seqlens_q, element 0) changes the output, which
shows the harness can fail at all. The scan (~7 s) and the two checker runs (9 trial processes,
~1.7 s each, mostly importing torch) go concurrently.
"""

from __future__ import annotations

import importlib.util
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.patterns import DEFAULT_PATTERNS, patterns_for
from zeroopt.runtime_checks.results import VerifyReport
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.scan.config import load_config
from zeroopt.scan.file_analysis import analyse_file
from zeroopt.scan.findings import ZEROS_CALLS, FileResult

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_FILE = ROOT / "bench" / "sglang_full_cg_prefill.py"
HARNESS_NAME = "zeroopt_bench_sglang_full_cg_prefill"

pytestmark = pytest.mark.slow


def _harness() -> ModuleType:
    """The scenario module; skips the test when the released file cannot be had here."""
    module = _load_harness()
    reason = module.pinned_source.unavailable_reason(module.PIN)
    if reason is not None:
        pytest.skip(f"SGLang 0.5.23's released file is not available: {reason}")
    return module


def _load_harness() -> ModuleType:
    if HARNESS_NAME in sys.modules:
        return sys.modules[HARNESS_NAME]
    spec = importlib.util.spec_from_file_location(HARNESS_NAME, SCENARIO_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[HARNESS_NAME] = module  # its dataclasses look the module up
    spec.loader.exec_module(module)
    return module


def _scan(path: Path) -> FileResult:
    """As `zeroopt scan PATH` would, with the project's configuration."""
    config = load_config([str(path)])
    return analyse_file(path, str(path), config.analysis)


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    harness = _harness()
    released: Path = harness.released_file()
    targets: dict[str, tuple[int, int]] = harness.method_sites()
    sites = {
        target: PoisonSite(str(released), line, col) for target, (line, col) in targets.items()
    }
    safe_site = next(s for s in sites.values() if s.line == harness.SAFE_LINE)
    cu_seqlens_q = sites["m.cu_seqlens_q"]
    scenario = f"{SCENARIO_FILE}:scenario"
    with ThreadPoolExecutor(2) as pool:
        # Every default pattern on the `safe` site. For the failure side one site and one
        # pattern suffice ("one": request 0's queries start at row 1); each trial is a process
        # (~1.7 s, mostly importing torch), so the other sites are left to
        # bench/gpu_verify_real_sglang.py (--device cpu runs them all in ~25 s).
        safe_job = pool.submit(Checker(scenario, device="cpu", jobs=2).verify, [safe_site])
        failing_job = pool.submit(
            Checker(scenario, device="cpu", jobs=2, patterns=("one",)).verify, [cu_seqlens_q]
        )
        scan = _scan(released)
        safe_report, failing_report = safe_job.result(), failing_job.result()
    return {
        "harness": harness,
        "sites": sites,
        "scan": scan,
        "safe": safe_report,
        "failing": failing_report,
    }


def test_scan_calls_line_766_safe_and_names_every_allocation_of_the_method(
    run: dict[str, Any],
) -> None:
    harness, scan = run["harness"], run["scan"]
    assert not scan.errors
    first, last = harness.METHOD_LINES
    in_method = {
        (f.line, f.col): f
        for f in scan.findings
        if first <= f.line <= last and f.call in ZEROS_CALLS
    }
    safe = in_method[(766, 37)]
    assert safe.verdict.value == "safe" and safe.target == "m.cache_seqlens_int32"
    # The sites checked at run time are exactly the scan's candidates in the method.
    candidates = {pos for pos, f in in_method.items() if f.verdict.value in ("safe", "unproven")}
    assert candidates == {(s.line, s.col) for s in run["sites"].values()}
    assert {f.target for f in in_method.values()} == set(run["sites"])


def test_the_scenario_runs_the_released_method() -> None:
    harness = _harness()
    real = harness.load_real_code()
    code = real.init_full_cg_prefill_metadata.__code__
    assert code.co_filename == str(harness.released_file().resolve())
    assert code.co_firstlineno == harness.METHOD_LINES[0]
    assert real.metadata_cls.__name__ == "FlashAttentionMetadata"


def test_line_766_is_equivalent_under_every_default_pattern(run: dict[str, Any]) -> None:
    report: VerifyReport = run["safe"]
    assert report.deterministic
    (site,) = report.sites
    assert (site.line, site.col) == (766, 37)
    assert site.reached and site.hits >= 1, "the poisoned allocation never ran"
    assert site.dtype == "int32"
    patterns = patterns_for(torch.int32, DEFAULT_PATTERNS)
    assert [t.pattern for t in site.trials] == patterns  # max, large, neg1, one
    assert all(str(t.verdict) == "equivalent" for t in site.trials), [
        (t.pattern, str(t.verdict), t.detail) for t in site.trials
    ]
    assert str(site.verdict) == "equivalent"


def test_the_harness_can_fail(run: dict[str, Any]) -> None:
    """cu_seqlens_q[0] is never written: poisoned, request 0's queries start elsewhere."""
    report: VerifyReport = run["failing"]
    (site,) = report.sites
    assert (site.line, site.col) == (767, 30) and site.reached and site.hits >= 1
    assert str(site.verdict) in run["harness"].EXPECTED["m.cu_seqlens_q"][0]
    assert str(site.verdict) in ("diverged", "crashed"), site.trials


def test_cpu_reference_matches_dense_causal_attention() -> None:
    """The CPU stand-in for FlashAttention computes varlen causal prefill over paged K/V."""
    harness = _load_harness()  # needs no released file
    gen = torch.Generator().manual_seed(7)
    page_size, kv_heads, heads, dim = 4, 2, 4, 8
    k_cache = torch.randn(12, page_size, kv_heads, dim, generator=gen)
    v_cache = torch.randn(12, page_size, kv_heads, dim, generator=gen)
    page_table = torch.tensor([[3, 7, 1, 0], [5, 2, 9, 11], [0, 0, 0, 0]], dtype=torch.int32)
    seqused_k = torch.tensor([10, 13, 0], dtype=torch.int32)
    q_lens = [4, 13, 0]
    cu = torch.tensor([0, 4, 17, 17], dtype=torch.int32)
    q = torch.randn(20, heads, dim, generator=gen)  # 3 padded rows past cu[-1]
    out = harness.paged_prefill_reference(q, k_cache, v_cache, cu, seqused_k, page_table, 0.3)
    assert out[17:].isnan().all()  # rows no request covers stay unwritten
    for b, (start, n) in enumerate(zip(cu.tolist(), q_lens, strict=False)):
        length = int(seqused_k[b])
        if n == 0:
            continue
        slots = torch.cat([torch.arange(p * page_size, (p + 1) * page_size) for p in page_table[b]])
        keys = k_cache.reshape(-1, kv_heads, dim)[slots[:length]].repeat_interleave(2, dim=1)
        values = v_cache.reshape(-1, kv_heads, dim)[slots[:length]].repeat_interleave(2, dim=1)
        mask = torch.ones(n, length, dtype=torch.bool).tril(length - n)
        expected = torch.nn.functional.scaled_dot_product_attention(
            q[start : start + n].transpose(0, 1),
            keys.transpose(0, 1),
            values.transpose(0, 1),
            attn_mask=mask,
            scale=0.3,
        ).transpose(0, 1)
        # (not torch.testing.assert_close: its first call imports torch.distributed, ~1 s)
        assert torch.allclose(out[start : start + n], expected, rtol=1e-5, atol=1e-5), b
