"""State effects of the evaluator: bind, kill, read, write, escape, allocate for one buffer."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import partial

from zeroopt.analysis import semantics as api
from zeroopt.analysis.cfg import Node
from zeroopt.analysis.dataflow import gaps, uncovered
from zeroopt.analysis.dataflow.branch_facts import contradicted
from zeroopt.analysis.dataflow.const_gaps import negative_size_name
from zeroopt.analysis.dataflow.loops import cached_loop_cover
from zeroopt.analysis.dataflow.outcome import UNPROVEN, UNSAFE, VIEW_READ, Context, _Recorder
from zeroopt.analysis.dataflow.places import (
    _alloc_dims,
    _covered,
    _fresh_path,
    _summary_variants,
    _under,
    _written_place,
    empty_region,
)
from zeroopt.analysis.dataflow.zero_trip import counts_its_size, unrelated, zero_trip_loop
from zeroopt.analysis.resolve import walk
from zeroopt.analysis.state import (
    CELL,
    MAYBE,
    SELF,
    UNREACHED,
    Gap,
    Ref,
    Region,
    State,
    View,
    evolve,
    may_write_order,
)

_ROOT = re.compile(r"[^.\[]*")  # `d` of `d['a']`, `box` of `box.t`


class Effects:
    """Abstract execution of one CFG node for one buffer. Mutates `self.st`."""

    def __init__(self, ctx: Context, state: State, rec: _Recorder | None, node: Node) -> None:
        self.ctx = ctx
        self.st: State = state
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
            if severity == UNSAFE and kind == "read":
                ctx = self.ctx
                test = contradicted(ctx.scope.node, ctx.alloc, node, ctx.zero_trip_memo)
                if test:  # branch_facts.py: the read runs only where the allocation did not
                    severity = UNPROVEN
                    what = (
                        f"read only where `{test}` differs from its value at the allocation, which "
                        f"nothing between them can change but a stateful test: {what}"
                    )
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

    def _roots(self) -> frozenset[str]:
        """Names through which the buffer may be reached: `h` for `h.buf`, `d` for `d["k"]`.
        Code that runs later and uses one of them (a lambda, a generator) may read it."""
        return self.st.may_roots

    def owns(self, key: str) -> list[str]:
        memo = self.st.owned_memo
        owned = memo.get(key)
        if owned is None:
            through = (key + ".", key + "[")  # _under(p, key), spelled inline: asked constantly
            owned = [p for p in self.st.may if p.startswith(through)]
            if "[" in key:
                for v in _summary_variants(key):
                    owned += [p for p in self.st.may if p.startswith((v + ".", v + "["))]
            memo[key] = owned
        return owned

    def forget_value(self, name: str) -> None:
        """`name` now holds another value (`k += 1`): slice texts that mention it mean something else."""
        st = self.st
        regions = frozenset(r for r in st.regions if name not in r.names)
        must = {k: (Ref(v.view, None) if _bounds_name(v, name) else v) for k, v in st.must}
        dims = tuple(d if name not in d[1] else (None, frozenset()) for d in st.dims)
        self.st = evolve(st, regions=regions, dims=dims).with_must(must)

    def kill(self, key: str) -> None:
        """`key` is rebound: it and everything reached through it no longer name the buffer."""
        st = self.st

        through = (key + ".", key + "[")  # _under(k, key), spelled inline

        def kept(k: str) -> bool:
            return k != key and not k.startswith(through)

        plain = "." not in key and "[" not in key
        if (
            (key not in st.may_roots if plain else all(kept(k) for k in st.may))
            and all(kept(k) for k in st.fresh)
            and all(kept(k) for k, _ in st.must)
            and not (plain and key in st.footprint[0])
        ):
            # No path through `key`, and (a plain name) no slice bound, shape or must-alias's
            # region names it (footprint[0] holds all of those): the state below would be equal.
            return
        must = {k: v for k, v in st.must if kept(k)}
        may = frozenset(k for k in st.may if kept(k))
        fresh = frozenset(k for k in st.fresh if kept(k))
        regions, dims = st.regions, st.dims
        if plain:
            # Slice bounds and shape dims that mention the name now mean something else.
            regions = frozenset(r for r in regions if key not in r.names)
            must = {k: (Ref(v.view, None) if _bounds_name(v, key) else v) for k, v in must.items()}
            dims = tuple(d if key not in d[1] else (None, frozenset()) for d in dims)
        self.st = evolve(st, may=may, fresh=fresh, regions=regions, dims=dims).with_must(must)

    def demote(self, key: str) -> None:
        """`key` may have been rebound: keep it as a may-alias so reads through it still count."""
        must = {k: v for k, v in self.st.must if k != key and not _under(k, key)}
        fresh = frozenset(k for k in self.st.fresh if k != key and not _under(k, key))
        self.st = evolve(self.st, fresh=fresh).with_must(must)

    def rebind_elsewhere(self, component: str, keep: str, owner: str = "") -> None:
        """`obj.<attr> = v` (or `obj[<key>] = v`) through some name for `obj`: every other path
        that ends in the same component may name that object too, so it no longer provably
        holds what it held. Must-aliases become may-aliases; fresh facts are dropped. Where
        `owner` (the place stored into) is one of the distinct objects, the same slot of
        another of them is not that object's (Context.distinct_objects)."""
        distinct = self.ctx.distinct_objects
        mine = bool(owner) and owner in distinct

        def hit(k: str) -> bool:
            return (
                component in k
                and k != keep
                and not _under(k, keep)
                and not (mine and _other_slot(k, component, owner, distinct))
            )

        must = {k: v for k, v in self.st.must if not hit(k)}
        fresh = frozenset(k for k in self.st.fresh if not hit(k))
        self.st = evolve(self.st, fresh=fresh).with_must(must)

    def bind(self, key: str, ref: Ref, node: ast.AST) -> None:
        if ref.assumes:
            # What the reference holds on a loop's first iteration is claimed only within the
            # statement that made it: a later statement may run under a condition on the loop.
            ref = Ref(ref.view, ref.region, ref.copy, ref.derived)
        if self.conditional:
            self.st = evolve(self.st, may=self.st.may | {key})
            return
        must = self.st.must_map()
        must[key] = ref
        self.st = evolve(self.st, may=self.st.may | {key}).with_must(must)

    def escape(self, node: ast.AST, how: str) -> None:
        if not self.st.full:
            self.st = evolve(
                self.st, escapes=self.st.escapes | {(getattr(node, "lineno", self.line), how)}
            )

    def lost(self, node: ast.AST, how: str, handed: bool = True) -> None:
        """The buffer reaches something we cannot follow: any later use there is a possible read."""
        if self.st.fresh:
            # Code we cannot see may now re-point or resize a tensor of a fresh path.
            self.st = evolve(self.st, fresh=frozenset())
        if not self.st.full:
            self.escape(node, how)
            self._issue(UNPROVEN, node, "escape", how)
            self.st = evolve(self.st, lost=True)
            self._wrote_somewhere(node)
            if handed:
                self.may_write_anything()
            if handed and not self.conditional:
                # Whoever got it may also have written it: later reads are no longer provably
                # reads of unwritten memory (`unsafe`), only possibly so.
                self.st = evolve(self.st, touched=True)
            elif handed and self.raised:
                # The code it was handed to may have written it before raising: a read in a
                # handler is possible, not proven.
                self.wrote_raising = True

    def park(self, node: ast.AST, how: str, whole: ast.AST) -> None:
        """The buffer is stored where the analysis does not follow it (a container display, a
        lambda, `d[k] = x`) by code that runs nothing. As `lost`, but nothing could write it
        yet: the names of this node that may now hold it are remembered, and a later node that
        mentions one of them may write it (statements.py). Code handed none of them is assumed
        not to: that assumption only ever makes an `unsafe`, and its evidence says so."""
        st = self.st
        a = self.node.ast_node
        simple = (ast.Name, ast.Attribute, ast.Subscript)
        if (
            not (
                (
                    isinstance(a, ast.Assign)
                    and (
                        any(o is whole for o in _concatenated(a.value))
                        or any(t is whole for t in a.targets)
                    )
                    and all(isinstance(t, simple) for t in a.targets)
                )
                or (
                    isinstance(a, ast.AnnAssign)
                    and a.value is whole
                    and isinstance(a.target, simple)
                )
                or (isinstance(a, ast.Return) and a.value is whole)
            )
            or st.full
        ):
            # Used further inside the same node (`for t in (x, y)`, `[x][0].fill_(1)`, an
            # argument): its holder is not a name the later nodes can be checked against.
            self.lost(node, how)
            return
        aliases = self._roots()
        holders = (
            {n.id for n in walk([a]) if isinstance(n, ast.Name) and n.id not in aliases}
            if a is not None
            else set()
        )
        self.lost(node, how, handed=False)
        if not self.conditional:
            self.st = evolve(self.st, hidden=self.st.hidden | holders)

    def hidden_mentioned(self, node: ast.AST) -> None:
        """A node that mentions a name that may hold the buffer (`park`): it may write it."""
        st = self.st
        if not (st.hidden and st.live and not st.full):
            return
        if not any(isinstance(n, ast.Name) and n.id in st.hidden for n in walk([node])):
            return
        self.may_write_anything()
        if not self.st.touched and not self.conditional:
            self.st = evolve(self.st, touched=True)

    def _zero_trip(self, node: ast.AST) -> ast.For | ast.AsyncFor | ast.While | None:
        ctx = self.ctx
        fn = ctx.scope.node
        loop = zero_trip_loop(fn, ctx.alloc, node, self.st.some_write, ctx.zero_trip_memo)
        if not isinstance(loop, ast.For):
            return None
        # Only a loop whose passes would write every element if it counted the buffer's own size
        # (loops.py): partial rows, masks and strided slices leave elements a later read may
        # take, which the zero-trip path only stands in for.
        qualified = partial(ctx.resolver.qualified, ctx.scope)
        for name, place in self.st.must_map().items():
            cover = cached_loop_cover(loop, qualified, ctx.src_memo, name, fn)
            if place == SELF and cover is not None and cover.full:
                bounds = [bound for _, bound, _ in cover.sizes]
                if counts_its_size(cover.sizes, ctx.alloc, fn):
                    return loop  # run no pass, the loop leaves the buffer empty
                return loop if unrelated(bounds, cover.variables, ctx.alloc, fn) else None
        return None

    def _assumed(self, node: ast.AST) -> str:
        """The callees assumed not to write the buffer before this read, for the evidence."""
        if self.rec is None:
            return ""
        line = getattr(node, "lineno", self.line)
        names = []
        for at, callee in self.rec.outcome.assumed:
            if at <= line and callee not in names:
                names.append(callee)
        if not names:
            return ""
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return (
            f" (assuming {shown} {'does' if len(names) == 1 else 'do'} not write it: not handed it)"
        )

    def read(
        self, ref: Ref, node: ast.AST, definite: bool, how: str, whole: bool = False,
        in_place: bool = False, holder: bool = False,
    ) -> None:  # fmt: skip
        """`whole`: the operation reads every element `ref` views (an operator, a reduction, a
        concatenation: semantics.WHOLE_READ_*), not only what an index or mask picks.
        `holder`: an object holding the buffer is used as a whole (not an `unsure_reads` line).
        `in_place`: a read-modify-write (`x += 1`, `x.clamp_()`), whose result lands in the
        buffer itself, where a later write may overwrite it: constant gaps (const_gaps.py) do
        not claim it (a later read of that position still can)."""
        st = self.st
        fresh = _fresh_path(node, st.fresh) if st.fresh else None
        if fresh is not None:
            self._event(VIEW_READ)
            if self.rec is not None:
                self._note_view(self.rec.outcome.view_reads, node, f"`{fresh}`: {how}")
            return
        if ref.view is View.PART and empty_region(ref.region):
            assert ref.region is not None
            if not ref.region.names & self.ctx.volatile_bounds:
                return  # `x[:0]`, `x[k:k]` with k an int: no element is read
            definite = False  # `x[k:k]` reads everything where k is None
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
        # What a definite read surely reads of a maybe-copy that holds known elements
        # (`Ref.elements`): claimed only with its assumption, and never by the guard, which
        # asks for a read on every path.
        carried = ref.elements if ref.view is View.MAYBE else None
        if carried is not None and (not definite or self.ctx.certain_reads_only):
            carried = None
        if ref.view is View.MAYBE and not (ref.derived and not st.touched and not st.some_write):
            # Only the buffer's own data with nothing written anywhere yet (Ref.derived) is
            # certainly read through a maybe-view.
            definite = False
        elif ref.view is View.MAYBE:
            how = (
                f"{how} (a view of the buffer or a copy made from it, nothing written on any path)"
            )
        if self.ctx.no_data:
            carried = None
        if definite and self.ctx.no_data:
            definite, how = False, f"{how} ({self.ctx.no_data})"
        target = carried or ref
        element = (
            uncovered.uncovered_element(st.may_writes, target, st.dims)
            if (definite or carried) and whole and not self.conditional and st.may_writes
            else None
        )
        if element is not None and negative_size_name(self.ctx.alloc, self.ctx.scope.node):
            element = None  # `zeros(e + 1)` after `e = -1`: the element need not exist
        if element is not None and in_place and self.ctx.seed is not None:
            # Across functions, a read-modify-write (`t += 1`) is not claimed: its result lands
            # in the buffer, where the reader may never look again (the generated programs
            # showed such dead reads); a later read of the element is judged on its own.
            element = None
        # The buffer untouched only where a loop that writes it ran no pass (zero_trip.py).
        zero_trip = (
            self._zero_trip(node)
            if definite and not st.touched and st.some_write and not self.ctx.certain_reads_only
            else None
        )
        gap = None
        if definite and whole and not self.conditional and element is None:
            if (st.touched or zero_trip is not None) and not self.ctx.certain_reads_only:
                gap = gaps.unwritten(st, ref)  # assumed patterns: never for the CI guard
            if (
                gap is None
                and not in_place
                and (st.touched or self.ctx.certain_reads_only or zero_trip is not None)
            ):
                gap = gaps.const_read(st, ref, self.ctx.alloc)  # as certain as `element`
        if element is not None and (
            st.touched or self.ctx.certain_reads_only or zero_trip is not None
        ):
            assert st.may_writes
            note = uncovered.nonempty_note(st.dims, element, target)
            if carried is not None and ref.assumes:
                note = f"{note}; {ref.assumes}"
            elif carried is not None:
                how = f"{how} (it holds the buffer's elements, copied or not)"
            text = uncovered.evidence(st.may_writes, element, st.dims, how, note)
            self._issue(UNSAFE, node, "read", f"{text}{self._assumed(node)}")
        elif gap is not None:
            self._issue(UNSAFE, node, "read", f"{gap}: {how}{self._assumed(node)}")
        elif (
            definite
            and not st.touched
            and self.ctx.certain_reads_only
            and 0 < st.some_write < getattr(node, "lineno", self.line)
        ):
            self._issue(
                UNPROVEN,
                node,
                "read",
                f"read before any write only where the write at line {st.some_write} does not "
                f"run (a branch not taken, a loop with no iteration): {how}",
            )
        elif zero_trip is not None:
            self._issue(
                UNPROVEN,
                node,
                "read",
                f"read before any write only where the loop at line {zero_trip.lineno} runs no pass "
                "(counting the buffer's own size, its passes would write every element): a read "
                "of unwritten memory only if it can run none while the buffer has elements, which "
                f"the code does not show (a loop over the buffer's own size would decide it): {how}",
            )
        elif definite and not st.touched:
            self._issue(UNSAFE, node, "read", f"read before any write: {how}{self._assumed(node)}")
        elif definite:
            self._issue(
                UNPROVEN, node, "read", f"read after only partial or possible writes: {how}"
            )
        else:
            self._issue(UNPROVEN, node, "possible-read", f"possible read: {how}")
            rec = self.rec if self.ctx.seed is not None and not holder else None
            held = ref.elements if ref.view is View.MAYBE and ref.elements is not None else ref
            if rec is not None and (
                not st.may_writes
                or uncovered.uncovered_element(st.may_writes, held, st.dims) is None
            ):
                rec.outcome.unsure_reads.append(getattr(node, "lineno", self.line))

    def write(
        self, ref: Ref, node: ast.AST, full: bool, region: Region | None, how: str,
        resized: bool = False,
    ) -> None:  # fmt: skip
        """`resized`: an `out=` tensor, which PyTorch may resize to the result's shape."""
        self._wrote_somewhere(node)
        extent = None if self.capture else uncovered.write_extent(ref, region, full, resized)
        gap = None
        if not full and not self.capture and self.st.may_writes is not None:
            line = getattr(node, "lineno", self.line)
            gap = gaps.gap_write(
                self.ctx.alloc, self.ctx.scope.node, self.ctx.mask_names, ref, node, line,
                self._src(node)[:60],
            )  # fmt: skip
            if gap is not None:
                extent = (max(gap.dim, 0), 0, None)
            else:  # a constant part left alone: the interval of `extent` stays exact
                gap = gaps.const_write(
                    self.ctx.alloc, self.ctx.scope.node, ref, region, node, line,
                    self._src(node)[:60],
                )  # fmt: skip
        self._may_write(extent, node, gap)
        if full and not self.capture and not self.conditional:
            written = _written_place(node)
            if written is not None:
                self.st = evolve(self.st, fresh=self.st.fresh | {written})
                if self.rec is not None:
                    self._note_view(self.rec.outcome.view_writes, node, f"`{written}`: {how}")
        if ref.view is View.MAYBE:
            # The buffer, a view of it or a copy (`.to()` of the same dtype, `.contiguous()`,
            # `.cpu()` on cpu hand back the buffer itself): the write proves nothing, but a later
            # read is no longer provably a read of unwritten memory.
            if ref.copy and not self.capture and not self.conditional and not self.st.touched:
                self.st = evolve(self.st, touched=True)
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
            self.st = evolve(st, full=True, touched=True)
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
        self.st = evolve(st, touched=True, regions=regions, full=st.full or covered)

    def may_write_anything(self) -> None:
        """Some write, on some path, may have written any element (uncovered.py)."""
        if self.st.may_writes is not None:
            self.st = evolve(self.st, may_writes=None)

    def modified(self, ref: Ref, node: ast.AST, reads_first: bool) -> None:
        """A read-modify-write (`x[1:] += y`, `x.add_(y)`), read already. One that reads every
        element it writes (`reads_first`: `+=`, `add_`, `cumsum_`) needs no may-write: an element
        it touches first was read unwritten right there, so a later read of an element no other
        write covers still follows a read of unwritten memory. Others (`index_reduce_` with
        `include_self=False`, `addmm_` with a beta that may be 0) may write without reading."""
        if not reads_first:
            self._may_write(uncovered.write_extent(ref, None, full=False), node)

    def _may_write(
        self, extent: tuple[int, int, int | None] | None, node: ast.AST, gap: Gap | None = None
    ) -> None:
        """A write that may have run: its interval is kept (uncovered.py), or nothing is known.
        A write of unknown interval that leaves a known part alone (`gap`) is kept as covering
        all of its dimension, with what it leaves alone beside it (gaps.py)."""
        writes = self.st.may_writes
        if writes is None:
            return
        if extent is None:
            self.st = evolve(self.st, may_writes=None)
            return
        entry = (*extent, getattr(node, "lineno", self.line), self._src(node)[:60])
        if gap is not None:
            self.st = evolve(self.st, gaps=self.st.gaps | {gap})
        if entry not in writes:
            ordered = tuple(sorted((*writes, entry), key=may_write_order))
            self.st = evolve(self.st, may_writes=ordered)

    def _wrote_somewhere(self, node: ast.AST) -> None:
        if not self.st.some_write:
            self.st = evolve(self.st, some_write=getattr(node, "lineno", self.line))

    def _note_view(self, bucket: list[tuple[int, str]], node: ast.AST, text: str) -> None:
        assert self.rec is not None
        phase = f"[{self.node.phase}] " if self.node.phase else ""
        self.rec.note(bucket, getattr(node, "lineno", self.line), phase + text)

    def unknown_call(self, node: ast.AST, what: str | Callable[[], str]) -> None:
        """Code we cannot see runs: it can read the buffer if the buffer is reachable from it.
        `what` may be a function: its text is made only if an issue is recorded."""
        st = self.st
        if (
            st.live
            and st.hidden
            and (
                CELL in st.hidden
                or any(
                    isinstance(n, ast.Name) and (n.id in st.hidden or n.id in self._roots())
                    for n in walk([node])
                )
            )
        ):
            self.may_write_anything()  # handed a holder of it: it may write any part of it
            st = self.st
        if st.live and not st.full and not st.touched and (st.escaped or st.hidden):
            if CELL in st.hidden or (
                st.hidden
                and any(
                    isinstance(n, ast.Name) and (n.id in st.hidden or n.id in self._roots())
                    for n in walk([node])
                )
            ):
                # Handed a holder of it, or a closure of this function shares it: it may write it.
                if not self.conditional:
                    self.st = evolve(st, touched=True)
            elif self.rec is not None:
                callee = (
                    f"`{self._src(node.func)[:60]}`"
                    if isinstance(node, ast.Call)
                    else (what if isinstance(what, str) else what())
                )
                self.rec.note(self.rec.outcome.assumed, getattr(node, "lineno", self.line), callee)
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
            self.may_write_anything()

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
            others = [k for k in st.may if not k.startswith("<")]  # not holders.EXPOSED
            if (others or st.escaped) and not self._rebinds_holders(node, others):
                self._issue(
                    UNPROVEN, node, "reallocated",
                    "allocated again while the previous buffer from this line, not fully written, "
                    f"may still be reachable through {', '.join(sorted(others)) or 'an escape'}",
                )  # fmt: skip
        dims = _alloc_dims(node, self.ctx.int_names) if self.ctx.shape_known else ()
        # A literal zero-size dimension: no element exists, so none can be read unwritten.
        empty = self.ctx.zero_size or any(text == "0" for text, _ in dims)
        if empty and self.rec is not None:
            self.rec.note(
                self.rec.outcome.writes, node.lineno, "a dimension is 0: the buffer has no elements"
            )
        self.st = evolve(UNREACHED, live=True, dims=dims, full=empty, touched=empty)
        seed = self.ctx.seed
        if seed is not None and not empty:
            # Partly written already (analysis/partial_reads.py): only an element outside every
            # write the other function may have made is a read of unwritten memory.
            self.st = evolve(
                self.st, touched=True, some_write=node.lineno, may_writes=seed.may_writes,
                dims=seed.dims or dims, gaps=seed.gaps,
            )  # fmt: skip
        if self.ctx.frames_read:
            self.escape(node, "this module reads call frames: a callee may read any local")
        return SELF

    def _rebinds_holders(self, alloc: ast.Call, holders: list[str]) -> bool:
        """`b = torch.zeros(n)` (or `d = {'a': torch.zeros(n)}`) run again: the statement binds
        the new value to every name through which the previous buffer may be reached, and its
        value never mentions them, so after it the previous buffer is unreachable and can never
        be read. Not when it escaped, was handed on or hidden (then other code may hold it). An
        exception before the binding keeps the previous buffer: that path carries the state as
        it was before the statement (the fixpoint's exceptional edges)."""
        st = self.st
        stmt = self.node.ast_node
        if st.escaped or st.lost or st.hidden or not isinstance(stmt, ast.Assign):
            return False
        if not all(isinstance(t, ast.Name) for t in stmt.targets):
            return False
        names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        mentioned = {n.id for n in walk([stmt.value]) if isinstance(n, ast.Name)}
        inside = any(n is alloc for n in walk([stmt.value]))
        return (
            inside
            and names.isdisjoint(mentioned)
            and all(_ROOT.match(k).group() in names for k in holders)  # type: ignore[union-attr]
        )

    # --- values and views ------------------------------------------------------------------
    def eval(self, e: ast.expr | None, as_base: bool = False) -> Ref | None:
        """The buffer `e` evaluates to, if any, after its effects: expressions.py defines it."""
        raise NotImplementedError

    def _owner_used(self, e: ast.expr, key: str) -> None:
        places = ", ".join(sorted(self.owns(key)))
        self.read(
            MAYBE, e, definite=False, how=f"`{self._src(e)}` holds {places} and is used as a whole",
            holder=True,
        )  # fmt: skip
        self.lost(e, f"`{self._src(e)}`, which holds the buffer, is used as a whole")

    def _derive(self, base: Ref, view: View) -> Ref:
        if base.view is View.MAYBE:
            # A view of a maybe-copy is still one; a part of it no longer holds all its elements.
            if view is View.FULL or base.elements is None:
                return base
            return Ref(View.MAYBE, copy=base.copy, derived=base.derived)
        if view is View.FULL:
            if base.view is View.PART and empty_region(base.region):
                return base  # `x[:0].T` has no element either
            return Ref(View.FULL) if base.view in (View.SELF, View.FULL) else Ref(View.PART)
        return Ref(View.PART)

    def _eval_value(self, a: ast.expr) -> Ref | None:
        if isinstance(a, ast.Starred):
            ref = self.eval(a.value)
            return MAYBE if ref is not None else None
        return self.eval(a)


def _bounds_name(ref: Ref, name: str) -> bool:
    """A slice bound of the reference, or of the elements it holds, mentions `name`."""
    inner = ref.elements.region if ref.elements is not None else None
    return bool((ref.region and name in ref.region.names) or (inner and name in inner.names))


def _other_slot(key: str, component: str, owner: str, distinct: frozenset[str]) -> bool:
    """`key` goes through `component` only as the slot of a distinct object other than
    `owner` (`b.x...` for a store into `a.x`; `d2[...]` for one into `d[k]`)."""
    for d in distinct:
        slot = d + component
        if d == owner or not key.startswith(slot):
            continue
        rest = key[len(slot) :]
        if component.startswith(".") and rest and rest[0] not in ".[":
            continue  # `b.xy`, not `b.x`
        if component not in rest:
            return True
    return False


def _concatenated(value: ast.expr) -> list[ast.expr]:
    """The operands of `a + b + c` (the value itself otherwise): a display concatenated into the
    value an assignment binds is held by the names it binds, like the value itself."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return [*_concatenated(value.left), *_concatenated(value.right)]
    return [value]
