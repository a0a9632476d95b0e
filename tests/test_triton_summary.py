"""Triton kernel summaries (analysis/triton_summary.py), checked two ways: what the summary says
of each kernel shape in tests/triton_shapes/kernels.py, and that the claims hold when the kernel
runs in Triton's interpreter (TRITON_INTERPRET=1, CPU tensors): a parameter claimed unread does
not influence any other buffer, one claimed not written keeps its contents, one claimed stored
is written, a definite load influences the output, an accumulator's result depends on its
initial contents. The execution tests skip only when triton is not installed."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from zeroopt.analysis.kernel_effects import _summaries
from zeroopt.analysis.resolve import Resolver
from zeroopt.analysis.triton_summary import TritonSummary
from zeroopt.scan.file_analysis import analyse_source

HERE = Path(__file__).parent / "triton_shapes"
SOURCE = (HERE / "kernels.py").read_text()


def summaries() -> dict[str, TritonSummary]:
    """Every kernel of the shapes file, summarised at once (the dataflow asks them one by one:
    the same answers, test_kernels_summarised_on_ask_equal_those_summarised_at_once)."""
    from zeroopt.analysis.triton_summary import module_kernels

    tree = ast.parse(SOURCE)
    resolver = Resolver.build(tree)
    return module_kernels(tree, lambda fn, e: resolver.qualified(resolver.scopes[fn], e))


def kinds(name: str) -> dict[str, str]:
    s = summaries()[name]
    return {
        p: e.kind + ("!" if e.definite_load else "")
        for p, e in s.effects.items()
        if p[0].islower() and p.endswith("_ptr")
    }


EXPECTED = {
    "block_1d": {"x_ptr": "loaded", "y_ptr": "stored", "unused_ptr": "unused"},
    "row_per_program": {"x_ptr": "loaded", "out_ptr": "stored"},
    "loop_over_k": {"a_ptr": "loaded", "b_ptr": "loaded", "c_ptr": "stored"},
    "accumulate": {"x_ptr": "loaded", "out_ptr": "accumulate"},
    "atomics": {"idx_ptr": "loaded", "counts_ptr": "atomic"},
    "indptr_segments": {"indptr_ptr": "loaded!", "src_ptr": "loaded", "dst_ptr": "stored"},
    "block_pointers": {"x_ptr": "loaded", "y_ptr": "stored"},
    "through_helper": {"x_ptr": "loaded!", "y_ptr": "unknown"},
    "early_exit": {"flag_ptr": "loaded", "x_ptr": "loaded", "y_ptr": "stored"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_summary_of_each_shape(name: str) -> None:
    assert kinds(name) == EXPECTED[name]


def test_helper_and_non_kernels_are_not_summarised() -> None:
    found = summaries()
    assert "_helper_store" in found  # itself a kernel
    assert set(EXPECTED) <= set(found)


# --- the dataflow uses the summaries ------------------------------------------------------------

LAUNCHES = (
    SOURCE
    + """

import torch


def unused_is_not_read(x, n):
    buf = torch.zeros(n)
    out = torch.empty(n)
    block_1d[(triton.cdiv(n, 4),)](x, out, buf, n, BLOCK=4)
    return out


def stored_is_a_partial_write(x, n):
    y = torch.zeros(n)
    block_1d[(triton.cdiv(n, 4),)](x, y, x, n, BLOCK=4)
    return y


def definite_load_of_zeros(src, dst, b):
    indptr = torch.zeros(b + 1, dtype=torch.int32)
    indptr_segments[(b,)](indptr, src, dst, BLOCK=8)


def accumulator(x, n):
    out = torch.zeros(n)
    accumulate[(triton.cdiv(n, 4),)](x, out, n, BLOCK=4)
    return out


def helper(x):
    y = torch.zeros(8)
    through_helper[(1,)](x, y, BLOCK=8)
    return y


def rebound(x, n):
    block_1d = object()
    y = torch.zeros(n)
    block_1d[(1,)](x, y, y, n, BLOCK=4)
    return y
