"""ZO001 zeros-overwritten-before-read

## What it does
Finds every `torch.zeros`, `torch.zeros_like` and `Tensor.new_zeros` allocation and decides
whether the zero fill is ever observed:

- `safe`: on every path through the function, every element is written (`copy_`, `fill_`,
  `zero_`, `x[:] = ...`, complementary slices such as `x[:k] = a; x[k:] = b` with `k` an int,
  bounds that are the buffer's own size (`x[: x.shape[0]]`), every residue of a step
  (`x[::2]`, `x[1::2]`), a bool mask and its complement (`x[m] = a; x[~m] = b`, `m` only ever a
  bool tensor that nothing changes), every piece of `a, b = x.chunk(2)` (`split`, `unbind`), or
  a declared kernel contract, a `for e in range(n)` loop writing `x[e]` (or `x[:, e]`, two nested
  loops `x[i, j]`, every residue `x[:, i::p]` of `range(p)`; each buffer the body writes so,
  not only the first) at the top of its body with no `break`/`continue` and no loop variable
  declared `global`/`nonlocal` (a call could rebind it), where `n` is that dimension: the allocation's size through the same unchanged
  int name, `x.shape[d]`, `x.size(d)` or `len(x)`; or the same text of names of unknown type each
  bound once (a parameter never bound again, a local assigned once outside loops) and
  `len(name)`, where `x = torch.zeros(...)` (`empty`, `new_zeros`, `new_empty`) is followed in
  its block by the loop with only bindings of plain names between, from aliases, literals, and
  `len`/`range`/`int`/`min`/`max`/`abs`/`enumerate`, a torch factory or an operator applied to
  the size's own names and proven ints (no attribute load, subscript, f-string, nor operator or
  call on another value, whose special methods may shrink a tensor passed as `n`), assumed, and
  said: `n` gives the same size at the allocation and the loop; `for i, v in enumerate(xs)`
  after `torch.zeros(len(xs))` on the same terms, with `xs` named in the body only as `xs[...]`
  and no call in the body but of those builtins, torch functions and value methods of tensors
  (`.float()`, `.item()`, `.to()`, ...: other code may shrink a list it shares), no attribute
  load but a tensor's (`.shape`, `.dtype`, ...), no `del` and no store but into a tensor the
  function allocated (`del ys[-1]`, `ys[:] = []` through another name of the list), no keyword
  to a builtin (`key=f`), no torch subpackage that runs callables (`torch.fx`) and no
  `torch.save`/`load`/`cond`/`while_loop`/`vmap`/`compile` (file objects, callables), assumed,
  and said: iterating `xs` yields `len(xs)` items (no operator, subscript, conversion,
  builtin's special method (`__len__` of `len(obj)`, `__index__`) or method named like a
  tensor's (`x.item()` of an item that is no tensor) in
  the body, `x * 2`, `ys[i]`, `float(x)`, changes it); a loop that runs zero times then
  leaves an empty buffer, so a padded allocation (`n + 128`, `round_up(n, 4)`) is never covered
  this way; where code between may have changed that size the loop is no write, but no read on
  its zero-trip path either: later reads are `unproven`)
  before anything reads any element, and the buffer does not reach
  code the analysis cannot see before that. `out=` of a torch function counts as a write, not a
  full one: it may shrink the tensor, and the storage past the result keeps its zeros.
- `unsafe`: some path reads the buffer with nothing written yet (a reduction, an operator,
  `+=`, a gather `x[idx]`, a torch function taking it as input). A view with no element reads
  nothing: `x[:0]`, `x[3:2]`, `x[k:k]` with `k` an int (with `k` of unknown type, None would make
  it the whole buffer: a possible read, `unproven`). ZO002 is stricter for empties
  (its `unsafe` fails CI): where such a read sees unwritten memory only on paths on which an
  earlier write did not run, it says `unproven` and names the write; `scan --since` flags it.
  ZO001 says `unproven` too for a read that finds nothing written only where a loop writing the
  buffer on each pass runs none, a loop whose passes write every element when it counts the
  buffer's own size (`x[i] = ...` over `range(n)`, nested loops, strides; loops.py), where its
  count and the size are spelled from different values (`torch.zeros(seq_len.shape)` filled
  over `range(x.shape[0])`; through one binding of each name) or the count spells the dimension
  itself from names the function never binds (`zeros(x.shape)` over `range(x.shape[0])`: no
  pass, no element): that path reads unwritten memory only if the loop can run none while the
  buffer has elements. It stays `unsafe` where a branch or an earlier `continue` may skip the
  write, where the code relates count and size otherwise (`range(n - 1)` or `range(n // 2)`
  over `n` rows, `zeros(n + 1)`, `n = n - 1` in between, `k = 0` before `range(k)`, a literal
  size), where an inner count names an outer loop's variable (ragged rows), where a test on the
  way to the read names the count (`if k == 0:`), and for loops writing part of each row,
  through a mask or at moving bounds, whose unwritten elements the zero-trip path stands in
  for (analysis/dataflow/zero_trip.py). A read that runs only where the allocation's own test
  is false (`if ode: std = torch.zeros(())`, then `if ode: return ...` before `std ** 2`; `is
  None` against `is not None`; an `or` of tests that returns) is `unproven` too, where the test is
  made of names, literals and pure operators that nothing between can rebind or change in
  place: only a stateful `__bool__`/`__eq__` could take that path
  (analysis/dataflow/branch_facts.py).
  Also `unsafe`: a definite read of an element that no write on any path can cover. Every write
  that may have run (in a branch too) is kept as an interval along its dimension: a slice or
  index with literal bounds (`x[1:] = ...` is [1, end), `mask[:, :, 0] = 1` is [0, 1) along
  dim 2, a view `v = x[1:]` written in full is [1, end)); a bound that is a name widens it (a
  start to 0, an end to the end). An element outside every interval (index 0 past `x[1:]`;
  `mask[0, 0, 1]` past `mask[:, :, 0]` when the allocation's literal size along dim 2 shows index
  1 exists) read by an operator, `+=`, a reduction, `torch.cat`, `y.copy_(x)`, a kernel contract
  reading in full (not a gather, a mask, `where`, `any`, `repeat`, nor `return x`), or by a
  literal slice or index holding it (`x[0]`, `x[:1]`, `x[:-1]` once the dimension exceeds 1),
  or of a conversion that holds its elements, copied or not (`x[:-1].to(torch.int64)`,
  `x.long()`, `.contiguous()`, `.cpu()`, `.reshape(...)`; not the guard's), or by `x[i]` in
  `for i in range(n)` (i is 0 on the first iteration: the read is a top-level statement of the
  body after plain statements that never mention i, i is bound by the loop alone and indexes
  only the buffer or tensors the function binds from torch factories; not the guard's), reads memory no path
  wrote. A write of
  unknown extent on any path rules it out: through a result that may be a copy, another layout
  (`x.view(-1)[1:]`), a hand-off to unknown code, `out=` of the buffer itself, an index or mask
  write, a full write. A read-modify-write that reads every element it writes (`+=`, `add_`,
  `cumsum_`) adds no interval: an element it touches first, it read unwritten. Assumed: the buffer has that element; index 0 needs the buffer not to be
  empty, and the evidence says when the shape shows it (`bs + 1` when `bs >= 0`, `n` when
  `n >= 1`); a larger index is used only where the literal size shows it; `x[:-k]` holds
  index c where the dimension exceeds c + k (checked against a literal size, otherwise named:
  "bs >= 1 (the slice read is not empty)"); `x[i]` assumes the loop runs at least once.
  Also `unsafe`: a definite read through a result that is certainly the buffer's data, a view of
  it or a copy made from it there (`y = x.to(dtype)`, `x.contiguous()`, `y = x[i]` with `i` an
  int or a tensor, `x.expand(...)`; not `x if c else other`, not `.to("meta")`), while nothing was
  written on any path: either the copy read the unwritten memory or the view reads it now.
  Also `unsafe`: a definite read of every element (as above: an operator, a reduction,
  `torch.cat`, a kernel contract reading in full; of the buffer or a view of all of it) where
  every write that may have run on any path leaves a part alone by one of two patterns, all
  the same pattern (dataflow/gaps.py). Padding: a store `x[:n, ...] = v` (or `[..., :n]`) into a
  dimension allocated as a round-up of `n` (`cdiv(n, T) * T`, `(n + T - 1) // T * T`,
  `-(-n // T) * T`, `math.ceil(n / T) * T`, or a call named `align`, `round_up`, `ceil_align`,
  `_ceil_to_multiple`, ... of `(n, T)`), directly or through names each bound once outside any
  loop, or as `n + k` (k >= 1), every such write bounded by the same `n` along the same
  dimension; assumed: `n` need not be a multiple of `T` (none for `n + k`), and the other
  dimensions are not empty; not claimed where the function computes `n % ...` (an
  `assert n % 128 == 0` may keep the padding empty) or `n` provably is a multiple of `T` (an
  int constant `T` divides, a product with `T` as a factor). Index writes: `m[idx] = v`, `m.scatter_(d, idx, v)` (no `reduce=`),
  `index_fill_`, `index_copy_`, `index_put_`, `masked_fill_`, `masked_scatter_`, `put_` on the
  buffer itself, all through the same index text; assumed: the index need not pick every
  position. Not claimed (the site stays `unproven`) where the index, or a name it depends on, is
  bound from `sort`, `argsort`, `randperm`, `arange`, `range`, `unique`, `flip`, `roll`,
  `meshgrid`, `ones`/`full`, `expand`, `repeat`, a tuple or slice object, a list of positions
  (`m[[0, 1, 2]]`, `tensor([0, 1, 2])`), a call of a plain name other than a builtin or of a
  method of `self`/`cls` (a helper of the tree may return `arange(n)`), a scatter or index fill
  along a dimension of size 1 in the allocation, or by a loop or other
  binding not followed (a permutation or the full range covers every position), or a name on
  the way says it is one (`perm`, `order`, `sort`, `inv`, `shuffle`); the index is followed
  through names, views, conversions and call arguments, but not into what `topk`, `argmax`,
  `searchsorted`, ... pick from (assumed: fewer than all positions); where a scatter's index or
  source is what the buffer was made `zeros_like` of (as large as the buffer: a permutation
  would write it all); where the
  buffer is one literal element; where a write runs in a loop the allocation is not in (its
  union is unknown); where writes of different patterns, bounds or indices mix (two masks may
  partition it); or where any other write (of unknown extent, a hand-off) may have run.
  Also `unsafe` (dataflow/const_gaps.py): a definite read that surely takes a position every
  write that may have run leaves alone by a constant gap along one dimension: a store into a
  slice with int literal bounds (`x[k:]` leaves [0, k); `x[:-k]` the last k; `x[a:b]` [0, a)
  and, where the size is provably above b, position b on; `x[:, j]` every other position, one
  of which must provably exist), or a write through a view of one (`out=x[1:]`, `v = x[1:]`),
  which counts only from the view's start along the first dimension (PyTorch may resize an
  `out=` view to the result, from its storage offset, into the rest). The position must exist
  for every size the allocation allows: an int literal, or `e + c` with `c` above the position
  (`bs + 1` has a position 0 and a last one; a bare `n` may be 0, and then nothing is read);
  assumed: `e >= 0` where `e` is a name or attribute (a count; `len`, `numel`, `shape` are), and
  the other dimensions are not empty. The read is a whole read (as above) of the buffer or of a
  view provably holding the position (`x[1:]` holds the last position of `zeros(n + 2)`), or an
  element read (`x[-1].item()`), not a read-modify-write (`x += 1`, `x.clamp_()`), whose
  result lands in the buffer where a later write may overwrite it. Not claimed where a write
  runs in a loop the allocation is not in, goes through a view of unknown extent, or where any
  write that may have run lacks such a gap. Calls not handed the buffer are assumed not to
  write it, as above. The evidence names the writes, the position they leave alone and why it
  exists (with the assumption on `e`), and the read.
- `unproven`: anything else, with the reason as evidence: a read after only partial writes, an
  unknown callee (a Triton or C++ kernel, a helper), a store on `self` or into a container, a
  return, a closure capture, use inside CUDA-graph capture, a write through a result that may be
  the buffer or a copy (`.to()`, `.contiguous()`, `.cpu()`). A function in which a CUDA-graph
  capture may open or close other than by `with torch.cuda.graph(...)` (`capture_begin` /
  `capture_end`, `__enter__` by hand, `make_graphed_callables`, graph pools, a context manager
  of the file that yields under capture), directly or through a function, method or stored
  callable of the same file, is not analysed: between the two, kernels are recorded, not run.

## Why
Each zero fill is a memset kernel: ~8 us of launch-bound time in eager mode, ~0.9 us per memset
node in a replayed CUDA graph, bandwidth-bound for big buffers. Where nothing reads the zeros,
`torch.empty` gives the same results without the kernel. Where something does, garbage lengths,
page indices or NaN spread silently: so the rule only says `safe` when it can prove it.

## Example
```python
def step(x, n):
    out = torch.zeros(n, 4)      # ZO001 safe: fully written below before any read
    out.copy_(x)
    return out.sum()
```
Use instead:
```python
def step(x, n):
    out = torch.empty(n, 4)
    out.copy_(x)
    return out.sum()
```

## Fix safety
The fix (`zeroopt apply`) is offered only for `safe` findings and keeps every other byte of the
file. `unproven` findings are candidates for `zeroopt verify`, which runs your scenario with the
memory poisoned; `apply --verified REPORT.json` then rewrites the sites that stayed equivalent.

## Assumptions
Exceptions that leave the function abandon the object they were building; attribute loads of
`self` are plain data (not properties); methods named like `torch.Tensor` methods are tensor
methods; special methods (`__len__`, `__int__`, `__repr__`, `__iter__` of a class),
`__torch_function__` overrides, callables or iterators handed in by a caller, and functions of
other modules reading their caller's frame do not read buffers behind the analysis' back; a
parameter annotated `int` holds a Python int (unless the function uses it as an object); no
other module replaces a builtin (`builtins.range = f`) or a torch function or tensor method
(`torch.Tensor.copy_ = f`): a module that binds names dynamically (`globals()`, `exec`,
`builtins`, ...) resolves none of the value builtins (`range`, `enumerate`, `len`, `int`,
`min`, ...) whose meaning proves writes, and a library attribute a module replaces
itself (`dist.all_gather_into_tensor = f`, `setattr(torch.Tensor, "zero_", f)`) keeps no
built-in semantics or contract there. An allocation in a class body is not analysed where the class has a metaclass or a
class keyword, an `enum` base, or a base of its module that has one (`__prepare__` may give the
body a mapping whose `__setitem__` reads what is bound); other modules' classes are assumed to
have no such metaclass. A store
`obj.name = buf` or `obj[k] = buf` stores the buffer itself unless this module defines a property
setter of that name, a decorated def of that name, `__setattr__`, `__set__` or `__setitem__`
(then the store may keep a copy, and the finding is `unproven`); classes of other modules are
assumed not to copy on store.
Local containers: a name bound in its function only by dict, list or tuple displays and only
ever subscripted there (never used whole, passed, returned, captured by a nested function,
lambda or comprehension, nor declared `global`/`nonlocal`; no `locals()`, bare `vars()` or frame
read in the function) is a container no other code reaches: a buffer stored in it has not
escaped, and `d[key]` with `key` a str/int constant, a provably immutable int, or a name bound
only to such constants (`'a' if flag else 'b'`) is one of its values, maybe the buffer (assumed:
those keys hash and compare without running code of the program). `vars(obj)` with an argument is
`obj.__dict__`: unknown code handed `obj`, not every local of the frame; beside a lifecycle class
it is no reflective use of that class when `obj` is bound in its function only by `obj = C()` with
`C` a module class bound once, with no base, metaclass, decorator, `__new__` or `__class__`, never
stored into nor `setattr`'d with a computed or special name (analysis/lifecycle_instances.py).
Slice bounds (analysis/scalars.py, dataflow/places.py): slices are chained as text, `x[:k]` then
`x[k:]` covering the dimension. A bound is a provably immutable int, a negative int literal
(`x[:-1]`, and `x[-1]` as `x[-1:]`: the same literal is the same position at every write while
the size does not change; `x[-c]` of a dimension shorter than c raises before writing), or a
local name only known to hold some value slicing accepts (an int of any sign, None, a bool, a
0-dim integer tensor or NumPy integer through `__index__`): such two slices cover the dimension
for ANY one value, so the bound must hold the same value at both writes. Such a name is never
`global`/`nonlocal` nor used by a nested function, lambda or comprehension; every load of it
makes a new value (an operand of an arithmetic operator or a comparison, an argument of
`range`/`int`/`float`/`bool`/`len`/`str`/`abs`/`torch.tensor`), only looks at it (a test, a
slice bound) or indexes a subscript that is read: it is never aliased (`j = k`), stored
(`d[key] = k`), handed to a call, stored into (`k[()] = 3`) or called on (`k.add_(1)`). Rebinding
it forgets the slices it bounds, and so does every node that runs code (a call, an iteration, a
yield): code may change in place a tensor the caller also holds; and every node that changes an
object in place without a call (`t += 1`, `t[0] = v`, `t.a = v`, on anything but the buffer or a
proven int): the bound may be a 0-dim view of `t` (`k = t[0]`, or `t[0]` handed in). Assumed: operators,
comparisons, `__index__` and subscripting run no code of the program that changes the bound, and
a container indexed with a slice does not keep the slice (true of tensors, lists and tuples).
An allocation that runs again (in a loop) while the previous buffer from that line is not fully
written leaves the finding `unproven`, unless the statement binds the new value to every name
through which the previous buffer may be reached (`b = torch.zeros(n)`, `d = {'a': torch.zeros(n)}`
with only `b` / `d[...]` holding it), its value mentions none of them, and the previous buffer never
escaped, was handed on or hidden: then nothing can reach it again, and it is never read. An
exception raised before the binding keeps the previous buffer on that path.
Holders made in the function (analysis/dataflow/holders.py): a dict, list or tuple display,
`dict(k=...)` or `types.SimpleNamespace(k=...)` (the builtins, unshadowed) bound to a name is a
new object that only stores its elements, so `d['a']`, `bufs[0]`, `ns.a` and `d.get('a')` name
them; any other use of the name (passed, returned, iterated, a method, `**d`, a computed or
negative index) hands the holder on. Lists get paths only where the name is bound to displays
alone and indexed by non-negative literals alone (no method, `del`, `+=`). A name bound only to
new holders and used only through such paths is private: storing the buffer into it later is no
escape. A store into an object other names may reach (`o['a'] = buf`, `o.a = buf`) makes every
later load of that slot (`X['a']`, `X.a`, any computed subscript, a `__dunder__` attribute)
through a path not tracked a possible read of the buffer, and a write through it possible;
not where the object stored into and the object loaded from were made at disjoint sites: two
names each bound only to new holders (never a parameter, a global or a closure cell), or in a
lifecycle program names bound only to new instances of a plain module class (the distinct
objects below, whose class has no special method, decorated method or descriptor), displays,
`None` or another such name, and on a witness `self` attributes stored only such values
(analysis/lifecycle_objects.py object_origins).
Lists that only grow (analysis/dataflow/append_lists.py): a name bound in its function only to
list displays (`xs = []`, `xs, ys = [], []`; no `*x`), not a parameter, `global`/`nonlocal` or a name a nested function,
lambda, class or comprehension mentions, in a function that reads no frames, and otherwise used
only as `name.append(v)` or `name.extend(<display>)` statements, `name += <display>`, the first
argument of a sequence reader (`torch.cat`, `torch.stack`, ...), `len(name)` or a truth test,
holds a list no other code reaches, and its `append` is `list.append`: an item appended stays in
it until the name is bound again, and a sequence reader handed the name reads it (`unsafe` where
nothing wrote the buffer; where the allocation runs in a loop the reader comes after, assuming
that loop runs at least once, said in the evidence). Any other use of the name (an index,
iteration, a method such as `pop`, another name for it, an argument, `return`) keeps it out: the
append is then an unknown call. Assumed, as for a display read by `torch.cat`: the reader gets
tensors it accepts (a wrong type or shape raises before any element is read).
Only for `unsafe` (never for `safe`): once the buffer is stored where the analysis does not
follow it (a container, a lambda, an object's computed slot, an attribute of `self`), a call that
is handed neither the buffer, nor a view of it, nor a name that may hold it (a method call on the
object holding it is handed it) is assumed not to write it, and the evidence of the `unsafe` read
says so ("assuming `f` does not write it"); a call made while a closure of the function shares
the buffer's name may write it. Closures, lambdas and generators defined in the analysed code
are followed wherever they may run: called, run by a built-in (`sorted(key=f)`, `sum(g)`),
stepped by a loop or an unpacking. Also only for `unsafe`: a read inside a `for` loop's body
that the loop's first pass makes before any write (`out[i] = out[i] + x`, `packed[:, c] |= v`;
analysis/dataflow/first_pass.py runs the function once more with no loop starting a second
pass) is one, assuming the loop runs at least once (said in the evidence); never for ZO002.
Iterating the buffer itself (`for row in x`, a comprehension over it, `list(x)`, `tuple(x)`,
`iter(x)`) hands out views of its rows (`Tensor.__iter__` is `unbind(0)`) that the analysis does
not follow: the buffer is lost there, and a later read is no evidence of `unsafe` (the rows may
have been written through the views; with no row, it has no element).
Functions of other modules do not leave a CUDA-graph capture
open when they return, nor close one they did not open (the file's own functions are checked).
A kernel contract applies only to a callee that resolves, through the file's imports, to exactly
one of the modules it was read from (`flash_attn`, `flash_attn_interface`, `flash_attn.cute`,
`sgl_kernel.flash_attn`, `vllm.vllm_flash_attn`, sglang's dispatcher), never to a module named
like them; varlen `out=` (`cu_seqlens_q` or `seqused_q` passed) is written only in part.

Kernels. A launch `kernel[grid](...)` of a `@triton.jit` function defined in the same module,
or imported from another scanned module where that def is its module's only binding of the
name, uses that kernel's summary (analysis/triton_summary.py): the kernel reaches memory only through
its arguments; a pointer it never dereferences is not read; a load is a definite read only when
it is unmasked, at the top level of the kernel, before any `return` and through a pointer known on
every path (not `x if c else y` nor `tl.where`; else a possible read); a pointer into part of a
buffer (`buf[:k]`) may reach all of it, so such an argument loaded by the kernel is unknown code;
a parameter a decorator's hook may read (`triton.heuristics` lambdas beyond `.shape`/`.dtype`/...,
hooks it cannot see) keeps the default for unknown code; a store is a partial write, except one
that provably covers the buffer with the launch's grid (analysis/triton_cover.py): flat blocks
`p + pid * B + tl.arange(0, B)` masked `< n` over `(cdiv(n, B),)`, or rows `p + pid * stride +
cols` masked `cols < N` over `(M,)` with `B = triton.next_power_of_2(N)` or over `(M, cdiv(N,
B))`, the store a statement of the kernel's body before any `return`, of a pointer the kernel
never loads, the buffer passed itself (a contiguous allocation, no view) to that parameter only,
`n` (or `M`, `N`, the stride) the same text as the allocation's size with names bound once or
not since (or `buf.numel()`, `buf.stride(0)`), `B` the kernel's own (the launch's argument, its
literal default, or a grid lambda's `meta["B"]`), further grid axes positive literals, no
decorator setting the pointer, `n` or the stride: written in full at the launch (assumed: offsets fit the
kernel's index type); load-then-store and atomics are a possible read and a partial write; a pointer used any other way (handed to a
helper, returned, ...) keeps the default for unknown code. A buffer nothing has written on any
path, handed to one parameter only, that the kernel loads, accumulates into or updates by an
atomic (not `atomic_xchg`) is `unsafe` (analysis/triton_reads.py): a masked or conditional load is
a path-feasibility assumption, as `if cond: x.sum()` is in plain Python, and the evidence names it
("assuming the launch runs a program where its mask holds for some element, ..., the grid is not
empty"; a loop around it runs once). Tests the launch decides are evaluated with its literal
arguments and the kernel's defaults (a `tl.constexpr` passed `False` or left at a `False` default,
a mask that is a constexpr `False`, a literal grid with a 0): such a load never runs; a
parameter the kernel binds again (`FLAG = False`, `ptr += 1`) takes neither the launch's value
nor offset 0, and `mask=None` is no mask. A test the
host alone decides (no program id, `arange`, loaded value or loop variable in it) that the
launch's literals leave open (`HAS_MASK=has_mask`: often False exactly when a dummy is passed)
is never assumed to hold: no conclusion. Never used:
a load through a pointer that may point into another parameter (`x if c else y`, `tl.where`, a
name bound on several paths), one that a store or atomic of the same parameter may precede in its
program, any after an `if` both of whose branches may return. With parts written (`indptr[1:]`),
a parameter the kernel only loads, through `p + pid * c + k` of `tl.program_id(0)` and constants,
with no loop around it and every test and mask decided true at program 0, reads element k by
program 0: `unsafe` where no write on any path reaches that element (docs/uncovered-reads.md,
section 4), assuming the grid is not empty (element k > 0 only of a 1-D buffer whose
literal size shows it). Custom ops and collectives follow the
built-in contracts of analysis/kernel_library.py, each citing its source; `async_op=True`
collectives (by keyword or position) and `irecv` (it returns before the tensor arrives) are
unknown code, and so is any call with `*args` or `**kw` (which argument is which is unknown). A collective's output list (`all_gather`'s `tensor_list`,
`all_to_all`'s `output_tensor_list`: every tensor written in full, on every rank) is followed
only for `name = [ALLOC for ...]`, a list comprehension whose element is the allocation itself,
bound to a plain local name that is bound nowhere else, never stored into or deleted through
(`name[0] = t`, `del name[i]`), and that no nested function, lambda, class or generator
reaches (analysis/dataflow/gather_lists.py). Handed as the list to such a call, every buffer of
the site is written in full; any other use of the name before that (`len`, `.pop()`,
iteration, an element read, another name for it) reads it possibly and loses it. Assumed: the
list holds correctly-sized tensors (torch's documented precondition; Gloo raises otherwise) and
the calling rank is a member of `group` (outside it the call returns without writing, as for
every collective contract); a collective that raises writes nothing.

Torch semantics come from analysis/semantics (each entry names its documentation page; the
`out=` table is generated from torch's operator schemas). Reads lose their certainty (never
`unsafe`) in a function registered with `torch.library.register_fake`/`impl_abstract` and for
a tensor allocated with `device="meta"`: neither has data. `beta=0` (literally; `beta=False`
too) makes `addmm`/`baddbmm`/`addmv`/`addbmm` ignore their input, as their documentation says,
and their in-place methods (`addmm_`, ...) write self in full without reading it. An
`empty_like(x)` right after `x = torch.empty((0,), ...)` has no element.
"""

