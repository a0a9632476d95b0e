# UNSOUND, user configuration (engine at 9d0f8b9): with the pyproject.toml below next to this file,
# zeroopt says `safe` for `x = torch.zeros(n)` at line 48 ("`x` is written in full (line 49) before any read
# on every path") and for `out = torch.zeros(4)` at line 54 ("written in full (line 55)").
#
#   [tool.zeroopt]
#   [tool.zeroopt.contracts]
#   "my_kernels.fill_metadata" = { writes = [0] }
#   [tool.zeroopt.kernels."kern.attn"]
#   params = ["q", "out"]
#   writes = ["out"]
#
# Both declarations are for one function each (Contract.function: "qualified name as resolved through
# imports"; a kernels table is named "pkg.mod.fn"), yet they are applied to other functions:
# (1) contracts: rules/buffer_flow._Eval._call looks the contract up by the qualified name and, failing
#     that, by the SOURCE TEXT of the callee: `contracts.get(qual) or contracts.get(self._src(e.func))`.
#     Here `my_kernels` is `import ref_kernels as my_kernels`; the call resolves to
#     `ref_kernels.fill_metadata` (zeroopt names it so without the config: "passed to
#     `ref_kernels.fill_metadata`"), which has no contract, but its text `my_kernels.fill_metadata` matches.
#     A reference/fallback implementation imported under the production name gets the production contract.
# (2) kernels: rules/kernel_contracts.KernelContract.matches tests `any(h in head for h in module_hints)`,
#     a SUBSTRING test, and kernel_from_config sets module_hints = (module,) from the table name. So
#     "kern.attn" also matches `kern_ref.attn`, `mykern.attn`, `a.kernels.attn`, ... (any module whose
#     dotted name contains "kern"). The built-in hints are meant as substrings; a user's exact module
#     name should be matched exactly (or as a dotted prefix/suffix at least).
# Here both stand-ins accumulate into their argument (they read it), so the zeros are observed.
# Run `python 058.py` (it registers the two stand-in modules itself): prints both results with real
# torch.zeros, then with the allocations poisoned (NaN). To reproduce the scan: put this file and the
# pyproject.toml above in a directory and run `zeroopt scan 003.py --no-cache` there.

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

_real_zeros = torch.zeros


def a(n):
    x = torch.zeros(n)
    my_kernels.fill_metadata(x)
    return x.sum()


def b(q):
    out = torch.zeros(4)
    kern_ref.attn(q, out)
    return out.sum()


def run():
    return a(4).item(), b(torch.ones(4)).item()


def _poisoned(*shape, **kw):
    return _real_zeros(*shape, **kw).fill_(float("nan"))


if __name__ == "__main__":
    print("zeros   :", run())
    torch.zeros = _poisoned
    try:
        print("poisoned:", run())
    finally:
        torch.zeros = _real_zeros
