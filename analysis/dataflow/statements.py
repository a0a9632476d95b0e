"""Statements: one CFG node's abstract execution, the entry point of the evaluator."""

from __future__ import annotations

import ast
from functools import partial

from zeroopt.analysis.cfg import Kind
from zeroopt.analysis.dataflow.expressions import Expressions
from zeroopt.analysis.dataflow.loop_sizes import ASSUMED, PROVEN, SAME, loop_size
from zeroopt.analysis.dataflow.loops import cached_loop_cover
from zeroopt.analysis.dataflow.outcome import (
    RETURNED,
    RETURNED_VIEW,
    UNPROVEN,
    display_slots,
    returned_in,
)
from zeroopt.analysis.dataflow.places import (
    ANY_ITEM,
    _bound,
    _own_size,
    _split_call,
    place_key,
)
from zeroopt.analysis.resolve import walk, walk_all
from zeroopt.analysis.state import SELF, Ref, Region, State, View, evolve


class Evaluator(Expressions):
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
        if a is not None and self.st.hidden:
            self.hidden_mentioned(a)
        if node.loop is not None and self.st.live and not self.st.full:
            self._loop_cover(node.loop)
        if kind in (Kind.ENTRY, Kind.RAISE, Kind.JOIN) or a is None:
            return self.st
        if kind is Kind.CALL:
            self.unknown_call(a, lambda: f"`{self._src(a)[:60]}` (context manager)")
            if node.label == "__exit__ (exception)" and self.st.live:
                # The path where an unknown __exit__ swallows an exception is kept for `safe`,
                # but it is too speculative to be evidence of an `unsafe` read.
                self.st = evolve(self.st, touched=True)
                self.may_write_anything()
            return self.st
        if kind is Kind.BIND:
            if node.iterates:
                self.held_code_runs(a, "the `for` loop's next step")
            self._bind_target(a)
            return self.st
        if kind is Kind.EXPR:
            if isinstance(a, ast.pattern):
                for sub in walk_all(a):
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
                    whole=True,
                )
                if node.label == "match":
                    self.lost(a, "matched by `match`, whose patterns may bind parts of it")
                elif node.label == "for":
                    # Each pass gets a view of a row (`Tensor.__iter__` is `unbind(0)`), which
                    # the analysis does not follow: the body may write the rows through it.
                    self.lost(
                        a, "iterated by `for`: its rows are views the analysis does not follow"
                    )
            return self.st
        assert isinstance(a, ast.stmt)
        self._stmt(a)
        return self.st

    def _loop_cover(self, stmt: ast.For) -> None:
        """The exit of `for e in range(n): x[e] = ...` with n the size of that dimension of x
        (loops.py): every index was written, or the dimension is empty (no iteration)."""
        ctx = self.ctx
        st = self.st
        qualified = partial(ctx.resolver.qualified, ctx.scope)
        cover = next(
            (
                c
                for name, place in st.must_map().items()
                if place == SELF
                and (c := cached_loop_cover(stmt, qualified, ctx.src_memo, name, ctx.scope.node))
                is not None
                and c.full
            ),
            None,
        )
        if cover is None:
            return
        if st.escaped or st.lost or cover.target in ctx.escape_on_bind:
            return  # code elsewhere may rebind, reshape or resize it while the loop runs
        # Only the outermost loop's range runs right after the code between the allocation and
        # the loop; a nested loop's runs after its outer body's statements.
        sizes = [
            self._loop_size(p, bound, kind, cover.target, stmt if not k else None)
            for k, (p, bound, kind) in enumerate(cover.sizes)
        ]
        if None in sizes:
            return
        if SAME in sizes:
            # The trip count is the dimension's size as written, but code between the
            # allocation and the loop may have changed it in place: no write is proven, and the
            # path with no iteration is no proof of a read either.
            self.st = evolve(self.st, touched=True)
            self.may_write_anything()
            if self.rec is not None:
                self.rec.note(
                    self.rec.outcome.partial_writes,
                    stmt.lineno,
                    f"`{cover.text}` writes `{cover.target}` at every index of the dimension if "
                    "its size is unchanged since the allocation (code between may change it)",
                )
            return
        how = f"`{cover.text}` writes `{cover.target}` at every index of the dimension"
        for (_, seq, kind), size in zip(cover.sizes, sizes, strict=True):
            text = self._src(seq)
            if kind == "enumerate":
                how += (
                    f" (assuming iterating `{text}` yields `len({text})` items: no operator,"
                    " subscript, conversion, builtin's special method (`__len__`, `__index__`) or"
                    " method named like a tensor's (`.item()`, `.float()`) in the body changes it)"
                )
            elif size == ASSUMED:
                how += f" (assuming `{text}` gives the same size at the allocation and the loop)"
        self.write(SELF, stmt, full=True, region=None, how=how)

    def _loop_size(
        self, position: int, bound: ast.expr, kind: str, target: str, loop: ast.For | None
    ) -> str | None:
        """PROVEN, ASSUMED, SAME or None (loop_sizes.py)."""
        ctx = self.ctx
        if kind != "stride" and ctx.shape_known:
            found = loop_size(
                kind, bound, position, ctx.alloc, loop, ctx.scope.node,
                ctx.int_names - ctx.volatile_bounds,
                lambda f: ctx.resolver.qualified(ctx.scope, f),
            )  # fmt: skip
            if found in (PROVEN, ASSUMED) or kind == "enumerate":
                return found
            if found == SAME:
                return PROVEN if self._size_proven(position, bound, kind, target) else SAME
        return PROVEN if self._size_proven(position, bound, kind, target) else None

    def _size_proven(self, position: int, bound: ast.expr, kind: str, target: str) -> bool:
        ctx = self.ctx
        dims = self.st.dims
        size = dims[position][0] if position < len(dims) else None
        if kind == "index" and _own_size(
            bound, target, position, lambda f: ctx.resolver.qualified(ctx.scope, f)
        ):
            return True  # `range(x.shape[p])`: x is the loop's own buffer, not rebound in it
        if kind == "stride" and isinstance(bound, ast.Constant):
            # Residues 0..p-1 of step p cover any dimension once the loop runs at all.
            return type(bound.value) is int and bound.value >= 1
        text = _bound(bound, ctx.int_names)
        if text is None or size is None:
            return False
        if text[0] == size:
            return True
        if kind != "stride":
            return False
        # A dimension `p * c` (c a positive literal): p <= 0 leaves no element to read.
        try:
            shape = ast.parse(size, mode="eval").body
        except SyntaxError:
            return False
        return (
            isinstance(shape, ast.BinOp)
            and isinstance(shape.op, ast.Mult)
            and any(
                ast.unparse(side) == text[0]
                and isinstance(other, ast.Constant)
                and type(other.value) is int
                and other.value >= 1
                for side, other in ((shape.left, shape.right), (shape.right, shape.left))
            )
        )

    def _read_value(self, e: ast.expr, how: str) -> None:
        ref = self.eval(e)
        if ref is not None:
            self.read(ref, e, definite=True, how=how)

    def _bind_target(self, a: ast.AST) -> None:
        if isinstance(a, ast.ExceptHandler):
            if a.name:
                self.kill(a.name)
        elif isinstance(a, ast.pattern):
            for sub in walk_all(a):
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
            and isinstance(s.value, ast.List | ast.Tuple)
            and self.append_list(s.target.id)
        ):
            self.grow(s.target.id, s.value.elts, s)  # `xs += [a, b]` extends the list in place
        elif (
            isinstance(s, ast.AugAssign)
            and isinstance(s.target, ast.Name)
            and self.lookup(s.target.id) is None
        ):
            # `k += 1` rebinds k (an int) or mutates it in place (a tensor): either way it is a new value.
            ref = self.eval(s.value)
            if ref is not None:
                self.read(
                    ref, s.value, definite=True, how=f"operand of `{self._src(s)}`", whole=True
                )
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
                    target_ref,
                    s,
                    definite=True,
                    how=f"`{self._src(s)}` reads before it writes",
                    whole=True,
                    in_place=True,
                )
                self.modified(target_ref, s, reads_first=True)
            if ref is not None:
                self.read(
                    ref, s.value, definite=True, how=f"operand of `{self._src(s)}`", whole=True
                )
        elif isinstance(s, ast.Expr):
            self.eval(s.value)
        elif isinstance(s, ast.Return):
            if self._return_display(s) or self._return_record(s):
                return
            ref = self.eval(s.value)
            if ref is not None:
                # The buffer itself, or a view of every element of it: analysis/returned.py
                # judges those at the callers.
                how = f"{RETURNED} (a view of part of it, a copy or a value holding it)"
                if ref.view is View.SELF and ref.region is None:
                    how = RETURNED
                elif ref.view is View.FULL and ref.region is None:
                    how = RETURNED_VIEW
                self.escape(s, how)
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
                    if isinstance(t, ast.Subscript) and not (
                        isinstance(t.slice, ast.Constant) and type(t.slice.value) is str
                    ):
                        self.shift_items(key)  # `del x[0]` shifts every later item
                elif isinstance(t, ast.Subscript | ast.Attribute):
                    if isinstance(t, ast.Subscript):
                        self.shift_items("")  # `del x[1:]`, through any name for x
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

    def _return_display(self, s: ast.Return) -> bool:
        """`return a, x, b`, `return [x, a]`, `return {"k": x, ...}` (no starred item, no `**`,
        identifier keys, each once): the buffer itself in exactly one slot and no other slot
        holding it is an escape the callers' unpacking is judged for (analysis/returned.py);
        otherwise every slot that holds it is stored in a container, as for any display."""
        value = s.value
        slots = display_slots(value)
        if value is None or slots is None:
            return False
        refs = [self._eval_value(e) for _, e in slots]
        held = [i for i, ref in enumerate(refs) if ref is not None]
        if len(held) == 1:
            ref = refs[held[0]]
            if ref is not None and ref.view is View.SELF and ref.region is None:
                kind = "dict" if isinstance(value, ast.Dict) else type(value).__name__.lower()
                self.escape(s, returned_in(kind, slots[held[0]][0], len(slots)))
                return True
        for i in held:
            self.park(slots[i][1], f"stored in a container `{self._src(value)[:60]}`", value)
        return True

    def _return_record(self, s: ast.Return) -> bool:
        """`return Meta(f=x, g=y)` / `return cls(f=x)` for a plain dataclass (`record_of`): the
        new object is only the caller's. With the buffer itself in one field and no other field
        holding it, an escape the callers' uses of that field are judged for
        (analysis/returned_slots.py); otherwise each field holding it hands it on."""
        value = s.value
        made = self.record_of(value) if isinstance(value, ast.Call) else None
        if not isinstance(made, tuple):
            return False
        cname, pairs = made
        held = [(f, a, r) for f, a in pairs if (r := self._eval_value(a)) is not None]
        if len(held) == 1:
            name, _, ref = held[0]
            if ref.view is View.SELF and ref.region is None:
                self.escape(s, returned_in("record", f"{cname}.{name}", 0))
                return True
        for name, a, ref in held:
            self.into_new_record(ref, a, cname, name, "returned")
        return True

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
        if self.unpack_holder(s):
            return
        if (
            len(s.targets) == 1
            and isinstance(value, ast.Dict)
            and isinstance(s.targets[0], ast.Attribute | ast.Subscript)
            and place_key(s.targets[0]) is not None
            and all(isinstance(k, ast.Constant) and type(k.value) in (str, int) for k in value.keys)
        ):
            # `self.meta = {...}`: each entry a path of that slot (a display bound to a name is
            # a holder: transfer, holders.py).
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
                    if not self._private(place):
                        self.escape(s, f"stored in `{place}`")
                        self.expose(place)
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
                self.st = evolve(self.st, fresh=self.st.fresh | {tkey})
        gathered = self.gathered_list(value)
        if gathered is not None and self.st.live:  # every element a buffer of this site
            self.st = evolve(self.st, may=self.st.may | {gathered + ANY_ITEM})

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
