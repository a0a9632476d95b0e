"""Resolution by method name over the tree (analysis/dispatch.py): each obstacle is the one the
evidence names, the cache follows the whole tree, and the library list is data the scan reads
without importing torch."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.regressions.harness import _analyse
from tests.regressions.test_dispatch import CASES
from zeroopt.scan.config import load_config
from zeroopt.scan.runner import ScanReport, scan

# The obstacle each regression case's evidence must name (its site is not `safe` because of it).
OBSTACLES = {
    "defs_of_the_name_disagree": "defs named `pour` disagree: Full.pour writes, Also.pour writes, "
    "Part.pour unknown",
    "library_method_of_the_same_name": "`append` is also an attribute of",
    "class_with_getattr_answers_the_name": "class Lazy (",
    "class_with_getattribute_answers_every_name": "defines `__getattribute__`",
    "method_name_assigned_on_an_instance": "assigns an attribute `pour`",
    "method_name_stored_by_setattr": "assigns an attribute `pour`",
    "object_built_with_an_attribute_of_the_name": "passes a keyword `pour=`",
    "namedtuple_field_of_the_name": "spells `pour` as a string",
    "class_made_by_type_with_a_computed_namespace": "makes a class that may bind `pour`",
    "class_object_held_in_a_local": "`k` is bound from `TwoA if flag else TwoB`: it may hold a class",
    "class_object_from_another_module_in_a_local": "`k` is bound from `two.TwoA if flag else",
    "class_objects_in_a_loop": "`k` is bound by a loop over `(TwoA, TwoB)`",
    "class_object_from_type_in_a_local": "`k` is bound from `type(obj)`",
    "class_object_in_a_classmethod": "`cls` is the class a classmethod runs with",
    "class_object_through_type": "the receiver is a class (`type(...)`)",
    "def_under_an_unknown_decorator": "Full2.pour (",
    "property_of_the_name": "Prop.pour (",
    "class_body_binds_the_name_otherwise": "class Bound (",
    "module_with_getattr_as_the_receiver": "lazypkg/ops.py defines `__getattr__`: it may answer",
    "getattr_assigned_on_a_class": "assigns `__getattr__`",
    "class_defined_by_exec": "runs code from text",
    "def_in_a_file_not_importable_by_name": "is in a file not importable by one name",
    "namedtuple_fields_across_lines": ":22 binds an attribute `pour` by a name in a string",
    "setattr_with_a_computed_name": ":27 binds attributes under computed names",
    "setattr_with_a_joined_string": ":24 binds an attribute `pour` by a name in a string",
    "namespace_built_from_locals": ":27 binds attributes under computed names",
    "module_function_rebound_through_global": ":28 declares `pour` global",
    "class_held_as_a_parameter": "the receiver may be a class: Keep.pour accepts these arguments",
}


def _evidence(name: str) -> str:
    case = next(c for c in CASES if c.name == name)
    result = _analyse(case, case.source.lstrip("\n"))
    texts = [e.text for f in result.findings if f.line in case.sites for e in f.evidence]
    return "\n".join(texts)


@pytest.mark.parametrize("name", sorted(OBSTACLES))
def test_the_evidence_names_the_obstacle(name: str) -> None:
    assert OBSTACLES[name] in _evidence(name)


def test_every_obstacle_case_is_checked() -> None:
    names = {c.name for c in CASES if c.kind != "fix" and c.expect != frozenset({"unsafe"})}
    assert names - set(OBSTACLES) <= {"every_def_of_the_name_reads_first", "closed_world_off"}


def test_the_proof_names_every_def() -> None:
    text = _evidence("every_def_of_the_name_writes_in_full")
    assert "every def named `pour` in the tree: Full.pour (" in text
    assert "Also.pour (" in text and "closed world" in text


USER = """\
import torch


def fill(obj, n):
    b = torch.zeros(n)
    obj.pour(b)
    return b
"""
IMPL = "class Full:\n    def pour(self, t):\n        t.fill_(1.0)\n"


def _scan() -> ScanReport:
    return scan(["."], load_config(["."]), jobs=1, use_cache=True)


def _verdicts(report: ScanReport) -> dict[int, str]:
    return {f.line: str(f.verdict) for f in report.findings if f.path == "pkg/user.py"}


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_a_new_def_of_the_name_anywhere_invalidates_the_cached_result(
    project: Callable[..., Path],
) -> None:
    root = Path.cwd()
    project("pkg/__init__.py", "")
    project("pkg/impl.py", IMPL)
    project("pkg/user.py", USER)
    _old(root)
    assert _verdicts(_scan()) == {5: "safe"}
    project("pkg/other.py", "class Lax:\n    def pour(self, t):\n        t[:1] = 0.0\n")
    _old(root)
    assert _verdicts(_scan()) == {5: "unproven"}


def test_closed_world_off_turns_it_off(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    project("pkg/impl.py", IMPL)
    project("pkg/user.py", USER)
    assert _verdicts(_scan()) == {5: "safe"}
    (Path.cwd() / "pyproject.toml").write_text("[tool.zeroopt]\nclosed-world = false\n")
    assert _verdicts(_scan()) == {5: "unproven"}


def test_the_library_list_is_data_with_its_provenance() -> None:
    from zeroopt.analysis.semantics import library_methods

    assert "bench/library_method_names.py" in library_methods.SOURCE
    assert "torch 2." in library_methods.SOURCE
    names = library_methods.LIBRARY_ATTRIBUTES
    assert names["apply"] == "torch.nn.modules.module.Module"
    assert names["copy_"] == "torch.Tensor" and names["append"]
    # The scan reads it without importing torch.
    code = "import sys, zeroopt.analysis.dispatch; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
