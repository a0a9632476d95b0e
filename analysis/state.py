"""The abstract state of one buffer at one program point, and how states meet where paths join.

Must-facts (`full`, `touched`, `regions`, `must` aliases) hold on every path; may-facts (`may`
aliases, `escapes`) on some path. Joining intersects the first and unites the second, which is
what keeps a `safe` verdict true on every path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from enum import Enum
from functools import cached_property


class View(Enum):
    SELF = "self"  # the buffer itself, or a view covering it in the same layout (`x[:]`)
    FULL = "full-view"  # covers every element in another layout (`.t()`, `.view(-1)`)
    PART = "partial-view"  # some elements (`x[:k]`, `.narrow`)
    MAYBE = "maybe"  # the buffer, a view of it, or a copy: writes through it prove nothing


@dataclass(frozen=True)
class Region:
    """`x[lo:hi]` along `dim`, with bounds kept as source text; `names` are the variables the
    bounds mention: rebinding any of them makes the text mean something else."""

    dim: int
    lo: str | None  # None: from the start
    hi: str | None  # None: to the end
    names: frozenset[str]
    # "" for a slice. Other kinds are pieces of a partition of one dimension, chained from the
    # start (None) to the end (None) like slices, that never mix with slices or each other:
    # "step3" for `x[r::3]` (residue r: lo r, hi r + 1), "mask:m" for `x[m]` / `x[~m]` of one bool
    # mask, "split:..." for the views one `chunk`/`split`/`unbind` unpacks into names.
    kind: str = ""

    def text(self) -> str:
        lead = ":, " * self.dim if self.dim >= 0 else "..., "
        if self.kind:
            return f"[{lead}{self.kind} piece {self.lo or 'first'}]"
        return f"[{lead}{self.lo or ''}:{self.hi or ''}]"


@dataclass(frozen=True)
class Ref:
    view: View
    region: Region | None = None  # for PART: which part, when it is a simple slice
    # For MAYBE: the result of a method that copies or hands back the buffer itself (`.to()`,
    # `.contiguous()`, `.cpu()`): a write through it may be a write of the buffer.
    copy: bool = False
    # For MAYBE: certainly the buffer's data, a view of it or a copy made from it right there
    # (`x.to(dev)`, `x[i]` with i an int or a tensor, `x.expand(...)`), never something else (as
    # `x if c else y` may be). A read through it while nothing was written on any path reads
    # unwritten memory either way: at the copy, or now through the view.
    derived: bool = False
    # For MAYBE: the elements of the buffer it certainly holds, whether it copies or aliases them
    # (`x[:-1].to(torch.int64)`, `x.long()`: the same elements flow on), and, in `assumes`, what
    # that takes beyond it (`x[i]` is `x[0]` on the first iteration of `for i in range(n)`). A
    # definite read of all of it reads them (dataflow/uncovered.py); never a write's extent.
    elements: Ref | None = None
    assumes: str = ""

    def deriving(self) -> bool:
        """A result made from what this reference names is certainly the buffer's data."""
        return self.view is not View.MAYBE or self.derived


SELF = Ref(View.SELF)
MAYBE = Ref(View.MAYBE)
MAYBE_COPY = Ref(View.MAYBE, copy=True)


@dataclass(frozen=True)
class Gap:
    """What one write of `State.may_writes` (the one of `line` and `text`) leaves alone, by one
    pattern of dataflow/gaps.py: "pad" (index `key` along `dim` of a padded dimension) or
    "index" (the positions index `key` does not pick). `note` states it and its assumption."""

    kind: str
    dim: int
    key: str
    note: str
    line: int
    text: str


