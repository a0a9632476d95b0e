"""Code that surely runs before a call: the import-time code of the modules any caller has
imported by then (summaries.py `possible_callee` asks).

`possible_callee` lets an `unsafe` rest on the path where nothing replaces a def other code may
replace. That path exists only if the replacing code may not have run yet. Whenever a call in
module C of a def of module D runs, C and D have been imported, and with them every package
above them and every module their top-level code imports unconditionally (transitively): that
code ran. A package `__init__` that does `helpers.add_into = _fill`, or puts another module in
`sys.modules` under D's name, or calls a function that does, replaces the def before any call: no
path runs it.

Told from the text, for the statements a module's import may run on every path (its top-level
statements, and the bodies of top-level `try`, `with` and loops; not under an `if` or a handler,
whose condition picks a path where they do not run): one whose text may replace the def (an attribute
store of its name, `setattr`, a `__dict__`/`globals()`/`vars()` binding, `sys.modules`, an
import-system change: the spellings summaries.py refuses), or a call of a function defined in one
of those modules whose body may (directly or through another such function, by name), takes the
path away; so does a closure too large to read (more than `_LIMIT` modules).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView

_LIMIT = 100
# Per project view and module: its parsed tree (read and parsed once for every file analysed).
_TREES: dict[tuple[int, str], tuple[ast.Module, str, str] | None] = {}
_ANSWERS: dict[tuple[int, tuple[str | None, ...], str], str] = {}
_MARKERS = re.compile(
    rb"setattr|__dict__|globals\(\)|vars\(|\bmodules\b|meta_path|path_hooks|"
    rb"path_importer_cache|sys\.path|addsitedir|__path__"
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _above(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _surely_run(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module body that its import may run on every path: all but those
    under an `if` (other than a constant true test), a `match` or an `except` handler, whose
    condition picks a path where they do not run. Loop bodies count (a loop over a literal)."""
    out: list[ast.stmt] = []
    for s in body:
        if isinstance(s, ast.Try):
            out += _surely_run(s.body) + _surely_run(s.orelse) + _surely_run(s.finalbody)
        elif isinstance(s, ast.With | ast.For | ast.While):
            out.append(s)
            out += _surely_run(s.body)
        elif isinstance(s, ast.If):
            if isinstance(s.test, ast.Constant) and s.test.value:
                out += _surely_run(s.body)
        elif not isinstance(s, (ast.Match, ast.ClassDef, *_DEFS)):
            out.append(s)
    return out


def _imports(s: ast.stmt, module: str, is_package: bool) -> list[str]:
    if isinstance(s, ast.Import):
        return [a.name for a in s.names]
    if not isinstance(s, ast.ImportFrom):
        return []
    base = s.module or ""
    if s.level:
        package = module.split(".")
        keep = len(package) - s.level + (1 if is_package else 0)
        if keep < 0:
            return []
        base = ".".join([*package[:keep], *([base] if base else [])])
    return [base, *(f"{base}.{a.name}" for a in s.names if a.name != "*")]


def _called(s: ast.stmt) -> set[str]:
    """Names of what a statement calls as it runs (not inside a lambda it defines)."""
    out: set[str] = set()
    stack: list[ast.AST] = [s]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.ClassDef, *_DEFS)):
            continue
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
        stack.extend(ast.iter_child_nodes(node))
    return out


def replaced_at_import(project: ProjectView | None, modules: list[str | None], name: str) -> str:
    """Why the import-time code of the modules imported whenever a call in the first of
    `modules` runs the def `name` of the second may already have replaced it ("" if none)."""
    if project is None:
        return "the modules imported before the call were not read"
    key = (id(project), tuple(modules), name)
    if key not in _ANSWERS:
        if len(_ANSWERS) > 4096:
            _ANSWERS.clear()
        _ANSWERS[key] = _replaced(project, modules, name)
    return _ANSWERS[key]


def _tree(project: ProjectView, module: str) -> tuple[ast.Module, str, str] | None:
    key = (id(project), module)
    if key in _TREES:
        project.entry(module)  # the module's SHA, recorded for the cached result that used it
        return _TREES[key]
    if len(_TREES) > 2048:
        _TREES.clear()
    _TREES[key] = project.module_tree(module)
    return _TREES[key]


def _replaced(project: ProjectView, modules: list[str | None], name: str) -> str:
    store = re.compile(rb"\.\s*" + re.escape(name.encode()) + rb"\s*(?::[^=\n]*)?=(?!=)")
    todo = [m for module in modules if module for m in _above(module)]
    seen: set[str] = set()
    run: list[tuple[str, str, ast.stmt]] = []  # (path, text, statement) its import surely runs
    defs: dict[str, list[tuple[ast.AST, str]]] = {}  # def name -> (def, its text)
    while todo:
        module = todo.pop()
        if module in seen or not project.is_module(module):
            continue
        seen.add(module)
        if len(seen) > _LIMIT:
            return f"more than {_LIMIT} modules are imported before the call"
        found = _tree(project, module)
        if found is None:
            if module in project.index.modules:
                return f"{module}, imported before the call, could not be read"
            continue  # a namespace package: no code of its own
        tree, text, path = found
        for node in ast.walk(tree):
            if isinstance(node, _DEFS):
                defs.setdefault(node.name, []).append(
                    (node, ast.get_source_segment(text, node) or "")
                )
        for s in _surely_run(tree.body):
            run.append((path, text, s))
            for imported in _imports(s, module, path.endswith("__init__.py")):
                todo += _above(imported)
    # Functions whose body may replace it, directly or through another of them (by name).
    marking = {
        n
        for n, bodies in defs.items()
        for _, t in bodies
        if _MARKERS.search(t.encode()) or store.search(t.encode())
    }
    grew = True
    while grew:
        grew = False
        for n, bodies in defs.items():
            if n not in marking and any(_called(d) & marking for d, _ in bodies):  # type: ignore[arg-type]
                marking.add(n)
                grew = True
    for path, text, s in run:
        source = (ast.get_source_segment(text, s) or "").encode()
        if isinstance(s, ast.With):
            source = b"".join((ast.get_source_segment(text, i) or "").encode() for i in s.items)
        elif isinstance(s, ast.For | ast.While):
            head = s.iter if isinstance(s, ast.For) else s.test
            source = (ast.get_source_segment(text, head) or "").encode()
        if isinstance(s, ast.Import | ast.ImportFrom):  # `from sys import modules` only
            source = b"" if getattr(s, "module", None) != "sys" else source
        hit = _MARKERS.search(source) or store.search(source)
        called = _called(s) & marking
        if hit or called:
            what = f"`{min(called)}(...)`" if called else f"`{hit.group().decode()}`"  # type: ignore[union-attr]
            return f"{path}:{s.lineno}, run by an import before the call, may replace it ({what})"
    return ""
