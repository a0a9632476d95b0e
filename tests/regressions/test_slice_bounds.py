"""Slice bounds that change between two slices, so the slices no longer cover the buffer.

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
        "augmented_assignment_between_complementary_slices",
        why=(
            "`k -= 1` (augmented assignment) between complementary slices does not invalidate the "
            "region x[:k]. `safe` would be wrong for the torch.zeros at line 5, col 9, yet "
            "replacing it by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, "
            "False): result: NaN at different places). Why: x[:k] writes [0, k); after k -= 1, "
            "x[k:] writes [k-1, 8): element k-1 is covered, fine, but with k=0 -> x[:0] empty and "
            "x[-1:] only the last element: x[0:7] never written."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    k -= 1
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "augmented_assignment_in_a_branch",
        why=(
            "`k += 1` inside a branch between complementary slices (augmented assignment not treated "
            "as a rebinding). `safe` would be wrong for the torch.zeros at line 5, col 9, yet "
            "replacing it by poisoned memory changes the result (pattern nan|max, input (0, 2, 3, "
            "True): result: NaN at different places). Why: with flag, x[:3] and x[5:] are written; "
            "x[3:5] keeps its initial contents."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    if flag:
        k += 2
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 3, 3, True)
""",
    ),
    Case(
        "closure_with_nonlocal_changes_the_bound",
        why=(
            "A closure with `nonlocal k` called between complementary slices changes the bound. "
            "`safe` would be wrong for the torch.zeros at line 8, col 9, yet replacing it by "
            "poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): result: "
            "NaN at different places). Why: bump() rebinds k (0 -> 3): x[:0] and x[3:] leave x[0:3]"
            " unwritten. Any call to a function that may rebind a bound name (nonlocal/global) must"
            " kill regions using it."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    def bump():
        nonlocal k
        k = k + 3
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    bump()
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "function_with_global_changes_the_bound",
        why=(
            "A module-level function with `global K` changes the bound used by two slices. `safe` "
            "would be wrong for the torch.zeros at line 13, col 9, yet replacing it by poisoned "
            "memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at "
            "different places). Why: bump() rebinds the global K (0 -> 1): x[0] is never written."
        ),
        source=r"""
import torch
K = 0


def bump():
    global K
    K += 1


def f(inp, n, k, flag):
    global K
    K = k
    x = torch.zeros(8)  # <- site
    x[:K] = 1
    bump()
    x[K:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "zero_dim_tensor_bound_mutated_in_place",
        why=(
            "A 0-dim tensor used as a slice bound is mutated in place (kt.add_(1)) between the "
            "slices. `safe` would be wrong for the torch.zeros at line 6, col 9, yet replacing it "
            "by poisoned memory changes the result (pattern nan|max, input (0, 0, 0, False): "
            "result: NaN at different places). Why: the bound's text 'kt' is unchanged but its "
            "value moved from 0 to 1: x[0] is never written. Bounds that may be tensors are "
            "mutable."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    kt = torch.tensor(k)
    x = torch.zeros(8)  # <- site
    x[:kt] = 1
    kt.add_(1)
    x[kt:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "allocation_size_changed_by_augmented_assignment",
        why=(
            "The allocation size name is changed by augmented assignment before x[k:m]. `safe` "
            "would be wrong for the torch.zeros at line 6, col 9, yet replacing it by poisoned "
            "memory changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at "
            "different places). Why: x has n+2 elements but x[k:m] stops at n+1: the last element "
            "is never written ('m' still compared equal to the size text)."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    m = n + 2
    x = torch.zeros(m)  # <- site
    m -= 1
    x[:k] = 1
    x[k:m] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "allocation_size_zero_dim_tensor_mutated_in_place",
        why=(
            "The allocation size is a 0-dim tensor mutated in place before x[k:m]. `safe` would be "
            "wrong for the torch.zeros at line 6, col 9, yet replacing it by poisoned memory "
            "changes the result (pattern nan|max, input (0, 0, 0, False): result: NaN at different "
            "places). Why: torch.zeros(m) allocates 2 elements; after m.sub_(1), x[k:m] ends at 1: "
            "x[1] never written."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    m = torch.tensor(n + 2)
    x = torch.zeros(m)  # <- site
    m.sub_(1)
    x[:k] = 1
    x[k:m] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "augmented_assignment_in_a_loop_body",
        why=(
            "Augmented assignment of the bound inside a loop body. `safe` would be wrong for the "
            "torch.zeros at line 5, col 9, yet replacing it by poisoned memory changes the result "
            "(pattern nan|max, input (0, 0, 0, False): result: NaN at different places). Why: after"
            " the loop k == 2, the last x[:k] wrote [0, 1): x[1] never written."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    for i in range(2):
        x[:k] = 1
        k += 1
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "augmented_assignment_in_a_with_block",
        why=(
            "Augmented assignment of the bound inside a `with` block. `safe` would be wrong for the"
            " torch.zeros at line 5, col 9, yet replacing it by poisoned memory changes the result "
            "(pattern nan|max, input (0, 0, 0, False): result: NaN at different places). Why: x[:0]"
            " then x[1:]: x[0] never written."
        ),
        source=r"""
import torch


def f(inp, n, k, flag):
    x = torch.zeros(8)  # <- site
    with torch.no_grad():
        x[:k] = 1
        k += 1
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        "statement_rebinds_a_bound_then_raises",
        why=(
            "A statement rebinds a slice bound and then raises; the exception edge carries the "
            "state from before the statement, in which the region text `x[:k]` still means the old "
            'k. `safe` would be wrong for the torch.zeros at line 5: "slices together cover the '
            'buffer (line 9): x[k:] = 2". Why: with k=0, x[:0] writes nothing; `(k := 3) + '
            "inp[100]` binds k = 3, then raises IndexError; the handler's x[3:] leaves x[0:3] "
            "unwritten. cfg.py gives exceptional successors the node's IN state: sound for writes "
            "(not done yet) but not for kills/rebindings that happened before the raise (also `k = "
            "x[9] = 3`, checked; untested: `k, x[9] = 3, 1`, an alias rebound before the raise)."
        ),
        source=r"""
import torch


def f(inp, k: int):
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    try:
        y = (k := 3) + inp[100]
    except IndexError:
        x[k:] = 2
        return x
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    inp = torch.ones(8)
    return f(inp, 0)
""",
    ),
    Case(
        "range_rebound_locally_is_not_an_int",
        why=(
            "`scalars.int_names` took the target of `for k in range(...)` as an int by the name "
            "`range` alone, even where `range` is rebound (here a local; a module-level def works "
            'the same). `safe` would be wrong for the torch.zeros at line 6: "slices together cover'
            ' the buffer (line 10): x[k:] = 2". Why: k is a 0-dim tensor; k.add_(1) moves it from 0'
            " to 1 without rebinding, so x[:k] then x[k:] leave x[0] unwritten (cf. 005). "
            "cfg._surely_nonempty resolves `range` through the resolver; scalars.int_names checks "
            'only `node.iter.func.id == "range"`.'
        ),
        source=r"""
import torch


def f():
    range = lambda n: [torch.tensor(0)]
    x = torch.zeros(8)  # <- site
    for k in range(1):
        x[:k] = 1
        k.add_(1)
        x[k:] = 2
        return x
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        "int_builtin_shadowed_is_not_an_int",
        why=(
            '`safe` would be wrong for the torch.zeros at line 10 ("slices together cover the '
            'buffer (line 13): x[k:] = 2"). Why: rules/scalars._is_int takes `int(...)` (likewise '
            "len/max/min/abs/round) as a Python int by the bare name; `shadowed` only looks at "
            "bindings *in the function itself*. Here `int` is rebound at module level (a nested "
            "function's enclosing local, or a `from mod import int` behaves the same), so `k = "
            "int(kt)` is the 0-dim tensor kt itself; `kt.add_(2)` moves k in place and the region "
            "text `x[:k]` (= x[:1]) and `x[k:]` (= x[3:]) no longer meet: elements 1..2 keep their "
            "initial contents. a nearby case fixed this for `range` only (it is resolved through "
            "`qualify`); these builtins are still matched by text."
        ),
        source=r"""
import torch


def int(v):  # a module-level rebinding of a builtin the scalar analysis trusts by name
    return v


def f(kt):
    k = int(kt)
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    kt.add_(2)
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(1))
""",
    ),
    Case(
        "math_functions_on_a_rebound_module",
        why=(
            '`safe` would be wrong for the torch.zeros at line 7 ("slices together cover the buffer'
            ' (line 10): x[k:] = 2"). Why: rules/scalars._is_int accepts '
            "`math.ceil/floor/prod/lcm/gcd(...)` as a Python int when the receiver is *spelled* "
            "`math`, without resolving it (no `qualify`, no check of local/module bindings). Here "
            "`math` is torch (`import torch as math`; a parameter or local named `math` is the "
            "same), so `k = math.ceil(t)` is a 0-dim int tensor. `k.add_(2)` then moves the bound "
            "in place (as in a nearby case, which int_names now guards only for names it does not "
            "believe are ints): x[:k] is x[:1], x[k:] is x[3:], and elements 1..2 are never "
            "written."
        ),
        source=r"""
import torch
import torch as math


def f(t):
    k = math.ceil(t)
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    k.add_(2)
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(1))
""",
    ),
    Case(
        "int_annotation_is_not_proof_of_an_int",
        why=(
            '`safe` would be wrong for the torch.zeros at line 5 ("slices together cover the buffer'
            ' (line 20): x[k:] = 2"). Why: rules/scalars.int_names trusts a parameter annotation '
            "`k: int` as proof that k holds an immutable Python int. Annotations are not enforced, "
            "and the documented assumptions do not mention them; a caller passing a 0-dim integer "
            "tensor (common for lengths computed on device) gets k mutated in place by `k.add_(2)`,"
            " so x[:k] is x[:1] and x[k:] is x[3:]: elements 1..2 keep their initial contents. (a "
            "nearby case is the same effect for an unannotated k, which is now distrusted; only the"
            " annotation makes the difference.) If annotations are meant to be trusted, this "
            "belongs in the rule's documented assumptions."
        ),
        source=r"""
