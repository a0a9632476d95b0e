"""Kernel contracts: which `out=` and arguments a kernel writes, and for which module.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    AnalysisOptions,
    Case,
    Contract,
    check_execution,
    check_verdict,
    kernel_from_config,
    params,
)

CASES = [
    Case(
        "positional_arguments_bound_by_the_wrong_order",
        why=(
            '`safe` would be wrong for the torch.zeros at line 28 ("`cu_k` is never read; '
            'torch.empty is equivalent"). Why: rules/kernel_contracts binds *positional* arguments '
            "by one fixed parameter order (the FA3/hopper flash_attn_varlen_func: q, k, v, "
            "cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, ...), but "
            "KernelContract.matches accepts any module whose path contains "
            '"flash_attn"/"flash_attention"/"sgl_kernel". vllm\'s '
            "vllm.vllm_flash_attn.flash_attn_varlen_func has another order: (q, k, v, max_seqlen_q,"
            " cu_seqlens_q, max_seqlen_k, cu_seqlens_k, seqused_k, q_v, ...). The 7th positional "
            "argument, cu_seqlens_k here, is taken as `max_seqlen_k`, which the contract lists as "
            "`ignored` (a scalar): _kernel_call only evaluates it, so the read of cu_k by the "
            "kernel is lost. cu_k[0] is never written (cumsum fills cu_k[1:]) and the kernel reads "
            "it as the start of sequence 0. (Same family: sglang's "
            "kernels/ops/attention/flash_attention_v4_sm120.flash_attn_varlen_func puts qv at 5 and"
            " seqused_q at 6, so a seqused_q buffer passed positionally is also `ignored`; FA2's "
            "flash_attn positional orders differ too.) The stand-in below follows vllm's documented"
            " signature and reads k/v rows [cu_k[b], cu_k[b+1])."
        ),
        source=r"""
import sys
import types

import torch


def _stand_in(q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k, cu_seqlens_k=None, seqused_k=None):
    out = torch.empty_like(q)
    for b in range(cu_seqlens_q.numel() - 1):
        qs, qe = int(cu_seqlens_q[b]), int(cu_seqlens_q[b + 1])
        ks, ke = int(cu_seqlens_k[b]), int(cu_seqlens_k[b + 1])
        kk, vv = k[ks:ke], v[ks:ke]
        out[qs:qe] = torch.softmax(q[qs:qe] @ kk.T, -1) @ vv if kk.shape[0] else 0
    return out


_pkg = types.ModuleType("vllm")
_mod = types.ModuleType("vllm.vllm_flash_attn")
_mod.flash_attn_varlen_func = _stand_in
_pkg.vllm_flash_attn = _mod
sys.modules.setdefault("vllm", _pkg)
sys.modules.setdefault("vllm.vllm_flash_attn", _mod)

from vllm.vllm_flash_attn import flash_attn_varlen_func  # noqa: E402


def f(q, k, v, cu_q, k_lens, max_q, max_k):
    cu_k = torch.zeros(k_lens.numel() + 1, dtype=torch.int32)  # <- site
    torch.cumsum(k_lens, 0, out=cu_k[1:])
    return flash_attn_varlen_func(q, k, v, max_q, cu_q, max_k, cu_k)
""",
        scenario=r"""
def run():
    def args():
        q = torch.arange(32.0).reshape(4, 8) / 10
        k = torch.arange(48.0).reshape(6, 8) / 10
        v = torch.arange(48.0).reshape(6, 8)
        return q, k, v, torch.tensor([0, 2, 4]), torch.tensor([3, 3]), 2, 3
    return f(*args())[:2]
""",
    ),
    Case(
        "kernel_arguments_in_evaluation_order",
        why=(
            '`safe` would be wrong for the torch.zeros_like at line 30 ("written in full (line 32):'
            ' `out=` of flash_attn_with_kvcache (kernel contract ...)"). Why: '
            "rules/buffer_flow._kernel_call walks the bound arguments in source order (positional, "
            "then keywords as written) and applies `out=` (a contract `writes` parameter) as a full"
            " write when it meets it. `out=buf` written before `q=buf` therefore marks buf written "
            "in full, and the later `q=buf` read is a read of written data. The kernel reads q "
            "before it writes out. a nearby case fixed this order for torch functions in `_call` "
            "(sorted by `written`), not for kernel contracts. The stand-in follows the documented "
            "read pattern: q read in full, k/v cache rows read up to cache_seqlens, out written."
        ),
        source=r"""
import sys
import types

import torch


