"""Access paths and index geometry: which part of a buffer a subscript, slice or path names."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from zeroopt.analysis import semantics as api
from zeroopt.analysis.sites import shape_args
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
    return ast.unparse(expr), frozenset(names)


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
    special = [i for i, k in enumerate(kinds) if k in ("slice", "int")]
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
    by_dim: dict[int, list[Region]] = {}
    for r in regions:
        by_dim.setdefault(r.dim, []).append(r)
    for dim, regs in by_dim.items():
        size = dims[dim][0] if -len(dims) <= dim < len(dims) and dims else None
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
