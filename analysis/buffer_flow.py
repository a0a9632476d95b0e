"""Follow one allocation through its function: every read, write, alias, view and escape.

`analyse_buffer` runs a forward dataflow over the function's CFG (cfg.py) with the state of
state.py, then one last pass over the fixpoint that records what decides the verdict. The
expression evaluator `_Eval` knows Python evaluation order and the torch semantics of
torch_api.py; whatever it does not recognise is a possible read, never silently ignored.
"""

from __future__ import annotations

import ast
import heapq
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

from zeroopt.analysis import torch_api as api
from zeroopt.analysis.capture import capture_functions, direct_capture, referenced
from zeroopt.analysis.cfg import CFG, Kind, Node
from zeroopt.analysis.kernel_contracts import KernelContract, kernel_contract_for
from zeroopt.analysis.options import Contract
from zeroopt.analysis.records import plain_dataclasses
from zeroopt.analysis.resolve import Resolver, Scope, walk
from zeroopt.analysis.sites import shape_args
from zeroopt.analysis.state import (
    MAYBE,
    MAYBE_COPY,
    SELF,
    UNREACHED,
    Ref,
    Region,
    State,
    View,
    join,
)

UNSAFE = "unsafe"
UNPROVEN = "unproven"
VIEW_READ = "read (a view written in full)"  # phase event of a read covered by a fresh path
_MAX_ITERATIONS = 200_000


@dataclass(frozen=True)
class Issue:
    severity: str  # UNSAFE or UNPROVEN
    line: int
    kind: str
    text: str


@dataclass
class BufferOutcome:
    """What the dataflow concluded for one allocation: the rule turns it into a finding."""

    issues: list[Issue] = field(default_factory=list)
    writes: list[tuple[int, str]] = field(default_factory=list)  # full writes seen (line, text)
    partial_writes: list[tuple[int, str]] = field(default_factory=list)
    contracts: list[tuple[int, str]] = field(default_factory=list)
    reads_after_write: int = 0
    coupled: list[tuple[int, str]] = field(default_factory=list)  # (line, description)
    # Kernel calls that read the buffer, as (id of the call node, parameter): `(c, "seqused_k")`.
    kernel_args: set[tuple[int, str]] = field(default_factory=set)
    # Where rows of the buffer are read up to another argument's values: (id of the call node,
    # that parameter). A buffer with that argument in its `kernel_args` is coupled to this one.
    couplings: set[tuple[int, str]] = field(default_factory=set)
    # Reads through a view that was written in full through the same path: (line, text).
    view_reads: list[tuple[int, str]] = field(default_factory=list)
    view_writes: list[tuple[int, str]] = field(default_factory=list)
    phase_events: set[tuple[str, str]] = field(default_factory=set)  # (phase, "read"/"write"/...)
    reached: bool = False
    gave_up: str = ""  # non-empty when the analysis stopped early (too large, ...)


@dataclass
class Context:
    """Everything about the allocation and its function that does not change along paths."""

    alloc: ast.Call
    resolver: Resolver
    scope: Scope
    contracts: dict[str, Contract]
    source_lines: list[str]
    escape_on_bind: frozenset[str]  # globals, closure cells, class/module names
    contiguous: bool  # a fresh torch.zeros/new_zeros; zeros_like may copy odd strides
    capture_nodes: frozenset[int] = frozenset()
    # Lifecycle mode: the object rooted here is private to the modelled methods, and the end of
    # the modelled program is not an exit to unknown readers.
    private_roots: frozenset[str] = frozenset()
    check_exit: bool = True
    # Attributes the class assigns on `self` (not methods): calling one does not pass `self`.
    self_callables: frozenset[str] = frozenset()
    # Names that provably hold immutable ints: the only ones slice bounds may mention.
    int_names: frozenset[str] = frozenset()
    # Kernel contracts declared in the configuration, checked before the built-in ones.
    kernels: tuple[KernelContract, ...] = ()
    # Code of this module reads call frames (`sys._getframe(1).f_locals`): any callee may read
    # the caller's locals, so a buffer is reachable from the start.
    frames_read: bool = False
    # Source text of expressions, by node id: the same calls are unparsed for every buffer and
    # every visit of the fixpoint. The node is kept with its text, so its id cannot be reused
    # while the memo lives. Share one memo only among contexts over the same trees.
    src_memo: dict[int, tuple[ast.AST, str]] = field(default_factory=dict)

    @property
    def records(self) -> dict[str, tuple[str, ...]]:
        """Plain dataclasses of the module (records.py): name -> fields in __init__ order."""
        scope = self.scope
        while scope.parent is not None:
            scope = scope.parent
        if not isinstance(scope.node, ast.Module):
            return {}
        declared = (n for s in self.resolver.scopes.values() for n in s.global_names)
        return plain_dataclasses(scope.node, declared)

    @property
    def mask_names(self) -> frozenset[str]:
        """Names of the function that always hold an unchanged bool tensor (`mask_names`)."""
        scope = self.scope
        cached = getattr(scope, "_mask_names", None)
        if cached is None:
            cached = mask_names(
                scope.node,
                lambda e: self.resolver.qualified(scope, e),
                frozenset(self.escape_on_bind)
                | frozenset(scope.captured | scope.global_names | scope.nonlocal_names),
            )
            scope._mask_names = cached
        return cached

    @property
    def capture_functions(self) -> dict[str, str]:
        """Functions and methods of the module that may open or close a CUDA-graph capture
        (capture.py), by name: computed once per module, kept on its resolver."""
        resolver = self.resolver
        cached = getattr(resolver, "_capture_functions", None)
        if cached is None:
            scope = self.scope
            while scope.parent is not None:
                scope = scope.parent
            module = scope.node
            cached = capture_functions(module, resolver) if isinstance(module, ast.Module) else {}
            resolver._capture_functions = cached
        return cached

    def text(self, node: ast.AST) -> str:
        line = getattr(node, "lineno", 0)
        if 1 <= line <= len(self.source_lines):
            return self.source_lines[line - 1].strip()[:120]
        return ""


_RENAMED = re.compile("\u00b7\\w+")


def _display(text: str) -> str:
    """Source text of an inlined lifecycle program, with the per-method renaming undone."""
    return _RENAMED.sub("", text)


class _Recorder:
    def __init__(self, outcome: BufferOutcome) -> None:
        self.outcome = outcome
        self._seen: set[tuple[str, int, str]] = set()

    def issue(self, severity: str, line: int, kind: str, text: str) -> None:
        text = _display(text)
        key = (severity, line, text)
        if key not in self._seen:
            self._seen.add(key)
            self.outcome.issues.append(Issue(severity, line, kind, text))

    def note(self, bucket: list[tuple[int, str]], line: int, text: str) -> None:
        text = _display(text)
        if (line, text) not in bucket:
            bucket.append((line, text))


# --- static shape of index expressions ---------------------------------------------------------


def _bound(
    expr: ast.expr | None, int_names: frozenset[str]
) -> tuple[str | None, frozenset[str]] | None:
    """Slice bound as canonical text, when built from integer literals and names that provably
    hold immutable ints (scalars.py): only then does equal text mean an equal value later."""
    if expr is None:
        return None, frozenset()
    names: set[str] = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            if node.id not in int_names:
                return None
            names.add(node.id)
        elif isinstance(node, ast.Constant):
            if type(node.value) is not int:
                return None
        elif not isinstance(
            node, ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop | ast.expr_context
        ):
            return None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return None  # negative bounds count from the end: not comparable as text
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and expr.value < 0:
        return None
    if not names and not isinstance(expr, ast.Constant):
        folded = _fold(expr)  # `2 * 4` is the bound `8`
        if folded is None or folded < 0:
            return None
        return str(folded), frozenset()
    return ast.unparse(expr), frozenset(names)


