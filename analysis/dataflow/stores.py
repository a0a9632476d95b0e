"""Assignments: targets, stores through views, and objects (records, dicts) that hold views."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from zeroopt.analysis.dataflow.holders import Holders, slot
from zeroopt.analysis.dataflow.outcome import NEW_RECORD
from zeroopt.analysis.dataflow.places import (
    ANY_ATTRIBUTE,
    ANY_ITEM,
    _classify_index,
    _constant_index,
    _Index,
    _mask_region,
    _own_bounds,
    _root,
    _strip_first_key,
    _summary_variants,
    _under,
    place_key,
)
from zeroopt.analysis.record_factories import classmethod_class
from zeroopt.analysis.records import KW_ONLY_MARK
from zeroopt.analysis.resolve import Scope
from zeroopt.analysis.state import CELL, MAYBE, Ref, View, evolve


class Stores(Holders):
    # --- assignment targets -----------------------------------------------------------------
    def assign(self, target: ast.expr, ref: Ref | None, stmt: ast.AST) -> None:
        if ref is not None and self._store_runs_code(target):
            # A setter, `__setattr__` or `__setitem__` of this module runs with the buffer: it
            # may read it or keep a copy, so what is stored may not be the buffer at all.
            self.read(
                ref,
                target,
                definite=False,
                how=f"stored by code of this module ({self._src(target)[:60]})",
            )
            self.lost(
                target, f"stored through a setter of this module (`{self._src(target)[:60]}`)"
            )
            ref = MAYBE
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
                self.late_reader(target, target.id)
                if target.id in self.ctx.escape_on_bind:
                    self.escape(target, f"bound to `{target.id}`, visible outside this function")
                    self._shared_cell(target.id)
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
                self.read(
                    index_ref, target.slice, definite=True, how="used as an index", whole=True
                )
            if base is not None:
                if ref is not None:
                    self.read(ref, target, definite=True, how="copied into itself")
                self._store_into_buffer(base, target, stmt)
                return
            if (
                ref is not None
                and not (
                    isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
                )
                and not self.private_item(target)
            ):
                # `y[0] = x` copies x's data when y is a tensor, and stores x when y is a list.
                self.read(
                    ref,
                    target,
                    definite=False,
                    how=f"stored into `{self._src(target)}` (a copy if that is a tensor)",
                )
                self.park(target, f"stored into `{self._src(target)}`", target)
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
                self.late_reader(target, _root(key))
                if not self._private(key):
                    self.escape(target, f"stored in `{self._src(target)}`")
                    self.expose(key)
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
            self.park(target, f"stored in `{self._src(target)}`", target)

    def _private(self, place: str) -> bool:
        """A store into `place` hands the buffer to no one: its root is private to the modelled
        methods (lifecycle `self`), a holder only this name reaches (holders.py) or a local
        container (containers.py)."""
        root = _root(place)
        if root in self.ctx.private_roots:
            return True
        # A slot of the holder itself (`d['a']`), not of an object inside it (`d['i']['a']`):
        # that object may have other names (`inner`, `d['j']`), through which it is read.
        if root == place:
            return self.private_root(root)
        if len(root) + len(slot(place)) != len(place):
            return False
        return self.private_root(root) or root in self.ctx.local_containers

    def _shared_cell(self, name: str) -> None:
        """A closure of this function (or the enclosing one's, through `nonlocal`) shares the
        name: a call to code we cannot see may be a call to it, which may write the buffer."""
        scope = self.ctx.scope
        if name in scope.captured or name in scope.nonlocal_names:
            self.st = evolve(self.st, hidden=self.st.hidden | {CELL})

    def _store_runs_code(self, target: ast.expr) -> bool:
        """Whether storing into `target` runs a setter, `__setattr__` or `__setitem__` that this
        module defines (store_hooks)."""
        if isinstance(target, ast.Attribute):
            hooks = self.ctx.store_hooks
            return ANY_ATTRIBUTE in hooks or target.attr in hooks
        if isinstance(target, ast.Subscript):
            return ANY_ITEM in self.ctx.store_hooks
        return False

    def _store_through(self, target: ast.expr, key: str | None) -> None:
        """Another name may denote the object stored into: demote what it held (see
        rebind_elsewhere). A computed key may equal any key."""
        owner = ""
        if isinstance(target, ast.Attribute | ast.Subscript):
            owner = place_key(target.value) or ""
        if isinstance(target, ast.Attribute):
            self.rebind_elsewhere(f".{target.attr}", key or "", owner)
        elif isinstance(target, ast.Subscript):
            sub = target.slice
            if isinstance(sub, ast.Constant) and type(sub.value) in (str, int):
                self.rebind_elsewhere(f"[{sub.value!r}]", key or "", owner)
            if isinstance(target.value, ast.Attribute) and target.value.attr == "__dict__":
                # `m2.__dict__["a"] = v` re-points `m.a` of every object m2 may be.
                name = sub.value if isinstance(sub, ast.Constant) else None
                self.rebind_elsewhere(f".{name}" if isinstance(name, str) else ".", "")
            self.rebind_elsewhere("[*]", key or "", owner)
            if key is None and isinstance(sub, ast.Slice):
                self.shift_items("", owner)  # `x[0:1] = [a, b]` moves every later item
            elif key is None:
                self.rebind_elsewhere("[", "", owner)  # `x[-1] = v` may replace `x[1]`

    # --- objects that hold views: metadata records, dicts keyed by batch size ---------------
    def transfer(self, target: ast.expr, value: ast.expr, stmt: ast.AST) -> bool:
        """`t = <place>` / `t = Record(f=view, ...)` / `t = d[bs]` / `d[bs] = <place>`, where the
        value is an object holding the buffer rather than the buffer: its paths are carried over
        to the new name instead of counting as a use of the whole object. False: not such a
        statement, evaluate it as usual."""
        tkey = place_key(target)
        if tkey is None:
            return self._summary_store(target, value, stmt)
        contents = self.holder_contents(value, tkey)
        if contents is not None:
            carried = self.take_apart(contents)
            self._store_target(target, tkey)
            self._put(tkey, carried, stmt, target)
            return True
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
        carried: Sequence[tuple[str, Ref | None, bool]],
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
                self.st = evolve(self.st, may=self.st.may | {place})
            if fresh and not weak and not self.conditional:
                self.st = evolve(self.st, fresh=self.st.fresh | {place})
        self.late_reader(target, _root(tkey))
        if _root(tkey) != tkey and not self._private(tkey):
            self.escape(target, f"stored in `{self._src(target)}`")  # another object's slot
            for suffix, _, _ in carried:
                self.expose(tkey + suffix)
        if tkey in self.ctx.escape_on_bind:
            self.escape(target, f"bound to `{tkey}`, visible outside this function")
            self._shared_cell(tkey)

    def _record(self, target: ast.expr, tkey: str, call: ast.Call, stmt: ast.AST) -> bool:
        """`t = Meta(page_table=view, ...)` for a plain dataclass of this module (or imported
        from another scanned one, or `cls` of its classmethod): its generated __init__ only
        stores each argument in the field of that name."""
        made = self.record_of(call)
        if not isinstance(made, tuple):
            return False
        carried: list[tuple[str, Ref | None, bool]] = []
        for name, arg in made[1]:
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

    def into_new_record(self, ref: Ref, a: ast.expr, cname: str, name: str, then: str) -> None:
        """The buffer stored in field `name` of a new `cname` that is then `then`: the object
        goes where the analysis does not follow it."""
        how = f"stored in field `{name}` of a new `{cname}`, which is {then}"
        self.read(ref, a, definite=False, how=how)
        self.lost(a, how)

    def record_of(self, call: ast.Call) -> tuple[str, list[tuple[str, ast.expr]]] | str | None:
        """(class, (field, argument) pairs) when `call` runs only a plain dataclass's generated
        `__init__` (analysis/records.py; `cls` of its classmethod: record_factories.py); a
        text: why a classmethod's `cls(...)` may run other code; None: neither."""
        func = call.func
        if _namespace(func) and not call.args and all(k.arg for k in call.keywords):
            qual = self.ctx.resolver.qualified(self.ctx.scope, func)
            if qual == "types.SimpleNamespace":  # its __init__ stores each keyword, reads none
                return "SimpleNamespace", [(k.arg, k.value) for k in call.keywords if k.arg]
        if not isinstance(func, ast.Name):
            return None
        if func.id.startswith(NEW_RECORD):  # a returned record at its caller (returned_slots.py)
            return func.id[len(NEW_RECORD) : -1], [
                (k.arg, k.value) for k in call.keywords if k.arg is not None
            ]
        records = self.ctx.records
        cname = func.id
        if cname not in records or self._locally_bound(cname):
            summaries = self.ctx.summaries
            world = summaries.world if summaries is not None and summaries.closed_world else None
            found, why = classmethod_class(
                self.ctx.scope, func.id, records, self.ctx.resolver, world
            )
            if found is None:
                if why and summaries is not None:
                    summaries.obstacles[id(call)] = (call, why)
                return None
            cname = found
        fields = records[cname]
        if fields[:1] == (KW_ONLY_MARK,):
            if call.args:
                return None
            fields = fields[1:]
        if len(call.args) > len(fields) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(k.arg is None or k.arg not in fields for k in call.keywords):
            return None
        pairs = [*zip(fields, call.args, strict=False)]
        pairs += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
        return cname, pairs

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
        if "torch.Tensor.__setitem__" in self.ctx.resolver.patched():
            # The module replaces the tensor's item store: what runs is its code, not a write.
            self.read(base, target, definite=False, how=f"`{how}` (`__setitem__` replaced here)")
            self.lost(target, f"`{how}`")
            return
        if index.kind in ("all", "all-reshaped"):
            self.write(base, target, full=True, region=None, how=how)
        elif index.kind == "region" and base.view is View.SELF:
            self.write(base, target, full=False, region=index.region, how=how)
        elif index.kind == "region":
            self.write(base, target, full=False, region=None, how=how)
        else:
            self.write(base, target, full=False, region=None, how=how)


def _namespace(func: ast.expr) -> bool:
    """`SimpleNamespace` or `<x>.SimpleNamespace` by its text (then resolved)."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "SimpleNamespace"
