"""The scan's fix without libcst (scan/fixes.py) is byte for byte the codemod's.

Over every source we have with a `safe` finding (the bundled fixtures, every rule example, every
regression case, the spellings below), the fix each finding carries is compared with what the
codemod (the writer `zeroopt apply` uses) gives for the same sites of the same file, and the
textual path must have been taken for the plain spellings, declined for those it does not model.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.regressions.harness import Case
from zeroopt.patcher.codemod import RewriteSite, Success, rewrite_source
from zeroopt.rules import ALL_RULES
from zeroopt.scan.file_analysis import _NEWLINE, analyse_source
from zeroopt.scan.findings import Fix, Verdict, char_col
from zeroopt.scan.fixes import textual_fixes

ROOT = Path(__file__).resolve().parents[1]

_BODY = "    a.fill_(1)\n    return a\n"
# Spellings the textual path models: (source, the call text it must write).
MODELLED = {
    "plain": ("import torch\ndef f(n):\n    a = torch.zeros(n)\n" + _BODY, "torch.empty(n)"),
    "alias": ("import torch as th\ndef f(n):\n    a = th.zeros(n, 2)\n" + _BODY, "th.empty(n, 2)"),
    "like": (
        "import torch\ndef f(x):\n    a = torch.zeros_like(x)\n" + _BODY,
        "torch.empty_like(x)",
    ),
    "method": (
        "def f(x):\n    a = x.view(2, -1).new_zeros(3)\n" + _BODY,
        "x.view(2, -1).new_empty(3)",
    ),
    "spaced": ("import torch\ndef f(n):\n    a = torch . zeros (n)\n" + _BODY, "torch . empty (n)"),
    "split": (
        "import torch\ndef f(n):\n    a = torch.\\\n        zeros(\n            n,\n"
        "        )\n" + _BODY,
        "torch.\\\n        empty(\n            n,\n        )",
    ),
    "wide": (
        "import torch\ndef f(n):\n    s = 'ü'; a = torch.zeros(n)  # ü\n" + _BODY,
        "torch.empty(n)",
    ),
    "rebound_elsewhere": (
        "import torch\ndef g():\n    torch = 1\n    return torch\ndef f(n):\n    a = torch.zeros(n)\n"
        + _BODY,
        "torch.empty(n)",
    ),
    "submodule": ("import torch.nn\ndef f(n):\n    a = torch.zeros(n)\n" + _BODY, "torch.empty(n)"),
    "import_elsewhere": (
        "import torch\nimport torch.cuda\ndef g():\n    import torch.cuda as torch\n"
        "def f(n):\n    a = torch.zeros(n)\n" + _BODY,
        "torch.empty(n)",
    ),
    "guarded_import": (
        "try:\n    import torch\nexcept ImportError:\n    pass\ndef f(n):\n"
        "    a = torch.zeros(n)\n" + _BODY,
        "torch.empty(n)",
    ),
}
# Spellings it leaves to the codemod (an import edit, a binding it does not model, ...).
DECLINED = {
    "from_import": "from torch import zeros\ndef f(n):\n    a = zeros(n)\n" + _BODY,
    "local_import": "def f(n):\n    import torch\n    a = torch.zeros(n)\n" + _BODY,
    "star": "import torch\nfrom os import *\ndef f(n):\n    a = torch.zeros(n)\n" + _BODY,
    "class_attribute": (
        "import torch\nclass C:\n    torch = 1\n    def f(self, n):\n        a = torch.zeros(n)\n"
        "        a.fill_(1)\n        return a\n"
    ),
    "parenthesised": "import torch\ndef f(n):\n    a = (torch.zeros)(n)\n" + _BODY,
    "crlf": "import torch\r\ndef f(n):\r\n    a = torch.zeros(n)\r\n" + _BODY.replace("\n", "\r\n"),
}


def _sources() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text()
    for rule in ALL_RULES:
        for i, example in enumerate(rule.examples):
            yield f"{rule.code}_{i}", example.source
    for path in sorted((ROOT / "tests" / "regressions").glob("test_*.py")):
        module = importlib.import_module(f"tests.regressions.{path.stem}")
        for value in vars(module).values():
            if isinstance(value, list):
                for case in value:
                    if isinstance(case, Case):
                        yield case.name, case.program
    for name, (text, _) in MODELLED.items():
        yield name, text
    yield from DECLINED.items()


def _codemod_fixes(text: str, sites: list[tuple[int, int, str, int, int]]) -> dict[object, Fix]:
    _, results = rewrite_source(text.encode(), [RewriteSite(*s) for s in sites])
    return {
        (r.site.line, r.site.col, r.site.call, r.site.end_line, r.site.end_col): Fix(
            r.replacement, r.edits
        )
        for r in results
        if isinstance(r, Success)
    }


@pytest.mark.slow
def test_every_safe_fix_is_the_codemods() -> None:
    compared = textual = 0
    for name, text in _sources():
        result = analyse_source(text, f"{name}.py")
        safe = [f for f in result.findings if f.verdict is Verdict.SAFE and f.rule == "ZO001"]
        if not safe:
            continue
        sites = list({(f.line, f.col, f.call, f.end_line, f.end_col): None for f in safe})
        expected = _codemod_fixes(text, sites)
        got = {(f.line, f.col, f.call, f.end_line, f.end_col): f.fix for f in safe}
        assert got == {s: expected.get(s) for s in sites}, name
        compared += len(sites)
        fast = textual_fixes(ast.parse(text), text, _NEWLINE.split(text), sites)
        if fast is not None:
            assert fast == expected, name
            textual += len(sites)
    # Most safe sites are plain `torch.zeros`: the textual path must really be the one taken.
    assert compared > 40 and textual > compared // 2, (compared, textual)


@pytest.mark.parametrize("name", sorted(MODELLED))
def test_modelled_spellings(name: str) -> None:
    text, replacement = MODELLED[name]
    tree = ast.parse(text)
    call = next(
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") in {
            "zeros", "zeros_like", "new_zeros"
        }
    )  # fmt: skip
    lines = _NEWLINE.split(text)
    assert call.end_lineno is not None and call.end_col_offset is not None
    site = (
        call.lineno,
        char_col(lines[call.lineno - 1], call.col_offset),
        {"zeros": "torch.zeros", "zeros_like": "torch.zeros_like"}.get(
            getattr(call.func, "attr", ""), "Tensor.new_zeros"
        ),
        call.end_lineno,
        char_col(lines[call.end_lineno - 1], call.end_col_offset),
    )
    fast = textual_fixes(tree, text, lines, [site])
    assert fast == {site: Fix(replacement)}
    assert fast == _codemod_fixes(text, [site])


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_spellings(name: str) -> None:
    text = DECLINED[name]
    result = analyse_source(text, f"{name}.py")
    lines = _NEWLINE.split(text)
    sites = [(f.line, f.col, f.call, f.end_line, f.end_col) for f in result.findings]
    assert sites, "the spelling must give a finding for the test to mean anything"
    assert textual_fixes(ast.parse(text), text, lines, sites) is None
