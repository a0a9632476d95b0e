"""Code that surely runs before a call: the import-time code of the modules any caller has
imported by then (summaries.py `possible_callee` asks).

`possible_callee` lets an `unsafe` rest on the path where nothing replaces a def other code may
replace. That path exists only if the replacing code may not have run yet. Whenever a call in
module C of a def of module D runs, C and D have been imported, and with them every package
above them and every module their top-level code imports unconditionally (transitively): that
code ran. A package `__init__` that does `helpers.add_into = _fill`, or puts another module in
`sys.modules` under D's name, or calls a function that does, replaces the def before any call: no
path runs it.

Read for the statements a module's import may run on every path (its top-level statements, the
bodies of top-level `try`, `with` and loops, class bodies, the decorators, defaults and bases of
def and class statements; not under an `if` or a handler, whose condition picks a path where they
do not run) and the defs they call, transitively: each replacing operation (import_ops.py) with
what its target and name may be, so a store into a module outside the tree, or of another name,
leaves the path. A call is followed to its def where the module's bindings make it certain, to
the methods of a class and its subclasses for `self.m()`, to any def of the name otherwise; one
into a library is not followed. A closure too large to read (more than `_LIMIT` modules) takes
the path away.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from zeroopt.analysis.import_ops import ModuleOps, Op, harmful
from zeroopt.analysis.resolve import child_nodes, walk_all

if TYPE_CHECKING:
    from zeroopt.analysis.project import ProjectView

_LIMIT = 100
# Memo answers keep the dependencies their computation recorded (module SHAs, `?name` lookups):
# a hit records them again for the file asking, as a miss would, so the per-file cache sees the
# same deps whichever files the worker analysed before.
_ANSWERS: dict[tuple[int, tuple[str | None, ...], str, bool], tuple[str, dict[str, str]]] = {}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@lru_cache(maxsize=8192)
def _above(module: str) -> tuple[str, ...]:
    """The module and each package above it, outermost first: a pure function of the name,
    asked once per import of every module of every closure."""
    parts = module.split(".")
    return tuple(".".join(parts[: i + 1]) for i in range(len(parts)))


def _surely_run(body: list[ast.stmt]) -> list[tuple[int, list[ast.AST]]]:
    """(line, the code that runs) for the statements of a module or class body that its import
    may run on every path: all but those under an `if` (other than a constant true test), a
    `match` or an `except` handler, whose condition picks a path where they do not run. Loop
    bodies count (a loop over a literal). Of a def: its decorators and defaults; of a class: its
    decorators, bases and keywords, and its body's statements."""
    out: list[tuple[int, list[ast.AST]]] = []
    for s in body:
        if isinstance(s, ast.Try):
            out += _surely_run(s.body) + _surely_run(s.orelse) + _surely_run(s.finalbody)
        elif isinstance(s, ast.With):
            out.append((s.lineno, [*s.items]))
            out += _surely_run(s.body)
        elif isinstance(s, ast.For):
            out.append((s.lineno, [s.iter, s.target]))
            out += _surely_run(s.body)
        elif isinstance(s, ast.While):
            out.append((s.lineno, [s.test]))
            out += _surely_run(s.body)
        elif isinstance(s, ast.If):
            if isinstance(s.test, ast.Constant) and s.test.value:
                out += _surely_run(s.body)
        elif isinstance(s, ast.ClassDef):
            out.append((s.lineno, [*s.decorator_list, *s.bases, *s.keywords]))
            out += _surely_run(s.body)
        elif isinstance(s, _DEFS):
            defaults = [d for d in (*s.args.defaults, *s.args.kw_defaults) if d is not None]
            out.append((s.lineno, [*s.decorator_list, *defaults]))
        elif not isinstance(s, ast.Match):
            out.append((s.lineno, [s]))
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


