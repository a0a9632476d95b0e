"""Every torch (and built-in) name the analysis gives a meaning, as one entry with its source.

An entry says what a call or attribute does to a tensor's *data*: the analysis is only as sound
as these. Anything not listed is an unknown use, which the analysis treats as a possible read
(`unproven`). Listing something as a *write* or *metadata* is the dangerous direction.

`source` is where the meaning comes from: the PyTorch (or Python) documentation page of that
name, built from the group's URL template, or a note for the few entries whose page does not
say it directly. The tables of `zeroopt.analysis.semantics` are derived from these entries;
`tests/test_semantics.py` checks that a name has one effect per kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(Enum):
    METHOD = "Tensor method"
    ATTRIBUTE = "Tensor attribute"
    FUNCTION = "function"  # a qualified name: torch.cat, builtins.len, torch.nn.init.normal_


class Effect(Enum):
    METADATA = "looks only at shape, dtype, device or other metadata"
    FULL_WRITE = "writes every element without reading any"
    PARTIAL_WRITE = "writes some elements and reads none"
    FULL_VIEW = "a view covering every element of its base"
    PARTIAL_VIEW = "a view of part of its base"
    MAYBE_COPY = "the base itself, a view of it, or a copy (which reads it)"
    INPLACE_LAYOUT = "changes the layout in place: no element read or written"
    RESIZE = "changes size or storage in place: new elements are uninitialised"
    SPLIT = "returns a tuple of views"
    READ = "reads element values"
    READ_MODIFY_WRITE = "reads its own elements, then writes them (in place)"
    EXPOSES_MEMORY = "hands out the memory itself (a pointer, a storage, a numpy array)"
    FRAME_ACCESS = "can reach every local variable of a frame"
    PURE = "neither reads tensor arguments nor runs code a buffer could reach"


@dataclass(frozen=True)
class Entry:
    name: str
    kind: Kind
    effect: Effect
    source: str


_TENSOR_DOC = "https://pytorch.org/docs/stable/generated/torch.Tensor.{name}.html"
_ATTR_DOC = "https://pytorch.org/docs/stable/tensor_attributes.html (torch.Tensor.{name})"
_TORCH_DOC = "https://pytorch.org/docs/stable/generated/{name}.html"
_INIT_DOC = "https://pytorch.org/docs/stable/nn.init.html#{name}"
_ATEN_FILL = (
    "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/Fill.cpp "
    "(fill_out: self is the only output; {short} is a function and a method variant)"
)
_BUILTIN_DOC = "https://docs.python.org/3/library/functions.html#{short}"


def _group(kind: Kind, effect: Effect, source: str, names: str) -> list[Entry]:
    out = []
    for name in names.split():
        short = name.rsplit(".", 1)[-1]
        out.append(Entry(name, kind, effect, source.format(name=name, short=short)))
    return out


M, A, F = Kind.METHOD, Kind.ATTRIBUTE, Kind.FUNCTION
E = Effect

ENTRIES: tuple[Entry, ...] = tuple(
    [
        # --- metadata: attributes and methods that never look at element values ---
        *_group(A, E.METADATA, _ATTR_DOC, """
            shape dtype device ndim is_cuda is_cpu is_meta layout requires_grad is_leaf names
            is_sparse is_quantized itemsize nbytes grad_fn"""),
        *_group(M, E.METADATA, _TENSOR_DOC, """
            size dim numel nelement stride element_size is_contiguous storage_offset get_device
            is_floating_point is_complex is_pinned is_set_to type_as_shape ndimension
            requires_grad_ retain_grad is_shared is_inference detach_"""),
        # The `new_*` factories take only dtype and device from their receiver ("By default,
        # the returned Tensor has the same torch.dtype and torch.device as this tensor"); their
        # arguments (`new_tensor(data)`, a fill value) are read as any method's arguments.
        *_group(M, E.METADATA, _TENSOR_DOC, """
            new_zeros new_empty new_ones new_full new_empty_strided new_tensor"""),
        # The first argument of the *_like factories: only its shape, dtype, layout and device.
        *_group(F, E.METADATA, _BUILTIN_DOC, """
            builtins.len builtins.isinstance builtins.id builtins.type builtins.hasattr"""),
        *_group(F, E.METADATA, _TORCH_DOC, """
            torch.empty_like torch.zeros_like torch.ones_like torch.full_like torch.rand_like
            torch.randn_like torch.randint_like torch.numel torch.is_tensor
            torch.is_floating_point torch.is_complex torch.is_nonzero_shape"""),
        # --- writes ---
        *_group(M, E.FULL_WRITE, _TENSOR_DOC, """
            copy_ fill_ zero_ normal_ uniform_ random_ bernoulli_ exponential_ geometric_
            cauchy_ log_normal_"""),
        # The function forms of the in-place fills: aten `fill_.Scalar(Tensor(a!) self, Scalar
        # value)`, `fill_.Tensor(...)`, `zero_(Tensor(a!) self)` (`torch.ops.aten.fill_` schemas;
        # aten/src/ATen/native/Fill.cpp `fill_out`: every element of self is an output).
        *_group(F, E.FULL_WRITE, _ATEN_FILL, "torch.fill_ torch.zero_"),
        *_group(F, E.FULL_WRITE, _INIT_DOC, """
            torch.nn.init.uniform_ torch.nn.init.normal_ torch.nn.init.constant_
            torch.nn.init.ones_ torch.nn.init.zeros_ torch.nn.init.eye_ torch.nn.init.dirac_
            torch.nn.init.xavier_uniform_ torch.nn.init.xavier_normal_
            torch.nn.init.kaiming_uniform_ torch.nn.init.kaiming_normal_
            torch.nn.init.trunc_normal_ torch.nn.init.orthogonal_ torch.nn.init.sparse_"""),
        *_group(M, E.PARTIAL_WRITE, _TENSOR_DOC, """
            index_copy_ index_fill_ index_put_ scatter_ masked_fill_ masked_scatter_ put_
            fill_diagonal_"""),
        # --- views ---
        *_group(M, E.FULL_VIEW, _TENSOR_DOC, """
            view view_as t transpose permute unsqueeze squeeze swapaxes swapdims movedim
            moveaxis unflatten detach adjoint conj"""),
        *_group(A, E.FULL_VIEW, _ATTR_DOC, "T mT H mH data"),
        *_group(M, E.PARTIAL_VIEW, _TENSOR_DOC, """
            narrow select diagonal unfold as_strided real imag"""),
        *_group(M, E.MAYBE_COPY, _TENSOR_DOC, """
            reshape flatten contiguous to cuda cpu float half double bfloat16 int long short
            bool byte char type type_as pin_memory reshape_as expand expand_as broadcast_to
            ravel view_as_real share_memory_"""),
        *_group(M, E.INPLACE_LAYOUT, _TENSOR_DOC, """
            t_ transpose_ squeeze_ unsqueeze_ swapdims_ swapaxes_"""),
        *_group(M, E.RESIZE, _TENSOR_DOC, "resize_ resize_as_ set_ as_strided_"),
        *_group(M, E.SPLIT, _TENSOR_DOC, "chunk split unbind tensor_split split_with_sizes"),
        # --- reads ---
        *_group(M, E.READ, _TENSOR_DOC, """
            sum mean max min amax amin argmax argmin prod std var norm any all item tolist
            clone cumsum cumprod abs neg exp log sqrt rsqrt sigmoid tanh relu softmax
            log_softmax matmul mm bmm mv dot add sub mul div pow eq ne lt le gt ge equal
            allclose isclose isnan isinf isfinite nonzero count_nonzero sort argsort topk
            unique gather index_select masked_select take where clamp clip round floor ceil
            sign repeat repeat_interleave flip roll tril triu tobytes bincount sum_to_size
            logsumexp"""),
        *_group(M, E.READ, "https://docs.python.org/3/reference/datamodel.html#object.__len__",
                "__len__"),
        *_group(M, E.READ_MODIFY_WRITE, _TENSOR_DOC, """
            add_ sub_ mul_ div_ pow_ clamp_ clamp_min_ clamp_max_ abs_ neg_ exp_ log_ sqrt_
            relu_ sigmoid_ tanh_ index_add_ scatter_add_ scatter_reduce_ index_reduce_ addmm_
            addcmul_ addcdiv_ lerp_ floor_ ceil_ round_ sign_ copysign_ bitwise_and_
            bitwise_or_ bitwise_xor_ logical_and_ logical_or_ fmod_ remainder_ maximum_
            minimum_ cumsum_ baddbmm_ addmv_ addr_ nan_to_num_"""),
        # Out of place, but the analysis returns the receiver for it: its first use reads the
        # receiver in full, so no write through the result can come before a read.
        *_group(M, E.READ_MODIFY_WRITE, _TENSOR_DOC, "masked_scatter"),
        *_group(M, E.EXPOSES_MEMORY, _TENSOR_DOC, """
            data_ptr untyped_storage storage numpy __dlpack__"""),
        *_group(F, E.READ, _BUILTIN_DOC, """
            builtins.print builtins.float builtins.int builtins.bool builtins.str builtins.repr
            builtins.sum builtins.max builtins.min builtins.abs
            builtins.round builtins.sorted builtins.any builtins.all builtins.format
            builtins.complex builtins.next"""),
        # Iterating a tensor reads no element: `Tensor.__iter__` returns `unbind(0)`'s views of
        # its rows, which these keep and which may be written through. A buffer handed to one is
        # not followed (as any pure built-in's argument).
        *_group(F, E.PURE,
                "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_tensor.py "
                "(Tensor.__iter__: iter(self.unbind(0)))",
                "builtins.list builtins.tuple builtins.iter"),
        *_group(F, E.PURE, _BUILTIN_DOC, """
            builtins.range builtins.enumerate builtins.zip builtins.divmod builtins.callable
            builtins.ord builtins.chr builtins.hex builtins.bin builtins.oct builtins.slice
            builtins.object builtins.set builtins.frozenset builtins.dict builtins.reversed
            builtins.issubclass"""),
        # --- frames: a call that can read any local by name ---
        *_group(F, E.FRAME_ACCESS, _BUILTIN_DOC, """
            builtins.locals builtins.vars builtins.eval builtins.exec builtins.globals"""),
        Entry("sys._getframe", F, E.FRAME_ACCESS,
              "https://docs.python.org/3/library/sys.html#sys._getframe"),
        Entry("inspect.currentframe", F, E.FRAME_ACCESS,
              "https://docs.python.org/3/library/inspect.html#inspect.currentframe"),
    ]
)  # fmt: skip


def names(kind: Kind, effect: Effect) -> frozenset[str]:
    return frozenset(e.name for e in ENTRIES if e.kind is kind and e.effect is effect)


def source_of(name: str) -> list[str]:
    """Where the meaning of `name` comes from (one line per entry of that name)."""
    return [
        f"{e.kind.value} {e.name}: {e.effect.value} ({e.source})" for e in ENTRIES if e.name == name
    ]
