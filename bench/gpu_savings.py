"""What rewriting the fixture's safe `torch.zeros` to `torch.empty` saves on a GPU.

    python bench/gpu_savings.py --out bench/results       # needs CUDA; flash-attn-4 if present

Measures, with CUDA events (median of many repetitions, after warm-up):
1. the fixture's buffer initialisation (`init_cuda_graph_state` + the runner's buffers), before
   and after the rewrite of the sites documented as safe (fixtures/README.md);
2. one replayed decode step (the captured graph for bs 4) before and after;
3. a synthetic hot path that allocates per step inside a captured graph, zeros vs empty;
and counts memset/fill kernels with torch.profiler. The "after" backend is made by an exact
(line, col) substitution `torch.zeros` -> `torch.empty` in a temporary copy of
fixtures/flash_backend.py (the same text `zeroopt apply` produces for these sites), and its
decode outputs are checked bit-identical to the original's first.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from zeroopt.fixtures.flash_scenario import (
    BACKEND_PATH,
    EXPECTED_SAFE,
    RECAPTURE_AT,
    STEPS,
    buffer_sites,
)


def load_backend(rewrite: tuple[str, ...], tmp: Path, name: str) -> ModuleType:
    """A copy of flash_backend.py with the named sites rewritten to torch.empty."""
    lines = BACKEND_PATH.read_text(encoding="utf-8").splitlines(keepends=True)
    sites = buffer_sites()
    for buffer in rewrite:
        line, col = sites[buffer]
        text = lines[line - 1]
        start = col - 1
        assert text[start : start + len("torch.zeros")] == "torch.zeros", (buffer, text)
        lines[line - 1] = text[:start] + "torch.empty" + text[start + len("torch.zeros") :]
    path = tmp / f"{name}.py"
    path.write_text("".join(lines), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cuda_time_us(fn: Callable[[], Any], reps: int, warmup: int = 10) -> dict[str, float]:
    """Median device time (events) and host time per call, in microseconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    dev, host = [], []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        end.synchronize()
        host.append((time.perf_counter() - t0) * 1e6)
        dev.append(start.elapsed_time(end) * 1e3)
    return {"events_us": statistics.median(dev), "host_us": statistics.median(host)}


