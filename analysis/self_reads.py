"""A buffer a method stores on `self` unwritten, read by another method of the class before any
write: `unsafe` under "any public method may run right after the allocating method".

`__init__` does `self.acc = torch.zeros(n)` and `forward` does `self.acc += x`: the first
`forward` adds to memory nobody wrote. The allocating method's own dataflow only sees the buffer
leave through `self.acc`; this pass follows it into the other methods of the class. A method
that may run right after the allocating one (a public method, `__call__`, `forward`) is
analysed as if its body began with `self.acc = <the allocation>` (the dataflow of dataflow/
unchanged, on a copy of the method); a read before any write on some path of it (`unsafe` in
that analysis: a read-modify-write `+=`, `add_`, `index_add_`, `scatter_add_`, or any read the
dataflow proves) shows one execution that reads unwritten memory.

The risk is a protocol: an engine that always calls `reset()` (which writes the buffer) before
the reader would make this `unsafe` false. The rule that rules it out (each a reason to keep the
site `unproven`, and written in the evidence): no code of the scanned tree but the allocating
method writes, rebinds or deletes the attribute, and none can without being seen. Every use of
`.X` (on any receiver) in the class's module outside the allocating method is a read that makes
no alias: a read-modify-write (`X += v`, `X[i] += v`, `X.add_(...)`, ...), an operand of an
operator, or a method that returns new memory or metadata (`sum`, `item`, `shape`, ...); no
string of the module names `X`, no other file of the tree names `.X` at all, no code of the
module (and no other file naming the class) reaches attributes by a computed name (`getattr(o,
k)`, `setattr`, `vars()`, `__dict__`: a `for k in names: getattr(self, k).zero_()` reset), no
class decorator, the class matches no lifecycle model (lifecycles.py judges those by the order
the engine runs), and the reader is not overridden by a class of the tree deriving from the class (methods.py;
the allocating method may be: an object of the class itself runs it). With no writer anywhere, whatever runs before the reader, the buffer is
still as the allocating method left it: unwritten (it wrote no element and handed the buffer to
no one but `self.X`). Where it wrote parts of known extent only, those start the reader's
dataflow, and the read must take an element none of them covers (partial_reads.py).
"""

from __future__ import annotations

import ast
import copy
import os
import re
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from zeroopt.analysis.cfg import Builder
from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome, analyse_buffer
from zeroopt.analysis.lifecycle_program import class_methods
from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES, Lifecycle
from zeroopt.analysis.methods import TREE_DEP
from zeroopt.analysis.partial_reads import carried, empty_guard, written
from zeroopt.analysis.resolve import Scope, record_parent, runs_body_when_called, walk_all, walk_bfs
from zeroopt.analysis.returned import _computed_getattr, _reflective
from zeroopt.analysis.summaries import function_context, plain_decorators
from zeroopt.analysis.tree_naming import word_pattern

if TYPE_CHECKING:
    from zeroopt.analysis.allocations import Allocation
    from zeroopt.analysis.state import State
    from zeroopt.analysis.summaries import Summaries

Function = ast.FunctionDef | ast.AsyncFunctionDef
_PARTLY = "the allocating method writes part of it"
_STORED = re.compile(r"stored in `(\w+)\.(\w+)`")
_ENTRY = ("__call__", "forward")  # dunder and torch.nn.Module entry points that may run
# In-place methods that read every element they write (a read-modify-write).
RMW = frozenset({
    "add_", "sub_", "mul_", "div_", "index_add_", "scatter_add_", "scatter_reduce_", "addcmul_",
    "addcdiv_", "lerp_", "clamp_", "clamp_min_", "clamp_max_", "neg_", "abs_", "pow_", "exp_",
    "sqrt_", "maximum_", "minimum_", "add", "sub", "mul", "div",
})  # fmt: skip
# Methods that return new memory or metadata (never an alias of the buffer, never a write).
_PURE = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "item", "tolist", "clone",
    "norm", "any", "all", "nonzero", "numel", "size", "dim", "abs", "neg", "exp", "sqrt",
    "cumsum", "prod", "std", "var", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
    "count_nonzero", "logsumexp", "softmax", "log_softmax", "sign",
})  # fmt: skip
# torch functions that read their tensor arguments and return new memory (no `out=` given).
_PURE_FUNCTIONS = frozenset(
    f"torch.{n}"
    for n in (
        "cat", "stack", "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin",
        "cumsum", "where", "equal", "allclose", "isclose", "any", "all", "count_nonzero",
        "abs", "exp", "log", "sqrt", "softmax", "matmul", "mm", "bmm", "einsum", "norm",
    )
)  # fmt: skip
_META = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout"})


