"""Names resolved across the modules of the scanned tree (analysis/project.py), and the per-file
cache invalidated when a module a result resolved through changes."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.analysis.module_getattr import answered_names
from zeroopt.analysis.project import ProjectIndex, ProjectView, module_name_of
from zeroopt.scan.config import load_config
from zeroopt.scan.runner import ScanReport, scan

USER = """\
from ..common import *


def f(n):
    x = torch.zeros(n)
    x.fill_(1.0)
    return x
"""


def _tree(project: Callable[..., Path], common: str, user: str = USER) -> None:
    project("pkg/__init__.py", "")
    project("pkg/sub/__init__.py", "")
    project("pkg/common.py", common)
    project("pkg/sub/user.py", user)


def _scan(jobs: int = 1, use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=jobs, use_cache=use_cache)


def _verdicts(report: ScanReport) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, str(f.verdict)) for f in report.findings]


def test_module_names_walk_up_packages(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for p in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/m.py", "loose.py"):
        (tmp_path / p).write_text("")
    assert module_name_of(str(tmp_path / "pkg/sub/m.py")) == ("pkg.sub.m", False)
    assert module_name_of(str(tmp_path / "pkg/sub/__init__.py")) == ("pkg.sub", True)
    assert module_name_of(str(tmp_path / "loose.py")) == ("loose", False)
    index = ProjectIndex.build(str(tmp_path / p) for p in ("pkg/sub/m.py", "loose.py"))
    assert "pkg.sub.m" in index.modules and "loose" not in index.modules
    assert index.absolute("pkg.sub.m", False, 1, "x") == "pkg.sub.x"
    assert index.absolute("pkg.sub.m", False, 2, "") == "pkg"
    assert index.absolute("pkg.sub", True, 1, "x") == "pkg.sub.x"
    assert index.absolute("pkg.sub.m", False, 4, "x") is None


def test_absolute_imports_only_through_packages_at_the_scanned_roots(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "deep" / "models").mkdir(parents=True)
    for p in ("pkg/__init__.py", "pkg/deep/models/__init__.py", "pkg/deep/models/m.py"):
        (tmp_path / p).write_text("")
    files = [str(p) for p in tmp_path.rglob("*.py")]
    assert ProjectIndex.build(files, [str(tmp_path)]).tops == {"pkg"}
    assert ProjectIndex.build(files, [str(tmp_path / "pkg")]).tops == {"pkg"}
    assert ProjectIndex.build(files).tops == {"pkg"}
    # `pkg/deep` has no __init__.py: a namespace package inside `pkg` (PEP 420), which is how
    # the import system names what lies below it.
    index = ProjectIndex.build(files, [str(tmp_path)])
    assert "pkg.deep.models.m" in index.modules and "models.m" not in index.modules
    assert index.namespaces == {"pkg.deep"} and index.has_module("pkg.deep")


def test_namespace_packages_inside_a_package(tmp_path: Path) -> None:
    """sglang's `sglang/srt/` has no `__init__.py`: its modules still import as `sglang.srt.x`,
    and a module file beside a folder of its name wins the import (`a/b.py` over `a/b/`)."""
    for p in ("top/__init__.py", "top/ns/inner/m.py", "top/ns/inner/__init__.py", "top/ns/k.py",
              "top/shadow.py", "top/shadow/hidden.py", "loose/x.py"):  # fmt: skip
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("")
    assert module_name_of(str(tmp_path / "top/ns/k.py")) == ("top.ns.k", False)
    assert module_name_of(str(tmp_path / "top/ns/inner/m.py")) == ("top.ns.inner.m", False)
    assert module_name_of(str(tmp_path / "loose/x.py")) == ("x", False)
    index = ProjectIndex.build((str(p) for p in tmp_path.rglob("*.py")), [str(tmp_path)])
    assert {"top.ns.k", "top.ns.inner", "top.ns.inner.m", "top.shadow"} <= set(index.modules)
    assert "top.shadow.hidden" not in index.modules
    assert index.namespaces == {"top.ns"} and index.children["top.ns"] == {"k", "inner"}


def test_what_an_import_below_a_namespace_folder_may_find(tmp_path: Path) -> None:
    """A module file beside the folder, scanned or not, takes its names; a name a file has below
    a namespace folder (`pkg.m` with `vend/lib` on sys.path) that another file has outright
    is a clash; a namespace package's listing says it is one."""
    for p in ("top/__init__.py", "top/ns/k.py", "top/other/j.py", "vend/__init__.py",
              "vend/lib/pkg/__init__.py", "vend/lib/pkg/m.py", "pkg/__init__.py", "pkg/m.py",
              "pkg/own.py"):  # fmt: skip
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("")
    (tmp_path / "top/other.pyc").write_bytes(b"")  # not scanned, yet it wins the import
    index = ProjectIndex.build((str(p) for p in tmp_path.rglob("*.py")), [str(tmp_path)])
    assert "top.other.j" not in index.modules and "top.other" not in index.namespaces
    assert index.modules["top.ns.k"].endswith("k.py") and "top.ns" in index.namespaces
    assert index.listing("top.ns") == "namespace:k"
    assert "vend.lib.pkg.m" in index.modules and "pkg.own" in index.modules
    assert "pkg.m" not in index.modules and "pkg" not in index.modules