@dataclass(frozen=True)
class State:
    live: bool = False  # the allocation has run on this path
    must: tuple[tuple[str, Ref], ...] = ()  # names/places that refer to the buffer on every path
    may: frozenset[str] = frozenset()  # names/places that may refer to it (a superset of must)
    full: bool = False  # every element written, on every path
    touched: bool = False  # some element written, on every path
    # The first line of a write (or a hand-off to code that may write) on SOME path, 0 if none:
    # an untouched read after it is reachable only where that write did not run.
    some_write: int = 0
    regions: frozenset[Region] = frozenset()  # regions written on every path
    escapes: frozenset[tuple[int, str]] = frozenset()  # (line, how) it became reachable
    # Handed to code we cannot see on some path: an `unproven` issue is recorded there already,
    # so later unknown calls can add evidence but never change the verdict.
    lost: bool = False
    dims: tuple[tuple[str | None, frozenset[str]], ...] = ()  # allocation shape as source text
    # Access paths whose current tensor was written in full through that very path, on every
    # path (`metadata.page_table.copy_(...)`): reading that tensor again reads only written
    # elements, whatever part of the buffer it views. Cross-method metadata objects need this:
    # the view is created in one method, written in a second and read in a third.
    fresh: frozenset[str] = frozenset()
    # Names that may hold the buffer through a store the analysis does not follow (a container
    # display, a lambda, `d[k] = x`), made by code that runs nothing: a later node that mentions
    # one of them may write it; code not handed any of them is assumed not to (only ever for an
    # `unsafe`). CELL: a closure of this function shares the buffer's name, so any call may.
    hidden: frozenset[str] = frozenset()
    # Every write on SOME path so far, as (dim, lo, hi, line, text): it touched at most [lo, hi)
    # along dim (hi None: to the end). None once some write on some path has an extent the
    # analysis does not know (a write through a maybe-view or another layout, a hand-off to
    # unknown code, `out=`, an index or mask write, a full write). A definite read of an element
    # outside every interval reads memory no path wrote (dataflow/uncovered.py).
    may_writes: tuple[tuple[int, int, int | None, int, str], ...] | None = ()
    # Of those writes, the ones known to leave a part alone by construction (dataflow/gaps.py).
    gaps: frozenset[Gap] = frozenset()

    @cached_property
    def footprint(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """What a statement must mention to change this state: plain names (aliases, names in
        region bounds and shape); for attribute paths, `root.first_attribute`; and their roots
        (`self.meta[...]` is touched by `self.meta`, by bare `self`, by `self.method()`).
        Asked once per node of the dataflow, so it is computed once per state."""
        plain: set[str] = set()
        for r in self.regions:
            plain |= r.names
        for _, dim_names in self.dims:
            plain |= dim_names
        for _, ref in self.must:
            if ref.region is not None:
                plain |= ref.region.names
            if ref.elements is not None and ref.elements.region is not None:
                plain |= ref.elements.region.names
        dotted: set[str] = set()
        roots: set[str] = set()
        plain |= self.hidden
        for key in self.may | self.fresh:
            root = _PATH_ROOT.match(key).group()  # type: ignore[union-attr]
            rest = key[len(root) :]
            if rest.startswith("."):
                first = _PATH_ROOT.match(rest[1:]).group()  # type: ignore[union-attr]
                dotted.add(f"{root}.{first}")
                roots.add(root)
            else:
                plain.add(root)
        return frozenset(plain), frozenset(dotted), frozenset(roots)

    @cached_property
    def may_roots(self) -> frozenset[str]:
        """The names through which the buffer may be reached (`h` of `h.buf`, `d` of `d["k"]`):
        asked by many statements of one state, so computed once per state."""
        return frozenset(_PATH_ROOT.match(k).group() for k in self.may)  # type: ignore[union-attr]

    @cached_property
    def exposures(self) -> tuple[tuple[frozenset[str] | None, str], ...]:
        """(labels or None, slot) of each exposed slot (`EXPOSED` may-paths, holders.py): asked
        before every node that loads or stores a slot, so computed once per state."""
        out: list[tuple[frozenset[str] | None, str]] = []
        for key in self.may:
            if key.startswith(EXPOSED):
                rest = key[len(EXPOSED) :]
                if rest.startswith("{"):
                    end = rest.index("}")
                    labels = frozenset(x for x in rest[1:end].split(",") if x)
                    out.append((labels, rest[end + 1 :]))
                else:
                    out.append((None, rest))
        return tuple(out)

    @cached_property
    def stored_through(self) -> tuple[frozenset[str], bool]:
        """What a store may re-point in this state's may-paths: the attribute after each `.` of
        any path (`meta` and `x` of `self.meta['k'].x`), and whether any path has an item.
        Asked before every node that stores an attribute or item (fixpoint._may_repoint)."""
        attrs: set[str] = set()
        item = False
        for key in self.may:
            attrs.update(_ATTR_STEP.findall(key))
            item = item or "[" in key
        return frozenset(attrs), item

    @cached_property
    def owned_memo(self) -> dict[str, list[str]]:
        """Paths through each key that hold the buffer, filled by the dataflow's `owns` as it asks
        (a State never changes, so neither do the answers; `self` is asked about constantly)."""
        return {}

    @property
    def escaped(self) -> bool:
        return bool(self.escapes)

    def must_map(self) -> dict[str, Ref]:
        return dict(self.must)

    def with_must(self, mapping: dict[str, Ref]) -> State:
        return evolve(self, must=tuple(sorted(mapping.items(), key=lambda kv: kv[0])))


_STATE_FIELDS = tuple(f.name for f in fields(State))
_STATE_FIELD_SET = frozenset(_STATE_FIELDS)


def evolve(state: State, **changes: object) -> State:
    """`dataclasses.replace(state, **changes)`, without its per-call walk of the fields and
    `__init__` (the dataflow makes about a million states per scan): a State has no
    `__post_init__`, no init-only or non-init fields, so copying its fields and overriding the
    changed ones builds the same object. The cached properties are not copied: they are
    computed from the fields, which may differ."""
    if not _STATE_FIELD_SET.issuperset(changes):
        raise TypeError(f"State has no field {sorted(set(changes) - _STATE_FIELD_SET)}")
    new = object.__new__(State)
    own, theirs = new.__dict__, state.__dict__
    for name in _STATE_FIELDS:
        own[name] = theirs[name]
    own.update(changes)
    return new


UNREACHED = State()
CELL = "<closure cell>"  # in `State.hidden`: not a name, never mentioned by code
_PATH_ROOT = re.compile(r"[^.\[]*")  # `self` of `self.meta['k'].x`, `meta` of `meta.x`
_ATTR_STEP = re.compile(r"\.([^.\[]*)")  # `meta` and `x` of `self.meta['k'].x`
# A may-path that names a slot, not an object (holders.py): never a Python name.
EXPOSED = "<exposed>"


def may_write_order(w: tuple[int, int, int | None, int, str]) -> tuple[int, str, int, int, int]:
    """One order for `State.may_writes`, by line: equal sets make equal states."""
    return w[3], w[4], w[0], w[1], -1 if w[2] is None else w[2]


def join(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    # A path on which the allocation has not run yet says nothing about the buffer.
    if not a.live:
        return b
    if not b.live:
        return a
    am, bm = a.must_map(), b.must_map()
    must = {k: v for k, v in am.items() if bm.get(k) == v}
    dims = tuple(x if x == y else (None, frozenset()) for x, y in zip(a.dims, b.dims, strict=False))
    return State(
        live=True,
        must=tuple(sorted(must.items(), key=lambda kv: kv[0])),
        may=a.may | b.may,
        full=a.full and b.full,
        touched=a.touched and b.touched,
        some_write=min((x for x in (a.some_write, b.some_write) if x), default=0),
        regions=a.regions & b.regions,
        escapes=a.escapes | b.escapes,
        lost=a.lost or b.lost,
        dims=dims,
        fresh=a.fresh & b.fresh,
        hidden=a.hidden | b.hidden,
        may_writes=(
            None
            if a.may_writes is None or b.may_writes is None
            else tuple(sorted(set(a.may_writes) | set(b.may_writes), key=may_write_order))
        ),
        gaps=a.gaps | b.gaps,
    )