"""
)


def verdicts() -> dict[str, tuple[str, str]]:
    result = analyse_source(LAUNCHES.encode(), "launches.py")
    tree = ast.parse(LAUNCHES)
    owner = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            for line in range(fn.lineno, (fn.end_lineno or fn.lineno) + 1):
                owner[line] = fn.name
    return {owner[f.line]: (f.verdict, f.message) for f in result.findings}


def test_launch_verdicts() -> None:
    v = verdicts()
    assert v["unused_is_not_read"][0] == "safe"
    assert v["stored_is_a_partial_write"][0] == "unproven"
    assert "y_ptr` of Triton kernel `block_1d`" not in v["stored_is_a_partial_write"][1]
    assert v["definite_load_of_zeros"][0] == "unsafe"
    assert "`indptr_ptr` of Triton kernel `indptr_segments`" in v["definite_load_of_zeros"][1]
    # Accumulating into a buffer nothing wrote reads it on any program whose mask holds.
    assert v["accumulator"][0] == "unsafe"
    assert "assuming the launch runs a program where its mask holds" in v["accumulator"][1]
    assert v["helper"][0] == "unproven" and "used at line" in v["helper"][1]
    # A local name shadowing the kernel: the launch is not the kernel's.
    assert v["rebound"][0] == "unproven" and "Triton kernel" not in v["rebound"][1]


# --- the claims hold when the kernels run --------------------------------------------------------


@pytest.fixture(scope="module")
def kernels() -> Any:
    os.environ["TRITON_INTERPRET"] = "1"
    pytest.importorskip("triton")
    spec = importlib.util.spec_from_file_location("zeroopt_triton_shapes", HERE / "kernels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def _rand(seed: int, *shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * 10 - 5


def _ints(seed: int, hi: int, *shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, hi, shape, generator=g, dtype=torch.int32)


Make = Callable[[dict[str, int]], tuple[tuple[int, ...], dict[str, Any]]]

CASES: dict[str, Make] = {
    "block_1d": lambda s: ((3,), dict(x_ptr=_rand(s.get("x_ptr", 1), 10),
                                      y_ptr=_rand(s.get("y_ptr", 2), 10),
                                      unused_ptr=_rand(s.get("unused_ptr", 3), 10),
                                      n=10, BLOCK=4)),
    "row_per_program": lambda s: ((3,), dict(x_ptr=_rand(s.get("x_ptr", 1), 3, 8),
                                             out_ptr=_rand(s.get("out_ptr", 2), 3),
                                             stride=8, n_cols=6, BLOCK=8)),
    "loop_over_k": lambda s: ((2,), dict(a_ptr=_rand(s.get("a_ptr", 1), 8, 12),
                                         b_ptr=_rand(s.get("b_ptr", 2), 12),
                                         c_ptr=_rand(s.get("c_ptr", 3), 8),
                                         K=12, stride_a=12, BLOCK_M=4, BLOCK_K=4)),
    "accumulate": lambda s: ((3,), dict(x_ptr=_rand(s.get("x_ptr", 1), 10),
                                        out_ptr=_rand(s.get("out_ptr", 2), 10),
                                        n=10, BLOCK=4)),
    "atomics": lambda s: ((2,), dict(idx_ptr=_ints(s.get("idx_ptr", 1), 5, 8),
                                     counts_ptr=_ints(s.get("counts_ptr", 2), 100, 5),
                                     n=8, BLOCK=4)),
    "indptr_segments": lambda s: ((3,), dict(
        indptr_ptr=torch.tensor([0, 2, 5, 9], dtype=torch.int32) + ("indptr_ptr" in s),
        src_ptr=_rand(s.get("src_ptr", 1), 12), dst_ptr=_rand(s.get("dst_ptr", 2), 12),
        BLOCK=8)),
    "through_helper": lambda s: ((1,), dict(x_ptr=_rand(s.get("x_ptr", 1), 8),
                                            y_ptr=_rand(s.get("y_ptr", 2), 8), BLOCK=8)),
    "early_exit": lambda s: ((4,), dict(flag_ptr=_rand(s.get("flag_ptr", 1), 1),
                                        x_ptr=_rand(s.get("x_ptr", 2), 8),
                                        y_ptr=_rand(s.get("y_ptr", 3), 16), n=8, BLOCK=4)),
}  # fmt: skip


def _run(kernels: Any, name: str, seeds: dict[str, int]) -> tuple[dict[str, Any], dict[str, Any]]:
    grid, args = CASES[name](seeds)
    initial = {k: v.clone() for k, v in args.items() if isinstance(v, torch.Tensor)}
    getattr(kernels, name)[grid](**args)
    return initial, {k: v for k, v in args.items() if isinstance(v, torch.Tensor)}


def test_every_shape_is_run_but_block_pointers() -> None:
    # Triton 3.9's interpreter no longer runs block pointers (tensor descriptors replace them).
    assert set(CASES) | {"block_pointers"} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_claims_hold_when_run(kernels: Any, name: str) -> None:
    summary = summaries()[name]
    initial, final = _run(kernels, name, {})
    for p, tensor in final.items():
        eff = summary.effects[p]
        kind = eff.kind
        # Vary this buffer's initial contents only.
        init2, final2 = _run(kernels, name, {p: 1000 + len(p)})
        assert not torch.equal(init2[p], initial[p]), "the variation must change the input"
        others_same = all(torch.equal(final[q], final2[q]) for q in final if q != p)
        if kind in ("unused", "stored"):
            assert others_same, f"{name}: `{p}` is claimed unread but influences the output"
        if kind in ("unused", "loaded"):
            assert torch.equal(tensor, initial[p]), f"{name}: `{p}` is claimed unwritten"
        if kind in ("stored", "accumulate", "atomic"):
            assert not torch.equal(tensor, initial[p]), f"{name}: `{p}` is claimed written"
        if eff.definite_load:
            assert not others_same, f"{name}: `{p}` is claimed definitely read"
        if kind in ("accumulate", "atomic"):
            written = final[p] != initial[p]
            assert not torch.equal(final[p][written], final2[p][written]), (
                f"{name}: `{p}` is claimed to accumulate"
            )


# --- the differential oracle runs generated programs with Triton kernels -------------------------


def test_generated_triton_programs_are_sound(kernels: Any) -> None:
    root = str(Path(__file__).resolve().parents[1])
    sys.path.insert(0, root)
    try:
        from tests.soundness.oracle import check_program, engine_findings
        from tests.soundness.triton_programs import random_triton_program, register_source
    finally:
        sys.path.remove(root)
    checked = decided = 0
    for seed in range(4):
        program = random_triton_program(seed)
        register_source(program.source)
        report = check_program(program.source, engine_findings)
        assert report.valid, report.reason
        for site in report.sites:
            checked += 1
            decided += site.finding is not None
            assert not site.unsound, (seed, site.site.line, site.detail, program.source)
    assert checked and decided == checked


CHOICES = """
import triton
import triton.language as tl


