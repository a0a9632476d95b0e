"""The closed world of method resolution (analysis/methods.py): every way the scanned code can
make `self.put` run something other than the class's own `def put` must keep a full write by
`put` from proving the buffer written. Each program's `Own.run` allocates, calls `self.put(b)`
and returns `b`; at run time `self.put` writes nothing, so the zeros are what is returned."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_OWN = r"""
import torch


class Own:
    def run(self, n):
        b = torch.zeros(n)  # <- site
        self.put(b)
        return b

    def put(self, t):
        t.fill_(7.0)
"""


def _case(name: str, why: str, tail: str, scenario: str) -> Case:
    return Case(name, why=why, source=_OWN + tail, scenario=scenario)


CASES = [
    _case(
        "put_stored_by_object_setattr",
        "`object.__setattr__(self, 'put', ...)` gives the instance its own `put`.",
        r"""

class Sub(Own):
    def __init__(self):
        object.__setattr__(self, "put", lambda t: None)
""",
        "def run():\n    return Sub().run(4)\n",
    ),
    _case(
        "put_stored_through_the_instance_dict",
        "`self.__dict__['put'] = ...` gives the instance its own `put`.",
        r"""

class Sub(Own):
    def __init__(self):
        self.__dict__["put"] = lambda t: None
""",
        "def run():\n    return Sub().run(4)\n",
    ),
    _case(
        "subclass_made_by_type",
        "`type('Sub', (Own,), {'put': ...})` is a subclass no class statement shows.",
        r"""

Sub = type("Sub", (Own,), {"put": lambda self, t: None})
""",
        "def run():\n    return Sub().run(4)\n",
    ),
    _case(
        "subclass_with_a_computed_base",
        "`class Sub(base())` derives from whatever `base()` returns: Own here.",
        r"""

def base():
    return Own


class Sub(base()):
    def put(self, t):
        pass
""",
        "def run():\n    return Sub().run(4)\n",
    ),
    _case(
        "subclass_with_a_starred_base",
        "`class Sub(*bases)` derives from the classes in `bases`: Own here.",
        r"""

bases = (Own,)


class Sub(*bases):
    def put(self, t):
        pass
""",
        "def run():\n    return Sub().run(4)\n",
    ),
    _case(
        "method_called_through_the_class_with_another_self",
        "`Own.run(Other(), n)` runs Own.run with a `self` whose `put` is Other's.",
        r"""

class Other:
    def put(self, t):
        pass


def g(n):
    return Own.run(Other(), n)
""",
        "def run():\n    return g(4)\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
