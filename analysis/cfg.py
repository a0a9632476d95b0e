"""A statement-level control-flow graph of one function body, built from the stdlib `ast`.

Every path Python can take is an edge here, including the ones naive analyses forget: loops that
run zero times, `break` skipping a loop's `else`, exceptions leaving a `try` body between any two
statements, `finally` on every way out, and context managers that may swallow an exception.
Over-approximating paths is always sound for the must-analysis that runs on top.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from zeroopt.analysis.semantics import (
    CAPTURE_CONTEXTS,
    NON_SUPPRESSING_CONTEXTS,
    iterates_without_code,
)


class Kind(Enum):
    ENTRY = "entry"
    EXIT = "exit"  # normal return
    RAISE = "raise"  # an exception leaves the function
    STMT = "stmt"  # a simple statement, evaluated by the analysis
    EXPR = "expr"  # an expression evaluated for control flow: if/while test, for iterable, ...
    BIND = "bind"  # a target rebound to a value the analysis does not track (loop variable, ...)
    CALL = (
        "call"  # an implicit call to code we cannot see (__enter__/__exit__ of a context manager)
    )
    JOIN = "join"  # no effect; a meeting point


@dataclass
class Node:
    index: int
    kind: Kind
    ast_node: ast.AST | None = None
    line: int = 0
    label: str = ""
    succ: list[int] = field(default_factory=list)
    # Successors reached by an exception raised while this node runs: they see this node's IN state.
    exc_succ: list[int] = field(default_factory=list)
    # The lifecycle phase and method this node runs in, for inlined lifecycle programs.
    phase: str = ""
    # A `for` target that takes the next item of an iterable that may be a generator: the
    # generator's code runs here, at every step.
    iterates: bool = False
    # The `after-for` join of a `for` loop without `else`: reached, when the body has no
    # `break`, only once the iterator is exhausted (dataflow/loops.py reads the loop from it).
    loop: ast.For | None = None


class InlineBlock(ast.stmt):
    """A method body inlined into a synthetic lifecycle program (see lifecycle_program.py)."""

    _fields = ("body",)

    def __init__(self, body: list[ast.stmt], label: str, lineno: int) -> None:
        super().__init__()
        self.body = body
        self.label = label
        self.lineno = lineno


class InlineReturn(ast.stmt):
    """`return X` inside an inlined method: `effect` evaluates X (and binds the caller's target)."""

    _fields = ("effect",)

    def __init__(self, effect: ast.stmt) -> None:
        super().__init__()
        self.effect = effect
        self.lineno = effect.lineno


# Nested try/finally deeper than this shares one copy of the inner finally bodies (exact but
# coarser: an exception path's state also reaches the code after the statement).
_MAX_FINALLY_COPIES = 4


@dataclass
class _Loop:
    head: int
    after: int


@dataclass
class _Finally:
    entry: int
    returns: bool = False
    breaks: list[_Loop] = field(default_factory=list)
    continues: list[_Loop] = field(default_factory=list)


class CFG:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.entry = self.add(Kind.ENTRY)
        self.exit = self.add(Kind.EXIT)
        self.raise_exit = self.add(Kind.RAISE)
        # Nodes inside `with torch.cuda.graph(...)`: their kernels are recorded, not run, now.
        self.capture_nodes: set[int] = set()
        # Memos of the dataflow (analysis/dataflow/fixpoint.py), the same for every buffer of one
        # function: why it may run under a capture, its node index, its graph orders. Typed
        # `object` here: their types belong to the dataflow, which reads them back as it wrote them.
        self._capture: str | None = None
        self._index: object = None
        self._orders: object = None

    def add(self, kind: Kind, node: ast.AST | None = None, label: str = "", phase: str = "") -> int:
        line = getattr(node, "lineno", 0)
        self.nodes.append(Node(len(self.nodes), kind, node, line, label, phase=phase))
        return len(self.nodes) - 1

    def edge(self, a: int, b: int) -> None:
        if b not in self.nodes[a].succ:
            self.nodes[a].succ.append(b)

    def preds(self) -> list[list[tuple[int, bool]]]:
        """For each node, (predecessor, via_exception) pairs."""
        out: list[list[tuple[int, bool]]] = [[] for _ in self.nodes]
        for node in self.nodes:
            for s in node.succ:
                out[s].append((node.index, False))
            for s in node.exc_succ:
                out[s].append((node.index, True))
        return out


class Builder:
    """Builds a CFG; `qualify` resolves names (`range`, context managers) through imports."""

    def __init__(self, qualify: Callable[[ast.expr], str | None] | None = None) -> None:
        self.cfg = CFG()
        self.loops: list[_Loop] = []
        self.exc_targets: list[int] = []  # innermost last
        self.finallies: list[_Finally] = []
        self._qualify = qualify or (lambda expr: None)
        self._capture_depth = 0
        self._finally_copies = 0  # finally bodies being built twice, nested
        self.phase = ""
        self.returns: list[int] = []  # where `return` goes inside an inlined method

    # --- helpers -------------------------------------------------------------------------------
    def _node(self, kind: Kind, node: ast.AST | None, preds: list[int], label: str = "") -> int:
        index = self.cfg.add(kind, node, label, self.phase)
        if self._capture_depth:
            self.cfg.capture_nodes.add(index)
        for p in preds:
            self.cfg.edge(p, index)
        if self.exc_targets:
            self.cfg.nodes[index].exc_succ.append(self.exc_targets[-1])
        return index

    def build(self, body: list[ast.stmt]) -> CFG:
        ends = self._block(body, [self.cfg.entry])
        for e in ends:
            self.cfg.edge(e, self.cfg.exit)
        return self.cfg

    def _block(self, body: list[ast.stmt], preds: list[int]) -> list[int]:
        for stmt in body:
            preds = self._stmt(stmt, preds)
        return preds

    # --- statements ----------------------------------------------------------------------------
    def _stmt(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        if isinstance(stmt, ast.If):
            test = self._node(Kind.EXPR, stmt.test, preds, "if")
            return self._block(stmt.body, [test]) + self._block(stmt.orelse, [test])
        if isinstance(stmt, ast.While):
            return self._while(stmt, preds)
        if isinstance(stmt, ast.For | ast.AsyncFor):
            return self._for(stmt, preds)
        if isinstance(stmt, ast.Try) or _is_trystar(stmt):
            return self._try(stmt, preds)  # type: ignore[arg-type]
        if isinstance(stmt, ast.With | ast.AsyncWith):
            return self._with(stmt, preds)
        if isinstance(stmt, ast.Match):
            return self._match(stmt, preds)
        if isinstance(stmt, InlineBlock):
            return self._inline(stmt, preds)
        if isinstance(stmt, InlineReturn):
            node = self._node(Kind.STMT, stmt.effect, preds)
            self._jump_out(node, returning=True)
            return []
        if isinstance(stmt, ast.Return):
            node = self._node(Kind.STMT, stmt, preds)
            self._jump_out(node, returning=True)
            return []
        if isinstance(stmt, ast.Raise):
            node = self._node(Kind.STMT, stmt, preds)
            self.cfg.edge(node, self._raise_target())
            return []
        if isinstance(stmt, ast.Break):
            node = self._node(Kind.JOIN, stmt, preds, "break")
            if self.loops:
                loop = self.loops[-1]
                self._through_finally(node, loop.after, loop, brk=True)
            return []
        if isinstance(stmt, ast.Continue):
            node = self._node(Kind.JOIN, stmt, preds, "continue")
            if self.loops:
                loop = self.loops[-1]
                self._through_finally(node, loop.head, loop, brk=False)
            return []
        node = self._node(Kind.STMT, stmt, preds)
        if isinstance(stmt, ast.Assert):
            self.cfg.edge(node, self._raise_target())
        return [node]

    def _inline(self, stmt: InlineBlock, preds: list[int]) -> list[int]:
        """A method body run in place: its `return` ends only this block, and `break`/`continue`
        cannot cross into the caller."""
        end = self.cfg.add(Kind.JOIN, None, f"end of {stmt.label}", self.phase)
        saved = (self.loops, self.finallies, self.phase)
        self.loops, self.finallies = [], []
        self.phase = stmt.label
        self.returns.append(end)
        ends = self._block(stmt.body, preds)
        self.returns.pop()
        self.loops, self.finallies, self.phase = saved
        for e in ends:
            self.cfg.edge(e, end)
        return [end]

    def _raise_target(self) -> int:
        return self.exc_targets[-1] if self.exc_targets else self.cfg.raise_exit

    def _jump_out(self, node: int, returning: bool) -> None:
        if self.finallies:
            fin = self.finallies[-1]
            fin.returns = True
            self.cfg.edge(node, fin.entry)
        else:
            self.cfg.edge(node, self.returns[-1] if self.returns else self.cfg.exit)

    def _through_finally(self, node: int, target: int, loop: _Loop, brk: bool) -> None:
        # A finally between the jump and its loop runs first; it then resumes the jump.
        inner = [f for f in self.finallies if f.entry > loop.head]
        if inner:
            fin = inner[-1]
            (fin.breaks if brk else fin.continues).append(loop)
            self.cfg.edge(node, fin.entry)
        else:
            self.cfg.edge(node, target)

    def _while(self, stmt: ast.While, preds: list[int]) -> list[int]:
        head = self._node(Kind.EXPR, stmt.test, preds, "while")
        after = self.cfg.add(Kind.JOIN, None, "after-while")
        loop = _Loop(head, after)
        self.loops.append(loop)
        ends = self._block(stmt.body, [head])
        self.loops.pop()
        for e in ends:
            self.cfg.edge(e, head)
        always = isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)
        exits = [] if always else self._block(stmt.orelse, [head])
        for e in exits:
            self.cfg.edge(e, after)
        return [after]

    def _for(self, stmt: ast.For | ast.AsyncFor, preds: list[int]) -> list[int]:
        head = self._node(Kind.EXPR, stmt.iter, preds, "for")
        # `again` is where later iterations start: the iterable is evaluated once, and the exit
        # without any iteration exists only when the iterable may be empty.
        again = self.cfg.add(Kind.JOIN, None, "for-next")
        bind = self._node(Kind.BIND, stmt.target, [head, again], "for-target")
        self.cfg.nodes[bind].iterates = not iterates_without_code(stmt.iter, self._qualify)
        after = self.cfg.add(Kind.JOIN, None, "after-for")
        if isinstance(stmt, ast.For) and not stmt.orelse:
            self.cfg.nodes[after].loop = stmt
        loop = _Loop(again, after)
        self.loops.append(loop)
        ends = self._block(stmt.body, [bind])
        self.loops.pop()
        for e in ends:
            self.cfg.edge(e, again)
        exit_from = [again] if self._surely_nonempty(stmt.iter) else [head, again]
        for e in self._block(stmt.orelse, exit_from):
            self.cfg.edge(e, after)
        return [after]

    def _surely_nonempty(self, iterable: ast.expr) -> bool:
        """`range(3)`, `(a, b)`, `[x]`: loops over these run their body at least once."""
        if isinstance(iterable, ast.List | ast.Tuple):
            return bool(iterable.elts) and not any(
                isinstance(e, ast.Starred) for e in iterable.elts
            )
        if (
            isinstance(iterable, ast.Call)
            and self._qualify(iterable.func) == "builtins.range"
            and not iterable.keywords
            and 1 <= len(iterable.args) <= 3
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in iterable.args)
        ):
            values = [a.value for a in iterable.args]  # type: ignore[attr-defined]
            try:
                return len(range(*values)) > 0
            except ValueError:  # a zero step
                return False
        return False

    def _with(self, stmt: ast.With | ast.AsyncWith, preds: list[int]) -> list[int]:
        suppressing = False
        capturing = False
        # Once the first item is entered, an exception anywhere after it (a later item, a target
        # binding, the body) runs the __exit__ of the items entered so far, which may swallow it.
        handler = self.cfg.add(Kind.JOIN, stmt, "__exit__ (exception)")
        self.cfg.nodes[handler].succ.append(self._raise_target())
        for i, item in enumerate(stmt.items):
            preds = [self._node(Kind.EXPR, item.context_expr, preds, "with")]
            ctx = item.context_expr
            func = ctx.func if isinstance(ctx, ast.Call) else ctx
            qual = self._qualify(func)
            known = qual in NON_SUPPRESSING_CONTEXTS
            name = qual or (
                func.attr if isinstance(func, ast.Attribute) else str(getattr(func, "id", ""))
            )
            capturing = capturing or qual in CAPTURE_CONTEXTS or "graph_capture" in name
            if not known:
                preds = [self._node(Kind.CALL, item.context_expr, preds, "__enter__")]
                suppressing = True
            if i == 0:
                self.exc_targets.append(handler)
            if item.optional_vars is not None:
                preds = [self._node(Kind.BIND, item.optional_vars, preds, "with-target")]
        if suppressing:
            self.cfg.nodes[handler].kind = Kind.CALL
        self._capture_depth += capturing
        ends = self._block(stmt.body, preds)
        self._capture_depth -= capturing
        self.exc_targets.pop()
        if suppressing:
            exit_node = self._node(Kind.CALL, stmt, ends, "__exit__")
            # An unknown __exit__ may swallow the exception: execution goes on after the block.
            self.cfg.edge(handler, exit_node)
            return [exit_node]
        return ends

    def _try(self, stmt: ast.Try, preds: list[int]) -> list[int]:
        fin: _Finally | None = None
        if stmt.finalbody:
            fin = _Finally(self.cfg.add(Kind.JOIN, None, "finally"))
            self.finallies.append(fin)
            self.exc_targets.append(fin.entry)
        dispatch = self.cfg.add(Kind.JOIN, None, "except") if stmt.handlers else None
        if dispatch is not None:
            self.exc_targets.append(dispatch)
        ends = self._block(stmt.body, preds)
        if dispatch is not None:
            self.exc_targets.pop()  # exceptions from `else` are not caught by these handlers
        ends = self._block(stmt.orelse, ends)
        if dispatch is not None:
            catch_all = False
            # `except*`: every handler matching part of the group runs, one after another, even
            # after an earlier one raised; what no handler took is raised after them all.
            star = _is_trystar(stmt)
            ran: list[int] = []  # the ends (normal or by exception) of the handlers before
            for handler in stmt.handlers:
                start = [dispatch, *ran]
                if handler.type is not None:
                    start = [self._node(Kind.EXPR, handler.type, start, "except-type")]
                else:
                    catch_all = True
                if handler.name:
                    start = [self._node(Kind.BIND, handler, start, "except-name")]
                if star:
                    raised = self.cfg.add(Kind.JOIN, None, "except* raised")
                    self.exc_targets.append(raised)
                handler_ends = self._block(handler.body, start)
                ends += handler_ends
                if star:
                    self.exc_targets.pop()
                    ran += [*handler_ends, raised]
            for e in ran:
                self.cfg.edge(e, self._raise_target())
            if not catch_all:
                self.cfg.edge(dispatch, self._raise_target())
        if fin is None:
            return ends
        self.exc_targets.pop()
        self.finallies.pop()
        normal_ends: list[int] | None = None
        if self._finally_copies < _MAX_FINALLY_COPIES:
            # Two copies of the finally body: one entered when the try completes normally, whose
            # end falls through; one entered by an exception, return, break or continue, whose
            # end resumes that jump. With one copy, the state of an exception path would flow
            # on to the code after the statement, where it never goes.
            self._finally_copies += 1
            normal = self.cfg.add(Kind.JOIN, None, "finally")
            for e in ends:
                self.cfg.edge(e, normal)
            normal_ends = self._block(stmt.finalbody, [normal])
            fin_ends = self._block(stmt.finalbody, [fin.entry])
            self._finally_copies -= 1
        else:
            for e in ends:
                self.cfg.edge(e, fin.entry)
            fin_ends = self._block(stmt.finalbody, [fin.entry])
        for e in fin_ends:
            # After `finally` control resumes wherever it was going: re-raise, return, jumps.
            self.cfg.edge(e, self._raise_target())
            if fin.returns:
                self._jump_out(e, returning=True)
            for loop in fin.breaks:
                self._through_finally(e, loop.after, loop, brk=True)
            for loop in fin.continues:
                self._through_finally(e, loop.head, loop, brk=False)
        return fin_ends if normal_ends is None else normal_ends

    def _match(self, stmt: ast.Match, preds: list[int]) -> list[int]:
        test = [self._node(Kind.EXPR, stmt.subject, preds, "match")]
        ends: list[int] = []
        for case in stmt.cases:
            # The test evaluates value patterns; only a successful match binds names.
            check = self._node(Kind.EXPR, case.pattern, test, "case")
            start = [self._node(Kind.BIND, case.pattern, [check], "case-bind")]
            if case.guard is not None:
                start = [self._node(Kind.EXPR, case.guard, start, "guard")]
            ends += self._block(case.body, start)
            if case.guard is None and _irrefutable(case.pattern):
                return ends
            test = [check] if case.guard is None else [check, start[0]]
        return ends + test


def _is_trystar(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.TryStar)


def _irrefutable(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False