def replaced_at_import(
    project: ProjectView | None, modules: list[str | None], name: str, through: bool = True
) -> str:
    """Why the import-time code of the modules imported whenever a call in the first of
    `modules` runs the def `name` of the second may already have replaced it ("" if none)."""
    if project is None:
        return "the modules imported before the call were not read"
    key = (id(project), tuple(modules), name, through)
    return _memoised(
        _ANSWERS, 4096, key, project, lambda: _replaced(project, modules, name, through)
    )


_T = TypeVar("_T")
_K = TypeVar("_K")


def _memoised(
    table: dict[_K, tuple[_T, dict[str, str]]],
    limit: int,
    key: _K,
    project: ProjectView,
    compute: Callable[[], _T],
) -> _T:
    """`compute()`, kept in `table` (emptied past `limit` entries) with the dependencies it
    recorded, which a hit records again for the file asking."""
    hit = table.get(key)
    if hit is None:
        if len(table) > limit:
            table.clear()
        hit = project.recording(compute)
        table[key] = hit
    else:
        project.deps.update(hit[1])
    return hit[0]


@dataclass(frozen=True)
class _Facts:
    """What one module contributes, read once per project view: its defs (name, the replacing
    operations their bodies hold, the names they call; a class stands for its `__init__`,
    `__new__` and `__post_init__`) and the statements its import surely runs (line, operations,
    the names it calls), with the modules those import and the entries read to tell targets."""

    module: str
    path: str
    defs: tuple[tuple[str, str, tuple[Op, ...], frozenset[str]], ...]
    classes: tuple[tuple[str, str, frozenset[str]], ...]  # key, name, names of its bases
    run: tuple[tuple[int, tuple[Op, ...], frozenset[str]], ...]


# Per project view and module: the modules its surely-run statements import (None: not
# readable), with the deps reading them recorded. The closure is walked on these alone: most
# closures of a large tree pass `_LIMIT`, and their modules' facts are then never needed.
_IMPORTS: dict[tuple[int, str], tuple[tuple[str, ...] | None, dict[str, str]]] = {}
# Per project view and module: its facts (None: not readable), built from a second parse, with
# the deps reading them recorded.
_FACTS: dict[tuple[int, str], tuple[_Facts | None, dict[str, str]]] = {}
# Per project view and the modules a call imports: (every module imported, in the order the
# walk meets them; why not all could be read, or "").
_CLOSURES: dict[
    tuple[int, tuple[str | None, ...]], tuple[tuple[tuple[str, ...], str], dict[str, str]]
] = {}
# What making a class or an instance of it runs of its own methods (and of its bases', through
# their classes' entries).
_CONSTRUCTION = (
    "__init__",
    "__new__",
    "__post_init__",
    "__init_subclass__",
    "__set_name__",
    "__prepare__",
)


def _facts(project: ProjectView, module: str) -> _Facts | None:
    key = (id(project), module)
    return _memoised(_FACTS, 4096, key, project, lambda: _read(project, module))


