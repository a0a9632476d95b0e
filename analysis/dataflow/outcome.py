"""What one buffer's dataflow produced: issues, phase events, coupled reads; the analysis context."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zeroopt.analysis.capture import capture_functions
from zeroopt.analysis.dataflow.places import mask_names, store_hooks
from zeroopt.analysis.kernel_contracts import KernelContract
from zeroopt.analysis.options import Contract
from zeroopt.analysis.records import imported_names, plain_dataclasses
from zeroopt.analysis.resolve import Resolver, Scope
from zeroopt.analysis.state import State

if TYPE_CHECKING:
    from zeroopt.analysis.summaries import Summaries

UNSAFE = "unsafe"
UNPROVEN = "unproven"
VIEW_READ = "read (a view written in full)"  # phase event of a read covered by a fresh path
RETURNED = "returned to the caller"  # the escape of `return x`, x the buffer itself
RETURNED_VIEW = f"{RETURNED} as a view of all of it"  # `return x.t()`, `return x.view(-1)`
# `return a, x, b` / `[a, x]` / `{"k": x, ...}`: x itself is one slot of a display no other slot
# of which holds it (analysis/returned_slots.py follows it to the callers that take it out).
_RETURNED_IN = re.compile(
    rf"{RETURNED} as (?:element (\d+) of a (tuple|list) of (\d+)|the value of key ('[^'\\]*') of a dict"
    r"|field `(\w+)` of a new `(\w+)`)"
)
# `return Meta(f=x)` for a plain dataclass (records.py): at each caller the call stands for
# `<new Meta>(f=<the allocation>)`, a name no source can spell (dataflow/stores.py record_of).
NEW_RECORD = "<new "


def returned_in(kind: str, label: int | str, size: int) -> str:
    """The escape of a buffer returned as slot `label` of a `kind` display of `size` slots."""
    if kind == "dict":
        return f"{RETURNED} as the value of key {label!r} of a dict"
    if kind == "record":  # label: `Class.field`
        cname, _, field_name = str(label).partition(".")
        return f"{RETURNED} as field `{field_name}` of a new `{cname}`"
    return f"{RETURNED} as element {label} of a {kind} of {size}"


def display_slots(value: ast.expr | None) -> list[tuple[int | str, ast.expr]] | None:
    """The slots of a tuple or list display without starred items, or of a dict display whose
    keys are distinct identifier strings (no `**`): (index or key, value expression)."""
    if isinstance(value, ast.Tuple | ast.List):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        return list(enumerate(value.elts))
    if isinstance(value, ast.Dict):
        keys: list[str] = []
        for k in value.keys:
            if not (
                isinstance(k, ast.Constant) and type(k.value) is str and k.value.isidentifier()
            ):
                return None
            keys.append(k.value)
        if len(set(keys)) != len(keys):
            return None
        return list(zip(keys, value.values, strict=True))
    return None


def returned_slot(how: str) -> tuple[str, int | str, int] | None:
    """(kind, label, size) of a `returned_in` escape, None for any other."""
    m = _RETURNED_IN.fullmatch(how)
    if m is None:
        return None
    if m.group(4) is not None:
        return "dict", m.group(4)[1:-1], 0
    if m.group(5) is not None:
        return "record", f"{m.group(6)}.{m.group(5)}", 0
    return m.group(2), int(m.group(1)), int(m.group(3))


@dataclass(frozen=True)
class Issue:
    severity: str  # UNSAFE or UNPROVEN
    line: int
    kind: str
    text: str


@dataclass
class BufferOutcome:
    """What the dataflow concluded for one allocation: the rule turns it into a finding."""

    issues: list[Issue] = field(default_factory=list)
    writes: list[tuple[int, str]] = field(default_factory=list)  # full writes seen (line, text)
    partial_writes: list[tuple[int, str]] = field(default_factory=list)
    contracts: list[tuple[int, str]] = field(default_factory=list)
    reads_after_write: int = 0
    coupled: list[tuple[int, str]] = field(default_factory=list)  # (line, description)
    # Kernel calls that read the buffer, as (id of the call node, parameter): `(c, "seqused_k")`.
    kernel_args: set[tuple[int, str]] = field(default_factory=set)
    # Where rows of the buffer are read up to another argument's values: (id of the call node,
    # that parameter). A buffer with that argument in its `kernel_args` is coupled to this one.
    couplings: set[tuple[int, str]] = field(default_factory=set)
    # Reads through a view that was written in full through the same path: (line, text).
    view_reads: list[tuple[int, str]] = field(default_factory=list)
    view_writes: list[tuple[int, str]] = field(default_factory=list)
    # In-place layout changes (`x.t_()`, `x.unsqueeze_(0)`): the caller's indices name other
    # elements afterwards, so a callee doing one is never neutral for its argument (line, text).
    relayouts: list[tuple[int, str]] = field(default_factory=list)
    phase_events: set[tuple[str, str]] = field(default_factory=set)  # (phase, "read"/"write"/...)
    # Calls assumed not to write the buffer because they are not handed it (nor a view or a
    # holder of it): (line, callee). Only an `unsafe` read after them relies on this.
    assumed: list[tuple[int, str]] = field(default_factory=list)
    # Reads by a callee claimed where its reading path depends on arguments of the call
    # (summary_conditions.py): (line, the names those arguments mention, comma-separated).
    conditioned: list[tuple[int, str]] = field(default_factory=list)
    # Across functions (`Context.seed`): lines of possible reads (a hand-off, a maybe-copy) of
    # what holds no element surely left unwritten (`y[1:]` of a buffer whose element 0 no write
    # covered), or of what the analysis cannot place.
    unsure_reads: list[int] = field(default_factory=list)
    reached: bool = False
    gave_up: str = ""  # non-empty when the analysis stopped early (too large, ...)
    # The state at the function's normal exit, joined over every path (None: never returns).
    exit_state: State | None = field(default=None, repr=False)


@dataclass
class Context:
    """Everything about the allocation and its function that does not change along paths."""

    alloc: ast.Call
    resolver: Resolver
    scope: Scope
    contracts: dict[str, Contract]
    source_lines: list[str]
    escape_on_bind: frozenset[str]  # globals, closure cells, class/module names
    contiguous: bool  # a fresh torch.zeros/new_zeros; zeros_like may copy odd strides
    capture_nodes: frozenset[int] = frozenset()
    # Lifecycle mode: the object rooted here is private to the modelled methods, and the end of
    # the modelled program is not an exit to unknown readers.
    private_roots: frozenset[str] = frozenset()
    # Dicts, lists and tuples made by a display that never leave the function (containers.py):
    # a store into one is no escape, and a lookup with a plain key is one of its values.
    local_containers: frozenset[str] = frozenset()
    plain_keys: frozenset[str] = frozenset()  # names whose dict lookup runs no code
    check_exit: bool = True
    # Attributes the class assigns on `self` (not methods): calling one does not pass `self`.
    self_callables: frozenset[str] = frozenset()
    # Names that provably hold immutable ints: the only ones slice bounds may mention.
    int_names: frozenset[str] = frozenset()
    # Of those, the names only known to hold some value slicing accepts (scalars.volatile_bounds):
    # code that runs may change them in place, so the dataflow forgets slices they bound there.
    volatile_bounds: frozenset[str] = frozenset()
    # Kernel contracts declared in the configuration, checked before the built-in ones.
    kernels: tuple[KernelContract, ...] = ()
    # Code of this module reads call frames (`sys._getframe(1).f_locals`): any callee may read
    # the caller's locals, so a buffer is reachable from the start.
    frames_read: bool = False
    # Reads of this buffer cannot see memory (a fake implementation, the meta device): why.
    no_data: str = ""
    # `empty_like(x)` of a zero-size `x` made just before: the buffer has no element.
    zero_size: bool = False
    # The guard (ZO002): a read is `unsafe` only if no write ran before it on any path.
    certain_reads_only: bool = False
    # Names the engine passes a tensor for on a witness schedule (lifecycle_witness.py): an
    # index by one of them is a gather. Set only where a read may only make `unsafe`.
    tensor_names: frozenset[str] = frozenset()
    # Names each of which only ever holds an object made by its own constructor call (or
    # nothing): two of them never name one object, so a store into `a.x` leaves `b.x` as it
    # was (lifecycle_objects.py).
    distinct_objects: frozenset[str] = frozenset()
    # Per name or `self` place, labels of the sites whose new objects it may hold
    # (lifecycle_objects.object_origins); a place not listed may hold any object. A slot the
    # buffer was stored into on an object of some labels is not reached through a place with
    # none of them (holders.py).
    object_origins: dict[str, frozenset[str]] = field(default_factory=dict)
    # Source text of expressions, by node id: the same calls are unparsed for every buffer and
    # every visit of the fixpoint. The node is kept with its text, so its id cannot be reused
    # while the memo lives. Share one memo only among contexts over the same trees.
    src_memo: dict[int, tuple[ast.AST, str]] = field(default_factory=dict)
    # Parent maps of functions asked whether a loop's zero-trip path is a read's only one
    # (zero_trip.py), by the function's id, kept with the function.
    zero_trip_memo: dict[int, object] = field(default_factory=dict)
    # Summaries of the functions of the scanned tree (summaries.py): None leaves calls unknown.
    summaries: Summaries | None = None
    # False where the allocation is a call of a function of the tree that returns a buffer
    # (analysis/returned.py): its arguments are not the buffer's shape.
    shape_known: bool = True
    # The state the buffer starts in instead of "nothing written": the writes another function
    # may have made before handing it here (its callee returned it partly written, or a method
    # stored it partly written on `self`: analysis/partial_reads.py). Only `may_writes`,
    # `gaps`, `dims` and `touched` are taken from it.
    seed: State | None = None

    @property
    def records(self) -> dict[str, tuple[str, ...]]:
        """Plain dataclasses of the module (records.py): name -> fields in __init__ order."""
        scope = self.scope
        while scope.parent is not None:
            scope = scope.parent
        if not isinstance(scope.node, ast.Module):
            return {}
        project = self.resolver.project
        if project is None:
            declared_here = (n for s in self.resolver.scopes.values() for n in s.global_names)
            return plain_dataclasses(scope.node, declared_here)
        # Plain dataclasses imported from other scanned modules too (ProjectView.record_fields).
        # Kept on the tree with the view and the modules read: a later use of the memo (another
        # buffer, another summary of this module) records those reads again in the view's deps.
        memo = getattr(scope.node, "_zeroopt_imported_records", None)
        if memo is not None and memo[0] is project:
            project.deps.update(memo[2])
            return memo[1]
        declared = {n for s in self.resolver.scopes.values() for n in s.global_names}
        tree = scope.node
        records = dict(plain_dataclasses(tree, declared))

        def read_imported() -> None:
            for name in imported_names(tree, declared):
                module, _, attr = (self.resolver.resolve_name(scope, name) or "").rpartition(".")
                if module and project.is_module(module):
                    fields = project.record_fields(module, attr)
                    # The import must yield the module's file: no `sys.modules` store or
                    # import hook of the tree may give another object under its name.
                    if fields is not None and self._imports_its_file(module):
                        records[name] = fields

        _, consulted = project.recording(read_imported)
        scope.node._zeroopt_imported_records = (  # type: ignore[attr-defined]
            project,
            records,
            consulted,
        )
        return records

    def _imports_its_file(self, module: str) -> bool:
        summaries = self.summaries
        if summaries is None or summaries.project is None:
            return False
        return module == summaries.unit.module or not summaries.replaced(module)

    @property
    def mask_names(self) -> frozenset[str]:
        """Names of the function that always hold an unchanged bool tensor (`mask_names`)."""
        scope = self.scope
        cached = getattr(scope, "_mask_names", None)
        if cached is None:
            cached = mask_names(
                scope.node,
                lambda e: self.resolver.qualified(scope, e),
                frozenset(self.escape_on_bind)
                | frozenset(scope.captured | scope.global_names | scope.nonlocal_names),
            )
            scope._mask_names = cached
        return cached

    @property
    def capture_functions(self) -> dict[str, str]:
        """Functions and methods of the module that may open or close a CUDA-graph capture
        (capture.py), by name: computed once per module, kept on its resolver."""
        resolver = self.resolver
        cached = getattr(resolver, "_capture_functions", None)
        if cached is None:
            scope = self.scope
            while scope.parent is not None:
                scope = scope.parent
            module = scope.node
            cached = capture_functions(module, resolver) if isinstance(module, ast.Module) else {}
            resolver._capture_functions = cached
        return cached

    @property
    def store_hooks(self) -> frozenset[str]:
        """Stores that run code defined in this module (store_hooks), computed once per module:
        the attribute names with a property setter, ANY_ATTRIBUTE when some class defines
        `__setattr__` or a descriptor `__set__`, ANY_ITEM when some class defines `__setitem__`."""
        resolver = self.resolver
        cached = getattr(resolver, "_store_hooks", None)
        if cached is None:
            scope = self.scope
            while scope.parent is not None:
                scope = scope.parent
            cached = store_hooks(scope.node)
            resolver._store_hooks = cached
        return cached

    def text(self, node: ast.AST) -> str:
        line = getattr(node, "lineno", 0)
        if 1 <= line <= len(self.source_lines):
            return self.source_lines[line - 1].strip()[:120]
        return ""


_RENAMED = re.compile("\u00b7\\w+")


def _display(text: str) -> str:
    """Source text of an inlined lifecycle program, with the per-method renaming undone."""
    return _RENAMED.sub("", text)


class _Recorder:
    def __init__(self, outcome: BufferOutcome) -> None:
        self.outcome = outcome
        self._seen: set[tuple[str, int, str]] = set()

    def issue(self, severity: str, line: int, kind: str, text: str) -> None:
        text = _display(text)
        key = (severity, line, text)
        if key not in self._seen:
            self._seen.add(key)
            self.outcome.issues.append(Issue(severity, line, kind, text))

    def note(self, bucket: list[tuple[int, str]], line: int, text: str) -> None:
        text = _display(text)
        if (line, text) not in bucket:
            bucket.append((line, text))
