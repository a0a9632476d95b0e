"""Data flows one way: files -> findings -> edits or trials -> renderers, wired by the CLI.

Every `zeroopt.*` import (lazy and type-only ones included) goes to the importer's own stage or
an earlier one. The findings dataclasses and site identities are the data every stage shares.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = {
    "analysis": 0,
    "rules": 1,
    "scan": 2,
    "patcher": 3,
    "runtime_checks": 3,
    "report": 4,
    "cli": 5,
}
SHARED = ("zeroopt.scan.findings", "zeroopt.scan.site_identity")
# The one deliberate edge back: a finding's fix is the codemod's output (docs/contracts.md).
ALLOWED = {("zeroopt.scan.file_analysis", "zeroopt.patcher.codemod")}


def _imports(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(m, line) for m, line in found if m.startswith("zeroopt.")]


def test_imports_follow_the_data() -> None:
    wrong = []
    for folder, stage in STAGE.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            module = ".".join(("zeroopt", *path.relative_to(ROOT).with_suffix("").parts))
            for target, line in _imports(path):
                parts = target.split(".")
                if len(parts) < 2 or parts[1] not in STAGE or target.startswith(SHARED):
                    continue
                other = parts[1]
                backwards = STAGE[other] > stage or (STAGE[other] == stage and other != folder)
                if backwards and (module, target) not in ALLOWED:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_backward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from zeroopt.report.json import render\n")
    assert _imports(probe) == [("zeroopt.report.json", 2)]
