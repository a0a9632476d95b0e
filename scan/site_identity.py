"""What a report judged, in a form that survives edits: the call's text and its function's digest.

A position (path:line:col) alone is not an identity: after an edit that moves code, another
allocation can sit at the same place, and a stale report would then rewrite or poison the wrong
call. A report therefore records, per site, the exact source text of the call and a fingerprint of
the innermost function that holds it (the whole module for module-level code). Whoever reads a
report back (`apply --verified`, `verify --sites`) recomputes both from the file as it is now and
refuses, naming the site, an entry that no longer matches.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from zeroopt.analysis.resolve import child_nodes

FINGERPRINT_ALGORITHM = "sha256"


@dataclass(frozen=True)
class SiteIdentity:
    source: str  # the call expression exactly as written, e.g. "torch.zeros(n, dtype=torch.int32)"
    fingerprint: str  # "sha256:<16 hex>" of the source of the innermost enclosing def (or module)


def _segment(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    """Text between 1-based (line, col) and (end_line, end_col exclusive), columns in characters."""
    if not (1 <= line <= end_line <= len(lines)):
        return ""
    if line == end_line:
        return lines[line - 1][col - 1 : end_col - 1]
    parts = [lines[line - 1][col - 1 :]]
    parts.extend(lines[line : end_line - 1])
    parts.append(lines[end_line - 1][: end_col - 1])
    return "\n".join(parts)


def _digest(text: str) -> str:
    return f"{FINGERPRINT_ALGORITHM}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _def_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """First and last line of a def, its decorators included."""
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return start, node.end_lineno or node.lineno


def _enclosing_def_span(tree: ast.AST, line: int) -> tuple[int, int] | None:
    """The lines of the innermost def whose span includes `line`, or None at module level."""
    best: tuple[int, int] | None = None
    # A def is a statement, so only statement lists hold one: walking them finds every def
    # `ast.walk` would (no two defs holding the line start on one line, so order is free).
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start, end = _def_span(node)
            if start <= line <= end and (best is None or start >= best[0]):
                best = (start, end)
        for f in _STATEMENT_LISTS:
            v = getattr(node, f, None)
            if type(v) is list:
                stack.extend(v)
    return best


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def site_identity(
    text: str,
    line: int,
    col: int,
    end_line: int,
    end_col: int,
    tree: ast.AST | None = None,
    lines: list[str] | None = None,
) -> SiteIdentity:
    """The identity of the call spanning (line, col)-(end_line, end_col) in module `text`.

    `tree` may be passed when the caller already parsed `text`, and `lines` when it already split
    it (`text.splitlines()`); a text that does not parse gets the whole-module fingerprint.
    """
    if lines is None:
        lines = text.splitlines()
    source = _segment(lines, line, col, end_line, end_col)
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return SiteIdentity(source, _digest(text))
    span = _enclosing_def_span(tree, line)
    if span is None:
        return SiteIdentity(source, _digest(text))
    start, end = span
    return SiteIdentity(source, _digest("\n".join(lines[start - 1 : end])))


Def = ast.FunctionDef | ast.AsyncFunctionDef
Span = tuple[int, int, int, int]  # line, col, end_line, end_col of a call


def outer_defs(tree: ast.AST) -> list[Def]:
    """The defs not nested in another def (methods included), without walking their bodies."""
    out: list[Def] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append(node)
        else:
            stack.extend(child_nodes(node))
    return out


def identity_in(
    text: str, defs: list[Def], span: Span, lines: list[str] | None = None
) -> SiteIdentity:
    """`site_identity` of `span` in the module whose `outer_defs` are `defs`: the outermost def
    holding the line holds every def that may be the innermost one, so the fingerprint is the
    one computed on the whole module, without walking the whole module once per site."""
    line = span[0]
    holder = next((d for d in defs if _def_span(d)[0] <= line <= _def_span(d)[1]), None)
    tree = holder if holder is not None else ast.Module(body=[], type_ignores=[])
    return site_identity(text, *span, tree=tree, lines=lines)


def identities(
    data: bytes, spans: Iterable[Span], tree: ast.AST | None = None
) -> dict[Span, tuple[str, str]]:
    """(source, fingerprint) of each span in the module `data` (UTF-8), {} when it does not
    decode or parse. `tree`: the module parsed from `data` already (not parsed again), which
    must not have been changed since."""
    spans = list(spans)
    if not spans:
        return {}
    try:
        text = data.decode("utf-8")
        if tree is None:
            tree = ast.parse(data)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return {}
    defs = outer_defs(tree)
    lines = text.splitlines()
    out = {}
    for span in spans:
        ident = identity_in(text, defs, span, lines)
        out[span] = (ident.source, ident.fingerprint)
    return out


def stale_reason(
    text: str,
    line: int,
    col: int,
    end_line: int,
    end_col: int,
    source: str | None,
    fingerprint: str | None,
) -> str | None:
    """Why a recorded site no longer describes the file `text`, or None when it still does.

    Entries written before reports carried identities (no `source`) cannot be checked: the
    caller decides whether to refuse them.
    """
    now = site_identity(text, line, col, end_line, end_col)
    if source is not None and now.source != source:
        found = now.source.splitlines()[0] if now.source else "nothing"
        return f"the report judged `{source}` here, the file now has `{found}`"
    if fingerprint is not None and now.fingerprint != fingerprint:
        return "the function holding this call changed since the report was made"
    return None