def _fold(expr: ast.expr) -> int | None:
    """The value of an expression of int literals and + - * // (small, exact), or None."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ast.BinOp) and isinstance(
        expr.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv
    ):
        a, b = _fold(expr.left), _fold(expr.right)
        if a is None or b is None or abs(a) > 2**40 or abs(b) > 2**40:
            return None
        if isinstance(expr.op, ast.Add):
            return a + b
        if isinstance(expr.op, ast.Sub):
            return a - b
        if isinstance(expr.op, ast.Mult):
            return a * b
        return a // b if b else None
    return None


@dataclass(frozen=True)
class _Index:
    kind: str  # "all", "all-reshaped", "region", "basic", "maybe-advanced", "advanced"
    region: Region | None = None


def _classify_index(index: ast.expr, int_names: frozenset[str]) -> _Index:
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    kinds: list[str] = []
    for item in items:
        if isinstance(item, ast.Slice):
            if item.lower is None and item.upper is None and item.step is None:
                kinds.append("all")
            elif _step_piece(item) is not None:
                kinds.append("step")
            elif (
                (item.step is None or _is_int(item.step, 1))
                and _bound(item.lower, int_names) is not None
                and _bound(item.upper, int_names) is not None
            ):
                kinds.append("slice")
            else:
                kinds.append("basic")
        elif isinstance(item, ast.Constant) and item.value is Ellipsis:
            kinds.append("ellipsis")
        elif isinstance(item, ast.Constant) and item.value is None:
            kinds.append("newaxis")
        elif isinstance(item, ast.Constant) and type(item.value) is int:
            kinds.append("int" if item.value >= 0 else "basic")
        elif (isinstance(item, ast.Constant) and type(item.value) is bool) or isinstance(
            item, ast.List | ast.ListComp | ast.Compare | ast.Starred | ast.Tuple
        ):
            kinds.append("advanced")
        else:
            kinds.append("maybe")  # a name or call: an int (a view) or a tensor (a gather)
    if "advanced" in kinds:
        return _Index("advanced")
    if "maybe" in kinds:
        return _Index("maybe-advanced")
    if kinds.count("ellipsis") > 1:
        return _Index("basic")
    if all(k in ("all", "ellipsis", "newaxis") for k in kinds):
        # `x[:]`, `x[...]`: every element, same layout; `x[None]`: every element, but its
        # dimensions are not x's, so a slice of it is not the same slice of x.
        return _Index("all-reshaped" if "newaxis" in kinds else "all")
    special = [i for i, k in enumerate(kinds) if k in ("slice", "int", "step")]
    others_full = all(
        k in ("all", "ellipsis", "newaxis") for i, k in enumerate(kinds) if i not in special
    )
    if len(special) == 1 and others_full:
        i = special[0]
        item = items[i]
        if "ellipsis" in kinds[:i]:
            after = [k for k in kinds[i:] if k != "newaxis"]
            dim = -len(after)
            if dim != -1:
                return _Index("basic")
        else:
            dim = sum(1 for k in kinds[:i] if k != "newaxis")
        if kinds[i] == "step":
            assert isinstance(item, ast.Slice)
            residue, step = _step_piece(item)  # type: ignore[misc]
            lo_text = None if residue == 0 else str(residue)
            hi_text = None if residue == step - 1 else str(residue + 1)
            return _Index("region", Region(dim, lo_text, hi_text, frozenset(), f"step{step}"))
        if isinstance(item, ast.Slice):
            lo, lo_names = _bound(item.lower, int_names) or (None, frozenset())
            hi, hi_names = _bound(item.upper, int_names) or (None, frozenset())
            lo = None if lo == "0" else lo
            return _Index("region", Region(dim, lo, hi, lo_names | hi_names))
        assert isinstance(item, ast.Constant) and isinstance(item.value, int)
        value = item.value
        return _Index(
            "region", Region(dim, None if value == 0 else str(value), str(value + 1), frozenset())
        )
    return _Index("basic")


def _own_bounds(index: ast.expr, key: str, qualify: Callable[[ast.expr], str | None]) -> ast.expr:
    """`x[: x.shape[0]]`, `x[: x.size(0)]`, `x[: len(x)]` on x itself: the upper bound is the
    end of that dimension, so the slice is written as `x[:]`. Only before any `...` or None."""
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    changed = False
    for i, item in enumerate(items):
        if not isinstance(item, ast.Slice):
            if isinstance(item, ast.Constant) and item.value in (None, Ellipsis):
                break
            continue
        if item.upper is not None and _own_size(item.upper, key, i, qualify):
            items[i] = ast.Slice(lower=item.lower, upper=None, step=item.step)
            changed = True
    if not changed:
        return index
    return ast.Tuple(elts=items, ctx=ast.Load()) if isinstance(index, ast.Tuple) else items[0]


def _own_size(e: ast.expr, key: str, dim: int, qualify: Callable[[ast.expr], str | None]) -> bool:
    def lit(x: ast.expr) -> bool:
        return isinstance(x, ast.Constant) and type(x.value) is int and x.value == dim

    if isinstance(e, ast.Subscript) and lit(e.slice):
        v = e.value
        if isinstance(v, ast.Attribute) and v.attr == "shape":
            return place_key(v.value) == key
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size":
            return not v.args and not v.keywords and place_key(v.func.value) == key
        return False
    if isinstance(e, ast.Call) and not e.keywords and len(e.args) == 1:
        f = e.func
        if isinstance(f, ast.Attribute) and f.attr == "size" and lit(e.args[0]):
            return place_key(f.value) == key
        if dim == 0 and qualify(f) == "builtins.len":
            return place_key(e.args[0]) == key
    return False


def _mask_region(index: ast.expr, masks: frozenset[str]) -> Region | None:
    if isinstance(index, ast.Name) and index.id in masks:
        return Region(0, None, index.id, frozenset({index.id}), f"mask {index.id}")
    if (
        isinstance(index, ast.UnaryOp)
        and isinstance(index.op, ast.Invert)
        and isinstance(index.operand, ast.Name)
        and index.operand.id in masks
    ):
        name = index.operand.id
        return Region(0, name, None, frozenset({name}), f"mask {name}")
    return None


# Calls that return a bool tensor (never a Python bool, whose `~` is an int: `~True == -2`).
_BOOL_FUNCTIONS = frozenset(
    f"torch.{n}"
    for n in (
        "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isin", "logical_not",
        "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
        "greater", "less", "greater_equal", "less_equal", "not_equal",
    )
)  # fmt: skip
_BOOL_METHODS = frozenset(
    {
        "bool", "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
        "eq", "ne", "lt", "le", "gt", "ge",
    }
)  # fmt: skip
# Uses of a mask that cannot change it: methods that return new tensors or Python values.
_MASK_READERS = frozenset(
    {"any", "all", "sum", "nonzero", "count_nonzero", "numel", "size", "dim", "item", "tolist"}
)


def _bool_tensor(value: ast.expr, qualify: Callable[[ast.expr], str | None]) -> bool:
    if isinstance(value, ast.Call):
        f = value.func
        if qualify(f) in _BOOL_FUNCTIONS:
            return True
        return isinstance(f, ast.Attribute) and f.attr in _BOOL_METHODS and qualify(f) is None
    if isinstance(value, ast.Compare) and len(value.ops) == 1:
        # A comparison is a bool tensor when one side is a tensor: a slice with a tuple index
        # (`inp[0, :8]`, which no Python sequence accepts) or a torch call.
        for side in (value.left, *value.comparators):
            if (
                isinstance(side, ast.Subscript)
                and isinstance(side.slice, ast.Tuple)
                and any(isinstance(x, ast.Slice) for x in side.slice.elts)
            ):
                return True
            if isinstance(side, ast.Call) and (qualify(side.func) or "").startswith("torch."):
                return True
    return False


def mask_names(
    fn: ast.AST, qualify: Callable[[ast.expr], str | None], escaping: frozenset[str]
) -> frozenset[str]:
    """Local names that always hold a bool tensor no code changes in place: every binding is
    `m = <bool tensor>`, every use an index `X[m]`, `X[~m]`, or a reading method (`m.any()`).
    A store through `m` and through `~m` then writes complementary elements."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset()
    ok: dict[str, bool] = {}
    allowed: set[int] = set()
    nodes = [n for stmt in fn.body for n in walk([stmt])]
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name):
                allowed.add(id(t))
                good = _bool_tensor(node.value, qualify)
                ok[t.id] = ok.get(t.id, True) and good
        elif isinstance(node, ast.Subscript):
            sl = node.slice
            if isinstance(sl, ast.Name):
                allowed.add(id(sl))
            elif (
                isinstance(sl, ast.UnaryOp)
                and isinstance(sl.op, ast.Invert)
                and isinstance(sl.operand, ast.Name)
            ):
                allowed.add(id(sl.operand))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MASK_READERS
            and isinstance(node.func.value, ast.Name)
        ):
            allowed.add(id(node.func.value))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in ok and id(node) not in allowed:
            ok[node.id] = False
        if isinstance(node, ast.arg) and node.arg in ok:
            ok[node.arg] = False
    return frozenset(n for n, good in ok.items() if good and n not in escaping)


_SPLITS = {"chunk": 1, "split": 1, "unbind": 0, "split_with_sizes": 1}


def _split_call(
    value: ast.expr, qualify: Callable[[ast.expr], str | None]
) -> tuple[ast.expr, int, str] | None:
    """`x.chunk(2)`, `x.split([2, 3], dim=1)`, `x.unbind()`, `torch.chunk(x, 2)`: the tensor
    split, the dimension and a tag naming the partition, when every argument is a literal."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    method = value.func.attr
    if method not in _SPLITS:
        return None
    args = list(value.args)
    if qualify(value.func) == f"torch.{method}" and method != "split_with_sizes":
        if not args:
            return None
        recv = args.pop(0)
    elif qualify(value.func.value) is None:
        recv = value.func.value
    else:
        return None  # `something.split` of a module that is not torch
    if not isinstance(recv, ast.Name | ast.Attribute | ast.Subscript):
        return None
    keywords = {k.arg: k.value for k in value.keywords}
    if None in keywords or set(keywords) - {"dim"}:
        return None
    if len(args) != _SPLITS[method] and not (method == "unbind" and len(args) == 1):
        return None
    dim_expr = keywords.get("dim")
    if method == "unbind" and args:
        if dim_expr is not None:
            return None
        dim_expr = args.pop()
    if len(args) > 1:
        return None
    literals = [*args, *([dim_expr] if dim_expr is not None else [])]
    for a in literals:
        items = a.elts if isinstance(a, ast.List | ast.Tuple) else [a]
        if not items or not all(
            isinstance(x, ast.Constant) and type(x.value) is int and x.value >= 0 for x in items
        ):
            return None
    dim = (
        dim_expr.value if isinstance(dim_expr, ast.Constant) and type(dim_expr.value) is int else 0
    )
    return recv, dim, f"{method}({', '.join(ast.unparse(a) for a in args)})"


def _step_piece(item: ast.Slice) -> tuple[int, int] | None:
    """`x[r::k]` with literal 0 <= r < k, k >= 2, to the end: (r, k). Together the k residues
    cover the dimension, whatever its size."""
    step, lower = item.step, item.lower
    if item.upper is not None or not isinstance(step, ast.Constant) or type(step.value) is not int:
        return None
    k = step.value
    if lower is None:
        r = 0
    elif isinstance(lower, ast.Constant) and type(lower.value) is int:
        r = lower.value
    else:
        return None
    return (r, k) if k >= 2 and 0 <= r < k else None


def _is_int(node: ast.expr, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def place_key(expr: ast.expr) -> str | None:
    """`self.meta['page_table']` as a stable key, when the expression is a plain access path."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = place_key(expr.value)
        return f"{base}.{expr.attr}" if base else None
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.slice, ast.Constant)
        and type(expr.slice.value) in (str, int)
    ):
        base = place_key(expr.value)
        return f"{base}[{expr.slice.value!r}]" if base else None
    return None


def _under(place: str, owner: str) -> bool:
    return len(place) > len(owner) and place.startswith(owner) and place[len(owner)] in ".["


def _covered(
    regions: Iterable[Region], dims: tuple[tuple[str | None, frozenset[str]], ...]
) -> bool:
    """Do the written slices chain from the start to the end of one dimension?"""
    by_dim: dict[tuple[int, str], list[Region]] = {}
    for r in regions:
        by_dim.setdefault((r.dim, r.kind), []).append(r)
    for (dim, kind), regs in by_dim.items():
        size = dims[dim][0] if -len(dims) <= dim < len(dims) and dims and not kind else None
        frontier: list[str | None] = [None]
        seen: set[str | None] = set()
        while frontier:
            pos = frontier.pop()
            if pos in seen:
                continue
            seen.add(pos)
            for r in regs:
                if r.lo == pos:
                    if r.hi is None or (size is not None and r.hi == size):
                        return True
                    frontier.append(r.hi)
    return False


def _alloc_dims(
    call: ast.Call, int_names: frozenset[str]
) -> tuple[tuple[str | None, frozenset[str]], ...]:
    args = shape_args(call)
    dims = []
    for a in args:
        if isinstance(a, ast.Starred):
            return ()
        b = _bound(a, int_names)
        dims.append(b if b is not None else (None, frozenset()))
    return tuple(dims)


# --- the evaluator ------------------------------------------------------------------------------


