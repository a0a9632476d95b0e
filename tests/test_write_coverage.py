"""Writes the analysis can prove cover a buffer, and writes that may or may not reach it.

Every case is executed by the differential oracle (tests/soundness/oracle.py): the allocation is
poisoned with several patterns on several inputs. VALID cases are `safe` and poison changes
nothing; INVALID ones are the near misses where the zeros matter: never `safe`, and poison shows
it. MAYBE cases are writes through something that may be the buffer itself: never a definite
`unsafe` (the read may be of written memory), and here it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.soundness` without conftest

from tests.soundness.oracle import first_site, function_program
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

VALID = {
    "chunk-pair": "x = torch.zeros(6)\na, b = x.chunk(2)\na.fill_(1)\nb.fill_(2)\nreturn x",
    "chunk-odd": "x = torch.zeros(5, 2)\na, b = x.chunk(2)\na.fill_(1)\nb.copy_(inp[:2, :2])\nreturn x",
    "unbind-rows": "x = torch.zeros(3, 4)\na, b, c = x.unbind()\na.fill_(1)\nb.fill_(2)\nc.copy_(inp[0, :4])\nreturn x",
    "unbind-dim1": "x = torch.zeros(4, 2)\na, b = x.unbind(1)\na.fill_(1)\nb.fill_(2)\nreturn x",
    "split-sizes": "x = torch.zeros(5)\na, b = x.split([2, 3])\na.fill_(1)\nb.fill_(2)\nreturn x",
    "torch-chunk": "x = torch.zeros(4)\na, b = torch.chunk(x, 2)\na.fill_(1)\nb.fill_(2)\nreturn x",
    "step-pair": "x = torch.zeros(7)\nx[::2] = 1\nx[1::2] = 2\nreturn x",
    "step-three": "x = torch.zeros(4, 7)\nx[:, 2::3] = 1\nx[:, ::3] = 2\nx[:, 1::3] = 3\nreturn x",
    "mask-pair": "x = torch.zeros(8)\nm = inp[0, :8] > 0.5\nx[m] = 1\nx[~m] = 2\nreturn x",
    "mask-rows": "x = torch.zeros(4, 3)\nm = inp[:4, 0] > 0.5\nx[m] = 1.0\nx[~m] = inp[0, :3]\nreturn x",
    "zero-start": "m = int(k)\nx = torch.zeros(m)\nx[0:m] = 1\nreturn x",
    "own-shape": "x = torch.zeros(k, 2)\nx[: x.shape[0]] = 1\nreturn x",
    "own-size": "x = torch.zeros(6)\nx[:3] = 1\nx[3 : x.size(0)] = 2\nreturn x",
    "own-len": "x = torch.zeros(5)\nx[: len(x)] = 2\nreturn x",
    "folded-constant": "x = torch.zeros(2 * 4)\nx[:4] = 1\nx[4:8] = 2\nreturn x",
    "detach_": "x = torch.zeros(4)\nx.detach_()\nx.fill_(1)\nreturn x",
    # an allocation inside a generator expression is analysed wherever the element runs
    "generator-element": "bufs = tuple(torch.zeros(3).fill_(k) for _ in range(2))\nreturn bufs[0]",
    "list-element": "bufs = [torch.zeros(3).copy_(inp[0, :3]) for _ in range(n)]\nreturn bufs",
}

INVALID = {
    "chunk-one-piece": "x = torch.zeros(6)\na, b = x.chunk(2)\na.fill_(1)\nreturn x",
    "chunk-piece-rebound": "x = torch.zeros(6)\na, b = x.chunk(2)\na.fill_(1)\nb = a\nb.fill_(2)\nreturn x",
    "chunk-written-in-part": "x = torch.zeros(6)\na, b = x.chunk(2)\na.fill_(1)\nb[:1] = 2\nreturn x",
    "unbind-one-row": "x = torch.zeros(2, 4)\na, b = x.unbind()\nb.fill_(1)\nreturn x",
    "step-one-residue": "x = torch.zeros(7)\nx[::2] = 1\nreturn x",
    "step-wrong-start": "x = torch.zeros(7)\nx[::2] = 1\nx[2::2] = 2\nreturn x",
    "step-stop": "x = torch.zeros(7)\nx[:4:2] = 1\nx[1::2] = 2\nreturn x",
    "mask-one-side": "x = torch.zeros(8)\nm = inp[0, :8] > 0.5\nx[m] = 1\nreturn x",
    "mask-changed": "x = torch.zeros(8)\nm = inp[0, :8] > 0.5\nx[m] = 1\nm = inp[1, :8] > 0.5\nx[~m] = 2\nreturn x",
    "mask-mutated": "x = torch.zeros(8)\nm = inp[0, :8] > 0.5\nx[m] = 1\nm.logical_not_()\nx[~m] = 2\nreturn x",
    "mask-int-index": "x = torch.zeros(8)\nm = torch.tensor([0, 1])\nx[m] = 1\nx[~m] = 2\nreturn x",
    "other-shape": "x = torch.zeros(k + 1)\ny = torch.ones(k)\nx[: y.shape[0]] = 1\nreturn x",
    "own-shape-dim1": "x = torch.zeros(4, 3)\nx[: x.shape[1]] = 1\nreturn x",
    "generator-read": "bufs = tuple(torch.zeros(3) for _ in range(2))\nreturn bufs[0] + 1",
    "generator-partial": "bufs = tuple(torch.zeros(3).index_fill_(0, torch.tensor([0]), 1) for _ in range(2))\nreturn bufs[0]",
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_is_safe_and_poison_changes_nothing(name: str) -> None:
    site = first_site(VALID[name])
    assert site.reached and site.equivalent, site.detail
    assert site.verdict is Verdict.SAFE, site.finding


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_is_never_safe_and_poison_shows_why(name: str) -> None:
    site = first_site(INVALID[name])
    assert site.reached and site.unsafe, "the zeros must matter in this case"
    assert site.verdict is not Verdict.SAFE, site.finding


# Writes through something that may be the buffer itself: here it is (same dtype, already
# contiguous, already on the cpu), so the later read is of written memory.
MAYBE = {
    "to-same-dtype": "x = torch.zeros(4)\ny = x.to(torch.float32)\ny.fill_(1)\nreturn x",
    "float-of-float": "x = torch.zeros(4)\nx.float().fill_(1)\nreturn x",
    "contiguous-view": "x = torch.zeros(4, 2)\nx[:2].contiguous().fill_(1)\nreturn x[:2]",
    "cpu-on-cpu": "x = torch.zeros(4)\ny = x.cpu()\ny[:] = 2\nreturn x",
    "reshape-of-view": "x = torch.zeros(4, 2)\ny = x[:2].reshape(4)\ny.fill_(1)\nreturn x[:2]",
}


@pytest.mark.parametrize("name", sorted(MAYBE))
def test_a_write_through_a_maybe_copy_is_no_proof_either_way(name: str) -> None:
    site = first_site(MAYBE[name])
    assert site.reached and site.equivalent  # it was the buffer: every element written
    assert site.verdict is Verdict.UNPROVEN, site.finding


def _empty_findings(body: str) -> list[str]:
    source = function_program(body)
    return [f.verdict.value for f in analyse_source(source, "g.py").findings if f.rule == "ZO002"]


@pytest.mark.parametrize(
    "body",
    [
        # the finally body runs once more on the exception path only, whose state must not
        # flow on to the statement after the try
        "x = torch.empty(4)\ntry:\n    x.fill_(1.0)\nfinally:\n    if flag:\n        return 0\nreturn x.sum()",
        # a write that raised may have run: the read in finally is possible, not proven
        "x = torch.empty(4)\ntry:\n    x.fill_(2.0)\n    return 1\nfinally:\n    return x.sum()",
        "x = torch.empty(4)\nwhile True:\n    try:\n        x.fill_(2.0)\n        continue\n    finally:\n        return x.sum()",
        # torch's own operators only write out=
        "idx = torch.empty(0, dtype=torch.long)\ntorch.nonzero(inp, out=idx)\nreturn idx.sum()",
        "x = torch.empty(4)\ny = x.to(torch.float32)\ny.fill_(1)\nreturn x.sum()",
    ],
)
def test_no_definite_unsafe(body: str) -> None:
    assert "unsafe" not in _empty_findings(body)
    namespace: dict[str, object] = {}
    exec(compile(function_program(body), "g.py", "exec"), namespace)  # and the code runs as written
    import torch

    namespace["f"](torch.ones(4, 8), 1, 2, False)  # type: ignore[operator]


def test_a_read_on_an_exception_path_from_another_call_stays_unsafe() -> None:
    body = "x = torch.empty(4)\ntry:\n    inp.reshape(k)\nexcept RuntimeError:\n    return x.sum()\nx.fill_(1)\nreturn x"
    assert _empty_findings(body) == ["unsafe"]
