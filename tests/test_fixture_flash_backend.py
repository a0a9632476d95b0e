"""The FlashAttention fixture on its CPU path: the reference reads what the kernel reads, the
scenario is deterministic, every documented buffer is found, and the checker gives the
documented verdicts for a representative subset (the full set runs on the GPU: bench/)."""

from __future__ import annotations

import pytest
import torch

from zeroopt.fixtures.flash_scenario import (
    BACKEND_PATH,
    EXPECTED,
    buffer_sites,
    scenario,
    site_args,
)
from zeroopt.fixtures.paged_reference import _int32_ceil_pages, paged_attention_reference
from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.targets import parse_site


def test_every_documented_buffer_is_a_zeros_site() -> None:
    sites = buffer_sites()
    assert set(sites) == set(EXPECTED)
    assert {verdict for verdict, _ in EXPECTED.values()} == {"equivalent", "diverged", "crashed"}


def test_int32_length_arithmetic_wraps_like_the_kernel() -> None:
    assert _int32_ceil_pages(17, 16) == 2
    assert _int32_ceil_pages(0, 16) == 0
    assert _int32_ceil_pages(-1, 16) == 0
    assert _int32_ceil_pages(2**31 - 1, 16) <= 0  # INT_MAX: zero iterations, reads nothing
    assert _int32_ceil_pages(2**30, 16) == 2**26  # 2**30: reads far past any row


def _cache(num_pages: int = 6) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    k = torch.randn(num_pages, 4, 2, 8, generator=gen)
    v = torch.randn(num_pages, 4, 2, 8, generator=gen)
    q = torch.randn(2, 4, 8, generator=gen)
    return q, k, v


def test_reference_reads_only_the_pages_the_lengths_cover() -> None:
    q, k, v = _cache()
    lens = torch.tensor([5, 3], dtype=torch.int32)  # 2 pages and 1 page of size 4
    table = torch.tensor([[1, 2, 3], [4, 5, 0]], dtype=torch.int32)
    out = paged_attention_reference(q, k, v, lens, table, 0.5)
    poisoned = table.clone()
    poisoned[0, 2] = 2**31 - 1  # beyond row 0's 2 pages: never read
    poisoned[1, 1:] = -1  # beyond row 1's page
    assert torch.equal(paged_attention_reference(q, k, v, lens, poisoned, 0.5), out)
    poisoned[0, 1] = 2**30  # inside the read extent: an illegal access on a GPU
    with pytest.raises(IndexError, match="illegal memory access"):
        paged_attention_reference(q, k, v, lens, poisoned, 0.5)
    # A length past the row reads on into the next row, as the kernel would.
    long = torch.tensor([4 * 4, 1], dtype=torch.int32)
    table2 = torch.tensor([[1, 2, 3], [4, 5, 1]], dtype=torch.int32)
    paged_attention_reference(q, k, v, long, table2, 0.5)
    with pytest.raises(IndexError):
        paged_attention_reference(q, k, v, torch.tensor([1, 16], dtype=torch.int32), table2, 0.5)


def test_reference_matches_dense_attention() -> None:
    q, k, v = _cache()
    lens = torch.tensor([6, 2], dtype=torch.int32)
    table = torch.tensor([[3, 1], [2, 0]], dtype=torch.int32)
    out = paged_attention_reference(q, k, v, lens, table, 0.25)
    for b in range(2):
        keys = k[table[b].long()].reshape(-1, 2, 8)[: lens[b]].repeat_interleave(2, dim=1)
        vals = v[table[b].long()].reshape(-1, 2, 8)[: lens[b]].repeat_interleave(2, dim=1)
        probs = (torch.einsum("hd,lhd->hl", q[b], keys) * 0.25).softmax(-1)
        torch.testing.assert_close(out[b], torch.einsum("hl,lhd->hd", probs, vals))


def test_scenario_covers_padded_batches() -> None:
    first = scenario("cpu")  # determinism: the checker's baseline below runs it twice
    sizes = [t.shape[0] for t in first.values()]
    assert {3, 5, 6} <= set(sizes)  # padded onto the graphs for 4 and 8
    assert all(bool(t.isfinite().all()) for t in first.values())


@pytest.mark.slow
def test_checker_on_the_fixture_cpu_path() -> None:
    names = ["cache_seqlens", "cu_seqlens_k", "page_table", "draft_cache_seqlens"]
    sites = [parse_site(s) for s in site_args(names)]
    checker = Checker("zeroopt.fixtures.flash_scenario:scenario", jobs=2, patterns=("large",))
    report = checker.verify(sites)
    got = {name: str(site.verdict) for name, site in zip(names, report.sites, strict=True)}
    assert got == {name: EXPECTED[name][0] for name in names}
    assert report.deterministic
    assert report.together is not None and str(report.together.verdict) == "crashed"


@pytest.mark.slow
def test_what_the_analysis_proves_safe_runs_equivalent_poisoned_on_cpu() -> None:
    """The fixture's static `safe` set (lifecycle pass and the repository's kernel contract
    included), poisoned together with every default pattern, must not change any output."""
    from zeroopt.scan.config import load_config
    from zeroopt.scan.file_analysis import analyse_file

    config = load_config([str(BACKEND_PATH)])
    result = analyse_file(BACKEND_PATH, str(BACKEND_PATH), config.analysis)
    by_line = {line: name for name, (line, _) in buffer_sites().items()}
    safe = [by_line[f.line] for f in result.findings if f.verdict.value == "safe"]
    assert "cu_seqlens_q" in safe
    # The fixture's CudaGraphRunner lives in the backend's module and calls its modelled methods
    # (init_cuda_graph_state, the capture and replay hooks): code of the module calling them is
    # not assumed to follow the model's order, so the cross-method buffers stay unjudged here.
    lifecycle = [f for f in result.findings if "cache_seqlens" in f.target]
    assert lifecycle and all(f.verdict.value != "safe" for f in lifecycle)
    # Unjudged as a whole, but the runner's constructor calls init_cuda_graph_state and captures
    # at once: on that witness schedule the warm-up forward reads the draft lengths that only a
    # replay fills (`unsafe`; on the H200 2**30 crashes it, docs/gpu-verify.md). Either way the
    # call from the runner is named, in the message or as the assumption that only adds paths.
    outside = "may call method `init_cuda_graph_state`"
    for f in lifecycle:
        texts = [f.message, *(e.text for e in f.evidence if e.kind == "assumption")]
        assert any(outside in t for t in texts), f
    draft = [f for f in lifecycle if "draft" in f.target]
    assert draft and all(f.verdict.value == "unsafe" for f in draft)
    assert all("witness schedule" in f.message for f in draft)
    checker = Checker("zeroopt.fixtures.flash_scenario:scenario", jobs=2)
    report = checker.verify([parse_site(s) for s in site_args(safe)], alone=len(safe) == 1)
    assert report.sites and report.trials_run > 0
    assert report.all_equivalent, report