class _Eval:
    """Abstract execution of one CFG node for one buffer. Mutates `self.st`."""

    def __init__(self, ctx: Context, state: State, rec: _Recorder | None, node: Node) -> None:
        self.ctx = ctx
        self.st = state
        self.rec = rec
        self.node = node
        self.line = node.line
        self.conditional = 0  # >0 inside code that may not run: writes there prove nothing
        # The node raised part-way: a write it started may have run, so a later read is no
        # longer provably a read of unwritten memory (never `unsafe` through an exception path
        # alone, as in `try: buf.fill_(1); return 1` / `finally: return buf.sum()`).
        self.raised = False
        self.wrote_raising = False  # a write started in a node that raised
        self.capture = node.index in ctx.capture_nodes

    # --- recording -------------------------------------------------------------------------
    def _issue(self, severity: str, node: ast.AST, kind: str, what: str) -> None:
        if self.rec is not None:
            line = getattr(node, "lineno", self.line)
            if self.node.phase:
                what = f"[{self.node.phase}] {what}"
            self.rec.issue(severity, line, kind, what)

    def _event(self, kind: str) -> None:
        if self.rec is not None and self.node.phase:
            self.rec.outcome.phase_events.add((self.node.phase, kind))

    def _src(self, node: ast.AST) -> str:
        memo = self.ctx.src_memo
        hit = memo.get(id(node))
        if hit is not None:
            return hit[1]
        try:
            text = ast.unparse(node)[:100]
        except Exception:  # pragma: no cover - unparse of odd nodes
            text = type(node).__name__
        memo[id(node)] = (node, text)
        return text

    # --- state primitives -------------------------------------------------------------------
    def lookup(self, key: str) -> Ref | None:
        must = self.st.must_map()
        if key in must:
            return must[key]
        if key in self.st.may:
            return MAYBE
        if "[" in key and any(v in self.st.may for v in _summary_variants(key)):
            return MAYBE  # `d[3]` may be an entry stored as `d[bs] = ...`
        return None

    def _roots(self) -> set[str]:
        """Names through which the buffer may be reached: `h` for `h.buf`, `d` for `d["k"]`.
        Code that runs later and uses one of them (a lambda, a generator) may read it."""
        return {_root(k) for k in self.st.may}

    def owns(self, key: str) -> list[str]:
        memo = self.st.owned_memo
        owned = memo.get(key)
        if owned is None:
            owned = [p for p in self.st.may if _under(p, key)]
            if "[" in key:
                for v in _summary_variants(key):
                    owned += [p for p in self.st.may if _under(p, v)]
            memo[key] = owned
        return owned

    def forget_value(self, name: str) -> None:
        """`name` now holds another value (`k += 1`): slice texts that mention it mean something else."""
        st = self.st
        regions = frozenset(r for r in st.regions if name not in r.names)
        must = {
            k: (Ref(v.view, None) if v.region and name in v.region.names else v) for k, v in st.must
        }
        dims = tuple(d if name not in d[1] else (None, frozenset()) for d in st.dims)
        self.st = replace(st, regions=regions, dims=dims).with_must(must)

    def kill(self, key: str) -> None:
        """`key` is rebound: it and everything reached through it no longer name the buffer."""
        st = self.st

        def kept(k: str) -> bool:
            return k != key and not _under(k, key)

        must = {k: v for k, v in st.must if kept(k)}
        may = frozenset(k for k in st.may if kept(k))
        fresh = frozenset(k for k in st.fresh if kept(k))
        regions, dims = st.regions, st.dims
        if "." not in key and "[" not in key:
            # Slice bounds and shape dims that mention the name now mean something else.
            regions = frozenset(r for r in regions if key not in r.names)
            must = {
                k: (Ref(v.view, None) if v.region and key in v.region.names else v)
                for k, v in must.items()
            }
            dims = tuple(d if key not in d[1] else (None, frozenset()) for d in dims)
        self.st = replace(st, may=may, fresh=fresh, regions=regions, dims=dims).with_must(must)

    def demote(self, key: str) -> None:
        """`key` may have been rebound: keep it as a may-alias so reads through it still count."""
        must = {k: v for k, v in self.st.must if k != key and not _under(k, key)}
        fresh = frozenset(k for k in self.st.fresh if k != key and not _under(k, key))
        self.st = replace(self.st, fresh=fresh).with_must(must)

    def rebind_elsewhere(self, component: str, keep: str) -> None:
        """`obj.<attr> = v` (or `obj[<key>] = v`) through some name for `obj`: every other path
        that ends in the same component may name that object too, so it no longer provably
        holds what it held. Must-aliases become may-aliases; fresh facts are dropped."""

        def hit(k: str) -> bool:
            return component in k and k != keep and not _under(k, keep)

        must = {k: v for k, v in self.st.must if not hit(k)}
        fresh = frozenset(k for k in self.st.fresh if not hit(k))
        self.st = replace(self.st, fresh=fresh).with_must(must)

    def bind(self, key: str, ref: Ref, node: ast.AST) -> None:
        if self.conditional:
            self.st = replace(self.st, may=self.st.may | {key})
            return
        must = self.st.must_map()
        must[key] = ref
        self.st = replace(self.st, may=self.st.may | {key}).with_must(must)

    def escape(self, node: ast.AST, how: str) -> None:
        if not self.st.full:
            self.st = replace(
                self.st, escapes=self.st.escapes | {(getattr(node, "lineno", self.line), how)}
            )

    def lost(self, node: ast.AST, how: str) -> None:
        """The buffer reaches something we cannot follow: any later use there is a possible read."""
        if self.st.fresh:
            # Code we cannot see may now re-point or resize a tensor of a fresh path.
            self.st = replace(self.st, fresh=frozenset())
        if not self.st.full:
            self.escape(node, how)
            self._issue(UNPROVEN, node, "escape", how)
            self.st = replace(self.st, lost=True)
            if not self.conditional:
                # Whoever got it may also have written it: later reads are no longer provably
                # reads of unwritten memory (`unsafe`), only possibly so.
                self.st = replace(self.st, touched=True)

    def read(self, ref: Ref, node: ast.AST, definite: bool, how: str) -> None:
        st = self.st
        fresh = _fresh_path(node, st.fresh) if st.fresh else None
        if fresh is not None:
            self._event(VIEW_READ)
            if self.rec is not None:
                self._note_view(self.rec.outcome.view_reads, node, f"`{fresh}`: {how}")
            return
        self._event("read" if definite else "possible read")
        if self.capture and not st.full:
            self._issue(
                UNPROVEN,
                node,
                "capture",
                f"used inside CUDA-graph capture (kernels run at replay): {how}",
            )
            return
        if st.full:
            if self.rec is not None:
                self.rec.outcome.reads_after_write += 1
            return
        if ref.view is View.PART and ref.region is not None and ref.region in st.regions:
            return  # reads exactly a slice written on every path
        if ref.view is View.MAYBE:
            definite = False
        if definite and not st.touched:
            self._issue(UNSAFE, node, "read", f"read before any write: {how}")
        elif definite:
            self._issue(
                UNPROVEN, node, "read", f"read after only partial or possible writes: {how}"
            )
        else:
            self._issue(UNPROVEN, node, "possible-read", f"possible read: {how}")

    def write(self, ref: Ref, node: ast.AST, full: bool, region: Region | None, how: str) -> None:
        if full and not self.capture and not self.conditional:
            written = _written_place(node)
            if written is not None:
                self.st = replace(self.st, fresh=self.st.fresh | {written})
                if self.rec is not None:
                    self._note_view(self.rec.outcome.view_writes, node, f"`{written}`: {how}")
        if ref.view is View.MAYBE:
            # The buffer, a view of it or a copy (`.to()` of the same dtype, `.contiguous()`,
            # `.cpu()` on cpu hand back the buffer itself): the write proves nothing, but a later
            # read is no longer provably a read of unwritten memory.
            if ref.copy and not self.capture and not self.conditional and not self.st.touched:
                self.st = replace(self.st, touched=True)
            return
        if self.capture:
            if not self.st.full:
                self._issue(
                    UNPROVEN,
                    node,
                    "capture",
                    f"written inside CUDA-graph capture (runs at replay): {how}",
                )
            return
        if self.conditional:
            self.wrote_raising = self.raised
            return
        st = self.st
        self._event("write" if full and ref.view is not View.PART else "partial write")
        if ref.view is View.PART:
            region = ref.region if full else None
            full = False
        elif ref.view is View.FULL and not full:
            region = None
        if full:
            if self.rec is not None and not st.full:
                self.rec.note(self.rec.outcome.writes, getattr(node, "lineno", self.line), how)
            self.st = replace(st, full=True, touched=True)
            return
        if self.rec is not None and not st.full:
            self.rec.note(self.rec.outcome.partial_writes, getattr(node, "lineno", self.line), how)
        regions = st.regions | {region} if region is not None else st.regions
        covered = region is not None and _covered(regions, st.dims)
        if covered and self.rec is not None and not st.full:
            self.rec.note(
                self.rec.outcome.writes,
                getattr(node, "lineno", self.line),
                f"slices together cover the buffer: {how}",
            )
        self.st = replace(st, touched=True, regions=regions, full=st.full or covered)

    def _note_view(self, bucket: list[tuple[int, str]], node: ast.AST, text: str) -> None:
        assert self.rec is not None
        phase = f"[{self.node.phase}] " if self.node.phase else ""
        self.rec.note(bucket, getattr(node, "lineno", self.line), phase + text)

    def unknown_call(self, node: ast.AST, what: str | Callable[[], str]) -> None:
        """Code we cannot see runs: it can read the buffer if the buffer is reachable from it.
        `what` may be a function: its text is made only if an issue is recorded."""
        st = self.st
        if st.live and st.escaped and not st.full and self.rec is not None:
            line, how = min(st.escapes)
            self._issue(
                UNPROVEN,
                node,
                "unknown-call",
                f"{what if isinstance(what, str) else what()} may read it "
                f"(reachable since line {line}: {how})",
            )

    def held_code_runs(self, node: ast.AST, what: str) -> None:
        """Code the analysis saw defined here (a closure, lambda or generator function) may run:
        a built-in calls it, or a loop steps a generator. It reads the buffer if it holds it,
        through a captured, global or nonlocal name. Code handed in from outside is assumed not
        to (the rule's assumptions)."""
        st = self.st
        if (
            self.rec is not None
            and st.live
            and not st.full
            and not self._roots().isdisjoint(self.ctx.escape_on_bind)
        ):
            self._issue(UNPROVEN, node, "unknown-call", f"{what} may run code that holds it")

    def _iterated(self, e: ast.expr, how: str) -> None:
        if not api.iterates_without_code(
            e, lambda f: self.ctx.resolver.qualified(self.ctx.scope, f)
        ):
            self.held_code_runs(e, f"{how} `{self._src(e)[:60]}`")

    # --- allocation ---------------------------------------------------------------------------
    def allocate(self, node: ast.Call) -> Ref:
        st = self.st
        if st.live and not st.full:
            # A loop runs the allocation again while the previous buffer may still be in use.
            others = [k for k in st.may]
            if others or st.escaped:
                self._issue(
                    UNPROVEN, node, "reallocated",
                    "allocated again while the previous buffer from this line, not fully written, "
                    f"may still be reachable through {', '.join(sorted(others)) or 'an escape'}",
                )  # fmt: skip
        dims = _alloc_dims(node, self.ctx.int_names)
        # A literal zero-size dimension: no element exists, so none can be read unwritten.
        empty = any(text == "0" for text, _ in dims)
        if empty and self.rec is not None:
            self.rec.note(
                self.rec.outcome.writes, node.lineno, "a dimension is 0: the buffer has no elements"
            )
        self.st = replace(UNREACHED, live=True, dims=dims, full=empty, touched=empty)
        if self.ctx.frames_read:
            self.escape(node, "this module reads call frames: a callee may read any local")
        return SELF

    # --- expressions ------------------------------------------------------------------------
    def eval(self, e: ast.expr | None, as_base: bool = False) -> Ref | None:
        if e is None:
            return None
        if not self.st.live and not self._contains_alloc(e):
            return None
        method = getattr(self, f"_e_{type(e).__name__}", None)
        if method is not None:
            return (
                method(e, as_base)
                if type(e).__name__ in ("Name", "Attribute", "Subscript")
                else method(e)
            )
        # Anything else: evaluate children, reading any buffer they produce.
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                ref = self.eval(child)
                if ref is not None:
                    self.read(ref, child, definite=False, how=self._src(e))
        return None

    def _contains_alloc(self, e: ast.AST) -> bool:
        alloc = self.ctx.alloc
        return any(n is alloc for n in ast.walk(e))

    def _e_Constant(self, e: ast.Constant) -> Ref | None:
        return None

    def _e_Name(self, e: ast.Name, as_base: bool) -> Ref | None:
        ref = self.lookup(e.id)
        if ref is None and not as_base and self.owns(e.id):
            self._owner_used(e, e.id)
        return ref

    def _owner_used(self, e: ast.expr, key: str) -> None:
        places = ", ".join(sorted(self.owns(key)))
        self.read(
            MAYBE, e, definite=False, how=f"`{self._src(e)}` holds {places} and is used as a whole"
        )
        self.lost(e, f"`{self._src(e)}`, which holds the buffer, is used as a whole")

    def _tracked(self, e: ast.Attribute | ast.Subscript) -> tuple[str | None, Ref | None]:
        """The access path of `e`, and the buffer it names when it is a tracked place."""
        key = place_key(e)
        return key, (self.lookup(key) if key is not None else None)

    def _e_Attribute(self, e: ast.Attribute, as_base: bool) -> Ref | None:
        if e.attr in _FRAME_ATTRS and self.st.live:
            self.lost(e, f"`{self._src(e)}` reaches a frame's local variables")
        key, ref = self._tracked(e)
        if ref is not None:
            return ref
        base = self.eval(e.value, as_base=True)
        if base is not None:
            return self._buffer_attribute(base, e)
        base_key = place_key(e.value)
        if base_key is not None and self.owns(base_key):
            children = self.owns(base_key)
            if e.attr in _REFLECTIVE_ATTRS or any(p.startswith(base_key + "[") for p in children):
                # `obj.__dict__` reaches every attribute; the attributes of a dict that holds
                # the buffer are its methods: .get, .items, ...
                self._owner_used(e.value, base_key)
            elif key is not None and self.owns(key) and not as_base:
                self._owner_used(e, key)
        elif key is not None and not as_base and self.owns(key):
            self._owner_used(e, key)
        return None

    def _buffer_attribute(self, base: Ref, e: ast.Attribute) -> Ref | None:
        attr = e.attr
        if attr in api.METADATA_ATTRS or attr == "grad":
            return None
        if attr in api.FULL_VIEW_ATTRS:
            return self._derive(base, View.FULL)
        if attr in ("real", "imag"):
            return self._derive(base, View.PART)
        self.read(base, e, definite=False, how=f"attribute `.{attr}`")
        return None

    def _derive(self, base: Ref, view: View) -> Ref:
        if base.view is View.MAYBE:
            return base  # a view of a maybe-copy is still one
        if view is View.FULL:
            return Ref(View.FULL) if base.view in (View.SELF, View.FULL) else Ref(View.PART)
        return Ref(View.PART)

    def _e_Subscript(self, e: ast.Subscript, as_base: bool) -> Ref | None:
        key, ref = self._tracked(e)
        if ref is not None:
            return ref
        base = self.eval(e.value, as_base=True)
        index_ref = self.eval(e.slice)
        if index_ref is not None:
            self.read(
                index_ref, e.slice, definite=True, how=f"used as an index in `{self._src(e)}`"
            )
        if base is None:
            base_key = place_key(e.value)
            if base_key is not None and self.owns(base_key):
                if key is None or any(p.startswith(base_key + ".") for p in self.owns(base_key)):
                    self._owner_used(e.value, base_key)
                elif not as_base and self.owns(key):
                    self._owner_used(e, key)
            return None
        index = self._index(e, base, store=False)
        if index.kind == "all":
            return base
        if index.kind == "all-reshaped":
            return self._derive(base, View.FULL)
        if index.kind == "region":
            if base.view is View.SELF:
                return Ref(View.PART, index.region)
            return self._derive(base, View.PART)
        if index.kind == "basic":
            return self._derive(base, View.PART)
        if index.kind == "advanced":
            self.read(
                base, e, definite=True, how=f"gather `{self._src(e)}` copies the indexed elements"
            )
            return None
        self.read(
            base,
            e,
            definite=False,
            how=f"`{self._src(e)}` is a view or, with a tensor index, a gather",
        )
        return MAYBE

    def _e_Call(self, e: ast.Call) -> Ref | None:
        if e is self.ctx.alloc:
            for a in [*e.args, *(k.value for k in e.keywords)]:
                self.eval(a)  # shapes and `zeros_like(prev)`: metadata
            return self.allocate(e)
        func = e.func
        if isinstance(func, ast.Attribute):
            recv = self.eval(func.value, as_base=True)
            if recv is not None and func.attr in api.INPLACE_LAYOUT_METHODS:
                for _, a in self._args(e):
                    self._read_arg(a, f".{func.attr}", definite=True)
                if recv.view is View.SELF:
                    # Same storage, new layout: slices of it no longer name original regions,
                    # through any name for it (`y = x; x.t_()` changes y too).
                    for k, v in self.st.must:
                        if v.view is View.SELF:
                            self.demote(k)  # under a condition, only a may-alias remains
                            self.bind(k, Ref(View.FULL), e)
                return self._derive(recv, View.FULL)
            if recv is not None:
                return self._buffer_method(recv, func.attr, e)
            base_key = place_key(func.value)
            stored_callable = (
                base_key in self.ctx.private_roots and func.attr in self.ctx.self_callables
            )
            if base_key is not None and self.owns(base_key) and not stored_callable:
                self._owner_used(func.value, base_key)
        elif not isinstance(func, ast.Name):
            fref = self.eval(func)
            if fref is not None:
                self.read(fref, func, definite=False, how="called")
        qual = (
            self.ctx.resolver.qualified(self.ctx.scope, func)
            if isinstance(func, ast.Name | ast.Attribute)
            else None
        )
        if isinstance(func, ast.Name) and qual is None and self.lookup(func.id) is not None:
            self.read(SELF, func, definite=False, how="called")
        return self._call(e, qual)

    def _args(self, e: ast.Call) -> Iterator[tuple[int | str | None, ast.expr]]:
        for i, a in enumerate(e.args):
            yield (None if isinstance(a, ast.Starred) else i), a
        for k in e.keywords:
            yield k.arg, k.value

    def _call(self, e: ast.Call, qual: str | None) -> Ref | None:
        name = qual or self._src(e.func)
        if qual in api.FRAME_INTROSPECTION:
            if self.st.live:
                self.lost(e, f"`{name}` can reach every local variable")
            return None
        # By the resolved name; by the source text only for a callee that resolves to nothing
        # (`import other as my_kernels` must not borrow my_kernels' contract).
        contract = self.ctx.contracts.get(qual) if qual else self.ctx.contracts.get(name)
        if contract is not None and any(
            k.arg == "async_op"
            and not (isinstance(k.value, ast.Constant) and k.value.value is False)
            for k in e.keywords
        ):
            contract = None  # an asynchronous collective has not written anything yet
        if qual in api.FULL_WRITE_FUNCTIONS and e.args:
            # torch.nn.init.*_: fill the first argument in full, reading only its shape.
            target = self.eval(e.args[0])
            for _, a in list(self._args(e))[1:]:
                self._read_arg(a, name, definite=True)
            if target is not None:
                self.write(target, e, full=True, region=None, how=self._src(e)[:100])
            return target
        kernel = kernel_contract_for(qual, self.ctx.kernels)
        if (
            kernel is not None
            and not any(isinstance(a, ast.Starred) for a in e.args)
            and all(k.arg is not None for k in e.keywords)
            and (kernel.positional is None or len(e.args) <= kernel.positional)
        ):
            self._kernel_call(e, kernel, name)
            return None
        torch_method = (
            isinstance(e.func, ast.Attribute) and qual is None and _is_tensor_method(e.func.attr)
        )
        if (
            qual
            and qual.count(".") == 1  # `torch.narrow`, not `torch.nn.functional.unfold` (a copy)
            and qual.startswith("torch.")
            and qual.rsplit(".", 1)[-1] in _FUNCTIONAL_VIEWS
            and e.args
        ):
            first = self.eval(e.args[0])
            for _, a in list(self._args(e))[1:]:
                self._read_arg(a, name, definite=True)
            if first is not None:
                return self._buffer_method(first, qual.rsplit(".", 1)[-1], e, args_done=True)
            return None
        reader = bool(qual) and (api.is_known_reader(qual or "") or qual in api.READ_BUILTINS)
        result: Ref | None = None

        def written(arg: tuple[int | str | None, ast.expr]) -> bool:
            key = arg[0]
            return key == "out" or (
                contract is not None and key is not None and key in contract.writes
            )

        # The call reads its inputs before it writes its outputs, whatever order the source
        # gives them (`torch.add(out=x, input=x, other=y)` reads x).
        for key, a in sorted(self._args(e), key=written):
            if contract is not None and key is not None and key in contract.writes:
                ref = self.eval(a)
                if ref is not None:
                    if self.rec is not None and not self.st.full:
                        self.rec.note(
                            self.rec.outcome.contracts,
                            e.lineno,
                            f"{contract.function} writes argument {key!r} in full ({contract.source})",
                        )
                    self.write(
                        ref,
                        a,
                        full=True,
                        region=None,
                        how=f"{self._src(e)[:80]} (contract: {contract.source})",
                    )
                continue
            if key == "out" and (qual in api.OUT_FUNCTIONS or _torch_op_out(qual, reader)):
                ref = self.eval(a)
                if ref is not None:
                    # out= is resized to the result's shape: a smaller result leaves the rest
                    # of the storage unwritten, and `as_strided`, `resize_` or a storage view can
                    # reach it later. So it counts as written, never as written in full.
                    self.write(
                        ref,
                        a,
                        full=False,
                        region=None,
                        how=f"{self._src(e)[:80]} (out= may shrink it: storage beyond the result keeps its values)",
                    )
                continue
            if qual in api.METADATA_FUNCTIONS and key in (0, "input", "obj"):
                self.eval(a)  # only the shape, dtype, ... of the first argument are looked at
                continue
            if reader or torch_method or contract is not None:
                self._read_arg(a, name, definite=True)
            else:
                ref = self._eval_value(a)
                if ref is not None:
                    self.read(
                        ref,
                        a,
                        definite=False,
                        how=f"passed to `{name}`, which is not known to only write it",
                    )
                    self.lost(a, f"passed to `{name}`")
        if qual in api.CALLBACK_BUILTINS:
            self.held_code_runs(e, f"`{name}`, which calls key functions and steps iterators,")
        elif not (
            reader
            or torch_method
            or qual in api.METADATA_FUNCTIONS
            or qual in api.PURE_BUILTINS
            or contract is not None
        ):
            self.unknown_call(e, f"call to `{name}`")
        return result

    def _kernel_call(self, e: ast.Call, kernel: KernelContract, name: str) -> None:
        bound: dict[str, ast.expr] = {}
        for i, a in enumerate(e.args):
            bound[kernel.params[i] if i < len(kernel.params) else f"#{i}"] = a
        for k in e.keywords:
            assert k.arg is not None
            bound[k.arg] = k.value
        present = {
            p for p, v in bound.items() if not (isinstance(v, ast.Constant) and v.value is None)
        }
        unless = dict(kernel.unread_unless)
        rows = dict(kernel.row_reads)
        partial = {p for p, by in kernel.partial_when if present & set(by)}
        # The kernel reads its inputs before it writes its outputs, whatever the source order.
        for p, a in sorted(bound.items(), key=lambda pa: pa[0] in kernel.writes):
            if p in kernel.ignored:
                self.eval(a)
                continue
            if p in kernel.writes:
                ref = self.eval(a)
                if ref is not None:
                    by = dict(kernel.partial_when).get(p, ())
                    self.write(
                        ref,
                        a,
                        full=p not in partial,
                        region=None,
                        how=(
                            f"`{p}=` of {kernel.name}, written only in part when "
                            f"{' or '.join(b for b in by if b in present)} is passed "
                            f"(kernel contract: {kernel.source})"
                            if p in partial
                            else f"`{p}=` of {kernel.name} (kernel contract: {kernel.source})"
                        ),
                    )
                continue
            if p in unless and not present & set(unless[p]):
                self.eval(a)  # not read: the contract says so unless new k/v are passed
                continue
            ref = self._eval_value(a)
            if ref is None:
                continue
            if self.rec is not None:
                self.rec.outcome.kernel_args.add((id(e), p))
            if p in rows:
                bound_by = rows[p]
                if self.rec is not None:
                    self.rec.outcome.couplings.add((id(e), bound_by))
                by = self._src(bound[bound_by]) if bound_by in bound else "(not passed)"
                coupled = f"`{p}` rows are read up to the values of `{bound_by}={by}`: coupled buffers, safe only together"
                if self.rec is not None and not self.st.full:
                    self.rec.note(self.rec.outcome.coupled, e.lineno, coupled)
                self.read(ref, a, definite=True, how=f"{kernel.name}: {coupled}")
            else:
                self.read(
                    ref,
                    a,
                    definite=True,
                    how=f"`{p}` of {kernel.name} (read in full: kernel contract)",
                )

    def _read_arg(self, a: ast.expr, name: str, definite: bool) -> None:
        items = a.elts if isinstance(a, ast.List | ast.Tuple) else [a]
        for item in items:
            value = item.value if isinstance(item, ast.Starred) else item
            ref = self.eval(value)
            if ref is not None:
                self.read(ref, value, definite=definite, how=f"argument of `{name}`")

    def _eval_value(self, a: ast.expr) -> Ref | None:
        if isinstance(a, ast.Starred):
            ref = self.eval(a.value)
            return MAYBE if ref is not None else None
        return self.eval(a)

    def _buffer_method(self, recv: Ref, m: str, e: ast.Call, args_done: bool = False) -> Ref | None:
        how = self._src(e)[:100]
        if not args_done:
            for _, a in self._args(e):
                self._read_arg(a, f".{m}", definite=True)
        if m in api.METADATA_METHODS:
            # `x.requires_grad_()` hands back x itself: the result is another name for it.
            return recv if m in api.RETURNS_SELF_METHODS else None
        if m in api.FULL_WRITE_METHODS:
            self.write(recv, e, full=True, region=None, how=how)
            return recv
        if m in api.PARTIAL_WRITE_METHODS:
            self.write(recv, e, full=False, region=None, how=how)
            return recv
        if m in api.FULL_VIEW_METHODS:
            return self._derive(recv, View.FULL)
        if m in api.PARTIAL_VIEW_METHODS:
            return self._derive(recv, View.PART)
        if (
            m in ("reshape", "flatten", "ravel", "reshape_as", "contiguous")
            and recv.view is View.SELF
            and self.ctx.contiguous
        ):
            return recv if m == "contiguous" else Ref(View.FULL)
        if m in ("expand", "expand_as", "broadcast_to"):
            return MAYBE  # writes through a broadcast view fail; reads still count
        if m in api.MAYBE_COPY_METHODS:
            self.read(recv, e, definite=False, how=f"`{how}` may copy the data")
            return MAYBE_COPY
        if m in api.SPLIT_METHODS:
            self.read(
                recv, e, definite=False, how=f"`{how}` returns views the analysis does not follow"
            )
            self.lost(e, f"split into views by `{how}`")
            return None
        if m in api.RESIZE_METHODS:
            # Growing the storage adds elements nobody wrote, whatever was written before.
            self._issue(UNPROVEN, e, "resize", f"`{how}` changes its size or storage")
            self.lost(e, f"resized by `{how}`")
            self.st = replace(self.st, full=False, regions=frozenset())
            return recv
        if m in api.READ_MODIFY_WRITE_METHODS:
            self.read(recv, e, definite=True, how=f"`{how}` reads before it writes")
            return recv
        if m in api.READ_METHODS:
            self.read(recv, e, definite=True, how=f"`{how}`")
            return None
        if m in ("data_ptr", "untyped_storage", "storage", "numpy", "__dlpack__", "share_memory_"):
            self.read(recv, e, definite=False, how=f"`{how}` exposes the memory")
            self.lost(e, f"memory exposed by `{how}`")
            return None
        self.read(recv, e, definite=False, how=f"`{how}` (method not known to the analysis)")
        self.lost(e, f"`{how}`")
        return None

    def _e_BinOp(self, e: ast.BinOp) -> Ref | None:
        for side in (e.left, e.right):
            ref = self.eval(side)
            if ref is not None:
                self.read(ref, side, definite=True, how=f"operand of `{self._src(e)}`")
        return None

    def _e_UnaryOp(self, e: ast.UnaryOp) -> Ref | None:
        ref = self.eval(e.operand)
        if ref is not None:
            self.read(ref, e, definite=True, how=f"operand of `{self._src(e)}`")
        return None

    def _e_Compare(self, e: ast.Compare) -> Ref | None:
        identity = all(isinstance(op, ast.Is | ast.IsNot) for op in e.ops)
        for op, right in zip(e.ops, e.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                self._iterated(right, "searching")
        for i, side in enumerate((e.left, *e.comparators)):
            # `a < b < c` stops after `a < b` when that is false: c may never be evaluated.
            self.conditional += i >= 2
            # `meta is None` neither reads nor hands on the object that holds the buffer.
            ref = self.eval(side, as_base=identity)
            if ref is not None and not identity:
                self.read(ref, side, definite=True, how=f"compared in `{self._src(e)}`")
            self.conditional -= i >= 2
        return None

    def _e_BoolOp(self, e: ast.BoolOp) -> Ref | None:
        result: Ref | None = None
        for i, value in enumerate(e.values):
            if i:
                self.conditional += 1
            ref = self.eval(value)
            if ref is not None:
                self.read(ref, value, definite=True, how=f"truth value in `{self._src(e)}`")
                result = MAYBE
            if i:
                self.conditional -= 1
        return result

    def _e_IfExp(self, e: ast.IfExp) -> Ref | None:
        test = self.eval(e.test)
        if test is not None:
            self.read(test, e.test, definite=True, how="truth value")
        self.conditional += 1
        a, b = self.eval(e.body), self.eval(e.orelse)
        self.conditional -= 1
        return a if a == b else (MAYBE if (a or b) else None)

    def _e_NamedExpr(self, e: ast.NamedExpr) -> Ref | None:
        ref = self.eval(e.value)
        self.assign(e.target, ref, e)
        return ref

    def _container(self, e: ast.expr, elements: Iterable[ast.expr | None]) -> Ref | None:
        for el in elements:
            if el is None:
                continue
            ref = self._eval_value(el)
            if ref is not None:
                self.lost(el, f"stored in a container `{self._src(e)[:60]}`")
        return None

    def _e_Tuple(self, e: ast.Tuple) -> Ref | None:
        return self._container(e, e.elts)

    def _e_List(self, e: ast.List) -> Ref | None:
        return self._container(e, e.elts)

    def _e_Set(self, e: ast.Set) -> Ref | None:
        return self._container(e, e.elts)

    def _e_Dict(self, e: ast.Dict) -> Ref | None:
        return self._container(e, [*e.keys, *e.values])

    def _comprehension(
        self, e: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, parts: list[ast.expr]
    ) -> Ref | None:
        if isinstance(e, ast.GeneratorExp) and not self._contains_alloc(e):
            # Runs later, whenever it is consumed: like a closure over the names it uses. (An
            # allocation inside it is private to each step until the step yields it: its element
            # is analysed as a comprehension's, whenever that runs.)
            used = {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
            first = self.eval(e.generators[0].iter)
            if first is not None:
                self.read(first, e, definite=False, how="iterated by a generator expression")
            if used & self._roots():
                self.lost(e, "used inside a generator expression that runs later")
            return None
        saved = {k: self.lookup(k) for k in _comp_targets(e)}
        for k in saved:
            self.kill(k)
        for i, gen in enumerate(e.generators):
            if i:
                self.conditional += 1
            self._iterated(gen.iter, "iterating")
            ref = self.eval(gen.iter)
            if ref is not None:
                self.read(ref, gen.iter, definite=False, how="iterated in a comprehension")
            if i:
                self.conditional -= 1
        outer = self.conditional
        self.conditional += 1
        for gen in e.generators:
            for cond in gen.ifs:
                ref = self.eval(cond)
                if ref is not None:
                    self.read(ref, cond, definite=True, how="truth value in a comprehension")
        for part in parts:
            inner = self.conditional
            if self._contains_alloc(part):
                # A buffer made by the element exists only when the element runs: what the
                # element does to it before yielding it happens on every path it exists on.
                self.conditional = outer
            ref = self.eval(part)
            self.conditional = inner
            if ref is not None:
                self.lost(part, "collected by a comprehension")
        self.conditional -= 1
        for k, ref in saved.items():
            self.kill(k)
            if ref is not None:
                self.bind(k, ref, e)
        return None

    def _e_ListComp(self, e: ast.ListComp) -> Ref | None:
        return self._comprehension(e, [e.elt])

    def _e_SetComp(self, e: ast.SetComp) -> Ref | None:
        return self._comprehension(e, [e.elt])

    def _e_GeneratorExp(self, e: ast.GeneratorExp) -> Ref | None:
        return self._comprehension(e, [e.elt])

    def _e_DictComp(self, e: ast.DictComp) -> Ref | None:
        return self._comprehension(e, [e.key, e.value])

    def _e_Lambda(self, e: ast.Lambda) -> Ref | None:
        for d in [*e.args.defaults, *e.args.kw_defaults]:
            if d is not None and self.eval(d) is not None:
                self.lost(d, "captured as a lambda default")
        used = {n.id for n in ast.walk(e.body) if isinstance(n, ast.Name)}
        if used & self._roots():
            self.lost(e, "captured by a lambda")
        return None

    def _e_Starred(self, e: ast.Starred) -> Ref | None:
        self._iterated(e.value, "unpacking")
        ref = self.eval(e.value)
        if ref is not None:
            self.read(ref, e, definite=False, how="unpacked with *")
        return None

    def _e_JoinedStr(self, e: ast.JoinedStr) -> Ref | None:
        for v in e.values:
            if isinstance(v, ast.FormattedValue):
                ref = self.eval(v.value)
                if ref is not None:
                    self.read(ref, v.value, definite=True, how="formatted into a string")
                self.eval(v.format_spec)
        return None

    def _e_Await(self, e: ast.Await) -> Ref | None:
        ref = self.eval(e.value)
        if ref is not None:
            self.read(ref, e, definite=False, how="awaited")
        self.unknown_call(e, "`await` (other tasks run)")
        return None

    def _e_Yield(self, e: ast.Yield | ast.YieldFrom) -> Ref | None:
        ref = self.eval(e.value)
        if ref is not None:
            self.lost(e, "yielded to the caller")
        self.unknown_call(e, "`yield` (the caller runs)")
        return MAYBE if ref is not None else None

    _e_YieldFrom = _e_Yield

    def _e_Slice(self, e: ast.Slice) -> Ref | None:
        for part in (e.lower, e.upper, e.step):
            ref = self.eval(part)
            if ref is not None:
                self.read(ref, part, definite=True, how="used as a slice bound")  # type: ignore[arg-type]
        return None

    # --- assignment targets -----------------------------------------------------------------
    def assign(self, target: ast.expr, ref: Ref | None, stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if self.conditional:
                # `c and (x := y)`: x may keep its old value, or not. Slice bounds that name it
                # mean something else either way.
                self.forget_value(target.id)
                self.demote(target.id)
            else:
                self.kill(target.id)
            if ref is not None:
                self.bind(target.id, ref, stmt)
                if target.id in self.ctx.escape_on_bind:
                    self.escape(target, f"bound to `{target.id}`, visible outside this function")
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, MAYBE if ref is not None else None, stmt)
            return
        if isinstance(target, ast.Tuple | ast.List):
            self.held_code_runs(target, "unpacking into `" + self._src(target)[:60] + "`")
            if ref is not None:
                self.read(ref, target, definite=False, how="unpacked into several names")
                self.lost(target, "unpacked into views the analysis does not follow")
            for t in target.elts:
                self.assign(t, None, stmt)
            return
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value, as_base=True)
            index_ref = self.eval(target.slice)
            if index_ref is not None:
                self.read(index_ref, target.slice, definite=True, how="used as an index")
            if base is not None:
                if ref is not None:
                    self.read(ref, target, definite=True, how="copied into itself")
                self._store_into_buffer(base, target, stmt)
                return
            if ref is not None and not (
                isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
            ):
                # `y[0] = x` copies x's data when y is a tensor, and stores x when y is a list.
                self.read(
                    ref,
                    target,
                    definite=False,
                    how=f"stored into `{self._src(target)}` (a copy if that is a tensor)",
                )
                self.lost(target, f"stored into `{self._src(target)}`")
                ref = MAYBE
        elif isinstance(target, ast.Attribute):
            base = self.eval(target.value, as_base=True)
            if ref is not None and target.attr == "data":
                self.lost(target, f"`{self._src(target)}` makes another tensor share its storage")
            if base is not None:
                if target.attr not in ("requires_grad", "grad"):
                    self.read(
                        base, target, definite=False, how=f"attribute `.{target.attr}` assigned"
                    )
                    self.lost(target, f"attribute `.{target.attr}` assigned")
                elif ref is not None:  # `x.grad = x.view(4)`: read back through `.grad`
                    self.lost(target, f"stored in `{self._src(target)}`")
                return
        key = place_key(target)
        if key is not None:
            owner = (
                place_key(target.value)
                if isinstance(target, ast.Attribute | ast.Subscript)
                else None
            )
            self._store_through(target, key)
            self.kill(key)
            if ref is not None:
                self.bind(key, ref, stmt)
                if _root(key) not in self.ctx.private_roots:
                    self.escape(target, f"stored in `{self._src(target)}`")
            del owner
            return
        # A computed key or an object we cannot name: the store may replace a tracked place.
        owner_key = (
            place_key(target.value) if isinstance(target, ast.Subscript | ast.Attribute) else None
        )
        if owner_key is not None:
            for place in self.owns(owner_key):
                self.demote(place)
        self._store_through(target, None)
        if ref is not None:
            self.lost(target, f"stored in `{self._src(target)}`")

    def _store_through(self, target: ast.expr, key: str | None) -> None:
        """Another name may denote the object stored into: demote what it held (see
        rebind_elsewhere). A computed key may equal any key."""
        if isinstance(target, ast.Attribute):
            self.rebind_elsewhere(f".{target.attr}", key or "")
        elif isinstance(target, ast.Subscript):
            sub = target.slice
            if isinstance(sub, ast.Constant) and type(sub.value) in (str, int):
                self.rebind_elsewhere(f"[{sub.value!r}]", key or "")
            if isinstance(target.value, ast.Attribute) and target.value.attr == "__dict__":
                # `m2.__dict__["a"] = v` re-points `m.a` of every object m2 may be.
                name = sub.value if isinstance(sub, ast.Constant) else None
                self.rebind_elsewhere(f".{name}" if isinstance(name, str) else ".", "")
            self.rebind_elsewhere("[*]", key or "")
            if key is None:
                self.rebind_elsewhere("[", "")

    # --- objects that hold views: metadata records, dicts keyed by batch size ---------------
    def transfer(self, target: ast.expr, value: ast.expr, stmt: ast.AST) -> bool:
        """`t = <place>` / `t = Record(f=view, ...)` / `t = d[bs]` / `d[bs] = <place>`, where the
        value is an object holding the buffer rather than the buffer: its paths are carried over
        to the new name instead of counting as a use of the whole object. False: not such a
        statement, evaluate it as usual."""
        tkey = place_key(target)
        if tkey is None:
            return self._summary_store(target, value, stmt)
        if isinstance(value, ast.Call):
            return self._record(target, tkey, value, stmt)
        if isinstance(value, ast.Subscript) and not _constant_index(value.slice):
            return self._summary_load(target, tkey, value, stmt)
        vkey = place_key(value)
        if vkey is None or self.lookup(vkey) is not None or not self._holds(vkey):
            return False
        carried = self._carry(vkey)
        self._store_target(target, tkey)
        self._put(tkey, carried, stmt, target)
        return True

    def _holds(self, key: str) -> bool:
        return bool(self.owns(key)) or any(_under(f, key) for f in self.st.fresh)

    def _carry(self, vkey: str) -> list[tuple[str, Ref | None, bool]]:
        """(suffix, must-ref or None for may-only, fresh) of every path under `vkey`."""
        must = self.st.must_map()
        out: list[tuple[str, Ref | None, bool]] = []
        variants = _summary_variants(vkey) if "[" in vkey else []
        for p in sorted(self.st.may):
            if _under(p, vkey):
                out.append((p[len(vkey) :], must.get(p), p in self.st.fresh))
            for v in variants:  # an entry stored under a computed key: may-only
                if _under(p, v):
                    out.append((p[len(v) :], None, False))
        for f in sorted(self.st.fresh):
            if _under(f, vkey) and f not in self.st.may:
                out.append((f[len(vkey) :], None, True))
        return out

    def _store_target(self, target: ast.expr, tkey: str) -> None:
        if isinstance(target, ast.Attribute | ast.Subscript):
            self.eval(target.value, as_base=True)
            self._store_through(target, tkey)
        self.kill(tkey)

    def _put(
        self,
        tkey: str,
        carried: list[tuple[str, Ref | None, bool]],
        stmt: ast.AST,
        target: ast.expr,
        weak: bool = False,
    ) -> None:
        if not carried:
            return
        for suffix, ref, fresh in carried:
            place = tkey + suffix
            if ref is not None and not weak:
                self.bind(place, ref, stmt)
            else:
                self.st = replace(self.st, may=self.st.may | {place})
            if fresh and not weak and not self.conditional:
                self.st = replace(self.st, fresh=self.st.fresh | {place})
        if _root(tkey) != tkey and _root(tkey) not in self.ctx.private_roots:
            self.escape(target, f"stored in `{self._src(target)}`")  # another object's slot
        if tkey in self.ctx.escape_on_bind:
            self.escape(target, f"bound to `{tkey}`, visible outside this function")

    def _record(self, target: ast.expr, tkey: str, call: ast.Call, stmt: ast.AST) -> bool:
        """`t = Meta(page_table=view, ...)` for a plain dataclass of this module: its generated
        __init__ only stores each argument in the field of that name."""
        func = call.func
        if not isinstance(func, ast.Name) or func.id not in self.ctx.records:
            return False
        if self._locally_bound(func.id):
            return False
        fields = self.ctx.records[func.id]
        if len(call.args) > len(fields) or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if any(k.arg is None or k.arg not in fields for k in call.keywords):
            return False
        pairs = [*zip(fields, call.args, strict=False)]
        pairs += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
        carried: list[tuple[str, Ref | None, bool]] = []
        for name, arg in pairs:
            akey = place_key(arg)
            holder = akey is not None and self.lookup(akey) is None and self._holds(akey)
            ref = None if holder else self._eval_value(arg)
            fresh = akey is not None and akey in self.st.fresh
            if ref is not None or fresh:
                carried.append((f".{name}", ref, fresh))
            if akey is not None:
                carried += [(f".{name}{sfx}", r, f) for sfx, r, f in self._carry(akey)]
        self._store_target(target, tkey)
        self._put(tkey, carried, stmt, target)
        return True

    def _locally_bound(self, name: str) -> bool:
        scope: Scope | None = self.ctx.scope
        while scope is not None and scope.parent is not None:
            if name in scope.bindings:
                return True
            scope = scope.parent
        return False

    def _summary_load(
        self, target: ast.expr, tkey: str, value: ast.Subscript, stmt: ast.AST
    ) -> bool:
        """`t = d[bs]` with a computed key: `t` may be any entry of `d`, so every path under an
        entry becomes a may-path of `t`: reads through it count, writes prove nothing."""
        dkey = place_key(value.value)
        if dkey is None or self.lookup(dkey) is not None or not self.owns(dkey):
            return False
        carried: list[tuple[str, Ref | None, bool]] = []
        for p in sorted(set(self.owns(dkey))):
            after = _strip_first_key(p[len(dkey) :]) if _under(p, dkey) else None
            if after is None:
                return False
            carried.append((after, None, False))
        index_ref = self.eval(value.slice)
        if index_ref is not None:
            self.read(index_ref, value.slice, definite=True, how="used as a key")
        self._store_target(target, tkey)
        self._put(tkey, carried, stmt, target, weak=True)
        return True

    def _summary_store(self, target: ast.expr, value: ast.expr, stmt: ast.AST) -> bool:
        """`d[bs] = <object holding the buffer>` with a computed key: recorded as the entry
        `d[*]`, which every later lookup of `d` may return."""
        if not isinstance(target, ast.Subscript) or _constant_index(target.slice):
            return False
        dkey = place_key(target.value)
        vkey = place_key(value)
        if dkey is None or vkey is None or self.lookup(dkey) is not None:
            return False
        ref = self.lookup(vkey)
        if ref is None and not self._holds(vkey):
            return False
        carried = [(suffix, None, False) for suffix, _, _ in self._carry(vkey)]
        if ref is not None:
            carried.append(("", None, False))
            # If `d` is a tensor after all, the store copies the buffer's data.
            self.read(ref, target, definite=False, how=f"stored into `{self._src(target)}`")
        index_ref = self.eval(target.slice)
        if index_ref is not None:
            self.read(index_ref, target.slice, definite=True, how="used as a key")
        for place in self.owns(dkey):
            self.demote(place)
        self._store_through(target, None)
        self._put(f"{dkey}[*]", carried, stmt, target, weak=True)
        return True

    def _index(self, e: ast.Subscript, base: Ref, store: bool) -> _Index:
        """How `e` indexes its base. On the buffer itself, a bound that is its own size
        (`x[: x.shape[0]]`) is the end, and a store through a bool mask or its complement
        (`x[m] = a`, `x[~m] = b`) is one of the two pieces of the mask's partition (a load
        through a mask is a gather: a copy, never a piece)."""
        index = e.slice
        if base.view is View.SELF:
            key = place_key(e.value)
            if store:
                mask = _mask_region(index, self.ctx.mask_names)
                if mask is not None:
                    return _Index("region", mask)
            if key is not None:
                index = _own_bounds(
                    index, key, lambda f: self.ctx.resolver.qualified(self.ctx.scope, f)
                )
        return _classify_index(index, self.ctx.int_names)

    def _store_into_buffer(self, base: Ref, target: ast.Subscript, stmt: ast.AST) -> None:
        index = self._index(target, base, store=True)
        how = self._src(stmt)[:100] if isinstance(stmt, ast.stmt) else self._src(target)
        if isinstance(stmt, ast.AugAssign):
            return
        if index.kind in ("all", "all-reshaped"):
            self.write(base, target, full=True, region=None, how=how)
        elif index.kind == "region" and base.view is View.SELF:
            self.write(base, target, full=False, region=index.region, how=how)
        elif index.kind == "region":
            self.write(base, target, full=False, region=None, how=how)
        else:
            self.write(base, target, full=False, region=None, how=how)

    # --- statements --------------------------------------------------------------------------
    def run(self) -> State:
        node = self.node
        a = node.ast_node
        kind = node.kind
        if kind is Kind.EXIT:
            st = self.st
            if self.ctx.check_exit and st.live and st.escaped and not st.full:
                line, how = min(st.escapes)
                self._issue(
                    UNPROVEN,
                    ast.Pass(lineno=line),
                    "escape",
                    f"not fully written before the function returns, and {how} (line {line})",
                )
            return self.st
        if kind in (Kind.ENTRY, Kind.RAISE, Kind.JOIN) or a is None:
            return self.st
        if kind is Kind.CALL:
            self.unknown_call(a, lambda: f"`{self._src(a)[:60]}` (context manager)")
            if node.label == "__exit__ (exception)" and self.st.live:
                # The path where an unknown __exit__ swallows an exception is kept for `safe`,
                # but it is too speculative to be evidence of an `unsafe` read.
                self.st = replace(self.st, touched=True)
            return self.st
        if kind is Kind.BIND:
            if node.iterates:
                self.held_code_runs(a, "the `for` loop's next step")
            self._bind_target(a)
            return self.st
        if kind is Kind.EXPR:
            if isinstance(a, ast.pattern):
                for sub in ast.walk(a):
                    if isinstance(sub, ast.MatchValue):
                        self._read_value(sub.value, "compared by `case`")
                    elif isinstance(sub, ast.MatchClass):
                        self.eval(sub.cls)
                return self.st
            assert isinstance(a, ast.expr)
            ref = self.eval(a)
            if ref is not None:
                self.read(
                    ref,
                    a,
                    definite=node.label in ("if", "while", "guard"),
                    how=f"used by `{node.label}`",
                )
                if node.label == "match":
                    self.lost(a, "matched by `match`, whose patterns may bind parts of it")
            return self.st
        assert isinstance(a, ast.stmt)
        self._stmt(a)
        return self.st

    def _read_value(self, e: ast.expr, how: str) -> None:
        ref = self.eval(e)
        if ref is not None:
            self.read(ref, e, definite=True, how=how)

    def _bind_target(self, a: ast.AST) -> None:
        if isinstance(a, ast.ExceptHandler):
            if a.name:
                self.kill(a.name)
        elif isinstance(a, ast.pattern):
            for sub in ast.walk(a):
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    self.kill(name)
        elif isinstance(a, ast.expr):
            self.assign(a, None, a)

    def _stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            self._assign_stmt(s)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None and not self.transfer(s.target, s.value, s):
                ref = self.eval(s.value)
                self.assign(s.target, ref, s)
        elif (
            isinstance(s, ast.AugAssign)
            and isinstance(s.target, ast.Name)
            and self.lookup(s.target.id) is None
        ):
            # `k += 1` rebinds k (an int) or mutates it in place (a tensor): either way it is a new value.
            ref = self.eval(s.value)
            if ref is not None:
                self.read(ref, s.value, definite=True, how=f"operand of `{self._src(s)}`")
            self.kill(s.target.id)
        elif isinstance(s, ast.AugAssign):
            target_ref = (
                self.eval(s.target)
                if not isinstance(s.target, ast.Name)
                else self.lookup(s.target.id)
            )
            if isinstance(s.target, ast.Subscript):
                pass  # evaluated above as a load of the slice: a read of that region
            ref = self.eval(s.value)
            if target_ref is not None:
                self.read(
                    target_ref, s, definite=True, how=f"`{self._src(s)}` reads before it writes"
                )
            if ref is not None:
                self.read(ref, s.value, definite=True, how=f"operand of `{self._src(s)}`")
        elif isinstance(s, ast.Expr):
            self.eval(s.value)
        elif isinstance(s, ast.Return):
            ref = self.eval(s.value)
            if ref is not None:
                self.escape(s, "returned to the caller")
        elif isinstance(s, ast.Raise):
            for part in (s.exc, s.cause):
                if self.eval(part) is not None:
                    self.lost(s, "raised with an exception")
        elif isinstance(s, ast.Assert):
            # `python -O` drops asserts: their writes may never happen, their reads may.
            self.conditional += 1
            self._read_value(s.test, "asserted")
            self.conditional -= 1
            self.conditional += 1
            self.eval(s.msg)
            self.conditional -= 1
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                key = place_key(t)
                if key is not None:
                    self.kill(key)
                elif isinstance(t, ast.Subscript | ast.Attribute):
                    owner = place_key(t.value)
                    if owner is not None:
                        for place in self.owns(owner):
                            self.demote(place)
        elif isinstance(s, ast.Import | ast.ImportFrom):
            for alias in s.names:
                self.kill((alias.asname or alias.name).split(".")[0])
            self.unknown_call(s, "an import (module code runs)")
        elif isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._definition(s)
        # Pass, Global, Nonlocal, Break, Continue: no effect on data.

    def _assign_stmt(self, s: ast.Assign) -> None:
        value = s.value
        if self._unpack_pieces(s):
            return
        if (
            len(s.targets) == 1
            and isinstance(s.targets[0], ast.Tuple | ast.List)
            and isinstance(value, ast.Tuple | ast.List)
            and len(s.targets[0].elts) == len(value.elts)
            and not any(isinstance(x, ast.Starred) for x in [*s.targets[0].elts, *value.elts])
        ):
            refs = [self.eval(v) for v in value.elts]
            for t, ref in zip(s.targets[0].elts, refs, strict=True):
                self.assign(t, ref, s)
            return
        if (
            len(s.targets) == 1
            and isinstance(value, ast.Dict)
            and place_key(s.targets[0]) is not None
            and all(isinstance(k, ast.Constant) and type(k.value) in (str, int) for k in value.keys)
        ):
            key = place_key(s.targets[0])
            assert key is not None
            values = [
                (k.value, self._eval_value(v))
                for k, v in zip(value.keys, value.values, strict=True)
                if isinstance(k, ast.Constant)
            ]
            entries = dict(values).items()  # `{"a": x, "a": y}`: the last value wins
            self.assign(s.targets[0], None, s)
            for k, ref in entries:
                if ref is not None:
                    place = f"{key}[{k!r}]"
                    self.bind(place, ref, s)
                    if _root(place) not in self.ctx.private_roots:
                        self.escape(s, f"stored in `{place}`")
            return
        if len(s.targets) == 1 and self.transfer(s.targets[0], value, s):
            return
        ref = self.eval(value)
        key = place_key(value)
        for t in s.targets:
            self.assign(t, ref, s)
            tkey = place_key(t)
            if (
                key is not None
                and tkey is not None
                and key in self.st.fresh
                and not self.conditional
            ):
                self.st = replace(self.st, fresh=self.st.fresh | {tkey})

    def _unpack_pieces(self, s: ast.Assign) -> bool:
        """`a, b = x.chunk(2)` (`split`, `unbind`, `torch.chunk(x, 2)`, ...) with integer
        literal arguments: the unpacking succeeds only if every piece gets a name, and the pieces
        partition one dimension of x. Each name is a view of its piece, chained like slices."""
        if len(s.targets) != 1 or not isinstance(s.targets[0], ast.Tuple | ast.List):
            return False
        names = [t for t in s.targets[0].elts if isinstance(t, ast.Name)]
        if len(names) != len(s.targets[0].elts) or len({t.id for t in names}) != len(names):
            return False
        split = _split_call(s.value, lambda f: self.ctx.resolver.qualified(self.ctx.scope, f))
        if split is None:
            return False
        recv, dim, tag = split
        if self.lookup(place_key(recv) or "") is not SELF or any(
            t.id == place_key(recv) for t in names
        ):
            return False
        self.eval(recv, as_base=True)
        last = len(names) - 1
        for i, t in enumerate(names):
            region = Region(
                dim,
                None if i == 0 else f"#{i}",
                None if i == last else f"#{i + 1}",
                frozenset(),
                f"{tag} into {len(names)}",
            )
            self.assign(t, Ref(View.PART, region), s)
        return True

    def _definition(self, s: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for dec in s.decorator_list:
            if self.eval(dec) is not None:
                self.lost(dec, "used as a decorator")
        if isinstance(s, ast.ClassDef):
            for b in [*s.bases, *(k.value for k in s.keywords)]:
                if self.eval(b) is not None:
                    self.lost(b, "used as a class base")
            # The class body runs here, once: what it names, it may read or keep.
            used = {n.id for n in walk(s.body) if isinstance(n, ast.Name)}
            if used & self._roots():
                self.lost(s, f"used by the body of class `{s.name}`, which runs here")
            elif any(isinstance(n, ast.Call) for n in walk(s.body)):
                self.unknown_call(s, f"the body of class `{s.name}`")
        else:
            for d in [*s.args.defaults, *s.args.kw_defaults]:
                if d is not None and self.eval(d) is not None:
                    self.lost(d, f"bound as a default argument of `{s.name}`")
            args = s.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            annotations = [p.annotation for p in params if p is not None and p.annotation]
            for ann in [*annotations, *([s.returns] if s.returns else [])]:
                # Evaluated here, unless `from __future__ import annotations`: assume they are.
                self._read_value(ann, f"evaluated as an annotation of `{s.name}`")
        if s.decorator_list:
            self.unknown_call(s, f"decorators of `{s.name}`")
        self.kill(s.name)


def _written_place(node: ast.AST) -> str | None:
    """The access path whose whole tensor a full write goes through: `p` in `p.copy_(x)`,
    `p[:] = x`, or a kernel's `out=p`."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in api.FULL_WRITE_METHODS:
            return place_key(func.value)
        return None
    if isinstance(node, ast.Subscript):
        index = node.slice
        whole = (
            isinstance(index, ast.Slice) and not (index.lower or index.upper or index.step)
        ) or (isinstance(index, ast.Constant) and index.value is Ellipsis)
        return place_key(node.value) if whole else place_key(node)
    return place_key(node) if isinstance(node, ast.Name | ast.Attribute) else None


def _fresh_path(node: ast.AST, fresh: frozenset[str]) -> str | None:
    """The fresh path an expression reads through, if it reads only that tensor's elements:
    the path itself, an index or slice of it, a transpose, or a method called on one of those.
    Anything that may re-stride the storage (`.as_strided(...)`, `._base`) is not followed."""
    if isinstance(node, ast.Call):
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr in api.PARTIAL_VIEW_METHODS:
            return None
        node = func.value
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
            continue
        if not isinstance(node, ast.expr):
            return None
        key = place_key(node)
        if key is not None and key in fresh:
            return key
        if isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "H", "mH"):
            node = node.value
            continue
        return None


_KEY_PART = re.compile(r"""\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d+|\*)\]""")


def _constant_index(index: ast.expr) -> bool:
    return isinstance(index, ast.Constant) and type(index.value) in (str, int)


def _summary_variants(key: str) -> list[str]:
    """`d[3].x` -> [`d[*].x`]: the spellings under which a computed-key entry may be stored."""
    parts = list(_KEY_PART.finditer(key))
    out = []
    for mask in range(1, 1 << len(parts)):
        text, last = [], 0
        for i, m in enumerate(parts):
            text.append(key[last : m.start()])
            text.append("[*]" if mask >> i & 1 else m.group(0))
            last = m.end()
        text.append(key[last:])
        out.append("".join(text))
    return out


def _strip_first_key(rest: str) -> str | None:
    """`['page_table'].x` -> `.x`: what follows the first subscript of a path suffix."""
    m = _KEY_PART.match(rest)
    return rest[m.end() :] if m else None


def _root(key: str) -> str:
    for i, ch in enumerate(key):
        if ch in ".[":
            return key[:i]
    return key


def _comp_targets(e: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> set[str]:
    names: set[str] = set()
    for gen in e.generators:
        for n in ast.walk(gen.target):
            if isinstance(n, ast.Name):
                names.add(n.id)
    return names


_TENSOR_METHODS = (
    api.METADATA_METHODS | api.FULL_WRITE_METHODS | api.PARTIAL_WRITE_METHODS | api.FULL_VIEW_METHODS
    | api.PARTIAL_VIEW_METHODS | api.MAYBE_COPY_METHODS | api.READ_METHODS | api.READ_MODIFY_WRITE_METHODS
)  # fmt: skip
_FUNCTIONAL_VIEWS = (
    api.FULL_VIEW_METHODS | api.PARTIAL_VIEW_METHODS | api.MAYBE_COPY_METHODS | api.SPLIT_METHODS
    | {"as_tensor", "asarray", "atleast_1d", "atleast_2d", "atleast_3d"}
) - {"to", "cuda", "cpu", "type"}  # fmt: skip


def _is_tensor_method(name: str) -> bool:
    """A method name that torch.Tensor defines: on a non-buffer receiver it reads its arguments
    and runs no user code (assumes the receiver is a tensor, as such names almost always are)."""
    return name in _TENSOR_METHODS


# --- the fixpoint --------------------------------------------------------------------------------


# Frames and their attributes reach every local variable.
_FRAME_ATTRS = frozenset(
    {"f_locals", "f_globals", "tb_frame", "f_back", "gi_frame", "cr_frame", "ag_frame"}
)
_FRAME_NAMES = frozenset(
    {"locals", "vars", "eval", "exec", "globals", "_getframe", "currentframe", *_FRAME_ATTRS}
)
# Attributes that reach every attribute of an object: using one uses the object whole.
_REFLECTIVE_ATTRS = frozenset(
    {"__dict__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__"}
)
_ANY = "*"  # a node that can reach every variable (frame introspection): never skipped


@dataclass(frozen=True)
class _Mentions:
    """What one CFG node can touch, for skipping nodes that cannot affect a buffer's state."""

    bare: frozenset[str]  # names used other than as `name.attr`
    dotted: frozenset[str]  # "name.attr" accesses
    attr_roots: frozenset[str]  # names used as `name.attr`
    called_roots: frozenset[str]  # names used as `name.method(...)`
    runs_code: bool  # calls, awaits, yields, defs, returns: code we cannot see may run

    @cached_property
    def names(self) -> frozenset[str]:
        return self.bare | self.attr_roots


