"""ZO002 empty-read-before-write

## What it does
Finds `torch.empty`, `torch.empty_like`, `Tensor.new_empty` and `torch.empty_strided`
allocations that the analysis can see being read before anything is written, on some path: a
reduction, an operator, `+=`, a gather, a torch function taking the buffer as input, before any
full write.

## Why
`torch.empty` returns whatever the caching allocator last left in that memory: stale KV pages,
old lengths, NaN. A read of it is the classic silent bug of inference engines: illegal memory
accesses from garbage indices, NaN spreading through a batch, wrong tokens on some GPUs only.
This rule is the guard for hand-made or automated `zeros` -> `empty` rewrites: the pre-commit
hooks `zeroopt-check` and `zeroopt-guard` fail on it.

## Example
```python
def lengths(seq_lens, bs):
    cu = torch.empty(bs + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(seq_lens, 0)   # cu[0] is never written on any path ...
    return cu.sum()                      # ZO002: ... and this reads it (`return cu` would not)
def total(x):
    acc = torch.empty(4)
    acc += x                             # ZO002: read before any write
    return acc
```
Use `torch.zeros` where the initial value is read (here `acc`).

## The guard: `scan --since REF`
A change that introduces an empty, or turns a zeros into one, must prove itself. With
`--since REF` every `torch.empty`, `empty_like`, `new_empty` and `empty_strided` on a line
changed since git REF gets a verdict: `safe` (written in full before any read on every path,
exactly as ZO001 proves a zeros), `unsafe` (a read with nothing written, with the read as
evidence) or `unproven` (with what the analysis could not see, and a `decide` evidence line:
the `zeroopt verify SCENARIO --sites REPORT` command over the `--since` report, or the kernel
contract whose declaration would decide it). `unsafe` and `unproven` fail the scan; the
`zeroopt-guard` pre-commit hook runs it on the staged lines.

ZO002 runs the same analysis as ZO001, with the same assumptions (`zeroopt rule ZO001`):
buffers stored on `self` are followed across methods under the same lifecycle models, metadata
objects and coupled groups are the same, so a zeros and the empty it is rewritten to get the
same verdict. That includes the capture inputs of CUDA-graph runners (ZO001's page): an
empty a runner's `__init__` stores in its buffers object and its capture warm-up hands to the
model's forward before anything writes it is `unsafe`, under the same stated assumption. Only lines the change adds or modifies are looked at: a change that deletes the
write an old empty relied on is seen by a scan without `--since`, if the read is provable.

## Fix safety
No automatic fix: whether the right repair is `zeros`, a full write, or a different algorithm
is a judgement for the author. Without `--since`, only reads the analysis proves are reported
(`unsafe`); possible reads stay silent to keep this rule free of noise. A read is proven only where no write ran
before it on any path: after a write in a branch or a loop body on an earlier line (the
per-group loop, the flag that also sizes the buffer), whether the unwritten path is possible
depends on values the analysis does not track, and the finding is `unproven` with that write
named (ZO001 keeps calling such a zeros `unsafe`: there it is information, here it fails CI).
A read of the first element (index 0 along every dimension) is also proven when no write on any
path can cover it, exactly as ZO001 says (`zeroopt rule ZO001`: every write a slice or index with
a literal start past 0, the read an operator, a reduction or `x[0]`): then no path writes it,
and the evidence names the writes that skip it and assumes the buffer is not empty. Likewise a
read of a position every write leaves alone by a constant gap (`x[:-1] = v` on
`torch.empty(n + 1)`, then `x.sum()`; ZO001's constant gaps, dataflow/const_gaps.py): the
position exists for every size the allocation allows, and no path writes it. The padding and
index patterns of ZO001 (assumed: `n` need not be a multiple of the tile, the index need not
pick every position) never decide here, nor does a buffer written in part and returned to callers
the tree does not show (ZO001's analysis/returned_uncovered.py: it assumes the callers read what
the function returns; here that stays `unproven`).
Triton launches (analysis/triton_reads.py): only the element program 0 surely loads
(`indptr_ptr + pid` after `indptr[1:]` writes) decides here; a load, accumulation or atomic
assumed to run on some program (a mask, a test on per-program values) never does: a dummy
`torch.empty` that a kernel reads and discards is no bug.
The assumptions of ZO001 apply (`zeroopt rule ZO001`): fake implementations and meta tensors
have no data.
"""

from __future__ import annotations

from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.rules.decision import decide
from zeroopt.rules.rule import Example, Rule
from zeroopt.scan.findings import EMPTY_CALLS, Verdict


class EmptyReadBeforeWrite(Rule):
    __doc__ = __doc__
    code = "ZO002"
    name = "empty-read-before-write"
    summary = "torch.empty read before it is written: the values are garbage"
    calls = EMPTY_CALLS
    fixable = False
    certain_reads_only = True
    examples = (
        Example(
            """
            import torch

            def f(x):
                acc = torch.empty(4)
                acc += x
                return acc
            """,
            Verdict.UNSAFE,
        ),
        Example(
            """
            import torch

            def f(x):
                m = torch.empty_like(x)
                return m.max()
            """,
            Verdict.UNSAFE,
        ),
        Example(
            """
            import torch

            def f(seq_lens, bs):
                cu = torch.empty(bs + 1, dtype=torch.int32)
                cu[1:] = torch.cumsum(seq_lens, 0)
                return cu.sum()
            """,
            Verdict.UNSAFE,
            "element 0 no write covers, read by the sum",
        ),
        Example(
            """
            import torch

            def f(seq_lens, bs):
                cu = torch.empty(bs + 1, dtype=torch.int32)
                cu[1:] = torch.cumsum(seq_lens, 0)
                return cu
            """,
            None,
            "returned, not read: not reported",
        ),
        Example(
            """
            import torch

            def f(x):
                out = torch.empty(4)
                out.copy_(x)
                return out.sum()
            """,
            None,
            "written first",
        ),
        Example(
            """
            import torch

            def f(x, kernel):
                out = torch.empty(4)
                kernel(out)
                return out
            """,
            None,
            "opaque: not reported",
        ),
    )

    @classmethod
    def report(cls, call: str, outcome: BufferOutcome, every: bool = False) -> Verdict | None:
        if call not in cls.calls:
            return None
        verdict = decide(outcome)
        return verdict if every or verdict is Verdict.UNSAFE else None
