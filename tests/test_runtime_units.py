"""Unit tests of the runtime checker's parts, in-process: patterns, sites, interception, compare."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from zeroopt.runtime_checks.compare import (
    baseline_spread,
    flatten_outputs,
    outputs_difference,
    tensor_difference,
)
from zeroopt.runtime_checks.intercept import Interceptor, Target, char_col
from zeroopt.runtime_checks.patterns import pattern_value, patterns_for, poison_
from zeroopt.runtime_checks.results import RuntimeVerdict, worst
from zeroopt.runtime_checks.targets import PoisonSite, parse_site, sites_from_report

# -- patterns ------------------------------------------------------------------------------


def test_int_patterns_include_a_large_value_that_survives_int32_ceil_division() -> None:
    assert patterns_for(torch.int32) == ["max", "large", "neg1", "one"]
    assert pattern_value("max", torch.int32) == 2**31 - 1
    large = pattern_value("large", torch.int32)
    assert large == 2**30
    assert isinstance(large, int) and large + 128 - 1 < 2**31  # (len + tile - 1) fits in int32
    assert pattern_value("large", torch.int8) == 64  # 2**30 does not fit: half the range
    assert pattern_value("max", torch.int64) == 2**63 - 1


def test_dtype_specific_patterns() -> None:
    assert patterns_for(torch.bool) == ["true"]
    assert patterns_for(torch.uint8) == ["max", "large", "one"]  # no -1 for unsigned
    assert pattern_value("max", torch.uint8) == 255
    assert patterns_for(torch.float16) == ["nan", "large", "one"]
    assert patterns_for(torch.float8_e4m3fn) == ["nan"]
    assert patterns_for(torch.float32, ("inf",)) == ["inf"]
    large = pattern_value("large", torch.bfloat16)
    assert isinstance(large, float) and large < float(torch.finfo(torch.bfloat16).max)


def test_poison_fills_every_element() -> None:
    t = poison_(torch.zeros(3, 4, dtype=torch.int32), "neg1")
    assert bool((t == -1).all())
    f = poison_(torch.zeros(5, dtype=torch.float8_e4m3fn), "nan")
    assert bool(f.float().isnan().all())
    b = poison_(torch.zeros(2, dtype=torch.bool), "true")
    assert bool(b.all())
    unchanged = poison_(torch.zeros(2, dtype=torch.int32), "nan")  # not a pattern for ints
    assert bool((unchanged == 0).all())


# -- sites -----------------------------------------------------------------------------------


def test_parse_site_forms() -> None:
    assert parse_site("a/b.py:12") == PoisonSite("a/b.py", 12, None)
    assert parse_site("a/b.py:12:7") == PoisonSite("a/b.py", 12, 7)
    assert parse_site("C:/x/b.py:3:1") == PoisonSite("C:/x/b.py", 3, 1)
    for bad in ("a.py", "a.py:x", "a.py:0", "a.py:3:0", ":3"):
        with pytest.raises(ValueError):
            parse_site(bad)


def test_sites_from_scan_report_take_safe_and_unproven_zeros_and_every_empty(
    tmp_path: Path,
) -> None:
    def finding(line: int, verdict: str, call: str = "torch.zeros") -> dict[str, object]:
        return {
            "path": "m.py",
            "line": line,
            "col": 5,
            "end_line": line,
            "end_col": 20,
            "call": call,
            "target": "x",
            "verdict": verdict,
            "rule": "ZO001",
            "message": "",
            "evidence": [],
            "fix": None,
        }

    report = {
        "version": 1,
        "errors": [],
        "summary": {},
        "findings": [
            finding(1, "safe"),
            finding(2, "unproven"),
            finding(3, "unsafe"),
            finding(4, "unsafe", "torch.empty"),
            finding(5, "safe", "Tensor.new_zeros"),
            finding(6, "unproven", "torch.empty_strided"),
            finding(7, "unsafe", "torch.ones"),
        ],
    }
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(report))
    sites = sites_from_report(path, base=tmp_path)
    # The unsafe zeros (line 3) already has its read shown; an unsafe empty (ZO002, line 4) is
    # what the runtime check of the guard decides.
    assert [(s.line, s.col) for s in sites] == [(1, 5), (2, 5), (4, 5), (5, 5), (6, 5)]
    assert sites[0].path == str(tmp_path / "m.py")
    path.write_text("[]")
    with pytest.raises(ValueError):
        sites_from_report(path)


# -- interception ------------------------------------------------------------------------------

MODULE = """\
import torch
def run():
    a, b = torch.zeros(2), torch.zeros(2)
    s = {"é": torch.zeros(3, dtype=torch.int32)}
    c = torch.zeros_like(a)
    d = a.new_zeros(
        4)
    return a, b, s["é"], c, d
