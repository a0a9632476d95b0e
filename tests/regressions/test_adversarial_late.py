"""Wrong `safe` verdicts found by an adversarial pass over the mechanisms that produce `safe`,
each executed: poisoning the allocation changes the result.

- A helper of the tree that changes its argument's layout in place (`t.t_()`,
  `t.transpose_(0, 1)`) was summarised as neutral for the buffer (analysis/summaries.py
  UNTOUCHED: only metadata), so the caller went on reading its own indices as the allocation's
  layout: `x[:2] = 1` after `tr(x)` on `zeros(2, 3)` writes two of the three rows of the
  transposed buffer, and a loop `for i in range(n): x[i] = ...; tr(x)` writes rows and columns
  in turn. An in-place layout change is recorded (BufferOutcome.relayouts) and makes the
  summary UNKNOWN: the call is a hand-off.
- A module that binds its names out of sight (`globals()["range"] = f`, `exec("range = f")`,
  `builtins.range = f`: project.binds_dynamically) may give `range` (`len`, `enumerate`, ...)
  another meaning than the builtin's, as a plain `range = f` does, yet its names resolved to
  the builtins: a loop over `range(n)` writing `out[i]` was a write in full. Such a module
  resolves none of the value builtins it never binds (`range`, `len`, `int`, ...:
  Resolver.dynamic), as it already resolved no import; the reflective ones (`vars`, `getattr`)
  still resolve, which is what makes the analysis give up on what they reach. A
  module patching `builtins` for the others stays assumed (`KNOWN`).
- A module that replaces a library function or a tensor method itself
  (`dist.all_gather_into_tensor = f`, `torch.nn.init.ones_ = f`, `torch.Tensor.zero_ = f`,
  `setattr(torch.Tensor, "zero_", f)`) still had the library's contract or semantics applied to
  its calls. What a module replaces resolves to nothing there (Resolver.patched), and a
  replaced tensor method is a method not known to the analysis. Another module doing so (as
  vllm's checkpoint_weight_patch.py swaps `torch.Tensor.copy_` while weights load) stays
  assumed (`KNOWN`).
- `math.prod(dims)` was a proven int (analysis/scalars.py), but it multiplies whatever it is
  given: `[torch.tensor(1)]` gives a 0-dim tensor, which an alias (`j = k; j += 1`), a callee
  or `out=k` changes in place between `out[:k] = a` and `out[k:] = b`, or between
  `zeros(k)` and `range(k)`. Only `math.prod` of a `.shape`, a `.size()`, a slice of one or a
  display of ints is an int; any other is a size of unknown type (volatile bounds, assumed
  loop sizes), whose aliases are checked.
- Slices bounded by a name of unknown type (`out[:k] = a`, `out[k:] = b`, scalars.
  volatile_bounds) were forgotten only where a call or another node running code came between,
  not where a statement changed an object in place without a call: with `k` a 0-dim view of
  `t` (`k = t[0]`, or both handed in by the caller), `t += 1`, `t[0] = 2` or `t[...] += 1`
  moves `k`. Such a node (an augmented assignment, an item or attribute store into anything but
  the buffer and proven ints) now forgets them too (fixpoint._code_ran).
- `x.contiguous(memory_format=torch.channels_last)` on a fresh row-major buffer was taken for
  the buffer itself, as `x.contiguous()` is: it is a copy in the other layout, and writes
  through it (or through its `reshape(-1)`, itself a copy then) leave the buffer alone. Only
  `contiguous()` or `contiguous(memory_format=torch.contiguous_format)` is the buffer.
- A callee that resolves to nothing was matched against the contracts by its source text, the
  built-in ones too: a parameter named `deep_gemm` (`deep_gemm.bf16_gemm_nt(a, b, out)`) got
  DeepGEMM's "writes `d` in full", and `torch.distributed.all_gather_into_tensor(...)` spelled
  in full kept its contract where the module replaces that function. Only a contract the user
  declared is now taken by its text.
- A class body's bindings were plain stores: under a metaclass whose `__prepare__` returns a
  mapping with its own `__setitem__` (or a base's metaclass doing so, or class keywords handed
  to it), `buf = torch.zeros(3)` runs that `__setitem__`, which may read the zeros before the
  body's `buf.fill_(1.0)`. A class body with a metaclass or class keyword, an `enum` base or a
  base of its module that has one is not analysed (`unproven`); the wheels hold no allocation
  in a class body.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

CASES = [
    Case(
        "helper_transposes_in_place_before_a_slice_write",
        why="`tr(out)` transposes `out` in place to 3 x 2: `out[:2]` then writes two of its "
        "three rows, though the allocation's first dimension is 2.",
        source=r"""
