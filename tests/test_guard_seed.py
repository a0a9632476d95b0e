"""The guard on the change this project exists for, rebuilt at test time from the released wheel.

SGLang 0.4.6.post5 (pinned by name and sha256 below): the whole `sglang` package unpacked into a
git repository and committed, then the 23 `torch.zeros` of
`FlashAttentionBackend.init_cuda_graph_state` turned into `torch.empty` in the working tree
(bench/guard_seed.py). No SGLang file is committed here; without the wheel the test skips.
The pre-commit half (the hook refusing the commit) is in tests/test_precommit_hooks.py.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED_WHEEL = "sglang-0.4.6.post5-py3-none-any.whl"
SEED_SHA256 = "2a48053bd975e09ff10eabf1ef8bab4c913f3c3e16a3e45c13be1b4543cfeaed"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def _seed() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "zeroopt_bench_guard_seed", ROOT / "bench" / "guard_seed.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# What shows a reviewer why a site is not proven safe: a line where it is (or may be) read, or
# where it reaches code the analysis cannot see.
REASONS = {"read", "possible-read", "escape", "unknown-call", "partial-write"}


def test_scan_since_judges_and_flags_every_rewrite(tmp_path: Path) -> None:
    seed = _seed()
    assert (seed.WHEEL_NAME, seed.WHEEL_SHA256) == (SEED_WHEEL, SEED_SHA256)
    wheel = seed.find_wheel()
    if wheel is None:
        pytest.skip(f"{SEED_WHEEL} is not available locally")
    assert seed.sha256(wheel) == SEED_SHA256
    repo = tmp_path / "checkout"
    sites = seed.build_checkout(wheel, repo)
    assert len(sites) == 23
    code, rows, report = seed.table(repo)
    assert code == 1
    # Every changed empty is judged, and nothing else is reported: the change is those 23 lines.
    assert sorted((r["line"], r["col"] - 1) for r in rows) == sites
    assert {r["rule"] for r in rows} == {"ZO002"}
    for r in rows:
        f = r["finding"]
        assert f["path"] == seed.BACKEND and f["call"] == "torch.empty"
        # The same verdict ZO001 gives the original zeros.
        assert r["zeros"] == r["empty"], r
        if f["verdict"] == "safe":
            continue
        kinds = {e["kind"] for e in f["evidence"]}
        assert kinds & REASONS, f
        lines = {e["line"] for e in f["evidence"] if e["kind"] in REASONS}
        assert all(n > 0 for n in lines)
        if f["verdict"] == "unproven":
            (decide,) = [e for e in f["evidence"] if e["kind"] == "decide"]
            assert "--since HEAD --format json > zeroopt-since.json" in decide["text"]
            assert "zeroopt verify SCENARIO --sites zeroopt-since.json" in decide["text"]
        else:
            assert "read" in kinds
    # The read the incident was about: cumsum over cache_seqlens in the capture setup.
    unsafe = {r["target"]: r for r in rows if r["empty"] == "unsafe"}
    cache = unsafe['self.decode_cuda_graph_metadata["cache_seqlens"]']["finding"]
    assert any(
        e["kind"] == "read" and "capture" in e["text"] and "torch.cumsum" in e["text"]
        for e in cache["evidence"]
    )
    # Found on the witness schedule (graph init, then the first capture at once, as SGLang's
    # CUDA-graph runner does in its constructor): the full model, where eager steps that hand the
    # backend to unknown code may come first, only sees a possible read there.
    assert any(
        e["kind"] == "assumption"
        and "captures right after init_cuda_graph_state" in e["text"]
        and "cuda_graph_runner.py" in e["text"]
        for e in cache["evidence"]
    )
    assert (
        report["summary"]["safe"] + report["summary"]["unsafe"] + report["summary"]["unproven"]
        == 23
    )
    # Every decided verdict agrees with the H200 run of the same 23 rewrites, each alone
    # (docs/sglang046-cuda-graph.md): `unsafe` only where the rewrite crashed, `safe` only where
    # it was equivalent; and at least the 12 that crashed are decided (line 1234 is the coupled
    # read of `metadata_expand.page_table` bounded by `metadata_expand.cache_seqlens_int32`: the
    # zeros stored into `metadata.cache_seqlens_int32` are another object's slot, since both
    # records are made by their own constructor calls: docs/holders.md).
    h200 = json.loads((ROOT / "bench" / "results" / "verify_sglang046_cuda.json").read_text())
    ran = {(s["line"], s["col"]): s["verdict"] for s in h200["report"]["sites"]}
    assert len(ran) == 23
    for r in rows:
        run = ran[(r["line"], r["col"])]
        if r["empty"] == "unsafe":
            assert run == "crashed", r
            assert any(e["kind"] == "read" for e in r["finding"]["evidence"]), r
        if r["empty"] == "safe":
            assert run == "equivalent", r
    assert sum(r["empty"] != "unproven" for r in rows) >= 12
