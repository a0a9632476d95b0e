"""The classes a store of bases may extend (analysis/bases_targets.py): in
`T.__bases__ = T.__bases__ + (E,)` inside a class decorator, `T` is what the tree's calls pass,
followed back through the decorator's helpers (vllm `support_torch_compile` ->
`cls_decorator_helper` -> `_support_torch_compile`). A class related to none of the decorated
ones never gets E's code on its objects. "fix" cases: the decorated classes are others (a private
decorator; a public one under `callers-closed`), or share a subclass with the class while E
touches nothing of `self`. Near misses: a class passed in a variable, a public decorator with
callers open, the decorator called with the class itself, E reading the object through a class
that derives from both: each read unwritten when it runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params, site_findings
from zeroopt.analysis.options import AnalysisOptions

_GRID = r"""
import torch


class Grid(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.cells = torch.zeros(n)  # <- site

    def _fill(self):
        self.cells.fill_(1.0)

    def step(self):
        self._fill()
        return self.cells * 2
"""

# `Reader` reads the object's last tensor through `vars(self)`, naming no attribute; `Tagged`
# touches nothing of `self`.
_ADDED = r"""

class Reader:
    def dump(self):
        return [v for v in vars(self).values() if hasattr(v, "sum")][-1].sum()


class Tagged:
    def tag(self):
        return 3
"""


def _decorator(name: str, added: str) -> str:
    """A decorator shaped like vllm's `support_torch_compile`: `@name`, `@name(...)` or
    `name(cls)`, through a nested helper, to the function that extends the bases."""
    return rf"""

def _extend(cls, flag):
    cls.__bases__ = cls.__bases__ + ({added},)
    return cls


def {name}(cls=None, *, flag=False):
    def helper(cls):
        return _extend(cls, flag)

    if cls is not None:
        return helper(cls)
    return helper
"""


_OTHERS = r"""

@{name}
class Other(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.t = torch.ones(2)


@{name}(flag=True)
class Third(torch.nn.Module):
    def forward(self, x):
        return x
"""

_CLOSED = AnalysisOptions(callers_closed=True)


def _program(name: str, added: str, tail: str = "") -> str:
    return _GRID + _ADDED + _decorator(name, added) + _OTHERS.format(name=name) + tail


CASES = [
    Case(
        "private_decorator_extends_only_the_classes_it_decorates",
        kind="fix",
        why="`_compiled` adds Reader to Other's and Third's bases only (its every use decorates "
        "a class): Reader's `vars(self)` never runs on a Grid, and Grid's buffer is written "
        "before every read.",
        source=_program("_compiled", "Reader"),
        scenario="def run():\n    return Grid(3).step(), Other().dump()\n",
    ),
    Case(
        "public_decorator_with_callers_closed",
        kind="fix",
        why="Under `callers-closed`, the public `compiled` is judged at its uses in the tree: "
        "it decorates Other and Third, not Grid.",
        source=_program("compiled", "Reader"),
        scenario="def run():\n    return Grid(3).step(), Other().dump()\n",
        options=_CLOSED,
    ),
    Case(
        "harmless_base_added_to_a_class_sharing_a_subclass",
        kind="fix",
        why="`Both(Grid, Other)` holds Grid's buffer and gets Tagged through Other: Tagged's code "
        "touches nothing of `self`, so it is judged as a base's and passes.",
        source=_program("_compiled", "Tagged", "\n\nclass Both(Grid, Other):\n    pass\n"),
        scenario="def run():\n    b = Both(3)\n    return b.step(), torch.tensor(b.tag())\n",
    ),
    Case(
        "decorator_called_with_a_class_in_a_variable",
        why="`_compiled(kind)` with `kind` a local chosen at run time: it is Grid, and Reader's "
        "`dump` reads the buffer unwritten.",
        source=_program(
            "_compiled",
            "Reader",
            "\n\ndef make(flag):\n    kind = Grid if flag else Other\n    return _compiled(kind)\n",
        ),
        scenario="def run():\n    return make(True)(3).dump()\n",
    ),
    Case(
        "public_decorator_with_callers_open",
        why="`compiled` is public: code outside the tree may pass it Grid (here the scenario "
        "does), and Reader's `dump` reads the buffer unwritten.",
        source=_program("compiled", "Reader"),
        scenario="def run():\n    return compiled(Grid)(3).dump()\n",
    ),
    Case(
        "decorator_called_with_the_class_itself",
        why="Under `callers-closed`, `compiled(Grid)` in the tree makes Grid a target: Reader's "
        "`dump` reads the buffer unwritten.",
        source=_program(
            "compiled", "Reader", "\n\ndef make():\n    compiled(Grid)\n    return Grid\n"
        ),
        scenario="def run():\n    return make()(3).dump()\n",
        options=_CLOSED,
    ),
    Case(
        "reader_added_to_a_class_sharing_a_subclass",
        why="`Both(Grid, Other)` holds Grid's buffer and gets Reader through Other: `dump` reads "
        "it unwritten.",
        source=_program("_compiled", "Reader", "\n\nclass Both(Grid, Other):\n    pass\n"),
        scenario="def run():\n    return Both(3).dump()\n",
    ),
    Case(
        "decorator_over_another_decorator",
        why="`@_compiled @swap class Fake` is `_compiled(swap(Fake))`, and `swap` returns Grid: "
        "Grid gets Reader, whose `dump` reads the buffer unwritten.",
        source=_program(
            "_compiled",
            "Reader",
            "\n\ndef swap(k):\n    return Grid\n\n\n@_compiled\n@swap\n"
            "class Fake(torch.nn.Module):\n    pass\n",
        ),
        scenario="def run():\n    return Grid(3).dump()\n",
    ),
    Case(
        "decorator_called_with_another_name_for_the_class",
        why="`Alias = Grid`, then `_compiled(Alias)`: Grid gets Reader.",
        source=_program(
            "_compiled",
            "Reader",
            "\n\nAlias = Grid\n\n\ndef make():\n    _compiled(Alias)\n    return Alias\n",
        ),
        scenario="def run():\n    return make()(3).dump()\n",
    ),
    Case(
        "decorator_result_kept_in_a_name",
        why="`wrap = _compiled(flag=True)` keeps the helper, and `wrap(Grid)` gives Grid Reader.",
        source=_program(
            "_compiled",
            "Reader",
            "\n\nwrap = _compiled(flag=True)\n\n\ndef make():\n    return wrap(Grid)\n",
        ),
        scenario="def run():\n    return make()(3).dump()\n",
    ),
    Case(
        "bases_store_makes_a_class_override_a_method_of_the_tree",
        why="`Sub.__bases__ = (A,)` (A by a computed name) makes Sub derive from A with no class "
        "statement saying so: `Sub().go(3)` runs Sub's `fill`, which adds to the zeros. The "
        "closed world's method resolution (methods.py `overridden`) asks `bases_stored` too.",
        source=r"""
import torch


class A:
    def fill(self, t):
        t.fill_(1.0)

    def go(self, n):
        t = torch.zeros(n)  # <- site
        self.fill(t)
        return t * 2
""",
        scenario="def run():\n    from bt_sub import Sub\n\n    return Sub().go(3)\n",
        modules=(
            (
                "bt_sub",
                "import bases_store_makes_a_class_override_a_method_of_the_tree as mm\n\n\n"
                "class Base:\n    pass\n\n\nclass Sub(Base):\n    def fill(self, t):\n"
                '        t.add_(1.0)\n\n\nSub.__bases__ = (getattr(mm, "A"),)\n',
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


def _message(case_name: str) -> str:
    case = next(c for c in CASES if c.name == case_name)
    found = site_findings(case, case.source.lstrip("\n"))
    return " ".join(f.message for fs in found.values() for f in fs)


def _evidence(case_name: str) -> str:
    case = next(c for c in CASES if c.name == case_name)
    found = site_findings(case, case.source.lstrip("\n"))
    return " ".join(e.text for fs in found.values() for f in fs for e in f.evidence)


def test_callers_open_names_the_public_decorator() -> None:
    assert "`compiled` (" in _message("public_decorator_with_callers_open")
    assert "is public" in _message("public_decorator_with_callers_open")


def test_variable_class_names_the_local() -> None:
    assert "a local of `make`" in _message("decorator_called_with_a_class_in_a_variable")


def test_kept_result_is_named() -> None:
    assert "keeps the result of `_compiled(...)`" in _message("decorator_result_kept_in_a_name")


def test_closed_callers_are_an_assumption_of_the_safe_verdict() -> None:
    text = _evidence("public_decorator_with_callers_closed")
    assert "closed world over callers" in text
    assert "callers-closed = true" in text
    assert "closed world over callers" in _evidence(
        "private_decorator_extends_only_the_classes_it_decorates"
    )


def test_class_passed_by_name_is_a_target() -> None:
    assert "it may be `Grid`, related to this class" in _message(
        "decorator_called_with_the_class_itself"
    )
