"""The control-flow graph (analysis/cfg.py): every path Python can take is an edge.

Each test builds the CFG of a small function and asks which statements a path can reach while
avoiding others; lines are found by a `# <- name` comment, so no line number is hard-coded.
"""

from __future__ import annotations

import ast
import textwrap

from zeroopt.analysis.cfg import CFG, Builder, Kind


def build(code: str, qualify: bool = False) -> tuple[CFG, dict[str, set[int]]]:
    """The CFG of the only function in `code`, and the nodes of each `# <- name` line; with
    `qualify`, names are taken as written (`torch.autocast` is torch's)."""
    code = textwrap.dedent(code)
    func = ast.parse(code).body[0]
    assert isinstance(func, ast.FunctionDef)
    cfg = Builder(ast.unparse if qualify else None).build(func.body)
    marks: dict[str, set[int]] = {}
    for lineno, text in enumerate(code.splitlines(), 1):
        if "# <- " in text:
            name = text.split("# <- ")[1].strip()
            nodes = {n.index for n in cfg.nodes if n.line == lineno and n.kind is not Kind.EXPR}
            nodes = nodes or {n.index for n in cfg.nodes if n.line == lineno}
            assert nodes, (name, lineno)
            marks[name] = nodes
    return cfg, marks


def reachable(cfg: CFG, start: set[int], avoid: set[int] = frozenset()) -> set[int]:  # type: ignore[assignment]
    """Nodes reachable from `start` (normal and exception edges) without entering `avoid`."""
    seen: set[int] = set()
    todo = [s for s in start]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        node = cfg.nodes[n]
        todo.extend(s for s in (*node.succ, *node.exc_succ) if s not in avoid)
    return seen


def test_a_for_loop_may_run_zero_times() -> None:
    cfg, at = build(
        """
        def f(xs):
            for x in xs:
                a = 1  # <- body
            b = 2  # <- after
        """
    )
    assert at["after"] & reachable(cfg, {cfg.entry}, avoid=at["body"])


def test_a_while_loop_may_run_zero_times_and_loops_back() -> None:
    cfg, at = build(
        """
        def f(n):
            while n:
                n -= 1  # <- body
            return n  # <- after
        """
    )
    assert at["after"] & reachable(cfg, {cfg.entry}, avoid=at["body"])
    # the body runs again after itself: the back edge
    assert at["body"] & reachable(cfg, {s for b in at["body"] for s in cfg.nodes[b].succ})


def test_break_skips_the_loop_else() -> None:
    cfg, at = build(
        """
        def f(xs):
            for x in xs:
                if x:
                    break  # <- break
            else:
                y = 0  # <- else
            z = 1  # <- after
        """
    )
    assert at["after"] & reachable(cfg, at["break"], avoid=at["else"])
    assert not at["else"] & reachable(cfg, at["break"])
    # and without a break, the else runs
    assert at["else"] & reachable(cfg, {cfg.entry}, avoid=at["break"])


def test_an_exception_in_a_try_body_reaches_the_handler_between_any_two_statements() -> None:
    cfg, at = build(
        """
        def f():
            try:
                a = g()  # <- first
                b = h()  # <- second
            except ValueError:
                c = 0  # <- handler
            return 1
        """
    )
    for name in ("first", "second"):
        for n in at[name]:
            raised = set(cfg.nodes[n].exc_succ)
            assert at["handler"] & reachable(cfg, raised), name
            # an exception the handler does not match leaves the function
            assert cfg.raise_exit in reachable(cfg, raised, avoid=at["handler"]), name
    # the handler is reached without running the second statement
    assert at["handler"] & reachable(cfg, {cfg.entry}, avoid=at["second"])


def test_finally_runs_on_every_way_out() -> None:
    cfg, at = build(
        """
        def f(c):
            try:
                if c:
                    return 1  # <- return
                g()  # <- call
            finally:
                done = True  # <- finally
            return 2
        """
    )
    # neither a return nor an exception leaves the function without running the finally body
    assert cfg.exit not in reachable(cfg, at["return"], avoid=at["finally"])
    assert cfg.raise_exit not in reachable(cfg, at["call"], avoid=at["finally"])
    assert cfg.exit in reachable(cfg, at["return"])
    assert cfg.raise_exit in reachable(cfg, at["call"])


def test_an_unknown_context_manager_may_swallow_an_exception() -> None:
    cfg, at = build(
        """
        def f(cm):
            with cm():
                a = g()  # <- inside
                b = h()  # <- second
            c = 1  # <- after
        """
    )
    # an exception from the first statement may be swallowed: `after` runs, `second` did not
    assert at["after"] & reachable(cfg, at["inside"], avoid=at["second"])


def test_a_context_manager_known_not_to_swallow_exceptions_does_not() -> None:
    cfg, at = build(
        """
        def f():
            with torch.autocast("cpu"):
                a = g()  # <- inside
                b = h()  # <- second
            c = 1  # <- after
        """,
        qualify=True,
    )
    assert not at["after"] & reachable(cfg, at["inside"], avoid=at["second"])
