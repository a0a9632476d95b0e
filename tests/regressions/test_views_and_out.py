"""Views, aliases, `out=` and resizing: what a name refers to after a call.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "out_with_smaller_result_resizes_a_viewed_buffer",
        why=(
            "`out=` whose result is smaller than the buffer resizes it; a view taken before still "
            "sees the old elements. `safe` would be wrong for the torch.zeros at line 5, col 9, yet"
            " replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, "
            "False): result: NaN at different places). Why: torch.cat(..., out=x) with a k-element "
            "result resizes x to k elements (a warning, not an error); only those are written. v = "
            "x[:] keeps viewing the original 8 elements. out= is a full write only when the result "
            "shape provably equals the buffer's."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    v = x[:]
    torch.cat([inp[1][:k]], out=x)
    return v
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "out_with_smaller_result_then_resize_back",
        why=(
            "`out=` with a smaller result, then resize_ back: the tail keeps its initial contents. "
            "`safe` would be wrong for the torch.zeros at line 5, col 9, yet replacing it by "
            "poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: "
            "NaN at different places). Why: torch.add(<2 elements>, 1, out=x) shrinks x to 2 "
            "elements; resize_(8) grows it back over the same storage, whose elements 2..7 were "
            "never written."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    torch.add(inp[1][:2], 1, out=x)
    x.resize_(8)
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "newaxis_index_is_not_the_buffer_itself",
        why=(
            "`x[None]` (an index of only newaxis/Ellipsis) is taken as the buffer itself (SELF), so"
            " a slice of it is recorded as a region of x's dim 0, though it slices the new size-1 "
            'axis. `safe` would be wrong for the torch.zeros at line 5: "slices together cover the '
            'buffer (line 7): x[None][k:] = 2". Why: x[:k] writes rows [0, k); x[None][k:] slices '
            "the added axis of size 1: with k=1 it is empty. Rows 1..3 are never written. Same with"
            " `x[..., None][..., k:]` next to `x[..., :k]` (dim -1 is the new axis)."
        ),
        source=r"""
import torch


def f(k: int):
    x = torch.zeros(4, 2)  # <- site
    x[:k] = 1
    x[None][k:] = 2
    return x
""",
        scenario=r"""
def run():
    return f(1)
