"""The guard (ZO002) reports `unsafe` only where a path reads unwritten memory.

Each false-alarm case is a small program of a pattern that raised a false ZO002 on real code
(sglang 0.5.23, vllm 0.33.0), scanned and then executed twice: with every `torch.empty*` zeroed
and with it poisoned (runtime_checks.patterns). Equal results show the memory is really not
read. Each real-read case must stay `unsafe`, and its poisoned run must differ.
"""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Finding, Verdict

torch = pytest.importorskip("torch")

from zeroopt.runtime_checks.patterns import patterns_for, poison_  # noqa: E402


@contextmanager
def _empties(pattern: str | None) -> Iterator[None]:
    """torch.empty, torch.empty_like and Tensor.new_empty return zeros (pattern None) or memory
    poisoned with `pattern`: what torch.empty may hold."""
    saved = torch.empty, torch.empty_like, torch.Tensor.new_empty

    def fill(t: Any) -> Any:
        if t.device.type == "meta":
            return t
        if pattern is None:
            return t.zero_()
        return poison_(t, pattern) if pattern in patterns_for(t.dtype) else t.zero_()

    torch.empty = lambda *a, **k: fill(saved[0](*a, **k))
    torch.empty_like = lambda *a, **k: fill(saved[1](*a, **k))
    torch.Tensor.new_empty = lambda self, *a, **k: fill(saved[2](self, *a, **k))
    try:
        yield
    finally:
        torch.empty, torch.empty_like, torch.Tensor.new_empty = saved


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        if a.device.type == "meta" or b.device.type == "meta":
            return a.shape == b.shape and a.device == b.device
        return a.shape == b.shape and bool(torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)))
    return bool(a == b)


def _differs_with_poison(fn: Callable[..., Any], *args: Any) -> bool:
    with _empties(None):
        zeros = fn(*args)
    for pattern in ("nan", "max", "large", "neg1", "one", "true"):
        with _empties(pattern):
            if not _same(zeros, fn(*args)):
                return True
    return False


def _load(source: str) -> dict[str, Any]:
    module = types.ModuleType("guard_case")
    exec(compile(source, "guard_case.py", "exec"), module.__dict__)
    return module.__dict__


def _guard(source: str) -> list[Finding]:
    result = analyse_source(source, "guard_case.py")
    assert not result.errors, result.errors
    return [f for f in result.findings if f.rule == "ZO002"]


HEAD = "import torch\n\n"

# torch aliases whose `out=` the schema table covers (the hand-made table missed them).
OUT_ALIASES = {
    "subtract": ("torch.subtract(a, b, out=buf)", "float"),
    "multiply": ("torch.multiply(a, b, out=buf)", "float"),
    "divide": ("torch.divide(a, b + 1, out=buf)", "float"),
    "negative": ("torch.negative(a, out=buf)", "float"),
    "absolute": ("torch.absolute(a, out=buf)", "float"),
    "clip": ("torch.clip(a, 0.0, 1.0, out=buf)", "float"),
    "arccos": ("torch.arccos(a / 10, out=buf)", "float"),
    "acos": ("torch.acos(a / 10, out=buf)", "float"),
    "fix": ("torch.fix(a * 1.5, out=buf)", "float"),
    "trunc": ("torch.trunc(a * 1.5, out=buf)", "float"),
    "clamp_min": ("torch.clamp_min(a, 2.0, out=buf)", "float"),
    "argsort": ("torch.argsort(a, stable=True, out=buf)", "long"),
    "argmax": ("torch.argmax(a.view(1, -1), dim=0, out=buf)", "long"),
}


@pytest.mark.parametrize("name", sorted(OUT_ALIASES))
def test_out_of_a_torch_alias_is_a_write(name: str) -> None:
    call, dtype = OUT_ALIASES[name]
    source = HEAD + textwrap.dedent(f"""\
        def f(a, b):
            buf = torch.empty(a.shape[0], dtype=torch.{dtype})
            {call}
            return buf + 1
        """)
    assert not _guard(source)
    fn = _load(source)["f"]
    a, b = torch.arange(5, dtype=torch.float32), torch.ones(5)
    assert not _differs_with_poison(fn, a, b)


_ROWS_BY_FOR = """
def f(n):
    out = torch.empty(n, 4)
    for row in out:
        row.fill_(1.0)
    return out.sum()
"""