import torch


def tr(t):
    t.t_()


def f():
    out = torch.zeros(2, 3)  # <- site
    tr(out)
    out[:2] = 1.0
    return out.sum()
""",
        scenario="def run():\n    return f()\n",
    ),
    Case(
        "helper_transposes_in_place_in_a_row_loop",
        why="Each pass writes row i and then transposes the buffer in place: rows 0 and 2 and "
        "column 1 are written, elements (1, 0) and (1, 2) never are.",
        source=r"""
import torch


def tr(t):
    t.t_()


def f(n: int):
    out = torch.zeros(n, n)  # <- site
    for i in range(n):
        out[i] = torch.arange(n) * 1.0
        tr(out)
    return out.sum()
""",
        scenario="def run():\n    return f(3)\n",
    ),
    Case(
        "method_transposes_in_place_in_a_row_loop",
        why="The same through a private method: `self._tr(out)` swaps the buffer's dimensions "
        "in place between the row writes.",
        source=r"""
import torch


class M:
    def __init__(self, n: int):
        self.n = n

    def _tr(self, t):
        t.transpose_(0, 1)

    def f(self):
        n = self.n
        out = torch.zeros(n, n)  # <- site
        for i in range(n):
            out[i] = torch.arange(n) * 1.0
            self._tr(out)
        return out.sum()
""",
        scenario="def run():\n    return M(3).f()\n",
    ),
]


_SHORT_LOOP = r"""


def f(n: int):
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = 1.0
    return out.sum()
"""
_RESTORE = (
    "def run():\n    try:\n        return f(3)\n    finally:\n"
    "        builtins.range = _real_range\n"
)


def _range_case(name: str, patch: str, why: str, scenario: str = "") -> Case:
    return Case(
        name,
        why=why,
        source=f"import builtins\n\nimport torch\n\n_real_range = builtins.range\n{patch}\n"
        + _SHORT_LOOP,
        scenario=scenario or "def run():\n    return f(3)\n",
    )


CASES += [
    _range_case(
        "range_rebound_through_globals",
        "globals()['range'] = lambda n: _real_range(1)",
        "The module's own `range` is a function giving one pass: `out[1:]` keep the zeros.",
    ),
    _range_case(
        "range_rebound_by_exec",
        "exec('range = lambda n: _real_range(1)')",
        "`exec` binds the module's `range` to a function giving one pass.",
    ),
    Case(
        "dict_rebound_through_globals",
        why="`dict(a=out)` is the module's function returning another dict: `d['a']` is not "
        "`out`, which keeps its zeros.",
        source=r"""
import torch

_OTHER = {"a": torch.zeros(3)}
globals()["dict"] = lambda **kw: _OTHER


def f(n: int):
    out = torch.zeros(n)  # <- site
    d = dict(a=out)
    d["a"].fill_(1.0)
    return out.sum()
""",
        scenario="def run():\n    return f(3)\n",
    ),
    _range_case(
        "builtins_range_patched_by_the_module",
        "\n\ndef _patch():\n    builtins.range = lambda n: _real_range(1)\n",
        "The module patches `builtins.range` before the call: one pass writes element 0 only.",
        "def run():\n    _patch()\n    try:\n        return f(3)\n    finally:\n"
        "        builtins.range = _real_range\n",
    ),
    Case(
        "helper_of_a_module_rebinding_range",
        why="`fill` loops over `range(t.shape[0])` in a module whose `range` gives one pass: "
        "its summary is no write in full, only row 0 is written.",
        source=r"""
