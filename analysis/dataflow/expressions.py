"""Expressions in Python's evaluation order: names, attributes, subscripts, operators, comprehensions."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from zeroopt.analysis import semantics as api
from zeroopt.analysis.dataflow.calls import _FRAME_ATTRS, _REFLECTIVE_ATTRS, Calls
from zeroopt.analysis.dataflow.containers import plain_key
from zeroopt.analysis.dataflow.first_iteration import zero_index_assumption
from zeroopt.analysis.dataflow.gather_lists import gather_names
from zeroopt.analysis.dataflow.places import (
    ANY_ITEM,
    _comp_targets,
    empty_region,
    place_key,
    same_bounds,
)
from zeroopt.analysis.resolve import child_nodes, walk, walk_all
from zeroopt.analysis.state import MAYBE, SELF, Ref, Region, View


class Expressions(Calls):
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
        for child in child_nodes(e):
            if isinstance(child, ast.expr):
                ref = self.eval(child)
                if ref is not None:
                    self.read(ref, child, definite=False, how=self._src(e))
        return None

    def _contains_alloc(self, e: ast.AST) -> bool:
        alloc = self.ctx.alloc
        return any(n is alloc for n in walk([e]))  # the call is no context leaf: same answer

    def _e_Constant(self, e: ast.Constant) -> Ref | None:
        return None

    def _e_Name(self, e: ast.Name, as_base: bool) -> Ref | None:
        ref = self.lookup(e.id)
        if ref is None and not as_base and self.owns(e.id) and not self.length_only(e):
            self._owner_used(e, e.id)
        return ref

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
        return self.exposed_load(e)

    def _buffer_attribute(self, base: Ref, e: ast.Attribute) -> Ref | None:
        attr = e.attr
        if attr in api.METADATA_ATTRS or attr == "grad":
            return None
        if attr in api.FULL_VIEW_ATTRS:
            return self._derive(base, View.FULL)
        if attr in ("real", "imag"):
            return self._derive(base, View.PART)
        if base.view is View.PART and empty_region(base.region):
            # `x[:0]._base` is the whole buffer: an attribute not modelled may reach more than
            # the view's elements, so an empty view is no proof that nothing is read.
            base = Ref(View.PART)
        self.read(base, e, definite=False, how=f"attribute `.{attr}`")
        return None

    def _e_Subscript(self, e: ast.Subscript, as_base: bool) -> Ref | None:
        key, ref = self._tracked(e)
        if ref is not None:
            return ref
        base = self.eval(e.value, as_base=True)
        index_ref = self.eval(e.slice)
        if index_ref is not None:
            self.read(
                index_ref,
                e.slice,
                definite=True,
                how=f"used as an index in `{self._src(e)}`",
                whole=True,
            )
        if base is None:
            base_key = place_key(e.value)
            if base_key is not None and self.owns(base_key):
                if (
                    key is None
                    and base_key in self.ctx.local_containers
                    and plain_key(e.slice, self.ctx.plain_keys)
                ):
                    return MAYBE  # one of the container's values: maybe the buffer (containers.py)
                if key is None or any(p.startswith(base_key + ".") for p in self.owns(base_key)):
                    self._owner_used(e.value, base_key)
                elif not as_base and self.owns(key):
                    self._owner_used(e, key)
            return self.exposed_load(e)
        index = self._index(e, base, store=False)
        if index.kind == "all":
            return base
        if index.kind == "all-reshaped":
            return self._derive(base, View.FULL)
        if index.kind == "region":
            if base.view is View.SELF:
                return Ref(View.PART, index.region)
            return self._derive(base, View.PART)
        if index.kind == "basic" and same_bounds(e.slice):
            # `x[i:i]` with `i` of unknown type: nothing when an int, everything when None.
            return Ref(View.MAYBE)
        if index.kind == "basic":
            return self._derive(base, View.PART)
        if index.kind == "advanced":
            self.read(
                base, e, definite=True, how=f"gather `{self._src(e)}` copies the indexed elements"
            )
            return None
        tensor = self._tensor_index(e.slice)
        if tensor:
            self.read(
                base,
                e,
                definite=True,
                how=f"gather `{self._src(e)}` copies the indexed rows (`{tensor}` is a tensor "
                "on this schedule)",
            )
            return None
        self.read(
            base,
            e,
            definite=False,
            how=f"`{self._src(e)}` is a view or, with a tensor index, a gather",
        )
        assumes = ""
        if base.view is View.SELF and not self.ctx.certain_reads_only:
            assumes = zero_index_assumption(
                self.ctx.scope.node, self.node.ast_node, e,
                lambda f: self.ctx.resolver.qualified(self.ctx.scope, f),
            )  # fmt: skip
        if assumes:  # `x[0]` on the loop's first iteration
            first = Ref(View.PART, Region(0, None, "1", frozenset()))
            return Ref(View.MAYBE, derived=True, elements=first, assumes=assumes)
        return Ref(View.MAYBE, derived=base.deriving())

    def _tensor_index(self, index: ast.expr) -> str:
        """The name (as written) of a tensor that indexes this subscript, where the context
        names tensors (a witness schedule) and the other items are full slices: `t[i, :]`."""
        names = self.ctx.tensor_names
        if not names:
            return ""
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        found = ""
        for item in items:
            if isinstance(item, ast.Name) and item.id in names:
                found = found or item.id
            elif not (
                isinstance(item, ast.Slice)
                and item.lower is None
                and item.upper is None
                and item.step is None
            ):
                return ""
        return found.split("\u00b7")[0]  # the lifecycle program's renaming mark

    def _e_BinOp(self, e: ast.BinOp) -> Ref | None:
        # `"%s" % x` formats x: a large tensor is summarised, not read in full.
        whole = not (isinstance(e.op, ast.Mod) and isinstance(e.left, ast.Constant | ast.JoinedStr))
        for side in (e.left, e.right):
            ref = self.eval(side)
            if ref is not None:
                self.read(ref, side, definite=True, how=f"operand of `{self._src(e)}`", whole=whole)
        return None

    def _e_UnaryOp(self, e: ast.UnaryOp) -> Ref | None:
        ref = self.eval(e.operand)
        if ref is not None:
            self.read(ref, e, definite=True, how=f"operand of `{self._src(e)}`", whole=True)
        return None

    def _e_Compare(self, e: ast.Compare) -> Ref | None:
        identity = all(isinstance(op, ast.Is | ast.IsNot) for op in e.ops)
        # `a in xs` compares `a` with the elements of xs one by one, maybe with none of them.
        whole = not any(isinstance(op, ast.In | ast.NotIn) for op in e.ops) and not any(
            isinstance(c, ast.Constant) and c.value is None for c in (e.left, *e.comparators)
        )  # `x == None` compares nothing
        for op, right in zip(e.ops, e.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                self._iterated(right, "searching")
        for i, side in enumerate((e.left, *e.comparators)):
            # `a < b < c` stops after `a < b` when that is false: c may never be evaluated.
            self.conditional += i >= 2
            # `meta is None` neither reads nor hands on the object that holds the buffer.
            ref = self.eval(side, as_base=identity)
            if ref is not None and not identity:
                self.read(
                    ref, side, definite=True, how=f"compared in `{self._src(e)}`", whole=whole
                )
            self.conditional -= i >= 2
        return None

    def _e_BoolOp(self, e: ast.BoolOp) -> Ref | None:
        result: Ref | None = None
        for i, value in enumerate(e.values):
            if i:
                self.conditional += 1
            ref = self.eval(value)
            if ref is not None:
                self.read(
                    ref, value, definite=True, how=f"truth value in `{self._src(e)}`", whole=True
                )
                result = MAYBE
            if i:
                self.conditional -= 1
        return result

    def _e_IfExp(self, e: ast.IfExp) -> Ref | None:
        test = self.eval(e.test)
        if test is not None:
            self.read(test, e.test, definite=True, how="truth value", whole=True)
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
                self.park(el, f"stored in a container `{self._src(e)[:60]}`", e)
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
            used = {n.id for n in walk_all(e) if isinstance(n, ast.Name)}
            first = self.eval(e.generators[0].iter)
            if first is not None:
                self.read(first, e, definite=False, how="iterated by a generator expression")
            if used & self._roots():
                self.park(e, "used inside a generator expression that runs later", e)
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
                # The target is bound to views of its rows, which the analysis does not follow.
                self.lost(gen.iter, "iterated in a comprehension: its rows are views")
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
            if ref is not None and not (part is self.ctx.alloc and self.gathered_list(e)):
                self.park(part, "collected by a comprehension", e)
        self.conditional -= 1
        for k, ref in saved.items():
            self.kill(k)
            if ref is not None:
                self.bind(k, ref, e)
        return None

    def gathered_list(self, e: ast.expr) -> str | None:
        """The name of `name = [ALLOC for ...]` when `e` is that comprehension, evaluated as
        this node's statement, and the name is a list of fresh buffers (gather_lists.py)."""
        stmt = self.node.ast_node
        if not (
            isinstance(stmt, ast.Assign)
            and stmt.value is e
            and isinstance(e, ast.ListComp)
            and e.elt is self.ctx.alloc
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            return None
        name = stmt.targets[0].id
        return name if name in self._gather_names() else None

    def _gather_names(self) -> frozenset[str]:
        scope = self.ctx.scope
        escaping = frozenset(self.ctx.escape_on_bind) | frozenset(
            scope.captured | scope.global_names | scope.nonlocal_names
        )
        return gather_names(scope.node, escaping)

    def write_each(self, a: ast.expr, how: str) -> bool:
        """`a` is the output list of a contract that writes each of its tensors in full: when it
        is a list of fresh buffers of this site (gather_lists.py), the buffer is written in full."""
        if not (isinstance(a, ast.Name) and f"{a.id}{ANY_ITEM}" in self.st.may):
            return False
        if self.lookup(a.id) is not None or a.id not in self._gather_names():
            return False
        self.write(SELF, a, full=True, region=None, how=f"every tensor of `{a.id}`: {how}")
        return True

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
                self.park(d, "captured as a lambda default", e)
        used = {n.id for n in walk_all(e.body) if isinstance(n, ast.Name)}
        if used & self._roots():
            self.park(e, "captured by a lambda", e)
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
                    # A large tensor is summarised: not every element is read.
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
            if ref is not None and part is not None:
                self.read(ref, part, definite=True, how="used as a slice bound", whole=True)
        return None
