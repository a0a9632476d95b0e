# UNSOUND (engine at 49151dc): zeroopt says `safe` for the torch.zeros at line 25 ("written in full (line 26): x[:]").
# Why: `with A, B as t:` is `with A: with B as t:`. An exception raised while B is evaluated, by B.__enter__, or while the
# value is bound to the target `t`, goes to B.__exit__ (for the binding) and then to A.__exit__, which may swallow it;
# execution then resumes after the with statement. rules/cfg.Builder._with creates the EXPR/CALL/BIND nodes of every item
# *before* it pushes the `__exit__ (exception)` handler, so those nodes' exception edges go to the outer target (here, out
# of the function) and the path "item or binding raised, suppressed, body skipped" does not exist in the CFG.
# Here the target is `x[:]`: the binding is the full write. With `src` of the wrong shape it raises RuntimeError, which
# contextlib.suppress(RuntimeError) swallows, and x is returned unwritten.
# Same verdict for `with contextlib.suppress(TypeError) as x[:]: pass` (one item: suppress.__enter__ returns None, binding
# raises TypeError, and suppress's own __exit__ swallows it), and for `with suppress(E), nullcontext(x.copy_(src)): ...`
# (the write is in the second item's expression).
# Run `python 051.py`: the two printed results differ.

import contextlib

import torch


@contextlib.contextmanager
def staged(src):
    yield src * 2


def f(src):
    x = torch.zeros(4)
    with contextlib.suppress(RuntimeError), staged(src) as x[:]:
        pass
    return x


if __name__ == "__main__":
    src = torch.ones(3)  # wrong shape: `x[:] = ...` raises RuntimeError
    print("with torch.zeros:", f(src))
    _zeros = torch.zeros
    torch.zeros = lambda *a, **kw: _zeros(*a, **kw).fill_(float("nan"))  # what torch.empty may hold
    print("as torch.empty  :", f(src))
