"""Poison patterns: the values that uninitialised memory could plausibly hold, chosen per dtype.

One pattern is not enough. NaN finds float reads; INT_MAX finds most garbage lengths, but a kernel
that computes `(len + tile - 1) / tile` in int32 turns INT_MAX into zero iterations and reads
nothing, so 2**30 (large, cannot overflow that arithmetic) is tried too; -1 is what padding slots
often mean ("skip"); a small valid value (1) catches code that only misbehaves on in-range garbage.
Patterns are named so that one `--patterns` list applies across dtypes; a name a dtype has no
value for (nan on an int buffer) is simply not tried on that buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# Every name, in the order trials are planned; `--patterns` picks a subset.
ALL_PATTERNS = ("nan", "max", "large", "inf", "neg1", "one", "true")
DEFAULT_PATTERNS = ("nan", "max", "large", "neg1", "one", "true")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def pattern_value(name: str, dtype: torch.dtype) -> float | int | bool | None:
    """The fill value of pattern `name` for `dtype`, or None when it has no meaning there."""
    import torch

    if dtype == torch.bool:
        return True if name == "true" else None
    if dtype.is_floating_point:
        is_fp8 = dtype.itemsize == 1
        if name == "nan":
            return float("nan")
        if is_fp8:
            # fp8 formats mostly lack inf, and nan is the value that exposes a read.
            return None
        if name == "inf":
            return float("inf")
        if name == "large":
            # Large but finite: survives arithmetic that would turn inf into nan or 0.
            return float(torch.finfo(dtype).max) / 4
        if name == "one":
            return 1.0
        return None
    if dtype.is_complex:
        return float("nan") if name == "nan" else None
    info = torch.iinfo(dtype)
    if name == "max":
        return int(info.max)
    if name == "large":
        # 2**30 cannot overflow `(len + tile - 1) / tile` in int32 (tile < 2**30); types too
        # narrow to hold 2 * 2**30 get half their range instead.
        return 2**30 if info.max >= 2 * 2**30 - 1 else (info.max + 1) // 2
    if name == "neg1":
        return -1 if info.min < 0 else None
    if name == "one":
        return 1
    return None


def patterns_for(dtype: torch.dtype, chosen: tuple[str, ...] = DEFAULT_PATTERNS) -> list[str]:
    """The chosen patterns that mean something for `dtype`, in ALL_PATTERNS order."""
    return [n for n in ALL_PATTERNS if n in chosen and pattern_value(n, dtype) is not None]


def poison_(tensor: torch.Tensor, name: str) -> torch.Tensor:
    """Fill `tensor` with pattern `name` in place (a no-op for a pattern its dtype lacks)."""
    import torch

    value = pattern_value(name, tensor.dtype)
    if value is None:
        return tensor
    with torch.no_grad():
        try:
            tensor.fill_(value)
        except (RuntimeError, NotImplementedError):
            # Some narrow dtypes (fp8) have no fill kernel on some devices: go through float32.
            full = torch.full(tensor.shape, float(value), dtype=torch.float32, device=tensor.device)
            tensor.copy_(full.to(tensor.dtype))
    return tensor


def zero_(tensor: torch.Tensor) -> torch.Tensor:
    """Fill `tensor` with zeros in place: the baseline of an empty site."""
    import torch

    with torch.no_grad():
        tensor.zero_()
    return tensor
