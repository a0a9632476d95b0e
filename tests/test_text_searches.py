"""Searches over the tree's text spelled for speed give the answers of their plain spellings:
a pattern that starts with a look-behind is tried at every offset of a text, one that starts with
a word is searched for it, so the tree-wide searches spell the word first and look behind it
after (analysis/project.py `DYNAMIC_PATTERN`, analysis/tree_naming.py `word_pattern`), and the
searches for a name's stores and strings read only the files whose attribute index lists it
(analysis/anyorder_classes.py `spelled_in`). Each is checked here against the plain spelling on
generated text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from zeroopt.analysis import anyorder_bases
from zeroopt.analysis.anyorder_classes import spelled_in
from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.project import _binds_dynamically, binds_dynamically
from zeroopt.analysis.tree_naming import word_pattern

# The plain spelling: each alternative's look-behind before its word.
PLAIN_DYNAMIC = (
    r"(?<!\w)(?:exec|globals)(?!\w)|(?<!\w)vars\s*\(\s*\)|(?<![\w.])vars(?![\w\s(])"
    r"|sys\s*\.\s*modules\s*(?:\[|\.\s*get\s*\()\s*(?:__name__|__spec__)|__dict__\s*\["
    r"|(?<!\w)(?:f_globals|f_locals|__globals__|__builtins__|__import__|FunctionType)(?!\w)"
    r"|(?<![\w.])builtins(?!\w)|(?<![\w.])(?<!def )eval\s*[(),\]]|=\s*eval(?!\w)"
    r"|(?<!self\.)__dict__\s*\.\s*(?:update|setdefault)"
)
PIECES = ["exec", "globals", "vars", "sys", "modules", "__name__", "__spec__", "__dict__", "get_",
          "get", "x", "é", ".", "(", ")", "[", "]", ",", " ", "\t", "\n", "_", "1", "=", "'",
          "eval", "def ", "self", "builtins", "__builtins__", "f_globals", "f_locals",
          "__globals__", "__import__", "FunctionType", "update", "setdefault"]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=1000, deadline=None)
@given(texts)
def test_dynamic_binding_test_matches_the_plain_pattern(text: str) -> None:
    assert binds_dynamically(text) == bool(re.search(PLAIN_DYNAMIC, text))
    data = text.encode()
    assert _binds_dynamically(data) == bool(re.search(PLAIN_DYNAMIC.encode(), data))


def test_dynamic_binding_words() -> None:
    assert binds_dynamically("exec(code)") and binds_dynamically("g = globals")
    assert binds_dynamically("ns = vars()") and binds_dynamically("sys.modules[__name__]")
    assert not binds_dynamically("get_exec()") and not binds_dynamically("self.model_vars()")
    assert not binds_dynamically("executor = 1") and not _binds_dynamically(b"x.vars(1)")


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "_", "é", ".", "ab"]), min_size=1, max_size=3).map("".join),
    texts,
)
def test_word_pattern_matches_the_plain_pattern(name: str, text: str) -> None:
    raw, data = name.encode(), text.replace("x", name).encode()
    plain = re.search(rb"(?<!\w)" + re.escape(raw) + rb"(?!\w)", data)
    found = word_pattern(raw).search(data)
    assert (plain and plain.span()) == (found and found.span())


def test_spelled_in_lists_every_file_that_stores_or_quotes_a_name(tmp_path: Path) -> None:
    sources = {
        "a.py": "x.Base = 1\n",
        "b.py": "setattr(m, 'Base', 2)\n",
        "c.py": "class Base:\n    pass\n",  # the name, but after no `.` or quote
        "d.py": "y = obj .  Based\n",
        "e.py": 'k = "Base"\n',
    }
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    world = ClassWorld.read(str(tmp_path / n) for n in sources)
    assert world.digest
    found = [Path(p).name for p, _ in spelled_in(world, "Base")]
    assert found == ["a.py", "b.py", "e.py"]
    assert [Path(p).name for p, _ in spelled_in(world, "Based")] == ["d.py"]
    # A name the index cannot hold whole: every file.
    assert len(spelled_in(world, "Bäse")) == len(sources)


def test_binding_counts_of_a_module() -> None:
    tree = ast.parse(
        "from m import Base\nclass K:\n    pass\nBase = wrap(Base)\n"
        "def f():\n    global K\n    K = 1\ntry:\n    pass\nexcept E as err:\n    pass\n"
    )
    assert not anyorder_bases._bound_once(tree, "Base")  # imported, then rebound
    assert not anyorder_bases._bound_once(tree, "K")  # class, `global K`, `K = 1`
    assert anyorder_bases._bound_once(tree, "f") and anyorder_bases._bound_once(tree, "err")
    assert not anyorder_bases._star_import(tree)
    assert anyorder_bases._star_import(ast.parse("from m import *\n"))
