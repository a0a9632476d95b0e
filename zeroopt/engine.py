"""Analyse one file: decode, parse with the stdlib `ast`, find allocations, run the rules.

The fast path matters (a large tree is mostly files without a candidate): a byte prefilter skips
parsing, and only functions that hold an allocation get a CFG. Nothing raised while analysing one
file escapes: it becomes a `FileError` for that file, and the scan goes on.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from pathlib import Path

from zeroopt.findings import FileError, FileResult, Finding, Fix
from zeroopt.rules import ALL_RULES
from zeroopt.rules.buffer_flow import Context, analyse_buffer
from zeroopt.rules.cfg import CFG, Builder
from zeroopt.rules.options import AnalysisOptions, Contract
from zeroopt.rules.resolve import Resolver
from zeroopt.rules.sites import Owner, Site, find_sites
from zeroopt.rules.torch_api import BUILTIN_CONTRACTS
from zeroopt.rules.verdict import explain

_PREFILTER = (b"zeros", b"empty")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_REPLACE = {"zeros_like": "empty_like", "new_zeros": "new_empty", "zeros": "empty"}


def source_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode_source(data: bytes) -> str:
    """Decode as Python does: BOM, then a PEP 263 coding cookie, then UTF-8."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def analyse_source(
    source: str | bytes, path: str, options: AnalysisOptions | None = None
) -> FileResult:
    data = source.encode("utf-8") if isinstance(source, str) else source
    result = FileResult(path=path, source_hash=source_hash(data))
    if not any(word in data for word in _PREFILTER):
        return result
    try:
        text = decode_source(data) if isinstance(source, bytes) else source
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        result.errors.append(FileError(path, f"syntax error: {exc.msg}{where}"))
        return result
    except (UnicodeDecodeError, LookupError) as exc:
        result.errors.append(FileError(path, f"cannot decode the file: {exc}"))
        return result
    except ValueError as exc:  # null bytes
        result.errors.append(FileError(path, f"cannot parse the file: {exc}"))
        return result
    except (RecursionError, MemoryError):
        result.errors.append(FileError(path, "the file is nested too deeply to parse"))
        return result
    try:
        result.findings = _analyse_tree(tree, text, path, options or AnalysisOptions())
    except RecursionError:
        result.errors.append(FileError(path, "the file is nested too deeply to analyse"))
    except Exception as exc:  # an analysis bug must never take the whole scan down
        result.errors.append(FileError(path, f"internal error: {type(exc).__name__}: {exc}"))
    return result


def analyse_file(
    file: Path, display_path: str, options: AnalysisOptions | None = None
) -> FileResult:
    try:
        data = file.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return FileResult(
            path=display_path, errors=[FileError(display_path, f"cannot read: {reason}")]
        )
    return analyse_source(data, display_path, options)


def _analyse_tree(
    tree: ast.Module, text: str, path: str, options: AnalysisOptions
) -> list[Finding]:
    resolver = Resolver.build(tree)
    sites = find_sites(tree, resolver)
    if not sites:
        return []
    lines = _NEWLINE.split(text)
    contracts = {c.function: c for c in (*BUILTIN_CONTRACTS, *options.contracts)}
    cfgs: dict[int, CFG] = {}
    findings: list[Finding] = []
    for site in sites:
        rules = [r for r in ALL_RULES if site.name in r.calls]
        if not rules:
            continue
        outcome_cfg = cfgs.get(id(site.owner))
        if outcome_cfg is None and not isinstance(site.owner, ast.Lambda):
            scope = site.scope
            outcome_cfg = Builder(lambda e, s=scope: resolver.qualified(s, e)).build(
                site.owner.body
            )
            cfgs[id(site.owner)] = outcome_cfg
        if outcome_cfg is None:
            continue  # allocations inside a lambda: returned at once, nothing to prove
        ctx = Context(
            alloc=site.call,
            resolver=resolver,
            scope=site.scope,
            contracts=contracts,
            source_lines=lines,
            escape_on_bind=_escape_on_bind(site),
            contiguous=site.name != "torch.zeros_like"
            and not any(k.arg == "memory_format" for k in site.call.keywords),
            capture_nodes=frozenset(outcome_cfg.capture_nodes),
        )
        outcome = analyse_buffer(outcome_cfg, ctx)
        for rule in rules:
            verdict = rule.report(site.name, outcome)
            if verdict is not None:
                findings.append(
                    _finding(site, rule.code, rule.fixable, verdict, outcome, lines, path)
                )
    findings.sort(key=lambda f: (f.line, f.col, f.rule))
    return findings


def _escape_on_bind(site: Site) -> frozenset[str]:
    scope = site.scope
    if isinstance(site.owner, ast.Module | ast.ClassDef):
        return frozenset(scope.bindings)  # module globals and class attributes are shared
    return frozenset(scope.captured | scope.global_names | scope.nonlocal_names)


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; the contract counts characters, 1-based."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace")) + 1


def _finding(site, code, fixable, verdict, outcome, lines, path) -> Finding:  # type: ignore[no-untyped-def]
    call = site.call
    line, end_line = call.lineno, call.end_lineno or call.lineno
    col = _char_col(lines, line, call.col_offset)
    end_col = _char_col(lines, end_line, call.end_col_offset or 0)
    call_text = _segment(lines, line, col, end_line, end_col)
    target = _target_text(site, lines) or " ".join(call_text.split())[:80]
    alloc_text = lines[line - 1].strip()[:120] if line <= len(lines) else ""
    message, evidence = explain(verdict, outcome, line, alloc_text, target)
    fix = None
    if fixable and verdict.value == "safe":
        fix = Fix(_replacement(site, lines, line, col, call_text))
    return Finding(
        path=path, line=line, col=col, end_line=end_line, end_col=end_col, call=site.name,
        target=target, verdict=verdict, rule=code, message=message, evidence=evidence, fix=fix,
        function=_owner_name(site.owner),
    )  # fmt: skip


def _segment(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    if line == end_line:
        return lines[line - 1][col - 1 : end_col - 1]
    parts = [
        lines[line - 1][col - 1 :],
        *lines[line : end_line - 1],
        lines[end_line - 1][: end_col - 1],
    ]
    return "\n".join(parts)


def _target_text(site: Site, lines: list[str]) -> str:
    t = site.target
    if t is None or t.end_lineno is None or t.end_col_offset is None:
        return ""
    col = _char_col(lines, t.lineno, t.col_offset)
    end_col = _char_col(lines, t.end_lineno, t.end_col_offset)
    return _segment(lines, t.lineno, col, t.end_lineno, end_col)


def _replacement(site: Site, lines: list[str], line: int, col: int, call_text: str) -> str:
    """The call with its function renamed, every other character kept."""
    func = site.call.func
    assert func.end_lineno is not None and func.end_col_offset is not None
    func_end = _char_col(lines, func.end_lineno, func.end_col_offset)
    func_text = _segment(lines, line, col, func.end_lineno, func_end)
    rest = call_text[len(func_text) :]
    if isinstance(func, ast.Attribute):
        new_func = func_text[: len(func_text) - len(func.attr)] + _REPLACE[func.attr]
    else:
        new_func = "empty_like" if site.name == "torch.zeros_like" else "empty"
    return new_func + rest


def _owner_name(owner: Owner) -> str:
    return getattr(owner, "name", "<module>")


__all__ = ["Contract", "analyse_file", "analyse_source", "decode_source", "source_hash"]
