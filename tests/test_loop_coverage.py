"""Loops that write a buffer index by index, and buffers parked where code may or may not reach.

Every case runs through the differential oracle (tests/soundness/oracle.py): the allocation is
poisoned with several patterns on inputs where `k` is 0, 2, 3, 5 and 8, so zero-size buffers and
loops that run zero times are executed too. COVERED cases are `safe` and poison changes nothing;
NOT_COVERED are the near misses (padding, a `continue`, a range one short, the wrong dimension,
one residue of a step): never `safe`, and poison shows the zeros matter.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.soundness` without conftest

from tests.soundness.oracle import first_site, function_program
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

COVERED = {
    "rows-by-size-name": "m = int(k)\nx = torch.zeros(m, 3)\nfor e in range(m):\n    x[e] = inp[0, :3]\nreturn x",
    "rows-by-own-shape": "x = torch.zeros_like(inp)\nfor e in range(x.shape[0]):\n    x[e] = e\nreturn x",
    "rows-by-own-size": "x = inp.new_zeros(k, 2)\nfor e in range(x.size(0)):\n    x[e, :] = 1.0\nreturn x",
    "rows-by-len": "x = torch.zeros(k)\nfor e in range(len(x)):\n    x[e] = e\nreturn x",
    "rows-literal": "x = torch.zeros(4, 8)\nfor e in range(4):\n    x[e] = inp[e]\nreturn x",
    "columns": "m = int(k)\nx = torch.zeros(2, m)\nfor e in range(m):\n    x[:, e] = 2.0\nreturn x",
    "nested-two-dims": "m = int(k)\nx = torch.zeros(m, 3)\nfor i in range(m):\n    for j in range(3):\n        x[i, j] = i + j\nreturn x",
    "nested-own-shape": "x = torch.zeros(3, k)\nfor i in range(x.shape[0]):\n    y = i * 2\n    for j in range(x.shape[1]):\n        x[i, j] = y\nreturn x",
    "stride-literal": "x = torch.zeros(3, k)\nfor r in range(2):\n    x[:, r::2] = r + 1\nreturn x",
    "stride-multiple": "p = int(k)\nx = torch.zeros(2, p * 3)\nfor r in range(p):\n    x[:, r::p] = r + 1\nreturn x",
    "stride-equal": "p = int(n)\nx = torch.zeros(p)\nfor r in range(p):\n    x[r::p] = r + 1\nreturn x",
    "read-after-loop-in-body-value": "m = int(k)\nx = torch.zeros(m)\nfor e in range(m):\n    x[e] = inp[0, e % 8] * 2\nreturn x.sum()",
}

NOT_COVERED = {
    "padding": "m = int(k)\nx = torch.zeros(m + 2)\nfor e in range(m):\n    x[e] = 1.0\nreturn x",
    "padding-read": "m = int(k)\nx = torch.zeros(m + 2)\nfor e in range(m):\n    x[e] = 1.0\nreturn x.sum()",
    "round-up": "m = int(k)\nx = torch.zeros((m + 3) // 4 * 4)\nfor e in range(m):\n    x[e] = 1.0\nreturn x",
    "one-short": "x = torch.zeros(4, 2)\nfor e in range(x.shape[0] - 1):\n    x[e] = 1.0\nreturn x",
    "continue": "x = torch.zeros(4)\nfor e in range(x.shape[0]):\n    if e == 2:\n        continue\n    x[e] = 1.0\nreturn x",
    "break": "x = torch.zeros(4)\nfor e in range(4):\n    x[e] = 1.0\n    if e == 1:\n        break\nreturn x",
    "conditional-write": "x = torch.zeros(4)\nfor e in range(4):\n    if e != 3:\n        x[e] = 1.0\nreturn x",
    "other-dimension": "x = torch.zeros(4, 8)\nfor e in range(x.shape[0]):\n    x[:, e] = 1.0\nreturn x",
    "other-size": "m = int(k)\nx = torch.zeros(m + 1)\nfor e in range(k):\n    x[e] = 1.0\nreturn x",
    "one-residue": "x = torch.zeros(7)\nfor r in range(1):\n    x[r::2] = 1.0\nreturn x",
    "stride-zero-times": "p = int(n)\nx = torch.zeros(2, 4)\nfor r in range(p):\n    x[:, r::p] = 1.0\nreturn x",
    "index-rebound": "x = torch.zeros(4)\nfor e in range(4):\n    e = 0\n    x[e] = 1.0\nreturn x",
    "size-rebound": "m = int(k)\nx = torch.zeros(m)\nm = m - 1\nfor e in range(m):\n    x[e] = 1.0\nreturn x",
    "buffer-rebound": "x = torch.zeros(4)\ny = x\nfor e in range(4):\n    x = torch.ones(4)\n    x[e] = 1.0\nreturn y",
    "reshaped-in-loop": "x = torch.zeros(2, 4)\nfor e in range(2):\n    x.t_()\n    x[e] = 1.0\nreturn x",
    "zero-times-outer": "x = torch.zeros(4, 2)\nfor e in range(n):\n    x[e] = 1.0\nreturn x",
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_a_loop_over_the_whole_dimension_covers_it(name: str) -> None:
    site = first_site(COVERED[name])
    assert site.reached and site.equivalent, site.detail
    assert site.verdict is Verdict.SAFE, site.finding


@pytest.mark.parametrize("name", sorted(NOT_COVERED))
def test_a_near_miss_is_never_safe_and_poison_shows_why(name: str) -> None:
    site = first_site(NOT_COVERED[name])
    assert site.reached and site.unsafe, "the zeros must matter in this case"
    assert site.verdict is not Verdict.SAFE, site.finding


# A buffer parked in a container or a lambda, then code that is not handed any holder: the read
# after it is `unsafe`, and the evidence names the call assumed not to write it.
ASSUMED_UNSAFE = {
    "list-then-other-call": (
        "import os\nx = torch.zeros(4)\nheld = [x] + []\nos.getpid()\nreturn x.sum()",
        "`os.getpid`",
    ),
    "set-then-call": (
        "import os\nx = torch.zeros(4)\nheld = (1, x) + ()\ny = inp.abs()\nz = os.cpu_count()\nreturn x + 1",
        "`os.cpu_count`",
    ),
    # `held` is returned too: a container that leaves the function (a private one, below, needs
    # no assumption at all).
    "computed-key": (
        "import os\nx = torch.zeros(4)\nheld = {}\nheld[k] = x\nos.getpid()\nreturn x * 2, held",
        "`os.getpid`",
    ),
}


def test_a_private_container_needs_no_assumption_about_other_calls() -> None:
    """A dict display only subscripted in its function (dataflow/containers.py) hands the buffer
    to no one: the read after an unrelated call is `unsafe` without assuming anything of it."""
    site = first_site(
        "import os\nx = torch.zeros(4)\nheld = {}\nheld[k] = x\nos.getpid()\nreturn x * 2"
    )
    assert site.reached and site.unsafe
    assert site.verdict is Verdict.UNSAFE, site.finding
    assert site.finding is not None and "assuming" not in site.finding.message


@pytest.mark.parametrize("name", sorted(ASSUMED_UNSAFE))
def test_a_call_not_handed_the_buffer_is_assumed_not_to_write_it(name: str) -> None:
    body, callee = ASSUMED_UNSAFE[name]
    site = first_site(body)
    assert site.reached and site.unsafe
    assert site.verdict is Verdict.UNSAFE, site.finding
    assert site.finding is not None
    assert f"assuming {callee} does not write it" in site.finding.message


# Code handed a holder (the container, an element of it, the lambda) may write the buffer: no
# definite `unsafe` (a tracked dict entry may even prove it `safe`), and here it does write it,
# so poison changes nothing.
HANDED = {
    "loop-over-the-list": "x = torch.zeros(4)\nheld = [x]\nfor t in held:\n    t.fill_(1.0)\nreturn x.sum()",
    "element-to-a-function": "x = torch.zeros(4)\nheld = (x, 1)\ntorch.nn.init.ones_(held[0])\nreturn x.sum()",
    "lambda-called": "x = torch.zeros(4)\nw = lambda: x.fill_(1.0)\nw()\nreturn x.sum()",
    "closure-called": "x = torch.zeros(4)\ndef w():\n    x.fill_(2.0)\nw()\nreturn x.sum()",
    "holder-to-a-function": "x = torch.zeros(4)\nheld = {'t': x}\ntorch.nn.init.ones_(held['t'])\nreturn x.sum()",
}


@pytest.mark.parametrize("name", sorted(HANDED))
def test_code_handed_a_holder_may_write_it(name: str) -> None:
    site = first_site(HANDED[name])
    assert site.reached and site.equivalent, site.detail
    assert site.verdict is not Verdict.UNSAFE, site.finding
    empties = [
        f.verdict
        for f in analyse_source(
            function_program(HANDED[name].replace("zeros", "empty")), "g.py"
        ).findings
        if f.rule == "ZO002"
    ]
    assert Verdict.UNSAFE not in empties, empties
