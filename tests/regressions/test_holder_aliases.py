"""Holders reached through more than one name or path (analysis/dataflow/holders.py): a store
through one alias read through another, a dict inside a list, a parameter bound to a local dict,
a name rebound to another holder, one dict under two keys or two fields, a dict made inside the
display; and the near misses where two displays are two holders.

Each case is a program whose allocation is marked `# <- site`; `tests/regressions/harness.py`
checks the verdict there and executes it with zeros and with poison (fix cases: as `zeroopt
apply` rewrites it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "dict_stored_through_one_name_read_through_another",
        why="`e = d` names one dict; `d['a'] = buf` then `e['a'].sum()` reads the zeros. A store into a dict other names may reach exposes the slot `['a']` to every untracked load. (Was `safe`: the read through `e` was not seen.)",
        source=r"""import types

import torch


def f(n):
    d = {}
    e = d
    buf = torch.zeros(n)  # <- site
    d["a"] = buf
    s = e["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "attribute_stored_through_a_local_read_through_self",
        why="`o = self.h; o.buf = buf`: `self.h.buf` is the same slot. (Was `safe`.)",
        source=r"""import types

import torch


class A:
    def __init__(self):
        self.h = types.SimpleNamespace()

    def m(self, n):
        o = self.h
        buf = torch.zeros(n)  # <- site
        o.buf = buf
        s = self.h.buf.sum()
        buf.fill_(1)
        return s, buf


def g(n):
    return A().m(n)
""",
        scenario="""
def run():
    return g(4)
""",
    ),
    Case(
        "dict_inside_a_list_read_through_the_list",
        why="`e = [d]` holds the dict: `e[0]['a']` reaches what `d['a'] = buf` stored. (Was `safe`.)",
        source=r"""import types

import torch


def f(n):
    d = {}
    e = [d]
    buf = torch.zeros(n)  # <- site
    d["a"] = buf
    s = e[0]["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "alias_stores_a_new_key_read_through_the_first_name",
        why="`e = d` carries `d`'s paths to `e`; `e['b'] = buf` adds a key `d` never had: `d['b']` is the buffer. The load of an untracked key of a holder that owns other paths checks the exposed slots too. (Was `safe`.)",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": torch.ones(n)}
    e = d
    e["b"] = buf
    s = d["b"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "namespace_alias_stores_a_new_field",
        why="`e = ns; e.b = buf`: `ns.b` is the buffer, read before it is written. (Was `safe`.)",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    ns = types.SimpleNamespace(a=torch.ones(n))
    e = ns
    e.b = buf
    s = ns.b.sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "store_into_one_dict_read_through_another",
        why="`d` and `e` are bound only to dict displays: two dicts, though both are handed on (`both = [d, e]`). The store `d['a'] = buf` exposes `['a']` of `d`'s dict only, so `e['a'].sum()` reads the other tensor and the fill writes the buffer in full first. (Was `unproven`: any untracked `['a']` load was a possible read.)",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {}
    e = {"a": torch.ones(n)}
    both = [d, e]
    d["a"] = buf
    s = e["a"].sum()
    buf.fill_(1)
    return s, buf, len(both)
""",
        scenario="""
def run():
    s, buf, _ = f(4)
    return s, buf
""",
        kind="fix",
    ),
    Case(
        "store_into_one_dict_read_through_a_list_of_both",
        why="`both[0]` is `d`'s dict: `both[0]['a'].sum()` reads the buffer before the fill.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {}
    e = {"a": torch.ones(n)}
    both = [d, e]
    d["a"] = buf
    s = both[0]["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "store_into_one_dict_read_through_a_parameter",
        why="The parameter `e` is bound to `d`'s dict when not passed: `e['a'].sum()` reads the buffer.",
        source=r"""import types

import torch


def f(n, e=None):
    buf = torch.zeros(n)  # <- site
    d = {}
    if e is None:
        e = d
    d["a"] = buf
    s = e["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "store_into_one_dict_read_through_a_rebound_name",
        why="`e` is first a dict of its own, then rebound to `d`'s dict: `e['a'].sum()` reads the buffer.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {}
    e = {"a": torch.ones(n)}
    both = [d, e]
    e = d
    d["a"] = buf
    s = e["a"].sum()
    buf.fill_(1)
    return s, buf, len(both)
""",
        scenario="""
def run():
    s, buf, _ = f(4)
    return s, buf
""",
    ),
    Case(
        "store_into_a_dict_shared_by_two_keys",
        why="`outer = {'i': inner, 'j': inner}` holds one dict under two keys: "
        "`outer['i']['a'] = buf` stores into that dict, so `outer['j']['a']` is the buffer; "
        "`outer` being private says nothing of the dict inside it.",
        source=r"""import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    inner = {"a": torch.ones(n)}
    outer = {"i": inner, "j": inner}
    outer["i"]["a"] = buf
    s = outer["j"]["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "store_into_a_namespace_shared_by_two_fields",
        why="`ns.p` and `ns.q` are one namespace: `ns.p.a = buf` makes `ns.q.a` the buffer, read "
        "before the buffer is written.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    shared = types.SimpleNamespace(a=torch.ones(n))
    ns = types.SimpleNamespace(p=shared, q=shared)
    ns.p.a = buf
    s = ns.q.a.sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "store_into_a_dict_made_inside_the_display",
        kind="fix",
        why="`d = {'m': {'a': None}}`: the inner dict is made in the display and only `d['m']` "
        "reaches it; the buffer stored there is written in full before the read through the "
        "same path.",
        source=r"""import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"m": {"a": None}}
    d["m"]["a"] = buf
    d["m"]["a"].fill_(1)
    return d["m"]["a"].sum()
""",
        scenario="""
def run():
    return f(4)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