@dataclass
class SelfRead:
    outcome: BufferOutcome  # the reader's issues, moved to say where they are
    reader: str
    assumptions: list[str]


def read_after_store(
    site: Allocation,
    outcome: BufferOutcome,
    summaries: Summaries,
    lifecycles: tuple[Lifecycle, ...],
    certain: bool,
) -> SelfRead | str:
    """The `unsafe` shown by a method that may run after the allocating one, or why none."""
    attr, why = _stored_attr(site, outcome)
    seed = None
    if why == _PARTLY:
        got = carried(site.owner, site.call, outcome)  # its writes start the reader's flow
        if isinstance(got, str):
            return f"{why}: {got}"
        seed, why = got, ""
    if why:
        return why
    scope = site.scope
    owner = site.owner
    cls_scope = scope.parent
    if (
        not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef)
        or cls_scope is None
        or not isinstance(cls_scope.node, ast.ClassDef)
    ):
        return "not stored by a method of a class"
    cls = cls_scope.node
    if empty_guard(owner, site.call):
        return "allocated under a test that may make it empty"
    methods = class_methods(cls)
    names = set(methods)
    if cls.decorator_list:
        return f"class {cls.name} is decorated"
    if any(m.matches(names) for m in (*lifecycles, *BUILTIN_LIFECYCLES)):
        return f"class {cls.name} has a lifecycle model (which orders its methods)"
    unit = summaries.unit
    why = (
        _only_reads(unit.tree, owner, attr)
        or _other_files(summaries, attr)
        or _computed_lookups(summaries, cls.name)
    )
    if why:
        return why
    world = summaries.world
    for name, fn in methods.items():
        if fn is owner or not (name in _ENTRY or not name.startswith("_")):
            continue
        if not runs_body_when_called(fn) or not plain_decorators(fn, unit, frozenset()):
            continue
        if world.overridden(cls.name, name):
            continue
        fscope = unit.resolver.scopes.get(fn)
        if fscope is None:
            continue
        at = _analyse(summaries, fn, fscope, site.call, attr, certain, seed)
        if at is None or not any(i.severity == UNSAFE for i in at.issues):
            continue
        issues = [
            replace(i, text=f"{i.text} (in `{name}`, which may run right after `{owner.name}`)")
            for i in at.issues
            if i.severity == UNSAFE
        ]
        wrote = (
            []
            if seed is None
            else [
                f"{written(seed, owner.name)}; `{name}` reads an element none of them covers "
                "before any write of its own covers it, on some path"
            ]
        )
        assumptions = [
            *wrote,
            f"any public method of {cls.name} may run right after `{owner.name}` (here "
            f"`{name}`, line {fn.lineno}): no lifecycle model orders {cls.name}'s methods",
            f"no code of the scanned tree but `{owner.name}` writes, rebinds or deletes "
            f"`.{attr}`: every other use of it in its module is a read that makes no alias, and "
            f"no other file names `.{attr}` (so no reset or prepare method can have written it "
            "first)",
            f"no code reaches `.{attr}` by a computed name: none in the module, none in a file "
            f"that names {cls.name} (a file that never names the class is assumed not to write "
            "its objects' attributes through `getattr`/`setattr`/`vars`)",
        ]
        if summaries.project is not None:
            # It rests on what no other file of the tree does (name `.attr`, reach it by a
            # computed name, override the reader): any file may start to.
            summaries.project.deps[TREE_DEP] = world.digest
        return SelfRead(BufferOutcome(issues=issues, reached=True), name, assumptions)
    return f"no public method of {cls.name} reads `self.{attr}` before writing it"