FALSE_ALARMS = {
    # vllm flint linear.py: beta=0 ignores the input.
    "addmm-beta-0": (
        """
        def f(x, w):
            out = torch.empty(x.shape[0], w.shape[0])
            torch.addmm(out, x, w.t(), beta=0, alpha=2.0, out=out)
            return out
        """,
        lambda: (torch.ones(2, 3), torch.ones(4, 3)),
    ),
    # vllm benchmark_flash_attention_fp8.py
    "baddbmm-beta-0": (
        """
        def f(q, k):
            s = torch.empty(2, 3, 3)
            s = torch.baddbmm(s, q, k, beta=0.0, alpha=0.5)
            return s
        """,
        lambda: (torch.ones(2, 3, 4), torch.ones(2, 4, 3)),
    ),
    # In place with beta=0 (and beta=False, which torch takes as 0): self is written, not read.
    "addmm-inplace-beta-0": (
        """
        def f(x, w):
            out = torch.empty(x.shape[0], w.shape[0])
            out.addmm_(x, w.t(), beta=0)
            acc = torch.empty(x.shape[0], w.shape[0])
            r = torch.addmm(acc, x, w.t(), beta=False)
            return out + r
        """,
        lambda: (torch.ones(2, 3), torch.ones(4, 3)),
    ),
    # sglang batch_invariant_ops.py: DeepGEMM writes d in full (stand-in module below).
    "deep-gemm-writes-d": (
        """
        import deep_gemm

        def f(a, b, bias):
            out = torch.empty((a.shape[0], b.shape[1]))
            deep_gemm.bf16_gemm_nn(a, b, out)
            if bias is not None:
                out += bias
            return out
        """,
        lambda: (torch.ones(2, 3), torch.ones(3, 4), torch.ones(4)),
    ),
    # sglang llada2.py: empty_like of a literal zero-size tensor.
    "empty-like-of-zero-size": (
        """
        def f(w, n):
            if n == 0:
                d = torch.empty((0,), dtype=torch.long)
                c = torch.empty_like(d)
            else:
                c = torch.arange(n)
            return w.flatten()[c]
        """,
        lambda: (torch.ones(3), 0),
    ),
    # sglang ascend_backend.py: an assert ties the rows to a batch size that the branch makes 0.
    "asserted-zero-batch": (
        """
        def f(q, lens, k):
            batch_size = len(lens)
            assert q.shape[0] == batch_size * k
            if batch_size == 0:
                out = torch.empty_like(q)
            else:
                out = q * 2
            return torch.cat([out[:, :3], q.new_ones(1, 3)])
        """,
        lambda: (torch.ones(0, 4), [], 2),
    ),
    # vllm molmo2.py: `extra = int(flag)` links the size to the write under `if flag`.
    "linked-flags": (
        """
        def f(w, use_col):
            extra = int(use_col)
            n = w + extra
            out = torch.full((1,), -1)
            if n > 0:
                line = torch.empty(n, dtype=torch.long)
                if w > 0:
                    line[:w] = 5
                if use_col:
                    line[w] = 7
                out = line.repeat(2)
            return out
        """,
        None,  # executed over all four combinations below
    ),
    # vllm step5 sparse_attention.py: every group written by a loop that runs at least twice.
    "per-group-loop": (
        """
        def _into(o, x):
            o.copy_(x)

        def f(x, groups):
            if groups > 1:
                g = torch.empty((groups, x.shape[0]))
                for i in range(groups):
                    _into(g[i], x * i)
                return g.t().contiguous()
            return x
        """,
        lambda: (torch.ones(3), 3),
    ),
    # sglang lfm2.py: rows written per sequence; unwritten only if the lengths do not cover them.
    "rows-per-sequence": (
        """
        def f(x, lens):
            out = x.new_empty(x.shape)
            off = 0
            for n in lens:
                out[off:off + n] = x[off:off + n] * 2
                off += n
            return out * 3
        """,
        lambda: (torch.ones(5, 2), [2, 3]),
    ),
    # Iterating a tensor hands out views of its rows (`Tensor.__iter__` is `unbind(0)`): the
    # loop writes every row, and with no row the buffer has no element to read.
    "rows-written-by-for": (_ROWS_BY_FOR, lambda: (3,)),
    "rows-written-by-for-no-rows": (_ROWS_BY_FOR, lambda: (0,)),
    "rows-written-in-a-comprehension": (
        """
        def f(n):
            out = torch.empty(n, 4)
            _ = [row.copy_(torch.arange(4.0)) for row in out]
            return out * 2
        """,
        lambda: (3,),
    ),
    "rows-of-list": (
        """
        def f(n):
            out = torch.empty(n, 4)
            for row in list(out):
                row.fill_(2.0)
            return out.sum()
        """,
        lambda: (3,),
    ),
    "rows-of-tuple": (
        """
        def f(n):
            out = torch.empty(n, 4)
            rows = tuple(out)
            for row in rows:
                row.fill_(2.0)
            return out.sum()
        """,
        lambda: (2,),
    ),
    "rows-of-iter": (
        """
        def f(n):
            out = torch.empty(2, n)
            it = iter(out)
            next(it).fill_(1.0)
            next(it).fill_(3.0)
            return out.sum()
        """,
        lambda: (3,),
    ),
}


@pytest.fixture
def deep_gemm_stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU stand-in with DeepGEMM's contract: d = a @ b (+ c), every element written."""
    module = types.ModuleType("deep_gemm")

    def bf16_gemm_nn(a: Any, b: Any, d: Any, c: Any = None) -> None:
        d.copy_(a @ b if c is None else a @ b + c)

    module.bf16_gemm_nn = bf16_gemm_nn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "deep_gemm", module)


