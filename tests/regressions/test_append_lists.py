"""Lists built by `.append`, `.extend` and `+=` and read whole by `torch.cat`/`torch.stack`
(analysis/dataflow/append_lists.py): the appended zeros are data the reader reads, `unsafe`
where nothing wrote them first. The name must provably hold a list made here that only grows
and reaches no other code; each way it may not (a receiver that is no list, an alias, a call
handed the list, an item replaced or reached through an index or iteration, a loop with no pass)
keeps today's answer.

Each case is a program whose allocation is marked `# <- site`; `tests/regressions/harness.py`
checks the verdict there and executes it with zeros and with poison (fix cases: as `zeroopt
apply` rewrites it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_verdict,
    params,
    poisoned_runs,
    site_findings,
    site_verdicts,
)

UNSAFE = frozenset({Verdict.UNSAFE})
UNPROVEN = frozenset({Verdict.UNPROVEN})

CASES = [
    Case(
        "cls_token_appended_then_concatenated",
        expect=UNSAFE,
        why="`tokens.append(cls_token)` puts the zeros in a list only this function holds; "
        "`torch.cat(tokens)` concatenates them as data (a ViT's class token).",
        source=r"""
import torch


def embed(hidden, register=None):
    tokens = [hidden]
    if register is not None:
        tokens.append(register)
    cls_token = torch.zeros_like(hidden[:, 0:1, :])  # <- site
    tokens.append(cls_token)
    return torch.cat(tokens, dim=1)
""",
        scenario=r"""
def run():
    return embed(torch.ones(2, 3, 4))
""",
    ),
    Case(
        "empty_rows_appended_in_a_loop_then_stacked",
        expect=UNSAFE,
        why="a row with no valid slot appends `zeros_like` and continues: the stack after the "
        "loop reads those zeros as the row's output (assuming the loop runs at least once).",
        source=r"""
import torch


def rows(q, valid):
    outputs = []
    for row in range(q.shape[0]):
        if not valid[row]:
            outputs.append(torch.zeros_like(q[row]))  # <- site
            continue
        outputs.append(q[row] * 2)
    return torch.stack(outputs)
""",
        scenario=r"""
def run():
    return rows(torch.ones(3, 4), [True, False, True])
""",
    ),
    Case(
        "new_zeros_pad_added_and_extended",
        expect=UNSAFE,
        why="`pads += [x.new_zeros(n)]` and `pads.extend([x])` only grow the list: the pad "
        "is concatenated as data by `torch.cat(pads)`.",
        source=r"""
import torch


def pad_front(x, n):
    pads = []
    pads += [x.new_zeros(n)]  # <- site
    pads.extend([x])
    if pads:
        return torch.cat(pads)
    return x
""",
        scenario=r"""
def run():
    return pad_front(torch.ones(3), 2)
""",
    ),
    Case(
        "padding_appended_until_the_length",
        expect=UNSAFE,
        why="`while len(outs) < n: outs.append(torch.zeros_like(ref))` pads a list that "
        "`torch.stack` then reads in full, the zero pads among the rows.",
        source=r"""
import torch


def pad_to(ref, n):
    outs = [ref]
    while len(outs) < n:
        outs.append(torch.zeros_like(ref))  # <- site
    return torch.stack(outs)
""",
        scenario=r"""
def run():
    return pad_to(torch.ones(2), 3)
""",
    ),
    Case(
        "temporal_embedding_appended_under_a_truth_test",
        expect=UNSAFE,
        why="`if pos: k = k + torch.stack(pos)`: the truth test looks at the length only, and "
        "the stack adds the appended zeros to `k`.",
        source=r"""
import torch


def embed(x, ids, table):
    pos = []
    for i in ids:
        if i == -1:
            pos.append(torch.zeros(x.shape[-1]))  # <- site
        else:
            pos.append(table[i])
    k = x
    if pos:
        k = k + torch.stack(pos, dim=0)
    return k
""",
        scenario=r"""
def run():
    return embed(torch.ones(2, 3), [-1, 0], torch.ones(4, 3))
