"""The fast paths of a cold scan: the prefilter, the one-walk scope pass, the tree walks, reading.

Each must give exactly what the slower code it replaced gave; a prefilter that skipped a file
holding an allocation would hide it, so its cases are the spellings Python accepts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from zeroopt.analysis.allocations import find_allocations
from zeroopt.analysis.resolve import Resolver, walk, walk_scope
from zeroopt.analysis.scalars import int_names
from zeroopt.scan import runner
from zeroopt.scan.file_analysis import analyse_source, may_hold_candidate

ROOT = Path(__file__).resolve().parent.parent
OWN_SOURCES = sorted(
    p for d in ("fixtures", "rules", "zeroopt", "tests") for p in (ROOT / d).rglob("*.py")
)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def _reference_walk_scope(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """walk_scope as it was written before, on ast.iter_child_nodes."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _trees() -> Iterator[tuple[Path, ast.Module]]:
    for path in OWN_SOURCES:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue  # the hostile-input corpus
        yield path, tree


def test_walk_scope_is_the_iter_child_nodes_walk() -> None:
    for path, tree in _trees():
        bodies = [tree.body] + [
            n.body for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)
        ]
        for body in bodies:
            got = [id(n) for n in walk_scope(body)]
            assert got == [id(n) for n in _reference_walk_scope(body)], path


def test_walk_yields_every_node_but_context_and_operator_leaves() -> None:
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    for path, tree in _trees():
        got = sorted(id(n) for n in walk([tree]))
        assert got == sorted(id(n) for n in ast.walk(tree) if not isinstance(n, leaves)), path


def _sites(source: str) -> list[tuple[int, str, str]]:
    tree = ast.parse(source)
    return [
        (s.call.lineno, s.name, getattr(s.owner, "name", type(s.owner).__name__))
        for s in find_allocations(tree, Resolver.build(tree))
    ]


def test_sites_in_source_order_with_decorators_and_defaults_before_the_body() -> None:
    source = (
        "import torch as th\n"
        "@dec(th.zeros(1))\n"
        "def f(a=th.empty(2), *, b=th.zeros(3)) -> th.zeros(4):\n"  # annotation: not a site
        "    c[th.zeros(5)] = th.zeros(6)\n"
        "    return lambda: th.zeros(7)\n"
    )
    assert _sites(source) == [
        (2, "torch.zeros", "Module"),
        (3, "torch.empty", "Module"),
        (3, "torch.zeros", "Module"),
        (4, "torch.zeros", "f"),
        (4, "torch.zeros", "f"),
        (5, "torch.zeros", "Lambda"),
    ]


def test_new_zeros_defined_in_the_module_is_not_a_site() -> None:
    assert _sites("def g(x):\n    return x.new_zeros(3)\n") == [(2, "Tensor.new_zeros", "g")]
    assert _sites("def g(x):\n    return x.new_zeros(3)\ndef new_zeros(): pass\n") == []
    assert _sites("def g(x):\n    return x.new_zeros(3)\no.new_zeros = f\n") == []


def test_global_declared_after_a_binding_still_binds_the_module_name() -> None:
    tree = ast.parse("def f(p):\n    t = 1\n    p = 2\n    global t, p\n")
    resolver = Resolver.build(tree)
    fn = tree.body[0]
    assert "t" in resolver.scope_of(tree).bindings
    assert "t" not in resolver.scope_of(fn).bindings
    # A parameter is local even when also declared global; its rebinding is the module's.
    assert resolver.scope_of(fn).bindings["p"] and "p" in resolver.scope_of(tree).bindings


def test_scope_pass_survives_expressions_deeper_than_the_recursion_limit() -> None:
    source = "import torch\ndef f(x):\n    y = " + "+".join(["x"] * 2000) + "\n"
    source += "    z = torch.zeros(3)\n"
    assert _sites(source) == [(4, "torch.zeros", "f")]


def test_int_names_distrusts_a_walrus_in_a_nested_scope_only() -> None:
    body = ast.parse("n = 4\nm = 2\nk = 3\n[(m := t) for t in xs]\nif (k := 5):\n    pass\n").body
    assert int_names(body, [], set(), lambda e: None) == frozenset({"n", "k"})


def test_int_names_trusts_a_range_loop_only_when_range_is_the_builtin() -> None:
    body = ast.parse("for k in range(3):\n    pass\n").body
    builtin = int_names(body, [], set(), lambda e: "builtins.range")
    rebound = int_names(body, [], set(), lambda e: None)
    assert (builtin, rebound) == (frozenset({"k"}), frozenset())


def _fullwidth(word: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) for c in word)  # NFKC maps these back to ASCII


@pytest.mark.parametrize(
    "source",
    [
        b"import torch\ndef f():\n    x = (torch.empty  # c\n         (3))\n    return x.sum()\n",
        b"import torch\ndef f():\n    x = torch.empty \\\n(3)\n    return x.sum()\n",
        b"import torch\ndef f():\n    x = (torch.empty)(3)\n    return x.sum()\n",
        b"from torch import (\n    empty  # c\n    as E,\n)\ndef f():\n    x = E(3)\n    return x.sum()\n",
        b"def f(t):\n    x = t.new_empty(3)\n    return x.sum()\n",
        b"def f(t):\n    x = t.new_zeros(3)\n    return x\n",
        # A coding cookie and NFKC normalisation spell `torch` and `zeros` in other bytes.
        b"# coding: utf-7\nimport +AHQ-orch\ndef f():\n    x = +AHQ-orch.+AHo-eros(3)\n"
        b"    return x\n",
        "import {t}\ndef f():\n    x = {t}.{z}(3)\n    return x\n".format(
            t=_fullwidth("torch"), z=_fullwidth("zeros")
        ).encode(),
    ],
)
def test_prefilter_passes_every_spelling_of_an_allocation(source: bytes) -> None:
    assert may_hold_candidate(source)
    assert analyse_source(source, "m.py").findings, "the allocation must be found"


@pytest.mark.parametrize(
    "source",
    [
        b"import numpy as np\nx = np.zeros(3)\n",  # zeros, but nothing can resolve to torch
        b"import queue\nq = queue.Queue()\nq.empty()\n",
        b"import torch\n# the queue is empty\n",
        b"import torch\nx = 1\n",
    ],
)
def test_prefilter_skips_files_without_a_possible_allocation(source: bytes) -> None:
    assert not may_hold_candidate(source)


def test_prefilter_regex_does_not_backtrack() -> None:
    hostile = b"import torch\nempty" + b" #" * 200_000 + b"\n" + b" )" * 200_000
    assert not may_hold_candidate(hostile)  # returns at once (catastrophic backtracking hangs)


def test_read_returns_the_whole_file_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x" * 1000)
    assert runner._read(str(path)) == b"x" * 1000
    monkeypatch.setattr(runner, "MAX_FILE_BYTES", 100)
    assert runner._read(str(path)) == b"x" * 101  # one byte over: "too large"
