"""A buffer returned as one slot of a tuple, list or dict display, followed to the callers that
take it out (analysis/returned_slots.py), and public functions judged at their calls with
`callers-closed = true` (analysis/returned.py).

"fix" cases: every caller unpacks the result and writes the buffer's slot in full before reading
it; the site is `safe` and the rewritten program behaves the same. The others are near misses
that read the buffer unwritten through a use the judging must not take for the slot: a read of
the slot first, the display handed on whole, a second caller, a starred unpacking, an index by
a variable, the buffer in two slots, the display returned further up to a reader, a public
function called from outside the tree, a framework calling a public method by its name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import AnalysisOptions, Case, Verdict, check_case, params

UNSAFE_ONLY = frozenset({Verdict.UNSAFE})
CALLERS_CLOSED = AnalysisOptions(callers_closed=True)

CASES = [
    Case(
        "tuple_unpacked_and_the_slot_filled",
        kind="fix",
        why="`_attn` returns `(out, lse)`; its one caller unpacks it and writes `out` in full "
        "before reading it: the zeros are never seen.",
        source=r"""
import torch


def _attn(q):
    out = torch.zeros_like(q)  # <- site
    lse = q.sum(dim=-1)
    return out, lse


def forward(q):
    o, lse = _attn(q)
    o.copy_(q * 2)
    return o + lse[:, None]
""",
        scenario=r"""
import torch


def run():
    return forward(torch.arange(6.0).reshape(2, 3))
