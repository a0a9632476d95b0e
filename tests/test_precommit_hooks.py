"""The pre-commit hooks, driven by the real `pre-commit try-repo` in a temporary git repository.

pre-commit installs zeroopt into its own virtualenv with pip (from PyPI for the dependencies),
so this is the slowest test of the suite: one install, shared by every hook run below. The
hook repository is a committed snapshot of this checkout (tracked plus untracked, non-ignored
files), because `try-repo` only carries over *tracked* uncommitted changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from zeroopt.scan import file_analysis

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with pre-commit) is missing")

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = shutil.which("pre-commit") or (
    str(Path(sys.executable).with_name("pre-commit"))
    if Path(sys.executable).with_name("pre-commit").exists()
    else None
)
GIT = shutil.which("git")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed"),
    pytest.mark.skipif(GIT is None, reason="git is not installed"),
]

SAFE = "import torch\n\ndef f():\n    x = torch.zeros(4)\n    x.fill_(1)\n    return x.sum()\n"
UNSAFE_EMPTY = "import torch\n\ndef g():\n    y = torch.empty(4)\n    return y.sum()\n"
CLEAN = "def h():\n    return 1\n"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        PRE_COMMIT_HOME=str(home),
        PRE_COMMIT_COLOR="never",
        NO_COLOR="1",
    )
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _snapshot(dest: Path, env: dict[str, str]) -> Path:
    """This checkout as a committed git repository, as a user's `rev:` would pin it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    if listed.returncode == 0:
        files = [Path(p.decode()) for p in listed.stdout.split(b"\0") if p]
    else:  # not a git checkout (an sdist): take the package sources
        files = [p.relative_to(ROOT) for p in ROOT.rglob("*") if p.is_file()]
    skip = {"tests", "bench", "build", ".git", "docs"}
    for rel in files:
        if rel.parts[0] in skip or "__pycache__" in rel.parts or not (ROOT / rel).is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    # pyproject names README.md; a checkout may not have it yet
    if not (dest / "README.md").exists():
        (dest / "README.md").write_text("zeroopt\n")
    _git(dest, env, "init", "-q")
    _git(dest, env, "add", "-A")
    _git(dest, env, "commit", "-q", "-m", "snapshot")
    return dest


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    env = _env(base / "home")
    return _snapshot(base / "zeroopt-src", env), env


def _target(tmp_path: Path, env: dict[str, str], files: dict[str, str]) -> Path:
    repo = tmp_path / "user-repo"
    repo.mkdir()
    _git(repo, env, "init", "-q")
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, env, "add", "-A")
    return repo