def test_two_copies_of_a_module_resolve_nothing(tmp_path: Path) -> None:
    for root in ("a", "b"):
        (tmp_path / root / "pkg").mkdir(parents=True)
        (tmp_path / root / "pkg" / "__init__.py").write_text("")
        (tmp_path / root / "pkg" / "m.py").write_text("")
    index = ProjectIndex.build(str(p) for p in tmp_path.rglob("*.py"))
    assert "pkg.m" not in index.modules and "pkg" not in index.modules


@pytest.mark.parametrize("jobs", [1, 2])
def test_torch_through_a_star_import(project: Callable[..., Path], jobs: int) -> None:
    _tree(project, "import torch\nimport os\n")
    # More files than 2 * jobs, so that jobs=2 really runs worker processes.
    for i in range(4):
        project(f"pkg/pad{i}.py", "import torch\nx = torch.zeros(3)\n")
    report = _scan(jobs)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(report)


def test_relative_reexport_chain(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "from .base import th\n")
    project("pkg/base.py", "import torch as th\n")
    # (`import torch` too: the prefilter analyses only files that name torch.)
    user = "import torch\nfrom . import th\n\ndef f(n):\n    x = th.zeros(n)\n    return x\n"
    project("pkg/user.py", user)
    (finding,) = _scan().findings
    assert (finding.path, finding.line) == ("pkg/user.py", 5)


@pytest.mark.parametrize(
    "common",
    [
        # Two bindings that disagree: not resolved.
        "import torch\n\nclass torch:  # noqa\n    pass\n",
        # A static __all__ that leaves torch out: the star import does not bind it.
        "import torch\n__all__ = ['helper']\nhelper = 1\n",
        # A dynamic __all__ or a module binding names through globals(): certain of nothing.
        "import torch\n__all__ = ['torch']\n__all__ += ['x']\n",
        "import torch\nglobals()['torch'] = object()\n",
        # Its own star import from a module outside the tree may rebind torch.
        "import torch\nfrom somewhere_else import *\n",
    ],
)
def test_uncertain_bindings_resolve_nothing(project: Callable[..., Path], common: str) -> None:
    _tree(project, common)
    assert not [v for v in _verdicts(_scan()) if v[0] == "pkg/sub/user.py"]


