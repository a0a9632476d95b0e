"""Collectives handed a process group this rank may not be in.

A rank outside `group` returns from `all_gather`, `all_gather_into_tensor`, `recv` and the other
collectives at once, writing nothing (torch 2.13 distributed_c10d.py `_rank_not_in_group`;
`new_group` hands such a rank `GroupMember.NON_GROUP_MEMBER`). Their built-in contracts write in
full only for the default group (`group` absent or `None`) or a GroupCoordinator's own
`device_group`/`cpu_group` (analysis/kernel_library.py `group_membership`), the assumption named
in the evidence. The scenarios pass `NON_GROUP_MEMBER`, which needs no process group.

The contracts hold neither where `*args`/`**kw` hide which argument is which, nor for an
asynchronous call (`async_op=True` by keyword or position; `irecv`, which returns before the
tensor arrives).

`CASES`: read unwritten on the run the scenario makes (poison changes the result): never `safe`.
`FIXES`: the default group and a coordinator's group stay `safe`. `NOT_YET_WRITTEN`: reads before
an asynchronous op completes, never `safe`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, params, site_verdicts

CASES = [
    Case(
        "all_gather_with_a_group_outside",
        why="On a rank outside `group`, `all_gather` returns without writing the list: the max "
        "reads the zeros (a rank that is not a member computes 0).",
        source=r"""
import torch
import torch.distributed as dist


def gather_sizes(world_size, local, group):
    sizes = [torch.zeros(1) for _ in range(world_size)]  # <- site
    dist.all_gather(sizes, local, group=group)
    return torch.stack(sizes).max()
""",
        scenario=r"""
def run():
    return gather_sizes(2, torch.ones(1), dist.GroupMember.NON_GROUP_MEMBER)
""",
    ),
    Case(
        "all_gather_into_tensor_group_by_position",
        why="`all_gather_into_tensor(out, x, group)` with the group third, positionally: outside "
        "it, nothing is written and the sum reads the zeros.",
        source=r"""
import torch
import torch.distributed as dist


def gather(x, n, group):
    out = torch.zeros(n)  # <- site
    dist.all_gather_into_tensor(out, x, group)
    return out.sum()
""",
        scenario=r"""
def run():
    return gather(torch.ones(2), 4, dist.GroupMember.NON_GROUP_MEMBER)
""",
    ),
    Case(
        "recv_from_a_group_outside",
        why="`recv(out, src, group)` returns -1 without receiving on a rank outside `group`.",
        source=r"""
import torch
import torch.distributed as dist


def receive(n, group):
    out = torch.zeros(n)  # <- site
    dist.recv(out, 0, group)
    return out.sum()
""",
        scenario=r"""
def run():
    return receive(3, dist.GroupMember.NON_GROUP_MEMBER)
""",
    ),
    Case(
        "group_in_star_args",
        why="`all_gather_into_tensor(out, *rest)`: the group hides in `rest`, here one this "
        "rank is not in; which argument is which is unknown, so no contract applies.",
        source=r"""
import torch
import torch.distributed as dist


def gather(x, n, rest):
    out = torch.zeros(n)  # <- site
    dist.all_gather_into_tensor(out, x, *rest)
    return out.sum()
""",
        scenario=r"""
def run():
    return gather(torch.ones(2), 4, (dist.GroupMember.NON_GROUP_MEMBER,))
""",
    ),
    Case(
        "group_in_double_star_keywords",
        why="`all_gather_into_tensor(out, x, **kw)` with the group in `kw`: no contract applies.",
        source=r"""
import torch
import torch.distributed as dist


def gather(x, n, kw):
    out = torch.zeros(n)  # <- site
    dist.all_gather_into_tensor(out, x, **kw)
    return out.sum()
""",
        scenario=r"""
def run():
    return gather(torch.ones(2), 4, {"group": dist.GroupMember.NON_GROUP_MEMBER})
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


# Reads before the op completes: shown with two processes, checked here by the verdict (a
# single-process group completes at once).
NOT_YET_WRITTEN = [
    Case(
        "async_op_by_position",
        why="`async_op=True` given positionally: the call returns before the gather ran, and "
        "the sum reads the zeros on a rank whose peers are late.",
        source=r"""
import torch
import torch.distributed as dist


def gather(x, n):
    out = torch.zeros(n)  # <- site
    work = dist.all_gather_into_tensor(out, x, None, True)
    total = out.sum()
    work.wait()
    return total
""",
    ),
    Case(
        "irecv_read_before_wait",
        why="`irecv` returns a request before the tensor arrives: reading before `wait()` reads "
        "the zeros.",
        source=r"""
import torch
import torch.distributed as dist


def receive(n):
    out = torch.zeros(n)  # <- site
    req = dist.irecv(out, 0)
    total = out.sum()
    req.wait()
    return total
""",
    ),
]


@pytest.mark.parametrize("case", params(NOT_YET_WRITTEN))
def test_read_before_completion_is_not_safe(case: Case) -> None:
    for line, verdicts in site_verdicts(case, case.source.lstrip("\n")).items():
        assert Verdict.SAFE not in verdicts, (line, verdicts)


FIXES = [
    Case(
        "default_group",
        why="`group` absent: the default group holds every rank, which all write the list.",
        source=r"""
import torch
import torch.distributed as dist


def gather_sizes(world_size, local):
    sizes = [torch.zeros(1) for _ in range(world_size)]  # <- site
    dist.all_gather(sizes, local)
    return torch.stack(sizes).max()
""",
    ),
    Case(
        "coordinator_device_group",
        why="A GroupCoordinator keeps as `device_group` only its own rank's group (vllm and "
        "sglang parallel_state.py): the rank is a member, assumed and said.",
        source=r"""
import torch
import torch.distributed as dist


def gather_sizes(world_size, local, sp_group):
    sizes = [torch.zeros(1) for _ in range(world_size)]  # <- site
    dist.all_gather(sizes, local, group=sp_group.device_group)
    return torch.stack(sizes).max()
""",
    ),
]


@pytest.mark.parametrize("case", params(FIXES))
def test_member_group_stays_safe(case: Case) -> None:
    for line, verdicts in site_verdicts(case, case.source.lstrip("\n")).items():
        assert verdicts == [Verdict.SAFE], (line, verdicts)
