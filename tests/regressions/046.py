# UNSOUND (engine at 49151dc, site + fix): `torch.zeros(4, **kw)` where kw holds `out=t` fills the
# existing tensor t with zeros; zeroopt says `safe` ("`x` is never read") at line 16 and its fix is
# `torch.empty(4, **kw)`, which leaves t's old contents in place (empty(out=t) only resizes).
# Why: analysis/sites.py _allocation_name skips `out=` calls only when the keyword is spelled out
# (`any(k.arg == "out" ...)`); a `**kw` keyword (k.arg is None) may carry out=. The analysis then
# follows x, never t, so the read of t at line 17 is not seen either. Such a site should not be an
# allocation (or at least never safe) when the call has a `**` argument.
# Run `python 046.py`: prints t.sum() with the original and with the fix applied (torch.empty).

import torch


def f():
    t = torch.ones(4)
    kw = {"out": t}
    x = torch.zeros(4, **kw)
    return t.sum()


if __name__ == "__main__":
    print("with torch.zeros:", f())
    torch.zeros = torch.empty  # the fix `torch.empty(4, **kw)`
    print("as torch.empty  :", f())