def test_star_import_from_a_package_binds_its_submodules(project: Callable[..., Path]) -> None:
    """`from pkg import *` (no `__all__`) also binds the submodules already imported: a scanned
    `pkg/torch.py` may be what `torch` means after it."""
    project("pkg/__init__.py", "")
    user = "import torch\nfrom pkg import *\n\ndef f(n):\n    x = torch.zeros(n)\n    return x\n"
    project("app/__init__.py", "")
    project("app/user.py", user)
    _old(Path.cwd())
    assert [v for v in _verdicts(_scan(use_cache=True)) if v[0] == "app/user.py"]
    # A new submodule named torch: the cached result of the unchanged user.py is not reused.
    project("pkg/torch.py", "")
    assert not [v for v in _verdicts(_scan(use_cache=True)) if v[0] == "app/user.py"]


def test_star_import_shadowing_an_own_import(project: Callable[..., Path]) -> None:
    """`import torch` in the file and a star import that binds another `torch`: they disagree."""
    _tree(project, "torch = object()\n", "import torch\n" + USER)
    assert not [v for v in _verdicts(_scan()) if v[0] == "pkg/sub/user.py"]


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_cache_follows_the_imported_module(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    _tree(project, "import torch\n")
    _old(root)
    first = _scan(use_cache=True)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(first)
    again = _scan(use_cache=True)
    assert again.analysed == 0 and _verdicts(again) == _verdicts(first)

    # Only the imported module changes: torch is no longer what the star import gives.
    (root / "pkg/common.py").write_text("torch = None\nother = 1\n")
    _old(root)
    changed = _scan(use_cache=True)
    assert changed.analysed >= 1
    assert not [v for v in _verdicts(changed) if v[0] == "pkg/sub/user.py"]

    # And back: the result is found again, and then served from the cache.
    (root / "pkg/common.py").write_text("import torch\n")
    _old(root)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(_scan(use_cache=True))
    warm = _scan(use_cache=True)
    assert warm.analysed == 0 and ("pkg/sub/user.py", 5, "safe") in _verdicts(warm)


def test_cache_follows_the_module_name(project: Callable[..., Path]) -> None:
    """Removing an `__init__.py` changes what the relative import names: without
    `pkg/__init__.py`, `pkg/sub` is a package of its own and `..common` names nothing. Without
    `pkg/sub/__init__.py` only, `pkg/sub` is a namespace package inside `pkg` (PEP 420) and the
    import still works."""
    root = Path.cwd()
    _tree(project, "import torch\n")
    _old(root)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(_scan(use_cache=True))
    (root / "pkg/sub/__init__.py").unlink()
    _old(root)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(_scan(use_cache=True))
    (root / "pkg/sub/__init__.py").write_text("")
    (root / "pkg/__init__.py").unlink()
    assert not [v for v in _verdicts(_scan(use_cache=True)) if v[0] == "pkg/sub/user.py"]


KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def copy_kernel(in_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(in_ptr + offs))
"""
LAUNCH = """\
import torch
from .kernels import copy_kernel


def g(n):
    y = torch.empty(n)
    z = torch.zeros(n)
    copy_kernel[(1,)](y, z, BLOCK=128)
    return z
"""


def test_imported_triton_kernel_uses_its_summary(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    project("kp/__init__.py", "")
    project("kp/kernels.py", KERNELS)
    project("kp/user.py", LAUNCH)
    _old(root)
    report = _scan(use_cache=True)
    (unsafe,) = [f for f in report.findings if f.rule == "ZO002"]
    assert str(unsafe.verdict) == "unsafe" and unsafe.line == 6
    assert "copy_kernel" in unsafe.message and "kp.kernels" in unsafe.message

    # The kernel stops loading its first pointer: the cached result of user.py is not reused.
    (root / "kp/kernels.py").write_text(KERNELS.replace("tl.load(in_ptr + offs)", "1.0"))
    _old(root)
    assert not [f for f in _scan(use_cache=True).findings if f.rule == "ZO002"]


def test_imported_kernel_name_bound_twice_is_not_summarised(project: Callable[..., Path]) -> None:
    project("kp/__init__.py", "")
    project("kp/kernels.py", KERNELS + "\ncopy_kernel = None\n")
    project("kp/user.py", LAUNCH)
    assert not [f for f in _scan().findings if f.rule == "ZO002"]


def test_absolute_star_import_when_only_a_subpackage_is_scanned(
    project: Callable[..., Path],
) -> None:
    """`from pkg.sub.common import *` reads the module itself: `pkg/__init__.py` need not be
    scanned for it (the import system does not walk the package's attributes either)."""
    _tree(
        project,
        "import torch\n",
        USER.replace("from ..common import *", "from pkg.common import *"),
    )
    project("pkg/sub/common2.py", "")
    report = scan(["pkg/sub", "pkg/common.py"], load_config(["."]), jobs=1, use_cache=False)
    assert ("pkg/sub/user.py", 5, "safe") in _verdicts(report)


# Modules whose def, lambda or class bodies bind module names or star-import (each spelled so
# that the text test must see it), and modules whose bodies cannot.
_BODY_BINDING_MODULES = [
    b"def f():\n    global g\n    g = 1\n",
    b"class C:\n    global g\n    g = 2\n",
    b"def f():\n    if True: global g\n    (g := 3)\n",
    b"def f():\n    x = 1; global g; g = x\n",
    b"def f():\r    global g\r    g = 1\r",
    b"def f():\n    def h():\n        global g\n        g = 1\n",
    b"def f():\n    from os.path import *\n",
    b"class C:\n    from os.path import \\\n        *\n",
]
_PLAIN_MODULES = [
    b"import os\nx = 1\ndef f(a=(d := 2)):\n    y = 3\n    return [z for z in range(y)]\n",
    b"@(deco := staticmethod)\nclass C(base := object):\n    attr = 1\n    def m(self):\n"
    b"        v = 2\n",
    b"lam = lambda q=(w := 1): (r := q)\nfrom os import path as p, sep\n",
    b"[it for it in range(3)]\nfor i in range(2):\n    pass\n# global g\ns = 'import *'\n",
    b"from os.path import *\nimport sys\n",
]


def _entry_pair(tmp_path: Path, source: bytes) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """(the view's entry of a module, the entry of a walk of every body) as comparable data."""
    import ast

    from zeroopt.analysis.project import ProjectView
    from zeroopt.analysis.resolve import Resolver

    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    path = tmp_path / "pkg" / "m.py"
    path.write_bytes(source)
    view = ProjectView(ProjectIndex.build([str(path), str(tmp_path / "pkg" / "__init__.py")]))
    entry = view.entry("pkg.m")
    assert entry is not None
    tree = ast.parse(source)
    full = Resolver.build(tree, module_name="pkg.m", project=view, raw=True)
    bindings = {k: frozenset(v) for k, v in full.scopes[tree].bindings.items()}
    return (
        (list(entry.bindings.items()), entry.stars),
        (list(bindings.items()), tuple(full.star_targets)),
    )


@pytest.mark.parametrize("source", _BODY_BINDING_MODULES + _PLAIN_MODULES)
def test_module_entries_equal_a_walk_of_every_body(tmp_path: Path, source: bytes) -> None:
    """The entry's walk leaves def, lambda and class bodies out only where the text shows that
    none binds a module name or star-imports: the entry is the one the full walk makes."""
    mine, full = _entry_pair(tmp_path, source)
    assert mine == full


@pytest.mark.parametrize("source", _BODY_BINDING_MODULES)
def test_bodies_that_bind_module_names_are_walked(tmp_path: Path, source: bytes) -> None:
    """Each module of the first list changes its entry through a body: leaving the bodies out
    there would give another entry, so the text test above is what keeps the entries equal."""
    import ast

    from zeroopt.analysis.project import ProjectView
    from zeroopt.analysis.resolve import Resolver

    view = ProjectView(ProjectIndex.build([str(tmp_path / "m.py")]))
    tree = ast.parse(source)
    full = Resolver.build(tree, project=view, raw=True)
    bare = Resolver.build(tree, project=view, raw=True, module_only=True)
    assert (full.scopes[tree].bindings, full.star_targets) != (
        bare.scopes[tree].bindings,
        bare.star_targets,
    )


_HOOK = "def __getattr__(name):\n{body}"


@pytest.mark.parametrize(
    ("text", "answered"),
    [
        ("x = 1\n", frozenset()),
        (_HOOK.format(body="    return 1\n"), None),
        (_HOOK.format(body="    if name == 'a':\n        return 1\n    raise AttributeError(name)\n"),
         frozenset({"a"})),
        (_HOOK.format(body="    if name in ('a', 'b'):\n        return 1\n    else:\n"
                           "        raise AttributeError(name)\n"), frozenset({"a", "b"})),
        ("N = {'a': 1}\n" + _HOOK.format(body="    if name in N:\n        return N[name]\n"
                                              "    raise AttributeError(name)\n"),
         frozenset({"a"})),
        ("N = {'a': 1}\nN['b'] = 2\n" + _HOOK.format(body="    if name in N:\n        return 1\n"
                                                          "    raise AttributeError(name)\n"),
         None),
        ("N = {'a': 1}\nN.update(b=2)\n" + _HOOK.format(body="    if name in N:\n        return 1\n"
                                                             "    raise AttributeError(name)\n"),
         None),
        (_HOOK.format(body="    if name == 'a':\n        return 1\n"), None),
        (_HOOK.format(body="    if name == 'a':\n        return 1\n    raise KeyError(name)\n"), None),
        (_HOOK.format(body="    if name.startswith('a'):\n        return 1\n"
                           "    raise AttributeError(name)\n"), None),
        (_HOOK.format(body="    name = 'a'\n    if name == 'a':\n        return 1\n"
                           "    raise AttributeError(name)\n"), None),
        ("__getattr__ = lambda n: 1\n", None),
        ("if x:\n    " + _HOOK.format(body="        raise AttributeError(name)\n")
         + "else:\n    __getattr__ = print\n", None),
        (_HOOK.format(body="    raise AttributeError(name)\n")
         + "match 1:\n    case _:\n        " + _HOOK.format(body="            return 1\n"), None),
        ("try:\n    " + _HOOK.format(body="        return 1\n")
         + "except* ValueError:\n    pass\n", None),
        *(
            ("N = {'a': 1}\n" + bind + "\n" + _HOOK.format(
                body="    if name in N:\n        return 1\n    raise AttributeError(name)\n"), None)
            for bind in ("from m import N", "import N", "def N(): pass", "class N: pass",
                         "from m import *", "try:\n    pass\nexcept E as N:\n    pass",
                         "match x:\n    case N:\n        pass",
                         "match x:\n    case {**N}:\n        pass")
        ),
        (_HOOK.format(body="    raise AttributeError(name)\n")
         + "match print:\n    case __getattr__:\n        pass\n", None),
        ("async " + _HOOK.format(body="    if name == 'a':\n        return 1\n"
                                      "    raise AttributeError(name)\n"), None),
        (_HOOK.format(body="    if name == 'a':\n        yield 1\n    raise AttributeError(name)\n"),
         None),
        ("@cache\n" + _HOOK.format(body="    if name == 'a':\n        return 1\n"
                                         "    raise AttributeError(name)\n"), None),
        (_HOOK.format(body="    if name == 'a':\n        return 1\n    raise AttributeError(name)\n")
         + "def install():\n    global __getattr__\n    __getattr__ = print\n", None),
    ],
)  # fmt: skip
def test_names_a_module_getattr_answers(text: str, answered: frozenset[str] | None) -> None:
    """A lazy `__getattr__` answers only the literal names it tests; anything else, any name."""
    assert answered_names(ast.parse(text)) == answered


def _package_view(tmp_path: Path, files: dict[str, str]) -> ProjectView:
    """A view of package `pkg` made of `files` (name -> text) under `tmp_path`."""
    from zeroopt.analysis.project import ProjectView

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in files.items():
        (pkg / name).write_text(text)
    return ProjectView(ProjectIndex.build([str(pkg / n) for n in files]))


def _asked_twice(
    view: ProjectView, ask: Callable[[], object]
) -> list[tuple[object, dict[str, str]]]:
    """(answer, the deps recorded) for two files of `pkg` asking the same in turn: the second
    gets the answer from a memo."""
    recorded = []
    for _ in range(2):
        view.start_file("pkg.user")
        answer = ask()
        recorded.append((answer, dict(view.deps)))
    return recorded


def test_import_time_memo_hits_record_the_deps_of_a_miss(tmp_path: Path) -> None:
    """Whether a def may be replaced at import is memoised per worker; a second file asking the
    same question must record the same modules as dependencies as the first did, or its cached
    result would not be invalidated when one of them changes."""
    from zeroopt.analysis.import_time import replaced_at_import

    view = _package_view(
        tmp_path,
        {
            "__init__.py": "from . import helpers\nfrom .sub import thing\n",
            "helpers.py": "import pkg.sub\n\ndef fill(x):\n    x.fill_(1)\n",
            "sub.py": "thing = 1\n",
            "user.py": "from pkg.helpers import fill\n",
        },
    )
    recorded = _asked_twice(
        view, lambda: replaced_at_import(view, ["pkg.user", "pkg.helpers"], "fill")
    )
    assert recorded[0] == recorded[1]
    assert {"pkg", "pkg.helpers", "pkg.sub"} <= set(recorded[1][1])


def test_kept_units_record_the_deps_of_their_loading(tmp_path: Path) -> None:
    """Another module's unit is parsed and resolved once per worker; its resolver's bindings were
    resolved through other modules (a star import's exports), so a second file using the kept
    unit must record those modules as the first did."""
    from zeroopt.analysis.summaries import load_unit

    view = _package_view(
        tmp_path,
        {
            "__init__.py": "",
            "helpers.py": "from pkg.stars import *\n\ndef fill(x):\n    x.fill_(1)\n",
            "stars.py": "from pkg.deep import thing\n",
            "deep.py": "thing = 1\n",
            "user.py": "from pkg.helpers import fill\n",
        },
    )
    recorded = _asked_twice(view, lambda: load_unit(view, "pkg.helpers"))
    assert recorded[0][0] is recorded[1][0] is not None
    assert recorded[0][1] == recorded[1][1]
    assert {"pkg.helpers", "pkg.stars"} <= set(recorded[1][1])


def test_import_time_module_memos_record_what_their_miss_recorded(tmp_path: Path) -> None:
    """The imports and facts of each module an import closure walks are memoised per worker; a
    hit must record what the miss recorded, no more and no less: for a namespace package (no
    file, nothing read) the miss records nothing, so a hit recording its listing would make a
    file's deps depend on which files the worker analysed before."""
    from zeroopt.analysis.import_time import _facts, _imported
    from zeroopt.analysis.project import ProjectView

    for p in ("pkg/__init__.py", "pkg/deep/models/__init__.py", "pkg/deep/models/m.py"):
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("import pkg\n")
    index = ProjectIndex.build([str(p) for p in tmp_path.rglob("*.py")], [str(tmp_path)])
    assert "pkg.deep" in index.namespaces
    view = ProjectView(index)
    for module in ("pkg.deep", "pkg.deep.models.m"):
        recorded = []
        for _ in range(2):
            view.start_file("pkg")
            answers = (_imported(view, module), _facts(view, module))
            recorded.append((answers[0], answers[1] is None, dict(view.deps)))
        assert recorded[0] == recorded[1], module


def test_a_summary_reused_within_a_file_records_its_deps_again(tmp_path: Path) -> None:
    """`m.f` and `m.h` both call `m.g`, which calls into `pkg.o` through `pkg.n`. Analysing a
    file that calls both computes `g`'s summary once, inside `f`'s; `h`'s, kept for later files
    with what it recorded, must still record `pkg.o`: else a file calling only `h`, analysed
    after, would not be analysed again when `pkg.o` changes (and its `safe` rests on it)."""
    from zeroopt.analysis.project import ProjectView
    from zeroopt.scan.file_analysis import analyse_source

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    zeros = "import torch\nfrom pkg.m import {0}\n\n\ndef {1}():\n    b = torch.zeros(4)\n"
    files = {
        "__init__.py": "",
        "o.py": "def w(x):\n    x.fill_(1)\n",
        "n.py": "from pkg.o import w\n\n\ndef k(x):\n    w(x)\n",
        "m.py": "def g(x):\n    from pkg.n import k\n\n    k(x)\n\n\n"
        "def f(x):\n    g(x)\n\n\ndef h(x):\n    g(x)\n",
        "both.py": zeros.format("f, h", "one") + "    f(b)\n    c = torch.zeros(4)\n    h(c)\n",
        "only.py": zeros.format("h", "two") + "    h(b)\n    return b\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    index = ProjectIndex.build([str(pkg / n) for n in files])

    def analysed(view: ProjectView, name: str) -> tuple[list[str], dict[str, str]]:
        path = str(pkg / name)
        result = analyse_source((pkg / name).read_bytes(), path, None, view, path)
        return [str(f.verdict) for f in result.findings], result.deps

    alone = analysed(ProjectView(index), "only.py")
    view = ProjectView(index)
    analysed(view, "both.py")
    assert analysed(view, "only.py") == alone
    assert alone[0] == ["safe"] and "pkg.o" in alone[1]


def _chain_walk_name(path: str) -> str:
    """The module name by the definition, walked from the file up to the filesystem root: the
    folders from the highest one holding an `__init__.py` down to the file's."""
    folder, base = os.path.split(path)
    names: list[str] = []  # innermost first
    top = -1
    while True:
        parent, name = os.path.split(folder)
        if not name:
            break
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            top = len(names)
        names.append(name)
        folder = parent
    parts = names[: top + 1][::-1]
    stem = base[:-3]
    return ".".join(parts if stem == "__init__" else [*parts, stem])


@pytest.mark.parametrize("seed", range(6))
def test_folder_answers_shared_across_files_equal_a_walk_per_file(
    tmp_path: Path, seed: int
) -> None:
    """The index asks each folder once (analysis/project.py `Folders`) where it walked up from
    every file: the names, and the namespace packages, are those of a walk per file."""
    import random

    rng = random.Random(seed)
    folders = [tmp_path]
    for i in range(12):
        folder = rng.choice(folders) / f"d{i}"
        folder.mkdir()
        folders.append(folder)
        if rng.random() < 0.6:
            (folder / "__init__.py").write_text("")
    files = [str(f / "__init__.py") for f in folders if (f / "__init__.py").exists()]
    for i in range(30):
        path = rng.choice(folders) / f"m{i}.py"
        path.write_text("")
        files.append(str(path))
    index = ProjectIndex.build(files)
    for path in files:
        assert module_name_of(path)[0] == index.names[path] == _chain_walk_name(path)
    expected_spaces = set()
    for path in files:
        name, is_init = module_name_of(path)
        folder, parts = os.path.dirname(path), name.split(".")
        for i in range(len(parts) - (0 if is_init else 1), 0, -1):
            if not os.path.isfile(os.path.join(folder, "__init__.py")):
                expected_spaces.add(".".join(parts[:i]))
            folder = os.path.dirname(folder)
    assert index.namespaces == expected_spaces  # no module or file shadows a folder here
