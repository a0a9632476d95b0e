"""ZO001's assumptions across methods, functions and modules: the second half of the rule's page
(`zeroopt rule ZO001` shows both), kept apart so each half stays readable on its own."""

ACROSS_FUNCTIONS = """\
### Across methods, functions and modules

Lifecycle models (cross-method buffers): the engine calls the modelled methods in the order its
model declares (`init_cuda_graph_state` only with CUDA graphs enabled, once, with nothing forcing
a capture after it; SGLang's legacy capture/replay hooks only under an engine that calls them);
code outside the module does not read an object's buffers or call its methods other than in that
order, a call of a forward method (`backend.forward_decode(...)` in a model layer) anywhere is
the engine's forward within a cycle, and subclasses in other modules do not replace its methods. Inside the module everything
is checked: a method the model does not run, a module function, or another class reaching the
attribute through anything but a method's own `self` (`other.buf`, `self.target.buf`,
`getattr(x, "buf")`, name-mangled `_Cls__buf`) leaves the buffer unjudged, unless the object is
provably a metadata record of the module; a class decorator, a store into the class or of an
attribute named like one of its methods, a setattr of a computed name, `exec`, a base the model
does not know, or `super()` into one, leaves the class unjudged, the message naming the line.
A wrapper calling a child's hook from its own hook of that name (SGLang's multi-step draft
backends, sglang 0.5.23 layers/attention/flashattention_backend.py:3507-3540) keeps the child in
the model's order, and is no use outside it, only when (analysis/lifecycle_delegation.py,
docs/lifecycle-delegation.md) every hook of the model the judged class defines is forwarded by
the wrapper's hook of that name exactly once, on every run (a statement of its body or of a
top-level `for` loop, in a hook with no early `return`, `break`, `continue`, `try`, `with`,
`yield`), to the same objects (`for i in range(R): self.A[i]`, `for x in self.A`, or `self.A`,
the same form in every hook), which the wrapper's `__init__` binds once to fresh instances of a
module class and afterwards only indexes, iterates, measures or reads attributes of (no store,
no hand-off; `R`'s attributes bound in `__init__` only, never changed in place), while no other
code of the module names `.A`; and the wrapper defines the model's required hooks, calls none of
its own, has no base but `object`/`ABC`/the model's defaults and no subclass in the module. The
engine drives the wrapper as any backend (speculative/eagle_draft_cuda_graph_runner.py:164, :294,
:504, :531, :738; eagle_worker_v2.py:711); arguments are free (every hook parameter is unknown).
Otherwise the message names the hook not forwarded, or the use that breaks the condition.
Where a buffer is unjudged only because other code may also reach the object (a closure over
`self`, code elsewhere calling its methods), which adds paths but removes none, a read before any
write in the modelled order still makes it `unsafe`, the evidence naming that assumption.
Witness schedules (`unsafe` only): SGLang's CUDA-graph runner calls `init_cuda_graph_state` and
captures at once in its constructor (0.4.6.post5 model_executor/cuda_graph_runner.py:222/:224
then :307; 0.5.23 model_executor/runner/decode_cuda_graph_runner.py:429 then :600), so `__init__`,
`init_cuda_graph_state`, the capture setup and one forward, straight after each other, is one
execution the engine runs. Where the full model decides neither way, a read before any write on
that schedule is reported `unsafe`, its evidence naming the schedule and the call site as the
assumption (also where code elsewhere may reach the object, which only adds paths; never where
the class is unjudged because what runs may not be what is modelled). The capture setup
branches on the configuration (forward mode, speculative settings): besides the joined setup, a
witness follows each path through its `if` statements (a test with the same text as one taken
before goes the same way), assuming the engine runs that path in some configuration; the
evidence names the branches. The engine's own arguments there are data of the model: SGLang
passes the capture setup a tensor of request indices third (0.4.6.post5 cuda_graph_runner.py
:400, :475-478), so `table[req_pool_indices, :]` is a gather, a read of the indexed rows. A read
of table rows up to lengths that another allocation of the class may hold on the same path is
not shown (with those lengths still zeros, no row is read). In a lifecycle program, names bound
only to new instances of a module class with no base, metaclass, `__new__` or decorator but
`dataclass` (or unbound) are distinct objects: a store into one's attribute leaves the other's;
on a witness, so are `self` attributes assigned only displays or such instances. A witness never
makes anything `safe`.
Capture inputs of CUDA-graph runners (`unsafe` only; model and provenance: capture_runners.py,
docs/capture-inputs.md). ASSUMPTION: the model's forward reads ForwardBatch `input_ids`,
`positions`, `out_cache_loc`, `req_pool_indices`, `seq_lens` in the capture's warm-up, which runs
in the runner's `__init__` before any replay; calls handed the batch before it do not write its
token ids; `share_buffers` kept the tensor. A subclass of SGLang's `DecodeCudaGraphRunner` (capture
path not overridden) storing an allocation as field `F` of `self.buffers`, then `self.capture()`,
whose `capture_one_shape` hands a slice of `F` to the batch as one of those fields, the allocation
unwritten on the way, is `unsafe` (only `input_ids` remains: the inherited capture fills the
others first, decode_cuda_graph_runner.py:1283-1288); so is `x` in the named factory's
`return cls(input_ids=x, ...)` (`DecodeInputBuffers.create`); "when `c` holds" if conditional.
Draft runners: a slice of `F` put into a named speculative input (`EagleDraftInput` field
`topk_index`, `FrozenKVMTPDraftInput` field `bonus_tokens`) handed to the batch as `spec_info`,
then `X.draft_forward(batch)`, is `unsafe` too. ASSUMPTION: that draft forward embeds the field as
token ids (EAGLE: when speculative_num_steps >= 2 or a hot-token map is set), and calls handed
the batch before it do not write the field (capture_spec_inputs.py).

Modules of the scanned tree. A name imported from another scanned module (relative imports,
re-exports, `from x import *` honouring a literal `__all__`) resolves to what that module binds
at top level, and only where every binding of it there agrees (analysis/project.py); a module
that binds names dynamically (`globals()`, `vars()`, `sys.modules[__name__]`, `exec`, `eval`,
`builtins`, `__import__`, a frame's `f_globals`, a function's `__globals__`, a computed
`__all__`) resolves nothing. A folder without `__init__.py` inside a package is a namespace
package (PEP 420: `pkg/ns/mod.py` is `pkg.ns.mod`), unless a module file of its name lies beside
it; a name that a file has below such a folder and another file has outright resolves nothing.
`pkg.sub.x` names the submodule only where `pkg` leaves `sub` unbound (no other binding, no
module `__getattr__` that may answer it: one testing the name against literal strings and
raising AttributeError otherwise answers only those, unless async, a generator, decorated or
bound by a `global` statement; no dynamic binding), and no submodule of a package whose `__init__` names
`__path__` (or `submodule_search_locations`) resolves; a def of another module is not summarised
where a file of the tree may put another object in `sys.modules` under its module's name (a
key read as: literals; a parameter of a private function that is only ever called, with the
arguments its calls pass; a parameter an enclosing `if` tests with `==`/`startswith` literals;
and a key under a top-level name no folder, file or loader call of the tree gives a module of
it cannot name one: analysis/module_keys.py). Assumed: no module assigns another module's
attributes (`mod.name = ...`) or changes the
collection another module's `__getattr__` tests names against, none reaches `exec`
or a module's dict by a name its text does not spell (`import_module("built" + "ins")`), and an
absolute import of a top-level package found at a scanned root means that package;
standard-library modules, torch, triton and numpy are never taken from the tree; a name a
`startswith`/`==` test guards is a `str` (no subclass overriding them); no code outside the
tree calls a private function; and no code runs a tree file's source as a module of another
name by `exec`.

Function summaries (analysis/summaries.py, dataflow/summary_calls.py). A call that hands the
buffer to a plain `def` of the scanned tree uses what the analysis proves of that def run with its
parameter as a fresh unwritten buffer: written in full before any read on every path to a normal
return (the call is a full write of the argument: a view passed gets written, a part of it only a
part; an exception out of the call proves nothing), read before any write on some path (a definite
read: `unsafe` where the caller's buffer is unwritten), or only its metadata used (the call is
neutral); anything else stays a call to unknown code. A path that reads first may depend on the
other arguments: the summary records each other parameter (`self` too) that a test on the way
depends on, directly or through locals computed from it (the tests of what encloses the read, of
a loop around it, `while` and `assert` before it, and of statements before it that may `return`
or `raise`: analysis/summary_conditions.py). The call is a definite read only where each is
passed an expression, assumed, and said in the evidence, to take a value that reaches the read,
or a literal (or left to a literal default) under which every test of it on the way is an `if`
of those parameters alone, literals, comparisons, `not`, `and`/`or`, never bound again, that
evaluates to the branch leading to the read (the evidence gives the values); otherwise it is a
possible read, `unproven` (`h(buf, False)` of `if flag: return x.sum()`). A callee that hands
such a parameter on carries the condition into its own summary, where a literal for it is never
evaluated. Only where: the callee is the name's only
binding in its module (same module, or imported from a scanned one) or, for `self.m(...)`, the
class's only binding of `m`; its decorators are none or known harmless ones (`torch.no_grad()`,
`torch.inference_mode()`, ...; `staticmethod`/`classmethod` on methods); it is neither a generator
nor an `async def`, nor recursive (nor nested more than 4 summaries deep), and its own analysis
gives up on nothing (a capture, frame reads); exactly one argument, positional or keyword, reaches
the buffer or a view of it and binds a named parameter (no `*`/`**` at the call; not into
`*args`/`**kwargs`); and the buffer has not escaped, been handed on or parked in a container
before the call nor while its arguments are evaluated (a holder passed as another argument). The
evidence names the callee, its file and line and these conditions. Under the closed world, a
module's function is not the def that runs when a file of the tree stores an attribute of its name
(`pkg.f = g`, the spellings below) or binds attributes by a computed name on what may be that
module (`setattr(mod, name, v)` with `mod` an import of it, `sys.modules[...]`,
`import_module(...)`, `globals()`); assumed: no code outside the tree does so, and no module object
handed on as a plain value is patched by a computed name. Methods are resolved under the closed-world assumption
(analysis/methods.py): every class whose instance can be `self` is defined in the scanned tree by a
class statement naming its base (directly, by an import alias or `X = Base`) or by `type(...)`,
and no code outside the tree stores a method's name. Checked over every file of the tree: an
attribute bound under a name the text need not spell (analysis/dynamic_attributes.py: a computed
`setattr`/`__setattr__`, `vars(obj)[k] = v`, `obj.__dict__.update(d)`, `obj.__dict__ = d`,
`SimpleNamespace(**d)`, namedtuple / NamedTuple / make_dataclass / Enum fields in one string, a
list or across lines, a literal joined from parts); a store of the name in any literal spelling (`obj.m = ...`, `setattr(obj, "m", ...)`,
`object.__setattr__(obj, "m", ...)`, `obj.__dict__["m"] = ...`, `vars(obj)["m"] = ...`,
`__dict__.update(m=...)`); classes made by `type(name, bases, namespace)` or `new_class`, and
class statements with a computed or starred base, which may derive from anything; the method
whose `self` is the receiver named through a class of the lineage (`Own.run(other)`,
`f = Own.run`, `getattr(Own, ...)`, `vars(Own)`, `Own.__dict__`), which may run with a `self` of
another class. Then `self.m` is the enclosing class's `def m` when no class of the tree deriving
from it (found by name over every file, same-named classes included) binds `m`, each inherits
through its first base only, and neither has a class decorator (other than `dataclass`), a
metaclass keyword or `__getattribute__`. `[tool.zeroopt] closed-world = false` (or `scan --no-closed-world`)
turns method resolution off. A cached result that relied on it is reused only while no file of the
tree changed. The tree is the directories scanned, less what `exclude` and `.gitignore` leave out:
assumed, code in excluded files does not run with the scanned package (exclude a vendored copy or a
build folder, not a module that subclasses or calls into it). A file named by itself (as pre-commit
names only the changed files) is judged with the rest of its project read as context, the project
being the folder of `pyproject.toml`, or of `.git` where there is none (scan/context_tree.py): its
verdicts are those of a scan of that folder, the outermost such folder (a project inside another,
`python/pyproject.toml` in a git work tree, is read with the enclosing one, whose files may import
it). A file named outside any project or whose outermost one is the home folder or the filesystem
root, source from stdin, a scanned file that is a symbolic link to a file outside the tree, or
directories holding a symbolic link to a directory outside them (not followed) do not show every
file of the tree, and the closed world is off for that scan (methods, calls by method name, returned
buffers, any order of methods; a module's function is not taken for its def, which a file not
scanned may replace); the evidence of a call it leaves unresolved names why.

Returned buffers. A buffer whose only obstacle is that its function returns it (the buffer itself,
or one slot of a returned tuple, list or dict display with identifier keys, no starred item, no
`**`, no other slot holding it; not a view of part of it) is judged at every call of the function (analysis/returned.py),
under a closed world over callers: each call is analysed as a fresh allocation nothing has written
(what the function wrote before returning is forgotten; the call's arguments are not taken for a
shape). `safe` when every call writes it in full before any read, or never reads it; `unsafe` when
one reads it before any write and the function wrote none of it (the evidence names that caller and
line); a caller that returns it again is judged at its own callers (3 functions up at most, never
through recursion). A buffer returned in a slot is judged at each call as if the call were the
display with the allocation in that slot and `None` in the others (analysis/returned_slots.py):
`a, b = f(...)`, `r = f(...); b = r[1]`, `d = f(...); d["k"]` name the buffer; the display passed
on whole, iterated, unpacked with a star, indexed by a variable or bound to a name that is then
returned leaves it unproven; `return f(...)` is judged again at that caller's callers, the same
slot. Only for functions no code outside the tree can reasonably call: a
module-level def or a method whose name starts with one `_`, or a def nested in a function; a
public name stays unproven ("callers outside the tree may read it"). Every occurrence of the name
must be a call that resolves to the def. A module's function is followed into the other files of
the tree whose text names it, whatever modules they spell (a module object may be handed to a
function whose file never imports it; analysis/returned_modules.py): there every binding by
`from ... import _f [as g]` and every `_f`/`m._f` must be the callee of a call the project index
resolves to the def (imports, re-exports, star imports, `import m as mm`, `from . import m`), or
to another module's def by the file's names (its own `_f`; a file that names `_f` only as its
own top-level def and names read of it is passed unread), each judged in its own module; a
file the index cannot load as a module, or one with frame reads or a dynamic binding
(project.DYNAMIC_PATTERN: `globals`, `exec`, `eval`, `builtins`, `__globals__`, ...), keeps it
unproven, as the function's own module does.
A method is followed to every call in its module that may dispatch to it
(analysis/returned_methods.py): `self._m(...)`/`cls._m(...)` in a method of a class that may
share an instance with its class (itself, a subclass, a base, a class some class derives from
together with it), except in a subclass below an override of `_m`; `super()._m(...)` in a
subclass; `k._m(...)` on a local `k = K()`; any other receiver (a parameter), `self._m` not
called (a callback, `functools.partial`), a reflective use that may fetch an attribute of an
instance of the class by a computed name (anyorder_reach.py), a class decorator in the family, or
a name a library base has (when the class has a base) keeps it unproven; its name in any other
file counts, whether or not that file names the module (an instance may be handed anywhere). A
call that may run another def instead (its class shares instances with the method's class only
through a class made at run time, or `_m` is stored on an object or bound under a computed name
somewhere) is judged too, but can keep the site unproven, never make it `unsafe`. A lookup by a name the text does not spell (`getattr(x, name)`,
`attrgetter`, `methodcaller`, `getmembers`, a joined literal) in any file of the tree; a use as a value (passed, bound, `functools.partial`), the name in a string (`getattr`,
`__all__`), `globals()`/`exec(`/frame
reads in the module, `locals()`/`vars()`/`eval`/`exec` in a nested def's function, a decorator, a
generator or `async def`, or a call outside a function leaves it unproven. Assumed: no code outside
the tree reaches the function. Off with `closed-world = false`; a cached result that
relied on it is reused only while no file of the tree changed. `[tool.zeroopt] callers-closed =
true` (or `scan --callers-closed`; off by default) judges public functions and public methods of
a class with no base (only `object`), no metaclass and no class decorator the same way, assuming
no code outside the scanned tree calls them: no user of the package, no library calling them by
name. Every such verdict carries that assumption in its evidence. A file of the tree that has
the public name as a word is followed as for a private function, whatever modules it spells:
every use a call resolved to the def; a public method named in any other file stays
unproven. Dunder names always stay unproven, and a public method of a class with a base
stays unproven (`torch.nn.Module.__call__` calls `forward` by its name).

Constructors of plain dataclasses (analysis/records.py, docs/whole-program.md "Constructors of the
tree's dataclasses"). A class bound once at module level, decorated only by the stdlib
`dataclasses.dataclass` (`slots=True` and `kw_only=True` allowed, not `init=False`; no star
import in the module, which may rebind `dataclass`), with no base,
no dunder method, methods decorated only by the builtin `classmethod`/`staticmethod`/`property`
(none named like a field) and plain defaults, whose name its module only calls, reads
attributes of, annotates with, derives from or tests by `isinstance` (never hands it on as a
value, rebinds it through the module object or stores into it), runs only the generated
`__init__`: `Meta(f=buf)` stores the buffer in field `f` and reads nothing. Positional
arguments are read only where no field's annotation may be `typing.ClassVar` under another
name; an imported class only where no `sys.modules` store or import hook may yield another
module. Assumed: no other module patches the class, and `dataclasses` is the stdlib module. `t = Meta(f=buf)` follows `t.f`;
`return Meta(f=buf)` (the buffer itself in one field) is judged at the callers as a returned slot
(a public method of such a class, under `callers-closed`, as one of a class with no base);
anything else done with the new object hands it on. `cls(f=buf)` in a method decorated by the
builtin `classmethod` is taken for the class itself under the closed world: no class of the tree
may derive from it (no store of a class's bases may add it) and no file naming the class or
the method reaches a namespace or a function by reflection (`__func__`, `__dict__`, `__get__`,
`vars(`, `getattr_static`, ...); assumed, no code outside the tree derives from it or calls the
function with another first argument, and a file reaching the classmethod object names the
class or the method.

Any order of a class's methods (analysis/lifecycle_anyorder.py). A buffer allocated in `__init__`
and stored on `self`, in a class no lifecycle model matches, is judged under "after `__init__`
any method of the class may run, any number of times, in any order": the lifecycle program with
one cycle per method that names the buffer (or an attribute that may hold it), the methods and
their `self` helpers inlined. `safe` when every method writes it in full before any read of it
(or never reads it). `unsafe` only where no method writes any of it (or no write of any method
covers the elements read) and the straight program `__init__`, then the method holding the
read, reads it before any write; the evidence names the assumption "`C.m` runs after
`C.__init__`" and the callees assumed not to write it because not handed it. Anything else is
`unproven`, naming the method and line that block. Under the closed world, checked: every
attribute access `.X` (any receiver) and every string naming `X` (a dotted name) in the scanned
tree is `self.X` in a method of the class, for `X` and every attribute a method naming it
assigns (it may hold the buffer); not inside a nested function or lambda; no subclass in the
tree binds a method of the class but `__init__`, or an attribute hook; `T.__bases__ =
T.__bases__ + (E, ...)` (or `+=`; `T`, `E` plain names, `E` bound in its module only by class
statements and imports) blocks when an `E` may be the class or derive from it (by name), else
each `E`'s code must pass as a base of the tree (below; the class then has no other such base:
`T` may be the class), unless `T` can be no class sharing objects with the class: `T` is followed
back through the tree's calls (analysis/bases_targets.py: a class's name, a parameter of a
function whose every use is a call, a class decorator or a `return` of a nested helper whose
every result is called at once or decorates a class) to the classes passed, and none of them is
the class, derives from it, is derived from by it, or shares a subclass with it (by name);
assumed then, and named in the evidence: no code outside the tree calls those functions and no
string resolved at run time names them (a public one is followed only under `callers-closed =
true`); any other `__bases__` store blocks; the class has no class
decorator or keyword, binds no `__getattr__`/`__getattribute__`/`__setattr__`/`__delattr__`/
`__slots__`, no name twice, nothing but defs and literals in its body; its bases are `object`,
`ABC`, `Generic`, `Protocol` or `torch.nn.Module` (then `X` must not be a library attribute nor
one of nn.Module's own instance attributes), or one base of the tree whose chain of bases of the
tree (single inheritance, no torch.nn.Module; each name the class statement its module defines
or imports by `from M import`, bound once in both modules, no star import there, rebound by no
`M.B = ...`, string "B" (but annotations, `__all__`), `globals()`/`locals()`/`vars()` in those
two modules (but reads and `globals()[k] = v` with `k`'s names excluding B), computed name on
what may be one of them (`setattr(m, k, v)`, `vars(m)`, `m.__dict__`, `sys.modules[...]`), any
`__globals__` beyond a read, computed name that may be B on an unknown value) binds no hook, property or `__init_subclass__`,
hands `self` on nowhere and touches on `self` only its own methods and attributes, none bound by
the class or a subclass; `super()` reaches only `__init__`; methods naming the buffer are plain
or under staticmethod/classmethod/abstractmethod or known transparent decorators (a property
naming it is given up); a method under whose name any file stores an attribute (`g.m = f`,
`setattr(g, "m", f)`) is not inlined at `self.m()` (what was stored may run). An access `o.X`
elsewhere passes when `o` is `self` of an unrelated
class or a local made from one. Reflection (a computed `getattr`/`setattr`/`delattr`,
`register_buffer` of a non-literal, `__getattribute__` by a non-literal (a literal dunder or
reflective function's name counts as a computed one), such a function imported under another
name (`from builtins import getattr as g`: anything), `__dict__`, `vars()`,
copy, `dataclasses.replace`, `inspect.getmembers`/`getmembers_static`, in the
class's module or any file of the tree, read from each file's syntax tree) blocks only where its
receiver may hold an instance of the class: not a module (but a lookup on one whose names may
be a reflective function's, `vars(m)`, `m.__dict__`, blocks: `getattr(builtins, n)` is
`getattr`; math, cmath, os, re, string, time, itertools and random hold none), an unrelated
class object (a related
one's namespace holds descriptors of instance state), `self` of an unrelated class (related:
some class of the tree derives from both, by name, or its bases are not library classes or
classes of the tree to the root) or a local made from one, while no file may rebind that class's
name (`globals()`, `m.K = ...`, a string "K", a module's names bound by a computed name, a
`__bases__` store adding a related class); deep uses (deepcopy, pickle, `torch.save`, `asdict`) pass only a constant;
`exec`/`eval`, frames, `attrgetter`, `gc.get_objects`/`get_referents`/`get_referrers` (any
object of the process; each also when taken as a value, `g = operator.attrgetter`) and a class made at run time (`type(n, bases, ns)`,
`new_class`, a metaclass called like `type`: a `...Meta`, or, given a bases display, a class
of the tree deriving by name from `type`, a `...Meta`/`...Type` or a value; a library class of
another name is assumed no metaclass) block when a base may have the class in its MRO
(the class itself or a class deriving from it, by name; a base whose bases, to the root, are not
library classes or classes of the tree counts; a base of the class or a subclass of such a base
does not: the made class's instances are no instances of the class). A lookup by a computed
name (`getattr`/`setattr`/`delattr`, `__setattr__`/`__getattribute__`, `register_buffer`) counts
only when the names it may look up may include an attribute that may hold the buffer (for a
returned method: the method's name; for one that binds, also the name of a method of the
class: a function stored under it runs at `self.m()` instead of the def), a dunder (`__dict__`,
`__class__`: the whole object) or a reflective function's name; the names come from the syntax alone (analysis/lookup_names.py, no
assumption): a literal; an f-string's literal head and tail (a prefix and suffix); a
concatenation or `if`-expression of known names; a local of a function every binding of which
is such a value or a `for`/comprehension target over a display of them, a tuple display bound to
a local, a string's characters, `"a b".split()`, a dict display's keys, `.keys()`/`.items()`/
`.values()` of one. Anything else (a parameter, a free, `global` or `nonlocal` name, a module or
class body's name, an attribute, a call, `vars()` or `__dict__` iteration, `"lit" + x` with `x`
unknown: `x.__radd__` may return any string) may be any name; the evidence names each lookup
passed by its names. Assumed: a method runs to
its end before another starts (no threads); a class statement with a base held in a variable
(`class X(Mixin, base)`) is outside the closed world, as for method resolution; a method runs
with a `self` of its class unless the text takes it from a class (`D.m(obj)`, `getattr(D, ...)`,
`vars(D)`, `type(x).m`, `x.__class__.m`, `cls.m`, `__func__`, `inspect.getattr_static`, a store
of `__class__`, a `__bases__` store that may add D or a subclass: those are checked); `exec`,
`eval`, frames block wherever they are; calls not handed the buffer
do not write it. Off with `closed-world = false`; a result that used it is reused from the cache only
while no file of the tree changed.

A returned buffer read by one caller (analysis/returned_reads.py), no closed world needed: where
the judging at every caller above leaves a returned buffer `unproven` (a public function or
method, a lookup by a computed name somewhere, a use other than a call), it is `unsafe` when one
call of the tree that surely runs the function (a module-level name bound once in its module,
never rebound; `from m import f` or `m.f` through the project index; `self.m(...)` in a method
of the def's own class where no class of the tree deriving from it binds `m`) is made by a
caller whose own dataflow (the call taken as a fresh allocation) reads the buffer, or the slot
of the returned display holding it, before any write on some path, and the function wrote no
element of it on any path. Assumed, and named in the evidence with the caller, its file and line
and the read: that caller can run; other callers, in or outside the tree, only add paths. A def
nested in a function is left to the judging above.

A returned buffer with an element no write covers (analysis/returned_uncovered.py): where the
callers are not all in the tree (a public function or method, a decorator, a lookup by a computed
name) and neither judging above decides, a function that writes part of the buffer and returns it
(itself, a view of all of it, or one slot of a returned display) is `unsafe` when its own dataflow
at the normal exit, over every path, leaves an element that no write covers, by the test a
definite read of the whole buffer uses (`cu[1:] = lens.cumsum(0)` never writes element 0; `pad[:,
:64] = x` of a `(4, 128)` buffer never writes column 64). Assumed, and named in the evidence: the
callers read what the function returns, and what they hand it to does not write that element
first. The calls the tree shows are checked against it: every call that may run the function
(resolved to it, or spelled with its name or an alias of it, also in a module that reaches its
names through `globals()` and on objects of unknown class; at most 16) is analysed from the
function's writes. One that surely runs it and reads the element before writing it decides.
Otherwise each must write none of it, read only elements no write covers, and hand the result
only to code out of sight (a call of a name it did not bind, an attribute of an object, whose
readers are assumed to read what it holds) or return it to callers that do the same. No claim
where one writes some of it, reads only what was written, hands on only a part without such an
element (`relu(y[1:])`), or hands it to a callable it was given or to a list of its own; nor where
the tree may call the function without a call spelled with its name (its name used as a value,
a decorator of the tree, a dunder, `forward` of a class the tree makes objects of). Not claimed
for `torch.empty` (the guard sees no read), where nothing was written (an allocator's callers may
fill it), where the allocation may be empty (an `if` testing for 0, a negative literal among the
shape's names, a dimension that is 0 whatever its names hold, `n - n`), or where any write may
have any extent (a tensor index, a loop index, a helper or kernel handed the buffer). A caller
outside the tree that reads only the written part, or writes the element first, is what this
assumption does not see. Where the calls the tree shows keep the site from `unsafe`, its
`unproven` message still names the element handed back as allocated.

A buffer stored on `self` unwritten and read first by another method (analysis/self_reads.py):
a method that stores a fresh buffer in `self.X` and writes none of it on any path (hands it to
no call; a call that may reach it through `self` is code whose writes the checks below see),
and a public method of the class, `__call__` or `forward` (not the allocating one, plain, not
overridden by a class of the tree; the allocating one may be, an object of the class itself runs
it) whose dataflow, started as if
its body began with `self.X = <the allocation>`, reads it before any write on some path (a
read-modify-write `+=`, `add_`, `index_add_`, `scatter_add_`, or any definite read): `unsafe`,
assuming any public method of the class may run right after the allocating one. The protocol
risk (an engine that always calls a `reset()` writing it before the reader) is ruled out by a
stricter condition than the order: no code of the tree but the allocating method writes,
rebinds or deletes `X`. Checked: every other use of `.X` (any receiver) in the module is a read
that makes no alias (a read-modify-write, an operand, a method returning new memory or
metadata); no string of the module names `X`; no other file of the tree names `.X`; no code of
the module, and no other file that names the class, reaches attributes by a computed name
(`getattr`/`setattr` of a non-literal, `vars()`, `__dict__`, `locals()`, `eval`); the class has
no class decorator and matches no lifecycle model (those are judged by the order the model
declares). Assumed: a file that never names the class writes no attribute of its objects by a
computed name. The evidence names the reading method, its line and these assumptions.

A def other code may replace (summaries.py `possible_callee`): a call the summaries would
resolve but for a store that may replace the def (an attribute of its name stored anywhere in the
tree, a `sys.modules` entry or import hook that may stand for its module) is no proof of any
write, but where nothing replaces the def, it runs: if its summary reads the parameter before any
write, the call is a definite read (`unsafe` on that path), and a caller reached this way counts
for the returned buffers above. Assumed, and named in the evidence with the store: the path where
nothing replaces the def. A def that writes the buffer in full or leaves it alone decides nothing.
Not when the import-time code that surely ran before the call may replace it
(analysis/import_time.py): read operation by operation, a store counts when its target may be
the def's module (or a package above it, for a call through attributes) and its name may be the
def's; assumed there: a name imported from outside the tree is no module of the tree, a method's
first parameter is an instance or class of its class, and code reached only through a call the
reading cannot follow (a call of a call's result, a lambda held in a name) replaces nothing.
The refusal itself assumes a `setattr` under a computed name on a parameter stores into no
module (a literal name, a loop over a literal list, an import or `sys.modules` entry is seen).

Both also decide a buffer the allocating function wrote IN PART (analysis/partial_reads.py): the
intervals some path of it may have written (as for uncovered reads above) start the reader's
dataflow, and its definite read of an element outside all of them (`x[1:] = f(); return x`, then
`mk(n).cumsum(0)` reads element 0) is `unsafe`; only where every write there has a known extent
(no index write, hand-off, loop coverage, other layout, full write), the buffer leaves as itself
or one slot of a display, its size is not named by a negative literal nor guarded by a test
against 0; only int-literal sizes travel, and the parts padding and index writes leave alone.
Not for the reader's in-place `t += 1` (may be dead). The evidence names those writes.

Calls on a receiver of unknown type, `obj.f(buf)` (analysis/dispatch.py), under the same closed
world stated for every method: every method that can run is defined in the scanned tree or is an
attribute of a library type or module listed in analysis/semantics/library_attributes.json (`dir()` of
torch.Tensor, torch.nn.Module and every torch.nn class, builtins, common stdlib, numpy and torch
types and modules; generated by bench/library_method_names.py, which records the versions), and
the receiver is an instance, not a class object held in a parameter or an attribute (through a
class, the arguments bind one parameter earlier), where the call's arguments would bind that way
too: a method that also accepts them one place earlier (defaults, `*args`) leaves the call unknown;
where they would not, a class receiver raises a TypeError and no run returns. The candidates are every `def f` in a class
body of the tree (a staticmethod binds no `self`, a classmethod `cls`) and every module-level
`def f` (a module object may be the receiver), at most 8, each summarised for the parameter the
argument binds: all `writes` is a full write, all `untouched` neutral, all `reads` a definite
read; anything else leaves the call unknown, its evidence naming why. Unknown as well: `f` a
library attribute or a dunder; `f` bound in a class or module body other than by one def, or
under a decorator other than staticmethod, classmethod, abstractmethod, override and the harmless
ones (a property included); an attribute `f` stored anywhere (the spellings above), a keyword
`f=` anywhere (`SimpleNamespace(f=...)`), `"f"` as a string literal or a namedtuple / Enum /
make_dataclass field; an attribute bound by a computed or joined name (as above); a
`global f` in any function of the tree (a module's `f` rebound); a class made by `type(...)`
whose namespace may bind `f`; an object of the
tree that may answer any name (a class with `__getattribute__`, a class or module with
`__getattr__` that does not bind `f` itself, either hook assigned, a mock, a `torch.ops` namespace
held as a value); `exec`/`compile` in a file that mentions `f`; a receiver that may be a class or
a module (a module-level name, `cls` of a classmethod, `type(x)`, `x.__class__`, a local bound
from a name, an attribute, a subscript, unpacking, or a loop over a local name or a literal of
names; a loop over an attribute or a call's result binds instances, as assumed); a def in a
file not importable by one name. Off with `closed-world = false`; a result that used it depends on every
file of the tree.
"""
