"""Hostile and broken input: the tool reports each bad file clearly, finishes the rest,
never crashes and never loses a user's bytes.

The small byte-exact corpus lives in tests/corpus/ (see its .gitattributes: no line-ending
normalisation); big or environment-dependent cases (huge files, deep nesting, symlink loops,
FIFOs, unreadable files, a tree that changes under the scan) are made at test time.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeroopt.scan.file_analysis import analyse_file, analyse_source
from zeroopt.scan.findings import FileResult

CORPUS = Path(__file__).parent / "corpus"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

GOOD = "import torch\n\n\ndef f():\n    x = torch.zeros(4)\n    x.fill_(1)\n    return x\n"
ZEROS_IN_FN = (
    "import torch\n\n\ndef f():\n    x = torch.zeros(4)\n    x.fill_(1)\n{filler}    return x\n"
)

# Files that cannot be analysed: each must give an `errors` entry (and no exception).
BROKEN = (
    "syntax_error.py",
    "truncated.py",
    "mixed_tabs.py",
    "undecodable.py",
    "null_bytes.py",
    "bad_cookie.py",
    "bom_cookie_conflict.py",
    "binary.py",
)
# Odd but valid files -> (line, col) of their one torch.zeros, in characters as the contract says.
VALID = {
    "good.py": (5, 9),
    "bom.py": (5, 9),  # the BOM is not a column
    "crlf.py": (5, 9),
    "cr_only.py": (5, 9),
    "tabs.py": (5, 6),  # one tab is one character
    "no_final_newline.py": (5, 9),
    "latin1_cookie.py": (6, len("    s = 'é'; x = ") + 1),
    "utf8_wide.py": (5, len("    s = 'éé😀'; x = ") + 1),
}


def _deep(kind: str) -> bytes:
    """Nesting that defeats parsers and recursive visitors in different places."""
    if kind == "parens":  # parser limit: SyntaxError "too many nested parentheses"
        return ("import torch\nx = torch.zeros(" + "(" * 1000 + "1" + ")" * 1000 + ")\n").encode()
    if kind == "ifs":  # tokenizer limit: IndentationError "too many levels of indentation"
        body = "".join(" " * i + "if x:\n" for i in range(200))
        return ("import torch\n" + body + " " * 200 + "y = torch.zeros(3)\n").encode()
    if kind == "unary":  # ast.parse raises MemoryError
        return ("import torch\nx = torch.zeros(3)\ny = " + "-" * 100_000 + "1\n").encode()
    if kind == "binop-parse":  # RecursionError inside ast.parse
        return ZEROS_IN_FN.format(filler="    y = " + "+".join(["1"] * 50_000) + "\n").encode()
    if kind == "binop-visit":  # parses fine; recursive ast visitors overflow the stack
        return ZEROS_IN_FN.format(filler="    y = " + "+".join(["x"] * 2_000) + "\n").encode()
    if kind == "calls-visit":  # long method chain: deep Attribute/Call nesting
        return ZEROS_IN_FN.format(filler="    y = x" + ".abs()" * 1_500 + "\n").encode()
    raise ValueError(kind)


DEEP_ERRORS = ("parens", "ifs", "unary", "binop-parse")  # must be errors
DEEP_ANY = ("binop-visit", "calls-visit")  # a finding or an error, never silence, never a raise


def _zeros_findings(result: FileResult) -> list[tuple[int, int]]:
    return [(f.line, f.col) for f in result.findings if f.call == "torch.zeros"]


# ---- engine level -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BROKEN)
def test_broken_file_is_an_error_entry(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    result = analyse_source(data, name)
    assert result.errors, f"{name}: no error reported"
    assert all(e.path == name and e.message.strip() for e in result.errors)
    assert not result.findings


@pytest.mark.parametrize("name", sorted(VALID))
def test_odd_but_valid_file_is_analysed_with_character_positions(name: str) -> None:
    result = analyse_source((CORPUS / name).read_bytes(), name)
    assert not result.errors, result.errors
    assert _zeros_findings(result) == [VALID[name]]


def test_empty_file_is_fine() -> None:
    result = analyse_source(b"", "empty.py")
    assert not result.errors and not result.findings


def test_str_source_with_a_lone_surrogate_does_not_raise() -> None:
    result = analyse_source("import torch\ns = '\udcff'\nx = torch.zeros(3)\n", "s.py")
    assert isinstance(result, FileResult)


@pytest.mark.parametrize("kind", DEEP_ERRORS)
def test_deep_nesting_the_parser_rejects_is_an_error(kind: str) -> None:
    result = analyse_source(_deep(kind), f"{kind}.py")
    assert result.errors and not result.findings


@pytest.mark.parametrize("kind", DEEP_ANY)
def test_deep_nesting_past_the_recursion_limit_is_a_finding_or_an_error(kind: str) -> None:
    result = analyse_source(_deep(kind), f"{kind}.py")
    # Silently returning nothing would hide a torch.zeros from the user.
    assert result.errors or _zeros_findings(result) == [(5, 9)]
    assert sys.getrecursionlimit() < 100_000  # the engine did not leave the limit raised for good


def test_very_long_line() -> None:
    pad = "pad = [" + ", ".join(["0"] * 100_000) + "]\n"  # ~300 kB on one line
    result = analyse_source(pad + GOOD, "long.py")
    assert not result.errors
    assert _zeros_findings(result) == [(6, 9)]


def test_hundreds_of_thousands_of_lines() -> None:
    lines = 200_000
    filler = "".join(f"v{i} = {i}\n" for i in range(lines))
    start = time.perf_counter()
    result = analyse_source(filler + GOOD, "huge.py")
    seconds = time.perf_counter() - start
    assert not result.errors
    assert _zeros_findings(result) == [(lines + 5, 9)]
    # A bound against runaway (quadratic) analysis, not a speed target: those are measured by
    # bench/scan_speed.py. Generous, because CI machines are shared.
    assert seconds < 300, seconds


def test_huge_file_of_zeros_calls_is_finite() -> None:
    # 5,000 allocations over 500 functions, plus one function holding 300 of them: the
    # per-buffer analysis walks its whole function, so buffers x statements must stay bounded.
    def fn(name: str, count: int) -> str:
        body = "".join(
            f"    b{i} = torch.zeros({i % 7 + 1})\n    b{i}.fill_(1)\n" for i in range(count)
        )
        return f"def {name}():\n{body}    return b0\n\n\n"

    src = "import torch\n\n\n" + "".join(fn(f"f{j}", 10) for j in range(470)) + fn("big", 300)
    start = time.perf_counter()
    result = analyse_source(src, "many.py")
    assert not result.errors
    assert len(_zeros_findings(result)) == 5_000
    assert time.perf_counter() - start < 300  # runaway bound, as above (each safe one is fixed)


def test_missing_file_directory_and_symlink_loop_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "dir.py").mkdir()
    for path in (tmp_path / "missing.py", tmp_path / "dir.py", tmp_path / "a.py"):
        result = analyse_file(path, path.name)
        assert result.errors and result.errors[0].path == path.name, path


@pytest.mark.skipif(IS_ROOT, reason="root reads files whatever their mode")
def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "secret.py"
    path.write_text(GOOD)
    path.chmod(0)
    try:
        result = analyse_file(path, "secret.py")
    finally:
        path.chmod(0o644)
    assert result.errors


# Random valid Python from hypothesmith, made to touch a buffer: names are renamed to `buf` and
# the code runs inside a function that allocates it, so the analysis really runs on it.
try:
    import hypothesmith

    # Built when the test first draws (the grammar takes ~2 s), not in every process that
    # collects this module; the examples drawn are the same.
    _PYTHON = st.deferred(lambda: hypothesmith.from_grammar(start="file_input"))
    HAVE_HYPOTHESMITH = True
except ImportError:  # pragma: no cover - the test extra installs it
    _PYTHON, HAVE_HYPOTHESMITH = st.just(""), False


class _RenameToBuf(ast.NodeTransformer):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name("buf", node.ctx) if self.rng.random() < 0.5 else node


def _embed(code: str, seed: int) -> str | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    tree = _RenameToBuf(random.Random(seed)).visit(tree)
    try:
        body = ast.unparse(ast.fix_missing_locations(tree))
    except RecursionError:
        return None
    indented = "".join("    " + line + "\n" for line in body.splitlines()) or "    pass\n"
    src = f"import torch\n\n\ndef f(a):\n    buf = torch.zeros(4)\n{indented}    return buf\n"
    try:
        compile(src, "fuzz.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return src


@pytest.mark.skipif(not HAVE_HYPOTHESMITH, reason="hypothesmith is not installed")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # random code: `"a"()` and the like
@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(code=_PYTHON, seed=st.integers(0, 2**16))
def test_fuzz_random_valid_python_never_crashes_the_analysis(code: str, seed: int) -> None:
    for source in (code, _embed(code, seed)):
        if source is None:
            continue
        result = analyse_source(source, "fuzz.py")  # must not raise
        lines = source.count("\n") + 1
        for f in result.findings:
            assert 1 <= f.line <= f.end_line <= lines and f.col >= 1, f


# ---- CLI level ----------------------------------------------------------------------------------


def _cli_available(command: str) -> bool:
    try:
        from zeroopt.cli.app import app
    except Exception:
        return False
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return command in names


needs_scan = pytest.mark.skipif(
    not _cli_available("scan"), reason="`zeroopt scan` is not registered yet"
)
needs_apply = pytest.mark.skipif(
    not _cli_available("apply"), reason="`zeroopt apply` is not registered yet"
)


def _zeroopt(
    *args: str, cwd: Path, timeout: float = 300, limit_memory: bool = True
) -> subprocess.CompletedProcess[str]:
    def limits() -> None:  # a runaway read (e.g. of /dev/zero) must fail fast, not eat the machine
        if limit_memory:
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    env = {**os.environ, "ZEROOPT_DEBUG": ""}
    return subprocess.run(
        [sys.executable, "-m", "zeroopt", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, preexec_fn=limits,
    )  # fmt: skip


def _hostile_tree(root: Path, huge: bool = True) -> dict[str, str]:
    """Corpus + generated cases in `root`; returns {file name: "error" | "valid" | "any" | "empty"}."""
    root.mkdir(parents=True, exist_ok=True)
    kinds: dict[str, str] = {}
    for path in CORPUS.glob("*.py"):
        shutil.copyfile(path, root / path.name)
        kinds[path.name] = (
            "error" if path.name in BROKEN else "valid" if path.name in VALID else "empty"
        )
    for kind in (*DEEP_ERRORS, *DEEP_ANY):
        (root / f"deep_{kind}.py").write_bytes(_deep(kind))
        kinds[f"deep_{kind}.py"] = "error" if kind in DEEP_ERRORS else "any"
    if huge:  # libcst needs minutes for this one: scan only
        filler = "".join(f"v{i} = {i}\n" for i in range(200_000))
        (root / "huge.py").write_text(filler + GOOD)
        kinds["huge.py"] = "valid"
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    sub = root / "sub"
    sub.mkdir()
    (sub / "loop").symlink_to(root, target_is_directory=True)  # a directory symlink loop
    (sub / "good_too.py").write_text(GOOD)
    kinds["good_too.py"] = "valid"
    return kinds


def _by_name(entries: list[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for e in entries:
        out.setdefault(Path(str(e["path"])).name, []).append(e)
    return out


@needs_scan
def test_scan_reports_each_hostile_file_and_finishes_the_rest(tmp_path: Path) -> None:
    kinds = _hostile_tree(tmp_path / "tree")
    proc = _zeroopt("scan", "tree", "--format", "json", "--no-cache", cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-3000:])
    report = json.loads(proc.stdout)
    errors, findings = _by_name(report["errors"]), _by_name(report["findings"])
    for name, kind in kinds.items():
        if kind == "error":
            assert name in errors and name not in findings, name
        elif kind == "valid":
            assert name not in errors and name in findings, (name, errors.get(name))
        elif kind == "any":
            assert name in errors or name in findings, name
        else:
            assert name not in errors and name not in findings, name
    for name in ("loop_a.py", "loop_b.py", "dangling.py"):
        assert name in errors, (
            f"{name}: a broken symlink named explicitly by the tree is not reported"
        )
    assert all(str(e["message"]).strip() for e in report["errors"])
    assert report["summary"]["findings"] == len(report["findings"])


@needs_scan
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_scan_of_a_named_pipe_finishes(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    os.mkfifo(tmp_path / "tree" / "fifo.py")  # opening it for reading blocks until a writer comes
    (tmp_path / "tree" / "good.py").write_text(GOOD)
    proc = _zeroopt("scan", "tree", "--format", "json", "--no-cache", cwd=tmp_path, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert "good.py" in _by_name(report["findings"])
    assert "fifo.py" not in _by_name(report["findings"])


@needs_scan
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_scan_of_a_symlink_to_an_endless_device_finishes(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "tree" / "good.py").write_text(GOOD)
    proc = _zeroopt("scan", "tree", "--format", "json", "--no-cache", cwd=tmp_path, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    # Reported as an error or skipped as not a regular file; never read forever, never a finding.
    assert "good.py" in _by_name(report["findings"])
    assert "zero.py" not in _by_name(report["findings"])


@needs_scan
def test_scan_survives_a_directory_changing_during_the_scan(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for d in range(12):
        (tree / f"d{d}").mkdir(parents=True)
        for i in range(40):
            (tree / f"d{d}" / f"m{i}.py").write_text(GOOD)
    stop = threading.Event()

    def churn() -> None:
        rng = random.Random(0)
        n = 0
        while not stop.is_set():
            d = tree / f"d{rng.randrange(12)}"
            victim = d / f"m{rng.randrange(40)}.py"
            try:
                if rng.random() < 0.5:
                    victim.unlink(missing_ok=True)
                else:
                    victim.write_text(GOOD if rng.random() < 0.5 else "def broken(:\n")
                if rng.random() < 0.05:
                    shutil.rmtree(d, ignore_errors=True)
                    d.mkdir(exist_ok=True)
                # Files come and go at the top too, but the tree stays bounded: a folder
                # that grows without end cannot be listed to its end by anyone.
                (tree / f"new{n % 200}.py").write_text(GOOD)
                (tree / f"new{(n + 100) % 200}.py").unlink(missing_ok=True)
                n += 1
            except OSError:
                pass

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(2):
            proc = _zeroopt("scan", "tree", "--format", "json", "--no-cache", cwd=tmp_path)
            assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
            assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-3000:])
            json.loads(proc.stdout)
    finally:
        stop.set()
        thread.join()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.is_fifo()
    }


@needs_apply
def test_apply_leaves_hostile_files_untouched_and_fixes_the_rest(tmp_path: Path) -> None:
    kinds = _hostile_tree(tmp_path / "tree", huge=False)
    before = _snapshot(tmp_path / "tree")
    proc = _zeroopt("apply", "tree", "--no-cache", cwd=tmp_path, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1, 2)
    after = _snapshot(tmp_path / "tree")
    assert set(after) == set(before), set(after) ^ set(before)  # no temp files left behind
    for rel, data in before.items():
        name = Path(rel).name
        if kinds.get(name) in ("error", "empty"):
            assert after[rel] == data, f"{rel} was modified"
        elif kinds.get(name) == "valid":
            assert after[rel] != data, f"{rel} was not fixed"
            assert after[rel] == data.replace(b"torch.zeros(4)", b"torch.empty(4)"), rel


@needs_apply
@pytest.mark.skipif(IS_ROOT, reason="root may write read-only files")
def test_apply_reports_a_read_only_file_and_loses_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    ro, rw = tree / "ro.py", tree / "rw.py"
    ro.write_text(GOOD)
    rw.write_text(GOOD)
    ro.chmod(0o444)
    proc = _zeroopt("apply", "tree", "--no-cache", cwd=tmp_path)
    assert ro.read_text() == GOOD
    assert "torch.empty" in rw.read_text()
    assert "ro.py" in proc.stdout + proc.stderr and proc.returncode == 2


def _kill_in_write_phase(args: list[str], cwd: Path, tree: Path, replaced: int) -> None:
    """Run `zeroopt ARGS` and SIGKILL it (and its children) once its write phase in `tree` has
    begun: as soon as a writer's temporary file appears (`replaced=0`), or once `replaced` files
    have been replaced (a new inode under the old name). Watching the tree rather than a clock
    puts the kill among the writes, whatever the machine's speed or load."""
    inodes = {p.name: p.stat().st_ino for p in tree.iterdir()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "zeroopt", *args], cwd=cwd,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        while proc.poll() is None:
            with os.scandir(tree) as it:
                entries = list(it)
            done = sum(e.name in inodes and e.inode() != inodes[e.name] for e in entries)
            writing = any(e.name not in inodes for e in entries)
            if (done >= replaced) if replaced else writing:
                break
            time.sleep(0.001)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@needs_apply