from __future__ import annotations

from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.rules.decision import decide
from zeroopt.rules.rule import Example, Rule
from zeroopt.rules.zo001_across_functions import ACROSS_FUNCTIONS
from zeroopt.scan.findings import ZEROS_CALLS, Verdict


class ZerosOverwrittenBeforeRead(Rule):
    __doc__ = f"{(__doc__ or '').rstrip()}\n\n{ACROSS_FUNCTIONS}"
    code = "ZO001"
    name = "zeros-overwritten-before-read"
    summary = "torch.zeros whose zeros are never read: torch.empty is equivalent"
    calls = ZEROS_CALLS
    fixable = True
    examples = (
        Example(
            """
            import torch

            def f(x):
                out = torch.zeros(4)
                out.copy_(x)
                return out
            """,
            Verdict.SAFE,
            expected_replacement="""
            import torch

            def f(x):
                out = torch.empty(4)
                out.copy_(x)
                return out
            """,
        ),
        Example(
            """
            import torch

            def f(x, k: int):
                out = torch.zeros(8)
                out[:k] = x[:k]
                out[k:] = 1
                return out.sum()
            """,
            Verdict.SAFE,
            "complementary slices with an int bound",
            expected_replacement="""
            import torch

            def f(x, k: int):
                out = torch.empty(8)
                out[:k] = x[:k]
                out[k:] = 1
                return out.sum()
            """,
        ),
        Example(
            """
            import torch

            def f(x):
                out = x.new_zeros(3, 4)
                out.t().copy_(x)
                return out
            """,
            Verdict.SAFE,
            "write through a full view",
            expected_replacement="""
            import torch

            def f(x):
                out = x.new_empty(3, 4)
                out.t().copy_(x)
                return out
            """,
        ),
        Example(
            """
            import torch

            def f(a, b):
                out = torch.zeros(4)
                torch.add(a, b, out=out)
                return out
            """,
            Verdict.UNPROVEN,
            "out= may shrink it: the storage past the result keeps its zeros",
        ),
        Example(
            """
            import torch

            def f(x):
                acc = torch.zeros(4)
                acc += x
                return acc
            """,
            Verdict.UNSAFE,
            "accumulator",
        ),
        Example(
            """
            import torch

            def f(seq_lens, bs):
                kv_indptr = torch.zeros(bs + 1, dtype=torch.int32)
                kv_indptr[1:] = torch.cumsum(seq_lens, 0)
                return kv_indptr.sum()
            """,
            Verdict.UNSAFE,
            "element 0 no write covers, read by the sum",
        ),
        Example(
            """
            import torch

            def f(x, idx):
                buf = torch.zeros(8)
                row = buf[[0, 2]]
                row.fill_(1)
                return buf
            """,
            Verdict.UNSAFE,
            "a gather copies: the fill never reaches buf",
        ),
        Example(
            """
            import torch

            def f(x, n):
                out = torch.zeros(n)
                for i in range(n - 1):
                    out[i] = x[i]
                return out.sum()
            """,
            Verdict.UNSAFE,
            "the loop may run zero times over a buffer of one row, and never writes the last",
        ),
        Example(
            """
            import torch

            def f(x, n: int):
                out = torch.zeros(n, 4)
                for i in range(n):
                    out[i] = x[i]
                return out.sum()
            """,
            Verdict.SAFE,
            "a loop over the whole dimension: run zero times, the buffer is empty",
            expected_replacement="""
            import torch

            def f(x, n: int):
                out = torch.empty(n, 4)
                for i in range(n):
                    out[i] = x[i]
                return out.sum()
            """,
        ),
        Example(
            """
            import torch

            def f(x, n: int):
                out = torch.zeros(n + 128)
                for i in range(n):
                    out[i] = x[i]
                return out.sum()
            """,
            Verdict.UNSAFE,
            "padding never written",
        ),
        Example(
            """
            import torch

            def f(x, k):
                out = torch.zeros(8)
                out[:k] = x
                return out.sum()
            """,
            Verdict.UNPROVEN,
            "partial write, then a read of everything",
        ),
        Example(
            """
            import torch

            def f(lens, bs: int):
                ends = torch.zeros(bs + 1)
                ends[:-1] = torch.cumsum(lens, 0)
                return ends[-1].item()
            """,
            Verdict.UNSAFE,
            "the last position is never written, and `bs + 1` always has one",
        ),
        Example(
            """
            import torch

            def f(x, n: int):
                out = torch.zeros(n)
                out[:-1] = x
                return out.sum()
            """,
            Verdict.UNPROVEN,
            "a size that may be 0 has no last position to read",
        ),
        Example(
            """
            import torch

            def f(x, n: int):
                out = torch.zeros(n + 1)
                torch.cumsum(x, 0, out=out[:-1])
                return out.sum()
            """,
            Verdict.UNPROVEN,
            "an `out=` view may be resized into the last position",
        ),
        Example(
            """
            import torch

            def f(x, kernel):
                out = torch.zeros(8)
                kernel(out, x)
                return out
            """,
            Verdict.UNPROVEN,
            "opaque kernel",
        ),
        Example(
            """
            import torch

            class A:
                def __init__(self, n):
                    self.buf = torch.zeros(n)

            def peek(a):
                return a.buf.sum()
            """,
            Verdict.UNPROVEN,
            "stored on self: read elsewhere",
        ),
        Example(
            """
            import torch

            def f(x, flag):
                out = torch.zeros(4)
                if flag:
                    out.fill_(1)
                return out.sum()
            """,
            Verdict.UNSAFE,
            "written on one branch only",
        ),
        Example(
            """
            import numpy as np

            def f():
                return np.zeros(3)
            """,
            None,
            "not torch",
        ),
    )

    @classmethod
    def report(cls, call: str, outcome: BufferOutcome, every: bool = False) -> Verdict | None:
        return decide(outcome) if call in cls.calls else None