""",
    ),
    Case(
        "slot_taken_by_a_literal_index_and_a_dict_key",
        kind="fix",
        why="`r = _mk(n); b = r[1]` and `d = _named(n); d['buf']` name the buffer's slot of a "
        "display the caller keeps private; both write it in full first.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return n, buf, 2 * n


def _named(n):
    buf = torch.zeros(n, 2)  # <- site
    return {"size": n, "buf": buf}


def by_index(n):
    r = _mk(n)
    b = r[1]
    b.fill_(3.0)
    return b * r[2]


def by_key(n):
    d = _named(n)
    d["buf"].copy_(torch.ones(n, 2))
    return d["buf"].sum() + d["size"]
""",
        scenario=r"""
def run():
    return by_index(4), by_key(3)
""",
    ),
    Case(
        "tuple_returned_up_and_unpacked_there",
        kind="fix",
        why="`_pass` returns `_mk(n)` as it is; its caller unpacks it and fills the buffer.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def _pass(n):
    return _mk(n)


def use(n):
    b, m = _pass(n)
    b.fill_(2.0)
    return b * m
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "public_function_with_callers_closed",
        kind="fix",
        options=CALLERS_CLOSED,
        why="`make` is public; with `callers-closed = true` its calls in the tree are all its "
        "calls, and each writes the buffer in full first.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def use(n):
    b, m = make(n)
    b.fill_(1.5)
    return b * m
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "caller_reads_the_slot_before_writing",
        expect=UNSAFE_ONLY,
        why="The caller sums element 1 (the zeros) before filling it.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return n, buf


def use(n):
    m, b = _mk(n)
    s = b.sum()
    b.fill_(1.0)
    return s + b.sum() * m
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "caller_hands_the_whole_tuple_on",
        why="The caller passes the tuple to a helper that reads the buffer's slot.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def peek(pair):
    return pair[0].sum()


def use(n):
    r = _mk(n)
    return peek(r)
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "two_callers_one_reads",
        expect=UNSAFE_ONLY,
        why="One caller fills the slot; the other reads it first.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def fills(n):
    b, m = _mk(n)
    b.fill_(1.0)
    return b * m


def reads(n):
    b, m = _mk(n)
    return b.sum() + m
""",
        scenario=r"""
def run():
    return fills(2), reads(3)
""",
    ),
    Case(
        "starred_unpacking",
        why="`*rest, b = _mk(n)`: the starred unpacking is not followed; `b` is read unwritten.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return n, n + 1, buf


def use(n):
    *rest, b = _mk(n)
    return b.sum() + rest[0]
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "index_by_a_variable",
        why="`r[i]` with `i == 0` at run time is the buffer, read unwritten; the slot written "
        "is never the one read.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, torch.ones(n)


def use(n, i):
    r = _mk(n)
    r[1].fill_(2.0)
    return r[i].sum()
""",
        scenario=r"""
def run():
    return use(3, 0)
""",
    ),
    Case(
        "the_display_holds_the_buffer_twice",
        why="`return buf, buf`: the caller fills element 0 after reading element 1, the same "
        "buffer.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, buf


def use(n):
    a, b = _mk(n)
    s = b.sum()
    a.fill_(1.0)
    return a, s
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "display_returned_up_to_a_reader",
        expect=UNSAFE_ONLY,
        why="`_pass` returns the tuple as it is; its caller reads the buffer's slot first.",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def _pass(n):
    return _mk(n)


def use(n):
    b, m = _pass(n)
    return b.sum() * m
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "display_kept_by_name_and_returned_up",
        why="The caller binds the tuple to a name and returns the name: its caller reads the "
        "slot (a name returned whole is not followed).",
        source=r"""
import torch


def _mk(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def _pass(n):
    r = _mk(n)
    return r


def use(n):
    b, m = _pass(n)
    return b.sum() * m
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    Case(
        "public_function_called_from_outside_the_tree",
        why="`make` is public and, without `callers-closed`, callers outside the tree are "
        "assumed: another module reads what it returns.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def use(n):
    b, m = make(n)
    b.fill_(1.0)
    return b * m
""",
        scenario=r"""
def run():
    import outside_reader

    return use(2), outside_reader.peek(3)
""",
        modules=(
            (
                "outside_reader",
                "from public_function_called_from_outside_the_tree import make\n\n\n"
                "def peek(n):\n    return make(n)[0].sum()\n",
            ),
        ),
    ),
    Case(
        "public_function_re_exported_by_a_star_import",
        options=CALLERS_CLOSED,
        why="With `callers-closed = true`: a module re-exports `make` by `import *` (never "
        "spelling it) and a third module, which never names the first, reads what it returns.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def use(n):
    b, m = make(n)
    b.fill_(1.0)
    return b * m
""",
        scenario=r"""
def run():
    import star_user

    return use(2), star_user.peek(3)
""",
        modules=(
            (
                "star_reexport",
                "from public_function_re_exported_by_a_star_import import *  # noqa: F403\n",
            ),
            (
                "star_user",
                "from star_reexport import make\n\n\ndef peek(n):\n    return make(n)[0].sum()\n",
            ),
        ),
    ),
    Case(
        "public_function_fetched_by_a_computed_name_from_a_star_re_export",
        options=CALLERS_CLOSED,
        why="With `callers-closed = true`: a module star-imports this one; a third module, "
        "which never names this one nor `make`, fetches `make` from the re-exporting module by "
        "a joined name and reads what it returns.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf, n


def use(n):
    b, m = make(n)
    b.fill_(1.0)
    return b * m
""",
        scenario=r"""
def run():
    import joined_user

    return use(2), joined_user.peek(3)
""",
        modules=(
            (
                "joined_reexport",
                "from public_function_fetched_by_a_computed_name_from_a_star_re_export import *  "
                "# noqa: F403\n",
            ),
            (
                "joined_user",
                "import joined_reexport\n\n\ndef peek(n):\n"
                "    fn = getattr(joined_reexport, 'ma' + 'ke')\n    return fn(n)[0].sum()\n",
            ),
        ),
    ),
    Case(
        "public_method_called_by_its_base_class",
        options=CALLERS_CLOSED,
        why="With `callers-closed = true`: `forward` is only spelled in `self.forward(n)`, "
        "which fills it, but `torch.nn.Module.__call__` calls it by name and `m(3)` reads "
        "the zeros.",
        source=r"""
import torch


class Z(torch.nn.Module):
    def forward(self, n):
        return torch.zeros(n)  # <- site

    def direct(self, n):
        t = self.forward(n)
        t.fill_(1.0)
        return t
""",
        scenario=r"""
def run():
    m = Z()
    return m.direct(2), m(3)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
