"""Ranking by estimated cost: per-step allocations first, sizes from constant shapes."""

from __future__ import annotations

import ast

from rich.console import Console

from zeroopt.analysis.cost import constant_nbytes, is_hot
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.runner import ScanReport


def nbytes(src: str, name: str = "torch.zeros") -> int | None:
    call = ast.parse(src).body[0].value  # type: ignore[attr-defined]
    return constant_nbytes(call, name)


def test_sizes_of_constant_shapes() -> None:
    assert nbytes("torch.zeros(16, 256, dtype=torch.bfloat16)") == 16 * 256 * 2
    assert nbytes("torch.zeros((2, 3))") == 24  # float32 by default
    assert nbytes("torch.zeros(size=[4], dtype=torch.int64)") == 32
    assert nbytes("torch.zeros(1024 * 4 + 1, dtype=torch.uint8)") == 4097
    assert nbytes("torch.zeros(n, 4)") is None
    assert nbytes("torch.zeros(4, dtype=dt)") is None
    assert nbytes("x.new_zeros(4)", "Tensor.new_zeros") is None  # the receiver's dtype


def test_hot_functions() -> None:
    assert is_hot("forward_decode") and is_hot("replay") and is_hot("step")
    assert not is_hot("__init__") and not is_hot("init_cuda_graph_state")


def test_table_ranks_per_step_and_bigger_first() -> None:
    src = (
        "import torch\n\nclass M:\n    def __init__(self):\n"
        "        self.big = torch.zeros(1 << 20)\n\n"
        "    def forward(self, x):\n        small = torch.zeros(4)\n        small.copy_(x)\n"
        "        large = torch.zeros(4096)\n        large.fill_(1)\n        return small, large\n"
    )
    result = analyse_source(src, "m.py")
    report = ScanReport(results=[result], findings=result.findings, files=1)
    console = Console(width=200, record=True)
    from zeroopt.report.table import render

    render(report, console)
    text = console.export_text()
    order = [text.index(t) for t in ("large", "small", "self.big")]
    assert order == sorted(order), text
    assert "per step, 16.0 KiB" in text and "once" in text
