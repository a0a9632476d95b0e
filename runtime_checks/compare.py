"""Compare scenario outputs with the all-zeros baseline: bitwise, NaN-aware, or within a spread.

Bitwise because a poisoned buffer that changes one bit of one token is a real divergence; NaN
aware because NaN != NaN would make a NaN-producing baseline differ from itself. When the
baseline itself is not deterministic, a trial passes if every element lies within the largest
difference the baseline runs showed among themselves (and NaN positions match).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

_SAME_SIZE_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def flatten_outputs(obj: Any, prefix: str = "out") -> dict[str, torch.Tensor]:
    """A tensor or nested tuple/list/dict of tensors (numbers allowed) as name -> CPU tensor."""
    flat: dict[str, torch.Tensor] = {}
    if isinstance(obj, torch.Tensor):
        flat[prefix] = obj.detach().to("cpu", copy=True)
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            flat.update(flatten_outputs(value, f"{prefix}[{key!r}]"))
    elif isinstance(obj, (tuple, list)):
        for i, value in enumerate(obj):
            flat.update(flatten_outputs(value, f"{prefix}[{i}]"))
    elif isinstance(obj, (bool, int, float)):
        flat[prefix] = torch.tensor(obj)
    elif obj is None:
        pass
    else:
        raise TypeError(f"{prefix}: scenario returned {type(obj).__name__}, not tensors")
    return flat


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype.is_floating_point:
        return t.view(_SAME_SIZE_INT[t.element_size()])
    return t


def _nan_mask(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return torch.view_as_real(t).isnan().any(-1)
    if t.dtype.is_floating_point:
        return t.isnan()
    return torch.zeros(t.shape, dtype=torch.bool)


def _as_float64(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return torch.view_as_real(t).to(torch.float64)
    return t.to(torch.float64)


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest |a - b| over elements that are not NaN in either (inf - inf counts as 0)."""
    if a.numel() == 0:
        return 0.0
    x, y = _as_float64(a), _as_float64(b)
    keep = ~(x.isnan() | y.isnan())
    same = x == y  # equal infinities would give nan below
    diff = torch.where(same, torch.zeros_like(x), (x - y).abs())
    diff = torch.where(keep, diff, torch.zeros_like(diff))
    return float(diff.max()) if diff.numel() else 0.0


def tensor_difference(a: torch.Tensor, b: torch.Tensor, tolerance: float = 0.0) -> str | None:
    """None when equal (bitwise, or within `tolerance` when it is > 0); else what differs."""
    if a.shape != b.shape:
        return f"shape {tuple(b.shape)} instead of {tuple(a.shape)}"
    if a.dtype != b.dtype:
        return f"dtype {b.dtype} instead of {a.dtype}"
    nan_a, nan_b = _nan_mask(a), _nan_mask(b)
    if not torch.equal(nan_a, nan_b):
        extra = int((nan_b & ~nan_a).sum())
        lost = int((nan_a & ~nan_b).sum())
        return f"NaN in {extra} element(s) the baseline has finite, {lost} the other way"
    keep = ~nan_a
    if tolerance <= 0.0:
        ba, bb = _bits(a), _bits(b)
        if ba.dim() > keep.dim():  # complex viewed as real pairs
            keep = keep.unsqueeze(-1).expand_as(ba)
        differ = (ba != bb) & keep
        count = int(differ.sum())
        if count == 0:
            return None
        return f"{count} of {a.numel()} element(s) differ, max |diff| {max_abs_diff(a, b):.4g}"
    worst = max_abs_diff(a, b)
    if worst <= tolerance:
        return None
    return f"max |diff| {worst:.4g} exceeds the baseline spread {tolerance:.4g}"


def outputs_difference(
    base: Mapping[str, torch.Tensor],
    other: Mapping[str, torch.Tensor],
    spread: Mapping[str, float] | None = None,
) -> str | None:
    """None when every output matches; else the first differences, named by output path."""
    if set(base) != set(other):
        missing = sorted(set(base) - set(other))
        extra = sorted(set(other) - set(base))
        return f"outputs differ in structure: missing {missing}, extra {extra}"
    problems = []
    for key in base:
        tolerance = (spread or {}).get(key, 0.0)
        diff = tensor_difference(base[key], other[key], tolerance)
        if diff is not None:
            problems.append(f"{key}: {diff}")
    if not problems:
        return None
    more = f" (+{len(problems) - 3} more outputs)" if len(problems) > 3 else ""
    return "; ".join(problems[:3]) + more


def baseline_spread(runs: list[Mapping[str, torch.Tensor]]) -> dict[str, float]:
    """Per output, the largest difference between the first baseline run and any other."""
    spread: dict[str, float] = {}
    first = runs[0]
    for key, tensor in first.items():
        spread[key] = max(
            (max_abs_diff(tensor, run[key]) for run in runs[1:] if key in run), default=0.0
        )
    return spread
