"""The built-in custom-op library (analysis/kernel_library.py): every entry is well formed and
cites its source, and the dataflow applies it (reads, full writes, async collectives)."""

from __future__ import annotations

import ast

import pytest

from zeroopt.analysis.kernel_library import OP_CONTRACTS, op_contract_for
from zeroopt.scan.file_analysis import analyse_source


@pytest.mark.parametrize("op", OP_CONTRACTS, ids=lambda op: op.name)
def test_entries_are_well_formed(op) -> None:
    named = (
        op.reads | op.writes | op.accumulates | op.reads_writes | op.ignored | op.unless_false
        | op.writes_each | set(op.reads_part) | set(op.writes_part)
    )  # fmt: skip
    assert named <= set(op.params), sorted(named - set(op.params))
    effects = [op.reads, op.writes, op.accumulates, op.reads_writes, set(op.reads_part),
               set(op.writes_part), op.ignored, op.writes_each]  # fmt: skip
    for i, a in enumerate(effects):
        for b in effects[i + 1 :]:
            assert not (a & b), f"{op.name}: a parameter with two effects"
    assert len(op.source) > 20 and op.source[0].isalpha()
    assert len(set(op.params)) == len(op.params)
    assert op_contract_for(op.name) is not None


PROGRAM = """
import torch
import torch.distributed as dist
import deepspeed.comm as dscomm
from vllm import _custom_ops as ops


def reduce_zeros():
    t = torch.zeros(4)
    dist.all_reduce(t)
    return t


def reduce_partial(x):
    t = torch.zeros(4)
    t[:2] = x
    dist.all_reduce(t)
    return t


def reduce_async(x):
    t = torch.zeros(4)
    dist.all_reduce(t, async_op=True)
    t.copy_(x)
    return t


def reduce_async_positional(x):
    t = torch.zeros(4)
    dist.all_reduce(t, None, None, True)
    t.copy_(x)
    return t


def reduce_written(x):
    t = torch.zeros(4)
    t.copy_(x)
    dist.all_reduce(t)
    return t


def starts(logits, row_ends, out):
    z = torch.zeros_like(row_ends)
    ops.top_k_per_row_prefill(logits, z, row_ends, out, 3, 1, 1, 4)


def indices_part(logits, row_ends, n):
    out = torch.zeros(n, 4)
    ops.top_k_per_row_prefill(logits, row_ends, row_ends, out, 3, 1, 1, 4)
    return out


def ds_send():
    t = torch.zeros(4)
    dscomm.send(t, 1)


def receive(src):
    t = torch.empty(4)
    dist.broadcast(t, src)
    return t


def not_the_op(t):
    u = torch.zeros(4)
    all_reduce = print
    all_reduce(u)
"""


def verdicts() -> dict[str, tuple[str, str]]:
    result = analyse_source(PROGRAM.encode(), "ops.py")
    owner = {}
    for fn in ast.parse(PROGRAM).body:
        if isinstance(fn, ast.FunctionDef):
            for line in range(fn.lineno, (fn.end_lineno or fn.lineno) + 1):
                owner[line] = fn.name
    return {owner[f.line]: (f.verdict, f.message) for f in result.findings}


def test_contracts_decide_the_calls() -> None:
    v = verdicts()
    assert v["reduce_zeros"][0] == "unsafe"
    assert "distributed_c10d.py:3165" in v["reduce_zeros"][1]
    assert v["reduce_partial"][0] == "unproven"
    assert "contract of `torch.distributed.all_reduce`" in v["reduce_partial"][1]
    # Asynchronous: the op has not run when the call returns; unknown code, never a write.
    assert v["reduce_async"][0] == "unproven"
    assert v["reduce_async_positional"][0] == "unproven"
    assert v["reduce_written"][0] == "safe"
    assert v["starts"][0] == "unsafe" and "`row_starts` read" in v["starts"][1]
    assert v["indices_part"][0] == "unproven"
    assert "top_k_per_row_prefill" not in v["indices_part"][1]  # decided: returned half-written
    assert v["ds_send"][0] == "unsafe" and "deepspeed.comm.send" in v["ds_send"][1]
    assert v["not_the_op"][0] != "safe"
    # broadcast reads only on the source rank: an empty receive buffer is no ZO002 finding.
    assert "receive" not in v


LISTS = """
import torch
import torch.distributed as dist


def gathered(x, w):
    outs = [torch.zeros_like(x) for _ in range(w)]
    dist.all_gather(outs, x)
    return torch.cat(outs)


def gathered_async(x, w):
    outs = [torch.zeros_like(x) for _ in range(w)]
    work = dist.all_gather(outs, x, async_op=True)
    work.wait()
    return torch.cat(outs)


def display_list(x):
    a = torch.zeros_like(x)
    dist.all_gather([a], x)
    return a


def filtered(x, w, keep):
    outs = [torch.zeros_like(x) for i in range(w) if keep(i)]
    dist.all_to_all(outs, [x] * w)
    return outs


def appended(x, w):
    outs = [torch.zeros_like(x) for _ in range(w)]
    outs.append(x)
    dist.all_gather(outs, x)
    return torch.cat(outs)


def two_bindings(x, w, flag):
    outs = [torch.zeros_like(x) for _ in range(w)]
    if flag:
        outs = [torch.zeros_like(x) for _ in range(w)]
    dist.all_gather(outs, x)
    return torch.cat(outs)
"""


def test_list_output_contracts() -> None:
    """`writes_each`: the list of fresh buffers a comprehension made is written element by
    element; the async form, a list display (not followed), a list used before, and a name
    bound twice are not."""
    result = analyse_source(LISTS.encode(), "lists.py")
    by_fn: dict[str, list[str]] = {}
    for fn in ast.parse(LISTS).body:
        if isinstance(fn, ast.FunctionDef):
            by_fn[fn.name] = [
                f.verdict for f in result.findings if fn.lineno <= f.line <= (fn.end_lineno or 0)
            ]
    assert by_fn["gathered"] == ["safe"]
    assert by_fn["filtered"] == ["safe"]  # fewer elements: each one still written
    for name in ("gathered_async", "display_list", "appended"):
        assert by_fn[name] == ["unproven"], name
    assert by_fn["two_bindings"] == ["unproven", "unproven"]
    message = next(f.message for f in result.findings if f.verdict == "safe")
    assert "line 8" in message
    op = op_contract_for("torch.distributed.all_to_all")
    assert op is not None and op.writes_each == {"output_tensor_list"}