# Namespaces of torch's own operators: their `out=` is only written (resized to the result),
# never read (torch.ops.* are custom operators, which may do anything with it).
_TORCH_OP_NAMESPACES = frozenset({"torch", "torch.linalg", "torch.special", "torch.fft"})


def _torch_op_out(qual: str | None, reader: bool) -> bool:
    """`out=` of a known torch operator outside OUT_FUNCTIONS (`torch.nonzero(x, out=idx)`):
    a write of some of it, never a read."""
    return reader and qual is not None and qual.rpartition(".")[0] in _TORCH_OP_NAMESPACES


def _capture_reason(cfg: CFG, ctx: Context) -> str:
    """Why a CUDA-graph capture may open or close inside this CFG other than by a `with` the CFG
    models (capture.py): between the two, tensor operations are recorded, not run, and no order
    of the statements says which writes happened. The same for every buffer of one CFG."""
    cached = getattr(cfg, "_capture", None)
    if cached is not None:
        return cached
    roots = [n.ast_node for n in cfg.nodes if n.ast_node is not None]
    managers = [
        n.ast_node
        for n in cfg.nodes
        if n.label in ("with", "__enter__") and isinstance(n.ast_node, ast.expr)
    ]

    def qualify(e: ast.expr) -> str | None:
        return ctx.resolver.qualified(ctx.scope, e)

    reason = direct_capture(roots, qualify, managers)
    if not reason and any(
        isinstance(sub, ast.Yield | ast.YieldFrom)
        for i in cfg.capture_nodes
        if cfg.nodes[i].ast_node is not None
        for sub in ast.walk(cfg.nodes[i].ast_node)
    ):
        reason = "it yields inside a CUDA-graph capture: code elsewhere runs under it"
    if not reason:
        starters = ctx.capture_functions
        via = referenced(roots, starters)
        if via:
            reason = f"it calls {starters[via]}"
    cfg._capture = reason
    return reason


