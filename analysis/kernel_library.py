"""Built-in contracts of custom ops (sgl_kernel, vllm._C, flashinfer, deep_gemm, collectives):
what each reads, writes in full, writes in part and accumulates, with the source it was read
from. Same vocabulary as `[tool.zeroopt.kernels]`; filled below."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OpContract:
    name: str  # qualified name as resolved through imports
    params: tuple[str, ...]  # positional order
    reads: frozenset[str] = frozenset()  # read in full
    reads_part: dict[str, str] = field(default_factory=dict)  # param -> which part
    writes: frozenset[str] = frozenset()  # written in full, not read
    writes_part: dict[str, str] = field(default_factory=dict)  # param -> which part
    accumulates: frozenset[str] = frozenset()  # read (possibly) and written in part
    reads_writes: frozenset[str] = frozenset()  # read in full, then written in full
    ignored: frozenset[str] = frozenset()  # scalars, flags, dtypes, groups
    unless_false: frozenset[str] = frozenset()  # the contract holds only if this is False/absent
    source: str = ""


OP_CONTRACTS: tuple[OpContract, ...] = ()


def op_contract_for(qualified: str | None) -> OpContract | None:
    if not qualified:
        return None
    for op in OP_CONTRACTS:
        if op.name == qualified:
            return op
    return None
