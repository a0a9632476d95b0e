"""The fixture on a real GPU: FlashAttention inside captured graphs agrees with the reference,
and the checker survives a device-side failure in a trial (the CUDA context is lost there)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from zeroopt.fixtures.flash_backend import _flash_attn_func, build
from zeroopt.fixtures.flash_scenario import RECAPTURE_AT, STEPS
from zeroopt.fixtures.paged_reference import paged_attention_reference

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_flash = pytest.mark.skipif(
    not torch.cuda.is_available() or _flash_attn_func() is None,
    reason="needs CUDA and flash-attn-4 (flash_attn.cute)",
)
EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _run(use_flash_attn: bool) -> dict[str, torch.Tensor]:
    setup = build("cuda", use_flash_attn=use_flash_attn)
    assert setup.runner.use_graphs == use_flash_attn
    out = {}
    from zeroopt.fixtures.flash_backend import decode_step

    for step, requests in enumerate(STEPS):
        if step == RECAPTURE_AT:
            setup.runner.recapture()
        out[f"step{step}"] = decode_step(setup, requests, step).float().cpu()
    return out


@needs_flash
def test_flash_attention_kernel_matches_reference_on_random_pages() -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    num_pages, page_size, kvh, d, heads, batch = 40, 16, 2, 128, 4, 5
    k = torch.randn(num_pages, page_size, kvh, d, device="cuda", generator=gen).bfloat16()
    v = torch.randn(num_pages, page_size, kvh, d, device="cuda", generator=gen).bfloat16()
    q = torch.randn(batch, heads, d, device="cuda", generator=gen).bfloat16()
    lens = torch.tensor([1, 17, 33, 64, 5], dtype=torch.int32, device="cuda")
    table = torch.randperm(num_pages - 1, device="cuda", generator=gen)[: batch * 4] + 1
    table = table.view(batch, 4).to(torch.int32).contiguous()
    scale = 1 / math.sqrt(d)
    out = _flash_attn_func()(  # type: ignore[misc]
        q.unsqueeze(1), k, v, seqused_k=lens, page_table=table, softmax_scale=scale, causal=True
    )
    out = (out[0] if isinstance(out, tuple) else out).squeeze(1).float()
    ref = paged_attention_reference(q.float(), k.float(), v.float(), lens, table, scale)
    rel = float((out - ref).norm() / ref.norm())
    assert rel < 2e-2, rel


@needs_flash
def test_fixture_graphs_with_flash_attention_match_the_eager_reference() -> None:
    graphs = _run(use_flash_attn=True)
    eager = _run(use_flash_attn=False)
    for key in eager:
        rel = float((graphs[key] - eager[key]).norm() / eager[key].norm())
        assert rel < 3e-2, (key, rel)


@needs_cuda
def test_checker_survives_a_device_side_assert() -> None:
    from zeroopt.runtime_checks.checker import Checker
    from zeroopt.runtime_checks.targets import PoisonSite

    path = EXAMPLES / "basic.py"
    lines = path.read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "# expect: crashed" in t)
    site = PoisonSite(str(path), line, lines[line - 1].index("torch.zeros") + 1)
    report = Checker(f"{path}:scenario", device="cuda", patterns=("max",)).verify([site])
    (result,) = report.sites
    assert str(result.verdict) == "crashed"
    assert result.trials[0].detail  # the CUDA error text is kept
