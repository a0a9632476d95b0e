"""Small random PyTorch programs that exercise every construct the analysis claims to understand.

One program model, two drivers: `build_program` makes every decision through a `Chooser`, so the
same code backs a seeded plain-random generator (`random_program(seed)`: cheap, reproducible, for
the bench's thousands of programs) and a hypothesis strategy (`programs()`: shrinks a failing
program to a small one). Programs are source text of a module defining `f(inp, n, k, flag)`, run
on CPU with tiny shapes over `INPUTS`; `n` is a loop count that may be 0, `k` a slice bound that
may be 0 or past the end, `flag` picks branches. Buffer names never get rebound, so every
allocation site is one buffer.

The program model and the choosers are in gen_model.py; the statements, by family, in
gen_writes.py (allocations and writes), gen_uses.py (reads, metadata, escapes) and gen_traps.py
(near misses of what the analysis proves); here, control flow and the program itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.soundness.gen_model import (
    PRELUDE,
    Chooser,
    Handle,
    HypothesisChooser,
    Program,
    RandomChooser,
)
from tests.soundness.gen_traps import Traps
from tests.soundness.gen_uses import Uses
from tests.soundness.gen_writes import Writes


class _Gen(Writes, Uses, Traps):
    """One program being generated: the families of statements, and the control flow around them."""

    def call_closure(self) -> list[str]:
        name, kind = self.ch.choice(self.callables)
        return [f"acc = acc + {name}()"] if kind == "read" else [f"{name}()"]

    def ret_expr(self, hs: list[Handle]) -> str:
        items: list[str] = []
        for _ in range(self.ch.integer(1, 3)):
            opts = ["acc", "store", "holder", "vars(box)"]
            if hs:
                h = self.ch.choice(hs)
                opts = [h.name, f"{h.name}.float().sum()", f"{h.name}[:k]", *opts]
            items.append(self.ch.choice(opts))
        return items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"

    def block(
        self, hs: list[Handle], depth: int, size: int, loop_var: str | None, in_loop: bool = False
    ) -> list[str]:
        """A statement list; names created inside stay inside (they may not exist on other paths)."""
        scope = list(hs)
        callables = list(self.callables)
        lines: list[str] = []
        for _ in range(size):
            lines += self.statement(scope, depth, loop_var, in_loop)
        self.callables = callables
        return lines or ["pass"]

    def statement(
        self, hs: list[Handle], depth: int, loop_var: str | None, in_loop: bool
    ) -> list[str]:
        kinds = [
            "full",
            "partial",
            "read",
            "meta",
            "view",
            "gather",
            "rmw",
            "escape",
            "alloc",
            "control",
            "return",
            "tricky",
            "tricky",
        ]
        if self.callables:
            kinds.append("call")
        kind = self.ch.choice(kinds)
        if kind == "alloc" or (not hs and kind not in ("control", "return")):
            if self.sites >= 4:
                return ["acc = acc + 1"]
            return self.stmt_alloc(hs)
        if kind == "control":
            if depth >= 2:
                return self.full_write(self.ch.choice(hs)) if hs else ["pass"]
            return self.control(hs, depth + 1, loop_var, in_loop)
        if kind == "return":
            self.tags.add("early-return")
            cond = self.ch.choice(["flag", "k == 0", "n > 1"])
            return [f"if {cond}:", f"    return {self.ret_expr(hs)}"]
        if kind == "call":
            return self.call_closure()
        if kind == "tricky" and self.sites <= 2 and self.ch.chance(20):
            return self.tricky_alloc()
        h = self.ch.choice(hs)
        if kind == "tricky":
            return self.tricky(h, hs)
        if kind == "full":
            return self.full_write(h)
        if kind == "partial":
            return self.partial_write(h, loop_var)
        if kind == "read":
            return self.read(h, loop_var)
        if kind == "meta":
            return self.metadata(h)
        if kind == "view":
            return self.view_write(h, hs)
        if kind == "gather":
            return self.gather(h, hs)
        if kind == "rmw":
            return self.rmw(h)
        return self.escape(h, hs)

    def control(
        self, hs: list[Handle], depth: int, loop_var: str | None, in_loop: bool
    ) -> list[str]:
        def body(lv: str | None = loop_var, loop: bool = in_loop) -> list[str]:
            return [
                "    " + line for line in self.block(hs, depth, self.ch.integer(1, 3), lv, loop)
            ]

        form = self.ch.choice(
            [
                "if",
                "if-else",
                "for",
                "for-else",
                "for-break",
                "while",
                "while-true",
                "try",
                "try-finally",
                "with",
                "match",
                "nested-def",
                "elif",
            ]
        )
        self.tags.add(form)
        i = self.fresh("i")
        if form == "if":
            return [f"if {self.ch.choice(['flag', 'k > 2', 'not flag'])}:", *body()]
        if form == "if-else":
            return ["if flag:", *body(), "else:", *body()]
        if form == "elif":
            return ["if k > 4:", *body(), "elif k > 0:", *body(), "else:", *body()]
        if form == "for":
            return [f"for {i} in range(n):", *body(i, True)]
        if form == "for-else":
            return [f"for {i} in range(n):", *body(i, True), "else:", *body()]
        if form == "for-break":
            return [f"for {i} in range(3):", *body(i, True), f"    if {i} >= k:", "        break"]
        if form == "while":
            return [f"{i} = 0", f"while {i} < n:", *body(i, True), f"    {i} += 1"]
        if form == "while-true":
            return ["while True:", *body(None, True), "    break"]
        if form in ("try", "try-finally"):
            raise_line = [
                f"    if {self.ch.choice(['flag', 'k > 3', 'n == 0'])}:",
                "        raise ValueError('boom')",
            ]
            lines = ["try:", *body(), *raise_line, *body(), "except ValueError:", *body()]
            if form == "try-finally":
                lines += ["finally:", *body()]
            return lines
        if form == "with":
            return ["with torch.no_grad():", *body()]
        if form == "match":
            return [
                "match k:",
                "    case 0:",
                *["    " + x for x in body()],
                "    case _:",
                *["    " + x for x in body()],
            ]
        # nested function, called zero or more times
        name = self.fresh("inner")
        outer, self.in_inner = self.in_inner, True
        inner = ["    nonlocal acc", *body(None, False)]
        self.in_inner = outer
        calls = self.ch.choice(
            [[f"{name}()"], [], ["if flag:", f"    {name}()"], [f"{name}()", f"{name}()"]]
        )
        return [f"def {name}():", *inner, *calls]


LIFECYCLE_SETUPS = (
    "init_forward_metadata_capture_cuda_graph",
    "init_forward_metadata_replay_cuda_graph",
    "init_forward_metadata",
)
# SGLang's order: capture-time metadata then a warm-up forward that really runs, replay-time
# metadata then the forward, and eager steps; the analysis must hold for any order, so for this one.
LIFECYCLE_DRIVER = """\
def f(inp, n, k, flag):
    m = Backend()
    m.init_cuda_graph_state(inp, n, k, flag)
    outs = []
    for setup in (m.init_forward_metadata_capture_cuda_graph, m.init_forward_metadata_replay_cuda_graph, m.init_forward_metadata):
        setup(inp, n, k, flag)
        outs.append(m.forward_decode(inp, n, k, flag))
    return outs, m.trace
