from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import zeroopt.scan.runner as runner
from tests.regressions.test_adversarial_tree import STAGE_FILL
from zeroopt.report.json import report_to_json
from zeroopt.scan import file_analysis
from zeroopt.scan.config import load_config
from zeroopt.scan.findings import Verdict
from zeroopt.scan.runner import scan

ZEROS = "import torch\nx = torch.zeros(4)\n"


def _scan(paths: list[str] | None = None, **kw: object) -> runner.ScanReport:
    paths = paths or ["."]
    kw.setdefault("jobs", 1)
    return scan(paths, load_config(paths), **kw)  # type: ignore[arg-type]


def test_prefilter_counts_but_does_not_parse(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    project("a.py", ZEROS)
    project("b.py", "print('nothing to see')\n")
    project("c.py", "import torch\ny = torch.empty(2)\n")
    report = _scan(use_cache=False)
    assert sorted(fake_engine) == ["a.py", "c.py"]
    assert report.files == 3 and report.analysed == 2
    assert [(f.path, f.rule) for f in report.findings] == [("a.py", "ZO001"), ("c.py", "ZO002")]
    assert {r.path for r in report.results} == {"a.py", "b.py", "c.py"}
    assert all(len(r.source_hash) == 64 for r in report.results)


def _stale_mtimes(root: Path) -> None:
    """Make every file look old, so the stat shortcut of the cache is allowed."""
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_cache_hit_skips_analysis(project: Callable[..., Path], fake_engine: list[str]) -> None:
    root = Path.cwd()
    project("a.py", ZEROS)
    project("b.py", ZEROS + "y = torch.zeros(1)  # noqa: ZO001\nz = 1  # noqa: ZO001\n")
    project("c.py", "x = 1\n")
    _stale_mtimes(root)
    cold = _scan()
    assert len(fake_engine) == 2 and cold.cache_hits == 0
    assert (root / ".zeroopt_cache" / "CACHEDIR.TAG").exists()

    warm = _scan()
    assert len(fake_engine) == 2, "a warm scan must not analyse anything"
    assert warm.cache_hits == 3 and warm.analysed == 0
    assert report_to_json(warm)["findings"] == report_to_json(cold)["findings"]
    assert (
        report_to_json(warm)["unused_suppressions"] == report_to_json(cold)["unused_suppressions"]
    )
    assert len(warm.unused_suppressions) == 1

    # Same bytes, new mtime (a checkout): a hit by content hash, no analysis.
    os.utime(root / "a.py")
    assert _scan().cache_hits == 3 and len(fake_engine) == 2
    # Changed content: only that file is analysed again.
    project("a.py", ZEROS + "w = torch.zeros(2)\n")
    again = _scan()
    assert fake_engine[2:] == ["a.py"] and len(again.findings) == 3
    # --no-cache analyses everything that passes the prefilter.
    _scan(use_cache=False)
    assert len(fake_engine) == 5


def test_cache_keyed_by_analysis_config(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    project("a.py", ZEROS)
    _stale_mtimes(Path.cwd())
    _scan()
    assert _scan().cache_hits == 1 and len(fake_engine) == 1
    # Rule selection is applied after the cache: no re-analysis, but the finding is gone.
    assert scan(["."], load_config(["."], ignore=["ZO001"]), jobs=1).findings == []
    assert len(fake_engine) == 1
    # A new kernel contract can change verdicts: analysed again.
    project("pyproject.toml", '[tool.zeroopt.contracts]\n"k.fill" = { writes = [0] }\n')
    _scan()
    assert len(fake_engine) == 2


def test_corrupt_cache_is_ignored(
    project: Callable[..., Path], fake_engine: list[str], tmp_path: Path
) -> None:
    project("a.py", ZEROS)
    cache_dir = tmp_path / "cache"
    _scan(cache_dir=cache_dir)
    (cache_file,) = cache_dir.glob("*/scan-*.json")
    cache_file.write_text("{not json")
    assert len(_scan(cache_dir=cache_dir).findings) == 1
    cache_file.write_text('{"format": 1, "entries": {"%s": {"sha256": 5}}}' % (Path.cwd() / "a.py"))
    assert len(_scan(cache_dir=cache_dir).findings) == 1
    assert len(fake_engine) == 3


def test_failing_file_does_not_stop_the_scan(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    project("bad.py", "import torch\nBOOM = torch.zeros(1)\n")
    project("good.py", ZEROS)
    report = _scan(use_cache=False)
    assert [f.path for f in report.findings] == ["good.py"]
    (err,) = report.errors
    assert err.path == "bad.py" and "RuntimeError: fake engine exploded" in err.message


def test_worker_pool_matches_in_process(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    for i in range(12):
        project(f"m{i:02}.py", ZEROS if i != 5 else "torch.zeros(1)\nBOOM\n")
    serial = _scan(use_cache=False, jobs=1)
    parallel = _scan(use_cache=False, jobs=2)
    assert report_to_json(parallel)["findings"] == report_to_json(serial)["findings"]
    assert [e.path for e in parallel.errors] == ["m05.py"]
    assert parallel.analysed == 12 and len(parallel.findings) == 11


@pytest.mark.skipif(runner.MP_CONTEXT is None, reason="needs fork-started workers")
def test_worker_crash_is_isolated(
    project: Callable[..., Path], fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that kills its worker process (a crash in a parser, the OOM killer) becomes an
    error entry for that file only; the innocent files of the lost chunks are retried."""
    fake = file_analysis.analyse_source

    def crashing(source: str | bytes, path: str, options: object = None, *_: object) -> object:
        if path == "m03.py":
            os._exit(3)
        return fake(source, path, options)

    monkeypatch.setattr(file_analysis, "analyse_source", crashing)
    for i in range(8):
        project(f"m{i:02}.py", ZEROS)
    report = _scan(use_cache=False, jobs=2)
    assert [f.path for f in report.findings] == [f"m{i:02}.py" for i in range(8) if i != 3]
    (err,) = report.errors
    assert err.path == "m03.py" and "crashed" in err.message


def test_generated_files(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("gen.py", "# This file is @generated by protoc.\n" + ZEROS)
    project("late.py", "\n" * 20 + "# @generated\n" + ZEROS)  # marker too far down
    report = _scan(use_cache=False)
    assert [f.path for f in report.findings] == ["late.py"]
    assert report.generated == 1 and report.files == 1
    # Named explicitly it is scanned, unless force-exclude is on.
    assert [f.path for f in _scan(["gen.py"], use_cache=False).findings] == ["gen.py"]
    forced = scan(["gen.py"], load_config(["gen.py"], force_exclude=True), jobs=1, use_cache=False)
    assert forced.findings == [] and forced.generated == 1


def test_generated_status_survives_the_cache(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    project("gen.py", "# @generated\n" + ZEROS)
    _stale_mtimes(Path.cwd())
    assert [f.path for f in _scan(["gen.py"]).findings] == ["gen.py"]  # cached as analysed
    assert _scan(["."]).findings == []  # a cache hit must still honour the marker


def test_huge_file_is_an_error(
    project: Callable[..., Path], fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "MAX_FILE_BYTES", 100)
    project("big.py", ZEROS * 20)
    project("small.py", ZEROS)
    report = _scan(use_cache=False)
    assert [f.path for f in report.findings] == ["small.py"]
    assert report.errors[0].path == "big.py" and "too large" in report.errors[0].message


def test_stdin(project: Callable[..., Path], fake_engine: list[str]) -> None:
    cfg = load_config(["-"], stdin_filename="pkg/x.py")
    report = scan(["-"], cfg, stdin=ZEROS.encode(), stdin_filename="pkg/x.py", use_cache=False)
    (f,) = report.findings
    assert f.path == "pkg/x.py" and f.verdict is Verdict.SAFE and report.files == 1


def test_per_file_ignores(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("pyproject.toml", '[tool.zeroopt.per-file-ignores]\n"tests/*" = ["ZO001"]\n')
    project("tests/t.py", ZEROS + "y = torch.empty(3)\n")
    project("src/s.py", ZEROS)
    report = _scan(use_cache=False)
    assert [(f.path, f.rule) for f in report.findings] == [
        ("src/s.py", "ZO001"),
        ("tests/t.py", "ZO002"),
    ]


def test_cache_drops_deleted_files(
    project: Callable[..., Path], fake_engine: list[str], tmp_path: Path
) -> None:
    import json

    project("a.py", ZEROS)
    gone = project("b.py", ZEROS)
    cache_dir = tmp_path / "cache"
    _scan(cache_dir=cache_dir)
    gone.unlink()
    project("a.py", ZEROS + "y = torch.zeros(1)\n")  # something new, so the cache is saved
    _scan(cache_dir=cache_dir)
    (cache_file,) = cache_dir.glob("*/scan-*.json")
    assert list(json.loads(cache_file.read_text())["entries"]) == [str(Path.cwd() / "a.py")]


def test_progress_bar_path(
    project: Callable[..., Path], fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "PROGRESS_MIN_FILES", 1)
    for i in range(3):
        project(f"m{i}.py", ZEROS)
    report = _scan(use_cache=False, progress=True)
    assert report.analysed == 3 and len(report.findings) == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_special_files_are_errors_not_hangs(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    root = Path.cwd()
    os.mkfifo(root / "fifo.py")  # opening it for reading would block until a writer comes
    if Path("/dev/zero").exists():
        (root / "zero.py").symlink_to("/dev/zero")  # endless
    project("good.py", ZEROS)
    names = ["fifo.py", "good.py"] + (["zero.py"] if (root / "zero.py").is_symlink() else [])
    report = _scan(names, use_cache=False)
    assert [f.path for f in report.findings] == ["good.py"]
    for err in report.errors:
        assert "not a regular file" in err.message
    assert {e.path for e in report.errors} <= {"fifo.py", "zero.py"}
    assert "fifo.py" in {e.path for e in report.errors}


@pytest.mark.skipif(runner.MP_CONTEXT is None, reason="needs fork-started workers")
def test_worker_dying_while_files_are_still_submitted(
    project: Callable[..., Path], fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files reach the pool while the parent is still reading the rest: a worker that dies in
    the meantime makes the later submissions fail, and those files are retried too."""
    fake = file_analysis.analyse_source

    def crashing(source: str | bytes, path: str, options: object = None, *_: object) -> object:
        if path == "m00.py":
            os._exit(3)
        return fake(source, path, options)

    chunks = runner._chunks

    def slow_chunks(tasks: Iterator[runner._Task], jobs: int) -> Iterator[list[runner._Task]]:
        for i, chunk in enumerate(chunks(tasks, jobs)):
            if i == 1:
                time.sleep(1.0)  # the worker given m00.py has died by now
            yield chunk

    monkeypatch.setattr(file_analysis, "analyse_source", crashing)
    monkeypatch.setattr(runner, "_chunks", slow_chunks)
    for i in range(8):
        project(f"m{i:02}.py", ZEROS)
    report = _scan(use_cache=False, jobs=2)
    assert [f.path for f in report.findings] == [f"m{i:02}.py" for i in range(1, 8)]
    (err,) = report.errors
    assert err.path == "m00.py" and "crashed" in err.message


def test_tree_result_reused_beside_a_file_no_import_names(
    project: Callable[..., Path],
) -> None:
    """A result that relied on the whole tree (the closed world) records the tree's digest; the
    runner checks it over the same files, including one whose name is no module (`run-1.py`),
    so a warm scan of an unchanged tree reuses it."""
    root = Path.cwd()
    project("stage.py", STAGE_FILL.lstrip("\n"))
    project("run-1.py", "import stage\n")
    _stale_mtimes(root)
    cold = _scan()
    assert [f.verdict for f in cold.findings] == [Verdict.SAFE]
    warm = _scan()
    assert warm.analysed == 0 and warm.cache_hits == 2
    assert [f.verdict for f in warm.findings] == [Verdict.SAFE]


def test_a_self_read_is_judged_again_when_another_file_names_the_attribute(
    project: Callable[..., Path],
) -> None:
    """A buffer a method stores on `self` unwritten and `forward` reads is `unsafe` only while
    no other file of the tree names `.acc` (it might reset it first): the cached result rests on
    every file of the tree, and a file that starts to name it must make the verdict change."""
    project("pkg/__init__.py")
    project(
        "pkg/acc.py",
        "import torch\n\n\nclass Acc:\n    def setup(self, n):\n"
        "        self.acc = torch.zeros(n)\n\n    def forward(self, x):\n        self.acc += x\n",
    )
    project("pkg/other.py", "def f():\n    return 1\n")
    assert [str(f.verdict) for f in _scan().findings] == ["unsafe"]
    project("pkg/other.py", "def f(o):\n    return o.acc\n")
    assert [str(f.verdict) for f in _scan(use_cache=False).findings] == ["unproven"]
    project("pkg/other.py", "def f():\n    return 1\n")
    assert [str(f.verdict) for f in _scan().findings] == ["unsafe"]
    project("pkg/other.py", "def f(o):\n    return o.acc\n")
    assert [str(f.verdict) for f in _scan().findings] == ["unproven"]


def test_dependency_values_now(tmp_path: Path) -> None:
    """What a cached result recorded (FileResult.deps) against the tree now (runner._DepsNow):
    reused only where every key has the value it recorded. The values are worked out once per
    key for the whole scan; a value the cache holds in another type (a hand-edited or damaged
    file: JSON null, a number) holds nowhere, also where no value can hold now."""
    from zeroopt.analysis.methods import TREE_DEP, tree_digest
    from zeroopt.analysis.project import SELF, ProjectIndex

    (tmp_path / "pkg").mkdir()
    paths = [str(tmp_path / "pkg" / n) for n in ("__init__.py", "a.py", "gone.py")]
    for p in paths:
        Path(p).write_text("")
    init, a, gone = paths
    index = ProjectIndex.build(paths)
    shas = {init: "s-init", a: "s-a", gone: ""}  # gone.py could not be read
    digest = tree_digest([(p, shas[p]) for p in paths])
    cases: list[tuple[dict[str, object], bool]] = [
        ({SELF: "pkg.a"}, True),
        ({SELF: "pkg.b"}, False),
        ({"pkg.a": "s-a"}, True),
        ({"pkg.a": "s-old"}, False),
        ({"pkg.gone": ""}, False),  # unreadable: no recorded value holds
        ({"pkg.missing": ""}, False),
        ({"pkg.missing": None}, False),
        ({"?pkg.a": "1", "?pkg.zz": "0"}, True),
        ({"?pkg.zz": "1"}, False),
        ({"?pkg.a": 1}, False),
        ({"/pkg": "a,gone"}, True),
        ({"/pkg": "a"}, False),
        ({TREE_DEP: digest}, True),
        ({TREE_DEP: "0" * 64}, False),
        ({SELF: "pkg.a", "pkg.a": "s-a", "?pkg.a": "1", TREE_DEP: digest}, True),
        ({SELF: "pkg.a", "pkg.a": "s-a", "?pkg.a": "0", TREE_DEP: digest}, False),
        ({}, True),
    ]
    now = runner._DepsNow(index, shas)
    for _ in range(2):  # the second round answers from the values worked out in the first
        for deps, holds in cases:
            assert now.hold(a, deps) is holds, deps  # type: ignore[arg-type]
    assert now.hold(init, {SELF: "pkg"}) and not now.hold(init, {SELF: "pkg.a"})
