"""`vars(obj)` beside a lifecycle class: a fresh instance of a plain unrelated class is no
instance of the modelled class (analysis/lifecycle_instances.py); anything less certain is."""

from __future__ import annotations

import pytest

from tests.test_lifecycles import backend, only
from zeroopt.scan.findings import Verdict

BOX = "\n\nclass Box:\n    pass\n"
STEPS = ("self.lens = torch.zeros(max_bs)", "self.lens.fill_(1)", "self.lens.copy_(seq_lens)",
         "return q * self.lens.sum()")  # fmt: skip


def judged(extra_function: str, box: str = BOX) -> Verdict:
    return only(backend(*STEPS) + box + "\n\n" + extra_function).verdict


def test_without_vars_the_backend_is_safe() -> None:
    assert judged("def g():\n    return 1\n") is Verdict.SAFE


def test_vars_of_a_fresh_plain_instance_keeps_it_safe() -> None:
    assert (
        judged("def g():\n    box = Box()\n    box.n = 1\n    return vars(box)\n") is Verdict.SAFE
    )


@pytest.mark.parametrize(
    ("function", "box"),
    [
        # the object may be a Backend: a parameter, another binding, a nested rebinding
        ("def g(box):\n    return vars(box)\n", BOX),
        ("def g(o):\n    box = Box()\n    box = o\n    return vars(box)\n", BOX),
        (
            "def g(o):\n    box = Box()\n    def h():\n        nonlocal box\n        box = o\n"
            "    h()\n    return vars(box)\n",
            BOX,
        ),
        ("def g(o):\n    box = Box()\n    (box := o)\n    return vars(box)\n", BOX),
        (
            "def g(o):\n    box = Box()\n    for box in [o]:\n        pass\n    return vars(box)\n",
            BOX,
        ),
        # `Box` may make something else: a base, a metaclass, __new__, a rebinding, a store
        (
            "def g():\n    box = Box()\n    return vars(box)\n",
            "\n\nclass Box(Backend):\n    pass\n",
        ),
        (
            "def g():\n    box = Box()\n    return vars(box)\n",
            "\n\nclass Box:\n    def __new__(cls):\n        return Backend()\n",
        ),
        (
            "def g():\n    box = Box()\n    return vars(box)\n",
            "\n\nclass Box(metaclass=type):\n    pass\n",
        ),
        ("def g():\n    box = Box()\n    return vars(box)\n", BOX + "\n\nBox = Backend\n"),
        (
            "def g():\n    box = Box()\n    return vars(box)\n",
            BOX + "\n\nBox.__new__ = lambda cls: Backend()\n",
        ),
        (
            "def g():\n    box = Box()\n    setattr(box, '__class__', Backend)\n    return vars(box)\n",
            BOX,
        ),
        ("def g():\n    Box = Backend\n    box = Box()\n    return vars(box)\n", BOX),
        # no argument: the frame's locals
        ("def g():\n    return vars()\n", BOX),
    ],
)
def test_vars_of_what_may_be_a_backend_is_not_safe(function: str, box: str) -> None:
    assert judged(function, box) is not Verdict.SAFE
