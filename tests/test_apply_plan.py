"""Orchestration: which findings are applied, the race, read-only files, idempotence, patches."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

from zeroopt.patcher.apply import load_verified, plan, repository_root, write
from zeroopt.scan.findings import Evidence, FileResult, Finding, Fix, Verdict
from zeroopt.scan.site_identity import site_identity

_CALLS = {
    "zeros": "torch.zeros",
    "zeros_like": "torch.zeros_like",
    "new_zeros": "Tensor.new_zeros",
    "empty": "torch.empty",
}


def fake_scan(
    base: Path, paths: list[str], verdicts: dict[int, Verdict] | None = None
) -> list[FileResult]:
    """What the scan would report, built with `ast` like the engine: every zeros call, `safe`
    unless `verdicts` (by line) says otherwise. Hand-made so these tests do not depend on the
    dataflow analysis; positions are 1-based characters like the real ones."""
    results = []
    for path in paths:
        data = (base / path).read_bytes()
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        # ast offsets count UTF-8 bytes of the decoded line, whatever the file's encoding
        lines = [line.encode() for line in data.decode(encoding).splitlines(keepends=True)]
        findings = []
        for node in ast.walk(ast.parse(data)):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name not in _CALLS:
                continue
            assert node.end_lineno is not None and node.end_col_offset is not None
            col = len(lines[node.lineno - 1][: node.col_offset].decode()) + 1
            end_col = len(lines[node.end_lineno - 1][: node.end_col_offset].decode()) + 1
            verdict = (verdicts or {}).get(node.lineno, Verdict.SAFE)
            call = _CALLS[name]
            if call == "torch.empty":
                verdict = (verdicts or {}).get(node.lineno, Verdict.UNSAFE)
            fix = (
                Fix("<replacement>") if verdict is Verdict.SAFE and call != "torch.empty" else None
            )
            findings.append(
                Finding(
                    path,
                    node.lineno,
                    col,
                    node.end_lineno,
                    end_col,
                    call,
                    "buf",
                    verdict,
                    "ZO002" if call == "torch.empty" else "ZO001",
                    "msg",
                    (Evidence(node.lineno + 1, "write", "buf.fill_(1)"),),
                    fix,
                )
            )
        results.append(FileResult(path, findings, [], hashlib.sha256(data).hexdigest()))
    return results


SAFE = "import torch\n\ndef f():\n    x = torch.zeros(4)\n    x.fill_(1)\n    return x.sum()\n"


def test_only_safe_findings_with_a_fix_are_applied(tmp_path: Path) -> None:
    src = "import torch\na = torch.zeros(1)\nb = torch.zeros(2)\nc = torch.zeros(3)\nd = torch.empty(4)\n"
    (tmp_path / "m.py").write_text(src)
    results = fake_scan(tmp_path, ["m.py"], {3: Verdict.UNSAFE, 4: Verdict.UNPROVEN})
    report = plan(results, base_dir=tmp_path)
    write(report)
    assert (tmp_path / "m.py").read_text() == src.replace("a = torch.zeros", "a = torch.empty")
    assert report.fixes == 1 and len(report.changed_files) == 1
    # the unsafe torch.empty (ZO002) is actionable and cannot be fixed automatically
    assert [(f.line, f.call) for f in report.remaining] == [(5, "torch.empty")]


def test_files_without_fixes_are_not_touched(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import torch\nx = torch.zeros(3)\n")
    os.utime(f, ns=(1_000_000_000, 1_000_000_000))
    report = plan(fake_scan(tmp_path, ["m.py"], {2: Verdict.UNPROVEN}), base_dir=tmp_path)
    write(report)
    assert report.files == [] and f.stat().st_mtime_ns == 1_000_000_000


def test_idempotent(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SAFE)
    write(plan(fake_scan(tmp_path, ["m.py"]), base_dir=tmp_path))
    once = (tmp_path / "m.py").read_bytes()
    assert b"torch.empty(4)" in once
    report = plan(fake_scan(tmp_path, ["m.py"]), base_dir=tmp_path)  # a fresh scan finds nothing
    write(report)
    assert (tmp_path / "m.py").read_bytes() == once and report.changed_files == []


def test_race_file_changed_after_the_scan(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(SAFE)
    results = fake_scan(tmp_path, ["m.py"])
    edited = "# a new first line shifts every position\n" + SAFE
    f.write_text(edited)
    report = plan(results, base_dir=tmp_path)
    write(report)
    assert f.read_text() == edited
    assert [e.message for e in report.errors] == [
        f"{tmp_path / 'm.py'} changed since it was analysed; re-run to pick up the new content"
    ]


def test_race_between_plan_and_write(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(SAFE)
    report = plan(fake_scan(tmp_path, ["m.py"]), base_dir=tmp_path)
    f.write_text(SAFE + "# saved meanwhile\n")
    write(report)
    assert f.read_text() == SAFE + "# saved meanwhile\n"
    assert report.fixes == 0 and "changed since" in report.errors[0].message
    assert len(report.remaining) == 1  # still actionable


def test_read_only_file(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(SAFE)
    f.chmod(0o444)
    try:
        report = plan(fake_scan(tmp_path, ["m.py"]), base_dir=tmp_path)
        write(report)
        assert f.read_text() == SAFE
        assert "read-only" in report.errors[0].message
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]
    finally:
        f.chmod(0o644)


def _verify_report(path: Path, sites: list[dict], together: dict | None) -> Path:
    report = tmp = path / "verify.json"
    tmp.write_text(
        json.dumps(
            {
                "version": 1,
                "scenario": "s.py:run",
                "device": "cpu",
                "baseline": {"runs": 2, "deterministic": True},
                "sites": sites,
                "together": together,
            }
        )
    )
    return report


VERIFIED_SRC = "import torch\na = torch.zeros(1)\nb = torch.zeros(2)\nc = torch.zeros(3)\n"


def _site(line: int, verdict: str, trials: list[str]) -> dict:
    # What verify records of each site: its position and what it judged there.
    identity = site_identity(VERIFIED_SRC, line, 5, line, 19)
    return {
        "path": "m.py",
        "line": line,
        "col": 5,
        "source": identity.source,
        "fingerprint": identity.fingerprint,
        "verdict": verdict,
        "trials": [{"pattern": f"p{i}", "verdict": v, "detail": ""} for i, v in enumerate(trials)],
    }


def test_verified_unproven_sites_are_applied_never_unsafe_ones(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(VERIFIED_SRC)
    results = fake_scan(
        tmp_path, ["m.py"], {2: Verdict.UNPROVEN, 3: Verdict.UNSAFE, 4: Verdict.UNPROVEN}
    )
    ok = ["equivalent", "equivalent"]
    report_path = _verify_report(
        tmp_path,
        [
            _site(2, "equivalent", ok),
            _site(3, "equivalent", ok),
            _site(4, "equivalent", ["equivalent", "diverged"]),
        ],
        {
            "verdict": "equivalent",
            "trials": [{"pattern": "p", "verdict": "equivalent", "detail": ""}],
        },
    )
    verified = load_verified(report_path, tmp_path)
    report = plan(results, base_dir=tmp_path, verified=verified)
    write(report)
    assert (tmp_path / "m.py").read_text() == VERIFIED_SRC.replace(
        "a = torch.zeros", "a = torch.empty"
    )
    assert "1 site(s) not equivalent" in verified.note


def test_verified_sites_need_the_together_run_equivalent(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(VERIFIED_SRC)
    results = fake_scan(tmp_path, ["m.py"], {2: Verdict.UNPROVEN})
    report_path = _verify_report(
        tmp_path,
        [_site(2, "equivalent", ["equivalent"])],
        {"verdict": "crashed", "trials": [{"pattern": "p", "verdict": "crashed", "detail": "IMA"}]},
    )
    verified = load_verified(report_path, tmp_path)
    assert not verified.sites and "together" in verified.note
    report = plan(results, base_dir=tmp_path, verified=verified)
    assert [f.path for f in report.changed_files] == ["m.py"]  # only the safe ones (lines 3, 4)
    assert report.fixes == 2


def test_verified_site_without_trials_does_not_count(tmp_path: Path) -> None:
    report_path = _verify_report(tmp_path, [_site(2, "equivalent", [])], None)
    assert not load_verified(report_path, tmp_path).sites


def test_load_verified_rejects_other_json(tmp_path: Path) -> None:
    bad = tmp_path / "scan.json"
    bad.write_text(json.dumps({"version": 1, "findings": []}))
    with pytest.raises(ValueError, match="not a `zeroopt verify"):
        load_verified(bad, tmp_path)


def test_header_lists_findings_with_evidence(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SAFE)
    report = plan(fake_scan(tmp_path, ["m.py"]), base_dir=tmp_path)
    patch = report.patch(tmp_path).decode()
    assert "# m.py:4:9: torch.zeros -> torch.empty(4)  [ZO001 safe] buf\n" in patch
    assert "#   line 5 write: buf.fill_(1)\n" in patch
    assert patch.index("# zeroopt apply") < patch.index("diff --git a/m.py b/m.py")


def test_repository_root(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    assert repository_root(tmp_path / "repo" / "a" / "b") == (tmp_path / "repo").resolve()


# --- the patch and in-place apply give the same bytes, for every awkward file -----------------

AWKWARD = {
    "crlf.py": b"import torch\r\n\r\ndef f():\r\n    x = torch.zeros(4)\r\n    return x\r\n",
    "nonl.py": b"import torch\nx = torch.zeros(3)",
    "bom.py": b"\xef\xbb\xbfimport torch\nx = torch.zeros(3)  # \xc3\xa9\n",
    "sub/latin1.py": b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'; x = torch.zeros(3)\n",
    "sub/from_import.py": b"from torch import (\r\n    zeros,\r\n)\r\nx = zeros(3)\r\n",
    "untouched.py": b"import torch\nx = torch.ones(3)\n",
}


def _tree(root: Path) -> None:
    for path, data in AWKWARD.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_patch_round_trip_equals_in_place_apply(tmp_path: Path) -> None:
    in_place, via_git, via_patch = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for root in (in_place, via_git, via_patch):
        _tree(root)
    paths = sorted(AWKWARD)
    write(plan(fake_scan(in_place, paths), base_dir=in_place))
    patch = plan(fake_scan(via_git, paths), base_dir=via_git).patch(via_git)
    assert b"untouched.py" not in patch
    assert _git(via_git, "init", "-q").returncode == 0
    (tmp_path / "fix.patch").write_bytes(patch)
    done = _git(via_git, "apply", "--check", str(tmp_path / "fix.patch"))
    assert done.returncode == 0, done.stderr.decode()
    assert _git(via_git, "apply", str(tmp_path / "fix.patch")).returncode == 0
    roots = [via_git]
    if shutil.which("patch"):
        subprocess.run(
            ["patch", "-p1", "--batch", "-i", str(tmp_path / "fix.patch")],
            cwd=via_patch,
            check=True,
            capture_output=True,
        )
        roots.append(via_patch)
    for path in paths:
        expected = (in_place / path).read_bytes()
        assert expected != AWKWARD[path] or path == "untouched.py"
        for root in roots:
            assert (root / path).read_bytes() == expected, (root, path)
