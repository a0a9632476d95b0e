# UNSOUND (frame introspection not caught) (engine at 689dd3b): an exception's traceback reaches this very frame's locals.
# zeroopt says `safe` for the torch.zeros at line 13: "written in full (line 18)".
# Why: e.__traceback__.tb_frame.f_locals["x"] is the buffer; .sum() reads it before x.fill_(1).
# FRAME_INTROSPECTION / _FRAME_NAMES know locals/vars/eval/exec/globals/_getframe/currentframe, not
# the frame attributes (tb_frame, f_locals, f_back, gi_frame, ...), nor sys.exc_info()/inspect.trace().
# Responsible: analysis/semantics/entries.py FRAME_INTROSPECTION, buffer_flow._FRAME_NAMES. (Contrived; low priority.)
# Run `python 031.py`: the two printed results differ.

import torch


def f():
    x = torch.zeros(8)
    try:
        raise ValueError
    except ValueError as e:
        s = e.__traceback__.tb_frame.f_locals["x"].sum()
    x.fill_(1)
    return s, x


if __name__ == "__main__":
    print("with torch.zeros:", f())
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f())
