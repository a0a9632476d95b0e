"""Name resolution (analysis/resolve.py): what a callee's name denotes, by Python's scoping rules.

A name is resolved only when every binding of it in its scope agrees; anything else stays
unresolved (None), which makes the analysis more conservative, never less.
"""

from __future__ import annotations

import ast
import textwrap

from zeroopt.analysis.resolve import Resolver


def resolved(code: str) -> dict[str, str | None]:
    """For each call marked `# <- name`, the qualified name of its callee (None: unresolved)."""
    code = textwrap.dedent(code)
    resolver = Resolver.build(ast.parse(code))
    lines = code.splitlines()
    out: dict[str, str | None] = {}
    for call, scope in resolver.calls:
        text = lines[call.lineno - 1]
        if "# <- " in text:
            out[text.split("# <- ")[1].strip()] = resolver.qualified(scope, call.func)
    return out


def test_import_aliases_and_from_imports() -> None:
    got = resolved(
        """
        import torch as th
        import torch.nn.functional as F
        from torch import zeros as z

        def f(x):
            a = th.zeros(3)  # <- module alias
            b = F.pad(x, (1, 1))  # <- submodule alias
            c = z(3)  # <- from-import alias
        """
    )
    assert got == {
        "module alias": "torch.zeros",
        "submodule alias": "torch.nn.functional.pad",
        "from-import alias": "torch.zeros",
    }


def test_a_local_binding_shadows_the_import() -> None:
    got = resolved(
        """
        import torch

        def param(torch):
            return torch.zeros(3)  # <- parameter

        def assigned():
            torch = make()
            return torch.zeros(3)  # <- assignment

        def untouched():
            return torch.zeros(3)  # <- module
        """
    )
    assert got == {"parameter": None, "assignment": None, "module": "torch.zeros"}


def test_bindings_that_disagree_leave_the_name_unresolved_but_a_none_fallback_does_not() -> None:
    got = resolved(
        """
        try:
            import numpy as np
        except ImportError:
            np = None
        if cond:
            import torch as backend
        else:
            import numpy as backend

        def f():
            np.zeros(3)  # <- fallback
            backend.zeros(3)  # <- two modules
        """
    )
    assert got == {"fallback": "numpy.zeros", "two modules": None}


def test_global_and_class_scopes() -> None:
    got = resolved(
        """
        import torch

        class C:
            torch = make()
            a = torch.zeros(3)  # <- class body sees its own name

            def m(self):
                return torch.zeros(3)  # <- a method skips the class scope

        def g():
            global torch
            return torch.zeros(3)  # <- global
        """
    )
    assert got == {
        "class body sees its own name": None,
        "a method skips the class scope": "torch.zeros",
        "global": "torch.zeros",
    }


def test_a_global_declared_in_a_class_body_rebinds_the_module_name() -> None:
    got = resolved(
        """
        import torch

        class Config:
            global torch
            torch = Wrapper(torch)

        def f(n):
            return torch.zeros(n)  # <- rebound by the class body
        """
    )
    assert got == {"rebound by the class body": None}


def test_builtins_resolve_unless_rebound() -> None:
    got = resolved(
        """
        def f(n):
            return range(n)  # <- builtin

        def g(n, range):
            return range(n)  # <- rebound
        """
    )
    assert got == {"builtin": "builtins.range", "rebound": None}


def test_walk_bfs_yields_ast_walk_order_without_context_and_operator_leaves() -> None:
    """capture.py reports the first node found, so its faster walk must keep `ast.walk`'s order:
    checked on the analysis's own modules, from every statement and from the module."""
    from pathlib import Path

    from zeroopt.analysis import capture, cfg, resolve
    from zeroopt.analysis.resolve import walk_bfs

    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    extra = "def f(a, *b, c=1, **d):\n    match a:\n        case [1, *r] | {'k': v, **m}: pass\n"
    sources = [Path(m.__file__).read_text() for m in (capture, cfg, resolve) if m.__file__]
    for source in [*sources, extra]:
        tree = ast.parse(source)
        roots = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.stmt))]
        for root in roots:
            expected = [n for n in ast.walk(root) if not isinstance(n, leaves)]
            got = list(walk_bfs([root]))
            assert len(got) == len(expected)
            assert all(a is b for a, b in zip(got, expected, strict=True))
    two = ast.parse("x = 1\ny = [2]").body
    assert [type(n).__name__ for n in walk_bfs(two)] == [
        "Assign", "Name", "Constant", "Assign", "Name", "List", "Constant"
    ]  # fmt: skip


def test_walk_all_and_child_nodes_are_exactly_ast_walk_and_iter_child_nodes() -> None:
    """Every `ast.walk` and `ast.iter_child_nodes` of the analysis goes through these faster
    twins, so they must give the same nodes in the same order, leaves included."""
    from pathlib import Path

    from zeroopt.analysis import capture, cfg, resolve
    from zeroopt.analysis.resolve import child_nodes, walk_all

    extra = "def f(a, *b, c=1, **d):\n    match a:\n        case [1, *r] | {'k': v, **m}: pass\n"
    sources = [Path(m.__file__).read_text() for m in (capture, cfg, resolve) if m.__file__]
    sources += [extra, "d = {**a, 'k': 1}\nf'{x!r:>{w}}'\n"]
    for source in sources:
        tree = ast.parse(source)
        for root in ast.walk(tree):
            got, expected = list(walk_all(root)), list(ast.walk(root))
            assert len(got) == len(expected)
            assert all(a is b for a, b in zip(got, expected, strict=True))
            kids, expected_kids = child_nodes(root), list(ast.iter_child_nodes(root))
            assert len(kids) == len(expected_kids)
            assert all(a is b for a, b in zip(kids, expected_kids, strict=True))


def test_declared_globals_finds_every_global_statement() -> None:
    """`declared_globals` walks statement lists only: it finds the declarations under every
    kind of statement that holds others, as a walk of every node does."""
    from zeroopt.analysis.resolve import declared_globals, walk

    source = textwrap.dedent(
        """
        global top
        def f():
            global a
            if x:
                global b
            else:
                global c
            for i in y:
                pass
            else:
                global d
            while z:
                global e
            with w:
                global g
            try:
                global h
            except E:
                global i
            else:
                global j
            finally:
                global k
            match m:
                case 1:
                    global l
            async def n():
                global o
        class C:
            global p
            def m(self):
                class D:
                    global q
        """
    )
    tree = ast.parse(source)
    every = {n for g in walk([tree]) if isinstance(g, ast.Global) for n in g.names}
    assert every == set("abcdeghijklopq") | {"top"}
    assert declared_globals(tree) == every
