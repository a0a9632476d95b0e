"""Holders made in the function: dict, list and tuple displays, `dict(k=...)` and
`types.SimpleNamespace(k=...)` (analysis/dataflow/holders.py): what is safe, what is `unsafe`,
and each way the analysis gives up (aliases, a closure, a negative index, `del`, a computed key,
a method of the holder, a loop that rebinds it, a callee, a generator expression stepped later).
One holder reached through several names or paths: test_holder_aliases.py.

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
        "list_display_concatenated",
        expect=UNSAFE,
        why="`torch.cat(tokens)` reads every tensor of the list display `tokens`, the zeros "
        "among them, before anything wrote them.",
        source=r"""
import torch


def f(h):
    cls = torch.zeros_like(h)  # <- site
    tokens = [h, cls]
    return torch.cat(tokens, dim=1)
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3))
""",
    ),
    Case(
        "tuple_display_stacked",
        expect=UNSAFE,
        why="`torch.stack` reads every tensor of the tuple: the zeros are stacked as data.",
        source=r"""
import torch


def f(h):
    pad = torch.zeros_like(h)  # <- site
    parts = (h, pad)
    return torch.stack(parts)
""",
        scenario=r"""
def run():
    return f(torch.ones(4))
""",
    ),
    Case(
        "list_display_concatenated_after_a_full_write",
        kind="fix",
        expect=frozenset({Verdict.SAFE}),
        why="the element is written in full through its own name before `cat` reads the list.",
        source=r"""
import torch


def f(h):
    cls = torch.zeros_like(h)  # <- site
    tokens = [h, cls]
    cls.copy_(h * 2)
    return torch.cat(tokens, dim=1)
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3))
""",
    ),
    Case(
        "list_rebound_on_a_branch_before_cat",
        expect=frozenset({Verdict.UNPROVEN}),
        why="on one branch the name holds another list: the read of the zeros is only possible.",
        source=r"""
import torch


def f(h, c):
    cls = torch.zeros_like(h)  # <- site
    tokens = [h, cls]
    if c:
        tokens = [h, h]
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return f(torch.ones(3), False)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