def _stored_attr(site: Allocation, outcome: BufferOutcome) -> tuple[str, str]:
    """(X, "") when the allocating method stores the buffer in `self.X` and nothing else, and
    no write of it runs on any path (a call handed it counts as one: `touched`); (X, _PARTLY)
    when some write does (partial_reads.py decides whether what it wrote is known); calls that
    may reach it through `self` are possible reads there, and possible writes only through code
    of the tree that `_only_reads` sees; ("", why not) otherwise."""
    end = outcome.exit_state
    if outcome.gave_up or not outcome.reached or end is None or not end.escapes:
        return "", "not only stored on `self`"
    if (
        outcome.writes
        or outcome.partial_writes
        or outcome.view_writes
        or end.touched
        or end.some_write
    ):
        partly = _PARTLY  # judged on with what it wrote (partial_reads.py), if known
    else:
        partly = ""
    if any(i.severity == UNSAFE for i in outcome.issues):
        return "", "the allocating method reads it itself (its own finding)"
    owner = site.owner
    if not isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef):
        return "", "not in a method"
    params = [*owner.args.posonlyargs, *owner.args.args]
    attrs = set()
    for _, how in end.escapes:
        m = _STORED.fullmatch(how)
        if m is None or not params or m.group(1) != params[0].arg:
            return "", "not only stored on `self`"
        attrs.add(m.group(2))
    if len(attrs) != 1:
        return "", "stored in several attributes"
    return attrs.pop(), partly


def _only_reads(tree: ast.Module, owner: Function, attr: str) -> str:
    """Why some use of `.attr` in the module outside `owner` may write it ("" if none may)."""
    inside = {id(n) for n in walk_bfs([owner])}  # only attributes are looked up in it
    parents, uses = _module_uses(tree)
    word = re.compile(rf"(?<!\w){re.escape(attr)}(?!\w)")
    for n in uses:
        if isinstance(n, ast.Constant):
            if isinstance(n.value, str) and word.search(n.value):
                return f"line {n.lineno} names `{attr}` in a string"
            continue
        if n.attr != attr or id(n) in inside:
            continue
        if not _read_use(n, parents):
            return f"line {n.lineno} may write or alias `.{attr}`"
    return ""


_USES: list[tuple[ast.Module, dict[int, ast.AST], list[ast.Constant | ast.Attribute]]] = []


def _module_uses(
    tree: ast.Module,
) -> tuple[dict[int, ast.AST], list[ast.Constant | ast.Attribute]]:
    """The parent of every node and the module's strings and attribute accesses in walk order,
    once per module (each candidate attribute of the module asks)."""
    if _USES and _USES[0][0] is tree:
        return _USES[0][1], _USES[0][2]
    # One walk in `ast.walk`'s order, without the context and operator leaves (no parent is
    # asked of one, and none is a use).
    parents: dict[int, ast.AST] = {}
    uses: list[ast.Constant | ast.Attribute] = []
    for n in walk_bfs([tree]):
        record_parent(n, parents)
        if isinstance(n, ast.Attribute) or (
            isinstance(n, ast.Constant) and isinstance(n.value, str)
        ):
            uses.append(n)
    _USES[:] = [(tree, parents, uses)]
    return parents, uses


def _read_use(n: ast.Attribute, parents: dict[int, ast.AST]) -> bool:
    """`n` (`.X`) is read without a write or an alias: a read-modify-write, an operand, a
    method returning new memory, or metadata."""
    node: ast.AST = n
    p = parents.get(id(node))
    if isinstance(p, ast.AugAssign) and p.target is node:
        return True
    if isinstance(n.ctx, ast.Store | ast.Del):
        return False
    while isinstance(p, ast.Subscript) and p.value is node:
        up = parents.get(id(p))
        if isinstance(up, ast.AugAssign) and up.target is p:
            return True  # `X[i] += v`: reads the element, then writes it
        if isinstance(p.ctx, ast.Store | ast.Del):
            return False
        node, p = p, up
    if isinstance(p, ast.List | ast.Tuple) and isinstance(p.ctx, ast.Load):
        node, p = p, parents.get(id(p))  # `torch.cat([a, X])`: judged as the display's use
    if isinstance(p, ast.Call) and node in p.args and _pure_call(p):
        return True
    if isinstance(p, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp):
        return True
    if isinstance(p, ast.Attribute) and p.value is node:
        if p.attr in _META:
            return True
        call = parents.get(id(p))
        return (
            isinstance(call, ast.Call)
            and call.func is p
            and (p.attr in RMW or p.attr in _PURE)
            and not any(k.arg == "out" for k in call.keywords)
        )
    return False


