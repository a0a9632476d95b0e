"""Where a CUDA-graph capture may open or close, and which callees a kernel contract covers.

The programs that show each wrong `safe` by execution are in tests/regressions/test_capture.py
(they need CUDA) and test_kernel_contracts.py; these tests pin the mechanism on CPU, both ways:
every spelling of a capture makes the function unanalysed, and code without one keeps its verdict.
"""

from __future__ import annotations

import textwrap

import pytest

from zeroopt.analysis.kernel_contracts import kernel_contract_for
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

BODY = """
def f(n, g):
    buf = torch.zeros(n)
    {open}
    buf.fill_(1.0)
    {close}
    return buf.sum()
"""

CAPTURED = {
    "by-hand": ("", "g.capture_begin()", "g.capture_end()"),
    "helper": ("def begin(g):\n    g.capture_begin()\n", "begin(g)", "pass"),
    "helper-of-helper": (
        "def end(g):\n    g.capture_end()\ndef close(g):\n    end(g)\n",
        "pass",
        "close(g)",
    ),
    "method": (
        "class R:\n    def start(self):\n        self.g.capture_begin()\n",
        "R().start()",
        "",
    ),
    "enter-by-hand": (
        "",
        "cm = torch.cuda.graph(g)\n    cm.__enter__()",
        "cm.__exit__(None, None, None)",
    ),
    "graph-held": ("", "cm = torch.cuda.graph(g)", "pass"),
    "string-name": ("", 'getattr(g, "capture_begin")()', ""),
    "stored-callable": ("start = torch.cuda.CUDAGraph.capture_begin\n", "start(g)", ""),
    "setattr": (
        'class R:\n    def __init__(self, g):\n        setattr(self, "go", g.capture_begin)\n',
        "R(g).go()",
        "",
    ),
    "yielding-manager": (
        "import contextlib\n@contextlib.contextmanager\ndef rec(g):\n"
        "    with torch.cuda.graph(g):\n        yield\n",
        "st = contextlib.ExitStack()\n    st.enter_context(rec(g))",
        "st.close()",
    ),
    "capturing-dunder": (
        "class C:\n    def __enter__(self):\n        torch.cuda.graph(self.g).__enter__()\n",
        "len([])",
        "",
    ),
    "make_graphed_callables": ("", "torch.cuda.make_graphed_callables(lambda x: x, (buf,))", ""),
    "graph-pool": ("", "pool = torch.cuda.graph_pool_handle()", ""),
}


def _verdict(prelude: str, open_: str, close: str) -> tuple[Verdict, str]:
    source = "import torch\n" + prelude + BODY.format(open=open_, close=close or "pass")
    (finding,) = [f for f in analyse_source(source, "cap.py").findings if f.function == "f"]
    return finding.verdict, finding.message


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_a_function_that_may_open_or_close_a_capture_is_not_analysed(name: str) -> None:
    verdict, message = _verdict(*CAPTURED[name])
    assert verdict is Verdict.UNPROVEN, message
    assert "CUDA-graph capture" in message


@pytest.mark.parametrize(
    "prelude",
    [
        "",
        # capture code elsewhere in the file, self-contained: f does not reach it
        "def capture(g, x):\n    with torch.cuda.graph(g):\n        x.add_(1)\n",
        "def unrelated():\n    g = torch.cuda.CUDAGraph()\n    return g\n",
    ],
)
def test_code_that_cannot_capture_keeps_its_verdict(prelude: str) -> None:
    verdict, message = _verdict(prelude, "pass", "pass")
    assert verdict is Verdict.SAFE, message


def test_a_with_capture_is_still_modelled_in_place() -> None:
    source = textwrap.dedent(
        """
        import torch
        def f(n, g):
            buf = torch.zeros(n)
            with torch.cuda.graph(g):
                buf.fill_(1.0)
            return buf.sum()
        """
    )
    (finding,) = analyse_source(source, "w.py").findings
    # the fill_ is recorded, not run: the read after the block reads the zeros
    assert finding.verdict is Verdict.UNSAFE, finding.message
    assert "not analysed" not in finding.message


@pytest.mark.parametrize(
    ("qualified", "matches"),
    [
        ("flash_attn.flash_attn_with_kvcache", True),
        ("flash_attn_interface.flash_attn_varlen_func", True),
        ("flash_attn.cute.flash_attn_varlen_func", True),
        ("sgl_kernel.flash_attn.flash_attn_with_kvcache", True),
        ("vllm.vllm_flash_attn.flash_attn_varlen_func", True),
        ("flash_attn_ref.flash_attn_varlen_func", False),
        ("vllm_xpu_kernels.flash_attn_interface.flash_attn_varlen_func", False),
        ("mypkg.flash_attention.flash_attn_with_kvcache", False),
        ("flash_attn.cute.flash_attn_with_kvcache", False),  # FA4 has none
    ],
)
def test_kernel_contracts_match_exact_modules(qualified: str, matches: bool) -> None:
    assert (kernel_contract_for(qualified) is not None) is matches
