"""The keys of `sys.modules` stores (analysis/module_keys.py): the names a key may hold, and when
a key under one top-level name cannot name a module of the tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.module_keys import ModuleKeys, foreign, top_levels

_STUBS = """
import sys


def _mk(name):
    sys.modules[name] = object()


class F:
    def find_spec(self, fullname):
        if fullname == "ext" or fullname.startswith(("ext.", "extra_")):
            sys.modules[fullname] = object()
        sys.modules[fullname] = object()


_mk("ext")
_mk(name="ext.language")
"""


def _keys(text: str, files: list[tuple[str, bytes]] | None = None) -> list[object]:
    """The names of each store's key, in line order."""
    data = text.encode()
    tree = ast.parse(data)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    world = ClassWorld([("stubs.py", data), *(files or [])], "")
    keys = ModuleKeys(world, "stubs.py", data, tree, parents)
    stores = [
        n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
    ]
    return [keys.names(n.slice, n) for n in sorted(stores, key=lambda n: n.lineno)]


def test_private_function_and_guarded_method_keys() -> None:
    mk, guarded, loose = _keys(_STUBS)
    assert mk == frozenset({("ext", "", True), ("ext.language", "", True)})
    assert guarded == frozenset({("ext", "", True), ("ext.", "", False), ("extra_", "", False)})
    assert loose is None  # after the `if`: any name


@pytest.mark.parametrize(
    "extra",
    [
        "\nmake = _mk\n",  # handed on as a value
        "\n_mk('.'.join(['a', 'b']))\n",  # a computed name
        "\n_mk(*['a'])\n",  # a starred argument
        "\n# _mk is documented here\n",  # spelled other than as a call
        "\nglobals()\n",  # the module binds names out of sight
    ],
)
def test_private_function_keys_refused(extra: str) -> None:
    assert _keys(_STUBS + extra)[0] is None


def test_private_function_named_in_another_file() -> None:
    other = [("user.py", b"from stubs import _mk\n_mk('pkg.helpers')\n")]
    assert _keys(_STUBS, other)[0] is None


def test_top_levels() -> None:
    assert top_levels(frozenset({("triton.x", "", True), ("triton", "", True)})) == {
        ("triton", False)
    }
    assert top_levels(frozenset({("triton.", "", False)})) == {("triton", False)}
    assert top_levels(frozenset({("tri", "", False)})) == {("tri", True)}
    assert top_levels(frozenset({("", ".x", False)})) is None


@pytest.mark.parametrize(
    ("loader", "is_foreign"),
    [
        ("", True),
        ("import importlib.util\nimportlib.util.spec_from_file_location('other.x', p)\n", True),
        ("import importlib.util\nimportlib.util.spec_from_file_location('ext.x', p)\n", False),
        ("import importlib.util\nimportlib.util.spec_from_file_location(name, p)\n", False),
        ("from importlib.util import spec_from_file_location as load\n", False),
        ("import importlib.machinery\nimportlib.machinery.ModuleSpec(n, None)\n", True),
        ("import importlib.machinery\nimportlib.machinery.ModuleSpec(n, loader)\n", False),
        ("import runpy\nrunpy.run_path(p, run_name='ext')\n", False),
        ("__package__ = 'ext'\n", False),
        ("__package__ = 'other'\n", True),
        ("import sys\nsys.modules['m'].__dict__['__package__'] = 'ext'\n", False),
        ("setattr(m, '__name__', 'ext.y')\n", False),
        ("ok = getattr(m, '__name__')\n", True),
        ("import logging\nif __name__ == '__main__':\n    logging.getLogger(__name__)\n", True),
        ("__name__, x = 'ext', 1\n", False),
        ("d = dict(__name__='ext.y')\n", False),
        ("__package__: str = 'ext'\n", False),
        ("def f():\n    global __package__\n    __package__ = 'ext'\n", False),
        ("__spec__ = None\n", True),
        ("__spec__.name = 'ext.m'\n", False),
        ("print(__spec__.name)\n", True),
    ],
)
def test_foreign_top_level(tmp_path: Path, loader: str, is_foreign: bool) -> None:
    files = [
        (str(tmp_path / "pkg" / "helpers.py"), b"def fill(x):\n    x.fill_(1.0)\n"),
        (str(tmp_path / "pkg" / "load.py"), loader.encode()),
    ]
    world = ClassWorld(files, "")
    assert foreign(world, frozenset({("ext", False)}), (files[0][0],)) is is_foreign


def test_foreign_refuses_a_folder_of_that_name(tmp_path: Path) -> None:
    path = str(tmp_path / "ext" / "pkg" / "helpers.py")
    world = ClassWorld([(path, b"")], "")
    assert not foreign(world, frozenset({("ext", False)}), (path,))
    assert not foreign(world, frozenset({("ex", True)}), (path,))
    assert foreign(world, frozenset({("other", False)}), (path,))


def test_a_default_or_a_comprehension_is_not_the_parameter() -> None:
    """`_g(n, y=_mk(n))` passes the module's `n`, not `_g`'s; `[_mk(n) for n in xs]` the
    comprehension's: neither is read through the parameter's calls."""
    default = _STUBS + "\nn = input()\n\n\ndef _g(n, y=_mk(n)):\n    pass\n\n\n_g('ext')\n"
    assert _keys(default)[0] is None
    comprehension = (
        _STUBS + "\n\ndef _h(n, xs):\n    return [_mk(n) for n in xs]\n\n\n_h('ext', [input()])\n"
    )
    assert _keys(comprehension)[0] is None
