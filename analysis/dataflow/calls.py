"""Calls: torch functions and tensor methods, kernel contracts, unknown callees, reflective names."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from functools import partial

from zeroopt.analysis import semantics as api
from zeroopt.analysis.dataflow.append_lists import made_in_loop
from zeroopt.analysis.dataflow.dispatch_calls import DispatchCalls
from zeroopt.analysis.dataflow.outcome import UNPROVEN
from zeroopt.analysis.dataflow.places import ANY_ITEM, place_key
from zeroopt.analysis.kernel_contracts import KernelContract, kernel_contract_for
from zeroopt.analysis.kernel_effects import apply_plan, kernel_plan
from zeroopt.analysis.kernel_library import (
    ASYNC_POSITION,
    GROUP_POSITION,
    group_membership,
    op_contract_for,
)
from zeroopt.analysis.resolve import walk_all
from zeroopt.analysis.state import MAYBE, SELF, Ref, View, evolve

_ELEMENT = re.compile(r"\[\d+\]")  # a path one literal index under a sequence name
_ITEM = re.compile(r"\[(\d+|\*)\]")  # or any item of a list that grows (append_lists.py)


class Calls(DispatchCalls):
    def _e_Call(self, e: ast.Call) -> Ref | None:
        if e is self.ctx.alloc:
            for a in [*e.args, *(k.value for k in e.keywords)]:
                self.eval(a)  # shapes and `zeros_like(prev)`: metadata
            return self.allocate(e)
        func = e.func
        handled, got = self.get_call(e)
        if handled:
            return got
        if self.grow_list(e):
            return None  # list.append / list.extend return None
        made = self.record_of(e) if isinstance(func, ast.Name) else None
        if isinstance(made, tuple):
            # A plain dataclass's generated __init__ runs nothing but stores: the object
            # holding the buffer is what the expression around it then uses.
            for name, a in made[1]:
                ref = self._eval_value(a)
                if ref is not None:
                    self.into_new_record(ref, a, made[0], name, "used as a whole")
            return None
        if isinstance(func, ast.Attribute):
            recv = self.eval(func.value, as_base=True)
            if recv is not None and func.attr in api.INPLACE_LAYOUT_METHODS:
                for _, a in self._args(e):
                    self._read_arg(a, f".{func.attr}", definite=True)
                if self.rec is not None:
                    self.rec.note(self.rec.outcome.relayouts, e.lineno, f"`.{func.attr}`")
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
        if qual == "builtins.getattr" and _constant_getattr(e):
            return self._getattr(e)
        return self._call(e, qual)

    def _getattr(self, e: ast.Call) -> Ref | None:
        """`getattr(o, "a")` is `o.a`, whatever `o` is; with a default it is `o.a` or the
        default: either may be the result."""
        name = e.args[1]
        assert isinstance(name, ast.Constant) and isinstance(name.value, str)
        attr = ast.copy_location(ast.Attribute(value=e.args[0], attr=name.value, ctx=ast.Load()), e)
        ref = self.eval(attr)
        if len(e.args) == 3:
            default = self.eval(e.args[2])
            return MAYBE if ref is not None or default is not None else None
        return ref

    def _args(self, e: ast.Call) -> Iterator[tuple[int | str | None, ast.expr]]:
        for i, a in enumerate(e.args):
            yield (None if isinstance(a, ast.Starred) else i), a
        for k in e.keywords:
            yield k.arg, k.value

    def _call(self, e: ast.Call, qual: str | None) -> Ref | None:
        name = qual or self._src(e.func)
        if qual == "builtins.vars" and _one_positional(e):
            # `vars(obj)` is `obj.__dict__`, not the frame: code handed `obj` (a `__dict__`
            # property may run), reaching what obj holds and nothing else of this function.
            ref = self._eval_value(e.args[0])
            if ref is not None:
                self.handed_to(ref, e.args[0], name)
            self.unknown_call(e, f"call to `{name}`")
            return None
        if qual in api.FRAME_INTROSPECTION:
            if self.st.live:
                self.lost(e, f"`{name}` can reach every local variable")
            return None
        # By the resolved name; by the source text only for a callee that resolves to nothing
        # (`import other as my_kernels` must not borrow my_kernels' contract).
        contract = self.ctx.contracts.get(qual) if qual else self.ctx.contracts.get(name)
        if contract is not None and not qual and contract in _BUILTIN_CONTRACTS:
            # A built-in contract is torch's or DeepGEMM's own function: a callee spelled like
            # it that resolves to nothing (a parameter `deep_gemm`, a name the module replaces)
            # is some other object. Only a contract the user declared is taken by its text.
            contract = None
        if contract is not None and (
            any(isinstance(a, ast.Starred) for a in e.args)
            or any(k.arg is None for k in e.keywords)
        ):
            contract = None  # `f(*args)`, `f(**kw)`: which argument is which is not known
        async_at = ASYNC_POSITION.get(qual or "")
        asynchronous = any(k.arg == "async_op" and not _literal_false(k.value) for k in e.keywords)
        if async_at is not None and len(e.args) > async_at:
            asynchronous = asynchronous or not _literal_false(e.args[async_at])
        if asynchronous:
            contract = None  # an asynchronous collective has not written anything yet
        member = ""
        if contract is not None and qual in GROUP_POSITION:
            found = group_membership(e, GROUP_POSITION[qual])
            if found is None:
                contract = None  # a rank outside `group` writes nothing (kernel_library.py)
                self._outside_group(e, name)
            member = found or ""
        if qual in api.FULL_WRITE_FUNCTIONS and e.args:
            # torch.nn.init.*_: fill the first argument in full, reading only its shape.
            target = self.eval(e.args[0])
            for _, a in list(self._args(e))[1:]:
                self._read_arg(a, name, definite=True)
            if target is not None:
                self.write(target, e, full=True, region=None, how=self._src(e)[:100])
            return target
        # Triton launches of this module's kernels and the built-in custom-op library.
        plan = kernel_plan(e, qual, self.ctx.resolver, self.ctx.scope)
        op = op_contract_for(qual) if plan is not None else None
        if (
            op is not None
            and "group" in op.params
            and group_membership(e, op.params.index("group")) is None
        ):
            self._outside_group(e, name)
        if (
            plan is not None
            and contract is None
            and not kernel_contract_for(qual, self.ctx.kernels)
        ):
            apply_plan(self, e, plan)
            self.unknown_call(e, f"call to `{name}`")
            return None
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
        if not (
            reader
            or torch_method
            or contract is not None
            or qual in api.METADATA_FUNCTIONS
            or qual in api.PURE_BUILTINS
            or qual in api.CALLBACK_BUILTINS
        ):
            handled, result = self._tree_call(e, qual)  # a def of the scanned tree
            if handled:
                return result

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
                            f"{contract.function} writes argument {key!r} in full "
                            f"({contract.source}{', ' + member if member else ''})",
                        )
                    self.write(
                        ref,
                        a,
                        full=True,
                        region=None,
                        how=f"{self._src(e)[:80]} (contract: {contract.source}"
                        + (f", {member})" if member else ")"),
                    )
                continue
            if key == "out" and (qual in api.OUT_FUNCTIONS or _torch_op_out(qual, reader)):
                outs = a.elts if isinstance(a, ast.Tuple | ast.List) else [a]
                for out in outs:
                    ref = self.eval(out)
                    if ref is None:
                        continue
                    # out= is resized to the result's shape: a smaller result leaves the rest
                    # of the storage unwritten, and `as_strided`, `resize_` or a storage view can
                    # reach it later. So it counts as written, never as written in full.
                    self.write(
                        ref,
                        out,
                        full=False,
                        region=None,
                        how=f"{self._src(e)[:80]} (out= may shrink it: storage beyond the result keeps its values)",
                        resized=True,
                    )
                continue
            if key in (0, "input") and qual in api.BETA_IGNORES_INPUT and _beta_zero(e):
                self.eval(a)  # beta=0: the input is ignored, only its shape broadcasts
                continue
            if qual in api.METADATA_FUNCTIONS and key in (0, "input", "obj"):
                self.eval(a)  # only the shape, dtype, ... of the first argument are looked at
                continue
            if reader or torch_method or contract is not None:
                whole = qual in api.WHOLE_READ_FUNCTIONS or (
                    torch_method and name.rpartition(".")[2] in api.WHOLE_ARGUMENT_METHODS
                )
                self._read_arg(a, name, definite=True, whole=whole)
            else:
                ref = self._eval_value(a)
                if ref is not None:
                    self.handed_to(ref, a, name, self.obstacle(e))
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
                bound_text = self._src(bound[bound_by]) if bound_by in bound else "(not passed)"
                coupled = f"`{p}` rows are read up to the values of `{bound_by}={bound_text}`: coupled buffers, safe only together"
                if self.rec is not None and not self.st.full:
                    self.rec.note(self.rec.outcome.coupled, e.lineno, coupled)
                self.read(ref, a, definite=True, how=f"{kernel.name}: {coupled}")
            else:
                self.read(
                    ref,
                    a,
                    definite=True,
                    how=f"`{p}` of {kernel.name} (read in full: kernel contract)",
                    whole=True,
                )

    def _read_arg(self, a: ast.expr, name: str, definite: bool, whole: bool = False) -> None:
        if self._read_sequence(a, name, definite, whole):
            return
        items = a.elts if isinstance(a, ast.List | ast.Tuple) else [a]
        for item in items:
            value = item.value if isinstance(item, ast.Starred) else item
            ref = self.eval(value)
            if ref is not None:
                self.read(ref, value, definite=definite, how=f"argument of `{name}`", whole=whole)

    def _read_sequence(self, a: ast.expr, name: str, definite: bool, whole: bool) -> bool:
        """`torch.cat(parts)` where `parts` is a list or tuple display bound to a local name
        (holders.py: every path under it is an element spelled by a literal index), or a list
        made here that only grows by `append`/`extend`/`+=` (append_lists.py: its appended
        items at `parts[*]`): the function reads each tensor of the sequence
        (semantics.SEQUENCE_READERS), the buffer among them, and keeps no reference to the list.
        False where that is not known."""
        if not (isinstance(a, ast.Name) and name in api.SEQUENCE_READERS):
            return False
        grown = self.append_list(a.id)
        if self.lookup(a.id) is not None or (
            self._holders()[0].get(a.id) not in ("seq", "tup") and not grown
        ):
            return False
        owned = self.owns(a.id)
        items = _ITEM if grown else _ELEMENT
        if not owned or not all(items.fullmatch(p[len(a.id) :]) for p in owned):
            return False  # a path deeper than an element (`parts[0].x`): not read by `cat`
        for path in sorted(owned):
            ref = self.lookup(path)
            if ref is None:
                continue
            if path.endswith(ANY_ITEM):
                how = f"an item appended to the list `{a.id}`, which `{name}` reads in full"
                how += made_in_loop(self.ctx.scope.node, self.ctx.alloc, a)
            else:
                how = f"`{path}`, in the sequence `{a.id}` that `{name}` reads in full"
            self.read(ref, a, definite=definite, how=how, whole=whole)
        return True

    def _outside_group(self, e: ast.Call, name: str) -> None:
        """Say why a collective's contract was not applied: its group may not hold this rank."""
        if self.rec is not None and self.st.live and not self.st.full:
            self.rec.note(
                self.rec.outcome.contracts,
                e.lineno,
                f"`{name}` writes nothing on a rank outside its `group`: its contract holds only "
                "for the default group or a GroupCoordinator's own `device_group`/`cpu_group`",
            )

    def _buffer_method(self, recv: Ref, m: str, e: ast.Call, args_done: bool = False) -> Ref | None:
        how = self._src(e)[:100]
        if not args_done:
            for _, a in self._args(e):
                self._read_arg(a, f".{m}", definite=True)
        if f"torch.Tensor.{m}" in self.ctx.resolver.patched():
            # The module replaces the method (`torch.Tensor.copy_ = f`): not torch's semantics.
            self.read(recv, e, definite=False, how=f"`{how}` (a method this module replaces)")
            self.lost(e, f"`{how}`")
            return None
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
            and (
                m != "contiguous"
                or _row_major(e, partial(self.ctx.resolver.qualified, self.ctx.scope))
            )
        ):
            return recv if m == "contiguous" else Ref(View.FULL)
        if m in ("expand", "expand_as", "broadcast_to"):
            # Writes through a broadcast view fail; reads still count.
            return Ref(View.MAYBE, derived=recv.deriving())
        if m in api.MAYBE_COPY_METHODS:
            self.read(recv, e, definite=False, how=f"`{how}` may copy the data")
            meta = any(isinstance(n, ast.Constant) and n.value == "meta" for n in walk_all(e))
            held = None
            if m in _SAME_ELEMENTS and not meta:
                # Copied or not, the result holds the same elements: reading all of it reads them.
                held = recv.elements if recv.view is View.MAYBE else recv
            return Ref(
                View.MAYBE, copy=True, derived=recv.deriving() and not meta, elements=held,
                assumes=recv.assumes if held is not None else "",
            )  # fmt: skip
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
            self.st = evolve(self.st, full=False, regions=frozenset())
            return recv
        if m in api.BETA_IGNORES_SELF_METHODS and _beta_zero(e):
            # In place, beta=0: self is ignored and written in full (an in-place op cannot
            # change self's shape).
            self.write(recv, e, full=True, region=None, how=how)
            return recv
        if m in api.READ_MODIFY_WRITE_METHODS:
            whole = m in api.WHOLE_READ_METHODS
            self.read(
                recv, e, definite=True, how=f"`{how}` reads before it writes", whole=whole,
                in_place=True,
            )  # fmt: skip
            self.modified(recv, e, reads_first=whole)
            return recv
        if m in api.READ_METHODS:
            self.read(recv, e, definite=True, how=f"`{how}`", whole=m in api.WHOLE_READ_METHODS)
            return None
        if m in api.EXPOSES_MEMORY_METHODS:
            self.read(recv, e, definite=False, how=f"`{how}` exposes the memory")
            self.lost(e, f"memory exposed by `{how}`")
            return None
        self.read(recv, e, definite=False, how=f"`{how}` (method not known to the analysis)")
        self.lost(e, f"`{how}`")
        return None