def _node_index(cfg: CFG) -> tuple[list[_Mentions], dict[int, list[int]], str]:
    """What each node mentions, which node evaluates each call (by the call's id), and why the
    function cannot be analysed at all (or ""): one walk of the function, the same for every
    buffer in it, so computed once per CFG."""
    cached = getattr(cfg, "_index", None)
    if cached is not None:
        return cached
    out: list[_Mentions] = []
    call_nodes: dict[int, list[int]] = {}  # a finally body is built twice: two nodes
    unmodelled = ""
    for node in cfg.nodes:
        bare: set[str] = set()
        dotted: set[str] = set()
        attr_roots: set[str] = set()
        called: set[str] = set()
        runs_code = node.kind in (Kind.CALL, Kind.EXIT) or node.iterates
        a = node.ast_node
        if a is not None and node.kind not in (Kind.JOIN, Kind.ENTRY, Kind.RAISE):
            under_attr: set[int] = set()
            names: list[ast.Name] = []
            for sub in walk([a]):
                if isinstance(sub, ast.Name):
                    names.append(sub)
                elif isinstance(sub, ast.Attribute):
                    if sub.attr in _FRAME_NAMES:
                        bare.add(_ANY)
                    if isinstance(sub.value, ast.Name):
                        under_attr.add(id(sub.value))
                        dotted.add(f"{sub.value.id}.{sub.attr}")
                        attr_roots.add(sub.value.id)
                        if sub.attr in _REFLECTIVE_ATTRS:
                            bare.add(sub.value.id)  # the object is used whole
                elif isinstance(sub, ast.Call):
                    runs_code = True
                    if node.kind not in (Kind.EXIT, Kind.CALL):
                        call_nodes.setdefault(id(sub), []).append(node.index)
                    f = sub.func
                    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                        called.add(f.value.id)
                elif (
                    isinstance(
                        sub, ast.Await | ast.Yield | ast.YieldFrom | ast.comprehension | ast.Starred
                    )
                    or (
                        isinstance(sub, ast.Compare)
                        and any(isinstance(op, ast.In | ast.NotIn) for op in sub.ops)
                    )
                    or (
                        isinstance(sub, ast.Assign)
                        and any(isinstance(t, ast.Tuple | ast.List) for t in sub.targets)
                    )
                ):
                    runs_code = True  # iterating may step a generator: its code runs
                elif isinstance(sub, ast.alias):
                    bare.add((sub.asname or sub.name).split(".")[0])
                elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    bare.add(sub.name)
                    runs_code = True
                if isinstance(sub, ast.ExceptHandler | ast.pattern):
                    for field_name in ("name", "rest"):
                        value = getattr(sub, field_name, None)
                        if isinstance(value, str):
                            bare.add(value)
            bare.update(n.id for n in names if id(n) not in under_attr)
            if isinstance(a, ast.stmt) and not isinstance(
                a, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign
            ):
                runs_code = True  # return/raise/import/def/...: keep them exact
        if bare & _FRAME_NAMES:
            bare.add(_ANY)
        out.append(
            _Mentions(
                frozenset(bare),
                frozenset(dotted),
                frozenset(attr_roots),
                frozenset(called),
                runs_code,
            )
        )
    cfg._index = out, call_nodes, unmodelled
    return out, call_nodes, unmodelled