""",
    ),
    Case(
        "appended_beside_an_item_store_into_another_tensor",
        expect=UNSAFE,
        why="`mask[i, n:] = True` stores into another tensor: no other name reaches the list, "
        "so the store cannot replace its item, and the stack reads the appended zeros.",
        source=r"""
import torch


def embed(x, ids, table, lens):
    pos = []
    mask = torch.ones(len(ids), 4, dtype=torch.bool)
    for i, t in enumerate(ids):
        if t == -1:
            pos.append(torch.zeros(x.shape[-1]))  # <- site
        else:
            pos.append(table[t])
        mask[i, lens[i] :] = False
    return x + torch.stack(pos, dim=0), mask
""",
        scenario=r"""
def run():
    return embed(torch.ones(2, 3), [-1, 0], torch.ones(4, 3), [1, 2])
""",
    ),
    Case(
        "lists_bound_in_pairs_then_concatenated",
        expect=UNSAFE,
        why="`pos, update = [], []` binds each name to its own new list: the update mask's "
        "zeros (False) appended for a conditioning frame are concatenated as data.",
        source=r"""
import torch


def layout(frames):
    pos, update = [], []
    for n in frames:
        pos.append(torch.arange(n))
        update.append(torch.zeros(n, dtype=torch.bool))  # <- site
    pos.append(torch.arange(2))
    update.append(torch.ones(2, dtype=torch.bool))
    return torch.cat(pos), torch.cat(update)
""",
        scenario=r"""
def run():
    return layout([3])
""",
    ),
    Case(
        "list_bound_in_a_pair_with_a_parameter",
        expect=UNPROVEN,
        why="`update, pos = [], frames`: only `update` gets a new list; `pos` is the caller's, "
        "so `pos.append(zeros)` stays an unknown call although the cat then reads them.",
        source=r"""
import torch


def layout(frames):
    update, pos = [], frames
    pos.append(torch.zeros(2))  # <- site
    update.append(torch.ones(2))
    return torch.cat(pos), torch.cat(update)
""",
        scenario=r"""
def run():
    return layout([torch.ones(1)])
""",
    ),
    Case(
        "appended_then_filled_before_the_cat",
        kind="fix",
        expect=frozenset({Verdict.SAFE}),
        why="the buffer is filled in full through its own name after the append and before "
        "`torch.cat` reads the list: the list holds that same tensor.",
        source=r"""
import torch


def embed(hidden):
    tokens = [hidden]
    cls_token = torch.zeros_like(hidden)  # <- site
    tokens.append(cls_token)
    cls_token.fill_(1)
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.full((2, 3), 2.0))
""",
    ),
    Case(
        "bytearray_receiver_appends_a_byte",
        expect=UNPROVEN,
        why="`data = bytearray()`: `data.append` is bytearray's, which reads the tensor's value "
        "through `__index__`; not a list made here, so the append stays an unknown call.",
        source=r"""
import torch


def flags():
    data = bytearray()
    flag = torch.zeros((), dtype=torch.uint8)  # <- site
    data.append(flag)
    return torch.tensor(list(data))
""",
        scenario=r"""
def run():
    return flags()
""",
    ),
    Case(
        "user_class_receiver_appends",
        expect=UNPROVEN,
        why="`tokens = Tokens()`: its `append` is the class's own code, not list.append, so the "
        "append stays a call the rule cannot follow (the zeros are read by the cat later).",
        source=r"""
import torch


class Tokens:
    def __init__(self):
        self.items = []

    def append(self, t):
        self.items.append(t)


def embed(h):
    tokens = Tokens()
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    tokens.append(h)
    return torch.cat(tokens.items)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
    Case(
        "list_rebound_to_a_parameter_before_the_cat",
        expect=UNPROVEN,
        why="on one path `tokens` is bound to a parameter's list: not a list made here only, "
        "so the append is not known to be list.append of that list.",
        source=r"""
import torch


def embed(h, other=None):
    tokens = []
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    if other is not None:
        tokens = other
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
    Case(
        "list_handed_to_a_function_before_the_cat",
        expect=UNPROVEN,
        why="`log(tokens)` hands the list to other code, which may change or write its items "
        "before the cat: the read is only possible.",
        source=r"""
import torch


def log(ts):
    return len(ts)


def embed(h):
    tokens = []
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    log(tokens)
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
]

