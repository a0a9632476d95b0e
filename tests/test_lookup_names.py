"""The names a lookup by a computed name may look up (analysis/lookup_names.py), per form: each
known set must hold every name the expression can evaluate to, checked by running the function."""

from __future__ import annotations

import ast

import pytest

from zeroopt.analysis.lookup_names import LookupNames, exact, may_name

# (function text; the names of the argument of its `look(...)` call, None: any name)
FORMS: list[tuple[str, frozenset[tuple[str, str, bool]] | None]] = [
    ("def f(o):\n    look('a')", exact("a")),
    ("def f(o):\n    for n in ('a', 'b'):\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n in ['a', 'b']:\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n in 'a b'.split():\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n in 'a,b'.split(','):\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n, _ in {'a': 1, 'b': 2}.items():\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n in {'a': 1}.keys():\n        look(n)", exact("a")),
    ("def f(o):\n    [look(n) for n in ('a', 'b')]", exact("a", "b")),
    ("def f(o):\n    names = ('a', 'b')\n    for n in names:\n        look(n)", exact("a", "b")),
    ("def f(o):\n    for n, _ in (('a', 1), ('b', 2)):\n        look(n)", exact("a", "b")),
    ("def f(o, c):\n    n = 'a' if c else 'b'\n    look(n)", exact("a", "b")),
    ("def f(o):\n    look('_b' + 'uf')", exact("_buf")),
    ("def f(o):\n    for n in ('a', 'b'):\n        look(n + '_x')", exact("a_x", "b_x")),
    ("def f(o, x):\n    look(f'cfg_{x}')", frozenset({("cfg_", "", False)})),
    ("def f(o, x):\n    look(f'{x}_t')", frozenset({("", "_t", False)})),
    # Any name: parameters, rebindings, unknown operands, reflection.
    ("def f(o, n):\n    look(n)", None),
    ("def f(o, k):\n    for n in ('a',):\n        n = k\n        look(n)", None),
    ("def f(o, k):\n    for n in ('a',):\n        n += k\n        look(n)", None),
    ("def f(o, x):\n    look('lit' + x)", None),
    ("def f(o):\n    for n in vars(o):\n        look(n)", None),
    ("def f(o):\n    for n in o.__dict__:\n        look(n)", None),
    ("def f(o, ks):\n    [look(n) for n in ('a',) for n in ks]", None),
    ("def f(o, ks):\n    for n in ks:\n        look(n)", None),
    ("def f(o, d):\n    for n, _ in d.items():\n        look(n)", None),
    ("def f(o):\n    global n\n    n = 'a'\n    look(n)", None),
    (
        "def f(o):\n    n = 'a'\n    def g():\n        nonlocal n\n        n = 'b'\n    look(n)",
        None,
    ),
    ("def f(o):\n    look(n)", None),
    ("def f(o):\n    names = ['a']\n    for n in names:\n        look(n)", None),
    ("def f(o, x):\n    look(f'{x}')", None),
]


def _arg(text: str) -> tuple[ast.expr, ast.AST]:
    tree = ast.parse(text)
    fn = tree.body[0]
    call = next(
        n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "look"
    )
    return call.args[0], fn


@pytest.mark.parametrize(("text", "want"), FORMS)
def test_names_of_each_form(text: str, want: frozenset[tuple[str, str, bool]] | None) -> None:
    arg, fn = _arg(text)
    assert LookupNames().names(arg, fn) == want


@pytest.mark.parametrize(("text", "want"), [f for f in FORMS if f[1] is not None])
def test_known_names_hold_every_name_looked_up(
    text: str, want: frozenset[tuple[str, str, bool]]
) -> None:
    """Run the function with `look` recording its argument: every name it looked up is one of
    the set's names or matches one of its patterns."""
    seen: list[str] = []
    scope: dict[str, object] = {"look": seen.append}
    exec(compile(text, "<form>", "exec"), scope)
    fn = scope["f"]
    assert callable(fn)
    fn_def = ast.parse(text).body[0]
    assert isinstance(fn_def, ast.FunctionDef)
    values = {"o": object(), "c": True, "x": "x"}
    fn(*(values[a.arg] for a in fn_def.args.args))
    assert seen
    for name in seen:
        assert may_name(want, frozenset({name})), (name, want)


def test_what_matters() -> None:
    assert not may_name(exact("host", "port"), frozenset({"_buf"}))
    assert may_name(exact("host", "_buf"), frozenset({"_buf"}))
    assert may_name(exact("__dict__"), frozenset({"_buf"}))  # the whole namespace
    assert may_name(exact("getattr"), frozenset({"_buf"}))  # a reflective builtin as a value
    assert may_name(frozenset({("_b", "", False)}), frozenset({"_buf"}))
    assert not may_name(frozenset({("cfg_", "", False)}), frozenset({"_buf"}))
    assert may_name(frozenset({("_", "", False)}), frozenset({"x"}))  # may make a dunder
    assert not may_name(frozenset({("", "_t", False)}), frozenset({"_buf"}))
    assert may_name(None, frozenset({"_buf"}))