import torch

from helpers import fill


def f(n: int):
    out = torch.zeros(n)  # <- site
    fill(out)
    return out.sum()
""",
        modules=(
            (
                "helpers",
                "_real_range = range\nglobals()['range'] = lambda n: _real_range(1)\n\n\n"
                "def fill(t):\n    for i in range(t.shape[0]):\n        t[i] = 1.0\n",
            ),
        ),
        scenario="def run():\n    return f(3)\n",
    ),
]

_PATCHED = r"""
import torch
import torch.distributed as dist

_REAL_AG = dist.all_gather_into_tensor
_REAL_ONES = torch.nn.init.ones_
_REAL_ZERO = torch.Tensor.zero_
{patch}


def f(n: int):
    out = torch.zeros(n)  # <- site
    {write}
    return out.sum()
"""
_UNPATCH = (
    "def run():\n    try:\n        return f(3)\n    finally:\n"
    "        dist.all_gather_into_tensor = _REAL_AG\n        torch.nn.init.ones_ = _REAL_ONES\n"
    "        torch.Tensor.zero_ = _REAL_ZERO\n"
)


def _patched_case(name: str, patch: str, write: str, why: str) -> Case:
    return Case(
        name,
        why=why,
        source=_PATCHED.format(patch=patch, write=write),
        scenario=_UNPATCH,
    )


CASES += [
    _patched_case(
        "collective_replaced_by_the_module",
        "dist.all_gather_into_tensor = lambda o, i, group=None, async_op=False: None",
        "dist.all_gather_into_tensor(out, torch.ones(3))",
        "The module replaces the collective with a function writing nothing: its built-in "
        "contract (writes the output in full) no longer describes the call.",
    ),
    _patched_case(
        "init_function_replaced_by_the_module",
        "torch.nn.init.ones_ = lambda t: t",
        "torch.nn.init.ones_(out)",
        "`torch.nn.init.ones_` is the module's identity function: nothing is written.",
    ),
    _patched_case(
        "tensor_method_replaced_by_the_module",
        "torch.Tensor.zero_ = lambda self: self",
        "out.zero_()",
        "`Tensor.zero_` is replaced by a function returning the tensor as it is.",
    ),
    Case(
        "tensor_item_store_replaced_by_the_module",
        why="`torch.Tensor.__setitem__` is the module's function writing nothing: `out[:] = 1.0` "
        "leaves the zeros.",
        source=r"""
import torch

_REAL = torch.Tensor.__setitem__
torch.Tensor.__setitem__ = lambda self, k, v: None


def f(n: int):
    out = torch.zeros(n)  # <- site
    out[:] = 1.0
    return out.sum()
""",
        scenario="def run():\n    try:\n        return f(3)\n    finally:\n"
        "        torch.Tensor.__setitem__ = _REAL\n",
    ),
    _patched_case(
        "tensor_method_replaced_by_setattr",
        "setattr(torch.Tensor, 'zero_', lambda self: self)",
        "out.zero_()",
        "`setattr(torch.Tensor, 'zero_', ...)` replaces the method as an attribute store does.",
    ),
]

_PROD = r"""
import math

import torch


def bump(v):
    v += 1


def f(dims, n: int):
    k = math.prod(dims)
    out = torch.zeros(n)  # <- site
    out[:k] = 1.0
    {change}
    out[k:] = 2.0
    return out.sum()
"""
_PROD_RUN = "def run():\n    return f([torch.tensor(1)], 3)\n"

CASES += [
    Case(
        "product_of_a_tensor_changed_through_an_alias",
        why="`k` is `tensor(1)`: `j += 1` on its alias makes it 2, and `out[k:]` leaves "
        "element 1 alone.",
        source=_PROD.format(change="j = k\n    j += 1"),
        scenario=_PROD_RUN,
    ),
    Case(
        "product_of_a_tensor_changed_by_out",
        why="`torch.add(k, 1, out=k)` moves the 0-dim tensor `k` from 1 to 2 in place.",
        source=_PROD.format(change="torch.add(k, 1, out=k)"),
        scenario=_PROD_RUN,
    ),
    Case(
        "product_of_a_tensor_changed_by_a_callee",
        why="`bump(k)` adds 1 in place to the 0-dim tensor `k` it is handed.",
        source=_PROD.format(change="bump(k)"),
        scenario=_PROD_RUN,
    ),
    Case(
        "product_of_a_tensor_as_a_loop_size",
        why="`zeros(k)` has 3 elements; `j -= 1` makes `k` 2 before `range(k)`.",
        source=r"""
