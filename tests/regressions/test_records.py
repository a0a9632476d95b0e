"""Records (dataclasses and plain classes holding views): which field holds which tensor.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "kw_only_field_skipped_by_positional_arguments",
        why=(
            "A plain dataclass with a `field(kw_only=True)`: positional arguments skip that field. "
            '`safe` would be wrong for the torch.zeros at line 12: "written in full (line 14): '
            "m.a.fill_(1)\". Why: M's __init__ is (self, b=None, *, a=None), so M(x, a=other) stores"
            " x in m.b, not m.a; m.a.fill_(1) writes `other` and m.b.sum() reads the zeros. "
            "records.py lists fields in declaration order and accepts any field() keyword but "
            "init/default/default_factory; _record then zips positional args with that order."
        ),
        source=r"""
import torch
from dataclasses import dataclass, field


@dataclass
class M:
    a: object = field(default=None, kw_only=True)
    b: object = None


def f(inp):
    x = torch.zeros(8)  # <- site
    m = M(x, a=inp.clone())
    m.a.fill_(1)
    return m.b.sum()
""",
        scenario=r"""
def run():
    inp = torch.ones(8)
    return f(inp)
""",
    ),
    Case(
        "write_through_a_record_of_another_object",
        why=(
            '`safe` would be wrong for `self.buf = torch.zeros(n)` at line 21, col 19 ("`self.buf` '
            'is written in full (line 25) before any read on every path"), the write being '
            "`self.meta.lens.fill_(1)` through the record `Meta(lens=self.buf)`. But `dataclass` "
            "here is this module's own decorator (it wraps dataclasses.dataclass with an __init__ "
            "that stores copies), not dataclasses.dataclass: `self.meta.lens` is a copy, the fill "
            "never reaches `self.buf`, and forward_decode reads the initial contents. "
            "rules/records._fields accepts the decorator by its text alone (`_dotted(dec) in "
            '{"dataclass", "dataclasses.dataclass"}`) without resolving the name to the '
            "`dataclasses` module (a `from somelib import dataclass`, e.g. a validating/converting "
            "dataclass, is accepted the same way). The intra-procedural analysis is fooled the same"
            " way: `buf = torch.zeros(n); m = Meta(lens=buf); m.lens.fill_(1); return buf.sum()` is"
            " also `safe`."
        ),
        source=r'''
import dataclasses

import torch


def dataclass(cls):
    """The project's record decorator: fields are snapshots of what the caller passed."""
    cls = dataclasses.dataclass(cls)
    init = cls.__init__
    cls.__init__ = lambda self, **kw: init(self, **{k: v.clone() for k, v in kw.items()})
    return cls


@dataclass
class Meta:
    lens: torch.Tensor = None


