"""How the wheels' lookups by name choose the name: what a sound set of possible names would cover.

A lookup by a computed name (`getattr(o, name)`) may fetch any attribute, so one of them on a
value of unknown type keeps every class's private methods and state open (docs/whole-program.md).
This counts every `getattr`/`setattr`/`hasattr`/`delattr` call of the pinned wheels
(bench/corpus.py) by its name argument: a literal, a loop over a literal display, an f-string
with a literal head, a parameter, a loop over something else, an attribute, and so on.

    python bench/computed_names.py
"""

from __future__ import annotations

import ast
from collections import Counter

import corpus

_LOOKUPS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
_DISPLAYS = (ast.Tuple, ast.List, ast.Set)


def _function_facts(fn: ast.AST) -> tuple[set[str], dict[str, ast.expr], dict[str, ast.expr]]:
    """Parameters, loop targets (-> iterable) and single-name assignments (-> value) of `fn`."""
    params: set[str] = set()
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        a = fn.args
        params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    loops: dict[str, ast.expr] = {}
    assigns: dict[str, ast.expr] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
            loops[node.target.id] = node.iter
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigns[node.targets[0].id] = node.value
    return params, loops, assigns


def classify(arg: ast.expr, fn: ast.AST) -> str:
    """The kind of a lookup's name argument, inside function (or module) `fn`."""
    if isinstance(arg, ast.Constant):
        return "literal"
    if isinstance(arg, ast.JoinedStr):
        head = arg.values[0] if arg.values else None
        return "f-string, literal head" if isinstance(head, ast.Constant) else "f-string, no head"
    if isinstance(arg, ast.Attribute):
        return "attribute"
    if not isinstance(arg, ast.Name):
        return "other expression"
    params, loops, assigns = _function_facts(fn)
    if arg.id in loops:
        it = loops[arg.id]
        if isinstance(it, _DISPLAYS) and all(isinstance(e, ast.Constant) for e in it.elts):
            return "loop over a literal display"
        if isinstance(it, ast.Name) and isinstance(assigns.get(it.id), _DISPLAYS):
            return "loop over a named display"
        return "loop over something else"
    if arg.id in params:
        return "parameter"
    if arg.id in assigns:
        return "assigned name"
    return "other name"


def _lookups(tree: ast.Module) -> list[tuple[ast.Call, ast.AST]]:
    """Every lookup call with its innermost enclosing function (or the module)."""
    found: list[tuple[ast.Call, ast.AST]] = []
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while stack:
        node, scope = stack.pop()
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _LOOKUPS
            and len(node.args) >= 2
        ):
            found.append((node, scope))
        inner = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


def main() -> None:
    kinds: Counter[str] = Counter()
    for path in corpus.python_files(p.root for p in corpus.ensure_corpus()):
        text = path.read_text(errors="replace")
        if "attr(" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for call, scope in _lookups(tree):
            kinds[classify(call.args[1], scope)] += 1
    width = max(map(len, kinds))
    for kind, n in kinds.most_common():
        print(f"{kind:<{width}}  {n:>6,}")
    print(f"{'all':<{width}}  {sum(kinds.values()):>6,}")


if __name__ == "__main__":
    main()