"""


def build_program(ch: Chooser, delegation: bool = False) -> Program:
    """With `delegation`, always the lifecycle class, without its driver (the caller adds a
    wrapper forwarding its hooks: tests/soundness/delegation.py), its buffers allocated in
    `__init__` or in `init_cuda_graph_state`."""
    g = _Gen(ch)
    header = ["import torch"]
    if ch.chance(20):
        header.append("import torch as th")
        g.torch_names.append("th")
    if ch.chance(15):
        header.append("from torch import zeros")
        g.from_import = True
    header.append("from contextlib import suppress")
    fill_c = ch.choice(["1.0", "2"])
    module_extra: list[str] = []
    if ch.chance(20):
        g.global_k = True
        module_extra = ["K = 0", "", "", "def bump_global():", "    global K", "    K += 1", "", ""]
    g.bump, g.kt = ch.chance(30), ch.chance(30)

    def prologue() -> list[str]:
        lines = ["global K", "K = k"] if g.global_k else []
        lines += [
            "acc = inp.sum() * 0",
            "idx = torch.tensor([0, 2, 3])",
            "store = []",
            "holder = {}",
            "box = Box()",
            "def fill_all(t):",
            f"    t.fill_({fill_c})",
        ]
        if g.bump:
            lines += ["def bump():", "    nonlocal k", "    k += 1"]
        if g.kt:
            lines += ["kt = torch.tensor(k)"]
        return lines

    def indent(lines: list[str], by: str = "    ") -> list[str]:
        return [by + line if line else line for line in lines]

    hs: list[Handle] = []
    if delegation or ch.chance(25):
        # A class with an SGLang attention-backend lifecycle: buffers allocated on self in
        # init_cuda_graph_state, written by the metadata setups, read by the forward.
        g.tags.add("lifecycle")
        init = [*prologue(), "self.trace = []"]
        for _ in range(ch.integer(1, 2)):
            init += g.stmt_alloc(hs, prefix="self.")
        methods = [("init_cuda_graph_state", [*init, "return acc"])]
        if delegation and ch.chance(50):  # allocated in `__init__`; graph init may write them
            body = prologue()
            for _ in range(ch.integer(0, 3)):
                body += g.statement(list(hs), 0, None, False)
            methods = [
                ("__init__", init),
                ("init_cuda_graph_state", [*body, "self.trace.append(acc)"]),
            ]
            g.tags.add("alloc-in-init")
        for name in LIFECYCLE_SETUPS:
            body = prologue()
            for _ in range(ch.integer(0, 4)):
                body += g.statement(list(hs), 0, None, False)
            methods.append((name, [*body, "self.trace.append(acc)"]))
        body = prologue()
        for _ in range(ch.integer(0, 3)):
            body += g.statement(list(hs), 0, None, False)
        methods.append(("forward_decode", [*body, f"return {g.ret_expr(hs)}"]))
        cls = ["class Backend:"]
        for name, body in methods:
            cls += [f"    def {name}(self, inp, n, k, flag):", *indent(body, "        "), ""]
        main = cls if delegation else [*cls, "", LIFECYCLE_DRIVER]
    else:
        body = prologue() + g.stmt_alloc(hs)
        for _ in range(ch.integer(1, 7)):
            body += g.statement(hs, 0, None, False)
        body.append(f"return {g.ret_expr(hs)}")
        main = ["def f(inp, n, k, flag):", *indent(body)]
    lines = [*header, "", "", PRELUDE, "", *module_extra, *main]
    return Program(source="\n".join(lines) + "\n", tags=frozenset(g.tags))


def random_program(seed: int) -> Program:
    """The seeded plain-random generator: the same seed gives the same program, everywhere."""
    return build_program(RandomChooser(seed))


def programs() -> Any:
    """A hypothesis strategy over the same program model."""
    from hypothesis import strategies as st

    @st.composite
    def _programs(draw: Callable[[Any], Any]) -> Program:
        return build_program(HypothesisChooser(draw))

    return _programs()
