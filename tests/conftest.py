"""Shared fixtures: a throw-away project directory and a tiny, predictable fake engine.

The fake engine lets the scan plumbing (selection, suppressions, cache, reports, exit codes)
be tested independently of the real analysis: every line holding `torch.zeros(` yields a
`safe` ZO001 finding with a fix, every `torch.empty(` an `unsafe` ZO002, `BOOM` raises.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Triton reads TRITON_INTERPRET when it is first imported: whichever test imports it first, every
# kernel in this CPU suite must run in the interpreter (numpy), never look for a GPU.
os.environ.setdefault("TRITON_INTERPRET", "1")

from zeroopt.analysis.options import AnalysisOptions
from zeroopt.scan import file_analysis
from zeroopt.scan.findings import Evidence, FileResult, Finding, Fix, Verdict


def fake_analyse_source(
    source: str | bytes, path: str, options: AnalysisOptions | None = None
) -> FileResult:
    data = source.encode() if isinstance(source, str) else source
    text = data.decode("utf-8")
    if "BOOM" in text:
        raise RuntimeError("fake engine exploded")
    findings: list[Finding] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for needle, rule, verdict, call in (
            ("torch.zeros(", "ZO001", Verdict.SAFE, "torch.zeros"),
            ("torch.empty(", "ZO002", Verdict.UNSAFE, "torch.empty"),
        ):
            col = line.find(needle)
            if col < 0:
                continue
            end = line.find(")", col) + 1
            call_text = line[col:end]
            findings.append(
                Finding(
                    path=path,
                    line=lineno,
                    col=col + 1,
                    end_line=lineno,
                    end_col=end + 1,
                    call=call,
                    target="x",
                    verdict=verdict,
                    rule=rule,
                    message=f"fake {verdict}",
                    evidence=(Evidence(lineno, "alloc", call_text),),
                    fix=Fix(call_text.replace("zeros", "empty"))
                    if verdict is Verdict.SAFE
                    else None,
                    source_lines=((lineno, line),),
                )
            )
    return FileResult(path, findings, [], hashlib.sha256(data).hexdigest())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a test marked `slow` run first. The suite runs under pytest-xdist with
    `--dist loadfile` (pyproject.toml): each file goes whole to one worker, in this order, so a
    long file handed out near the end would keep one worker busy while the others sit idle."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: each file keeps its order


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Install the fake engine; returns the list of paths it analysed (in this process)."""
    calls: list[str] = []

    def counting(
        source: str | bytes, path: str, options: AnalysisOptions | None = None, *_: object
    ) -> FileResult:
        calls.append(path)
        return fake_analyse_source(source, path, options)

    monkeypatch.setattr(file_analysis, "analyse_source", counting)
    return calls


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Path]]:
    """A project root with a pyproject.toml, made the cwd (so `Path.cwd()` is the root); call
    it to write files into it."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.zeroopt]\n")
    monkeypatch.chdir(root)
    monkeypatch.delenv("ZEROOPT_CACHE_DIR", raising=False)

    def write(rel: str, text: str = "") -> Path:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    write.root = root  # type: ignore[attr-defined]  # used by other test modules
    yield write


def _check_scan_json(data: object) -> None:
    """Assert `data` has exactly the shape docs/contracts.md promises for `scan --format json`."""
    assert isinstance(data, dict)
    assert data["version"] == 1
    assert {"version", "findings", "errors", "summary"} <= set(data)
    assert os.path.isabs(data["root"])
    finding_types = {
        "path": str,
        "line": int,
        "col": int,
        "end_line": int,
        "end_col": int,
        "call": str,
        "target": str,
        "verdict": str,
        "rule": str,
        "message": str,
    }
    for f in data["findings"]:
        # additive keys: what the finding judged, and what would decide an unproven one
        assert set(f) == {*finding_types, "evidence", "fix", "source", "fingerprint", "next_step"}
        assert f["source"] is None or isinstance(f["source"], str)
        assert f["fingerprint"] is None or f["fingerprint"].startswith("sha256:")
        assert (f["next_step"] is None) == (f["verdict"] != "unproven"), f

        for key, typ in finding_types.items():
            assert type(f[key]) is typ, (key, f[key])
        assert f["line"] >= 1 and f["col"] >= 1 and f["end_line"] >= f["line"]
        assert f["verdict"] in ("safe", "unsafe", "unproven")
        for e in f["evidence"]:
            assert set(e) == {"line", "kind", "text"}
            assert type(e["line"]) is int and isinstance(e["kind"], str)
            assert isinstance(e["text"], str)
        assert f["fix"] is None or (
            set(f["fix"]) == {"replacement"} and isinstance(f["fix"]["replacement"], str)
        )
    for e in data["errors"]:
        assert set(e) == {"path", "message"} and all(isinstance(v, str) for v in e.values())
    s = data["summary"]
    assert set(s) == {"files", "findings", "safe", "unsafe", "unproven", "seconds"}
    assert all(type(s[k]) is int for k in ("files", "findings", "safe", "unsafe", "unproven"))
    assert isinstance(s["seconds"], float)
    assert s["findings"] == len(data["findings"]) == s["safe"] + s["unsafe"] + s["unproven"]
    for v in ("safe", "unsafe", "unproven"):
        assert s[v] == sum(1 for f in data["findings"] if f["verdict"] == v)


@pytest.fixture
def check_scan_json() -> Callable[[object], None]:
    return _check_scan_json
