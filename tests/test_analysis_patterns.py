"""The analysis on each mechanism it claims to model, in both directions.

Each case is a small function with one `torch.zeros` (the first allocation in the source); the
expected verdict is what a careful reviewer would say. `safe` cases are also executed with the
allocation poisoned in tests/test_safe_cases_execute.py.
"""

from __future__ import annotations

import textwrap

import pytest

from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

S, U, P = Verdict.SAFE, Verdict.UNSAFE, Verdict.UNPROVEN

CASES: dict[str, tuple[Verdict, str]] = {
    # --- full writes ---
    "copy_": (S, "x = torch.zeros(4)\nx.copy_(a)\nreturn x.sum()"),
    "fill_": (S, "x = torch.zeros(4)\nx.fill_(2)\nreturn x"),
    "zero_": (S, "x = torch.zeros(4)\nx.zero_()\nreturn x"),
    "slice-all": (S, "x = torch.zeros(4)\nx[:] = a\nreturn x"),
    "ellipsis": (S, "x = torch.zeros(4, 2)\nx[...] = 1\nreturn x"),
    "random-fill": (S, "x = torch.zeros(4)\nx.uniform_()\nreturn x"),
    # out= may shrink the tensor: the storage past the result keeps its values (regression 022).
    "out=": (P, "x = torch.zeros(4)\ntorch.mul(a, 2, out=x)\nreturn x"),
    "cat-out": (P, "x = torch.zeros(8)\ntorch.cat([a, a], out=x)\nreturn x"),
    "inplace-chain": (S, "x = torch.zeros(4).fill_(1)\nreturn x.sum()"),
    "never-read": (S, "x = torch.zeros(4)\nreturn a"),
    "zeros_like": (S, "x = torch.zeros_like(a)\nx.copy_(a * 2)\nreturn x"),
    "new_zeros": (S, "x = a.new_zeros(4)\nx.copy_(a)\nreturn x"),
    "alias-fill": (S, "x = torch.zeros(4)\ny = x\ny.fill_(3)\nreturn x"),
    "view-write": (S, "x = torch.zeros(2, 2)\nx.view(-1).copy_(a)\nreturn x"),
    "t-write": (S, "x = torch.zeros(2, 3)\nx.t().copy_(a)\nreturn x"),
    "complement": (S, "m = int(k)\nx = torch.zeros(8)\nx[:m] = 1\nx[m:] = 2\nreturn x"),
    # `k` may be any value slicing accepts: the same value at both writes covers the dimension.
    "complement-param-bound": (S, "x = torch.zeros(8)\nx[:k] = 1\nx[k:] = 2\nreturn x"),
    # A call between the writes may change a tensor `k` in place (the caller may hold it).
    "complement-param-bound-call": (
        P,
        "x = torch.zeros(8)\nx[:k] = 1\nprint(a)\nx[k:] = 2\nreturn x",
    ),
    "complement-param-bound-alias": (
        P,
        "j = k\nx = torch.zeros(8)\nx[:k] = 1\nj += 1\nx[k:] = 2\nreturn x",
    ),
    "complement-last-row": (S, "x = torch.zeros(8)\nx[:-1] = 1\nx[-1] = 2\nreturn x"),
    "complement-augassign": (
        P,
        "m = int(k)\nx = torch.zeros(8)\nx[:m] = 1\nm += 1\nx[m:] = 2\nreturn x",
    ),
    "complement-tensor-bound": (
        P,
        "m = torch.tensor(3)\nx = torch.zeros(8)\nx[:m] = 1\nm.add_(1)\nx[m:] = 2\nreturn x",
    ),
    "complement-nonlocal": (
        P,
        "m = int(k)\ndef bump():\n    nonlocal m\n    m += 1\nx = torch.zeros(8)\nx[:m] = 1\nbump()\nx[m:] = 2\nreturn x",
    ),
    "out-resize-view": (
        P,
        "x = torch.zeros(8)\nv = x[:]\ntorch.cat([a[:1], a[:1]], out=x)\nreturn v",
    ),
    "resize-back": (P, "x = torch.zeros(8)\ntorch.add(a[:2], 1, out=x)\nx.resize_(8)\nreturn x"),
    "complement-dim1": (
        S,
        "m = len(a)\nx = torch.zeros(2, 8)\nx[:, :m] = 1\nx[:, m:] = 2\nreturn x",
    ),
    "three-pieces": (
        S,
        "p = a.shape[0]\nq = p + 2\nsize = q * 2\nx = torch.zeros(size)\nx[:p] = 1\nx[p:q] = 2\nx[q:size] = 3\nreturn x",
    ),
    "int-rows": (S, "x = torch.zeros(2, 3)\nx[0] = 1\nx[1] = 2\nreturn x"),
    "both-branches": (
        S,
        "x = torch.zeros(4)\nif flag:\n    x.fill_(1)\nelse:\n    x.copy_(a)\nreturn x",
    ),
    "range-const-loop": (S, "x = torch.zeros(4)\nfor _ in range(2):\n    x.copy_(a)\nreturn x"),
    "read-written-slice": (
        S,
        "m = a.size(0)\nx = torch.zeros(8)\nx[:m] = 1\ny = x[:m].sum()\nx[m:] = 0\nreturn x, y",
    ),
    "metadata-only": (
        S,
        "x = torch.zeros(4)\nn = x.shape[0] + x.numel() + len(x)\nx.fill_(n)\nreturn x",
    ),
    "try-both": (
        S,
        "x = torch.zeros(4)\ntry:\n    x.copy_(a)\nexcept RuntimeError:\n    x.fill_(0)\nreturn x",
    ),
    "self-full-in-fn": (S, "self.x = torch.zeros(4)\nself.x.fill_(1)"),
    "dist-contract": (
        S,
        "x = torch.zeros(8)\ntorch.distributed.all_gather_into_tensor(x, a)\nreturn x",
    ),
    "with-no-grad": (S, "x = torch.zeros(4)\nwith torch.no_grad():\n    x.copy_(a)\nreturn x"),
    "match-both": (
        S,
        "x = torch.zeros(4)\nmatch k:\n    case 1:\n        x.fill_(1)\n    case _:\n        x.fill_(2)\nreturn x",
    ),
    "is-none": (S, "x = torch.zeros(4)\nif x is not None:\n    pass\nx.fill_(1)\nreturn x"),
    # --- reads before writes ---
    "accumulate": (U, "x = torch.zeros(4)\nx += a\nreturn x"),
    "add_": (U, "x = torch.zeros(4)\nx.add_(a)\nreturn x"),
    "index_add_": (U, "x = torch.zeros(4)\nx.index_add_(0, idx, a)\nreturn x"),
    "scatter_add_": (U, "x = torch.zeros(4)\nx.scatter_add_(0, idx, a)\nreturn x"),
    "reduction": (U, "x = torch.zeros(4)\nreturn x.sum()"),
    "operator": (U, "x = torch.zeros(4)\ny = x * 2\nx.fill_(1)\nreturn y"),
    "one-branch": (U, "x = torch.zeros(4)\nif flag:\n    x.fill_(1)\nreturn x.sum()"),
    "loop-may-not-run": (
        U,
        "x = torch.zeros(4)\nfor i in range(n):\n    x.fill_(i)\nreturn x.sum()",
    ),
    "gather-list": (U, "x = torch.zeros(4)\ny = x[[0, 1]]\nx.fill_(1)\nreturn y"),
    "mask-gather": (U, "x = torch.zeros(4)\ny = x[a > 0]\nx.fill_(1)\nreturn y"),
    "torch-fn-read": (U, "x = torch.zeros(4)\ny = torch.cat([x, a])\nx.fill_(1)\nreturn y"),
    "copy-from-self": (U, "x = torch.zeros(4)\nx.copy_(x + 1)\nreturn x"),
    "assign-from-self": (U, "x = torch.zeros(4)\nx[:] = x.flip(0)\nreturn x"),
    "read-in-if": (U, "x = torch.zeros(4)\nif x.any():\n    pass\nx.fill_(1)\nreturn x"),
    "read-before-loop-write": (
        U,
        "x = torch.zeros(4)\nfor i in range(3):\n    y = x.sum()\n    x.fill_(i)\nreturn y",
    ),
    "copy-into-other": (
        P,
        "x = torch.zeros(4)\ny = torch.ones(2, 4)\ny[0] = x\nx.fill_(1)\nreturn y",
    ),
    "except-path": (
        U,
        "x = torch.zeros(4)\ntry:\n    a = g(a)\n    x.fill_(1)\nexcept ValueError:\n    pass\nreturn x.sum()",
    ),
    "empty-for-literal-empty": (
        U,
        "x = torch.zeros(4)\nfor _ in []:\n    x.fill_(1)\nreturn x.sum()",
    ),
    "while-may-skip": (
        U,
        "x = torch.zeros(4)\nwhile cond():\n    x.fill_(1)\n    break\nreturn x.sum()",
    ),
    "break-skips": (
        U,
        "x = torch.zeros(4)\nfor i in range(3):\n    if i == k:\n        break\nelse:\n    x.fill_(1)\nreturn x.sum()",
    ),
    "f-string": (U, "x = torch.zeros(4)\nprint(f'{x}')\nx.fill_(1)\nreturn x"),
    "ifexp-write": (U, "x = torch.zeros(4)\nx.fill_(1) if flag else None\nreturn x.sum()"),
    # --- not provable ---
    "partial-then-read": (P, "x = torch.zeros(8)\nx[:k] = 1\nreturn x.sum()"),
    "name-index-write": (P, "x = torch.zeros(8)\nfor i in range(n):\n    x[i] = i\nreturn x"),
    "opaque-kernel": (P, "x = torch.zeros(8)\nkernel[(1,)](x)\nreturn x"),
    "unknown-call": (P, "x = torch.zeros(8)\nhelper(x)\nreturn x"),
    "return-unwritten": (P, "x = torch.zeros(8)\nreturn x"),
    "early-return": (P, "x = torch.zeros(8)\nif flag:\n    return x\nx.fill_(1)\nreturn x"),
    # A list made here is followed by its items (analysis/dataflow/holders.py) ...
    "container": (S, "x = torch.zeros(8)\nlst = [x]\nx.fill_(1)\nreturn lst[0]"),
    "container-read-later": (
        U,
        "x = torch.zeros(8)\nlst = [x]\ny = lst[0].sum()\nx.fill_(1)\nreturn y",
    ),
    # ... until it is handed on.
    "container-handed-on": (
        P,
        "x = torch.zeros(8)\nlst = [x]\nhelper(lst)\nx.fill_(1)\nreturn lst[0]",
    ),
    "append": (P, "x = torch.zeros(8)\nout.append(x)\nx.fill_(1)"),
    "closure": (
        P,
        "x = torch.zeros(8)\ndef g():\n    return x.sum()\ny = g()\nx.fill_(1)\nreturn y",
    ),
    "lambda": (P, "x = torch.zeros(8)\ng = lambda: x.sum()\ny = g()\nx.fill_(1)\nreturn y"),
    "genexp": (P, "x = torch.zeros(8)\ng = (x[i] for i in range(2))\nx.fill_(1)\nreturn list(g)"),
    "self-attr": (P, "self.x = torch.zeros(8)"),
    "self-attr-call-between": (P, "self.x = torch.zeros(8)\nself.prepare()\nself.x.fill_(1)"),
    "self-dict-get": (
        P,
        "self.m = {'a': torch.zeros(8)}\ny = self.m.get('a')\nself.m['a'].fill_(1)\nreturn y",
    ),
    # `o = self` carries `self.x` over as `o.x`: the sum reads the buffer before any write.
    "owner-alias": (
        U,
        "self.x = torch.zeros(8)\no = self\ny = o.x.sum()\nself.x.fill_(1)\nreturn y",
    ),
    "maybe-gather-load": (P, "x = torch.zeros(8)\ny = x[i]\nx.fill_(1)\nreturn y"),
    "to-device": (P, "x = torch.zeros(8).to(dev)\nx.fill_(1)\nreturn x"),
    "reshape-copy": (P, "x = torch.zeros_like(a)\nx.reshape(-1).copy_(a.flatten())\nreturn x"),
    # unpacking succeeds only if every piece got a name: together they are the whole buffer
    "split": (S, "x = torch.zeros(8)\nh, t = x.chunk(2)\nh.fill_(1)\nt.fill_(2)\nreturn x"),
    "split-one-piece": (P, "x = torch.zeros(8)\nh, t = x.chunk(2)\nh.fill_(1)\nreturn x"),
    "split-into-starred": (P, "x = torch.zeros(8)\nh, *t = x.chunk(2)\nh.fill_(1)\nreturn x"),
    "data_ptr": (P, "x = torch.zeros(8)\np = x.data_ptr()\nlaunch(p)\nx.fill_(1)\nreturn x"),
    "locals": (P, "x = torch.zeros(8)\nd = locals()\nx.fill_(1)\nreturn d"),
    "graph-capture": (
        U,
        "x = torch.zeros(8)\nwith torch.cuda.graph(g):\n    x.fill_(1)\nreturn x.sum()",
    ),
    "async-collective": (
        P,
        "x = torch.zeros(8)\nw = torch.distributed.all_gather_into_tensor(x, a, async_op=True)\nreturn x.sum()",
    ),
    "suppressing-with": (
        P,
        "x = torch.zeros(8)\nwith contextlib.suppress(Exception):\n    x.copy_(a)\nreturn x.sum()",
    ),
    "global": (P, "global G\nG = torch.zeros(8)\nhelper()\nG.fill_(1)"),
    "reassigned-bound": (P, "x = torch.zeros(8)\nx[:k] = 1\nk = k + 1\nx[k:] = 2\nreturn x.sum()"),
    "loop-realloc-prev": (
        P,
        "prev = None\nfor i in range(3):\n    x = torch.zeros(4)\n    if prev is not None:\n        out = prev.sum()\n    prev = x\n    x[:k] = 1\nreturn out",
    ),
    "star-arg": (P, "x = torch.zeros(8)\nf(*[x])\nx.fill_(1)\nreturn x"),
    "transpose_-then-slices": (
        P,
        "x = torch.zeros(4, 4)\nx[:k] = 1\nx.t_()\nx[k:] = 2\nreturn x.sum()",
    ),
    "transpose_-no-read": (S, "x = torch.zeros(2, 3)\nx.t_()\nx.copy_(a)\nreturn x"),
    "resize_": (P, "x = torch.zeros(4)\nx.resize_(8)\nx[:4] = 1\nreturn x.sum()"),
    "zero-size": (S, "x = torch.zeros(n, 0)\nreturn x.sum()"),
    "opaque-then-read": (P, "x = torch.zeros(4)\nkernel(x)\nreturn x.sum()"),
    "unknown-with": (P, "x = torch.zeros(4)\nwith cm():\n    x.copy_(a)\nreturn x.sum()"),
    "assert-write": (U, "x = torch.zeros(4)\nassert x.fill_(1) is not None\nreturn x.sum()"),
    "nn-init": (S, "x = torch.zeros(3, 4)\ntorch.nn.init.constant_(x, 2.0)\nreturn x.sum()"),
    "nn-init-after-read": (
        U,
        "x = torch.zeros(3, 4)\ny = x.sum()\ntorch.nn.init.ones_(x)\nreturn y",
    ),
    "walrus-in-comprehension-bound": (
        P,
        "m = int(k)\n_ = [(m := t) for t in [torch.tensor(3)]]\nx = torch.zeros(8)\nx[:m] = 1\nm.add_(1)\nx[m:] = 2\nreturn x",
    ),
    "yield": (P, "x = torch.zeros(8)\nyield x\nx.fill_(1)"),
}


