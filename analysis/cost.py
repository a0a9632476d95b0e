"""What a rewrite would save, roughly: per-step allocations first, then by size.

A memset in a function that runs every step (a forward, a decode, a replay) costs ~8 us eager or
~0.9 us per graph node each time; one in an init method costs it once. Sizes are known only when
the shape and dtype are constant expressions; unknown sizes rank after known ones.
"""

from __future__ import annotations

import ast
import re

from zeroopt.analysis.allocations import shape_args

_HOT = re.compile(r"forward|step|decode|extend|replay|prefill|sample|generate|__call__|^run|_run\b")
_DTYPE_BYTES = {
    "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "float64": 8, "double": 8,
    "int32": 4, "int": 4, "int64": 8, "long": 8, "int16": 2, "short": 2, "int8": 1, "uint8": 1,
    "bool": 1, "complex64": 8, "complex128": 16, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "uint16": 2, "uint32": 4, "uint64": 8,
}  # fmt: skip


def is_hot(function: str) -> bool:
    return bool(_HOT.search(function))


def constant_nbytes(call: ast.Call, name: str) -> int | None:
    """Bytes of `torch.zeros(2, 1024, dtype=torch.int32)` and the like; None when not constant."""
    if name.endswith("_like"):
        return None
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if dtype is None:
        if name.startswith("Tensor."):
            return None  # new_zeros takes the receiver's dtype
        size = 4  # torch's default float32 (unless the program changed the default)
    elif isinstance(dtype, ast.Attribute) and dtype.attr in _DTYPE_BYTES:
        size = _DTYPE_BYTES[dtype.attr]
    else:
        return None
    args = shape_args(call)
    count = 1
    for a in args:
        value = _const(a)
        if value is None or value < 0:
            return None
        count *= value
    return count * size


def _const(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.BinOp):
        a, b = _const(e.left), _const(e.right)
        if a is None or b is None:
            return None
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        if isinstance(e.op, ast.FloorDiv) and b:
            return a // b
        return ops.get(type(e.op))
    return None


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
