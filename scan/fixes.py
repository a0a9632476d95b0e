"""The fix a `safe` finding carries: what `zeroopt apply` writes for it, exactly.

The codemod (patcher/codemod.py) is the only writer of files, and the definition of every fix:
libcst parses the file, resolves the call's name through the file's scopes, renames it. Its parse
of a large file costs seconds, though, and the common case needs none of it: a call spelled
`<name>.zeros(...)` / `<name>.zeros_like(...)` / `<expr>.new_zeros(...)`, where `<name>` is bound
in the module's scope only by `import torch [as <name>]` (or `import torch.<sub>`) and by nothing
in the scopes around the call. There the codemod's result
is known from the `ast` alone: it renames the attribute in place (the last characters of the
attribute's span) and the new call text is the old one with that rename, no import changes. This
module computes exactly that, and hands every other file (a plain-name call, an import edit, a
call nested in another's arguments, CR line endings, a binding it does not model) to the codemod
as before. tests/test_fast_fixes.py checks the two agree byte for byte on every case we have.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Sequence

from zeroopt.analysis.resolve import child_nodes, walk_all
from zeroopt.scan.findings import EMPTY_NAME, Fix, char_col

# Attribute spelled in source -> the call it is (`Tensor.new_zeros` on any receiver).
_ATTR_CALL = {call.rsplit(".", 1)[1]: call for call in EMPTY_NAME}

Site = tuple[int, int, str, int, int]  # line, col (characters, 1-based), call, end_line, end_col


def textual_fixes(
    tree: ast.Module, text: str, lines: Sequence[str], sites: Iterable[Site]
) -> dict[Site, Fix] | None:
    """The codemod's fix of every site, computed from the tree; None when any site of the file
    is not one whose rewrite this models exactly (the caller then asks the codemod). `lines` is
    `text` split at line breaks."""
    if "\r" in text or "\f" in text:
        return None  # line breaks and columns libcst may count otherwise
    sites = list(sites)
    calls: dict[Site, ast.Call] = {}
    in_fstrings: set[int] = set()
    for node in walk_all(tree):
        if isinstance(node, ast.JoinedStr):
            # Positions inside an f-string are the parser's least reliable.
            in_fstrings.update(id(n) for n in walk_all(node))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _ATTR_CALL
            and node.end_lineno is not None
            and node.end_col_offset is not None
        ):
            key = (
                node.lineno,
                _col(lines, node.lineno, node.col_offset),
                _ATTR_CALL[node.func.attr],
                node.end_lineno,
                _col(lines, node.end_lineno, node.end_col_offset),
            )
            if key in calls:
                return None  # two calls at one span: let the codemod tell them apart
            calls[key] = node
    chosen = []
    for site in sites:
        call = calls.get(site)
        if call is None or id(call) in in_fstrings or not _plain_receiver(call, lines):
            return None
        chosen.append((site, call))
    receivers = {
        c.func.value.id
        for _, c in chosen
        if isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and _ATTR_CALL[c.func.attr] != "Tensor.new_zeros"
    }
    torch_calls = [c for _, c in chosen if _ATTR_CALL[_attr(c)] != "Tensor.new_zeros"]
    if receivers and not _only_torch_imports(tree, receivers, torch_calls):
        return None
    spans = sorted((s[0], s[1], s[3], s[4]) for s, _ in chosen)
    for (_, _, end, end_col), (line, col, _, _) in itertools.pairwise(spans):
        if (line, col) < (end, end_col):
            return None  # one call inside another's span: the codemod rewrites both at once
    return {site: Fix(_renamed(call, lines, site)) for site, call in chosen}


def _attr(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _col(lines: Sequence[str], line: int, byte_col: int) -> int:
    return char_col(lines[line - 1] if 0 < line <= len(lines) else "", byte_col)


def _plain_receiver(call: ast.Call, lines: Sequence[str]) -> bool:
    """The call starts with its receiver (no parenthesis around the function or the receiver,
    where the codemod's and ast's positions of the call could differ), and for torch functions
    the receiver is a plain name."""
    func = call.func
    assert isinstance(func, ast.Attribute)
    value = func.value
    if (value.lineno, value.col_offset) != (call.lineno, call.col_offset):
        return False
    line = lines[call.lineno - 1] if call.lineno <= len(lines) else ""
    start = _col(lines, call.lineno, call.col_offset) - 1
    if line[start : start + 1] == "(":
        return False
    return _ATTR_CALL[func.attr] == "Tensor.new_zeros" or isinstance(value, ast.Name)


def _only_torch_imports(tree: ast.Module, names: set[str], calls: list[ast.Call]) -> bool:
    """Each of `names` is bound in the module's own scope only by `import torch [as name]` or
    `import torch.<sub>` statements, and no scope around any of `calls` (def, lambda, class,
    comprehension) binds it in any other way; nothing declares it global or nonlocal and no star
    import exists. Then libcst's qualified name of `name.zeros` at each call is `torch.zeros`,
    as the codemod requires (libcst takes `import torch.nn` to bind `torch` to torch)."""
    accepted: set[int] = set()
    bound = set()
    for node in _module_scope_imports(tree):
        for alias in node.names:
            name = alias.asname or alias.name.split(".", 1)[0]
            if name in names:
                plain = alias.name == "torch" or (
                    alias.asname is None and alias.name.startswith("torch.")
                )
                if isinstance(node, ast.ImportFrom) or not plain:
                    return False
                accepted.add(id(node))
                bound.add(name)
    if bound != names:
        return False
    wanted = {id(c) for c in calls}
    tainted: set[int] = set()  # scopes that bind one of the names (and the scopes around them)
    around: list[tuple[int, ...]] = []  # the scopes around each call
    stack: list[tuple[ast.AST, tuple[int, ...]]] = [(tree, ())]
    while stack:
        item, scopes = stack.pop()
        if _binds_other(item, names, accepted):
            if not scopes or isinstance(item, ast.Global | ast.Nonlocal | ast.ImportFrom):
                return False
            tainted.update(scopes)
        if id(item) in wanted:
            around.append(scopes)
        inner = (*scopes, id(item)) if isinstance(item, _SCOPES) else scopes
        stack.extend((child, inner) for child in child_nodes(item))
    return not any(tainted.intersection(scopes) for scopes in around)


_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip


def _binds_other(node: ast.AST, names: set[str], accepted: set[int]) -> bool:
    """Whether `node` binds (or deletes, or declares global) one of `names` other than by an
    accepted import, or is a star import (which libcst does not see through)."""
    if isinstance(node, ast.Name):
        return node.id in names and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.arg):
        return node.arg in names
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name in names
    if isinstance(node, ast.ImportFrom):
        return any(a.name == "*" or (a.asname or a.name) in names for a in node.names)
    if isinstance(node, ast.Import):
        return id(node) not in accepted and any(
            (a.asname or a.name.split(".", 1)[0]) in names for a in node.names
        )
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return node.name in names
    if isinstance(node, ast.MatchMapping):
        return node.rest in names
    if isinstance(node, ast.Global | ast.Nonlocal):
        return bool(names.intersection(node.names))
    return False


def _module_scope_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements that run in the module's scope (under `if`/`try`/`with` too)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.stmt) and not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ):
            stack.extend(
                n
                for n in child_nodes(node)
                if isinstance(n, ast.stmt | ast.excepthandler | ast.match_case)
            )
        elif isinstance(node, ast.ExceptHandler | ast.match_case):
            stack.extend(node.body)
    return found


def _renamed(call: ast.Call, lines: Sequence[str], site: Site) -> str:
    """The call's text with its attribute renamed to the empty function, as libcst writes it:
    the attribute is the last token of the function's span."""
    func = call.func
    assert isinstance(func, ast.Attribute) and func.end_lineno is not None
    assert func.end_col_offset is not None
    line, col, call_name, end_line, end_col = site
    new_attr = EMPTY_NAME[call_name]
    at = func.end_lineno
    attr_end = _col(lines, at, func.end_col_offset) - 1
    attr_start = attr_end - len(func.attr)
    text = list(lines[line - 1 : end_line])
    row = text[at - line]
    assert row[attr_start:attr_end] == func.attr
    text[at - line] = row[:attr_start] + new_attr + row[attr_end:]
    if line == end_line:
        shift = len(new_attr) - len(func.attr)
        return text[0][col - 1 : end_col - 1 + shift]
    text[0] = text[0][col - 1 :]
    last = text[-1]
    shift = len(new_attr) - len(func.attr) if at == end_line else 0
    text[-1] = last[: end_col - 1 + shift]
    return "\n".join(text)
