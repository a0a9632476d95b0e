"""CUDA-graph capture: a write recorded into a graph runs only at replay.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "capture_opened_and_closed_in_helpers",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(...)` at line 21 ("written in full (line '
            '26)"). `begin`/`end` open and close a CUDA-graph capture by hand in small helpers: the'
            " `fill_` between them is recorded, not run, so the read after the capture sees the "
            "allocation's memory. Only a `capture_begin` in the function itself was recognised. "
            "Needs CUDA."
        ),
        source=r"""

import torch


def begin(g):
    g.capture_begin()


def end(g):
    g.capture_end()


def open_capture(g):
    begin(g)  # through a second helper


def f(n):
    if not torch.cuda.is_available():
        return None
    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    buf = torch.zeros(n, device="cuda")  # <- site
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        open_capture(g)
        buf.fill_(1.0)
        end(g)
    torch.cuda.current_stream().wait_stream(s)
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return f(8)
""",
        gpu=True,
    ),
    Case(
        "graph_entered_by_calling_enter",
        why=(
            '`safe` would be wrong for `buf = torch.zeros(...)` at line 12 ("written in full (line '
            '15)"). `torch.cuda.graph(g)` entered by calling `__enter__()` by hand: the `fill_` is '
            "recorded into the graph, not run, and the read after `__exit__` sees the allocation's "
            "memory. Only `with torch.cuda.graph(...)` was recognised. Needs CUDA."
        ),
        source=r"""

import torch


class Capturer:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()


def f(n):
    if not torch.cuda.is_available():
        return None
    buf = torch.zeros(n, device="cuda")  # <- site
    cm = torch.cuda.graph(Capturer().graph)
    cm.__enter__()
    buf.fill_(1.0)
    cm.__exit__(None, None, None)
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return f(8)
""",
        gpu=True,
    ),
    Case(
        "context_manager_yields_inside_capture",
        why=(
            "`safe` would be wrong for `buf = torch.zeros(...)` at line 25. A context manager of "
            "the file yields inside `with torch.cuda.graph(...)`; the caller enters it through an "
            "ExitStack (no `with`, no `__enter__` in sight), so the `fill_` after `enter_context` "
            "is recorded, not run, and the read after `close()` sees the allocation's memory. Needs"
            " CUDA."
        ),
        source=r"""
import contextlib

import torch


@contextlib.contextmanager
def recording(g):
    with torch.cuda.graph(g):
        yield g


class Runner:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()

    def capture(self):
        return recording(self.g)


def f(n):
    if not torch.cuda.is_available():
        return None
    r = Runner()
    stack = contextlib.ExitStack()
    buf = torch.zeros(n, device="cuda")  # <- site
    stack.enter_context(r.capture())
    buf.fill_(1.0)
    stack.close()
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return f(8)
""",
        gpu=True,
    ),
    Case(
        "capture_methods_stored_as_attributes",
        why=(
            "`safe` would be wrong for `buf = torch.zeros(...)` at line 17. The capture methods are"
            " stored as attributes (`self._start = self.g.capture_begin`) and called later through "
            "them; a graph pool is shared with another capture. The `fill_` between start and stop "
            "is recorded, not run. Needs CUDA."
        ),
        source=r"""

import torch


class Graph:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        self.pool = torch.cuda.graph_pool_handle()
        self._start = self.g.capture_begin
        self._stop = self.g.capture_end


def f(n):
    if not torch.cuda.is_available():
        return None
    gr = Graph()
    s = torch.cuda.Stream()
    buf = torch.zeros(n, device="cuda")  # <- site
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gr._start(pool=gr.pool)
        buf.fill_(1.0)
        gr._stop()
    torch.cuda.current_stream().wait_stream(s)
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return f(8)
""",
        gpu=True,
    ),
    Case(
        "capture_method_named_by_a_string",
        why=(
            "`safe` would be wrong for `buf = torch.zeros(...)` at line 18. The capture is opened "
            'by a method name spelled as a string: `getattr(g, "capture_begin")()` here, and stored'
            ' under a string name by `setattr(self, "go", g.capture_begin)` in `Recorder.__init__` '
            "(then called as `r.go()`). The `fill_` in between is recorded, not run. Needs CUDA. "
            "ruff: noqa: B009, B010 (the string spellings are the point of this case)"
        ),
        source=r"""

import torch


class Recorder:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        setattr(self, "go", self.g.capture_begin)
        setattr(self, "stop", self.g.capture_end)


def by_string(g):
    getattr(g, "capture_end")()


def f(n, stored):
    if not torch.cuda.is_available():
        return None
    r, g, s = Recorder(), torch.cuda.CUDAGraph(), torch.cuda.Stream()
    buf = torch.zeros(n, device="cuda")  # <- site
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        if stored:
            r.go()
        else:
            getattr(g, "capture_begin")()
        buf.fill_(1.0)
        r.stop() if stored else by_string(g)
    torch.cuda.current_stream().wait_stream(s)
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return (f(8, True), f(8, False))
""",
        gpu=True,
    ),
    Case(
        "class_enters_the_graph_in_its_enter",
        why=(
            "`safe` would be wrong for `buf = torch.zeros(...)` at line 21. A class of the file "
            "enters `torch.cuda.graph` in its own `__enter__`, and an ExitStack enters it: no "
            "`with`, no name of the class at the call. Its special methods run where no name shows "
            "it, so every call in the file may open a capture. Needs CUDA."
        ),
        source=r"""
import contextlib

import torch


class Capture:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
        self.cm = None

    def __enter__(self):
        self.cm = torch.cuda.graph(self.g)
        self.cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)


def f(n, c):
    buf = torch.zeros(n, device="cuda")  # <- site
    stack = contextlib.ExitStack()
    stack.enter_context(c)
    buf.fill_(1.0)
    stack.close()
    return buf.sum().item()
""",
        scenario=r"""
def run():
    return f(8, Capture())
""",
        gpu=True,
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