def _pure_call(call: ast.Call) -> bool:
    """A torch function that reads its tensor arguments and returns new memory."""
    try:
        name = ast.unparse(call.func)
    except (ValueError, RecursionError):
        return False
    return name in _PURE_FUNCTIONS and not any(k.arg == "out" for k in call.keywords)


def _other_files(summaries: Summaries, attr: str) -> str:
    """Why another file of the tree may reach `.attr` ("" if none names it)."""
    world = summaries.world
    own = summaries.unit.path
    pattern = re.compile(rb"\.\s*" + re.escape(attr.encode()) + rb"(?!\w)")
    raw = attr.encode()
    for path, data in world.files:
        if path == own or raw not in data:
            continue
        if pattern.search(data) or re.search(rb"['\"]" + re.escape(raw) + rb"['\"]", data):
            if os.path.realpath(path) == os.path.realpath(own):
                continue
            return f"{path} names `.{attr}`: it may write it"
    return ""


def _computed(n: ast.AST) -> bool:
    """A lookup or store of an attribute by a name the text need not spell."""
    if _computed_getattr(n) or _reflective(n):
        return True
    if isinstance(n, ast.Attribute) and n.attr == "__dict__":
        return True
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
        name = n.args[1] if len(n.args) > 1 else None
        return not (isinstance(name, ast.Constant) and isinstance(name.value, str))
    return False


_LOOKUPS = re.compile(
    rb"getattr\(|setattr\(|attrgetter\(|methodcaller\(|getmembers\(|vars\(|__dict__"
)


def _computed_lookups(summaries: Summaries, cls: str) -> str:
    """Why code may reach the attribute by a computed name: in the class's module anywhere,
    in another file of the tree that names the class (its objects made or annotated there)."""
    for n in walk_all(summaries.unit.tree):
        if _computed(n):
            return f"line {getattr(n, 'lineno', 0)} reaches attributes by a computed name"
    own = summaries.unit.path
    spelled = cls.encode()
    word = word_pattern(spelled)
    for path, data in summaries.world.files:
        # The substring test first: it costs a fraction of either pattern's search.
        if path == own or spelled not in data or not _LOOKUPS.search(data) or not word.search(data):
            continue
        if os.path.realpath(path) != os.path.realpath(own):
            return f"{path} names {cls} and reaches attributes by a computed name"
    return ""


def _analyse(
    summaries: Summaries,
    fn: Function,
    scope: Scope,
    alloc: ast.Call,
    attr: str,
    certain: bool,
    seed: State | None = None,
) -> BufferOutcome | None:
    """The dataflow of a copy of `fn` whose body starts with `self.attr = <alloc>`, the buffer
    starting as the allocating method left it when `seed` says (partial_reads.py)."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params:
        return None
    store = ast.Assign(
        targets=[
            ast.Attribute(
                value=ast.Name(id=params[0].arg, ctx=ast.Load()), attr=attr, ctx=ast.Store()
            )
        ],
        value=alloc,
    )
    for n in (store, store.targets[0], store.targets[0].value):  # type: ignore[attr-defined]
        ast.copy_location(n, fn)
    clone = copy.copy(fn)
    for a in [a for a in vars(clone) if a.startswith("_zeroopt")]:
        delattr(clone, a)
    clone.body = [store, *fn.body]
    cscope = replace(scope, node=clone)
    unit = summaries.unit
    qualify = partial(unit.resolver.qualified, cscope)
    cfg = Builder(qualify).build(clone.body)
    every = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    ctx = function_context(
        summaries, unit, alloc, cscope, cfg, clone.body, every, qualify,
        certain=certain, shape_known=False, seed=seed,
    )  # fmt: skip
    return analyse_buffer(cfg, ctx)
