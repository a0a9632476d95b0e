"""Generated programs over several modules: what the main module uses comes from another one.

Each program of generator.py is split into a package on disk: its imports (`torch`, `th`,
`zeros`, `suppress`) and helper definitions (`Box`, `helper_*`) move to `lib.py`, and the main
module gets them back by a star import, by explicit relative imports, or through a second module
that star-imports `lib` again. The analysis sees them only through the project index
(analysis/project.py). Adversarial variants: `lib` also binds `torch` to a forwarder that drops
`out=` (what a call seems to write, it does not), which the analysis must not resolve to torch.
Layouts: the package's own folder, or (`layout-namespace`) `lib` and `mid` in `ns/`, a folder
without `__init__.py` inside the package (a namespace package, PEP 420), imported from main as
`.ns.lib` or `package.ns.lib`.
"""

from __future__ import annotations

import importlib
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.soundness.gen_model import PRELUDE, RandomChooser
from tests.soundness.generator import random_program
from tests.soundness.oracle import ANALYSIS_OPTIONS

FORWARDER = '''

import torch as _real


class _Forward:
    """torch, except that `out=` is dropped: what a call seems to write, it does not."""

    def __getattr__(self, name):
        attr = getattr(_real, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def call(*args, out=None, **kwargs):
            return attr(*args, **kwargs)

        return call


torch = _Forward()
'''

VARIANTS = ("star", "star", "explicit", "chain", "all", "forwarder")


@dataclass
class MultiProgram:
    package: str
    files: dict[str, str]  # file name in the package -> text
    main: str  # the text of main.py
    assume: tuple[set[str], dict[str, str]]  # torch names the main module gets from elsewhere
    tags: frozenset[str] = field(default_factory=frozenset)


def random_multimodule_program(seed: int) -> MultiProgram:
    single = random_program(seed).source
    head, _, rest = single.partition("\n\n")
    assert PRELUDE in rest
    rest = rest.replace(PRELUDE, "", 1)
    imports = head.splitlines()
    names = ["torch", "suppress", "Box"]
    modules, members = {"torch"}, {}
    if "import torch as th" in imports:
        names.append("th")
        modules.add("th")
    if "from torch import zeros" in imports:
        names.append("zeros")
        members["zeros"] = "zeros"
    names += [line.split("(")[0][4:] for line in PRELUDE.splitlines() if line.startswith("def ")]
    ch = RandomChooser(seed)
    variant = ch.choice(list(VARIANTS))
    lib = head + "\n\n" + PRELUDE
    files = {"__init__.py": ""}
    if variant == "all":
        lib += f"\n__all__ = {names!r}\n"
    if variant == "forwarder":
        lib += FORWARDER
    if variant == "explicit":
        top = f"from .lib import {', '.join(names)}\n"
    elif variant == "chain":
        files["mid.py"] = "from .lib import *\n"
        top = "from .mid import *\n"
    else:
        top = "from .lib import *\n"
    if ch.chance(25):
        top = "import torch\n" + top  # a second binding of torch, in the main module itself
    files["lib.py"] = lib
    main = top + rest
    files["main.py"] = main
    tags = {f"modules-{variant}"}
    if ch.chance(30):
        files, main = namespace_layout(f"zo_mm_{seed}", files, ch)
        tags.add("layout-namespace")
    return MultiProgram(f"zo_mm_{seed}", files, main, (modules, members), frozenset(tags))


def namespace_layout(
    package: str, files: dict[str, str], ch: RandomChooser
) -> tuple[dict[str, str], str]:
    """Move lib.py and mid.py into `ns/`, a folder without `__init__.py` (a namespace package
    inside the package, PEP 420), imported from main.py relatively (`.ns.lib`) or absolutely
    (`package.ns.lib`); their imports of main become absolute. (files, main.py's text)."""
    base = f"{package}.ns" if ch.chance(50) else ".ns"
    out: dict[str, str] = {}
    for name, text in files.items():
        if name in ("lib.py", "mid.py"):
            text = re.sub(
                r"(?m)^(\s*)from \. import main\b", rf"\1from {package} import main", text
            )
            text = re.sub(r"(?m)^(\s*)from \.main import", rf"\1from {package}.main import", text)
            out[f"ns/{name}"] = text
            continue
        if name == "main.py":
            text = re.sub(r"(?m)^(\s*)from \.(lib|mid) import", rf"\1from {base}.\2 import", text)
            text = re.sub(r"(?m)^(\s*)from \. import lib\b", rf"\1from {base} import lib", text)
        out[name] = text
    return out, out["main.py"]


_ROOT: Path | None = None


def materialise(program: MultiProgram) -> tuple[Path, dict[str, Any]]:
    """Write the package under a per-process folder on sys.path; (main.py, run namespace)."""
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="zo-multimodule-"))
        sys.path.insert(0, str(_ROOT))
    pkg = _ROOT / program.package
    pkg.mkdir(exist_ok=True)
    for name, text in program.files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    importlib.invalidate_caches()
    namespace = {"__name__": f"{program.package}.main", "__package__": program.package}
    return pkg / "main.py", namespace


def analyser(program: MultiProgram, main_path: Path) -> Callable[[str], list[Any]]:
    """The engine on the main module, with the project index of the package."""
    from zeroopt.analysis.project import ProjectIndex, ProjectView
    from zeroopt.scan.file_analysis import analyse_source

    paths = [str(main_path.parent / name) for name in program.files]
    index = ProjectIndex.build(paths, [str(main_path.parent.parent)])

    def analyse(source: str) -> list[Any]:
        view = ProjectView(index)
        options = ANALYSIS_OPTIONS[0]
        return list(analyse_source(source, "gen.py", options, view, str(main_path)).findings)

    return analyse