_TENSOR_METHODS = api.TENSOR_METHODS
_BUILTIN_CONTRACTS = frozenset(api.BUILTIN_CONTRACTS)
_FUNCTIONAL_VIEWS = api.FUNCTIONAL_VIEWS


def _beta_zero(e: ast.Call) -> bool:
    """`beta=0`, `beta=0.0` or `beta=False`, literally (api.BETA_IGNORES_INPUT)."""
    return any(
        k.arg == "beta"
        and isinstance(k.value, ast.Constant)
        and type(k.value.value) in (int, float, bool)
        and k.value.value == 0
        for k in e.keywords
    )


def _row_major(e: ast.Call, qualify: Callable[[ast.expr], str | None]) -> bool:
    """`x.contiguous()` or `x.contiguous(memory_format=torch.contiguous_format)`: the buffer
    itself when it is already row-major. Another format (`torch.channels_last`) makes a copy."""
    args = [*e.args, *(k.value for k in e.keywords)]
    return not args or (len(args) == 1 and qualify(args[0]) == "torch.contiguous_format")


def _constant_getattr(e: ast.Call) -> bool:
    """`getattr(o, "name")` or `getattr(o, "name", default)`: a plain, constant, public name."""
    return (
        len(e.args) in (2, 3)
        and not e.keywords
        and not any(isinstance(a, ast.Starred) for a in e.args)
        and isinstance(e.args[1], ast.Constant)
        and isinstance(e.args[1].value, str)
        and e.args[1].value.isidentifier()
        and not e.args[1].value.startswith("__")
    )