def _stand_in(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, out=None, **kw):
    res = torch.empty_like(q)
    for b in range(q.shape[0]):
        n = int(cache_seqlens[b])
        kk, vv = k_cache[b, :n], v_cache[b, :n]
        res[b] = torch.softmax(q[b] @ kk.T, -1) @ vv
    if out is not None:
        out.copy_(res)
        return out
    return res


_pkg = types.ModuleType("sgl_kernel")
_mod = types.ModuleType("sgl_kernel.flash_attn")
_mod.flash_attn_with_kvcache = _stand_in
_pkg.flash_attn = _mod
sys.modules.setdefault("sgl_kernel", _pkg)
sys.modules.setdefault("sgl_kernel.flash_attn", _mod)

from sgl_kernel.flash_attn import flash_attn_with_kvcache  # noqa: E402


def f(q, kc, vc, lens):
    buf = torch.zeros_like(q)  # <- site
    buf[:, :1] = q[:, :1]
    flash_attn_with_kvcache(k_cache=kc, v_cache=vc, out=buf, q=buf, cache_seqlens=lens)
    return buf
""",
        scenario=r"""
def run():
    def args():
        q = torch.arange(2 * 3 * 4.0).reshape(2, 3, 4) / 10
        kc = torch.arange(2 * 5 * 4.0).reshape(2, 5, 4) / 10
        return q, kc, kc * 2, torch.tensor([3, 5])
    return f(*args())
""",
    ),
    Case(
        "user_contract_applies_to_its_own_function_only",
        why=(
            "With the project's configuration (the options below), `safe` would be wrong for `x = "
            'torch.zeros(n)` at line 17 ("`x` is written in full (line 18) before any read on every'
            ' path") and for `out = torch.zeros(4)` at line 23 ("written in full (line 24)"). '
            '[tool.zeroopt] [tool.zeroopt.contracts] "my_kernels.fill_metadata" = { writes = [0] } '
            '[tool.zeroopt.kernels."kern.attn"] params = ["q", "out"] writes = ["out"] Both '
            'declarations are for one function each (Contract.function: "qualified name as resolved'
            ' through imports"; a kernels table is named "pkg.mod.fn"), yet they are applied to '
            "other functions: (1) contracts: rules/buffer_flow._Eval._call looks the contract up by"
            " the qualified name and, failing that, by the SOURCE TEXT of the callee: "
            "`contracts.get(qual) or contracts.get(self._src(e.func))`. Here `my_kernels` is "
            "`import ref_kernels as my_kernels`; the call resolves to `ref_kernels.fill_metadata` "
            '(zeroopt names it so without the config: "passed to `ref_kernels.fill_metadata`"), '
            "which has no contract, but its text `my_kernels.fill_metadata` matches. A "
            "reference/fallback implementation imported under the production name gets the "
            "production contract. (2) kernels: rules/kernel_contracts.KernelContract.matches tests "
            "`any(h in head for h in module_hints)`, a SUBSTRING test, and kernel_from_config sets "
            'module_hints = (module,) from the table name. So "kern.attn" also matches '
            "`kern_ref.attn`, `mykern.attn`, `a.kernels.attn`, ... (any module whose dotted name "
            'contains "kern"). The built-in hints are meant as substrings; a user\'s exact module '
            "name should be matched exactly (or as a dotted prefix/suffix at least). Here both "
            "stand-ins accumulate into their argument (they read it), so the zeros are observed. "
            "The case's options are that pyproject.toml."
        ),
        source=r"""
import sys
import types

for _name in ("ref_kernels", "kern_ref"):  # stand-ins: reference versions that accumulate
    _m = types.ModuleType(_name)
    _m.fill_metadata = lambda t: t.add_(1)
    _m.attn = lambda q, out: out.add_(q)
    sys.modules[_name] = _m

import torch  # noqa: E402

import kern_ref  # noqa: E402
import ref_kernels as my_kernels  # noqa: E402


def a(n):
    x = torch.zeros(n)  # <- site
    my_kernels.fill_metadata(x)
    return x.sum()


def b(q):
    out = torch.zeros(4)  # <- site
    kern_ref.attn(q, out)
    return out.sum()
""",
        scenario=r"""
def run():
    return a(4).item(), b(torch.ones(4)).item()