def _source(body: str) -> str:
    return (
        "import torch\nimport contextlib\n\ndef f(self, a, k, n, flag, idx, i, dev, g, kernel, helper, out, launch, cond):\n"
        + textwrap.indent(body, "    ")
        + "\n"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdict(name: str) -> None:
    expected, body = CASES[name]
    result = analyse_source(_source(body), "case.py")
    assert not result.errors, result.errors
    zeros = [f for f in result.findings if f.rule == "ZO001"]
    assert zeros, "no finding"
    first = zeros[0]
    assert first.verdict is expected, f"{name}: {first.verdict} ({first.message})"
    assert first.evidence and first.evidence[0].kind == "alloc"
    if expected is Verdict.SAFE:
        assert first.fix is not None and "empty" in first.fix.replacement
    else:
        assert first.fix is None


def test_new_zeros_of_a_local_class_is_not_a_candidate() -> None:
    # The module defines its own new_zeros: `pool.new_zeros` is not provably Tensor.new_zeros,
    # and rewriting it to `.new_empty` would raise AttributeError.
    src = "import torch\n\nclass Pool:\n    def new_zeros(self, n):\n        return torch.ones(n)\n\ndef f():\n    pool = Pool()\n    x = pool.new_zeros(8)\n    x.fill_(1)\n    return x\n"
    assert analyse_source(src, "pool.py").findings == []


@pytest.mark.parametrize(
    "init", ["constant_(x, 2.0)", "ones_(x)", "zeros_(x)", "eye_(x)", "dirac_(x.view(3, 4, 1))"]
)
def test_nn_init_fills_are_safe_and_really_overwrite_poison(init: str) -> None:
    torch = pytest.importorskip("torch")
    body = f"x = torch.zeros(3, 4)\ntorch.nn.init.{init}\nreturn x.clone()"
    source = _source(body)
    (finding,) = [f for f in analyse_source(source, "init.py").findings if f.rule == "ZO001"]
    assert finding.verdict is Verdict.SAFE  # dirac_ writes through a full view: still every element
    poisoned = source.replace("torch.zeros(3, 4)", "torch.full((3, 4), float('nan'))")
    results = []
    for src in (source, poisoned):
        namespace: dict[str, object] = {}
        exec(compile(src, "init.py", "exec"), namespace)
        args = [None] * 14
        results.append(namespace["f"](*args))  # type: ignore[operator]
    assert torch.equal(results[0], results[1])