def _try_repo(
    repo: Path, src: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT is not None
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(src), *args, "--verbose"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _config(repo: Path, src: Path, env: dict[str, str], *ids: str) -> Path:
    rev = _git(src, env, "rev-parse", "HEAD").strip()
    hooks = [{"id": i} for i in ids]
    config = {"repos": [{"repo": str(src), "rev": rev, "hooks": hooks}]}
    cfg = repo / ".pre-commit-config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    return cfg


def _run(
    repo: Path, src: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """`pre-commit run` with a config pinning the snapshot: unlike try-repo, whose store is
    temporary, it reuses the hook environment in PRE_COMMIT_HOME across runs."""
    assert PRE_COMMIT is not None
    cfg = _config(repo, src, env, "zeroopt", "zeroopt-check")
    return subprocess.run(
        [PRE_COMMIT, "run", "--config", str(cfg), *args, "--verbose"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _status(output: str, hook_name_prefix: str) -> str:
    """`Passed`/`Failed`/`Skipped` on the line of the hook whose name starts with the prefix."""
    for line in output.splitlines():
        if line.startswith(hook_name_prefix + " ") or line.startswith(hook_name_prefix + "."):
            return line.rstrip().rsplit(")", 1)[-1].rsplit(".", 1)[-1].strip()
    raise AssertionError(f"no line for {hook_name_prefix!r} in:\n{output}")


def test_manifest_is_what_the_docs_promise() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"zeroopt", "zeroopt-check", "zeroopt-guard"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert hook["require_serial"] is True
        assert hook["minimum_pre_commit_version"] == "3.0.0"
    assert hooks["zeroopt"]["entry"].startswith("zeroopt apply --exit-non-zero-on-fix")
    assert hooks["zeroopt-check"]["entry"].startswith("zeroopt scan")
    assert hooks["zeroopt-guard"]["entry"].startswith("zeroopt scan --since HEAD")


def test_hooks_with_pre_commit_try_repo(
    hook_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    src, env = hook_repo
    real_engine = bool(file_analysis.analyse_source(SAFE, "probe.py").findings)
    repo = _target(
        tmp_path,
        env,
        {"safe.py": SAFE, "bad.py": UNSAFE_EMPTY, "clean.py": CLEAN, "notes.txt": "x"},
    )
    # Both hooks in one run (one environment install): apply first (ids sort), then the check.
    done = _try_repo(repo, src, env, "--files", "safe.py", "bad.py", "clean.py", "notes.txt")
    out = done.stdout + done.stderr
    assert "zeroopt" in out and "Traceback" not in out, out
    assert "internal error" not in out, out
    assert (repo / "clean.py").read_text() == CLEAN
    assert (repo / "bad.py").read_text() == UNSAFE_EMPTY  # unsafe: reported, never rewritten
    if not real_engine:
        # The engine is still a placeholder: nothing to find, both hooks pass untouched.
        assert done.returncode == 0, out
        assert _status(out, "zeroopt check") == "Passed"
        assert (repo / "safe.py").read_text() == SAFE
        pytest.skip("the engine is a placeholder; hooks installed and ran, findings not testable")
    assert done.returncode == 1, out
    assert (repo / "safe.py").read_text() == SAFE.replace("torch.zeros", "torch.empty")
    assert _status(out, "zeroopt (torch.zeros") == "Failed"  # it changed a file
    assert _status(out, "zeroopt check") == "Failed"  # the unsafe torch.empty in bad.py

    # Second run on the fixed tree without the unsafe file: both hooks pass, nothing changes.
    done = _run(repo, src, env, "--files", "safe.py", "clean.py")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert _status(out, "zeroopt (torch.zeros") == "Passed"
    assert _status(out, "zeroopt check") == "Passed"


def test_empty_file_list_succeeds(hook_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    src, env = hook_repo
    repo = _target(tmp_path, env, {"notes.txt": "no python here\n"})
    done = _run(repo, src, env, "--files", "notes.txt")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert _status(out, "zeroopt check") == "Skipped"


GUARD_BASE = (
    "import torch\n\n"
    "def lengths(seq_lens, n):\n"
    "    total = torch.zeros(n, dtype=torch.int32)\n"
    "    total += seq_lens\n"
    "    return total\n\n"
    "def copy(x):\n"
    "    out = torch.zeros(4)\n"
    "    out.copy_(x)\n"
    "    return out\n"
)


def _commit(repo: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """A real `git commit`, through the hook `pre-commit install` put in .git/hooks."""
    return subprocess.run(
        ["git", "commit", "-m", message],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _install_guard(repo: Path, src: Path, env: dict[str, str]) -> None:
    assert PRE_COMMIT is not None
    cfg = _config(repo, src, env, "zeroopt-guard")
    _git(repo, env, "add", cfg.name)
    done = subprocess.run(
        [PRE_COMMIT, "install"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_guard_blocks_a_commit_that_turns_a_read_zeros_into_empty(
    hook_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    src, env = hook_repo
    repo = _target(tmp_path, env, {"lengths.py": GUARD_BASE})
    _git(repo, env, "commit", "-q", "-m", "base")
    _install_guard(repo, src, env)
    _git(repo, env, "commit", "-q", "-m", "hook")  # nothing python staged: the hook skips
    head = _git(repo, env, "rev-parse", "HEAD")
    # The accumulator's zeros are read: as an empty it is `unsafe`, and the commit is refused.
    (repo / "lengths.py").write_text(
        GUARD_BASE.replace("total = torch.zeros", "total = torch.empty")
    )
    _git(repo, env, "add", "lengths.py")
    done = _commit(repo, env, "zeros -> empty")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert _status(out, "zeroopt guard") == "Failed"
    assert "ZO002" in out and "unsafe" in out, out
    assert _git(repo, env, "rev-parse", "HEAD") == head
    # An unstaged bad change is not what is committed: pre-commit stashes it, the guard passes
    # on the staged, proven-safe rewrite.
    (repo / "lengths.py").write_text(GUARD_BASE.replace("out = torch.zeros", "out = torch.empty"))
    _git(repo, env, "add", "lengths.py")
    (repo / "lengths.py").write_text(GUARD_BASE.replace("torch.zeros", "torch.empty"))
    done = _commit(repo, env, "the safe rewrite only")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert _status(out, "zeroopt guard") == "Passed"
    assert _git(repo, env, "rev-parse", "HEAD") != head
    assert "total = torch.empty" in (repo / "lengths.py").read_text()  # the stash came back


def _seed_builder():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "zeroopt_bench_guard_seed", ROOT / "bench" / "guard_seed.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The change the guard exists for, rebuilt at test time from the released wheel (never
# committed here): SGLang 0.4.6.post5, the 23 zeros of init_cuda_graph_state turned into empty.
SEED_WHEEL = "sglang-0.4.6.post5-py3-none-any.whl"
SEED_SHA256 = "2a48053bd975e09ff10eabf1ef8bab4c913f3c3e16a3e45c13be1b4543cfeaed"


def test_guard_blocks_the_sglang_seed_change(
    hook_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    seed = _seed_builder()
    assert (seed.WHEEL_NAME, seed.WHEEL_SHA256) == (SEED_WHEEL, SEED_SHA256)
    wheel = seed.find_wheel()
    if wheel is None:
        pytest.skip(f"{SEED_WHEEL} is not available locally")
    assert seed.sha256(wheel) == SEED_SHA256
    src, env = hook_repo
    repo = tmp_path / "sglang-checkout"
    sites = seed.build_checkout(wheel, repo)
    assert len(sites) == 23
    _install_guard(repo, src, env)
    _git(repo, env, "add", seed.BACKEND)
    head = _git(repo, env, "rev-parse", "HEAD")
    done = _commit(repo, env, "init_cuda_graph_state: zeros -> empty")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert _status(out, "zeroopt guard") == "Failed"
    assert "cache_seqlens" in out and "unsafe" in out, out
    assert _git(repo, env, "rev-parse", "HEAD") == head


def test_both_hooks_fail_on_a_file_that_cannot_be_parsed(
    hook_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A file nothing could be judged in is not a clean file: the check hook fails with the fix
    hook, and both name it."""
    src, env = hook_repo
    broken = "import torch\n\ndef f(:\n    return torch.zeros(3)\n"
    repo = _target(tmp_path, env, {"broken.py": broken, "clean.py": CLEAN})
    done = _run(repo, src, env, "--files", "broken.py", "clean.py")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert _status(out, "zeroopt (torch.zeros") == "Failed"
    assert _status(out, "zeroopt check") == "Failed"
    assert "broken.py: error: syntax error" in out, out
    assert (repo / "broken.py").read_text() == broken
