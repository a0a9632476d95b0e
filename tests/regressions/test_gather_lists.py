"""Lists of fresh buffers that a collective fills: `gathered = [torch.zeros_like(x) for _ in
range(w)]` then `torch.distributed.all_gather(gathered, x)` (analysis/dataflow/gather_lists.py,
kernel_library.py `writes_each`).

Every case runs for real: the scenario starts a Gloo process group of world size 1 in this
process (`file://` rendezvous in a temporary folder), so the single rank's `tensor` is the only
one gathered, and a list of any other length raises. `SAFE` cases are `fix` cases: the site is
`safe`, and the program as `zeroopt apply` rewrites it behaves the same. `CASES` are near misses
read unwritten: each must not be `safe`, and poisoned it must give another result.

The async case replaces `torch.distributed.all_gather` for its run by one that fills the list only
when `.wait()` is called: `async_op=True` promises nothing more (the work handle's `wait()` is
what orders the writes), and Gloo's worker thread would make the real timing a race.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

GROUP = r'''
def _group():
    import tempfile

    import torch.distributed as dist

    if not dist.is_initialized():
        where = tempfile.mkdtemp(prefix="zo-gloo-")
        dist.init_process_group("gloo", init_method=f"file://{where}/pg", rank=0, world_size=1)
'''


def scenario(body: str) -> str:
    return GROUP + "\n\n" + body.strip("\n") + "\n"


SAFE = [
    Case(
        "all_gather_into_a_list_then_concatenated",
        why=(
            "The sglang/vllm pattern: every tensor of the new list is filled by all_gather "
            "(rank i's tensor into element i) before `torch.cat` reads them."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_cols(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    dist.all_gather(gathered, local)
    return torch.cat(gathered, dim=1)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_cols(torch.arange(6.0).reshape(2, 3) - 2.5, 1)
"""),
        kind="fix",
    ),
    Case(
        "all_gather_by_keyword_with_a_group_then_iterated",
        why="The list by keyword, a GroupCoordinator's own group given (this rank is in it, "
        "assumed): each element written, then each one read.",
        source=r"""
import torch


def gather_sum(x, world, coordinator):
    outs = [torch.zeros(x.shape, dtype=x.dtype) for _ in range(world)]  # <- site
    torch.distributed.all_gather(tensor_list=outs, tensor=x, group=coordinator.device_group)
    total = torch.zeros(())
    for t in outs:
        total = total + t.sum() * 2
    return total, outs[0][1:]
""",
        scenario=scenario(r"""
def run():
    import types

    _group()
    coordinator = types.SimpleNamespace(device_group=None)
    return gather_sum(torch.tensor([1.5, -2.0, 3.0]), 1, coordinator)
"""),
        kind="fix",
    ),
    Case(
        "all_gather_of_sizes_read_by_a_generator",
        why=(
            "The sizes exchange of sglang's VAE decoders: the generator's first iterable is "
            "evaluated where it is made, after all_gather filled every element."
        ),
        source=r"""
import torch
import torch.distributed as dist


def max_size(results, world_size):
    local_size = torch.tensor([results.shape[0]], dtype=torch.int64)
    all_sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world_size)]  # <- site
    dist.all_gather(all_sizes, local_size)
    return torch.tensor(max(size.item() for size in all_sizes))
""",
        scenario=scenario(r"""
def run():
    _group()
    return max_size(torch.ones(5, 2), 1)
"""),
        kind="fix",
    ),
    Case(
        "all_to_all_into_a_list",
        why="all_to_all receives one tensor per rank into each element of the output list.",
        source=r"""
import torch
import torch.distributed as dist


def exchange(inputs):
    received = [torch.zeros_like(inputs[0]) for _ in inputs]  # <- site
    dist.all_to_all(received, inputs, async_op=False)
    return torch.stack(received)
""",
        scenario=scenario(r"""
def run():
    _group()
    return exchange([torch.tensor([4.0, -1.0])])
"""),
        kind="fix",
    ),
]

