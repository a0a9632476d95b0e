"""Holders made in the function: dict, list and tuple displays, `dict(k=...)` and
`types.SimpleNamespace(k=...)` (analysis/dataflow/holders.py): what is safe, what is `unsafe`,
and each way the analysis gives up (aliases, a closure, a negative index, `del`, a computed key,
a method of the holder, a loop that rebinds it, a callee).

Each case is a program whose allocation is marked `# <- site`; `tests/regressions/harness.py`
checks the verdict there and executes it with zeros and with poison (fix cases: as `zeroopt
apply` rewrites it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_execution, check_verdict, params

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "dict_display_written_through_its_key",
        why="`d = {'a': buf}` is a new dict only `d` reaches: `d['a'][:] = 2` writes the buffer in full before `g(d)` hands the dict on.",
        source=r"""import types

import torch


def g(d):
    return d["a"] * 2


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf, "n": n}
    d["a"][:] = 2
    return g(d), buf
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "list_display_item_written",
        why="`bufs = [buf, other]`: a list only `bufs` reaches, indexed by literals: `bufs[0].fill_(1)` writes the buffer.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [buf, torch.ones(n)]
    bufs[0].fill_(1)
    return bufs[0] + bufs[1]
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "namespace_field_copied_into",
        why="`types.SimpleNamespace(a=buf)` only stores its keyword arguments as attributes: `ns.a.copy_(x)` writes the buffer.",
        source=r"""import types

import torch


def f(n):
    x = torch.arange(n, dtype=torch.float32)
    buf = torch.zeros(n)  # <- site
    ns = types.SimpleNamespace(a=buf, n=1)
    ns.a.copy_(x)
    return ns.a * ns.n
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "dict_call_get_written",
        why="`dict(a=buf)` is a new dict; `d.get('a')` is the load `d['a']`.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = dict(a=buf)
    d.get("a").fill_(3)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "tuple_unpacked_then_written",
        why="`t = (buf, other)` then `x, y = t`: x is the first element, the buffer.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    t = (buf, torch.ones(n))
    x, y = t
    x.fill_(1)
    return buf + y
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "private_dict_stored_then_written",
        why="`d = {}` used only through constant keys: storing the buffer in it later is no escape.",
        source=r"""import types

import torch


def g(d):
    return d["a"].sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {}
    d["a"] = buf
    d["a"].fill_(2)
    return d["a"] + 1
""",
        scenario="""
def run():
    return f(4)
""",
        kind="fix",
    ),
    Case(
        "dict_entry_read_before_write",
        why="The zeros are read through `d['a']` before the buffer is written.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}
    s = d["a"].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
        expect=UNSAFE,
    ),
    Case(
        "list_item_read_before_write",
        why="`bufs[1]` is the buffer: summed while still zeros.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [torch.ones(n), buf]
    s = bufs[1].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
        expect=UNSAFE,
    ),
    Case(
        "namespace_field_read_before_write",
        why="`ns.a` is the buffer, read before any write.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    ns = types.SimpleNamespace(a=buf)
    return ns.a.sum() + 1
""",
        scenario="""
def run():
    return f(4)
""",
        expect=UNSAFE,
    ),
    Case(
        "unpacked_other_element_written",
        why="`x, y = (other, buf)` as a name: x is the other tensor; the buffer stays zeros and is returned.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    t = (torch.ones(n), buf)
    x, y = t
    x.fill_(2)
    return y.sum()
""",
        scenario="""
def run():
    return f(4)
""",
        expect=UNSAFE,
    ),
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
        "generator_expression_reads_a_name_bound_later",
        why="A generator expression looks its names up when it is stepped: `g` made while `x` is None reads the buffer bound to `x` afterwards, at `list(g)`. (Was `safe`, also on main.)",
        source=r"""import types

import torch


def f(n):
    x = None
    g = (x.sum() for _ in range(1))
    buf = torch.zeros(n)  # <- site
    x = buf
    s = list(g)
    buf.fill_(1)
    return s[0], buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "generator_expression_reads_a_holder_filled_later",
        why="`g` reads `d['a']` when stepped; the buffer is stored there after `g` is made. (Was `safe`, also on main.)",
        source=r"""import types

import torch


def f(n):
    d = {}
    g = (d["a"].sum() for _ in range(1))
    buf = torch.zeros(n)  # <- site
    d["a"] = buf
    s = next(g)
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "generator_expression_made_in_an_earlier_turn",
        why="`g` is made in the first turn of the loop, after the line that binds `x` in the second: stepped there, it reads the buffer. (Was `safe`, also on main.)",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    x = torch.ones(n)
    s = None
    for i in range(2):
        if i == 1:
            x = buf
            s = next(g)
            break
        g = (x.sum() for _ in range(1))
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "negative_index_through_an_alias",
        why="`e[-1]` is `bufs[1]`, the buffer: not a path the analysis spells, so the list is used as a whole.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [torch.ones(n), buf]
    e = bufs
    s = e[-1].sum()
    buf.fill_(1)
    return s, buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "negative_index_store_replaces_the_item",
        why="`e[-1] = other` replaces `bufs[1]`: the fill writes the other tensor, the buffer stays zeros.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [torch.ones(n), buf]
    e = bufs
    e[-1] = torch.ones(n)
    bufs[1].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "del_shifts_the_items",
        why="`del e[0]` shifts every item: `bufs[1]` is then the third tensor, not the buffer.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [torch.ones(n), buf, torch.ones(n)]
    e = bufs
    del e[0]
    bufs[1].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "alias_rebinds_the_entry",
        why="`e = d; e['a'] = other`: `d['a']` is no longer the buffer.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}
    e = d
    e["a"] = torch.ones(n)
    d["a"].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "closure_rebinds_the_entry",
        why="A closure that stores into the dict runs at `swap()`: `d['a']` is then another tensor.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}

    def swap():
        d["a"] = torch.ones(n)

    swap()
    d["a"].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "update_replaces_the_entry",
        why="`d.update(a=other)` replaces the entry: a method of the dict uses it as a whole.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}
    d.update(a=torch.ones(n))
    d["a"].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "computed_key_names_another_entry",
        why="`d[k]` with k == 'b' is the other tensor.",
        source=r"""import types

import torch


def f(n, k="b"):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf, "b": torch.ones(n)}
    d[k].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "holder_rebound_in_a_loop",
        why="The last iteration binds `d` to a dict holding the other tensor.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    for i in range(2):
        d = {"a": buf if i == 0 else torch.ones(n)}
    d["a"].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "setdefault_of_another_key",
        why="`d.setdefault('b', other)` returns the other tensor.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}
    d.setdefault("b", torch.ones(n)).fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
""",
    ),
    Case(
        "holder_passed_to_a_reader",
        why="`g(d)` reads the buffer through the dict before it is written.",
        source=r"""import types

import torch


def g(d):
    return d["a"].sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    d = {"a": buf}
    s = g(d)
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
        "comprehension_collects_the_other_first",
        why="`[t for t in (other, buf)]`: item 0 is the other tensor.",
        source=r"""import types

import torch


def f(n):
    buf = torch.zeros(n)  # <- site
    bufs = [t for t in (torch.ones(n), buf)]
    bufs[0].fill_(1)
    return buf
""",
        scenario="""
def run():
    return f(4)
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
