"""Running trials in parallel: one GPU per trial process when several are visible.

A trial gets a slot for its whole life: on a GPU machine the slot is one device id, handed to
the trial as CUDA_VISIBLE_DEVICES, so each trial process sees exactly one GPU and a crash (an
illegal memory access poisons its CUDA context) stays in its own process. Slots go round-robin
over the GPUs: with as many jobs as GPUs (the default) no two trials share one; more jobs than
GPUs put several trials on each (a big GPU has room for several small trials). On CPU
every slot is None and nothing is pinned. The number of GPUs is whatever is visible: the ids in
CUDA_VISIBLE_DEVICES when set (UUIDs and MIG ids are passed through unchanged), else every
device torch counts.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

DEVICES_ENV = "CUDA_VISIBLE_DEVICES"


def visible_gpus(env: Mapping[str, str] | None = None) -> list[str]:
    """The ids of the GPUs a child process may use, as CUDA_VISIBLE_DEVICES spells them."""
    env = os.environ if env is None else env
    value = env.get(DEVICES_ENV)
    if value is not None:
        ids = [part.strip() for part in value.split(",") if part.strip()]
        # CUDA stops at the first invalid id; "-1" is the usual way to hide every device.
        out: list[str] = []
        for part in ids:
            if part.startswith("-"):
                break
            out.append(part)
        return out
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except Exception:  # no torch, or a broken driver: no GPU to schedule
        return []


def plan_slots(jobs: int, gpus: Sequence[str] | None) -> list[str | None]:
    """The `jobs` slots trials run in: CPU slots (None), or GPU ids spread round-robin."""
    jobs = max(1, jobs)
    if not gpus:
        return [None] * jobs
    return [gpus[i % len(gpus)] for i in range(jobs)]


def slot_env(env: Mapping[str, str], slot: str | None) -> dict[str, str]:
    """`env` for a trial in `slot`: CUDA_VISIBLE_DEVICES pinned to its GPU when it has one."""
    out = dict(env)
    if slot is not None:
        out[DEVICES_ENV] = slot
    return out


def run_in_slots(
    items: Sequence[T], slots: Sequence[str | None], work: Callable[[T, str | None], None]
) -> None:
    """Call `work(item, slot)` for every item, at most one item per slot at any time (slots
    may repeat a GPU id: each repeat is one more concurrent trial on that GPU)."""
    if len(slots) <= 1 or len(items) <= 1:
        slot = slots[0] if slots else None
        for item in items:
            work(item, slot)
        return
    free: queue.Queue[str | None] = queue.Queue()
    for slot in slots:
        free.put(slot)

    def one(item: T) -> None:
        slot = free.get()
        try:
            work(item, slot)
        finally:
            free.put(slot)

    with ThreadPoolExecutor(len(slots)) as pool:
        list(pool.map(one, items))