class Backend:
    def init_cuda_graph_state(self, n):
        self.buf = torch.zeros(n)  # <- site

    def init_forward_metadata_capture_cuda_graph(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

    def init_forward_metadata_replay_cuda_graph(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

    def init_forward_metadata(self, n):
        self.meta = Meta(lens=self.buf)
        self.meta.lens.fill_(1)

    def forward_decode(self, x):
        return x + self.buf.sum()
''',
        scenario=r"""
def run():
    b = Backend()
    b.init_cuda_graph_state(4)
    b.init_forward_metadata(4)  # eager cycle: setup, then one of the forwards
    return b.forward_decode(torch.ones(2))
""",
    ),
    Case(
        "classvar_imported_under_another_name",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 15 ("written in full (line '
            '17)"). records._fields skips a field only if its annotation text contains "ClassVar"; '
            "`CV[int]` (ClassVar imported as CV) is a ClassVar to dataclasses (excluded from "
            "__init__), so the analysis maps Meta(x, y) to n=x, a=y while really a=x, b=y: "
            "`m.a.fill_` writes only buf[:2], not all of buf."
        ),
        source=r"""
from dataclasses import dataclass
from typing import ClassVar as CV

import torch


@dataclass
class Meta:
    n: CV[int] = 0
    a: torch.Tensor
    b: torch.Tensor


def f(n):
    buf = torch.zeros(n)  # <- site
    m = Meta(buf[:2], buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "field_shadowed_by_a_property",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 20 ("written in full (line '
            '22)"). A field shadowed by a property: the generated __init__ runs the setter (which '
            "stores a copy) and `m.a` runs the getter; records._fields only rejects functions named"
            " __init__/__post_init__/__setattr__/..., not descriptors on field names, so Meta "
            "counts as a plain record and `m.a.fill_` is taken as a full write of buf."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    a: torch.Tensor

    @property
    def a(self):
        return self._a

    @a.setter
    def a(self, v):
        self._a = v.clone()


def f(n):
    buf = torch.zeros(n)  # <- site
    m = Meta(a=buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "post_init_bound_by_assignment",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 17 ("written in full (line '
            '19)"). `__post_init__ = _post` binds the hook by an assignment in the class body; '
            "records._fields only rejects a *def* named __post_init__ (the same holds for "
            "__init__/__setattr__ = ...), so P counts as a plain record although its __init__ "
            "replaces m.a by a copy."
        ),
        source=r"""
from dataclasses import dataclass

import torch


def _post(self):
    self.a = self.a.clone()


@dataclass
class P:
    a: torch.Tensor
    __post_init__ = _post


def f(n):
    buf = torch.zeros(n)  # <- site
    m = P(a=buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "dataclass_with_getattribute",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 15 ("written in full (line '
            '17)"). A dataclass defining __getattribute__ (not in records._CODE_METHODS) counts as '
            "a plain record, but every `m.a` runs it (here: returns a copy), so `m.a.fill_` does "
            "not write buf."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class S:
    a: torch.Tensor

    def __getattribute__(self, name):
        return object.__getattribute__(self, name).clone()


def f(n):
    buf = torch.zeros(n)  # <- site
    m = S(a=buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "dict_store_through_an_alias_repoints_a_field",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 12 ("written in full (line '
            '19)"). `m.a` is fresh (buf[:2], written in full through m.a). `m2.__dict__["a"] = buf`'
            " through an alias m2 of m re-points m.a to all of buf, but rebind_elsewhere only drops"
            " paths ending in the component `['a']`, not `.a`, and the store is not `lost`, so "
            "`m.a.sum()` (reading buf[2:]) still counts as a read of a fresh path."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    a: torch.Tensor


def f(n):
    buf = torch.zeros(n)  # <- site
    m = Meta(a=None)
    m2 = m
    m.a = buf[:2]
    m.a.fill_(1.0)
    m2.__dict__["a"] = buf
    s = m.a.sum()
    buf.fill_(0.0)
    return s
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "field_annotated_inside_an_if",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 14 ("written in full (line '
            '17)"). A field annotated inside an `if` of the class body is a dataclass field, but '
            "records._fields only walks the body's top-level statements: it sees fields (b,), maps "
            'R(buf) to m.b (really m.a), and then `m.a.sum()` on a record that "holds only m.b" is '
            "no read at all."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class R:
    if True:
        a: torch.Tensor
    b: int = 0


def f(n):
    buf = torch.zeros(n)  # <- site
    m = R(buf)
    s = m.a.sum()
    buf.fill_(1.0)
    return s
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "init_replaced_at_module_level",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 19 ("written in full (line '
            '21)"). `Q.__init__ = _init` at module level replaces the generated __init__ (here: it '
            "stores a copy); records only counts Name bindings of Q, not attribute stores on it, so"
            " Q still counts as a plain record."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class Q:
    a: torch.Tensor


def _init(self, a):
    self.a = a.clone()


Q.__init__ = _init


def f(n):
    buf = torch.zeros(n)  # <- site
    m = Q(a=buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "class_name_rebound_through_globals",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(n)` at line 20 ("written in full (line '
            '22)"). `globals()["Q"] = _Copying` at module level rebinds the name Q to another class'
            " (whose __init__ stores a copy); records._module_bindings counts only syntactic "
            "bindings of Q (once), so `Q(a=buf)` is still taken as the plain dataclass that stores "
            "buf in m.a."
        ),
        source=r"""
from dataclasses import dataclass

import torch


@dataclass
class Q:
    a: torch.Tensor


class _Copying:
    def __init__(self, a):
        self.a = a.clone()


globals()["Q"] = _Copying


def f(n):
    buf = torch.zeros(n)  # <- site
    m = Q(a=buf)
    m.a.fill_(1.0)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "imported_plain_dataclass_holds_the_buffer",
        why=(
            "The same record as a class of this module, imported from another scanned module: "
            "its generated __init__ stores `buf` in `meta.page_table`, the fill writes all of "
            "`buf`; the rewritten program behaves the same."
        ),
        kind="fix",
        source=r"""
import torch
from rec_meta_plain.meta import Meta


def f(n):
    buf = torch.zeros(n)  # <- site
    meta = Meta(page_table=buf)
    meta.page_table[:].fill_(1.0)
    return buf * 2
""",
        scenario=r"""
def run():
    return f(4)
""",
        modules=(("rec_meta_plain/__init__", ""), ("rec_meta_plain/meta", r"""
from dataclasses import dataclass


@dataclass
class Meta:
    page_table: object
    lens: object = None
"""),),
    ),
    Case(
        "imported_dataclass_whose_post_init_copies_the_field",
        why=(
            "`safe` would be wrong: the imported Meta's __post_init__ replaces the field by a "
            "copy, so the fill through `meta.page_table` never reaches `buf`, which is returned "
            "as allocated. The class in its own module has a __post_init__: not plain."
        ),
        source=r"""
import torch
from rec_meta_post_init_copy.meta import Meta


def f(n):
    buf = torch.zeros(n)  # <- site
    meta = Meta(page_table=buf)
    meta.page_table[:].fill_(1.0)
    return buf * 2
""",
        scenario=r"""
def run():
    return f(4)
""",
        modules=(("rec_meta_post_init_copy/__init__", ""), ("rec_meta_post_init_copy/meta", r"""
from dataclasses import dataclass


@dataclass
class Meta:
    page_table: object
    lens: object = None

    def __post_init__(self):
        self.page_table = self.page_table.clone()
"""),),
    ),
    Case(
        "imported_dataclass_whose_post_init_reads_the_field",
        why=(
            "`unsafe` or `unproven`, never `safe`: the imported Meta's __post_init__ reads the "
            "field (the zeros) before the fill, and the result adds that sum."
        ),
        source=r"""
import torch
from rec_meta_post_init_read.meta import Meta


def f(n):
    buf = torch.zeros(n)  # <- site
    meta = Meta(page_table=buf)
    meta.page_table[:].fill_(1.0)
    return buf * 2 + meta.lens
""",
        scenario=r"""
def run():
    return f(4)
""",
        modules=(("rec_meta_post_init_read/__init__", ""), ("rec_meta_post_init_read/meta", r"""
from dataclasses import dataclass


@dataclass
class Meta:
    page_table: object
    lens: object = None

    def __post_init__(self):
        self.lens = self.page_table.sum()
"""),),
    ),
    Case(
        "imported_dataclass_name_bound_twice",
        why=(
            "`safe` would be wrong: the module binds Meta twice; the second, a class whose "
            "__init__ stores a copy, is the one imported, so the fill never reaches `buf`."
        ),
        source=r"""
import torch
from rec_meta_bound_twice.meta import Meta


def f(n):
    buf = torch.zeros(n)  # <- site
    meta = Meta(page_table=buf)
    meta.page_table[:].fill_(1.0)
    return buf * 2
""",
        scenario=r"""
def run():
    return f(4)
""",
        modules=(("rec_meta_bound_twice/__init__", ""), ("rec_meta_bound_twice/meta", r"""
from dataclasses import dataclass


@dataclass
class Meta:
    page_table: object
    lens: object = None


class Meta:  # noqa: F811
    def __init__(self, page_table, lens=None):
        self.page_table = page_table.clone()
        self.lens = lens
"""),),
    ),
    Case(
        "imported_dataclass_look_alike",
        why=(
            "`safe` would be wrong: the `dataclass` of the imported class's module is its own "
            "decorator whose __init__ stores a copy; the rules are applied with that module's "
            "imports, where `dataclass` is not dataclasses.dataclass."
        ),
        source=r"""
import torch
from rec_meta_look_alike.meta import Meta


def f(n):
    buf = torch.zeros(n)  # <- site
    meta = Meta(page_table=buf)
    meta.page_table[:].fill_(1.0)
    return buf * 2
""",
        scenario=r"""
def run():
    return f(4)
""",
        modules=(("rec_meta_look_alike/__init__", ""), ("rec_meta_look_alike/meta", r"""
import dataclasses


def dataclass(cls):
    cls = dataclasses.dataclass(cls)
    init = cls.__init__

    def copying(self, page_table, lens=None):
        init(self, page_table.clone(), lens)

    cls.__init__ = copying
    return cls


@dataclass
class Meta:
    page_table: object
    lens: object = None
"""),),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