def _inert(m: _Mentions, state: State, recording: bool = True) -> bool:
    """True when evaluating the node provably leaves `state` unchanged and, when `recording`,
    records nothing. Code that runs while the buffer is reachable from it records a possible
    read, but the state after it is the same: in the fixpoint such a node is inert too."""
    if _ANY in m.bare or (recording and m.runs_code and state.escaped and not state.lost):
        return False
    plain, dotted, roots = state.footprint
    return (
        plain.isdisjoint(m.names)
        and dotted.isdisjoint(m.dotted)
        and roots.isdisjoint(m.bare)
        and roots.isdisjoint(m.called_roots)
    )


def analyse_buffer(cfg: CFG, ctx: Context) -> BufferOutcome:
    outcome = BufferOutcome()
    preds, order, position = _graph_orders(cfg)
    in_states: list[State | None] = [None] * len(cfg.nodes)
    out_states: list[State | None] = [None] * len(cfg.nodes)
    # What an exception raised inside a node hands its handlers: any prefix of the node may have
    # run (`(k := 3) + a[100]` rebinds k, then raises). Its input joined with the node run as
    # code that may not run: writes there prove nothing, rebindings may have happened.
    exc_states: list[State | None] = [None] * len(cfg.nodes)
    in_states[cfg.entry] = UNREACHED
    names, call_nodes, unmodelled = _node_index(cfg)
    if not unmodelled:
        capture = _capture_reason(cfg, ctx)
        if capture:
            unmodelled = f"a CUDA-graph capture may open or close here: {capture}"
    if unmodelled:
        outcome.gave_up = unmodelled
        return outcome
    alloc_nodes = set(call_nodes.get(id(ctx.alloc), ()))
    heap = list(range(len(order)))  # positions in reverse postorder: a min-heap as it stands
    pending = set(order)
    steps = 0
    while heap:
        steps += 1
        if steps > _MAX_ITERATIONS:
            outcome.gave_up = "the function is too large to analyse"
            return outcome
        idx = order[heapq.heappop(heap)]
        pending.discard(idx)
        state: State | None = UNREACHED if idx == cfg.entry else None
        for p, exceptional in preds[idx]:
            state = join(state, exc_states[p] if exceptional else out_states[p])
        if state is None:
            continue
        node = cfg.nodes[idx]
        # Identity first: along a chain of untouched nodes one State object is passed on, and
        # the generated __eq__ would build and compare two tuples of every field each time.
        previous = in_states[idx]
        in_changed = state is not previous and state != previous
        in_states[idx] = state
        if not in_changed and out_states[idx] is not None:
            continue  # evaluated before from this very state: the result cannot differ
        if not state.live and idx not in alloc_nodes:
            new_out = state
        elif idx not in alloc_nodes and _inert(names[idx], state, recording=False):
            new_out = state  # the node cannot touch anything this state depends on
        else:
            new_out = _Eval(ctx, state, None, node).run()
            if new_out is not state and new_out == state:
                new_out = state  # pass the same object on: later comparisons are by identity
        targets: list[int] = []
        if node.exc_succ and in_changed:
            exc = state
            if idx in alloc_nodes or (
                state.live and not _inert(names[idx], state, recording=False)
            ):
                partial = _Eval(ctx, state, None, node)
                partial.conditional = 1
                partial.raised = True
                exc = join(state, partial.run()) or state
                if partial.wrote_raising and exc.live and not exc.touched:
                    # The raise may come before or after the write: a read on this path is
                    # possible but not proven (a failing `fill_` is no evidence).
                    exc = replace(exc, touched=True)
            if exc is not exc_states[idx] and exc != exc_states[idx]:
                exc_states[idx] = exc
                targets += node.exc_succ
        previous = out_states[idx]
        if new_out is not previous and new_out != previous:
            out_states[idx] = new_out
            targets += node.succ
        for t in targets:
            if t not in pending and t in position:
                pending.add(t)
                heapq.heappush(heap, position[t])
    # Final pass over the fixpoint: record what decides the verdict.
    rec = _Recorder(outcome)
    for idx in order:
        state = in_states[idx]
        if state is None:
            continue
        if state.live:
            outcome.reached = True
        if idx in alloc_nodes or (state.live and not _inert(names[idx], state)):
            _Eval(ctx, state, rec, cfg.nodes[idx]).run()
    return outcome


def _graph_orders(
    cfg: CFG,
) -> tuple[list[list[tuple[int, bool]]], list[int], dict[int, int]]:
    """Predecessors, reverse postorder and each node's place in it: the same for every buffer
    of one function, so computed once per CFG (a lifecycle program has thousands of nodes)."""
    cached = getattr(cfg, "_orders", None)
    if cached is None:
        order = _reverse_postorder(cfg)
        cached = (cfg.preds(), order, {n: i for i, n in enumerate(order)})
        cfg._orders = cached
    return cached


def _reverse_postorder(cfg: CFG) -> list[int]:
    seen: set[int] = set()
    order: list[int] = []
    stack: list[tuple[int, Iterator[int]]] = [(cfg.entry, iter([*cfg.nodes[cfg.entry].succ]))]
    seen.add(cfg.entry)
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                n = cfg.nodes[s]
                stack.append((s, iter([*n.succ, *n.exc_succ])))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order
