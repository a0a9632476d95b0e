"""zeroopt: turn provably-overwritten torch.zeros into torch.empty, soundly.

The repository root is this package: `X/Y.py` imports as `zeroopt.X.Y`. The stages, in the order
data flows: `scan` (files -> parsed modules -> findings), `analysis` (CFG, dataflow, lifecycle
models, torch semantics), `rules` (the verdict rules and their pages), `patcher` (findings ->
edits), `runtime_checks` (sites -> poisoned trials), `report` (findings -> text, JSON, SARIF),
`cli` (wires them together and renders).
"""

__version__ = "0.1.0"