# Not `unsafe`, and no poisoned run differs: the zeros are never read.
NEVER_READ_UNWRITTEN = [
    Case(
        "item_replaced_through_an_index_before_the_cat",
        why="`tokens[0] = h` replaces the appended zeros: the cat reads `h` twice.",
        source=r"""
import torch


def embed(h):
    tokens = []
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    tokens.append(h)
    tokens[0] = h
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
    Case(
        "items_filled_through_iteration_before_the_cat",
        why="`for t in tokens: t.fill_(1)` writes every item, the zeros among them.",
        source=r"""
import torch


def embed(h):
    tokens = []
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    for t in tokens:
        t.fill_(1)
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
    Case(
        "items_filled_by_a_function_handed_the_list",
        why="`fill_all(tokens)` writes every item before the cat reads them.",
        source=r"""
import torch


def fill_all(ts):
    for t in ts:
        t.fill_(2)


def embed(h):
    tokens = []
    cls_token = torch.zeros_like(h)  # <- site
    tokens.append(cls_token)
    fill_all(tokens)
    return torch.cat(tokens)
""",
        scenario=r"""
def run():
    return embed(torch.ones(3))
""",
    ),
    Case(
        "appended_in_a_loop_that_runs_no_pass",
        why="the buffer made before the loop is appended only by its passes: with no pass the "
        "stack reads only `x`.",
        source=r"""
import torch


def stack(x, qs):
    outs = [x]
    pad = torch.zeros_like(x)  # <- site
    for _ in qs:
        outs.append(pad)
    return torch.stack(outs)
""",
        scenario=r"""
def run():
    return stack(torch.ones(3), [])
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEVER_READ_UNWRITTEN))
def test_never_read_unwritten_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts and Verdict.UNSAFE not in verdicts, (case.name, line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (case.name, base, differences)


def test_a_buffer_made_in_a_loop_names_the_loop_it_assumes_runs() -> None:
    case = next(c for c in CASES if c.name == "empty_rows_appended_in_a_loop_then_stacked")
    (finding,) = site_findings(case, case.program)[case.sites[0]]
    assert finding.verdict is Verdict.UNSAFE
    assert "an item appended to the list `outputs`, which `torch.stack` reads" in finding.message
    assert "made on a pass of the loop at line 6, assuming it runs at least once" in finding.message


def test_a_buffer_made_before_the_loop_is_not_claimed_appended() -> None:
    case = NEVER_READ_UNWRITTEN[-1]
    (finding,) = site_findings(case, case.program)[case.sites[0]]
    assert finding.verdict is Verdict.UNPROVEN
    assert "possible read: an item appended to the list `outs`" in finding.message


def test_an_empty_appended_and_concatenated_is_read_for_the_guard() -> None:
    """ZO002: `torch.empty` appended and concatenated reads memory nobody wrote, as a zeros
    buffer's read does for ZO001."""
    case = Case(
        "empty_appended_then_concatenated",
        why="the empty's garbage is concatenated as data: the guard's read before any write.",
        source=r"""
import torch


def embed(h):
    tokens = [h]
    tokens.append(torch.empty(3))  # <- site
    return torch.cat(tokens)
""",
    )
    (finding,) = site_findings(case, case.source.lstrip("\n"))[case.sites[0]]
    assert finding.rule == "ZO002" and finding.verdict is Verdict.UNSAFE, finding
    assert "an item appended to the list `tokens`" in finding.message


def test_a_reader_in_the_loops_else_comes_after_its_passes() -> None:
    case = Case(
        "stacked_in_the_loops_else",
        why="the `else:` of a `for` runs once, after the passes: the note names the loop.",
        source=r"""
import torch


def rows(qs):
    outs = []
    for q in qs:
        outs.append(torch.zeros_like(q))  # <- site
    else:
        return torch.stack(outs)
""",
    )
    (finding,) = site_findings(case, case.source.lstrip("\n"))[case.sites[0]]
    assert finding.verdict is Verdict.UNSAFE
    assert "made on a pass of the loop at line 6, assuming it runs at least once" in finding.message