def count_fill_kernels(fn: Callable[[], Any], reps: int = 5) -> dict[str, float]:
    """Memset and fill kernels per call, as torch.profiler sees them on the device."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    memset = fill = kernels = 0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = event.name.lower()
        kernels += 1
        if "memset" in name:
            memset += 1
        elif "fill" in name:
            fill += 1
    return {"memset": memset / reps, "fill": fill / reps, "device_ops": kernels / reps}


def run_steps(module: ModuleType) -> dict[str, torch.Tensor]:
    setup = module.build("cuda")
    out = {}
    for step, requests in enumerate(STEPS):
        if step == RECAPTURE_AT:
            setup.runner.recapture()
        out[f"step{step}"] = module.decode_step(setup, requests, step).cpu()
    return out


class FixtureBench:
    """Callables to time on one variant: buffer init, the bs-4 graph replay, a full decode step."""

    def __init__(self, module: ModuleType) -> None:
        setup = module.build("cuda")
        runner = setup.runner
        backend = runner.backend
        # A second runner without graphs, so re-allocating its buffers frees nothing a graph uses.
        spare_backend = module.FlashAttentionBackend(
            k_cache=backend.k_cache,
            v_cache=backend.v_cache,
            req_to_token=backend.req_to_token,
            num_heads=backend.num_heads,
            max_context_len=backend.max_context_len,
            num_draft_tokens=backend.num_draft_tokens,
            use_flash_attn=False,
        )
        spare = module.CudaGraphRunner(
            runner.model, spare_backend, runner.capture_bs, runner.hidden, use_graphs=False
        )
        self.flash_attn = backend.flash_attn is not None
        self.graphs = bool(runner.use_graphs)
        self.calls: dict[str, Callable[[], Any]] = {"init": spare.__post_init__}
        if runner.use_graphs:
            self.calls["replay_bs4"] = runner.graphs[4].replay

        def decode() -> None:  # bs 3 on the graph for 4: metadata prep + replay
            module.decode_step(setup, [1, 2, 3], 100)
            for r in (1, 2, 3):
                setup.requests[r] -= 1

        self.calls["decode_step_bs3"] = decode
        self.setup = setup


def interleaved(
    benches: dict[str, dict[str, Callable[[], Any]]], reps: int, rounds: int = 3
) -> dict[str, dict[str, Any]]:
    """Time every (variant, measurement) in alternating order, `rounds` times; report the
    median of the round medians and the spread between rounds (noise, to judge a saving)."""
    per: dict[str, dict[str, list[dict[str, float]]]] = {
        v: {m: [] for m in calls} for v, calls in benches.items()
    }
    for r in range(rounds):
        order = list(benches) if r % 2 == 0 else list(reversed(benches))
        for variant in order:
            for name, fn in benches[variant].items():
                per[variant][name].append(cuda_time_us(fn, reps))
    out: dict[str, dict[str, Any]] = {}
    for variant, measures in per.items():
        out[variant] = {}
        for name, runs in measures.items():
            out[variant][name] = {
                key: statistics.median(run[key] for run in runs) for key in runs[0]
            } | {
                "spread_events_us": max(run["events_us"] for run in runs)
                - min(run["events_us"] for run in runs)
            }
    return out


def synthetic_step(
    alloc: Callable[..., torch.Tensor], n_bufs: int, numel: int
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """(eager step, graph replay) of a hot path allocating per step; each buffer is fully
    overwritten, then used."""
    x = torch.randn(numel, device="cuda")

    def step() -> torch.Tensor:
        y = x
        for _ in range(n_bufs):
            buf = alloc(numel, device="cuda")
            buf.copy_(x)
            y = y + buf
        return y

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    torch.cuda.synchronize()
    return step, graph.replay


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("gpu_savings.py needs a CUDA GPU", file=sys.stderr)
        return 2
    env = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "rewritten_sites": list(EXPECTED_SAFE),
    }
    print(json.dumps(env), flush=True)
    results: dict[str, Any] = {"environment": env}
    with tempfile.TemporaryDirectory() as tmp:
        before = load_backend((), Path(tmp), "flash_backend_before")
        after = load_backend(EXPECTED_SAFE, Path(tmp), "flash_backend_after")
        out_before, out_after = run_steps(before), run_steps(after)
        same = all(
            torch.equal(
                out_before[k].view(torch.int16)
                if out_before[k].dtype == torch.bfloat16
                else out_before[k],
                out_after[k].view(torch.int16)
                if out_after[k].dtype == torch.bfloat16
                else out_after[k],
            )
            for k in out_before
        )
        results["outputs_bit_identical"] = same
        print(f"decode outputs before/after the rewrite bit-identical: {same}", flush=True)
        fb, fa = FixtureBench(before), FixtureBench(after)
        results["flash_attn"], results["graphs"] = fb.flash_attn, fb.graphs
        results.update(interleaved({"before": fb.calls, "after": fa.calls}, args.reps))
        configs = {"16 x 4 KiB": (16, 1024), "1 x 256 MiB": (1, 64 * 2**20)}
        synth: dict[str, dict[str, Callable[[], Any]]] = {"zeros": {}, "empty": {}}
        for label, (n_bufs, numel) in configs.items():
            for variant, alloc in (("zeros", torch.zeros), ("empty", torch.empty)):
                eager, replay = synthetic_step(alloc, n_bufs, numel)
                synth[variant][f"{label} eager"] = eager
                synth[variant][f"{label} graph replay"] = replay
        results["synthetic"] = interleaved(synth, max(20, args.reps // 4))
        # Profiling last: after a profiler session, launches can stay slower (CUPTI).
        for variant, bench in (("before", fb), ("after", fa)):
            for name, fn in bench.calls.items():
                results[variant][name] |= count_fill_kernels(fn)
        for variant, calls in synth.items():
            for name, fn in calls.items():
                results["synthetic"][variant][name] |= count_fill_kernels(fn)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_savings.json").write_text(json.dumps(results, indent=2) + "\n")

    b, a = results["before"], results["after"]
    print(
        f"\nGPU savings on {env['gpu']} ({env['date']}, torch {env['torch']}, CUDA {env['cuda']}),"
        f" flash-attn: {results['flash_attn']}, graphs: {results['graphs']};"
        f" medians of {args.reps} reps, median of 3 interleaved rounds (spread = max-min of rounds)"
    )
    print("| measurement | before (zeros) | after (empty) | saved | spread | memset+fill kernels |")
    print("|---|---|---|---|---|---|")

    def row(name: str, x: dict[str, Any], y: dict[str, Any], field: str = "events_us") -> None:
        kx, ky = x["memset"] + x["fill"], y["memset"] + y["fill"]
        spread = max(x["spread_events_us"], y["spread_events_us"])
        print(
            f"| {name} | {x[field]:.1f} us | {y[field]:.1f} us | {x[field] - y[field]:.1f} us "
            f"| {spread:.1f} us | {kx:g} -> {ky:g} |"
        )

    labels = {
        "init": "fixture buffer init",
        "replay_bs4": "fixture: replay of the bs-4 graph",
        "decode_step_bs3": "fixture: decode step, bs 3 on graph 4",
    }
    for key, label in labels.items():
        if key in b:
            row(label + " (events)", b[key], a[key])
            row(label + " (host)", b[key], a[key], "host_us")
    zs, es = results["synthetic"]["zeros"], results["synthetic"]["empty"]
    for key in zs:
        row(f"synthetic per-step alloc, {key}", zs[key], es[key])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
