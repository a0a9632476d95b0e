"""Follow one allocation through its function: every read, write, alias, view and escape.

`analyse_buffer` (fixpoint.py) runs a forward dataflow over the function's CFG (analysis/cfg.py)
with the state of analysis/state.py, then one last pass over the fixpoint that records what
decides the verdict. The evaluator is one class built in layers, one module each, in the order
they depend on each other: effects (what a read, write, alias or escape does to the state), stores
(assignment targets, records and dicts holding views), calls (torch functions and methods as data,
kernel contracts, unknown callees), expressions (Python's evaluation order) and statements (one CFG
node). Whatever it does not recognise is a possible read, never silently ignored.
"""

from zeroopt.analysis.dataflow.fixpoint import analyse_buffer
from zeroopt.analysis.dataflow.outcome import (
    UNPROVEN,
    UNSAFE,
    VIEW_READ,
    BufferOutcome,
    Context,
    Issue,
)

__all__ = ["UNPROVEN", "UNSAFE", "VIEW_READ", "BufferOutcome", "Context", "Issue", "analyse_buffer"]
