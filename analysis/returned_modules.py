"""The calls of a module's function from other modules of the tree, for a buffer it returns
(returned.py).

A private function (`_alloc`), or a public one under `callers-closed`, is judged at its calls in
other files too. The files that may name it are tree_naming.py's `naming_files`: every file whose
text has the function's name as a word, whatever modules it spells (a module object may reach a
file as a value: `peek(mod)`, then `m._alloc(...)` there), and a lookup by a name the text does
not spell anywhere refuses. In each such file, through the project index (project.py: imports,
re-exports, star imports, `import m as mm`, `from . import m`):

- every name bound by `from ... import _alloc [as g]`, and every `_alloc` as a name or an
  attribute, must be the callee of a call that summaries.py resolves to this very def (the module
  and the line of the def): `g(...)`, `m._alloc(...)`, `mm._alloc(...)`, or, by the module's
  names (a bare name, or an attribute of an imported module), to a def of another module (the
  file's own `_alloc`, another module's): that call runs that def, the same resolution that
  finds the calls of this one;
- a file whose text names `_alloc` only as one undecorated top-level def of its own and names
  read of it (`_own_def_only`) is passed without loading it: each `_alloc` there is that def;
- anything else refuses, naming the file and line: the function passed or stored as a value, a
  string naming it (`getattr(m, "_alloc")`, `__all__`), a call not certain to run it, a file the
  index cannot load, a file that may reach its names at run time (`globals()`, frames), a top-level
  `from m import _alloc as mk` whose alias another file names (a re-export its callers need not
  spell), and (tree_naming.py) `vars(m)[k]` / `m.__dict__[k]` by a computed key.

Each call found is judged in its own module (its own engine of summaries), like a call in the
function's module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from zeroopt.analysis.project import binds_dynamically
from zeroopt.analysis.resolve import Scope, walk_all, walk_bfs
from zeroopt.analysis.semantics import FRAME_PATTERN
from zeroopt.analysis.summaries import load_unit
from zeroopt.analysis.tree_naming import word_pattern

if TYPE_CHECKING:
    from zeroopt.analysis.returned import ReturnedJudge
    from zeroopt.analysis.summaries import Unit

Found = list[tuple[ast.Call, Scope, "ReturnedJudge"]]
_MAX_FILES = 32  # files calling one function, at most (the cost stays bounded)


def foreign_callers(
    judge: ReturnedJudge,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    public: bool,
    make: Callable[[Unit, str], ReturnedJudge],
) -> tuple[Found, str]:
    """(every call of `fn` in the other files of the tree, "") or ([], why not all known)."""
    name = fn.name
    project = judge.summaries.project
    world = judge.summaries.world
    home = judge.unit.module
    found: Found = []
    done: set[int] = set()
    while True:
        files, why = judge.naming_files(name, False)
        if why:
            return [], why
        todo = [i for i in files if i not in done]
        if not todo:
            return found, ""
        if project is None or home is None:
            path = world.files[todo[0]][0]
            return [], f"{path} names `{name}`: its module is not known to a project index"
        if len(done) + len(todo) > _MAX_FILES:
            return [], f"more than {_MAX_FILES} files of the tree name `{name}`"
        for i in todo:
            done.add(i)
            path, data = world.files[i]
            if _own_def_only(data, name):
                continue  # every `name` there is the file's own def
            module = project.index.names.get(path)
            if module is None or project.index.modules.get(module) != path:
                return [], f"{path} names `{name}` and is no module the index can load"
            unit = load_unit(project, module)
            if unit is None:
                return [], f"{path} names `{name}` and cannot be read as a module"
            if unit.frames_read or unit.dynamic:  # project.DYNAMIC_PATTERN
                return [], f"{path} names `{name}` and may reach its names at run time"
            other = make(unit, path)
            calls, why = _calls_in(other, fn, home, public)
            if why:
                return [], why
            why = _alias_named(unit, name, world.files, path)
            if why:
                return [], why
            found += [(call, scope, other) for call, scope in calls]


def _own_def_only(data: bytes, name: str) -> bool:
    """The file names `name` only as one undecorated def of its own at its top level and as
    plain names read (no other binding of it in any scope, no attribute `x.name`, no import of
    it, no string holding it, no star import, nothing that binds names out of sight or reads
    frames): each `name` there is that def, never another module's, whatever the file's module
    is (a script the index cannot load too)."""
    text = data.decode("utf-8", "replace")
    if binds_dynamically(text) or re.search(FRAME_PATTERN, text):
        return False
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    own = [s for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    own = [s for s in own if s.name == name]
    if len(own) != 1 or own[0].decorator_list:
        return False
    word = word_pattern(name.encode())
    for n in walk_all(tree):
        if isinstance(n, ast.Name):
            if n.id == name and not isinstance(n.ctx, ast.Load):
                return False
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if n.name == name and n is not own[0]:
                return False
        elif isinstance(n, ast.alias):
            if n.name == "*" or name in (n.asname, *n.name.split(".")):
                return False
        elif isinstance(n, ast.Constant):
            if isinstance(n.value, str) and word.search(n.value.encode("utf-8", "replace")):
                return False
        elif name in _bound_names(n):
            return False
    return True


def _bound_names(n: ast.AST) -> tuple[str, ...]:
    """Names a node binds other than by `ast.Name` or a def (an attribute counts: `x.name`)."""
    if isinstance(n, ast.Attribute):
        return (n.attr,)
    if isinstance(n, ast.arg):
        return (n.arg,)
    if isinstance(n, ast.Global | ast.Nonlocal):
        return tuple(n.names)
    if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return (n.name,) if n.name else ()
    if isinstance(n, ast.MatchMapping):
        return (n.rest,) if n.rest else ()
    return ()


def _alias_named(unit: Unit, name: str, files: list[tuple[str, bytes]], path: str) -> str:
    """Why a name the module binds `name` under at its top level (`from m import _alloc as mk`)
    may be taken by another file without spelling `name` ("" if no other file names it)."""
    local = {
        id(i)
        for n in walk_bfs([unit.tree])
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef)
        for i in walk_all(n)
    }
    aliases = {
        a.asname
        for n in walk_bfs([unit.tree])
        if isinstance(n, ast.ImportFrom) and id(n) not in local
        for a in n.names
        if a.name == name and a.asname and a.asname != name
    }
    for alias in sorted(aliases):
        word = word_pattern(alias.encode())
        for other, data in files:
            if other != path and word.search(data):
                return (
                    f"{path} binds `{name}` as `{alias}`, which {other} names: it may call it "
                    f"without spelling `{name}`"
                )
    return ""


def _calls_in(
    other: ReturnedJudge,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    home: str,
    public: bool,
) -> tuple[list[tuple[ast.Call, Scope]], str]:
    """(the calls of `fn` in `other`'s module, why not all of them are known)."""
    unit = other.unit
    name = fn.name
    watch = {name}
    for n in walk_bfs([unit.tree]):
        if isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name == name or (a.name == "*" and public):
                    watch.add(a.asname or a.name)
    watch.discard("*")
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    calls = other.call_index()
    resolver = unit.resolver
    found: list[tuple[ast.Call, Scope]] = []
    for n in walk_bfs([unit.tree]):
        where = f"{unit.path}:{getattr(n, 'lineno', 0)}"
        if isinstance(n, ast.Name | ast.Attribute):
            spelled = n.id if isinstance(n, ast.Name) else n.attr
            if spelled not in watch or (isinstance(n, ast.Attribute) and spelled != name):
                continue
            hit = calls.get(id(n))
            if hit is None or not isinstance(n.ctx, ast.Load):
                return [], f"{where} uses `{spelled}` other than as a call of `{name}`"
            scope = hit[1]
            qual = resolver.qualified(scope, n)
            callee = other.summaries.callee(scope, n, qual)
            if (
                callee is not None
                and callee.unit.module not in (home, None)
                and (isinstance(n, ast.Name) or qual is not None)
            ):
                continue  # resolved through the module's names to another module's def
            if (
                callee is None
                or callee.unit.module != home
                or callee.fn.name != name
                or callee.fn.lineno != fn.lineno
            ):
                return [], f"the call at {where} is not certain to run `{name}`"
            found.append(hit)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and word.search(n.value):
            return [], f"{where} names `{name}` in a string (getattr, __all__)"
    return found, ""
