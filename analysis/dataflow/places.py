"""Access paths and index geometry: which part of a buffer a subscript, slice or path names."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from zeroopt.analysis import semantics as api
from zeroopt.analysis.allocations import shape_args
from zeroopt.analysis.resolve import walk, walk_all
from zeroopt.analysis.state import Region

# --- static shape of index expressions ---------------------------------------------------------


def _bound(
    expr: ast.expr | None, int_names: frozenset[str]
) -> tuple[str | None, frozenset[str]] | None:
    """Slice bound as canonical text, when built from integer literals and names that provably
    hold immutable ints (scalars.py): only then does equal text mean an equal value later."""
    if expr is None:
        return None, frozenset()
    names: set[str] = set()
    for node in walk_all(expr):
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


def _negative(expr: ast.expr | None) -> int | None:
    """`-1`, `-2`, ...: an int literal counted from the end, else None."""
    if (
        isinstance(expr, ast.UnaryOp)
        and isinstance(expr.op, ast.USub)
        and isinstance(expr.operand, ast.Constant)
        and type(expr.operand.value) is int
        and expr.operand.value > 0
    ):
        return -expr.operand.value
    if isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value < 0:
        return expr.value
    return None


def _slice_bound(
    expr: ast.expr | None, int_names: frozenset[str]
) -> tuple[str | None, frozenset[str]] | None:
    """A bound of a slice whose pieces are chained as text (`_covered`): besides `_bound`'s, a
    negative literal. Chaining needs only that equal text means an equal position: `-1` is the
    same position `n - 1` at every write of a buffer whose size `n` does not change, and a chain
    from the start to the end covers the dimension whatever the positions' order (a piece
    `[a:b]` with b before a is empty, yet the pieces on both sides of it overlap)."""
    value = _negative(expr)
    if value is not None:
        return str(value), frozenset()
    return _bound(expr, int_names)


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
                and _slice_bound(item.lower, int_names) is not None
                and _slice_bound(item.upper, int_names) is not None
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
        elif _negative(item) is not None:
            kinds.append("int")  # `x[-1]`: the last index, or an IndexError that writes nothing
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
            lo, lo_names = _slice_bound(item.lower, int_names) or (None, frozenset())
            hi, hi_names = _slice_bound(item.upper, int_names) or (None, frozenset())
            lo = None if lo == "0" else lo
            return _Index("region", Region(dim, lo, hi, lo_names | hi_names))
        negative = _negative(item)
        if negative is not None:
            # `x[-c]` is `x[-c:-c + 1]` (`x[-1:]` for the last) once it does not raise: a
            # dimension shorter than c raises IndexError, and nothing is written.
            hi_text = None if negative == -1 else str(negative + 1)
            return _Index("region", Region(dim, str(negative), hi_text, frozenset()))
        assert isinstance(item, ast.Constant) and isinstance(item.value, int)
        value = item.value
        return _Index(
            "region", Region(dim, None if value == 0 else str(value), str(value + 1), frozenset())
        )
    return _Index("basic")


def empty_region(region: Region | None) -> bool:
    """`x[:0]`, `x[k:k]`, `x[3:2]`: a slice with no element whatever the dimension's size (the
    bounds are ints, equal text is one value at one evaluation), so reading it reads nothing."""
    if region is None or region.kind:
        return False
    lo, hi = region.lo or "0", region.hi
    if hi is None:
        return False
    if lo == hi:
        return True
    return lo.isdigit() and hi.isdigit() and int(hi) <= int(lo)


def same_bounds(index: ast.expr) -> bool:
    """An index holding a slice `[e:e]` with both bounds the same name: empty when `e` is an
    int (or a tensor holding one), the whole dimension when it is None."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(
        isinstance(item, ast.Slice)
        and item.step is None
        and isinstance(item.lower, ast.Name)
        and isinstance(item.upper, ast.Name)
        and item.lower.id == item.upper.id
        for item in items
    )


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
    """`place` is a path through `owner`: `owner.a...` or `owner[k]...`."""
    return place.startswith((owner + ".", owner + "["))


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


_ROOT_TEXT = re.compile(r"[^.\[]*")


def _strip_first_key(rest: str) -> str | None:
    """`['page_table'].x` -> `.x`: what follows the first subscript of a path suffix."""
    m = _KEY_PART.match(rest)
    return rest[m.end() :] if m else None


def _root(key: str) -> str:
    """`self` of `self.meta['k'].x`: the text before the first `.` or `[`."""
    return _ROOT_TEXT.match(key).group()  # type: ignore[union-attr]


def _comp_targets(e: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> set[str]:
    names: set[str] = set()
    for gen in e.generators:
        for n in walk_all(gen.target):
            if isinstance(n, ast.Name):
                names.add(n.id)
    return names


# Markers in `store_hooks`: a store into any attribute, or into any item, may run module code.
ANY_ATTRIBUTE = ".*"
ANY_ITEM = "[*]"


def store_hooks(module: ast.AST) -> frozenset[str]:
    """Which stores run code this module defines. `obj.name = buf` calls a property setter of
    that name, a descriptor's `__set__` or a class's `__setattr__`, and `obj[k] = buf` a class's
    `__setitem__`: that code may keep a copy of the buffer (or read it) instead of the object
    itself, so the store is not an alias. Classes of other modules are an assumption of the rule
    page (special methods do not read or copy buffers)."""
    hooks: set[str] = set()
    for node in walk([module]):  # order-free: a set
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if node.name in ("__setattr__", "__set__"):
            hooks.add(ANY_ATTRIBUTE)
        elif node.name == "__setitem__":
            hooks.add(ANY_ITEM)
        for dec in node.decorator_list:
            if isinstance(dec, ast.Attribute) and dec.attr in ("setter", "deleter"):
                hooks.add(node.name)
            elif not (isinstance(dec, ast.Name) and dec.id in ("staticmethod", "classmethod")):
                # A decorated def may become a descriptor (functools.cached_property is
                # harmless, but a user's decorator is unknown): its name is a hook.
                hooks.add(node.name)
    return frozenset(hooks)
