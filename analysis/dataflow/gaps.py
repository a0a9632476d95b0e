"""Writes that leave part of the buffer alone by construction, and whole reads after them.

Three patterns, each decided by one written assumption (rules/zo001_zeros_overwritten.py):

- Padding: `xp = torch.zeros((cdiv(n, 128) * 128, k)); xp[:n] = w` writes rows [0, n) of a
  dimension allocated as a round-up of `n` (`cdiv(n, T) * T`, `(n + T - 1) // T * T`,
  `align(n, T)`, `round_up(n, T)`, `ceil_align`, `_ceil_to_multiple`, `math.ceil(n / T) * T`)
  or as `n + k` (k >= 1). Row `n` exists whenever `n` is not a multiple of `T` (always for
  `n + k`), and no such write touches it. Not assumed where `n` provably is one (an int
  constant that `T` divides, a product with `T` as a factor). The names involved must each be bound once in the
  function (a parameter or one assignment outside any loop), so equal text is an equal value.
- Index writes: `m[idx] = v`, `m.scatter_(d, idx, v)`, `index_fill_`, `index_copy_`,
  `index_put_`, `masked_fill_`, `masked_scatter_`, `put_` write only the positions the index or
  mask picks; assumed: it need not pick every position. Not assumed where the index may be a
  permutation or the full range: any name it depends on bound from `sort`, `argsort`,
  `randperm`, `arange`, `range`, `unique`, `flip`, `roll`, `meshgrid`, `ones`, `full`, a slice
  object or `...`, a list of positions (`m[[0, 1, 2]]`, `tensor([0, 1, 2])`), or bound
  otherwise than by a plain assignment (a loop variable); nor for a scatter or index fill
  along a dimension the allocation gives size 1 (every index there picks it all).

- Constant gaps (const_gaps.py): a slice with int literal bounds (`x[1:]`, `x[:-1]`,
  `x[2:7]`, `x[:, 0]`), or `out=` a view of one, leaves a constant set of positions alone; a
  read that surely takes one of them, where the allocation's size shows it exists, is `unsafe`.

A write that runs in a loop the allocation is not in covers an unknown union: it never counts.
Each such write still enters `State.may_writes` as covering all of its dimension (so the
literal analysis of uncovered.py is unchanged); `State.gaps` keeps what it leaves alone. A whole
read (`whole`, of the buffer or a view of all of it) is `unsafe` only when every write that may
have run on any path is one of these, all padding along the same dimension and bound, or all
index writes through the same index text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from zeroopt.analysis.allocations import called_name, shape_args
from zeroopt.analysis.dataflow.const_gaps import const_gap, const_unwritten, negative_size_name
from zeroopt.analysis.dataflow.places import _classify_index, _mask_region
from zeroopt.analysis.resolve import child_nodes, walk
from zeroopt.analysis.state import Gap, Ref, Region, State, View

_SIZED = frozenset({"zeros", "new_zeros", "empty", "new_empty", "full", "new_full"})
_CEIL_DIV = ("cdiv", "ceildiv", "divup", "ceil")  # normalised names (lower case, no "_")
_ROUND_UP = frozenset(
    {"align", "alignup", "ceilalign", "roundup", "ceiltomultiple", "roundupto", "alignto"}
)
# Calls whose result may be a permutation or the full range of positions.
_COVERING = frozenset(
    {"sort", "argsort", "randperm", "arange", "range", "unique", "unique_consecutive", "flip",
     "fliplr", "flipud", "roll", "meshgrid", "cartesian_prod", "slice", "tuple", "tril_indices",
     "triu_indices", "indices", "nonzero_static", "linspace", "combinations", "cumsum"}
)  # fmt: skip
# Names that say they hold a permutation (`perm`, `order`, `sorted_idx`, `inv_idx`).
_NAMED_COVERING = re.compile(r"perm|order|sort|inv|shuffl", re.IGNORECASE)
# Calls that may make an all-true mask (with a bool dtype, or the dtype of what they copy).
_FILLED = frozenset({"ones", "full", "new_ones", "new_full", "ones_like", "full_like"})
# Calls that pick some positions whatever their input holds (k of n; one per row): what their
# input depends on does not make them cover.
_PICKING = frozenset(
    {"topk", "argmax", "argmin", "multinomial", "searchsorted", "bucketize", "kthvalue"}
)
# Builtins whose result is no set of positions the arguments do not already make.
_PLAIN_BUILTINS = frozenset({"int", "len", "min", "max", "abs", "round", "float", "bool", "list"})
_INDEX_ARG = {  # method -> (position, keyword) of the index or mask argument
    "scatter_": (1, "index"),
    "index_fill_": (1, "index"),
    "index_copy_": (1, "index"),
    "index_put_": (0, "indices"),
    "masked_fill_": (0, "mask"),
    "masked_scatter_": (0, "mask"),
    "put_": (0, "index"),
}


def _norm(name: str) -> str:
    return name.lower().replace("_", "")


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


@dataclass(frozen=True)
class _Binding:
    kind: str  # "param", "value" (`n = <value>`), "unpack" (`a, n = <value>`), "other"
    node: ast.AST  # the parameter, the value, or the name bound
    value: ast.expr | None = None  # what an unpacking unpacks


@dataclass
class _Facts:
    """Per function: each name's bindings, and each node's parent."""

    bound: dict[str, list[_Binding]]
    parents: dict[int, ast.AST]


def _facts(func: ast.AST) -> _Facts:
    memo = getattr(func, "_zeroopt_gap_facts", None)
    if memo is not None:
        return memo
    bound: dict[str, list[_Binding]] = {}
    parents: dict[int, ast.AST] = {}
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments):
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            bound.setdefault(a.arg, []).append(_Binding("param", a))
        for rest in (args.vararg, args.kwarg):
            if rest is not None:
                bound.setdefault(rest.arg, []).append(_Binding("other", rest))
    for node in walk([func]):
        for child in child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(_Binding("value", node.value))
                    continue
                for n in walk([t]):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        bound.setdefault(n.id, []).append(_Binding("unpack", n, node.value))
            continue
        if isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                bound.setdefault(name, []).extend([_Binding("other", node)] * 2)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            # Bound by a loop, `with`, `:=`, a comprehension, `del`, ... (plain and unpacking
            # assignments are taken above, and their names are skipped here).
            parent = parents.get(id(node))
            while isinstance(parent, ast.Tuple | ast.List | ast.Starred):
                parent = parents.get(id(parent))
            if not isinstance(parent, ast.Assign | ast.AnnAssign):
                bound.setdefault(node.id, []).append(_Binding("other", node))
        elif isinstance(node, ast.Import | ast.ImportFrom | ast.ExceptHandler | ast.AugAssign):
            names = (
                [(a.asname or a.name).split(".")[0] for a in node.names]
                if isinstance(node, ast.Import | ast.ImportFrom)
                else [node.name]
                if isinstance(node, ast.ExceptHandler) and node.name
                else [node.target.id]
                if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
                else []
            )
            for name in names:
                bound.setdefault(name, []).append(_Binding("other", node))
    facts = _Facts(bound, parents)
    func._zeroopt_gap_facts = facts  # type: ignore[attr-defined]
    return facts


def _loops(facts: _Facts, node: ast.AST) -> list[int]:
    out = []
    cur = facts.parents.get(id(node))
    while cur is not None:
        if isinstance(cur, ast.For | ast.AsyncFor | ast.While | ast.comprehension):
            out.append(id(cur))
        cur = facts.parents.get(id(cur))
    return out


def _outside_loops(facts: _Facts, node: ast.AST, alloc: ast.AST) -> bool:
    """The write runs once per run of the allocation: every loop around it is around both."""
    if id(node) not in facts.parents or id(alloc) not in facts.parents:
        return False
    return set(_loops(facts, node)) <= set(_loops(facts, alloc))


def _stable(facts: _Facts, name: str, alloc: ast.AST) -> ast.expr | bool | None:
    """True for a name that keeps one value the analysis does not see (a parameter never
    rebound, one unpacking, a name the function does not bind), its value for one plain
    assignment, False otherwise. A binding in a loop counts only inside loops that also run the
    allocation, on an earlier line: then it runs before the allocation in each iteration, and
    not again before a write that follows the allocation in that iteration."""
    bindings = facts.bound.get(name)
    if not bindings:
        return True
    if len(bindings) != 1:
        return False
    b = bindings[0]
    if b.kind == "param":
        return True
    if b.kind == "other":
        return False
    loops = _loops(facts, b.node)
    if loops and (
        not set(loops) <= set(_loops(facts, alloc))
        or getattr(b.node, "lineno", 0) >= getattr(alloc, "lineno", 0)
    ):
        return False
    if b.kind == "unpack":
        return True
    assert isinstance(b.node, ast.expr)
    return b.node


def _expand(facts: _Facts, e: ast.expr, alloc: ast.AST, depth: int = 3) -> ast.expr | None:
    """`e` with each name bound by one assignment replaced by its value (to `depth` levels);
    None when a name it mentions may change."""
    if isinstance(e, ast.Name):
        s = _stable(facts, e.id, alloc)
        if s is False or s is None:
            return None
        if s is True or depth == 0:
            return e
        return _expand(facts, s, alloc, depth - 1)
    if isinstance(e, ast.Constant):
        return e
    if isinstance(e, ast.Attribute):
        return (
            e
            if isinstance(e.value, ast.Name) and _stable(facts, e.value.id, alloc) is True
            else None
        )
    if isinstance(e, ast.BinOp):
        left, right = _expand(facts, e.left, alloc, depth), _expand(facts, e.right, alloc, depth)
        if left is None or right is None:
            return None
        return ast.BinOp(left, e.op, right)
    if isinstance(e, ast.UnaryOp):
        operand = _expand(facts, e.operand, alloc, depth)
        return None if operand is None else ast.UnaryOp(e.op, operand)
    if isinstance(e, ast.Call) and not e.keywords and isinstance(e.func, ast.Name | ast.Attribute):
        args = [_expand(facts, a, alloc, depth) for a in e.args]
        if any(a is None for a in args):
            return None
        return ast.Call(e.func, args, [])  # type: ignore[arg-type]
    return None


def _ceil_div(e: ast.expr, u: ast.expr) -> ast.expr | None:
    """T when `e` is the ceiling of u / T: `cdiv(u, T)`, `(u + T - 1) // T`, `-(-u // T)`,
    `math.ceil(u / T)`."""
    if isinstance(e, ast.Call) and any(k in _norm(called_name(e)) for k in _CEIL_DIV):
        if len(e.args) == 2 and _same(e.args[0], u):
            return e.args[1]
        if len(e.args) == 1 and isinstance(d := e.args[0], ast.BinOp) and isinstance(d.op, ast.Div):
            return d.right if _same(d.left, u) else None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv):
        t = e.right
        n = e.left
        if (
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Sub)
            and isinstance(n.right, ast.Constant)
            and n.right.value == 1
            and isinstance(n.left, ast.BinOp)
            and isinstance(n.left.op, ast.Add)
            and _same(n.left.left, u)
            and _same(n.left.right, t)
        ):
            return t
        if (  # `(u + 127) // 128`
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Add)
            and _same(n.left, u)
            and isinstance(n.right, ast.Constant)
            and isinstance(t, ast.Constant)
            and type(n.right.value) is int
            and type(t.value) is int
            and n.right.value == t.value - 1
        ):
            return t
    if (
        isinstance(e, ast.UnaryOp)
        and isinstance(e.op, ast.USub)
        and isinstance(f := e.operand, ast.BinOp)
        and isinstance(f.op, ast.FloorDiv)
        and isinstance(f.left, ast.UnaryOp)
        and isinstance(f.left.op, ast.USub)
        and _same(f.left.operand, u)
    ):
        return f.right
    return None


def _negative(u: ast.expr) -> bool:
    """`u` is an int literal below 0 (`-1`): index `u` of a dimension `u + c` may not exist."""
    try:
        value = ast.literal_eval(u)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return type(value) is int and value < 0


def _multiple(u: ast.expr, tile: ast.expr) -> bool:
    """`u` is provably a multiple of `tile`: int constants that divide (`256` of `128`), or a
    product with the tile (or a constant multiple of it) as a factor (`t * 128`)."""
    t = tile.value if isinstance(tile, ast.Constant) and type(tile.value) is int else None
    if isinstance(u, ast.Constant) and type(u.value) is int:
        return t is not None and t != 0 and u.value % t == 0
    if isinstance(u, ast.BinOp) and isinstance(u.op, ast.Mult):
        for side in (u.left, u.right):
            if _same(side, tile) or _multiple(side, tile):
                return True
    return False


def _padding(d: ast.expr, u: ast.expr, value: ast.expr | None = None) -> str | None:
    """Why index `u` may exist along a dimension allocated as `d` (both expanded), or None;
    none when `u` (or `value`, what it expands to) is provably a multiple of the tile."""
    if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Add):
        for side, other in ((d.left, d.right), (d.right, d.left)):
            if (
                _same(side, u)
                and isinstance(other, ast.Constant)
                and type(other.value) is int
                and other.value >= 1
                and not _negative(u)  # `-1 + 1` is 0: no index -1
            ):
                return f"the dimension is `{ast.unparse(u)} + {other.value}`: index {ast.unparse(u)} always exists"
    tile: ast.expr | None = None
    if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Mult):
        for a, b in ((d.left, d.right), (d.right, d.left)):
            t = _ceil_div(a, u)
            if t is not None and _same(t, b):
                tile = t
    elif (
        isinstance(d, ast.Call)
        and _norm(called_name(d)) in _ROUND_UP
        and len(d.args) == 2
        and _same(d.args[0], u)
    ):
        tile = d.args[1]
    if tile is None or (isinstance(tile, ast.Constant) and tile.value == 1):
        return None
    if _multiple(u, tile) or (value is not None and _multiple(value, tile)):
        return None
    return (
        f"assuming `{ast.unparse(u)}` need not be a multiple of `{ast.unparse(tile)}`, the "
        "allocation rounds it up"
    )


def _remainder_checked(func: ast.AST, u: ast.expr) -> bool:
    """The function computes `u % ...` (`assert n % 128 == 0`): it may only run with `u` a
    multiple of the tile, and then the padding is empty."""
    return any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and _same(n.left, u)
        for n in walk([func])
    )


def pad_gap(
    alloc: ast.Call, func: ast.AST, target: ast.Subscript, line: int, text: str
) -> Gap | None:
    """A store `x[..., :u, ...] = v` into the buffer itself that leaves index u alone along a
    padded dimension."""
    if called_name(alloc) not in _SIZED or not _outside_loops(facts := _facts(func), target, alloc):
        return None
    if line <= alloc.lineno:
        return None  # a write above the allocation runs in a later iteration of some loop
    dims = shape_args(alloc)
    if not dims or any(isinstance(a, ast.Starred) for a in dims):
        return None
    items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    if any(isinstance(i, ast.Constant) and i.value is None for i in items):
        return None
    ell = [k for k, i in enumerate(items) if isinstance(i, ast.Constant) and i.value is Ellipsis]
    if len(ell) > 1 or len(items) - len(ell) > len(dims):
        return None
    for k, item in enumerate(items):
        if not isinstance(item, ast.Slice) or item.step is not None or item.upper is None:
            continue
        if item.lower is not None and not (
            isinstance(item.lower, ast.Constant) and item.lower.value == 0
        ):
            continue
        dim = k if not ell or k < ell[0] else len(dims) - (len(items) - k)
        u = _expand(facts, item.upper, alloc, depth=0)
        size = _expand(facts, dims[dim], alloc)
        uu = _expand(facts, item.upper, alloc)
        if u is None or size is None or uu is None:
            continue
        why = _padding(size, uu) or _padding(size, u, uu)
        if why is not None and not _remainder_checked(func, item.upper):
            bound = ast.unparse(item.upper)
            note = (
                f"only `{text}` (line {line}) was written, which leaves index `{bound}` along "
                f"dimension {dim} alone, and `{bound}` is smaller than the allocated "
                f"`{ast.unparse(dims[dim])}` ({why}; the other dimensions assumed not empty)"
            )
            return Gap("pad", dim, bound, note, line, text)
    return None


def _covering(facts: _Facts, e: ast.expr, depth: int = 4, top: bool = True) -> bool:
    """`e` may pick every position: it comes, through names, views, conversions and the
    arguments of calls, from a call that may make a permutation, the full range or an all-true
    mask, or from a binding not followed (a loop variable). A slice or `...` beside an index in
    the index itself (`m[idx, :]`) picks along other dimensions; a name bound to one
    (`s = ...`) may be the whole index. `topk`, `argmax`, ... pick some positions only
    (assumed: fewer than all). A call of a plain name or of a method of `self` (a helper of
    the tree, unless a builtin like `len`) may return any positions: it may cover."""
    if depth < 0:
        return True
    if isinstance(e, ast.Name):
        if _NAMED_COVERING.search(e.id):
            return True
        for b in facts.bound.get(e.id, ()):  # none: a module-level name
            if b.kind == "param":
                continue
            if b.kind == "other":
                return True
            value = b.value if b.kind == "unpack" else b.node
            assert isinstance(value, ast.expr)
            if _covering(facts, value, depth - 1, top=False):
                return True
        return False
    if isinstance(e, ast.Constant):
        return not top and e.value is Ellipsis
    if isinstance(e, ast.Slice):
        return not top
    if isinstance(e, ast.Call):
        name = called_name(e)
        if name in _COVERING:
            return True
        if name in _FILLED:
            dtype = [k.value for k in e.keywords if k.arg == "dtype"]
            if name.endswith("_like") and not dtype:
                return True
            if any("bool" in ast.unparse(d) for d in dtype):
                return True
        if name in _PICKING:
            return False
        if _helper(e.func):
            return True  # a def of the tree (`_all(n)`, `self._rows(n)`) may return `arange(n)`
        parts: list[ast.expr] = [*e.args, *(k.value for k in e.keywords)]
        if isinstance(e.func, ast.Attribute):
            parts.append(e.func.value)
        return any(_covering(facts, a, depth, top=False) for a in parts)
    if isinstance(e, ast.Subscript):
        # `perm[:k]`, `idx[1:-1]`: positions of what it indexes; its bounds pick no positions.
        return _covering(facts, e.value, depth, top=False)
    if isinstance(e, ast.List | ast.ListComp) or (isinstance(e, ast.Tuple) and not top):
        return True  # positions listed one by one (`m[[0, 1, 2]]`, `tensor([0, 1, 2])`): all
    if isinstance(e, ast.Tuple):
        return any(_covering(facts, x, depth, top=True) for x in e.elts)
    children = [c for c in child_nodes(e) if isinstance(c, ast.expr)]
    return any(_covering(facts, c, depth, top=False) for c in children)


def _helper(func: ast.expr) -> bool:
    """A call of a plain name other than a builtin, or a method of `self`/`cls`: a function whose
    result the torch semantics here do not describe."""
    if isinstance(func, ast.Name):
        return func.id not in _PLAIN_BUILTINS
    return isinstance(func, ast.Attribute) and (
        isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    )


def _like_operand(alloc: ast.Call, call: ast.Call, index: ast.expr) -> bool:
    """`m = zeros_like(idx); m.scatter_(d, idx, src)` (or `zeros_like(src)`): an index as large
    as the buffer along the scattered dimension writes every position when it is a permutation,
    which its shape suggests (`eb_mask = zeros_like(sorted_mask)`, scattered by `sorted_idx`)."""
    if not called_name(alloc).endswith("_like") or not alloc.args:
        return False
    operands = [
        index,
        *call.args[2:],
        *(k.value for k in call.keywords if k.arg in ("src", "value", "source")),
    ]
    return any(_same(alloc.args[0], o) for o in operands)


def _size_one(shape: list[ast.expr], call: ast.Call) -> bool:
    """`call` (`scatter_(dim, ...)`, `index_fill_(dim, ...)`) works along a dimension the
    allocation gives size 1: each index there is 0, and every position is written."""
    dims = [k.value for k in call.keywords if k.arg == "dim"] or call.args[:1]
    if len(dims) != 1 or any(isinstance(a, ast.Starred) for a in shape):
        return False
    d, sign = dims[0], 1
    if isinstance(d, ast.UnaryOp) and isinstance(d.op, ast.USub):
        d, sign = d.operand, -1
    if not (isinstance(d, ast.Constant) and type(d.value) is int):
        return False
    k = sign * d.value
    if not -len(shape) <= k < len(shape):
        return False
    size = shape[k]
    return isinstance(size, ast.Constant) and size.value == 1


def index_gap(
    alloc: ast.Call, func: ast.AST, masks: frozenset[str], node: ast.AST, line: int, text: str
) -> Gap | None:
    """A write through an index or mask into the buffer itself (`m[idx] = v`, `m.scatter_(d,
    idx, v)`) that need not pick every position."""
    facts = _facts(func)
    if not _outside_loops(facts, node, alloc):
        return None
    if isinstance(node, ast.Subscript):
        index: ast.expr = node.slice
        kind = _classify_index(index, frozenset()).kind
        if kind not in ("advanced", "maybe-advanced") and _mask_region(index, masks) is None:
            return None
        what = f"`{text}` writes only the positions `{ast.unparse(index)[:60]}` picks"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        spec = _INDEX_ARG.get(node.func.attr)
        if spec is None or any(k.arg == "reduce" for k in node.keywords):
            return None
        pos, kw = spec
        found = [k.value for k in node.keywords if k.arg == kw]
        if not found and len(node.args) > pos:
            found = [node.args[pos]]
        if len(found) != 1 or isinstance(found[0], ast.Starred):
            return None
        index = found[0]
        what = f"`{text}` writes only the positions in `{ast.unparse(index)[:60]}`"
        if _like_operand(alloc, node, index):
            return None
    else:
        return None
    if _covering(facts, index):
        return None
    shape = shape_args(alloc) if called_name(alloc) in _SIZED else []
    if shape and all(isinstance(a, ast.Constant) and a.value == 1 for a in shape):
        return None  # one element: any write of it writes it all
    if isinstance(node, ast.Call) and shape and _size_one(shape, node):
        return None  # along a dimension of one position, every row's index picks it all
    key = ast.unparse(index)[:60]
    note = (
        f"{what} (line {line}), assuming `{key}` need not pick every position (nothing shows it "
        "is a permutation or the full range)"
    )
    return Gap("index", -1, key, note, line, text)


def gap_write(
    alloc: ast.Call, func: ast.AST, masks: frozenset[str], ref: Ref, node: ast.AST, line: int,
    text: str,
) -> Gap | None:  # fmt: skip
    """The part a partial write of the buffer itself leaves alone, when one pattern shows it."""
    if ref.view is not View.SELF:
        return None
    if isinstance(node, ast.Subscript):
        return pad_gap(alloc, func, node, line, text) or index_gap(
            alloc, func, masks, node, line, text
        )
    return index_gap(alloc, func, masks, node, line, text)


def unwritten(st: State, ref: Ref) -> str | None:
    """Evidence that a whole read through `ref` reads an element every write that may have run
    leaves alone (under the gaps' assumptions), or None."""
    writes = st.may_writes
    if not writes or ref.view not in (View.SELF, View.FULL):
        return None
    by_write = {(g.line, g.text): g for g in st.gaps if g.kind != "const"}
    found = [by_write.get((w[3], w[4])) for w in writes]
    if any(g is None for g in found):
        return None
    kinds = {(g.kind, g.dim, g.key) for g in found if g is not None}
    if len(kinds) != 1:
        return None
    notes = "; ".join(dict.fromkeys(g.note for g in found if g is not None))
    return f"reads it whole, and every write before it leaves part of it alone: {notes}"


def const_write(
    alloc: ast.Call, func: ast.AST, ref: Ref, region: Region | None, node: ast.AST, line: int,
    text: str,
) -> Gap | None:  # fmt: skip
    """The constant positions a write of a literal slice (or `out=` a view of one) leaves
    alone (const_gaps.py); never for a write in a loop the allocation is not in."""
    if ref.view not in (View.SELF, View.PART) or negative_size_name(alloc, func):
        return None  # `zeros(e + 1)` after `e = -1`: the size is 0, no position exists
    outside = _outside_loops(_facts(func), node, alloc)
    return const_gap(alloc, ref, region, node, line, text, outside)


def const_read(st: State, ref: Ref, alloc: ast.Call) -> str | None:
    """Evidence that a certain read takes a position every may-write leaves alone."""
    return const_unwritten(st, ref, alloc)