@pytest.mark.slow
def test_apply_killed_mid_write_never_leaves_a_partial_file(tmp_path: Path) -> None:
    # Long comment lines: files big enough that each write takes a while, cheap to analyse.
    filler = "".join(
        f"# {i}: padding so that writing takes a while{'.' * 2000}\n" for i in range(40)
    )
    original = (filler + GOOD).encode()
    expected = original.replace(b"torch.zeros(4)", b"torch.empty(4)")
    files = 32

    def fresh(root: Path) -> None:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for i in range(files):
            (root / f"m{i:02}.py").write_bytes(original)

    ref = tmp_path / "ref"
    fresh(ref)
    proc = _zeroopt("apply", "ref", "--no-cache", "-j", "1", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert all(p.read_bytes() == expected for p in ref.glob("*.py")), "apply did not rewrite"
    work = tmp_path / "work"
    seen: set[str] = set()
    mid_write = []
    # Killed while the first file is written, half way through the files, and at the last one.
    for replaced in (0, files // 2, files - 1):
        fresh(work)
        _kill_in_write_phase(["apply", "work", "--no-cache", "-j", "1"], tmp_path, work, replaced)
        states = set()
        for p in work.iterdir():
            if p.suffix == ".py" and p.name.startswith("m"):
                data = p.read_bytes()
                assert data in (original, expected), (
                    f"{p.name}: partial file after a kill with {replaced} replaced"
                )
                states.add("new" if data == expected else "old")
        seen |= states
        strays = [p.name for p in work.iterdir() if not p.name.startswith("m")]
        assert not any(name.endswith(".py") for name in strays), strays
        # Some files rewritten and others not, or a temporary file left: the kill was mid-write.
        mid_write.append(states == {"old", "new"} or bool(strays))
    assert seen, "nothing was checked"
    assert any(mid_write), "no kill landed while apply was writing"
