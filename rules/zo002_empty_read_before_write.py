"""ZO002 empty-read-before-write

## What it does
Finds `torch.empty`, `torch.empty_like` and `Tensor.new_empty` allocations that the analysis can
see being read before anything is written, on some path: a reduction, an operator, `+=`, a
gather, a torch function taking the buffer as input, before any full write.

## Why
`torch.empty` returns whatever the caching allocator last left in that memory: stale KV pages,
old lengths, NaN. A read of it is the classic silent bug of inference engines: illegal memory
accesses from garbage indices, NaN spreading through a batch, wrong tokens on some GPUs only.
This rule is the guard for hand-made or automated `zeros` -> `empty` rewrites: the pre-commit
hook `zeroopt-check` fails on it.

## Example
```python
def lengths(seq_lens, bs):
    cu = torch.empty(bs + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(seq_lens, 0)   # cu[0] is never written ...
    return cu                            # ... only partial writes: `unproven`, not reported
def total(x):
    acc = torch.empty(4)
    acc += x                             # ZO002: read before any write
    return acc
```
Use `torch.zeros` where the initial value is read (here `acc`).

## Fix safety
No automatic fix: whether the right repair is `zeros`, a full write, or a different algorithm
is a judgement for the author. Only reads the analysis proves are reported (`unsafe`); possible
reads stay silent to keep this rule free of noise. A read is proven only where no write ran
before it on any path: after a write in a branch or a loop body on an earlier line (the
per-group loop, the flag that also sizes the buffer), whether the unwritten path is possible
depends on values the analysis does not track, and the finding is `unproven` with that write
named (ZO001 keeps calling such a zeros `unsafe`: there it is information, here it fails CI).
The assumptions of ZO001 apply (`zeroopt rule ZO001`): fake implementations and meta tensors
have no data.
"""

from __future__ import annotations

from zeroopt.scan.findings import EMPTY_CALLS, Verdict
from zeroopt.analysis.buffer_flow import BufferOutcome
from zeroopt.rules.rule import Example, Rule
from zeroopt.rules.verdict import decide

_HEADER = "import torch\n\n"


class EmptyReadBeforeWrite(Rule):
    __doc__ = __doc__
    code = "ZO002"
    name = "empty-read-before-write"
    summary = "torch.empty read before it is written: the values are garbage"
    calls = EMPTY_CALLS
    fixable = False
    examples = (
        Example(_HEADER + "def f(x):\n    acc = torch.empty(4)\n    acc += x\n    return acc\n", Verdict.UNSAFE),
        Example(_HEADER + "def f(x):\n    m = torch.empty_like(x)\n    return m.max()\n", Verdict.UNSAFE),
        Example(_HEADER + "def f(x):\n    out = torch.empty(4)\n    out.copy_(x)\n    return out.sum()\n", None, "written first"),
        Example(_HEADER + "def f(x, kernel):\n    out = torch.empty(4)\n    kernel(out)\n    return out\n", None, "opaque: not reported"),
    )  # fmt: skip

    @classmethod
    def report(cls, call: str, outcome: BufferOutcome) -> Verdict | None:
        if call not in cls.calls:
            return None
        return Verdict.UNSAFE if decide(outcome) is Verdict.UNSAFE else None
