from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.analysis.options import Contract
from zeroopt.cli.app import app
from zeroopt.scan.config import DEFAULT_EXCLUDE, ConfigError, PathMatcher, load_config

FULL = """
[tool.zeroopt]
include = ["*.py"]
exclude = ["third_party", "gen/*.py"]
extend-exclude = ["*_pb2.py"]
select = ["ZO0"]
extend-select = ["ZO900"]
ignore = ["ZO002"]
cache-dir = "cachehere"
jobs = 3
force-exclude = true

[tool.zeroopt.per-file-ignores]
"tests/**" = ["ZO001"]

[tool.zeroopt.contracts]
"my_kernels.fill_meta" = { writes = [0, "out"] }

[tool.zeroopt.lifecycles]
"Backend" = { requires = ["step"], init = ["init_cuda_graph_state"], forward = ["step"], cycles = [{ name = "run", setup = [] }] }
"""


def test_reads_every_key(project: Callable[..., Path]) -> None:
    project("pyproject.toml", FULL)
    root = Path.cwd()
    cfg = load_config(["."])
    assert cfg.project_root == root
    assert cfg.config_file == root / "pyproject.toml"
    assert cfg.include == ("*.py",)
    assert cfg.exclude == ("third_party", "gen/*.py")
    assert cfg.extend_exclude == ("*_pb2.py",)
    assert cfg.select == ("ZO0",) and cfg.extend_select == ("ZO900",)
    assert cfg.ignore == ("ZO002",)
    assert cfg.cache_dir == root / "cachehere"
    assert cfg.jobs == 3 and cfg.force_exclude is True
    assert cfg.per_file_ignores == (("tests/**", ("ZO001",)),)
    (contract,) = cfg.analysis.contracts
    assert isinstance(contract, Contract)
    assert contract.function == "my_kernels.fill_meta" and contract.writes == (0, "out")
    assert "pyproject.toml" in contract.source
    assert cfg.lifecycles["Backend"]["init"] == ["init_cuda_graph_state"]
    # The table reaches the analysis as a model (it was parsed but unused before 2026-11-22).
    (model,) = cfg.analysis.lifecycles
    assert (model.name, model.requires, model.forward) == ("Backend", ("step",), ("step",))
    # Rule selection and per-file-ignores act together.
    assert cfg.is_enabled("ZO001", str(root / "src" / "a.py"))
    assert not cfg.is_enabled("ZO001", str(root / "tests" / "unit" / "a.py"))
    assert not cfg.is_enabled("ZO002")
    assert cfg.is_enabled("ZO900")


def test_defaults_and_cache_beside_plain_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    monkeypatch.delenv("ZEROOPT_CACHE_DIR", raising=False)
    cfg = load_config(["."])
    assert cfg.project_root == tmp_path
    assert cfg.cache_dir == tmp_path / ".zeroopt_cache"
    assert cfg.exclude == DEFAULT_EXCLUDE and cfg.select == ("ZO",)
    assert cfg.analysis.contracts == ()


def test_nearest_zeroopt_table_wins(project: Callable[..., Path]) -> None:
    project("pyproject.toml", '[tool.zeroopt]\nignore = ["ZO001"]\n')
    project("sub/pyproject.toml", '[tool.zeroopt]\nignore = ["ZO002"]\n')
    project("sub/pkg/a.py")
    root = Path.cwd()
    cfg = load_config(["sub/pkg/a.py"])
    assert cfg.project_root == root / "sub" and cfg.ignore == ("ZO002",)
    assert load_config(["."]).ignore == ("ZO001",)


