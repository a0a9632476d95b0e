"""Plain dataclasses imported from another scanned module (ProjectView.record_fields): a buffer
stored into such a record is followed as with a class of the analysed module, and the per-file
cache follows the module the class was read from."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.scan.config import load_config
from zeroopt.scan.runner import ScanReport, scan

META = """\
from dataclasses import dataclass


@dataclass
class Meta:
    page_table: object
    lens: object = None
"""

USER = """\
import torch
from pkg.meta import Meta


def build(n):
    buf = torch.zeros(n)
    meta = Meta(page_table=buf)
    meta.page_table.fill_(1.0)
    return buf
"""


def _scan(use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=1, use_cache=use_cache)


def _verdict(report: ScanReport) -> str:
    (found,) = [str(f.verdict) for f in report.findings if f.path == "pkg/user.py"]
    return found


def _tree(project: Callable[..., Path], meta: str = META, user: str = USER) -> None:
    project("pkg/__init__.py", "")
    project("pkg/meta.py", meta)
    project("pkg/user.py", user)


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_an_imported_plain_dataclass_holds_the_buffer(project: Callable[..., Path]) -> None:
    _tree(project)
    assert _verdict(_scan()) == "safe"


def test_a_relative_import_and_an_alias(project: Callable[..., Path]) -> None:
    user = USER.replace("from pkg.meta import Meta", "from .meta import Meta as M")
    _tree(project, user=user.replace("Meta(page_table", "M(page_table"))
    assert _verdict(_scan()) == "safe"


NEAR_MISSES = {
    "post_init_copies": META + "\n    def __post_init__(self):\n"
    "        self.page_table = self.page_table.clone()\n",
    "post_init_reads": META + "\n    def __post_init__(self):\n"
    "        self.lens = float(self.page_table.sum())\n",
    "bound_twice": META + "\n\nMeta = dict\n",
    "bound_under_if": META + "\n\nif object():\n    Meta = dict\n",
    "own_decorator": META.replace(
        "from dataclasses import dataclass",
        "import dataclasses\n\n\ndef dataclass(cls):\n    return dataclasses.dataclass(cls)",
    ),
    "look_alike": META.replace("@dataclass\n", ""),
    "base_class": META.replace("class Meta:", "class Meta(Base):").replace(
        "@dataclass", "class Base:\n    pass\n\n\n@dataclass"
    ),
    "factory_default": META.replace(
        "lens: object = None", "lens: object = field(default_factory=make)"
    ).replace("import dataclass", "import dataclass, field\n\nmake = list"),
    "patched_in_its_module": META + "\n\nMeta.__init__ = lambda self, **kw: None\n",
}


@pytest.mark.parametrize("meta", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_misses_are_not_followed(project: Callable[..., Path], meta: str) -> None:
    _tree(project, meta)
    assert _verdict(_scan()) == "unproven"


USER_NEAR_MISSES = {
    "rebound_in_the_user": USER + "\n\nMeta = dict\n",
    "patched_in_the_user": USER + "\n\nsetattr(Meta, '__post_init__', print)\n",
    "star_import_after": USER.replace(
        "from pkg.meta import Meta", "from pkg.meta import Meta\nfrom os.path import *"
    ),
}


@pytest.mark.parametrize("user", USER_NEAR_MISSES.values(), ids=USER_NEAR_MISSES.keys())
def test_the_importing_module_may_rebind_the_name(project: Callable[..., Path], user: str) -> None:
    _tree(project, user=user)
    assert _verdict(_scan()) == "unproven"


def test_cache_follows_the_module_of_the_class(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    _tree(project)
    _old(root)
    assert _verdict(_scan(use_cache=True)) == "safe"
    warm = _scan(use_cache=True)
    assert warm.analysed == 0 and _verdict(warm) == "safe"
    # Meta now copies its field: user.py is analysed again although unchanged.
    (root / "pkg/meta.py").write_text(NEAR_MISSES["post_init_copies"])
    _old(root)
    changed = _scan(use_cache=True)
    assert changed.analysed >= 1 and _verdict(changed) == "unproven"


HELPERS = """\
from pkg.meta import Meta


def fill_a(p):
    m = Meta(page_table=p)
    m.page_table.fill_(1.0)


def fill_b(p):
    m = Meta(page_table=p)
    m.page_table.fill_(1.0)
"""


def _caller(helper: str) -> str:
    return (
        f"import torch\nfrom pkg.helpers import {helper}\n\n\ndef build(n):\n"
        f"    buf = torch.zeros(n)\n    {helper}(buf)\n    return buf\n"
    )


def test_every_summary_through_the_record_follows_its_module(
    project: Callable[..., Path],
) -> None:
    """Two summaries of one module read its records once: the file using the second summary
    depends on the module of the class as well."""
    root = Path.cwd()
    project("pkg/__init__.py", "")
    project("pkg/meta.py", META)
    project("pkg/helpers.py", HELPERS)
    project("pkg/a.py", _caller("fill_a"))
    project("pkg/b.py", _caller("fill_b"))
    _old(root)

    def verdicts(report: ScanReport) -> dict[str, str]:
        return {f.path: str(f.verdict) for f in report.findings}

    assert verdicts(_scan(use_cache=True)) == {"pkg/a.py": "safe", "pkg/b.py": "safe"}
    (root / "pkg/meta.py").write_text(NEAR_MISSES["post_init_copies"])
    _old(root)
    changed = _scan(use_cache=True)
    assert verdicts(changed) == {"pkg/a.py": "unproven", "pkg/b.py": "unproven"}