import torch


def f(k: int):
    x = torch.zeros(8)  # <- site
    x[:k] = 1
    k.add_(2)
    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(1))
""",
    ),
    Case(
        "class_body_nonlocal_rebinds_the_bound",
        why=(
            '`safe` would be wrong for the torch.zeros at line 6 ("slices together cover the buffer'
            " (line 13): x[k:] = 2\"). Why: the class body declares `nonlocal k` and rebinds f's `k`"
            " (2 -> 3) when the `class` statement runs, between the two slices. analysis/resolve.py"
            " _ScopeBuilder ignores `nonlocal`/`global` in class bodies, so the class body's `k = "
            "3` binds a class attribute: f's `k` is not in `captured`/`nonlocal_names`, int_names "
            "keeps trusting it, and buffer_flow._definition only checks the class body against the "
            "*buffer's* roots, never against slice-bound names. x[:k] is x[:2], x[k:] is x[3:]: "
            "x[2] is never written. (The same resolver gap as a class body's `global`, a different consequence.)"
        ),
        source=r"""
import torch


def f():
    k = 2
    x = torch.zeros(4)  # <- site
    x[:k] = 1

    class C:
        nonlocal k
        k = 3

    x[k:] = 2
    return x
""",
        scenario=r"""
def run():
    return f()
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
