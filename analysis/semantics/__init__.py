"""Torch semantics as data, in one place: what each torch function, Tensor method and built-in
does to a tensor's data, which context managers and decorators mean what, and the built-in
contracts for callees the analysis cannot see into. Every entry names its source.

- `entries.py`: one entry per name (kind, effect, source); the `*_METHODS`/`*_FUNCTIONS` tables
  below are derived from it, so a name cannot sit in two effect tables.
- `out_table.py`: the functions whose `out=` they write, generated from torch's operator schemas
  by `out_schema.py` (the torch version and date are in the file).
- this module: the smaller tables (contexts, frames, decorators, allocation calls) and the
  built-in contracts, each with its source.

How to add a torch function or a kernel contract: docs/semantics.md.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from zeroopt.analysis.options import Contract
from zeroopt.analysis.semantics.entries import ENTRIES, Effect, Entry, Kind, names, source_of
from zeroopt.analysis.semantics.out_table import OUT_ARGUMENTS

__all__ = ["ENTRIES", "Effect", "Entry", "Kind", "source_of"]

_M, _A, _F = Kind.METHOD, Kind.ATTRIBUTE, Kind.FUNCTION

METADATA_ATTRS = names(_A, Effect.METADATA)
METADATA_METHODS = names(_M, Effect.METADATA)
# Of those, the ones that return their receiver: the result is another name for the buffer
# (https://pytorch.org/docs/stable/generated/torch.Tensor.requires_grad_.html; `detach_()` detaches
# in place and returns self: https://pytorch.org/docs/stable/generated/torch.Tensor.detach_.html).
RETURNS_SELF_METHODS = frozenset({"requires_grad_", "detach_"})
# Only the first argument of these is metadata (`full_like(x, fill)` reads nothing of x).
METADATA_FUNCTIONS = names(_F, Effect.METADATA)
FULL_WRITE_METHODS = names(_M, Effect.FULL_WRITE)
FULL_WRITE_FUNCTIONS = names(_F, Effect.FULL_WRITE)  # torch.nn.init.*_: the first argument
PARTIAL_WRITE_METHODS = names(_M, Effect.PARTIAL_WRITE)
FULL_VIEW_METHODS = names(_M, Effect.FULL_VIEW)
FULL_VIEW_ATTRS = names(_A, Effect.FULL_VIEW)
PARTIAL_VIEW_METHODS = names(_M, Effect.PARTIAL_VIEW)
MAYBE_COPY_METHODS = names(_M, Effect.MAYBE_COPY)
INPLACE_LAYOUT_METHODS = names(_M, Effect.INPLACE_LAYOUT)
RESIZE_METHODS = names(_M, Effect.RESIZE)
SPLIT_METHODS = names(_M, Effect.SPLIT)  # a tuple of views: not followed, so they escape
READ_METHODS = names(_M, Effect.READ)
READ_MODIFY_WRITE_METHODS = names(_M, Effect.READ_MODIFY_WRITE)
EXPOSES_MEMORY_METHODS = names(_M, Effect.EXPOSES_MEMORY)
READ_BUILTINS = names(_F, Effect.READ)
PURE_BUILTINS = names(_F, Effect.PURE) | frozenset(
    n for n in METADATA_FUNCTIONS if n.startswith("builtins.")
)
FRAME_INTROSPECTION = names(_F, Effect.FRAME_ACCESS)

# Method names torch.Tensor defines: on a receiver that is not a buffer they read their
# arguments and run no user code.
TENSOR_METHODS = (
    METADATA_METHODS | FULL_WRITE_METHODS | PARTIAL_WRITE_METHODS | FULL_VIEW_METHODS
    | PARTIAL_VIEW_METHODS | MAYBE_COPY_METHODS | READ_METHODS | READ_MODIFY_WRITE_METHODS
)  # fmt: skip
# `torch.<name>(x, ...)` that returns a view of x as the method does (`torch.narrow`,
# `torch.flatten`); `as_tensor`/`asarray`/`atleast_*d` return x itself when they can
# (https://pytorch.org/docs/stable/generated/torch.as_tensor.html).
FUNCTIONAL_VIEWS = (
    FULL_VIEW_METHODS | PARTIAL_VIEW_METHODS | MAYBE_COPY_METHODS | SPLIT_METHODS
    | {"as_tensor", "asarray", "atleast_1d", "atleast_2d", "atleast_3d"}
) - {"to", "cuda", "cpu", "type"}  # fmt: skip

# torch functions whose `out=` tensor(s) they write, generated from the operator schemas
# (out_table.py). PyTorch resizes `out` to the result's shape: a smaller result leaves the
# storage past it unwritten, so the analysis takes this as a write, never as a full one.
OUT_FUNCTIONS = frozenset(OUT_ARGUMENTS)

# `beta=0` makes these ignore their input: "If beta is 0, then input will be ignored, and nan and
# inf in it will not be propagated" (each function's page, e.g.
# https://pytorch.org/docs/stable/generated/torch.addmm.html). Only a literal 0 or 0.0 counts.
BETA_IGNORES_INPUT = frozenset({"torch.addmm", "torch.baddbmm", "torch.addmv", "torch.addbmm"})
# Their in-place methods: same documentation (Tensor.addmm_ is "In-place version of addmm()");
# `beta=False` is taken as 0 (run on torch 2.13 CPU: a NaN self is not propagated by
# `torch.addmm(self, a, b, beta=False)` nor by `self.addmm_(a, b, beta=0)`).
BETA_IGNORES_SELF_METHODS = frozenset({"addmm_", "baddbmm_", "addmv_", "addbmm_"})

# Reads of EVERY element (https://pytorch.org/docs/stable/generated/torch.Tensor.{name}.html,
# torch.{name}.html, functions.html for built-ins): elementwise operators, reductions, scans,
# sorts, copies, concatenation and matrix products compute each output from every input
# element. Only these make a read of the buffer's first element definite (uncovered.py); the
# other readers read what an index, a mask, a repeat count or a diagonal picks (`gather`,
# `index_select`, `where`, `repeat`, `triu`), run a short-circuit (`any`, `all`), or ignore
# `self` when beta is 0 (`addmm_`). Printing and formatting (`print`, `str`, `repr`, f-strings)
# summarise a large tensor to its first and last items, so they are not listed.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WHOLE_READ_METHODS = (READ_METHODS | READ_MODIFY_WRITE_METHODS) - _words(
    """gather index_select masked_select take where any all repeat repeat_interleave tril triu
    __len__ index_add_ scatter_add_ scatter_reduce_ index_reduce_ addmm_ baddbmm_ addmv_ addr_
    masked_scatter"""
)
# Tensor methods (on another receiver) that read every element of each tensor argument:
# `y.copy_(x)`, `y.add(x)`, `y.index_select(0, x)` (every index is read), `a.matmul(x)`.
WHOLE_ARGUMENT_METHODS = _words(
    """copy_ add sub mul div add_ sub_ mul_ div_ matmul mm bmm mv dot eq ne lt le gt ge equal
    allclose isclose maximum minimum index_select gather"""
)
WHOLE_READ_FUNCTIONS = frozenset(
    f"torch.{n}"
    for n in _words(
        """cat concat concatenate stack hstack vstack sum mean prod cumsum cumprod add sub mul
    div matmul mm bmm mv dot clone equal allclose isclose abs neg exp log sqrt rsqrt sigmoid
    tanh relu softmax log_softmax maximum minimum eq ne lt le gt ge argmax argmin amax amin sort
    argsort topk nonzero count_nonzero flip roll diff bincount unique logsumexp"""
    )
) | frozenset(f"builtins.{n}" for n in _words("float int bool complex abs round sum"))

# Functions whose first argument is a sequence of tensors they read in full and keep no reference
# to (https://pytorch.org/docs/stable/generated/torch.cat.html, torch.stack, torch.hstack, ...:
# "the given sequence of tensors"; the result is new memory).
SEQUENCE_READERS = frozenset(
    f"torch.{n}"
    for n in _words("cat concat concatenate stack hstack vstack dstack column_stack row_stack")
)

# Decorators that register a fake (meta) implementation: it runs on tensors without data
# (https://pytorch.org/docs/stable/library.html#torch.library.register_fake; impl_abstract is
# its former name).
FAKE_REGISTRATIONS = frozenset(
    {"torch.library.register_fake", "torch.library.impl_abstract", "torch.library.register_meta"}
)

# The allocations the rules judge, as the findings name them (`Tensor.x` is a method call), and
# the empty twin each zero-filling one is rewritten to, position for position.
ZEROS_CALLS = ("torch.zeros", "torch.zeros_like", "Tensor.new_zeros")
EMPTY_CALLS = ("torch.empty", "torch.empty_like", "Tensor.new_empty", "torch.empty_strided")

# Methods whose result is a Python int (Tensor.numel/dim/ndimension/nelement/element_size return
# int, https://pytorch.org/docs/stable/generated/torch.Tensor.numel.html and siblings; `item` of
# an integer tensor and int.bit_length too), and built-ins that return an int for int arguments
# (https://docs.python.org/3/library/functions.html). Slice bounds may mention only such names.
INT_RESULT_METHODS = frozenset(
    {"numel", "dim", "ndimension", "nelement", "element_size", "item", "bit_length"}
)
INT_RESULT_BUILTINS = frozenset({"len", "int", "max", "min", "abs", "round"})

# torch factories that allocate a fresh tensor of the shape they are given.
ALLOCATION_FUNCTIONS = frozenset(
    {"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.rand", "torch.randn"}
)

# torch namespaces whose functions read their tensor arguments (and call no user code).
KNOWN_READ_NAMESPACES = (
    "torch.",
    "torch.nn.functional.",
    "torch.linalg.",
    "torch.fft.",
    "torch.special.",
)
# ...except these: custom kernels and runtime hooks are opaque until a contract describes them.
OPAQUE_NAMESPACES = (
    "torch.ops.",
    "torch.library.",
    "torch.cuda.",
    "torch.distributed.",
    "torch.utils.",
    "torch._",
    "torch.compile",
    "torch.jit.",
    "torch.nn.Module",
    "torch.autograd.",
    # Control flow that runs the functions it is handed (`torch.cond(p, f, g, ops)`).
    "torch.cond",
    "torch.while_loop",
    "torch.vmap",
)

# Built-ins (of READ_BUILTINS and PURE_BUILTINS) that run code they are handed: a key function
# (`sorted(xs, key=f)`) or the generator they consume (`sum(g)`, `set(g)`).
CALLBACK_BUILTINS = frozenset(
    f"builtins.{name}"
    for name in ("sorted", "max", "min", "sum", "list", "tuple", "any", "all", "iter", "next",
                 "set", "frozenset", "dict")
)  # fmt: skip

# Frames and their attributes reach every local variable
# (https://docs.python.org/3/reference/datamodel.html#frame-objects).
FRAME_ATTRS = frozenset(
    {"f_locals", "f_globals", "tb_frame", "f_back", "gi_frame", "cr_frame", "ag_frame"}
)
FRAME_NAMES = frozenset(
    {"locals", "vars", "eval", "exec", "globals", "_getframe", "currentframe", *FRAME_ATTRS}
)
# What a module's text must mention to read call frames (a cheap test before the regex).
FRAME_WORDS = ("_getframe", "currentframe", "f_back", "f_locals", "getouterframes", "inspect.")
FRAME_PATTERN = (
    r"_getframe|currentframe|\bf_back\b|\bf_locals\b|getouterframes|inspect\.stack|inspect\.trace"
)
# Attributes that reach every attribute of an object: using one uses the object whole
# (https://docs.python.org/3/reference/datamodel.html#customizing-attribute-access).
REFLECTIVE_ATTRS = frozenset(
    {"__dict__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__"}
)
# Methods that open or close a CUDA-graph capture by hand: between them, tensor operations are
# recorded, not run (https://pytorch.org/docs/stable/generated/torch.cuda.CUDAGraph.html).
MANUAL_CAPTURE = frozenset({"capture_begin", "capture_end"})
# Context managers that capture a CUDA graph (https://pytorch.org/docs/stable/generated/torch.cuda.graph.html).
CAPTURE_CONTEXTS = frozenset({"torch.cuda.graph", "torch.cuda.graphs.graph"})
# Context managers known not to suppress exceptions (their __exit__ returns a false value;
# each one's documentation page).
NON_SUPPRESSING_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.enable_grad",
        "torch.inference_mode",
        "torch.set_grad_enabled",
        "torch.autocast",
        "torch.cuda.graph",
        "torch.cuda.stream",
        "torch.cuda.device",
        "torch.cuda.amp.autocast",
        "torch.amp.autocast",
        "torch.device",
        "torch.profiler.record_function",
        "torch.autograd.profiler.record_function",
        "contextlib.nullcontext",
        "builtins.open",
    }
)

# Built-in contracts: callees that fill an argument in full without reading it.
BUILTIN_CONTRACTS = (
    # torch.distributed documentation ("output_tensor ... to accommodate tensor elements from all
    # ranks"; reduce_scatter_tensor "output ... holds the reduced result"; recv fills):
    # https://pytorch.org/docs/stable/distributed.html
    Contract("torch.distributed.all_gather_into_tensor", (0, "output_tensor"), "torch.distributed docs"),
    Contract("torch.distributed.reduce_scatter_tensor", (0, "output"), "torch.distributed docs"),
    Contract("torch.distributed.all_to_all_single", (0, "output"), "torch.distributed docs"),
    Contract("torch.distributed.recv", (0, "tensor"), "torch.distributed docs"),
    # Not `irecv`: it returns a request before the tensor has arrived (its `wait()` completes it).
    # DeepGEMM's BF16 GEMMs compute D = A @ B (+ C) into `d` (github.com/deepseek-ai/DeepGEMM,
    # deep_gemm/__init__.py: `bf16_gemm_nn(a, b, d, c=None, compiled_dims='nk')` calls
    # `_C.bf16_gemm_nn(a, b, d, ...)`; csrc/apis/gemm.hpp `early_return`: m == 0 or n == 0 has no
    # element, k == 0 zero-fills d or copies c into it; otherwise the kernel's epilogue stores
    # every tile of d). `c` is read.
    *(
        Contract(f"deep_gemm.bf16_gemm_{layout}", (2, "d"), "DeepGEMM: d = a @ b (+ c), csrc/apis/gemm.hpp")
        for layout in ("nt", "nn", "tn", "tt")
    ),
)  # fmt: skip


def is_known_reader(qualified: str) -> bool:
    """A torch *function* that reads its tensor arguments and runs no user code.

    Only functions directly in the listed namespaces count (`torch.cat`, `F.pad`); classes such
    as `torch.nn.Parameter` wrap their argument without reading it, and deeper modules hold
    hooks and kernels: all of those stay unknown.
    """
    if any(qualified.startswith(p) for p in OPAQUE_NAMESPACES):
        return False
    for prefix in KNOWN_READ_NAMESPACES:
        if qualified.startswith(prefix):
            rest = qualified[len(prefix) :]
            return "." not in rest and rest[:1].islower()
    return False


def iterates_without_code(e: ast.expr, qualify: Callable[[ast.expr], str | None]) -> bool:
    """Iterating `e` runs no code of the program: a literal display or string, the list a
    comprehension built, `range(...)`, and `enumerate`/`zip` of those. Anything else may be a
    generator, whose body runs at every step."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, str | bytes)
    if isinstance(e, ast.List | ast.Tuple | ast.Set):
        return not any(isinstance(x, ast.Starred) for x in e.elts)
    if isinstance(e, ast.Dict):
        return None not in e.keys  # `{**m}` iterates `m`
    if isinstance(e, ast.ListComp | ast.SetComp | ast.DictComp):
        return True  # iterating the built container; its own loops are judged where it is built
    if isinstance(e, ast.Call) and not e.keywords:
        name = qualify(e.func)
        if name == "builtins.range":
            return not any(isinstance(a, ast.Starred) for a in e.args)
        if name == "builtins.enumerate":  # the second argument is the start number
            return bool(e.args) and iterates_without_code(e.args[0], qualify)
        if name == "builtins.zip":
            return all(iterates_without_code(a, qualify) for a in e.args)
    return False
