"""Where a CUDA-graph capture may open or close, and which callees a kernel contract covers.

The programs that show each wrong `safe` by execution are in tests/regressions/test_capture.py
(they need CUDA) and test_kernel_contracts.py; these tests pin the mechanism on CPU, both ways:
every spelling of a capture makes the function unanalysed, and code without one keeps its verdict.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from pathlib import Path

import pytest

from zeroopt.analysis import capture
from zeroopt.analysis.kernel_contracts import kernel_contract_for
from zeroopt.analysis.project import ProjectIndex, ProjectView
from zeroopt.analysis.resolve import Resolver
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

BODY = """
def f(n, g):
    buf = torch.zeros(n)
    {open}
    buf.fill_(1.0)
    {close}
    return buf.sum()
"""

CAPTURED = {
    "by-hand": ("", "g.capture_begin()", "g.capture_end()"),
    "helper": ("def begin(g):\n    g.capture_begin()\n", "begin(g)", "pass"),
    "helper-of-helper": (
        "def end(g):\n    g.capture_end()\ndef close(g):\n    end(g)\n",
        "pass",
        "close(g)",
    ),
    "method": (
        "class R:\n    def start(self):\n        self.g.capture_begin()\n",
        "R().start()",
        "",
    ),
    "enter-by-hand": (
        "",
        "cm = torch.cuda.graph(g)\n    cm.__enter__()",
        "cm.__exit__(None, None, None)",
    ),
    "graph-held": ("", "cm = torch.cuda.graph(g)", "pass"),
    "string-name": ("", 'getattr(g, "capture_begin")()', ""),
    "stored-callable": ("start = torch.cuda.CUDAGraph.capture_begin\n", "start(g)", ""),
    "setattr": (
        'class R:\n    def __init__(self, g):\n        setattr(self, "go", g.capture_begin)\n',
        "R(g).go()",
        "",
    ),
    "yielding-manager": (
        "import contextlib\n@contextlib.contextmanager\ndef rec(g):\n"
        "    with torch.cuda.graph(g):\n        yield\n",
        "st = contextlib.ExitStack()\n    st.enter_context(rec(g))",
        "st.close()",
    ),
    "capturing-dunder": (
        "class C:\n    def __enter__(self):\n        torch.cuda.graph(self.g).__enter__()\n",
        "len([])",
        "",
    ),
    "make_graphed_callables": ("", "torch.cuda.make_graphed_callables(lambda x: x, (buf,))", ""),
    "graph-pool": ("", "pool = torch.cuda.graph_pool_handle()", ""),
    "import-alias": ("from torch.cuda import graph as Rec\n", "cm = Rec(g)", ""),
    "nested-helper": (
        "def outer():\n    def inner(g):\n        g.capture_begin()\n    return inner\n",
        "inner(g)",
        "",
    ),
}


def _verdict(prelude: str, open_: str, close: str) -> tuple[Verdict, str]:
    source = "import torch\n" + prelude + BODY.format(open=open_, close=close or "pass")
    (finding,) = [f for f in analyse_source(source, "cap.py").findings if f.function == "f"]
    return finding.verdict, finding.message


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_a_function_that_may_open_or_close_a_capture_is_not_analysed(name: str) -> None:
    verdict, message = _verdict(*CAPTURED[name])
    assert verdict is Verdict.UNPROVEN, message
    assert "CUDA-graph capture" in message


@pytest.mark.parametrize(
    "prelude",
    [
        "",
        # capture code elsewhere in the file, self-contained: f does not reach it
        "def capture(g, x):\n    with torch.cuda.graph(g):\n        x.add_(1)\n",
        "def unrelated():\n    g = torch.cuda.CUDAGraph()\n    return g\n",
    ],
)
def test_code_that_cannot_capture_keeps_its_verdict(prelude: str) -> None:
    verdict, message = _verdict(prelude, "pass", "pass")
    assert verdict is Verdict.SAFE, message


def test_a_with_capture_is_still_modelled_in_place() -> None:
    source = textwrap.dedent(
        """
        import torch
        def f(n, g):
            buf = torch.zeros(n)
            with torch.cuda.graph(g):
                buf.fill_(1.0)
            return buf.sum()
        """
    )
    (finding,) = analyse_source(source, "w.py").findings
    # the fill_ is recorded, not run: the read after the block reads the zeros
    assert finding.verdict is Verdict.UNSAFE, finding.message
    assert "not analysed" not in finding.message


def _marked_walk_agrees(tree: ast.Module, resolver: Resolver) -> int:
    """Every def and assignment of `tree` gets the same answer from `direct_capture` walking
    only the nodes `_may_capture` marks as walking all of them; returns how many found one."""
    nodes, marked = capture._may_capture(tree, resolver)
    root = resolver.scopes[tree]
    found = 0
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            code: list[ast.AST] = [*node.decorator_list, *node.body]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            code = [node.value]
        else:
            continue
        qualify = functools.partial(resolver.qualified, resolver.scopes.get(node, root))
        full = capture.direct_capture(code, qualify)
        assert capture.direct_capture(code, qualify, (), marked) == full
        found += bool(full)
    return found


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_the_marked_walk_finds_what_the_full_walk_finds(name: str) -> None:
    prelude, open_, close = CAPTURED[name]
    source = "import torch\n" + prelude + BODY.format(open=open_, close=close or "pass")
    tree = ast.parse(source)
    assert _marked_walk_agrees(tree, Resolver.build(tree)) > 0


def test_a_capture_reexported_by_another_module_is_marked(tmp_path: Path) -> None:
    """`pkg.tools.Rec` is `torch.cuda.graph` only through the tree's re-export: an attribute
    whose name says nothing of graphs, marked because its base is a module of the tree."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools.py").write_text("from torch.cuda import graph as Rec\n")
    user = tmp_path / "pkg" / "user.py"
    source = "import torch\nfrom pkg import tools\n" + BODY.format(
        open="cm = tools.Rec(g)", close="pass"
    )
    user.write_text(source)
    index = ProjectIndex.build([str(p) for p in tmp_path.rglob("*.py")], [str(tmp_path)])
    view = ProjectView(index)
    tree = ast.parse(source)
    resolver = Resolver.build(tree, module_name="pkg.user", project=view)
    assert _marked_walk_agrees(tree, resolver) == 2  # f, and the assignment in it
    assert "f" in capture.capture_functions(tree, resolver)
    view.start_file("pkg.user")
    (finding,) = analyse_source(source, "user.py", None, view, str(user)).findings
    assert finding.verdict is Verdict.UNPROVEN, finding.message
    assert "torch.cuda.graph" in finding.message