@triton.jit
def pick(a_ptr, b_ptr, c_ptr, out_ptr, USE_A: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    src = a_ptr if USE_A else b_ptr
    v = tl.load(src + offs) + tl.load(tl.where(USE_A, c_ptr, a_ptr))
    tl.store(out_ptr + offs, v)


@triton.heuristics({"S": lambda args: float(args["s_ptr"][0]), "E": lambda args: args["n"] % 4})
@triton.jit
def hooked(x_ptr, s_ptr, out_ptr, n, S: tl.constexpr, E: tl.constexpr):
    offs = tl.arange(0, 8)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * S)


@triton.heuristics({"E": lambda args: args["x_ptr"].shape[0] % 4 == 0, "F": lambda **kw: 1})
@triton.jit
def metadata_hook(x_ptr, out_ptr, E: tl.constexpr):
    tl.store(out_ptr, tl.load(x_ptr))


@triton.heuristics({"S": lambda **kw: float(kw["s_ptr"].sum())})
@triton.jit
def hooked_by_keywords(x_ptr, s_ptr, S: tl.constexpr):
    tl.store(x_ptr, tl.load(s_ptr) * S)


def prune(configs, nargs, **kw):
    return configs


@triton.autotune(configs=[], key=["n"], prune_configs_by={"early_config_prune": prune})
@triton.jit
def unseen_hook(x_ptr, out_ptr, n):
    tl.store(out_ptr, tl.load(x_ptr))
"""


def test_a_chosen_pointer_is_no_definite_load() -> None:
    """`a if c else b` and `tl.where(c, a, b)` load one of the two: neither definitely (a
    definite load of an `empty` placeholder never read would be a false ZO002)."""
    tree = ast.parse(CHOICES)
    eff = _summaries(Resolver.build(tree), tree)["pick"].effects
    assert [eff[p].kind for p in ("a_ptr", "b_ptr", "c_ptr")] == ["loaded"] * 3
    assert not any(eff[p].definite_load for p in ("a_ptr", "b_ptr", "c_ptr"))


def test_decorator_hooks_that_may_read_an_argument() -> None:
    tree = ast.parse(CHOICES)
    found = _summaries(Resolver.build(tree), tree)
    hooked = found["hooked"].effects
    assert hooked["s_ptr"].kind == "unknown" and hooked["x_ptr"].kind == "loaded"
    assert found["metadata_hook"].effects["x_ptr"].kind == "loaded"  # `.shape` reads nothing
    assert {e.kind for e in found["unseen_hook"].effects.values()} == {"unknown"}
    by_keywords = found["hooked_by_keywords"].effects
    assert by_keywords["s_ptr"].kind == "unknown" and by_keywords["x_ptr"].kind == "stored"


def test_kernels_summarised_on_ask_equal_those_summarised_at_once() -> None:
    """The dataflow asks a module's kernels one by one (each summarised on first ask): the
    answers, kernel or not, are those of summarising the whole module at once."""
    from zeroopt.analysis.triton_summary import module_kernels

    tree = ast.parse(SOURCE + "\n\ndef not_a_kernel(x_ptr):\n    return x_ptr\n")
    resolver = Resolver.build(tree)
    eager = module_kernels(tree, lambda fn, e: resolver.qualified(resolver.scopes[fn], e))
    lazy = _summaries(resolver, tree)
    names = [*lazy.candidates, "not_a_def"]
    assert [lazy.get(n) for n in reversed(names)][::-1] == [eager.get(n) for n in names]
    assert len(eager) >= 10 and set(lazy.candidates) - set(eager) == {"not_a_kernel"}


def test_store_covers_of_the_shapes() -> None:
    """The flat-block store of `block_1d` covers `[0, n)` with the grid (triton_cover.py); the
    others do not: a store after an early `return`, an unmasked store, a row's single element."""
    from zeroopt.analysis.triton_cover import StoreCover

    found = summaries()
    assert found["block_1d"].covers["y_ptr"] == StoreCover(15, "n", "BLOCK")
    assert "follows a `return`" in str(found["early_exit"].covers["y_ptr"])
    assert not isinstance(found["loop_over_k"].covers["c_ptr"], StoreCover)
    assert not isinstance(found["row_per_program"].covers["out_ptr"], StoreCover)
