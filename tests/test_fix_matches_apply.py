"""The fix a report offers is exactly what `zeroopt apply` writes.

Both come from the codemod: the scan asks it for the new text of every fixable `safe` call of a
file (and of the import statement a rewrite extends), apply asks it to rewrite the file. Checked
here end to end on the bundled fixtures, every rule example and the import spellings the codemod
chooses between: applying each finding's JSON fix to the original text gives byte for byte what
`apply --diff` writes, a fix that apply would skip is not offered, and SARIF carries the same
replacements.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[1]

# Spellings that need an import change, one per choice the codemod makes.
IMPORT_CASES = {
    "in_function.py": (
        "def f(n):\n    from torch import zeros\n    a = zeros(n)\n    a.fill_(1)\n    return a\n"
    ),
    # A module-level import never gains the public name `empty`: an underscore alias instead.
    "module_level.py": (
        "from torch import zeros\n\n\ndef f(n):\n    a = zeros(n)\n    a.fill_(1)\n"
        "    b = zeros(n, 2)\n    b.fill_(2)\n    return a, b\n"
    ),
    "under_if.py": (
        "if True:\n    from torch import zeros\ndef f(n):\n    a = zeros(n)\n    a.fill_(1)\n"
        "    return a\n"
    ),
    "with_module.py": (
        "import torch\nfrom torch import zeros\n\n\ndef f(n):\n    a = zeros(n)\n"
        "    a.fill_(1)\n    return a\n"
    ),
    "semicolon.py": (
        "import os; from torch import (zeros as z,\n    ones); X = 1\n\n\ndef f(n):\n"
        "    a = z(n)\n    a.fill_(1)\n    return a, os, ones\n"
    ),
}


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    for rule in ALL_RULES:
        for i, example in enumerate(rule.examples):
            (tmp_path / "examples").mkdir(exist_ok=True)
            (tmp_path / "examples" / f"{rule.code}_{i}.py").write_text(example.source)
    (tmp_path / "imports").mkdir()
    for name, text in IMPORT_CASES.items():
        (tmp_path / "imports" / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _offset(lines: list[str], line: int, col: int) -> int:
    return sum(len(x) for x in lines[: line - 1]) + col - 1


def _apply_fixes(text: str, findings: list[dict[str, Any]]) -> str:
    """The text with every finding's fix applied; a fix inside another's span (a nested call)
    is already part of the outer replacement, and an import edit shared by two fixes counts once."""
    lines = text.splitlines(keepends=True)
    spans: dict[tuple[int, int], str] = {}
    for f in findings:
        fix = f["fix"]
        parts = [(f, fix["replacement"])] + [(e, e["replacement"]) for e in fix.get("edits", ())]
        for where, new in parts:
            start = _offset(lines, where["line"], where["col"])
            end = _offset(lines, where["end_line"], where["end_col"])
            assert spans.get((start, end), new) == new, "two fixes disagree on one span"
            spans[(start, end)] = new
    outer = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    for start, end in sorted(outer, reverse=True):
        text = text[:start] + spans[(start, end)] + text[end:]
    return text


def test_every_fix_is_what_apply_writes(tree: Path) -> None:
    _, out = _invoke("scan", ".", "--format", "json", "--no-cache", "--exit-zero")
    findings = json.loads(out)["findings"]
    fixed = [f for f in findings if f["fix"] is not None]
    assert len({f["path"] for f in fixed}) >= 10, "the corpus lost its fixable findings"
    assert any(f["fix"].get("edits") for f in fixed), "no fix extends an import"
    originals = {p: (tree / p).read_text() for p in {f["path"] for f in fixed}}

    code, patch = _invoke("apply", ".", "--diff", "--no-cache")
    assert code == 1 and patch.strip(), patch
    subprocess.run(["git", "apply", "-"], input=patch, text=True, check=True, cwd=tree)

    changed = {p for p in originals if (tree / p).read_text() != originals[p]}
    assert changed == set(originals), "apply left a fixable file alone, or changed another"
    for path, text in originals.items():
        mine = [f for f in fixed if f["path"] == path]
        assert _apply_fixes(text, mine) == (tree / path).read_text(), path


def test_fix_spells_the_name_apply_adds(tree: Path) -> None:
    _, out = _invoke("scan", "imports", "--format", "json", "--no-cache", "--exit-zero")
    fixes = {
        (Path(f["path"]).name, f["line"]): f["fix"]
        for f in json.loads(out)["findings"]
        if f["fix"] is not None
    }
    # Under `if`, the module-level import gains an underscore alias, and the fix uses it.
    assert fixes[("under_if.py", 4)] == {
        "replacement": "_torch_empty(n)",
        "edits": [
            {
                "line": 2,
                "col": 5,
                "end_line": 2,
                "end_col": 28,
                "replacement": "from torch import zeros, empty as _torch_empty",
            }
        ],
    }
    # The file's own `import torch` is used before any import is extended: no edit.
    assert fixes[("with_module.py", 6)] == {"replacement": "torch.empty(n)"}
    # Two calls share the one alias added to one statement.
    first, second = fixes[("module_level.py", 5)], fixes[("module_level.py", 7)]
    assert first["replacement"] == "_torch_empty(n)"
    assert second["replacement"] == "_torch_empty(n, 2)"
    assert first["edits"] == second["edits"]


def test_sarif_offers_the_same_replacements(tree: Path) -> None:
    _, out = _invoke("scan", "imports", "--format", "json", "--no-cache", "--exit-zero")
    by_site = {
        (f["path"], f["line"], f["col"]): f["fix"]
        for f in json.loads(out)["findings"]
        if f["fix"] is not None
    }
    _, sarif = _invoke("scan", "imports", "--format", "sarif", "--no-cache", "--exit-zero")
    results = json.loads(sarif)["runs"][0]["results"]
    seen = 0
    for r in results:
        if "fixes" not in r:
            continue
        loc = r["locations"][0]["physicalLocation"]
        key = (loc["artifactLocation"]["uri"], loc["region"]["startLine"])
        key3 = (*key, loc["region"]["startColumn"])
        fix = by_site[key3]
        replacements = r["fixes"][0]["artifactChanges"][0]["replacements"]
        texts = [x["insertedContent"]["text"] for x in replacements]
        assert texts == [fix["replacement"], *(e["replacement"] for e in fix.get("edits", ()))]
        seen += 1
    assert seen == len(by_site) > 0
