"""Reports identify what they judged, and `apply --verified` refuses entries that no longer match.

A verify report names sites by path:line:col. After an edit that swaps two functions, another
allocation sits at the verified position; apply must not rewrite it on the strength of a run that
poisoned a different buffer. Real engine, through the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.scan.site_identity import site_identity, stale_reason

TABLE = """\
def make_table(n):
    buf = torch.zeros(n)
    fill(buf)
    return buf
"""
SUMS = """\
def make_sums(n, x):
    buf = torch.zeros(n)
    accumulate(buf, x)
    return buf
"""
HEAD = "import torch\n\nfrom kernels import accumulate, fill\n\n\n"
ORIGINAL = HEAD + TABLE + "\n\n" + SUMS
SWAPPED = HEAD + SUMS + "\n\n" + TABLE


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _scan(path: str) -> dict[str, Any]:
    code, out, err = _cli("scan", path, "--no-cache", "--format", "json", "--jobs", "1")
    assert code in (0, 1), err
    data: dict[str, Any] = json.loads(out)
    return data


def _verify_report(scan: dict[str, Any], identity: bool = True) -> dict[str, Any]:
    """A `zeroopt verify --format json` report in which every unproven site of `scan` passed,
    carrying each site's identity from the scan report as verify passes it through."""
    sites = []
    for f in scan["findings"]:
        if f["verdict"] != "unproven":
            continue
        site = {
            "path": f["path"],
            "line": f["line"],
            "col": f["col"],
            "verdict": "equivalent",
            "trials": [{"pattern": "nan", "verdict": "equivalent", "detail": ""}],
        }
        if identity:
            site.update(source=f["source"], fingerprint=f["fingerprint"])
        sites.append(site)
    return {
        "version": 1,
        "root": scan["root"],
        "scenario": "s.py:run",
        "device": "cpu",
        "baseline": {"runs": 2, "deterministic": True},
        "sites": sites,
        "together": None,
    }


def test_scan_json_records_root_source_and_fingerprint(project: Callable[..., Path]) -> None:
    f = project("m.py", ORIGINAL)
    data = _scan("m.py")
    assert data["root"] == str(f.parent)
    text = f.read_text()
    assert len(data["findings"]) == 2
    for finding in data["findings"]:
        assert finding["source"] == "torch.zeros(n)"
        span = (finding["line"], finding["col"], finding["end_line"], finding["end_col"])
        assert finding["fingerprint"] == site_identity(text, *span).fingerprint
        assert stale_reason(text, *span, finding["source"], finding["fingerprint"]) is None
    # Same call text, different functions: the fingerprints tell them apart.
    assert data["findings"][0]["fingerprint"] != data["findings"][1]["fingerprint"]


def test_apply_verified_refuses_a_site_whose_function_was_swapped(
    project: Callable[..., Path],
) -> None:
    f = project("m.py", ORIGINAL)
    scan = _scan("m.py")
    assert [x["verdict"] for x in scan["findings"]] == ["unproven", "unproven"]
    report = _verify_report(scan)
    report["sites"] = report["sites"][:1]  # only make_table's buffer was verified
    project("verify.json", json.dumps(report))
    f.write_text(SWAPPED)  # make_sums's accumulator now sits at the verified position
    code, _, err = _cli("apply", "m.py", "--verified", "verify.json", "--no-cache", "-j", "1")
    assert f.read_text() == SWAPPED, "a stale report rewrote another allocation"
    assert code == 1
    line, col = report["sites"][0]["line"], report["sites"][0]["col"]
    assert f"m.py: {line}:{col}: refused" in " ".join(err.split())
    assert "changed since the report was made" in err


def test_apply_verified_still_applies_an_unchanged_site(project: Callable[..., Path]) -> None:
    f = project("m.py", ORIGINAL)
    project("verify.json", json.dumps(_verify_report(_scan("m.py"))))
    code, _, err = _cli("apply", "m.py", "--verified", "verify.json", "--no-cache", "-j", "1")
    assert code == 0, err
    assert f.read_text() == ORIGINAL.replace("torch.zeros", "torch.empty")


def test_apply_verified_refuses_entries_without_identity(project: Callable[..., Path]) -> None:
    f = project("m.py", ORIGINAL)
    project("verify.json", json.dumps(_verify_report(_scan("m.py"), identity=False)))
    code, _, err = _cli("apply", "m.py", "--verified", "verify.json", "--no-cache", "-j", "1")
    assert code == 1 and f.read_text() == ORIGINAL
    assert err.count("refused") == 2 and "records no source text" in " ".join(err.split())


def test_apply_verified_refuses_an_edited_call(project: Callable[..., Path]) -> None:
    f = project("m.py", ORIGINAL)
    project("verify.json", json.dumps(_verify_report(_scan("m.py"))))
    f.write_text(ORIGINAL.replace("torch.zeros(n)", "torch.zeros(n + 1)", 1))
    code, _, err = _cli("apply", "m.py", "--verified", "verify.json", "--no-cache", "-j", "1")
    assert code == 1
    text = f.read_text()
    assert "torch.zeros(n + 1)" in text  # the edited site is refused ...
    assert text.count("torch.empty(n)") == 1  # ... the other verified one is still applied
    assert "the report judged `torch.zeros(n)` here" in " ".join(err.split())


NESTED = """\
import torch


class Runner:
    @staticmethod
    def build(n):
        def inner(k):
            return torch.zeros(k)

        out = torch.zeros(n)
        return inner(n), out


BUF = torch.zeros(3)
"""


def test_identities_match_the_helper_and_survive_the_cache(project: Callable[..., Path]) -> None:
    f = project("m.py", NESTED)
    text = f.read_text()
    runs = []
    for _ in range(2):  # the second run is served from the cache
        code, out, err = _cli("scan", "m.py", "--format", "json", "--jobs", "1")
        assert code in (0, 1), err
        runs.append([(x["source"], x["fingerprint"]) for x in json.loads(out)["findings"]])
        for x in json.loads(out)["findings"]:
            span = (x["line"], x["col"], x["end_line"], x["end_col"])
            expected = site_identity(text, *span)  # the whole-module computation
            assert (expected.source, expected.fingerprint) == (x["source"], x["fingerprint"])
    assert runs[0] == runs[1] and len(runs[0]) == 3
    assert len({fp for _, fp in runs[0]}) == 3  # inner def, its method, the module