import math

import torch


def f(dims):
    k = math.prod(dims)
    out = torch.zeros(k)  # <- site
    j = k
    j -= 1
    for i in range(k):
        out[i] = 1.0
    return out.sum()
""",
        scenario="def run():\n    return f([torch.tensor(3)])\n",
    ),
    Case(
        "product_of_unknown_items_as_slice_bounds",
        kind="fix",
        why="Near miss: with no alias of `k` and nothing run between, `out[:k]` and `out[k:]` "
        "cover the buffer whatever `k` is (volatile bounds).",
        source=_PROD.format(change="").replace("\n    \n", "\n"),
        scenario=_PROD_RUN,
    ),
    Case(
        "product_of_a_shape_is_an_int",
        kind="fix",
        why="Near miss: `math.prod(x.shape[1:])` multiplies Python ints: `j += 1` rebinds `j` "
        "alone.",
        source=r"""
import math

import torch


def f(x, n: int):
    k = math.prod(x.shape[1:])
    out = torch.zeros(n)  # <- site
    out[:k] = 1.0
    j = k
    j += 1
    out[k:] = 2.0
    return out.sum()
""",
        scenario="def run():\n    return f(torch.ones(2, 1), 3)\n",
    ),
]

_VIEW_BOUND = r"""
import torch


def f(t, k, n: int, m: int):
    out = torch.zeros(n)  # <- site
    out[:k] = 1.0
    {change}
    out[k:] = 2.0
    return out.sum()
"""
_VIEW_RUN = "def run():\n    t = torch.tensor([1])\n    return f(t, t[0], 3, 0)\n"

CASES += [
    Case(
        "bound_viewing_a_tensor_changed_by_an_augmented_assignment",
        why="`k = t[0]` is a 0-dim view of `t`: `t += 1` adds in place, `k` becomes 2 and "
        "`out[k:]` leaves element 1 alone.",
        source=r"""
import torch


def f(t, n: int):
    k = t[0]
    out = torch.zeros(n)  # <- site
    out[:k] = 1.0
    t += 1
    out[k:] = 2.0
    return out.sum()
""",
        scenario="def run():\n    return f(torch.tensor([1]), 3)\n",
    ),
    Case(
        "bound_handed_in_as_a_view_of_another_argument",
        why="The caller passes `t[0]` as `k`: `t += 1` moves it from 1 to 2.",
        source=_VIEW_BOUND.format(change="t += 1"),
        scenario=_VIEW_RUN,
    ),
    Case(
        "bound_changed_by_an_item_store",
        why="`t[0] = 2` stores into the tensor `k` views.",
        source=_VIEW_BOUND.format(change="t[0] = 2"),
        scenario=_VIEW_RUN,
    ),
    Case(
        "bound_changed_by_an_augmented_item_store",
        why="`t[...] += 1` adds in place to every element of `t`, `k` among them.",
        source=_VIEW_BOUND.format(change="t[...] += 1"),
        scenario=_VIEW_RUN,
    ),
    Case(
        "int_rebound_between_slices_of_a_volatile_bound",
        kind="fix",
        why="Near miss: `m += 1` rebinds a proven int; nothing can change `k` in place.",
        source=_VIEW_BOUND.format(change="m += 1"),
        scenario=_VIEW_RUN,
    ),
    Case(
        "store_into_the_buffer_between_slices_of_a_volatile_bound",
        kind="fix",
        why="Near miss: a store into the buffer itself between the two writes changes no bound.",
        source=_VIEW_BOUND.format(change="out[0] = 3.0"),
        scenario=_VIEW_RUN,
    ),
    Case(
        "buffer_on_self_written_by_two_slices_of_a_volatile_bound",
        kind="fix",
        why="Near miss: `self.out[:k] = a` stores into the buffer held on `self` itself, which "
        "no bound handed in can view; the second slice writes the rest.",
        source=r"""
