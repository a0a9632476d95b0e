"""Witness schedules: `unsafe` from one order the engine really runs (lifecycle_witness.py).

The full lifecycle program joins every order; where eager steps hand the object to unknown code
before the graph runner is built, a read in the first capture's warm-up is only a possible read
there. SGLang's CUDA-graph runner calls init_cuda_graph_state and captures in its constructor,
so `__init__ -> init_cuda_graph_state -> capture setup -> forward` is one real execution: a read
before any write on it is `unsafe`. It is never used for anything else.
"""

from __future__ import annotations

import math
import textwrap

import torch

from tests.test_lifecycles import backend
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Finding, Verdict

# After graph init, eager steps write the buffer and re-point the view the capture setup reads:
# the full model joins that path with "graph init, then capture at once", so the view may be the
# buffer or not there, and the read is only possible. The witness has the first path alone.
REPOINT_EAGER = "self.view = seq_lens\nself.lens.copy_(seq_lens)"
OPAQUE_EAGER = "register(self)"
UNKNOWN = "def register(obj):\n    obj.lens = getattr(obj, 'lens', None)\n"


def findings(source: str, rule: str = "ZO001") -> list[Finding]:
    result = analyse_source(source, "backend.py")
    assert not result.errors, result.errors
    return [f for f in result.findings if f.rule == rule]


def cumsum_backend(alloc: str = "torch.zeros", base: str = "", module: str = "") -> str:
    src = backend(
        f"self.lens = {alloc}(max_bs)\nself.view = self.lens[:2]",
        "self.cu = torch.cumsum(self.view, 0)\nself.lens.copy_(seq_lens)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
        eager=REPOINT_EAGER,
    )
    if base:
        src = src.replace("class Backend:", f"class Backend({base}):")
    return src + "\n\n" + module


def run_witness(source: str, poison: bool) -> torch.Tensor:
    """Run the witness schedule for real on CPU: graph init, capture setup, one forward."""
    if poison:
        source = source.replace("torch.zeros(max_bs)", "torch.full((max_bs,), math.nan)")
    source = source.replace("from flash_attn.cute import flash_attn_varlen_func\n", "")
    source = source.replace("from flash_attn import flash_attn_with_kvcache\n", "")
    ns: dict[str, object] = {"math": math}
    exec(compile(source, "backend.py", "exec"), ns)
    b = ns["Backend"]()  # type: ignore[operator]
    b.init_cuda_graph_state(4)
    b.init_forward_metadata_capture_cuda_graph(4, torch.ones(4))
    b.forward_decode(torch.ones(1), None, None)
    return b.cu


def test_read_in_first_capture_setup_is_unsafe_on_the_witness() -> None:
    src = cumsum_backend()
    (f,) = findings(src)
    assert f.verdict is Verdict.UNSAFE, f.message
    assert "witness schedule" in f.message
    read = [e for e in f.evidence if e.kind == "read"]
    assert read and "torch.cumsum" in read[0].text and "capture warm-up" in read[0].text
    (assumption,) = [e for e in f.evidence if e.kind == "assumption"]
    assert "init_cuda_graph_state" in assumption.text
    assert "cuda_graph_runner.py" in assumption.text  # the engine's call site is cited
    # Executed: the schedule is real, and the read sees the allocation's contents.
    zeros, poisoned = run_witness(src, False), run_witness(src, True)
    assert torch.equal(zeros, torch.zeros(2)) and poisoned.isnan().all()
    # The empty it would be rewritten to gets the same verdict from the guard.
    (g,) = findings(cumsum_backend("torch.empty"), "ZO002")
    assert g.verdict is Verdict.UNSAFE and "witness schedule" in g.message


def test_a_clean_witness_never_makes_safe() -> None:
    """Written before every read on the witness, but the eager path after graph init reads what
    unknown code may or may not have written: one path is not all, so `unproven` stands."""
    src = (
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "return q * self.lens.sum()",
            eager=OPAQUE_EAGER,
        )
        + "\n\n"
        + UNKNOWN
    )
    (f,) = findings(src)
    assert f.verdict is Verdict.UNPROVEN, f.message
    assert "witness" not in f.message
    assert not any(e.kind == "assumption" for e in f.evidence)


def test_a_class_with_an_unknown_base_gets_no_witness() -> None:
    """A base the model does not know may define what runs: the modelled code is in doubt, so
    not even one schedule of it is known to run."""
    src = "from somewhere import Base\n" + cumsum_backend(base="Base")
    (f,) = findings(src)
    assert f.verdict is Verdict.UNPROVEN, f.message
    assert "`Base`" in f.message
    assert "witness" not in f.message


def test_code_elsewhere_reaching_the_object_only_adds_paths() -> None:
    """A module function calling a method of an instance adds orders; the witness still runs,
    and both assumptions are named."""
    module = textwrap.dedent(
        """
        def drive(b, n):
            b.init_forward_metadata(n, n)
        """
    )
    (f,) = findings(cumsum_backend(module=module))
    assert f.verdict is Verdict.UNSAFE, f.message
    texts = [e.text for e in f.evidence if e.kind == "assumption"]
    assert len(texts) == 2 and any("only adds paths" in t for t in texts)
