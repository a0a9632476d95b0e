from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import zeroopt
import zeroopt.scan.runner
from zeroopt.cli.app import app

ZEROS = "import torch\nx = torch.zeros(4)\n"
runner = CliRunner()


def _invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_exit_codes(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("safe.py", ZEROS)
    project("plain.py", "x = 1\n")
    project("empty_unsafe.py", "import torch\ny = torch.empty(3)\n")
    assert _invoke("scan", "plain.py", "--no-cache")[0] == 0
    assert _invoke("scan", "safe.py", "--no-cache")[0] == 1  # a rewrite is available
    assert _invoke("scan", "empty_unsafe.py", "--no-cache")[0] == 1  # an unsafe empty
    assert _invoke("scan", ".", "--no-cache", "--exit-zero")[0] == 0
    assert _invoke("scan", ".", "--no-cache", "--ignore", "ZO001,ZO002")[0] == 0
    assert _invoke("scan", ".", "--no-cache", "--select", "ZO002")[0] == 1
    assert _invoke("scan", "safe.py", "--no-cache", "--verdict", "unproven")[0] == 0


def test_verdict_filter(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("a.py", ZEROS + "y = torch.empty(3)\n")
    code, out, _ = _invoke("scan", ".", "--no-cache", "--format", "json", "--verdict", "unsafe")
    data = json.loads(out)
    assert code == 1  # the unsafe empty shown is actionable
    assert [f["verdict"] for f in data["findings"]] == ["unsafe"]
    assert data["summary"]["safe"] == 0 and data["summary"]["unsafe"] == 1


def test_empty_file_list_is_success(project: Callable[..., Path]) -> None:
    (Path.cwd() / "empty").mkdir()
    code, out, _ = _invoke("scan", "empty", "--format", "json", "--no-cache")
    assert code == 0 and json.loads(out)["summary"]["files"] == 0


def test_unparsable_file_is_an_error_entry(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    project("bad.py", "x = torch.zeros(\nBOOM\n")
    project("good.py", ZEROS)
    code, out, _ = _invoke("scan", ".", "--no-cache", "--format", "json")
    data = json.loads(out)
    assert code == 1 and [e["path"] for e in data["errors"]] == ["bad.py"]
    assert [f["path"] for f in data["findings"]] == ["good.py"]


def test_stdin(project: Callable[..., Path], fake_engine: list[str]) -> None:
    code, out, _ = _invoke(
        "scan", "-", "--stdin-filename", "pkg/x.py", "--format", "json", stdin=ZEROS
    )
    assert code == 1 and json.loads(out)["findings"][0]["path"] == "pkg/x.py"


def test_internal_error_exits_2_without_traceback(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("kaboom")

    monkeypatch.setattr(zeroopt.scan.runner, "scan", broken)
    code, out, err = _invoke("scan", ".")
    assert code == 2 and "internal error: ValueError: kaboom" in err
    assert "Traceback" not in out + err


def test_usage_errors_exit_2(project: Callable[..., Path]) -> None:
    assert _invoke("scan", ".", "--format", "xml")[0] == 2
    assert _invoke("scan", ".", "--jobs", "0")[0] == 2
    assert _invoke("scan", ".", "--no-such-flag")[0] == 2


def test_help_and_version() -> None:
    code, out, _ = _invoke("scan", "--help")
    assert code == 0 and "Examples" in out and "--format" in out and "--exit-zero" in out
    code, out, _ = _invoke("--version")
    assert code == 0 and out.strip() == f"zeroopt {zeroopt.__version__}"


def test_rules_and_rule_pages() -> None:
    code, out, _ = _invoke("rules")
    assert code == 0 and "ZO900" in out and "unused-suppression" in out
    code, out, _ = _invoke("rule", "zo900")
    assert code == 0 and "stale suppression" in out
    code, _, err = _invoke("rule", "ZO999")
    assert code == 2 and "unknown rule" in err and "ZO900" in err


def test_registry_rules_are_listed() -> None:
    from zeroopt.rules import ALL_RULES

    codes = {r.code for r in ALL_RULES}
    assert {"ZO001", "ZO002"} <= codes
    out = _invoke("rules")[1]
    assert all(code in out for code in codes)
    for code in codes:
        page = _invoke("rule", code)
        assert page[0] == 0 and code in page[1]


def test_python_m_zeroopt_subprocess(project: Callable[..., Path]) -> None:
    """The real entry point in a real process: JSON alone on stdout, exit status kept."""
    project("a.py", "x = 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "zeroopt", "scan", ".", "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["files"] == 1
    proc = subprocess.run(
        [sys.executable, "-m", "zeroopt", "scan", "--bogus"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


# ---------------------------------------------------------------- end to end, real engine

FILL = """\
import torch


def f():
    x = torch.zeros(4)
    x.fill_(1)
    return x.sum()
"""


def test_real_engine_safe_zeros(
    project: Callable[..., Path], check_scan_json: Callable[[object], None]
) -> None:
    project("m.py", FILL)
    code, out, _ = _invoke("scan", "m.py", "--no-cache", "--format", "json")
    data = json.loads(out)
    check_scan_json(data)
    (f,) = data["findings"]
    assert (f["rule"], f["verdict"], f["line"], f["col"], f["call"]) == (
        "ZO001",
        "safe",
        5,
        9,
        "torch.zeros",
    )
    assert f["fix"] == {"replacement": "torch.empty(4)"}
    assert code == 1


def test_real_engine_suppression_and_cache(project: Callable[..., Path]) -> None:
    project("m.py", FILL.replace("torch.zeros(4)", "torch.zeros(4)  # zeroopt: ignore[ZO001]"))
    project("n.py", FILL)
    code, out, _ = _invoke("scan", ".", "--format", "json")
    cold = json.loads(out)
    assert code == 1
    assert [f["path"] for f in cold["findings"]] == ["n.py"]
    assert cold["unused_suppressions"] == []
    warm = json.loads(_invoke("scan", ".", "--format", "json")[1])
    assert warm["findings"] == cold["findings"]


def test_real_engine_syntax_error_entry(project: Callable[..., Path]) -> None:
    project("bad.py", "import torch\nx = torch.zeros(\n")
    project("good.py", FILL)
    data = json.loads(_invoke("scan", ".", "--no-cache", "--format", "json")[1])
    assert [e["path"] for e in data["errors"]] == ["bad.py"]
    assert [f["path"] for f in data["findings"]] == ["good.py"]


def test_lifecycle_tables_in_json_and_text_survive_the_cache(project: Callable[..., Path]) -> None:
    example = (
        Path(zeroopt.__file__).parent.parent / "fixtures" / "examples" / "lifecycle_backend.py"
    )
    if not example.exists():  # installed non-editable: the fixtures live inside the package
        example = Path(zeroopt.__file__).parent / "fixtures" / "examples" / "lifecycle_backend.py"
    project("backend.py", example.read_text())
    cold_code, cold_out, _ = _invoke("scan", "backend.py", "--format", "json")
    warm_code, warm_out, _ = _invoke("scan", "backend.py", "--format", "json")
    cold, warm = json.loads(cold_out), json.loads(warm_out)
    assert cold_code == warm_code == 1  # cu_q is a safe rewrite
    assert cold["lifecycles"] == warm["lifecycles"]
    (table,) = cold["lifecycles"]
    assert table["class"] == "Backend" and table["model"] == "sglang-attention-backend"
    rows = {b["target"]: b for b in table["buffers"]}
    page_table = rows['self.meta["page_table"]']
    assert page_table["verdict"] == "unsafe"
    assert any("capture warm-up" in phase for phase in page_table["read"])
    assert page_table["coupled"]
    group = [m["target"] for m in table["coupled_groups"][0]]
    assert group == ['self.meta["cache_seqlens"]', 'self.meta["page_table"]']
    _, text, _ = _invoke("scan", "backend.py", "--no-cache")
    assert "class Backend (lifecycle sglang-attention-backend)" in text
    assert 'coupled group: self.meta["cache_seqlens"] (line 22) + self.meta["page_table"]' in text