"""


def _load(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "mod_under_test.py"
    path.write_text(MODULE, encoding="utf-8")
    import importlib.util

    spec = importlib.util.spec_from_file_location("mod_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_char_col_converts_utf8_byte_offsets(tmp_path: Path) -> None:
    path = tmp_path / "u.py"
    path.write_text('x = {"é": 1}\n', encoding="utf-8")
    byte_col = 'x = {"é": '.encode().__len__()
    assert char_col(str(path), 1, byte_col) == len('x = {"é": ') + 1


def test_interceptor_poisons_exactly_the_site_and_counts_hits(tmp_path: Path) -> None:
    path, module = _load(tmp_path)
    line3 = MODULE.splitlines()[2]
    second = PoisonSite(str(path), 3, line3.rindex("torch.zeros") + 1)
    unicode_site = PoisonSite(str(path), 4, MODULE.splitlines()[3].index("torch.zeros") + 1)
    like = PoisonSite(str(path), 5, 9)
    new = PoisonSite(str(path), 6, 9)  # the receiver `a` starts the call expression
    never = PoisonSite(str(path), 2, 1)
    interceptor = Interceptor(
        [
            Target(second, "nan"),
            Target(unicode_site, "max"),
            Target(like, "one"),
            Target(new, "large"),
            Target(never, "nan"),
        ]
    )
    interceptor.install()
    try:
        a, b, s, c, d = module.run()
        module.run()
    finally:
        interceptor.uninstall()
    assert bool((a == 0).all())  # same line, other column: untouched
    assert bool(b.isnan().all())
    assert bool((s == 2**31 - 1).all())
    assert bool((c == 1).all())
    assert bool((d == pattern_value("large", torch.float32)).all())
    stats = interceptor.stats
    assert stats[second.key].hits == 2 and stats[second.key].dtype == "float32"
    assert stats[new.key].calls == {"Tensor.new_zeros"}
    assert stats[like.key].calls == {"torch.zeros_like"}
    assert stats[never.key].hits == 0
    assert torch.zeros(1).item() == 0  # uninstalled: plain zeros again
    assert "wrapper" not in getattr(torch.zeros, "__qualname__", "")


def test_line_only_site_matches_every_call_on_the_line(tmp_path: Path) -> None:
    path, module = _load(tmp_path)
    interceptor = Interceptor([Target(PoisonSite(str(path), 3), "one")])
    interceptor.install()
    try:
        a, b, *_ = module.run()
    finally:
        interceptor.uninstall()
    assert bool((a == 1).all()) and bool((b == 1).all())
    assert interceptor.stats[PoisonSite(str(path), 3).key].hits == 2


# -- comparison --------------------------------------------------------------------------------


def test_comparison_is_bitwise_and_nan_aware() -> None:
    nan = float("nan")
    assert tensor_difference(torch.tensor([1.0, nan]), torch.tensor([1.0, nan])) is None
    assert tensor_difference(torch.tensor([0.0]), torch.tensor([-0.0])) is not None  # bits
    assert "NaN" in (tensor_difference(torch.tensor([1.0]), torch.tensor([nan])) or "")
    assert tensor_difference(torch.tensor([1, 2]), torch.tensor([1, 3])) is not None
    assert tensor_difference(torch.ones(2), torch.ones(3)) is not None
    assert tensor_difference(torch.ones(2), torch.ones(2, dtype=torch.float64)) is not None
    bf = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    assert tensor_difference(bf, bf.clone()) is None


def test_nondeterministic_baseline_compares_within_spread() -> None:
    runs = [{"o": torch.tensor([1.0, 2.0])}, {"o": torch.tensor([1.0, 2.01])}]
    spread = baseline_spread(runs)
    assert spread["o"] == pytest.approx(0.01, abs=1e-6)
    assert outputs_difference(runs[0], {"o": torch.tensor([1.005, 2.0])}, spread) is None
    assert outputs_difference(runs[0], {"o": torch.tensor([1.5, 2.0])}, spread) is not None


def test_flatten_outputs_names_nested_results() -> None:
    flat = flatten_outputs({"a": (torch.ones(1), [torch.zeros(2)]), "n": 3, "skip": None})
    assert set(flat) == {"out['a'][0]", "out['a'][1][0]", "out['n']"}
    assert outputs_difference(flat, {k: v for k, v in flat.items() if k != "out['n']"})
    with pytest.raises(TypeError):
        flatten_outputs({"bad": object()})


def test_worst_verdict_order() -> None:
    v = RuntimeVerdict
    assert worst([v.EQUIVALENT, v.DIVERGED, v.CRASHED]) is v.CRASHED
    assert worst([v.EQUIVALENT, v.DIVERGED]) is v.DIVERGED
    assert worst([v.EQUIVALENT, v.NOT_REACHED]) is v.NOT_REACHED
    assert worst([]) is v.NOT_REACHED
    assert worst([v.EQUIVALENT]) is v.EQUIVALENT


def test_package_import_does_not_need_torch_at_import_time() -> None:
    import subprocess

    code = "import sys, zeroopt.runtime_checks; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
