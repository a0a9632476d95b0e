"""Turn a class and its lifecycle model into one synthetic function the dataflow can analyse.

    <init methods, in order>
    while <driver continues>:
        if <capture warm-up>: <setup methods>; <one forward method>
        elif <replay>:        <setup methods>; <one forward method>
        else <eager>:         ...

Every method body is inlined with its locals renamed (`bs` in two methods is two variables),
its parameters rebound to unknown values at entry, `return` routed to the end of the block, and
statement-level `self.helper(...)` calls inlined in turn (depth-limited, never recursive). The
existing must-write analysis then runs unchanged, so the cross-method verdicts keep every
soundness property of the intra-procedural ones. Kernels recorded in CUDA-graph capture run at
replay, which the replay cycle models; so the capture pass itself adds no data effects.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TypeVar

from zeroopt.analysis.cfg import InlineBlock, InlineReturn
from zeroopt.analysis.lifecycles import Cycle, Lifecycle
from zeroopt.analysis.resolve import _NONE, _OPAQUE, Resolver, runs_body_when_called

_MAX_DEPTH = 4
RENAME_MARK = "\u00b7"  # middle dot: legal in identifiers, never in real code
_UNKNOWN = "__lifecycle_value__"  # a name never bound: evaluating it yields nothing we track
_CHOICE = "__lifecycle_choice__"
_SINK = "__lifecycle_caller__"  # what a driver-level `return` hands its value to: unknown code


@dataclass
class Program:
    body: list[ast.stmt]
    # id(original allocation Call) -> every copy of it in the program
    copies: dict[int, list[ast.Call]] = field(default_factory=dict)
    escape_on_bind: set[str] = field(default_factory=set)
    methods: list[str] = field(default_factory=list)
    params: set[str] = field(default_factory=set)  # renamed parameters of the inlined methods


def class_methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = {decorator_name(d) for d in stmt.decorator_list}
            if decorators & {
                "staticmethod",
                "classmethod",
                "property",
                "setter",
                "cached_property",
            }:
                continue
            if stmt.args.posonlyargs or stmt.args.args:
                out[stmt.name] = stmt
    return out


def decorator_name(d: ast.expr) -> str:
    if isinstance(d, ast.Call):
        d = d.func
    if isinstance(d, ast.Attribute):
        return d.attr
    return d.id if isinstance(d, ast.Name) else ""


def build_program(
    cls: ast.ClassDef,
    model: Lifecycle,
    resolver: Resolver,
    shadowed: frozenset[str] = frozenset(),
    extra: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
) -> Program:
    """`shadowed`: method names some instance attribute may hold instead (`self._fill = f`):
    a call through them runs whatever was stored, so it is never inlined. `extra`: more defs
    the model may run, under keys no attribute can spell (property getters and setters), so
    that no `self.x(...)` call inlines them."""
    methods = class_methods(cls)
    if extra:
        methods = {**methods, **extra}
    program = Program(body=[])
    inliner = _Inliner(methods, resolver, program, shadowed)
    for name in model.init:
        if name in methods:
            program.body += inliner.inline(name, f"init: {name}", args=None, ret=None, stack=())

    def run(cycle: Cycle) -> list[ast.stmt]:
        stmts: list[ast.stmt] = []
        for name in cycle.setup:
            if name in methods:
                stmts += inliner.inline(
                    name, f"{cycle.name}: {name}", args=None, ret=None, stack=()
                )
        if cycle.runs_forward:
            forwards = [
                inliner.inline(f, f"{cycle.name}: {f}", args=None, ret=None, stack=())
                for f in model.forward
                if f in methods
            ]
            stmts += _choice(forwards, cls.lineno)
        return stmts

    line = cls.lineno
    # Names carry no meaning: what runs when is the model's data. Without CUDA graphs only the
    # other cycles run, in any order. With them, graph_init runs once, possibly after eager
    # cycles (a role switch enables graphs late); then one of `graph_first` runs first (when the
    # model names any), then every cycle in any order.
    always = [c for c in model.cycles if not c.graphs_only]
    program.body.append(_loop([run(c) for c in always], line))
    if model.graph_init or len(always) < len(model.cycles):
        graph_init: list[ast.stmt] = []
        for name in model.graph_init:
            if name in methods:
                graph_init += inliner.inline(
                    name, f"graphs enabled: {name}", args=None, ret=None, stack=()
                )
        first = [c for c in model.cycles if c.name in model.graph_first]
        build = [*graph_init, *(_choice([run(c) for c in first], line) if first else [])]
        enabled = [*build, _loop([run(c) for c in model.cycles], line)]
        program.body += _choice([[], enabled], line)
    return program


def _loop(branches: list[list[ast.stmt]], line: int) -> ast.While:
    """Any number of rounds, each running one of the branches."""
    return ast.While(
        test=_name(_CHOICE, line),
        body=_choice(branches, line),
        orelse=[],
        lineno=line,
        col_offset=0,
    )


def _name(ident: str, line: int) -> ast.Name:
    return ast.Name(
        id=ident, ctx=ast.Load(), lineno=line, col_offset=0, end_lineno=line, end_col_offset=0
    )


def _store(ident: str, line: int) -> ast.Name:
    return ast.Name(
        id=ident, ctx=ast.Store(), lineno=line, col_offset=0, end_lineno=line, end_col_offset=0
    )


def _assign(target: str, value: ast.expr, line: int) -> ast.Assign:
    return ast.Assign(
        targets=[_store(target, line)],
        value=value,
        lineno=line,
        col_offset=0,
        end_lineno=line,
        end_col_offset=0,
    )


def _choice(branches: list[list[ast.stmt]], line: int) -> list[ast.stmt]:
    """Exactly one of the branches runs; which one is unknown."""
    branches = [b or [ast.Pass(lineno=line, col_offset=0)] for b in branches]
    if not branches:
        return [ast.Pass(lineno=line, col_offset=0)]
    tail = branches[-1]
    for branch in reversed(branches[:-1]):
        tail = [
            ast.If(test=_name(_CHOICE, line), body=branch, orelse=tail, lineno=line, col_offset=0)
        ]
    return tail


class _Inliner:
    def __init__(
        self,
        methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
        resolver: Resolver,
        program: Program,
        shadowed: frozenset[str] = frozenset(),
    ) -> None:
        self.methods = methods
        self.resolver = resolver
        self.program = program
        self.shadowed = shadowed

    def inline(
        self,
        name: str,
        label: str,
        args: ast.Call | None,
        ret: str | None,
        stack: tuple[str, ...],
    ) -> list[ast.stmt]:
        fn = self.methods[name]
        scope = self.resolver.scope_of(fn)
        all_params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        self_name = all_params[0].arg
        local = {
            n for n, kinds in scope.bindings.items()
            if kinds <= {_OPAQUE, _NONE} and n not in scope.global_names and n not in scope.nonlocal_names
        }  # fmt: skip
        # `bs` of two methods are two variables: `bs·forward_decode` is a valid identifier, and
        # the suffix is stripped again wherever the analysis shows source text.
        rename = {n: f"{n}{RENAME_MARK}{name}" for n in local}
        rename[self_name] = "self"
        calls: dict[int, ast.Call] = {}
        body = [_clone(stmt, calls) for stmt in fn.body]
        for original_id, copied in calls.items():
            self.program.copies.setdefault(original_id, []).append(copied)
        _Renamer(rename).visit_body(body)
        self.program.escape_on_bind |= {rename[n] for n in scope.captured if n in rename}
        self.program.methods.append(name)
        every = [*all_params, *(a for a in (fn.args.vararg, fn.args.kwarg) if a is not None)]
        self.program.params |= {rename[a.arg] for a in every if a.arg in rename}
        line = fn.lineno
        # Entry: every local starts unbound (a fresh frame), then parameters take their values.
        prologue: list[ast.stmt] = [
            _assign(rename[n], _name(_UNKNOWN, line), line) for n in sorted(local) if n != self_name
        ]
        if args is not None:
            prologue += self._bind_args(fn, args, rename, self_name)
        body = _Returns(ret, driver=not stack).rewrite(body)
        body = self._inline_self_calls(body, label, (*stack, name))
        return [InlineBlock(prologue + body, label, line)]

    def _bind_args(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        call: ast.Call,
        rename: dict[str, str],
        self_name: str,
    ) -> list[ast.stmt]:
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args] if a.arg != self_name]
        out: list[ast.stmt] = []
        for param, value in zip(params, call.args, strict=False):
            out.append(_assign(rename[param], value, call.lineno))
        for kw in call.keywords:
            if kw.arg is not None and kw.arg in rename:
                out.append(_assign(rename[kw.arg], kw.value, call.lineno))
        return out

    def _inlinable(self, call: ast.expr, stack: tuple[str, ...]) -> str | None:
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "self"
            and call.func.attr in self.methods
            and call.func.attr not in self.shadowed
            and call.func.attr not in stack
            and len(stack) < _MAX_DEPTH
        ):
            return None
        fn = self.methods[call.func.attr]
        if not runs_body_when_called(fn):
            return None  # left a call: it hands `self` to code that runs later
        if fn.args.vararg or fn.args.kwarg or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(k.arg is None for k in call.keywords):
            return None
        if len(call.args) > len(fn.args.posonlyargs) + len(fn.args.args) - 1:
            return None
        return call.func.attr

    def _hoist(self, stmt: ast.stmt, label: str, stack: tuple[str, ...]) -> list[ast.stmt]:
        """`if self.m(..):` / `if not self.m(..):` / `return self.m(..)`: the call is the first
        thing the statement evaluates, so running it just before keeps Python's order."""
        holder: ast.AST | None = None
        attr = ""
        if isinstance(stmt, ast.If):
            test = stmt.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                holder, attr = test, "operand"
            else:
                holder, attr = stmt, "test"
        elif isinstance(stmt, InlineReturn) and isinstance(stmt.effect, ast.Assign | ast.Expr):
            effect = stmt.effect
            value = effect.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == _SINK
                and value.args
            ):
                holder, attr = value, "args"
            else:
                holder, attr = effect, "value"
        if holder is None:
            return []
        current = getattr(holder, attr)
        call = current[0] if attr == "args" else current
        name = self._inlinable(call, stack)
        if name is None:
            return []
        tmp = f"hoisted{RENAME_MARK}{name}"
        replacement = _name(tmp, call.lineno)
        if attr == "args":
            current[0] = replacement
        else:
            setattr(holder, attr, replacement)
        return [*self.inline(name, f"{label} > {name}", args=call, ret=tmp, stack=stack), stmt]

    def _inline_self_calls(
        self, body: list[ast.stmt], label: str, stack: tuple[str, ...]
    ) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            call: ast.expr | None = None
            target: str | None = None
            if isinstance(stmt, ast.Expr):
                call = stmt.value
            elif (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                call, target = stmt.value, stmt.targets[0].id
            name = self._inlinable(call, stack) if call is not None else None
            if name is not None:
                assert isinstance(call, ast.Call)
                ret = target or f"result{RENAME_MARK}{name}"
                out += self.inline(name, f"{label} > {name}", args=call, ret=ret, stack=stack)
                continue
            hoisted = self._hoist(stmt, label, stack)
            if hoisted:
                out += hoisted
                stmt = out.pop()
            for attr in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, attr, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(stmt, attr, self._inline_self_calls(inner, label, stack))
            if isinstance(stmt, ast.Try | ast.TryStar):
                for handler in stmt.handlers:
                    handler.body = self._inline_self_calls(handler.body, label, stack)
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    case.body = self._inline_self_calls(case.body, label, stack)
            out.append(stmt)
        return out


class _Renamer(ast.NodeTransformer):
    def __init__(self, rename: dict[str, str]) -> None:
        self.rename = rename

    def visit_body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.visit(stmt)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.rename.get(node.id, node.id)
        return node


class _Returns:
    """`return X` -> an InlineReturn that binds X to the caller's target, or, for a method the
    driver called, hands X to unknown code (the caller may read it)."""

    def __init__(self, ret: str | None, driver: bool) -> None:
        self.ret = ret
        self.driver = driver

    def rewrite(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            if isinstance(stmt, ast.Return):
                out.append(InlineReturn(self._effect(stmt)))
                continue
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for attr in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, attr, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        setattr(stmt, attr, self.rewrite(inner))
                if isinstance(stmt, ast.Try | ast.TryStar):
                    for handler in stmt.handlers:
                        handler.body = self.rewrite(handler.body)
                if isinstance(stmt, ast.Match):
                    for case in stmt.cases:
                        case.body = self.rewrite(case.body)
            out.append(stmt)
        return out

    def _effect(self, stmt: ast.Return) -> ast.stmt:
        line = stmt.lineno
        value = stmt.value or ast.Constant(value=None, lineno=line, col_offset=0)
        if self.driver:
            sink = ast.Call(
                func=_name(_SINK, line),
                args=[value],
                keywords=[],
                lineno=line,
                col_offset=0,
                end_lineno=line,
                end_col_offset=0,
            )
            return ast.Expr(value=sink, lineno=line, col_offset=0)
        if self.ret is None:
            return ast.Expr(value=value, lineno=line, col_offset=0)
        return _assign(self.ret, value, line)


# Context and operator leaves carry no state: copies share them, as the parser's own trees do.
_Node = TypeVar("_Node", bound=ast.AST)
_SHARED_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _clone(node: _Node, calls: dict[int, ast.Call]) -> _Node:
    """A copy of `node`'s tree (`copy.deepcopy` was a tenth of a cold scan); `calls` maps the id
    of every original Call to its copy, so allocations can be found in the program."""
    cls = type(node)
    new = cls.__new__(cls)
    for name, value in node.__dict__.items():
        if isinstance(value, ast.AST):
            value = value if isinstance(value, _SHARED_LEAVES) else _clone(value, calls)
        elif type(value) is list:
            value = [
                _clone(v, calls)
                if isinstance(v, ast.AST) and not isinstance(v, _SHARED_LEAVES)
                else v
                for v in value
            ]
        new.__dict__[name] = value
    if cls is ast.Call:
        calls[id(node)] = new  # type: ignore[assignment]
    return new
