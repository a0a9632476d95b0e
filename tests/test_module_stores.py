"""Stores into `sys.modules`, read once per file and tree: each set of module-name parts asked
gets the first use that may replace one of its modules, whatever was asked before."""

from __future__ import annotations

from pathlib import Path

from zeroopt.analysis.anyorder_stores import modules_replaced
from zeroopt.analysis.methods import ClassWorld

SETUP = """\
import sys
sys.modules["pkg.other"] = object()
sys.modules["pkg.other"].x = 1
sys.modules.update({})
"""


def _world(tmp_path: Path) -> tuple[ClassWorld, str, str]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "setup.py").write_text(SETUP)
    (pkg / "other.py").write_text("")
    (pkg / "lib.py").write_text("")
    paths = [str(p) for p in sorted(pkg.iterdir())]
    return ClassWorld.read(paths), str(pkg / "other.py"), str(pkg / "lib.py")


def test_each_module_gets_its_own_first_store(tmp_path: Path) -> None:
    world, other, lib = _world(tmp_path)
    assert world.digest
    # The keyed store names only `other`: `lib` is replaced first by the `update` two lines on.
    # Asked in both orders of the same tree (the files' stores are read once per digest).
    expected = {other: "setup.py:2 ", lib: "setup.py:4 "}
    for order in ((other, lib), (lib, other)):
        for path in order:
            again = ClassWorld.read([p for p, _ in world.files])
            assert again.digest == world.digest
            assert expected[path] in modules_replaced(again, (path,))


def test_a_file_with_only_other_keys_replaces_nothing(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "setup.py").write_text('import sys\nsys.modules["pkg.other"] = object()\n')
    (pkg / "lib.py").write_text("")
    world = ClassWorld.read([str(p) for p in sorted(pkg.iterdir())])
    assert modules_replaced(world, (str(pkg / "lib.py"),)) == ""
    assert "setup.py:2 " in modules_replaced(world, (str(pkg / "other.py"),))
