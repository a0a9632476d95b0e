"""Whether a loop's trip count is the size of the dimension it writes, when the size is not a
proven int: `zeros(n)` then `for i in range(n)` with `n` a parameter of unknown type, and
`zeros(len(xs))` then `for i, x in enumerate(xs)` (or `range(len(xs))`).

The loop writes every index once it has finished normally; on the path where it runs zero
times the claim rests on the dimension being empty, so the trip count must be the dimension's
size at the allocation. Equal text means an equal value when every name in it is bound once (a
parameter never bound again, nested scopes included, or a local assigned once outside loops)
and nothing between the allocation and the loop can change the value in place: a tensor passed
as `n` (`range` and `torch.zeros` both accept one) or a list passed as `xs` may be changed by any
code that holds it. So the statements from the allocation to the loop, in one block, may only
bind plain names to values built without calls other than `len`/`range`/`int`/`min`/`max`/`abs`
and torch's allocation functions (code that cannot reach those objects).

The answer is "proven" (the loop writes the dimension in full), "assumed" (the same, for a
size of unknown type: assuming its `__index__`/`__len__` give the same int twice), "same" (the text is the
dimension's, but code on the way may have changed the value: no write is proven, yet the
zero-trip path is no proof of a read either) or None (another size: nothing is claimed).
For `enumerate(xs)` the trip count is what iterating `xs` yields: assumed to be `len(xs)`,
which the evidence says, and the loop body must not name `xs` except to index it nor call code
that may hold it (a hook popping a list it shares with the caller stops the loop early).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from zeroopt.analysis import semantics as api
from zeroopt.analysis.allocations import called_name, shape_args
from zeroopt.analysis.resolve import walk_all
from zeroopt.analysis.semantics import ALLOCATION_FUNCTIONS
from zeroopt.analysis.triton_cover import _bindings, _bound_once, _param_once

PROVEN = "proven"
SAME = "same"
# Proven as the text of a size of unknown type: the evidence says what it rests on (converting
# the size gives the same int at the allocation and at the loop).
ASSUMED = "assumed"

# Allocations whose positional arguments are the sizes (not `zeros_like(t)`, whose argument is
# a tensor, nor `full(size, value)`).
_SIZED = frozenset({"zeros", "empty", "new_zeros", "new_empty"})
# Calls that run no code able to reach a tensor or list the function was handed.
_QUIET_CALLS = frozenset(
    {"builtins.len", "builtins.range", "builtins.int", "builtins.min", "builtins.max",
     "builtins.abs", "builtins.enumerate"}
) | ALLOCATION_FUNCTIONS  # fmt: skip
_VALUE_BUILTINS = frozenset({"builtins.float", "builtins.bool", "builtins.round"})
# Top-level torch functions that run code they are handed: a file object's `write`/`read`
# (https://pytorch.org/docs/stable/generated/torch.save.html, torch.load.html) or callables
# (torch.cond, torch.while_loop, torch.vmap's result, torch.compile's wrapper).
_RUNS_CODE = frozenset(
    {"torch.save", "torch.load", "torch.cond", "torch.while_loop", "torch.vmap", "torch.compile"}
)
# Tensor methods that compute a value from the tensor and run no user code.
_VALUE_METHODS = frozenset(
    {"float", "double", "half", "int", "long", "item", "sum", "mean", "clone", "detach", "to",
     "view", "reshape", "flatten", "squeeze", "unsqueeze", "contiguous", "tolist", "max", "min",
     "abs", "exp", "log", "sqrt"}
)  # fmt: skip
# Attributes of tensors an item may be read through in an `enumerate` body (data, not code;
# assumed to be a tensor's, as methods named like tensor methods are).
_TENSOR_ATTRIBUTES = frozenset(
    {"shape", "dtype", "device", "ndim", "T", "mT", "real", "imag", "is_cuda", "layout"}
)
# Nodes of an inert value besides names and calls (checked on their own): literals, displays of
# lists and tuples, operators (on the size's own names: checked by name).
_INERT_NODES = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
                ast.Tuple, ast.List, ast.keyword, ast.operator, ast.unaryop, ast.boolop,
                ast.cmpop, ast.expr_context)  # fmt: skip
_NOT_QUIET = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Lambda, ast.ListComp,
              ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip

Qualify = Callable[[ast.expr], str | None]


def loop_size(
    kind: str,
    bound: ast.expr,
    position: int,
    alloc: ast.Call,
    loop: ast.For | None,
    fn: ast.AST,
    int_names: frozenset[str],
    qualify: Qualify,
) -> str | None:
    """PROVEN, SAME or None for a loop over `range(bound)` (or `enumerate(bound)` when `kind`
    is "enumerate") against dimension `position` of the allocation `alloc` in `fn`. `loop` is
    the outermost loop of the chain, None for a nested one (whose range is evaluated after
    statements of the outer body: only proven ints make it PROVEN)."""
    if called_name(alloc) not in _SIZED:
        return None
    args = shape_args(alloc)
    if position >= len(args) or any(isinstance(a, ast.Starred) for a in args):
        return None
    arg = args[position]
    if kind == "enumerate":
        if not (
            isinstance(arg, ast.Call)
            and len(arg.args) == 1
            and not arg.keywords
            and qualify(arg.func) == "builtins.len"
            and isinstance(bound, ast.Name)
            and ast.dump(arg.args[0]) == ast.dump(bound)
        ):
            return None
    elif kind != "index" or ast.dump(arg) != ast.dump(bound):
        return None
    names = _size_names(arg, qualify)
    if names is None:
        return None
    if not all(_bound_once_here(n, fn) for n in names):
        # A name `fn` never binds (a closure's cell, a global) holds one value unless code run
        # on the way rebinds it: the same text is no proof of a write, nor its zero-trip path
        # of a read.
        free = all(_bound_once_here(n, fn) or not _bindings(fn).get(n) for n in names)
        return SAME if free else None
    volatile = any(n not in int_names for n in names) or any(
        isinstance(n, ast.Call) for n in walk_all(arg)
    )
    if not volatile:
        return PROVEN
    if loop is None:
        return SAME
    if kind == "enumerate" and (
        _named_in_body(loop.body, bound.id)  # type: ignore[attr-defined]
        or not all(_quiet_body(s, fn, qualify) for s in loop.body)
    ):
        return SAME  # the body may change what iterating `xs` yields
    known = frozenset(names) | int_names
    return ASSUMED if _quiet_between(alloc, loop, fn, qualify, known) else SAME


def _size_names(e: ast.expr, qualify: Qualify) -> set[str] | None:
    """The names a size built of int literals, names, arithmetic and `len(name)` mentions (not
    `len` itself); None for any other expression."""
    callees = {id(n.func) for n in walk_all(e) if isinstance(n, ast.Call)}
    out: set[str] = set()
    for n in walk_all(e):
        if isinstance(n, ast.Name):
            if id(n) not in callees:
                out.add(n.id)
        elif isinstance(n, ast.Constant):
            if type(n.value) is not int:
                return None
        elif isinstance(n, ast.Call):
            if not (
                qualify(n.func) == "builtins.len"
                and len(n.args) == 1
                and not n.keywords
                and isinstance(n.args[0], ast.Name)
            ):
                return None
        elif not isinstance(
            n, ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop | ast.expr_context
        ):
            return None
    return out


def _bound_once_here(name: str, fn: ast.AST) -> bool:
    return _param_once(name, fn) or _bound_once(name, fn) is not None


def _named_in_body(body: list[ast.stmt], name: str) -> bool:
    """`name` appears in the loop body other than as the sequence of a subscript read
    (`xs[i]`): a call, a method or a store there may change what iterating it yields."""
    indexed = {
        id(n.value)
        for stmt in body
        for n in walk_all(stmt)
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
    }
    return any(
        isinstance(n, ast.Name) and n.id == name and id(n) not in indexed
        for stmt in body
        for n in walk_all(stmt)
    )


def _quiet_between(
    alloc: ast.Call, loop: ast.For, fn: ast.AST, qualify: Qualify, known: frozenset[str]
) -> bool:
    """The allocation is `name = <alloc>` and the loop follows it in the same block, with only
    inert bindings of plain names between them (`_inert`: `known` are the size's own names and
    proven ints, the values whose special methods the claim already relies on)."""
    block = _block_of(alloc, fn)
    if block is None:
        return False
    stmts, at = block
    stmt = stmts[at]
    if (
        not (
            (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets))
            or (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name))
        )
        or stmt.value is not alloc
    ):
        return False
    for later in stmts[at + 1 :]:
        if later is loop:
            return _inert(loop.iter, qualify, known)
        if isinstance(later, ast.Pass):
            continue
        if isinstance(later, ast.Expr) and isinstance(later.value, ast.Constant):
            continue
        if isinstance(later, ast.Assign) and all(isinstance(t, ast.Name) for t in later.targets):
            value: ast.expr | None = later.value
        elif isinstance(later, ast.AnnAssign) and isinstance(later.target, ast.Name):
            value = later.value
        else:
            return False
        if value is not None and not _inert(value, qualify, known):
            return False
    return False


def _quiet_body(stmt: ast.stmt, fn: ast.AST, qualify: Qualify) -> bool:
    """A statement of an `enumerate` loop's body that runs no code able to reach the sequence
    (another reference to a list may shrink it while it is iterated): calls only of the quiet
    builtins, of torch's functions (not its opaque namespaces) and of tensor methods that
    compute a value; attribute loads only of tensor attributes (a property of an item may pop
    the list); and no store into anything but a fresh tensor of the function (`del ys[-1]`,
    `ys[:] = []`, `self.ys[:] = []` or `ys *= 0` shrink a list that `ys` may share)."""
    callees = {id(n.func) for n in walk_all(stmt) if isinstance(n, ast.Call)}
    for n in walk_all(stmt):
        if isinstance(n, (*_NOT_QUIET, ast.Delete, ast.Global, ast.Nonlocal)):
            return False
        if (
            isinstance(n, ast.AugAssign)
            and not _fresh_store(n.target, fn, qualify)
            and (not isinstance(n.target, ast.Name) or isinstance(n.op, ast.Mult))
        ):
            return False
        if (
            isinstance(n, ast.Subscript | ast.Attribute)
            and not isinstance(n.ctx, ast.Load)
            and not _fresh_store(n, fn, qualify)
        ):
            return False
        if (
            isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and id(n) not in callees
            and n.attr not in _TENSOR_ATTRIBUTES
            and not (qualify(n) or "").startswith("torch.")
        ):
            return False
        if not isinstance(n, ast.Call):
            continue
        name = qualify(n.func)
        if name in _QUIET_CALLS or name in _VALUE_BUILTINS:
            if n.keywords:
                return False  # `max(a, b, key=f)` runs `f`
            continue
        if (
            name is not None
            and name.startswith(api.KNOWN_READ_NAMESPACES)
            and not name.startswith(api.OPAQUE_NAMESPACES)
            and _tensor_function(name)
            and name not in _RUNS_CODE
        ):
            continue
        if isinstance(n.func, ast.Attribute) and n.func.attr in _VALUE_METHODS and name is None:
            continue
        return False
    return True


def _tensor_function(name: str) -> bool:
    """`torch.exp`, `torch.nn.functional.relu`: a function of torch's top level or of its
    numeric namespaces, not of a subpackage that runs the callables it is handed
    (`torch.fx.symbolic_trace(f)`, `torch.func.vmap(f)`)."""
    return any(
        name.startswith(space) and "." not in name[len(space) :]
        for space in api.KNOWN_READ_NAMESPACES
    )


def _fresh_store(target: ast.expr, fn: ast.AST, qualify: Qualify) -> bool:
    """`t[...] = v` (or `t[...] += v`) with `t` bound in `fn` only to torch allocations: a tensor
    the function made, never the enumerated list."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return False
    name = target.value.id
    binds = _bindings(fn).get(name, [])
    calls = {
        id(t): stmt.value.func
        for stmt in walk_all(fn)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
        for t in stmt.targets
    }
    return bool(binds) and all(
        isinstance(b, ast.Name) and id(b) in calls and qualify(calls[id(b)]) in ALLOCATION_FUNCTIONS
        for b in binds
    )