""",
    ),
    Case(
        "out_shrinks_then_as_strided_views_all",
        why=(
            "`out=` with a smaller result shrinks x (same storage); as_strided then views all 8 "
            'elements. `safe` would be wrong for the torch.zeros at line 5: "written in full (line '
            '6)". Why: torch.add(<2 elements>, 1, out=x) resizes x to 2 elements and writes those; '
            "the storage keeps its 8 elements, and torch.as_strided(x, (8,), (1,)) reads 6 never-"
            'written ones. After a full write every read is trusted, but out= is "full" only for '
            "the elements x has now (cf. 010/011: resize_, earlier views)."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros(8)  # <- site
    torch.add(inp[:2], 1, out=x)
    return torch.as_strided(x, (8,), (1,))
""",
        scenario=r"""
def run():
    inp = torch.arange(8.0)
    return f(inp)
""",
    ),
    Case(
        "unbound_tensor_resize_after_shrinking_out",
        why=(
            "The unbound form `torch.Tensor.resize_(x, 8)` after a shrinking out= (011 fixed only "
            'x.resize_). `safe` would be wrong for the torch.zeros at line 5: "written in full '
            '(line 6)". Why: out= shrinks x to 2 elements; torch.Tensor.resize_(x, 8) grows it back'
            " over the same storage, whose elements 2..7 were never written. The unbound call is an"
            " unknown call, and `lost()` does nothing once the state is `full`, so nothing clears "
            "`full`."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros(8)  # <- site
    torch.add(inp[:2], 1, out=x)
    torch.Tensor.resize_(x, 8)
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(8.0)
    return f(inp)
""",
    ),
    Case(
        "out_keyword_before_input_keyword",
        why=(
            "`out=x` written before `input=x` as keywords of the same call. `safe` would be wrong "
            'for the torch.zeros at line 5: "written in full (line 6)". Why: the arguments of a '
            "call are processed in source order, out= first counts as a full write, and the later "
            "`input=x` is then a read after a full write. But the call reads its inputs before it "
            "writes out=: torch.add(out=x, input=x, other=inp) computes zeros+inp."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros(8)  # <- site
    torch.add(out=x, input=x, other=inp)
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(8.0)
    return f(inp)
""",
    ),
    Case(
        "in_place_layout_change_through_another_name",
        why=(
            "An in-place layout change (t_/transpose_/squeeze_/unsqueeze_) through one name; "
            "another name for the same tensor object keeps its SELF alias, so its slices are "
            "matched with the old shape. `safe` would be wrong for the torch.zeros at line 5: "
            '"slices together cover the buffer (line 8): y[:2] = 1". Why: y is x (same object); '
            "after x.t_() it has shape (8, 2); y[:2] writes 2 of its 8 rows (4 of 16 elements), but"
            ' the region [:2] on dim 0 is compared with the allocation\'s dim 0, "2". Same with '
            "squeeze_: zeros(1, 8), y[:1]."
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(2, 8)  # <- site
    y = x
    x.t_()
    y[:2] = 1
    return y
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "requires_grad_returns_the_same_tensor",
        why=(
            "`y = x.requires_grad_(False)` returns x itself, but the analysis drops the alias. "
            '`safe` would be wrong for the torch.zeros at line 5: "written in full (line 8)". Why: '
            "Tensor.requires_grad_ returns self (the same tensor object). "
            "analysis/semantics/entries.py lists it in METADATA_METHODS, and "
            "analysis/buffer_flow.py _buffer_method returns None (no buffer) for every "
            "METADATA_METHODS entry, so `y` is not an alias of the buffer and `y.sum()` (line 7) is"
            " not a read. The zeros are read through y before x.fill_(1). (requires_grad_ is the "
            "one METADATA_METHODS entry that returns its receiver; it needs the alias result of a "
            "view, not None.)"
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(4)  # <- site
    y = x.requires_grad_(False)
    s = y.sum()
    x.fill_(1)
    return s
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "zero_dim_buffer_as_fill_value",
        why=(
            "A 0-dim buffer passed as the *fill value* of torch.full_like (or the low/high of "
            "torch.randint_like) is read, but the analysis takes every argument of those calls as "
            'metadata. `safe` would be wrong for the torch.zeros at line 5: "written in full (line '
            '7)" (and for line 12: "written in full (line 14)"). Why: analysis/semantics/entries.py'
            " METADATA_FUNCTIONS lists torch.full_like / torch.randint_like (also rand_like etc.), "
            "and analysis/buffer_flow.py _call does `if qual in api.METADATA_FUNCTIONS: "
            "self.eval(a); continue` for *every* argument, not only the first (the tensor whose "
            "shape is taken). fill_value=x converts the 0-dim tensor to a Scalar (reads its value);"
            " randint_like(t, low=x, high=...) does the same."
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(())  # <- site
    w = torch.full_like(torch.ones(3), x)
    x.fill_(1)
    return w


def g():
    x = torch.zeros((), dtype=torch.long)
    z = torch.randint_like(torch.ones(3), low=x, high=100)
    x.fill_(1)
    return z
""",
        scenario=r"""
def run():
    def run():
        torch.manual_seed(0)
        try:
            gz = g()
        except RuntimeError as e:
            gz = f"RuntimeError: {e}"
        return f(), gz
    return run()
""",
    ),
    Case(
        "grad_attribute_can_alias_the_buffer",
        why=(
            "`x.grad` is taken as metadata (not the buffer), but it can alias the buffer. `safe` "
            'would be wrong for the torch.zeros at line 5: "written in full (line 8)". Why: '
            'analysis/buffer_flow.py _buffer_attribute returns None for `attr == "grad"` (beside '
            "METADATA_ATTRS), so `x.grad.sum()` at line 7 is not a read of anything tracked; the "
            "store `x.grad = x.view(4)` (line 6) does not lose or alias the buffer either. x.grad "
            "is an ordinary tensor attribute that may hold any tensor of x's shape, here a view of "
            "x itself, so the zeros are read."
        ),
        source=r"""
import torch


def f():
    x = torch.zeros(4)  # <- site
    x.grad = x.view(4)
    s = x.grad.sum()
    x.fill_(1)
    return s
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "functional_unfold_is_a_copy_not_a_view",
        why=(
            "`torch.nn.functional.unfold(x, ...)` (im2col, a COPY) is taken as the view method "
            "Tensor.unfold; likewise `torch.nested.narrow(x, ..., layout=torch.strided)` (a copy). "
            '`safe` would be wrong for the torch.zeros at line 6 ("written in full (line 8)") and '
            'line 13 ("line 15"). Why: analysis/buffer_flow.py _call treats any `torch.*` function '
            "whose LAST name is in _FUNCTIONAL_VIEWS (built from "
            "FULL_VIEW/PARTIAL_VIEW/MAYBE_COPY/SPLIT_METHODS of analysis/semantics/entries.py) as "
            "that tensor method on its first argument, whatever the namespace: "
            'torch.nn.functional.unfold -> "unfold" (PARTIAL_VIEW), torch.nested.narrow -> '
            '"narrow". The result is taken as a view of x, so reading it after x.fill_(1) counts as'
            " reading written data; but it is a copy of the zeros made at the call. (The same check"
            " also ignores OPAQUE_NAMESPACES: torch.ops.<ns>.t/view/... of a custom op.)"
        ),
        source=r"""
import torch
import torch.nn.functional as F


def f():
    x = torch.zeros(1, 1, 4, 4)  # <- site
    y = F.unfold(x, kernel_size=2)
    x.fill_(1)
    return y.sum()


def g():
    x = torch.zeros(4, 3)  # <- site
    y = torch.nested.narrow(x, 0, 0, 2, layout=torch.strided)
    x.fill_(1)
    return y
""",
        scenario=r"""
def run():
    return f(), [t.sum() for t in g().unbind()]
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
