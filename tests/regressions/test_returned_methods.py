"""A buffer a private method returns, judged at every call that may dispatch to it
(analysis/returned_methods.py): `self._m(...)` in the class, its subclasses and bases of the
tree, `super()._m(...)` in an override, `cls._m(...)`.

"fix" cases are methods whose every caller writes the buffer in full before reading it: the
site is `safe` and the rewritten program behaves the same. The others read the buffer unwritten
through a way the closed world must see: an override that reads what `super()` returned, the
method taken as a value (a callback, `functools.partial`), a subclass in another module, a
receiver that is no `self`; none may be `safe`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

CASES = [
    Case(
        "private_method_filled_by_subclass_and_override",
        kind="fix",
        why="`_alloc` is called by `self._alloc` in Base, in a subclass, and by `super()._alloc` "
        "in an override; every one of them writes the buffer in full before reading it.",
        source=r"""
import torch


class Base:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Child(Base):
    def go(self, n):
        c = self._alloc(n)
        c.copy_(torch.arange(n, dtype=c.dtype))
        return c * 2


class Over(Base):
    def _alloc(self, n):
        d = super()._alloc(n)
        d.fill_(3.0)
        return d

    def peek(self, n):
        return self._alloc(n).sum()
""",
        scenario=r"""
def run():
    return Base().run(3), Child().go(4), Over().run(2), Over().peek(5)
""",
    ),
    Case(
        "classmethod_caller_fills_the_static_allocator",
        kind="fix",
        why="`cls._buf(n)` in a classmethod runs the staticmethod `_buf`; the caller fills it.",
        source=r"""
import torch


class Table:
    @staticmethod
    def _buf(n):
        return torch.zeros(n, 2)  # <- site

    @classmethod
    def build(cls, n):
        t = cls._buf(n)
        t.fill_(0.5)
        return t
""",
        scenario="def run():\n    return Table.build(3)\n",
    ),
    Case(
        "override_in_a_subclass_reads_what_super_returned",
        why="the override takes Base's buffer through `super()._alloc(n)` and sums it unwritten: "
        "the zeros are the result.",
        source=r"""
import torch


class Base:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Over(Base):
    def _alloc(self, n):
        d = super()._alloc(n)
        d[0] = d.sum()
        return d
""",
        scenario="def run():\n    return Base().run(2), Over()._alloc(3)\n",
    ),
    Case(
        "subclass_caller_reads_the_inherited_allocator",
        why="a subclass calls the inherited `self._alloc(n)` and reads the buffer before writing.",
        source=r"""
import torch


class Base:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Child(Base):
    def peek(self, n):
        c = self._alloc(n)
        return c.sum()
""",
        scenario="def run():\n    return Base().run(2), Child().peek(3)\n",
    ),
    Case(
        "private_method_handed_on_as_a_callback",
        why="`functools.partial(self._alloc, n)` hands the bound method to `consume`, which "
        "reads what it returns: no call of `_alloc` is spelled there.",
        source=r"""
import functools

import torch


def consume(make):
    return make().sum()


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b

    def other(self, n):
        return consume(functools.partial(self._alloc, n))
""",
        scenario="def run():\n    e = Eng()\n    return e.run(2), e.other(3)\n",
    ),
    Case(
        "private_method_called_on_a_parameter",
        why="`eng._alloc(n)` on a parameter: the object may be an Eng; the caller reads first.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


def peek(eng, n):
    return eng._alloc(n).sum()
""",
        scenario="def run():\n    e = Eng()\n    return e.run(2), peek(e, 3)\n",
    ),
    Case(
        "private_method_fetched_by_a_computed_name",
        why="`getattr(self, name)()` may fetch `_alloc`; the caller reads the result.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b

    def by_name(self, name, n):
        return getattr(self, name)(n).sum()
""",
        scenario="def run():\n    e = Eng()\n    return e.run(2), e.by_name('_al' + 'loc', 3)\n",
    ),
    Case(
        "subclass_in_another_module_reads_the_inherited_allocator",
        why="a subclass in another module calls `self._alloc(n)` and sums the buffer unwritten.",
        source=r"""
import torch


class Base:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b
""",
        scenario=r"""
def run():
    import sub_reader

    return Base().run(2), sub_reader.Sub().peek(3)
""",
        modules=(
            (
                "sub_reader",
                r"""
from subclass_in_another_module_reads_the_inherited_allocator import Base


class Sub(Base):
    def peek(self, n):
        return self._alloc(n).sum()
""",
            ),
        ),
    ),
    Case(
        "unrelated_class_method_run_on_an_instance_through_its_class",
        why="`Other.peek(eng, 3)` runs Other's method with an Eng as `self`: its "
        "`self._alloc(n)` is Eng's, and it reads the buffer first.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Other:
    def _alloc(self, n):
        return torch.ones(n)

    def peek(self, n):
        return self._alloc(n).sum()


def cross(n):
    return Other.peek(Eng(), n)
""",
        scenario="def run():\n    return Eng().run(2), cross(3)\n",
    ),
    Case(
        "mixin_put_before_the_class_by_a_class_made_at_run_time",
        why="`type('Made', (Mixin, type(obj)), {})` puts Mixin before Eng: Mixin's "
        "`self._alloc(n)` runs Eng's def on a Made object, and reads the buffer first.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Mixin:
    def peek(self, n):
        return self._alloc(n).sum()


def made(obj):
    return type("Made", (Mixin, type(obj)), {})()
""",
        scenario="def run():\n    return Eng().run(2), made(Eng()).peek(3)\n",
    ),
    Case(
        "mixin_put_before_the_class_by_bases_passed_in",
        why="`type('Made', bases, {})` called with `bases = (Mixin, Eng)` puts "
        "Mixin before Eng as the literal tuple does: Mixin's `self._alloc(n)` reads the buffer.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Mixin:
    def peek(self, n):
        return self._alloc(n).sum()


def made(bases):
    return type("Made", bases, {})()
""",
        scenario="def run():\n    return Eng().run(2), made((Mixin, Eng)).peek(3)\n",
    ),
    Case(
        "instance_copied_and_its_fields_read_keeps_the_method_followed",
        kind="fix",
        why="`copy.copy(self)` and `vars(self)` read the instance's own attributes, never the "
        "class's defs: the only call of `_alloc` is `self._alloc(n)`, which fills the buffer.",
        source=r"""
import copy

import torch


class Eng:
    def __init__(self):
        self.scale = 2.0

    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        twin = copy.copy(self)
        return b * twin.scale * len(vars(self))
""",
        scenario="def run():\n    return Eng().run(3)\n",
    ),
    Case(
        "method_fetched_by_getattr_on_a_parameter",
        why="`getattr(obj, name)` on a parameter may fetch Eng's `_alloc` by a name the text "
        "does not spell; the result is read unwritten.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


def peek(obj, name, n):
    return getattr(obj, name)(n).sum()
""",
        scenario="def run():\n    e = Eng()\n    return e.run(2), peek(e, '_al' + 'loc', 3)\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