def _read(project: ProjectView, module: str) -> _Facts | None:
    found = project.module_tree(module)
    if found is None:
        return None
    tree, text, path = found
    is_package = path.endswith("__init__.py")
    reader = ModuleOps(project, module, is_package, tree, text)
    defs: list[tuple[str, str, tuple[Op, ...], frozenset[str]]] = []
    classes: list[tuple[str, str, frozenset[str]]] = []
    todo: list[tuple[ast.AST, str]] = [(tree, "")]
    while todo:
        holder, prefix = todo.pop()
        for node in child_nodes(holder):
            if isinstance(node, _DEFS):
                key = f"{module}:{prefix}{node.name}"
                ops = reader.ops(list(node.body), nested=True)
                defs.append((key, node.name, ops, reader.calls(list(node.body), node, (), True)))
                todo.append((node, f"{prefix}{node.name}.<locals>."))
            elif isinstance(node, ast.ClassDef):
                bases = frozenset(
                    b.id if isinstance(b, ast.Name) else b.attr
                    for b in node.bases
                    if isinstance(b, ast.Name | ast.Attribute)
                )
                classes.append((f"{module}:{prefix}{node.name}", node.name, bases))
                made = [s for s in node.body if isinstance(s, _DEFS) and s.name in _CONSTRUCTION]
                body: list[ast.AST] = []
                calls: set[str] = set()
                for m in made:
                    body += m.body
                    calls |= reader.calls(list(m.body), m, (), True)
                # Its bases' and metaclass's entries: what they run when it is made, or made
                # an instance of without a method of its own.
                given: list[ast.AST] = [*node.bases, *(k.value for k in node.keywords)]
                calls |= reader.calls(given, None, given)
                key = f"{module}:{prefix}{node.name}"
                defs.append((key, node.name, reader.ops(body, nested=True), frozenset(calls)))
                todo.append((node, f"{prefix}{node.name}."))
            elif not isinstance(node, ast.Lambda):
                todo.append((node, prefix))
    # Called where they stand: decorators (on what they decorate), a class statement's bases
    # and metaclass (their `__init_subclass__`, `__new__`, ...).
    applied = [
        d
        for node in walk_all(tree)
        if isinstance(node, (*_DEFS, ast.ClassDef))
        for d in (
            *node.decorator_list,
            *getattr(node, "bases", ()),
            *(k.value for k in getattr(node, "keywords", ())),
        )
    ]
    run = tuple(
        (line, reader.ops(roots), reader.calls(roots, None, applied))
        for line, roots in _surely_run(tree.body)
    )
    return _Facts(module, path, tuple(defs), tuple(classes), run)


def _imported(project: ProjectView, module: str) -> tuple[str, ...] | None:
    key = (id(project), module)
    return _memoised(_IMPORTS, 8192, key, project, lambda: _read_imports(project, module))


def _read_imports(project: ProjectView, module: str) -> tuple[str, ...] | None:
    # Listed when the entry was loaded, from the tree its SHA was taken of; parsed again only
    # where the entry was not made from a tree (a module that binds names dynamically).
    out = project.run_imports(module)
    if out is None:
        found = project.module_tree(module)
        if found is not None:
            tree, _, path = found
            out = run_imports(tree, module, path.endswith("__init__.py"))
    return out


def run_imports(tree: ast.Module, module: str, is_package: bool) -> tuple[str, ...]:
    """The modules the statements a module's import surely runs import, in order."""
    return tuple(
        m
        for _, roots in _surely_run(tree.body)
        for r in roots
        if isinstance(r, ast.Import | ast.ImportFrom)
        for m in _imports(r, module, is_package)
    )


def _closure(project: ProjectView, modules: list[str | None]) -> tuple[tuple[str, ...], str]:
    """Every module imported whenever the call runs (the modules, the packages above them, and
    what their surely-run statements import, transitively)."""
    key = (id(project), tuple(modules))
    return _memoised(_CLOSURES, 1024, key, project, lambda: _walk_closure(project, modules))


def _walk_closure(project: ProjectView, modules: list[str | None]) -> tuple[tuple[str, ...], str]:
    todo = [m for module in modules if module for m in _above(module)]
    seen: set[str] = set()
    # Names that are no module of the tree: `is_module` recorded its deps the first time, and
    # asking again records the same (thousands of imports name `torch` and its packages).
    rejected: set[str] = set()
    out: list[str] = []
    why = ""
    while todo:
        module = todo.pop()
        if module in seen or module in rejected:
            continue
        if not project.is_module(module):
            rejected.add(module)
            continue
        seen.add(module)
        if len(seen) > _LIMIT:
            why = f"more than {_LIMIT} modules are imported before the call"
            break
        read = _imported(project, module)
        if read is None:
            if module in project.index.modules:
                why = f"{module}, imported before the call, could not be read"
                break
            continue  # a namespace package: no code of its own
        out.append(module)
        for imported in read:
            todo += _above(imported)
    return tuple(out), why