import torch


class Holder:
    def fill(self, t, k, n: int):
        self.out = torch.zeros(n)  # <- site
        self.out[:k] = 1.0
        self.out[k:] = 2.0
        return self.out.sum()


def f(t, k, n: int, m: int):
    return Holder().fill(t, k, n)
""",
        scenario=_VIEW_RUN,
    ),
    Case(
        "bound_viewing_another_attribute_changed_between_slices",
        why="`k` views `self.t`: `self.t[0] = 2` moves it from 1 to 2 between the two slices "
        "of the buffer held on `self`, and `self.out[k:]` leaves element 1 alone.",
        source=r"""
import torch


class Holder:
    def fill(self, t, k, n: int):
        self.t = t
        self.out = torch.zeros(n)  # <- site
        self.out[:k] = 1.0
        self.t[0] = 2
        self.out[k:] = 2.0
        return self.out.sum()


def f(t, k, n: int, m: int):
    return Holder().fill(t, k, n)
""",
        scenario=_VIEW_RUN,
    ),
]

CASES += [
    Case(
        "channels_last_copy_of_the_allocation_written",
        why="`.contiguous(memory_format=torch.channels_last)` copies the zeros into another "
        "layout; the reshape of that copy is a copy again: `out` keeps the copied zeros.",
        source=r"""
import torch


def f(src):
    out = torch.zeros(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)  # <- site
    out.reshape(-1).copy_(src)
    return out.sum()
""",
        scenario="def run():\n    return f(torch.arange(120.0))\n",
    ),
    Case(
        "channels_last_copy_of_the_buffer_written",
        why="`v` is a channels-last copy of `out`: writing it leaves `out` unwritten.",
        source=r"""
import torch


def f(src):
    out = torch.zeros(2, 3, 4, 5)  # <- site
    v = out.contiguous(memory_format=torch.channels_last)
    v.copy_(src.view(2, 3, 4, 5))
    return out.sum()
""",
        scenario="def run():\n    return f(torch.arange(120.0))\n",
    ),
    Case(
        "row_major_contiguous_is_the_buffer",
        kind="fix",
        why="Near miss: `contiguous(memory_format=torch.contiguous_format)` of a fresh row-major "
        "buffer returns it, and its `reshape(-1)` is a view: the copy writes every element.",
        source=r"""
import torch


def f(src):
    out = torch.zeros(2, 3, 4, 5).contiguous(memory_format=torch.contiguous_format)  # <- site
    out.reshape(-1).copy_(src)
    return out.sum()
""",
        scenario="def run():\n    return f(torch.arange(120.0))\n",
    ),
]

CASES += [
    Case(
        "parameter_named_like_a_library_with_a_contract",
        why="`deep_gemm` is an argument, not the DeepGEMM module: its `bf16_gemm_nt` writes "
        "nothing into `out`.",
        source=r"""
import torch


def f(n: int, deep_gemm):
    out = torch.zeros(n, n)  # <- site
    deep_gemm.bf16_gemm_nt(torch.ones(n, n), torch.ones(n, n), out)
    return out.sum()
""",
        scenario="import types\n\n\ndef run():\n    return f(3, types.SimpleNamespace("
        "bf16_gemm_nt=lambda a, b, d: None))\n",
    ),
    Case(
        "collective_spelled_in_full_replaced_by_the_module",
        why="The module replaces `torch.distributed.all_gather_into_tensor` and calls it by its "
        "full name: the replacement writes nothing.",
        source=r"""
import torch
import torch.distributed

_REAL_AG = torch.distributed.all_gather_into_tensor
torch.distributed.all_gather_into_tensor = lambda o, i, group=None, async_op=False: None


def f(n: int):
    out = torch.zeros(n)  # <- site
    torch.distributed.all_gather_into_tensor(out, torch.ones(n))
    return out.sum()