@pytest.mark.parametrize("case", sorted(FALSE_ALARMS))
def test_false_alarm_is_gone_and_memory_is_not_read(case: str, deep_gemm_stand_in: None) -> None:
    body, args = FALSE_ALARMS[case]
    source = HEAD + textwrap.dedent(body)
    assert not _guard(source)
    fn = _load(source)["f"]
    if args is None:
        for w in (0, 3):
            for flag in (False, True):
                assert not _differs_with_poison(fn, w, flag)
    else:
        assert not _differs_with_poison(fn, *args())


def test_a_read_that_needs_skipped_writes_names_the_write() -> None:
    """Where the read sees unwritten memory only when a write does not run, the guard's verdict
    is `unproven` and says which write (asked for every verdict, as `scan --since` does). The
    zeros twin stays ZO001 `unsafe`: there it is information."""
    from zeroopt.analysis.options import AnalysisOptions

    source = HEAD + textwrap.dedent(FALSE_ALARMS["rows-per-sequence"][0])
    every = AnalysisOptions(judge_empties=True)
    (finding,) = analyse_source(source, "guard_case.py", every).findings
    assert finding.verdict is Verdict.UNPROVEN
    assert "only where the write at line 8 does not run" in finding.message
    twin = analyse_source(source.replace("new_empty", "new_zeros"), "guard_case.py")
    assert [f.verdict for f in twin.findings] == [Verdict.UNSAFE]


def test_fake_implementation_and_meta_device_have_no_data() -> None:
    """vllm _custom_ops.py (register_fake) and sharded_rdt_fake.py (device="meta")."""
    source = HEAD + textwrap.dedent("""\
        from torch.library import register_fake

        torch.library.define("zeroopt_guard::g", "(Tensor x) -> Tensor")

        @register_fake("zeroopt_guard::g")
        def g_fake(x):
            return torch.empty((3, x.size(0)), dtype=x.dtype, device=x.device).sum(0)

        def meta_copy(src, dest):
            m = torch.empty(src.shape, dtype=src.dtype, device="meta")
            return dest.copy_(m)

        def run(x):
            from torch._subclasses.fake_tensor import FakeTensorMode
            with FakeTensorMode():
                return torch.ops.zeroopt_guard.g(torch.ones(4))
        """)
    assert not _guard(source)
    ns = _load(source)
    for fn, args in (
        (ns["run"], (None,)),
        (ns["meta_copy"], (torch.ones(3), torch.ones(3, device="meta"))),
    ):
        with _empties("nan"):
            out = fn(*args)
        assert out.shape in ((4,), (3,))
        assert type(out).__name__ == "FakeTensor" or out.device.type == "meta"


REAL_READS = {
    # padding concatenated and sliced off later (sglang ascend_backend.py, vllm vision.py)
    "padding-in-cat": (
        """
        def f(x):
            pad = torch.empty(2, x.shape[1])
            return torch.cat([x, pad])
        """,
        lambda: (torch.ones(2, 3),),
    ),
    # vllm resampler.py:199
    "scaled-empty": (
        """
        def f(n):
            return 0.5 * torch.empty(n, n)
        """,
        lambda: (3,),
    ),
    "beta-is-not-zero": (
        """
        def f(q, k):
            s = torch.empty(2, 3, 3)
            return torch.baddbmm(s, q, k, beta=1, alpha=0.5)
        """,
        lambda: (torch.ones(2, 3, 4), torch.ones(2, 4, 3)),
    ),
    # The write comes after the read in the loop: the first iteration reads unwritten memory.
    "read-before-the-loop-writes": (
        """
        def f(n):
            buf = torch.empty(n)
            total = 0.0
            for i in range(3):
                total += float(buf.sum())
                buf.fill_(i)
            return torch.tensor(total)
        """,
        lambda: (4,),
    ),
    # Read before the loop hands out its rows: the rows written later do not matter.
    "read-before-rows-are-written": (
        """
        def f(n):
            out = torch.empty(n, 4)
            total = out.sum()
            for row in out:
                row.fill_(1.0)
            return out + total
        """,
        lambda: (3,),
    ),
    # A branch that writes nothing does not make the read conditional.
    "branch-without-a-write": (
        """
        def f(n, flag):
            buf = torch.empty(n)
            k = 2 if flag else 3
            return buf * k
        """,
        lambda: (3, True),
    ),
}


@pytest.mark.parametrize("case", sorted(REAL_READS))
def test_real_read_stays_unsafe_and_poison_shows_it(case: str) -> None:
    body, args = REAL_READS[case]
    source = HEAD + textwrap.dedent(body)
    assert [f.verdict for f in _guard(source)] == [Verdict.UNSAFE]
    assert _differs_with_poison(_load(source)["f"], *args())