CASES = [
    Case(
        "async_all_gather_read_before_wait",
        why=(
            "`async_op=True`: the call returns a work handle; the list is written when the work "
            "completes, which only `wait()` orders. It is read before."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_async(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    work = dist.all_gather(gathered, local, async_op=True)
    out = torch.cat(gathered)
    work.wait()
    return out
""",
        scenario=scenario(r"""
class _Deferred:
    def __init__(self, outs, x):
        self.outs, self.x = outs, x

    def wait(self):
        for t in self.outs:
            t.copy_(self.x)
        return True


def _all_gather_later(tensor_list, tensor, group=None, async_op=False):
    work = _Deferred(tensor_list, tensor)
    if not async_op:
        work.wait()
        return None
    return work


def run():
    real = dist.all_gather
    dist.all_gather = _all_gather_later
    try:
        return gather_async(torch.tensor([1.0, 2.0]), 1)
    finally:
        dist.all_gather = real
"""),
    ),
    Case(
        "element_popped_before_the_collective",
        why="The popped buffer is not in the list all_gather fills; it is returned unwritten.",
        source=r"""
import torch
import torch.distributed as dist


def gather_keep_one(local, n):
    gathered = [torch.zeros_like(local) for _ in range(n)]  # <- site
    spare = gathered.pop()
    dist.all_gather(gathered, local)
    gathered.append(spare)
    return torch.cat(gathered)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_keep_one(torch.tensor([1.0, 2.0]), 2)
"""),
    ),
    Case(
        "element_read_before_the_collective",
        why="`gathered[0]` is read while every element is still unwritten.",
        source=r"""
import torch
import torch.distributed as dist


def gather_with_norm(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    before = gathered[0].abs().sum()
    dist.all_gather(gathered, local)
    return torch.cat(gathered) + before
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_with_norm(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "element_as_the_collective_input",
        why="The input is an element of the output list: unwritten data is what gets gathered.",
        source=r"""
import torch
import torch.distributed as dist


def gather_own(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    dist.all_gather(gathered, gathered[0])
    return torch.cat(gathered)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_own(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "alias_of_the_list_popped_before_the_collective",
        why=(
            "`other` is the same list: popping through it takes a buffer out of what all_gather "
            "fills, and it is read unwritten."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_alias(local, n):
    gathered = [torch.zeros_like(local) for _ in range(n)]  # <- site
    other = gathered
    spare = other.pop()
    dist.all_gather(gathered, local)
    return torch.cat([*gathered, spare])
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_alias(torch.tensor([1.0, 2.0]), 2)
"""),
    ),
    Case(
        "alias_of_the_list_read_before_the_collective",
        why="An element read through another name for the list, before all_gather fills it.",
        source=r"""
import torch
import torch.distributed as dist


def gather_alias_read(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    other = gathered
    first = other[0] * 3
    dist.all_gather(gathered, local)
    return first
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_alias_read(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "collective_raises_and_the_handler_reads",
        why=(
            "A list of the wrong length makes all_gather raise before writing anything; the "
            "handler reads the buffers."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_or_fallback(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    try:
        dist.all_gather(gathered, local)
    except RuntimeError:
        return torch.cat(gathered) + 1
    return torch.cat(gathered)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_or_fallback(torch.tensor([1.0, 2.0]), 2)
"""),
    ),
    Case(
        "collective_on_one_branch_only",
        why="Without the flag nothing fills the list before it is read.",
        source=r"""
import torch
import torch.distributed as dist


def gather_if(local, tp_size, flag):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    if flag:
        dist.all_gather(gathered, local)
    return torch.cat(gathered)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_if(torch.tensor([1.0, 2.0]), 1, False)
"""),
    ),
    Case(
        "element_replaced_before_the_collective",
        why=(
            "`gathered[0] = ...` puts another tensor in the list: the buffer taken out before is "
            "not what all_gather fills, and it is returned unwritten."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_replaced(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    keep = gathered[0]
    gathered[0] = torch.ones_like(local)
    dist.all_gather(gathered, local)
    return keep
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_replaced(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "element_deleted_before_the_collective",
        why="`del gathered[0]` takes a buffer out of the list all_gather fills; it is read.",
        source=r"""
import torch
import torch.distributed as dist


def gather_deleted(local, n):
    gathered = [torch.zeros_like(local) for _ in range(n)]  # <- site
    keep = gathered[0]
    del gathered[0]
    dist.all_gather(gathered, local)
    return keep * 2
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_deleted(torch.tensor([1.0, 2.0]), 2)
"""),
    ),
    Case(
        "list_rebound_before_the_collective",
        why="The name is bound to another list: the collective fills that one, not the buffers.",
        source=r"""
import torch
import torch.distributed as dist


def gather_rebound(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    first = gathered
    gathered = [torch.ones_like(local) for _ in range(tp_size)]
    dist.all_gather(gathered, local)
    return torch.cat(first)
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_rebound(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "generator_over_the_list_stepped_before_the_collective",
        why="The generator is made and stepped before all_gather: it reads an unwritten element.",
        source=r"""
import torch
import torch.distributed as dist


def first_then_gather(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site
    sums = (t.sum() for t in gathered)
    first = next(sums)
    dist.all_gather(gathered, local)
    return first + torch.cat(gathered).sum()
""",
        scenario=scenario(r"""
def run():
    _group()
    return first_then_gather(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
    Case(
        "list_used_by_a_closure",
        why=(
            "A nested function reaches the list: the name is not the only way to it, and the "
            "closure reads an element before the collective."
        ),
        source=r"""
import torch
import torch.distributed as dist


def gather_peek(local, tp_size):
    gathered = [torch.zeros_like(local) for _ in range(tp_size)]  # <- site

    def peek():
        return gathered[0].sum()

    seen = peek()
    dist.all_gather(gathered, local)
    return torch.cat(gathered) + seen
""",
        scenario=scenario(r"""
def run():
    _group()
    return gather_peek(torch.tensor([1.0, 2.0]), 1)
"""),
    ),
]


@pytest.mark.parametrize("case", params([*SAFE, *CASES]))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