def test_a_module_without_capture_code_marks_nothing() -> None:
    source = "import torch\n" + BODY.format(open="g.replay()", close="g.reset()")
    tree = ast.parse(source)
    resolver = Resolver.build(tree)
    assert capture._may_capture(tree, resolver)[1] == set()
    assert capture.capture_functions(tree, resolver) == {}


@pytest.mark.parametrize(
    ("qualified", "matches"),
    [
        ("flash_attn.flash_attn_with_kvcache", True),
        ("flash_attn_interface.flash_attn_varlen_func", True),
        ("flash_attn.cute.flash_attn_varlen_func", True),
        ("sgl_kernel.flash_attn.flash_attn_with_kvcache", True),
        ("vllm.vllm_flash_attn.flash_attn_varlen_func", True),
        ("flash_attn_ref.flash_attn_varlen_func", False),
        ("vllm_xpu_kernels.flash_attn_interface.flash_attn_varlen_func", False),
        ("mypkg.flash_attention.flash_attn_with_kvcache", False),
        ("flash_attn.cute.flash_attn_with_kvcache", False),  # FA4 has none
    ],
)
def test_kernel_contracts_match_exact_modules(qualified: str, matches: bool) -> None:
    assert (kernel_contract_for(qualified) is not None) is matches


def test_the_definitions_read_are_those_of_the_full_walk_in_its_order() -> None:
    """`capture_functions` reads only the classes, defs and assignments of the module, which
    `_may_capture` collects in its walk: the same nodes in the same (breadth-first) order as a
    filter of the whole walk."""
    from zeroopt.analysis.resolve import walk_bfs

    source = (
        "import torch\nx: int = 1\nclass A:\n    y = 2\n    def m(self):\n        z = 3\n"
        "        class B:\n            async def n(self):\n                w: str\n"
        "def f(a=(b := 4)):\n    g = torch.cuda.graph\n    return [c for c in range(a)]\n"
    )
    tree = ast.parse(source)
    kinds = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign | ast.AnnAssign
    expected = [n for n in walk_bfs([tree]) if isinstance(n, kinds)]
    assert len(expected) == 10
    assert capture._may_capture(tree, Resolver.build(tree))[0] == expected
