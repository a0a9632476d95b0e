"""What torch operations do to a tensor's data, as tables: the analysis is only as sound as these.

Anything not listed is an unknown use, which the analysis treats as a possible read (`unproven`).
Listing something as a *write* or *metadata* is the dangerous direction; each entry here was
checked against PyTorch's documented semantics.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from zeroopt.analysis.options import Contract

# Attributes and methods that look only at metadata, never at element values.
METADATA_ATTRS = frozenset(
    {
        "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "is_meta", "layout",
        "requires_grad", "is_leaf", "names", "is_sparse", "is_quantized", "itemsize", "nbytes",
        "grad_fn",
    }
)  # fmt: skip
METADATA_METHODS = frozenset(
    {
        "size", "dim", "numel", "nelement", "stride", "element_size", "is_contiguous",
        "storage_offset", "get_device", "is_floating_point", "is_complex", "is_pinned",
        "is_set_to", "type_as_shape", "ndimension", "requires_grad_", "retain_grad",
        "is_shared", "is_inference", "detach_",
    }
)  # fmt: skip
# Of those, the ones that return their receiver: the result is another name for the buffer.
# `detach_()` detaches in place and returns self (torch docs, Tensor.detach_).
RETURNS_SELF_METHODS = frozenset({"requires_grad_", "detach_"})
METADATA_FUNCTIONS = frozenset(
    {
        "builtins.len", "builtins.isinstance", "builtins.id", "builtins.type", "builtins.hasattr",
        "torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like",
        "torch.rand_like", "torch.randn_like", "torch.randint_like", "torch.numel",
        "torch.is_tensor", "torch.is_floating_point", "torch.is_complex",
        "torch.is_nonzero_shape",
    }
)  # fmt: skip

# In-place methods that write every element of the tensor without reading any.
FULL_WRITE_METHODS = frozenset(
    {
        "copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "bernoulli_",
        "exponential_", "geometric_", "cauchy_", "log_normal_",
    }
)  # fmt: skip
# torch.nn.init functions that fill their first argument in full.
FULL_WRITE_FUNCTIONS = frozenset(
    f"torch.nn.init.{name}"
    for name in (
        "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
        "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
        "trunc_normal_", "orthogonal_", "sparse_",
    )
)  # fmt: skip
# In-place methods that write some elements and read none.
PARTIAL_WRITE_METHODS = frozenset(
    {
        "index_copy_", "index_fill_", "index_put_", "scatter_", "masked_fill_",
        "masked_scatter_", "put_", "fill_diagonal_",
    }
)  # fmt: skip

# Views that cover every element of their base: a full write through them is a full write.
FULL_VIEW_METHODS = frozenset(
    {"view", "view_as", "t", "transpose", "permute", "unsqueeze", "squeeze", "swapaxes",
     "swapdims", "movedim", "moveaxis", "unflatten", "detach", "adjoint", "conj"}
)  # fmt: skip
FULL_VIEW_ATTRS = frozenset({"T", "mT", "H", "mH", "data"})
# Views of part of the base: a write through them is a partial write.
PARTIAL_VIEW_METHODS = frozenset(
    {"narrow", "select", "diagonal", "unfold", "as_strided", "real", "imag"}
)  # fmt: skip
# May return the base itself (a view) or a copy: writes through the result prove nothing, and a
# copy would read the data.
MAYBE_COPY_METHODS = frozenset(
    {
        "reshape", "flatten", "contiguous", "to", "cuda", "cpu", "float", "half", "double",
        "bfloat16", "int", "long", "short", "bool", "byte", "char", "type", "type_as",
        "pin_memory", "reshape_as", "expand", "expand_as", "broadcast_to", "ravel",
        "view_as_real", "share_memory_",
    }
)  # fmt: skip
# In-place layout changes: no data is read or written, the tensor becomes another view.
INPLACE_LAYOUT_METHODS = frozenset(
    {"t_", "transpose_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_"}
)  # fmt: skip
# Change the size or storage in place: new elements are uninitialised whatever came before.
RESIZE_METHODS = frozenset({"resize_", "resize_as_", "set_", "as_strided_"})
# Returns a tuple of views: the analysis does not track tuple elements, so these escape.
SPLIT_METHODS = frozenset({"chunk", "split", "unbind", "tensor_split", "split_with_sizes"})

# Methods that certainly read element values (a read before any write is `unsafe`).
READ_METHODS = frozenset(
    {
        "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "std", "var",
        "norm", "any", "all", "item", "tolist", "clone", "cumsum", "cumprod", "abs", "neg",
        "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "softmax", "log_softmax",
        "matmul", "mm", "bmm", "mv", "dot", "add", "sub", "mul", "div", "pow", "eq", "ne", "lt",
        "le", "gt", "ge", "equal", "allclose", "isclose", "isnan", "isinf", "isfinite",
        "nonzero", "count_nonzero", "sort", "argsort", "topk", "unique", "gather",
        "index_select", "masked_select", "take", "where", "clamp", "clip", "round", "floor",
        "ceil", "sign", "repeat", "repeat_interleave", "flip", "roll", "tril", "triu",
        "tobytes", "__len__", "cumsum_", "bincount", "sum_to_size", "logsumexp",
    }
)  # fmt: skip
# In-place methods that read their own data before writing it (accumulators and friends).
READ_MODIFY_WRITE_METHODS = frozenset(
    {
        "add_", "sub_", "mul_", "div_", "pow_", "clamp_", "clamp_min_", "clamp_max_", "abs_",
        "neg_", "exp_", "log_", "sqrt_", "relu_", "sigmoid_", "tanh_", "index_add_",
        "scatter_add_", "scatter_reduce_", "index_reduce_", "addmm_", "addcmul_", "addcdiv_",
        "lerp_", "masked_scatter", "floor_", "ceil_", "round_", "sign_", "copysign_",
        "bitwise_and_", "bitwise_or_", "bitwise_xor_", "logical_and_", "logical_or_",
        "fmod_", "remainder_", "maximum_", "minimum_", "cumsum_", "baddbmm_", "addmv_",
        "addr_", "nan_to_num_",
    }
)  # fmt: skip

# torch functions whose `out=` tensor they write (every element of the result's shape). PyTorch
# resizes `out` to that shape: a smaller result leaves the storage past it unwritten, so the
# analysis takes this as a write, never as a full one (regression 022).
OUT_FUNCTIONS = frozenset(
    f"torch.{name}"
    for name in (
        "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
        "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos", "clamp",
        "maximum", "minimum", "where", "mm", "bmm", "matmul", "addmm", "baddbmm", "mv", "cat",
        "concat", "concatenate", "stack", "cumsum", "cumprod", "sum", "mean", "amax", "amin",
        "prod", "index_select", "gather", "arange", "linspace", "zeros", "ones", "full",
        "rand", "randn", "randint", "randperm", "eq", "ne", "lt", "le", "gt", "ge",
        "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "round",
        "floor", "ceil", "sign", "softmax", "log_softmax", "lerp", "erf", "outer", "einsum",
        "repeat_interleave", "take", "masked_select", "searchsorted", "bucketize", "tril",
        "triu", "flip", "roll", "narrow_copy", "clone",
    )
)  # fmt: skip

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

# Built-ins that certainly read the values of a tensor argument.
READ_BUILTINS = frozenset(
    f"builtins.{name}"
    for name in (
        "print", "float", "int", "bool", "str", "repr", "sum", "list", "tuple", "max", "min",
        "abs", "round", "sorted", "any", "all", "format", "complex", "iter", "next",
    )
)  # fmt: skip
# Built-ins (of these and of PURE_BUILTINS below) that run code they are handed: a key function
# (`sorted(xs, key=f)`) or the generator they consume (`sum(g)`, `set(g)`).
CALLBACK_BUILTINS = frozenset(
    f"builtins.{name}"
    for name in ("sorted", "max", "min", "sum", "list", "tuple", "any", "all", "iter", "next",
                 "set", "frozenset", "dict")
)  # fmt: skip
# Built-ins that neither read tensor arguments nor run user code a buffer could reach.
PURE_BUILTINS = frozenset(
    f"builtins.{name}"
    for name in (
        "range", "len", "isinstance", "issubclass", "id", "type", "hasattr", "enumerate",
        "zip", "divmod", "callable", "ord", "chr", "hex", "bin", "oct", "slice", "object",
        "set", "frozenset", "dict", "reversed",
    )
)  # fmt: skip

# Built-in kernel contracts: collectives that fill their output in full without reading it.
# Source: torch.distributed documentation ("output_tensor ... to accommodate tensor elements
# from all ranks"; reduce_scatter_tensor "output ... holds the reduced result"; recv fills).
BUILTIN_CONTRACTS = (
    Contract("torch.distributed.all_gather_into_tensor", (0, "output_tensor"), "torch.distributed docs"),
    Contract("torch.distributed.reduce_scatter_tensor", (0, "output"), "torch.distributed docs"),
    Contract("torch.distributed.all_to_all_single", (0, "output"), "torch.distributed docs"),
    Contract("torch.distributed.recv", (0, "tensor"), "torch.distributed docs"),
    Contract("torch.distributed.irecv", (0, "tensor"), "torch.distributed docs"),
)  # fmt: skip

# Calls that can read any local variable by name: everything in the frame escapes.
FRAME_INTROSPECTION = frozenset(
    {"builtins.locals", "builtins.vars", "builtins.eval", "builtins.exec", "sys._getframe",
     "inspect.currentframe", "builtins.globals"}
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