def test_command_line_overrides(project: Callable[..., Path]) -> None:
    project("pyproject.toml", '[tool.zeroopt]\nselect = ["ZO001"]\nignore = ["ZO002"]\njobs = 2\n')
    cfg = load_config(["."], select=["ZO002"], ignore=["ZO900"], jobs=5, cache_dir="c")
    assert cfg.select == ("ZO002",)  # --select replaces
    assert cfg.ignore == ("ZO002", "ZO900")  # --ignore adds
    assert cfg.jobs == 5
    assert cfg.cache_dir == Path.cwd() / "c"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("exlude = ['x']", "exlude"),
        ("jobs = '2'", "jobs"),
        ("jobs = 0", "jobs"),
        ("select = 'ZO001'", "select"),
        ("select = ['E501']", "E501"),
        ("cache-dir = 3", "cache-dir"),
        ("per-file-ignores = { 'a.py' = 'ZO001' }", "per-file-ignores"),
        ("contracts = { 'f' = { writes = [-1] } }", "writes"),
        ("contracts = { 'f' = { writes = [0], reads = [1] } }", "reads"),
        ("contracts = { 'not a name' = { writes = [0] } }", "not a name"),
        ("contracts = { 'f' = [0] }", "'f'"),
        ("lifecycles = 3", "lifecycles"),
        ("lifecycles = { m = { requires = 'prepare' } }", "requires must be a non-empty list"),
        ("lifecycles = { m = { requires = 5 } }", "requires must be a non-empty list"),
        ("lifecycles = { m = { requires = 5 } }", "got an integer"),
        ("lifecycles = { m = { requires = ['p'], requirez = ['q'] } }", "'requirez'"),
        ("lifecycles = { m = { requires = [] } }", "requires must name at least one"),
        ("lifecycles = { m = { init = ['i'] } }", "`requires` is missing"),
        ("lifecycles = { m = { requires = ['p'], init = 'i' } }", "init must be a list"),
        ("lifecycles = { m = { requires = ['p'], forward = [3] } }", "3 is not a method name"),
        ("lifecycles = { m = { requires = ['p'], cycles = { name = 'r' } } }", "cycles must be"),
        ("lifecycles = { m = { requires = ['p'], cycles = [{ setup = ['p'] }] } }", "name must be"),
        (
            "lifecycles = { m = { requires = ['p'], cycles = [{ name = 'r', setup = 'p' }] } }",
            "setup must be",
        ),
        (
            "lifecycles = { m = { requires = ['p'], cycles = [{ name = 'r', stup = [] }] } }",
            "'stup'",
        ),
        (
            "lifecycles = { m = { requires = ['p'], cycles = [{ name = 'r', runs_forward = 1 }] } }",
            "runs_forward must be true or false",
        ),
        ("lifecycles = { m = 'x' }", "lifecycles.m] must be a table"),
    ],
)
def test_invalid_settings_name_key_and_file(
    project: Callable[..., Path], body: str, needle: str
) -> None:
    project("pyproject.toml", f"[tool.zeroopt]\n{body}\n")
    with pytest.raises(ConfigError) as info:
        load_config(["."])
    message = str(info.value)
    assert needle in message
    assert str(Path.cwd() / "pyproject.toml") in message


def test_invalid_toml_is_a_config_error(project: Callable[..., Path]) -> None:
    project("pyproject.toml", "[tool.zeroopt\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(["."])


def test_config_error_exits_2_with_message(project: Callable[..., Path]) -> None:
    project("pyproject.toml", "[tool.zeroopt]\nexlude = []\n")
    project("a.py", "x = 1\n")
    result = CliRunner().invoke(app, ["scan", "a.py", "--no-cache"])
    assert result.exit_code == 2
    assert "exlude" in result.output and "pyproject.toml" in result.output
    assert "Traceback" not in result.output


def test_bad_cli_code_exits_2(project: Callable[..., Path]) -> None:
    project("a.py", "x = 1\n")
    result = CliRunner().invoke(app, ["scan", "a.py", "--select", "E501", "--no-cache"])
    assert result.exit_code == 2
    assert "E501" in result.output


def test_path_matcher_semantics() -> None:
    m = PathMatcher(["build", "*_pb2.py", "gen/*.py", "docs/**/*.py"])
    assert m.matches("build/x.py") and m.matches("a/build/x.py")
    assert m.matches("a/b/msg_pb2.py")
    assert m.matches("gen/a.py") and not m.matches("gen/sub/a.py") and not m.matches("x/gen/a.py")
    assert m.matches("docs/a.py") and m.matches("docs/x/y/a.py")
    assert not m.matches("src/builder.py")
    # Name patterns only test components below the directory named on the command line.
    assert not m.matches("/tmp/build/src/a.py", below="src/a.py")
    inc = PathMatcher(["*.py", "*.pyi"])
    assert inc.matches_file("a/b.pyi") and not inc.matches_file("a.py/b.txt")