def _what(op: Op) -> str:
    kind = op[2]
    if kind == "import":
        return "a change of the import system"
    if kind == "keys":
        return "a store into `sys.modules`"
    store = "a store of an attribute whose name is not known" if op[1] is None else "a store"
    if kind == "any":
        return f"{store} into an object of unknown origin"
    return f"{store} into module `{kind[4:]}`"


def _methods(closure: tuple[_Facts, ...]) -> dict[str, frozenset[str]]:
    """For each `@M:C|m` some code of the closure calls (a method of an instance of C, or of C):
    the keys of `m` in C and in every class of the closure that may derive from it (its bases
    read by name), or `~m` (any def named `m`) where C does not define `m` (it may inherit it)."""
    defined = {key for facts in closure for key, _, _, _ in facts.defs}
    children: dict[str, set[str]] = {}
    for facts in closure:
        for key, _, bases in facts.classes:
            for b in bases:
                children.setdefault(b, set()).add(key)
    out: dict[str, frozenset[str]] = {}
    for facts in closure:
        every = [*(calls for _, _, _, calls in facts.defs), *(calls for _, _, calls in facts.run)]
        for c in (c for calls in every for c in calls if c[:1] == "@"):
            if c in out:
                continue
            cls, _, m = c[1:].partition("|")
            if f"{cls}.{m}" not in defined:
                out[c] = frozenset({f"~{m}"})
                continue
            family, todo = {cls}, [cls]
            while todo:
                for sub in children.get(todo.pop().rpartition(".")[2].rpartition(":")[2], ()):
                    if sub not in family:
                        family.add(sub)
                        todo.append(sub)
            out[c] = frozenset(f"{k}.{m}" for k in family if f"{k}.{m}" in defined)
    return out


def _reaches(
    calls: frozenset[str],
    marked: dict[str, str],
    names: dict[str, str],
    methods: dict[str, frozenset[str]],
) -> str:
    """The key of a marked def among `calls` (`~f`: any marked def named `f`), or ""."""
    for c in sorted(calls):
        if c in marked:
            return c
        if c[:1] == "~" and c[1:] in names:
            return names[c[1:]]
        if c[:1] == "@":
            for k in sorted(methods.get(c, {f"~{c.rpartition('|')[2]}"})):
                if k in marked:
                    return k
                if k[:1] == "~" and k[1:] in names:
                    return names[k[1:]]
    return ""


def _replaced(project: ProjectView, modules: list[str | None], name: str, through: bool) -> str:
    names_in, why = _closure(project, modules)
    if why:
        return why
    read = [_facts(project, m) for m in names_in]
    if any(f is None for f in read):
        return "a module imported before the call could not be read"
    closure = tuple(f for f in read if f is not None)
    target = modules[1] or ""
    # Defs whose body may replace it, directly or through a def they call (by key, or by name
    # where the callee is not certain): key -> where, and short name -> a marked key.
    marked: dict[str, str] = {}
    names: dict[str, str] = {}
    for facts in closure:
        for key, short, ops, _ in facts.defs:
            hit = next((op for op in ops if harmful(op, target, name, through)), None)
            if hit is not None:
                marked[key] = f"{facts.path}:{hit[0]}: {_what(hit)}"
                names.setdefault(short, key)
    methods = _methods(closure) if marked else {}
    grew = bool(marked)
    while grew:
        grew = False
        for facts in closure:
            for key, short, _, calls in facts.defs:
                if key not in marked:
                    via = _reaches(calls, marked, names, methods)
                    if via:
                        marked[key] = marked[via]
                        names.setdefault(short, key)
                        grew = True
    for facts in closure:
        for line, ops, calls in facts.run:
            hit = next((op for op in ops if harmful(op, target, name, through)), None)
            via = _reaches(calls, marked, names, methods) if marked else ""
            if hit is not None or via:
                what = f"`{via.partition(':')[2]}(...)`, {marked[via]}" if via else ""
                what = what or (_what(hit) if hit is not None else "")
                return f"{facts.path}:{line}, run by an import before the call, may replace it ({what})"
    return ""