""",
        options=AnalysisOptions(
            contracts=(Contract("my_kernels.fill_metadata", (0,), "pyproject.toml"),),
            kernels=(
                kernel_from_config(
                    "kern.attn", {"params": ["q", "out"], "writes": ["out"]}, "pyproject.toml"
                ),
            ),
        ),
    ),
    Case(
        "contract_does_not_match_by_substring",
        why=(
            '`safe` would be wrong for `out = torch.zeros(...)` at line 21 ("`out=` of '
            'flash_attn_varlen_func (kernel contract ...)"). The built-in FlashAttention contract '
            "matched by SUBSTRING: `flash_attn_ref` contains `flash_attn`, so a local module named "
            "like the kernel got the contract that its `out=` is written in full. This one writes "
            "nothing."
        ),
        source=r"""
import sys
import types

import torch

_ref = types.ModuleType("flash_attn_ref")


def _reference(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, out=None):
    return q * 2  # a reference implementation: it never touches `out`


_ref.flash_attn_varlen_func = _reference
sys.modules["flash_attn_ref"] = _ref

from flash_attn_ref import flash_attn_varlen_func  # noqa: E402


def f(n):
    q = torch.ones(n, 2)
    out = torch.zeros(n, 2)  # <- site
    flash_attn_varlen_func(q, q, q, out=out)
    return out.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "varlen_out_written_only_up_to_the_last_sequence",
        why=(
            "`safe` would be wrong for `out = torch.zeros(...)` at line 28: the FA4 contract said "
            "varlen `out=` is written in full, but the kernel stores only rows < cu_seqlens_q[-1] "
            "(flash-attention flash_attn/cute/seqlen_info.py:97-116, "
            "flash_attn/cute/flash_fwd.py:438; FA3 hopper/epilogue_fwd.hpp:275-278,358): with a "
            "padded batch (capture-size out, fewer real tokens) the padding rows keep what the "
            "allocation left there. The stand-in below stores exactly the rows the kernel stores."
        ),
        source=r"""
import sys
import types

import torch

_top = types.ModuleType("flash_attn")
_cute = types.ModuleType("flash_attn.cute")


def _varlen(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None, out=None):
    total = int(cu_seqlens_q[-1])
    result = q[:total] * 2
    if out is not None:
        out[:total] = result  # rows past cu_seqlens_q[-1] are never stored
    return out


_cute.flash_attn_varlen_func = _varlen
_top.cute = _cute
sys.modules.setdefault("flash_attn", _top)
sys.modules.setdefault("flash_attn.cute", _cute)

from flash_attn.cute import flash_attn_varlen_func  # noqa: E402


def f(padded, real_tokens):
    q = torch.ones(padded, 2)
    out = torch.zeros(padded, 2)  # <- site
    cu = torch.tensor([0, real_tokens], dtype=torch.int32)
    flash_attn_varlen_func(q, q, q, cu_seqlens_q=cu, cu_seqlens_k=cu, out=out)
    return out.sum()
""",
        scenario=r"""
def run():
    return f(8, 5)
""",
    ),
    Case(
        "kvcache_with_varlen_q_writes_some_rows",
        why=(
            "`safe` would be wrong for `out = torch.zeros(...)` at line 27: flash_attn_with_kvcache"
            " with `cu_seqlens_q=` (varlen q, as SGLang's target-verify and draft-extend paths call"
            " it) stores only rows < cu_seqlens_q[-1] of `out` (FA3 hopper/seqlen.h:20-26, "
            "hopper/epilogue_fwd.hpp:358); the contract said `out=` is written in full. The stand-"
            "in stores exactly those rows."
        ),
        source=r"""
import sys
import types

import torch

_mod = types.ModuleType("sgl_kernel.flash_attn")


def _with_kvcache(q, k_cache, v_cache, cache_seqlens=None, page_table=None, cu_seqlens_q=None, out=None):
    total = int(cu_seqlens_q[-1]) if cu_seqlens_q is not None else q.shape[0]
    if out is not None:
        out[:total] = q[:total] + 1
    return out


_mod.flash_attn_with_kvcache = _with_kvcache
sys.modules.setdefault("sgl_kernel", types.ModuleType("sgl_kernel"))
sys.modules.setdefault("sgl_kernel.flash_attn", _mod)

from sgl_kernel.flash_attn import flash_attn_with_kvcache  # noqa: E402


def f(padded, real_tokens):
    q = torch.ones(padded, 2)
    cache = torch.ones(4, 2)
    cu = torch.tensor([0, real_tokens], dtype=torch.int32)
    out = torch.zeros(padded, 2)  # <- site
    flash_attn_with_kvcache(q, cache, cache, cu_seqlens_q=cu, out=out)
    return out.sum()
""",
        scenario=r"""
def run():
    return f(8, 3)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
