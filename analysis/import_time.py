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
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView

_LIMIT = 100
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


@dataclass(frozen=True)
class _Facts:
    """What one module contributes, read once per project view: its defs (name, source, the
    names their bodies call) and the statements its import surely runs (line, the text that
    decides, the names it calls), with the modules those import."""

    module: str
    path: str
    defs: tuple[tuple[str, bytes, frozenset[str]], ...]
    run: tuple[tuple[int, bytes, frozenset[str]], ...]
    imports: tuple[str, ...]


# Per project view and module: its facts (None: not readable), built from one parse.
_FACTS: dict[tuple[int, str], _Facts | None] = {}
# Per project view and the modules a call imports: (the facts of every module imported, in the
# order the walk meets them; why not all could be read, or "").
_CLOSURES: dict[tuple[int, tuple[str | None, ...]], tuple[tuple[_Facts, ...], str]] = {}


def _segment(starts: list[int], text: bytes, node: ast.AST) -> bytes:
    """The source bytes of `node` (as ast.get_source_segment, from line offsets made once)."""
    line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
    end_line = getattr(node, "end_lineno", None)
    end_col = getattr(node, "end_col_offset", None)
    if line is None or col is None or end_line is None or end_col is None:
        return b""
    return text[starts[line - 1] + col : starts[end_line - 1] + end_col]


def _facts(project: ProjectView, module: str) -> _Facts | None:
    key = (id(project), module)
    if key in _FACTS:
        project.entry(module)  # the module's SHA, recorded for the cached result that used it
        return _FACTS[key]
    if len(_FACTS) > 2048:
        _FACTS.clear()
    found = project.module_tree(module)
    facts = None
    if found is not None:
        tree, text, path = found
        data = text.encode()
        starts = [0]
        for line in data.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        defs = tuple(
            (
                node.name,
                _segment(starts, data, node),
                frozenset(n for s in node.body for n in _called(s)),
            )
            for node in ast.walk(tree)
            if isinstance(node, _DEFS)
        )
        run: list[tuple[int, bytes, frozenset[str]]] = []
        imports: list[str] = []
        for s in _surely_run(tree.body):
            if isinstance(s, ast.With):
                source = b"".join(_segment(starts, data, i.context_expr) for i in s.items)
            elif isinstance(s, ast.For | ast.While):
                source = _segment(starts, data, s.iter if isinstance(s, ast.For) else s.test)
            elif isinstance(s, ast.Import | ast.ImportFrom):  # `from sys import modules` only
                source = _segment(starts, data, s) if getattr(s, "module", None) == "sys" else b""
            else:
                source = _segment(starts, data, s)
            run.append((s.lineno, source, frozenset(_called(s))))
            imports += _imports(s, module, path.endswith("__init__.py"))
        facts = _Facts(module, path, defs, tuple(run), tuple(imports))
    _FACTS[key] = facts
    return facts


def _closure(project: ProjectView, modules: list[str | None]) -> tuple[tuple[_Facts, ...], str]:
    """The facts of every module imported whenever the call runs (the modules, the packages
    above them, and what their surely-run statements import, transitively)."""
    key = (id(project), tuple(modules))
    hit = _CLOSURES.get(key)
    if hit is not None:
        for facts in hit[0]:
            project.entry(facts.module)
        return hit
    todo = [m for module in modules if module for m in _above(module)]
    seen: set[str] = set()
    out: list[_Facts] = []
    why = ""
    while todo:
        module = todo.pop()
        if module in seen or not project.is_module(module):
            continue
        seen.add(module)
        if len(seen) > _LIMIT:
            why = f"more than {_LIMIT} modules are imported before the call"
            break
        read = _facts(project, module)
        if read is None:
            if module in project.index.modules:
                why = f"{module}, imported before the call, could not be read"
                break
            continue  # a namespace package: no code of its own
        out.append(read)
        for imported in read.imports:
            todo += _above(imported)
    if len(_CLOSURES) > 1024:
        _CLOSURES.clear()
    _CLOSURES[key] = (tuple(out), why)
    return _CLOSURES[key]


def _replaced(project: ProjectView, modules: list[str | None], name: str) -> str:
    closure, why = _closure(project, modules)
    if why:
        return why
    store = re.compile(rb"\.\s*" + re.escape(name.encode()) + rb"\s*(?::[^=\n]*)?=(?!=)")
    # Functions whose body may replace it, directly or through another of them (by name).
    marking = {
        n
        for facts in closure
        for n, text, _ in facts.defs
        if _MARKERS.search(text) or store.search(text)
    }
    grew = True
    while grew:
        grew = False
        for facts in closure:
            for n, _, called in facts.defs:
                if n not in marking and called & marking:
                    marking.add(n)
                    grew = True
    for facts in closure:
        for line, source, called in facts.run:
            hit = _MARKERS.search(source) or store.search(source)
            calls = called & marking
            if hit or calls:
                what = f"`{min(calls)}(...)`" if calls else f"`{hit.group().decode()}`"  # type: ignore[union-attr]
                return f"{facts.path}:{line}, run by an import before the call, may replace it ({what})"
    return ""