def _inert(e: ast.expr, qualify: Qualify, known: frozenset[str]) -> bool:
    """`e` runs no code of an object other than the size's own (`known`): a plain name (an
    alias), literals, displays of lists and tuples, and the quiet calls and operators applied to
    `known` names and literals. An operator, comparison, `len`/`int` or allocation on any other
    value runs its special methods (`__add__`, `__eq__`, `__len__`, `__index__`), and an
    attribute load, subscript or f-string runs a property, `__getitem__` or `__format__`: code
    that may hold a tensor passed as the size and shrink it in place."""
    if isinstance(e, ast.Name):
        return True
    callees = {id(n.func) for n in walk_all(e) if isinstance(n, ast.Call)}
    named: set[int] = set()  # callees and `torch.long`: checked by their qualified name
    for n in walk_all(e):
        if isinstance(n, ast.Attribute) and id(n) not in named:
            if id(n) not in callees and not (qualify(n) or "").startswith("torch."):
                return False
            named.update(id(sub) for sub in walk_all(n))
    for n in walk_all(e):
        if id(n) in named or id(n) in callees:
            continue
        if isinstance(n, ast.Name):
            if n.id not in known:
                return False
        elif isinstance(n, ast.Call):
            if qualify(n.func) not in _QUIET_CALLS:
                return False
        elif not isinstance(n, _INERT_NODES):
            return False
    return True


def _block_of(alloc: ast.Call, fn: ast.AST) -> tuple[list[ast.stmt], int] | None:
    """The statement list of `fn`'s own scope holding the statement whose value is `alloc`."""
    todo: list[ast.AST] = [fn]
    while todo:
        node = todo.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for i, s in enumerate(stmts):
                if isinstance(s, ast.stmt) and getattr(s, "value", None) is alloc:
                    return stmts, i
                if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    todo.append(s)
    return None