""",
        scenario="def run():\n    try:\n        return f(3)\n    finally:\n"
        "        torch.distributed.all_gather_into_tensor = _REAL_AG\n",
    ),
]

CASES += [
    Case(
        "class_body_namespace_of_a_metaclass_reads_the_binding",
        why="`Meta.__prepare__` gives the body a `Spy` mapping: binding `buf` runs "
        "`Spy.__setitem__`, which sums the zeros before `buf.fill_(1.0)`.",
        source=r"""
import torch

SEEN = []


class Spy(dict):
    def __setitem__(self, key, value):
        if isinstance(value, torch.Tensor):
            SEEN.append(value.sum())
        super().__setitem__(key, value)


class Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return Spy()


class K(metaclass=Meta):
    buf = torch.zeros(3)  # <- site
    buf.fill_(1.0)
""",
        scenario="def run():\n    return SEEN[0], K.buf\n",
    ),
    Case(
        "class_body_of_a_subclass_of_a_class_with_a_metaclass",
        why="`K(Base)` inherits `Meta`: its body runs in a `Spy` mapping too, which sums the "
        "zeros when `buf` is bound.",
        source=r"""
import torch

SEEN = []


class Spy(dict):
    def __setitem__(self, key, value):
        if isinstance(value, torch.Tensor):
            SEEN.append(value.sum())
        super().__setitem__(key, value)


class Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return Spy()


class Base(metaclass=Meta):
    pass


class K(Base):
    buf = torch.zeros(3)  # <- site
    buf.fill_(1.0)
""",
        scenario="def run():\n    return SEEN[0], K.buf\n",
    ),
    Case(
        "class_body_of_a_plain_class",
        kind="fix",
        why="Near miss: `class K(object)` runs its body in a plain dict: the zeros are written "
        "in full before anything can see them.",
        source=r"""
import torch


class K(object):
    buf = torch.zeros(3)  # <- site
    buf.fill_(1.0)
""",
        scenario="def run():\n    return K.buf\n",
    ),
]

# Wrong `safe`s that rest on a stated assumption, kept as strict known failures.
KNOWN = [
    Case(
        "builtins_range_patched_by_another_module",
        why="Another module of the program sets `builtins.range` to a function giving one pass: "
        "every module's `range` is then that function.",
        source=r"""
import torch

import patches  # noqa: F401


def f(n: int):
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = 1.0
    return out.sum()
""",
        modules=(
            (
                "patches",
                "import builtins\n\nREAL = builtins.range\n\n\n"
                "def short():\n    builtins.range = lambda n: REAL(1)\n",
            ),
        ),
        scenario="def run():\n    patches.short()\n    try:\n        return f(3)\n"
        "    finally:\n        import builtins\n\n        builtins.range = patches.REAL\n",
        marks=(
            pytest.mark.xfail(
                strict=True,
                reason="assumed (docs/whole-program.md): no module patches the builtins "
                "(`builtins.range`, `builtins.classmethod`) for the others",
            ),
        ),
    ),
    Case(
        "tensor_method_replaced_by_another_module",
        why="Another module replaces `torch.Tensor.zero_` with a function writing nothing, as "
        "vllm's checkpoint_weight_patch.py replaces `copy_` while weights load.",
        source=r"""
import torch

import patches  # noqa: F401


def f(n: int):
    out = torch.zeros(n)  # <- site
    out.zero_()
    return out.sum()
""",
        modules=(
            (
                "patches",
                "import torch\n\nREAL = torch.Tensor.zero_\n\n\n"
                "def install():\n    torch.Tensor.zero_ = lambda self: self\n",
            ),
        ),
        scenario="def run():\n    patches.install()\n    try:\n        return f(3)\n"
        "    finally:\n        patches.torch.Tensor.zero_ = patches.REAL\n",
        marks=(
            pytest.mark.xfail(
                strict=True,
                reason="assumed: torch's functions and tensor methods keep their semantics "
                "(no other module of the program replaces them)",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params([*CASES, *KNOWN]))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
