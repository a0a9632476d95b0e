"""What the analysis may be told from outside the source: declared kernel contracts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Contract:
    """A callee that fully writes some of its arguments without reading them first.

    `writes` holds positions (int) and/or keyword names (str) of the arguments written in full.
    Every other tensor argument is treated as read. `source` says where the contract comes from.
    """

    function: str  # qualified name as resolved through imports, e.g. "my_kernels.fill_meta"
    writes: tuple[int | str, ...]
    source: str = "user"


@dataclass(frozen=True)
class AnalysisOptions:
    contracts: tuple[Contract, ...] = field(default_factory=tuple)
    # Extra lifecycle models from `[tool.zeroopt.lifecycles]` (rules.lifecycles.Lifecycle).
    lifecycles: tuple[Any, ...] = field(default_factory=tuple)
    # Kernel contracts from `[tool.zeroopt.kernels]` (rules.kernel_contracts.KernelContract).
    kernels: tuple[Any, ...] = field(default_factory=tuple)
    # Give every torch.empty* a ZO002 verdict (`safe`, `unsafe`, `unproven`), as `scan --since`
    # does for the lines a change touches; otherwise ZO002 reports only `unsafe` empties.
    judge_empties: bool = False
    # Closed world (analysis/methods.py): every class whose instances a method's `self` can be
    # is defined in the scanned tree, so `self.m(buf)` runs the class's own `def m` when no
    # class of the tree that derives from it binds `m`. `closed-world = false` turns it off.
    closed_world: bool = True
    # Callers closed (analysis/returned.py): a public function, or a public method of a class
    # with no base, that returns a buffer is judged at its calls in the scanned tree as a
    # private one is, assuming no code outside the tree calls it. `callers-closed = true`.
    callers_closed: bool = False
    # Why the files scanned are not the whole tree (files named one by one, as pre-commit passes
    # the staged ones; source from stdin): the closed world is off, since the rest of the tree
    # (subclasses, callers, reflection) is not seen. "" for a scan of directories.
    partial_tree: str = ""