def _is_tensor_method(name: str) -> bool:
    """A method name that torch.Tensor defines: on a non-buffer receiver it reads its arguments
    and runs no user code (assumes the receiver is a tensor, as such names almost always are)."""
    return name in _TENSOR_METHODS


_FRAME_ATTRS = api.FRAME_ATTRS
_FRAME_NAMES = api.FRAME_NAMES
_REFLECTIVE_ATTRS = api.REFLECTIVE_ATTRS
_ANY = "*"  # a node that can reach every variable (frame introspection): never skipped


# Namespaces of torch's own operators: their `out=` is only written (resized to the result),
# never read (torch.ops.* are custom operators, which may do anything with it).
_TORCH_OP_NAMESPACES = frozenset({"torch", "torch.linalg", "torch.special", "torch.fft"})


def _torch_op_out(qual: str | None, reader: bool) -> bool:
    """`out=` of a known torch operator outside OUT_FUNCTIONS (`torch.nonzero(x, out=idx)`):
    a write of some of it, never a read."""
    return reader and qual is not None and qual.rpartition(".")[0] in _TORCH_OP_NAMESPACES


def _one_positional(e: ast.Call) -> bool:
    """One plain positional argument: `vars(x)`, never `vars()` or `vars(*a)` (a frame)."""
    return len(e.args) == 1 and not e.keywords and not isinstance(e.args[0], ast.Starred)


# Maybe-copies whose result holds every element of the receiver, in order, whatever dtype,
# device or layout it takes (`type` is not one: with no argument it returns a string; `expand`
# repeats elements and may not hold them all).
_SAME_ELEMENTS = frozenset(
    {
        "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "int", "long", "short",
        "bool", "byte", "char", "contiguous", "pin_memory", "type_as", "reshape", "reshape_as",
        "flatten", "ravel",
    }
)  # fmt: skip


def _literal_false(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is False
