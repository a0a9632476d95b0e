"""tree_naming.naming_files: the files of the tree that may call a module's function, whatever
modules their text spells (a module object may reach any function as a value); and
returned_modules._own_def_only: a file whose every use of the name is its own def."""

from __future__ import annotations

from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.returned_modules import _own_def_only
from zeroopt.analysis.tree_naming import naming_files

_MOD = "import torch\n\n\ndef _alloc(n):\n    return torch.zeros(n)\n"


def _files(world: ClassWorld) -> tuple[list[str], str]:
    found, why = naming_files(world, "pkg/mod.py", "pkg/mod.py", "_alloc")
    return [world.files[i][0] for i in found], why


def _world(helper: str) -> ClassWorld:
    return ClassWorld(
        [
            ("pkg/mod.py", _MOD.encode()),
            ("pkg/user.py", b"from . import helper, mod\n\n\ndef go():\n    helper.call(mod)\n"),
            ("pkg/helper.py", helper.encode()),
        ],
        "",
    )


def test_a_file_that_never_spells_the_module_but_names_the_function_is_found() -> None:
    world = _world("def call(m):\n    return m._alloc(4).sum()\n")
    assert _files(world) == (["pkg/helper.py"], "")


def test_a_lookup_by_a_computed_name_anywhere_is_the_reason() -> None:
    world = _world("def call(m, k):\n    return getattr(m, k)(4)\n")
    files, why = _files(world)
    assert files == []
    assert why == (
        "pkg/helper.py:2 looks an attribute up by a name its text does not spell (a computed or "
        "joined string): it may be `_alloc`"
    )


def test_a_file_naming_neither_the_function_nor_a_computed_name_is_not_found() -> None:
    world = _world("def call(m):\n    return m.own(4)\n")
    assert _files(world) == ([], "")


_OWN = "import torch\n\n\ndef _alloc(n):\n    return torch.ones(n)\n\n\ndef peek(n):\n    return _alloc(n)\n"


def test_a_file_naming_only_its_own_def_cannot_call_another_module_s() -> None:
    assert _own_def_only(_OWN.encode(), "_alloc")


def test_anything_else_naming_it_may_be_another_module_s_def() -> None:
    for extra in (
        "from other import *\n",  # may bind it again
        "import other\nx = other._alloc\n",  # an attribute of that name
        "y = getattr(peek, '_alloc')\n",  # a string holding it
        "from other import _alloc as a\n",  # an import of it
        "def g(_alloc):\n    return _alloc(1)\n",  # a parameter of that name
        "for _alloc in ():\n    pass\n",  # another binding
        "g = globals()\n",  # names bound out of sight
    ):
        assert not _own_def_only((_OWN + extra).encode(), "_alloc"), extra
    decorated = _OWN.replace("def _alloc", "@staticmethod\ndef _alloc")
    assert not _own_def_only(decorated.encode(), "_alloc")
