"""The rewrite itself: a pure libcst tree-to-tree function over a set of source positions.

Positions come from the stdlib-`ast` analysis (1-based line, 1-based column in characters at the
first character of the call). libcst's `PositionProvider` reports a `Call` at the same place (it
excludes the call's own parentheses, counts code points, and a tab as one column), so a site is
matched by the start of the call and, when known, its end: two calls can start at the same place
(`torch.zeros(3).new_zeros(4)`).

Every site gets an explicit result, like libcst's codemod package does per file: `Success` (with
the new call text), `Skip` (the node there is not the call the finding describes, or the rewrite
cannot be spelled soundly), `Failure` (the source cannot be parsed). Nothing is rewritten on a
guess: a name must resolve, through the file's imports, to the torch function it is said to be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    Assignment,
    ClassScope,
    CodeRange,
    FunctionScope,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    Scope,
    ScopeProvider,
)

from zeroopt.scan.findings import EMPTY_NAME, ZEROS_CALLS, Edit

# Attribute spelled in source -> the call it is, for attribute calls (`th.zeros`, `x.new_zeros`).
_ATTR_CALL = {call.rsplit(".", 1)[1]: call for call in ZEROS_CALLS}
# The torch function a plain-name call must resolve to, and what replaces it.
_EMPTY_ATTR = EMPTY_NAME
_NEWLINE = re.compile(r"\r\n|\r|\n")  # what libcst counts as a line break


@dataclass(frozen=True)
class RewriteSite:
    """Where to rewrite: 1-based line and character column of the call; end is exclusive."""

    line: int
    col: int
    call: str  # one of ZEROS_CALLS
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


@dataclass(frozen=True)
class Success:
    site: RewriteSite
    replacement: str  # the new text of the call expression
    # Other spans the rewrite needs: the import statement that gains the empty function's name.
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Skip:
    site: RewriteSite
    reason: str


@dataclass(frozen=True)
class Failure:
    site: RewriteSite
    error: str


RewriteResult = Success | Skip | Failure


@dataclass
class _Plan:
    """What to do to one call, and the import aliases that make its new name exist."""

    func: cst.BaseExpression  # replacement for Call.func (built from the updated node later)
    attr: str | None = None  # rename the attribute in place (keeps parentheses and spacing)
    name: str | None = None  # rename the plain name in place


@dataclass
class _Analysis:
    plans: dict[cst.Call, _Plan] = field(default_factory=dict)
    imports: dict[cst.ImportFrom, list[tuple[str, str | None]]] = field(default_factory=dict)
    results: dict[RewriteSite, RewriteResult] = field(default_factory=dict)


class _Collector(cst.CSTVisitor):
    """Index calls by start position and every plain name the module uses (for clash checks)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[tuple[int, int], list[tuple[cst.Call, CodeRange]]] = {}
        self.names: set[str] = set()
        self.star_import = False
        # Imports that are statements of the module itself: they run, unconditionally, before
        # anything in the module can be called (one under `if` or `try` may not have run).
        self.top_imports: set[int] = set()

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                self.top_imports.update(
                    id(small)
                    for small in stmt.body
                    if isinstance(small, cst.Import | cst.ImportFrom)
                )

    def visit_Call(self, node: cst.Call) -> None:
        rng = self.get_metadata(PositionProvider, node)
        self.calls.setdefault((rng.start.line, rng.start.column), []).append((node, rng))

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # `x.empty` does not bind or read the name `empty`; only the receiver matters.
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # the keyword of `f(empty=1)` is not a name in scope
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star_import = True  # may bind any public name, `empty` included


def _call_kind(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return _ATTR_CALL.get(func.attr.value)
    if isinstance(func, cst.Name):
        return "name"
    return None


class _Planner:
    def __init__(self, wrapper: MetadataWrapper, collector: _Collector) -> None:
        self.positions = wrapper.resolve(PositionProvider)
        self.scopes = wrapper.resolve(ScopeProvider)
        self.collector = collector
        self.taken = set(collector.names)
        self.analysis = _Analysis()
        # Aliases planned per import statement, so two sites share one added `empty`.
        self.added: dict[tuple[cst.ImportFrom, str], str] = {}
        self.site_calls: dict[RewriteSite, cst.Call] = {}
        # The import statement whose added alias a site's new name is.
        self.site_imports: dict[RewriteSite, cst.ImportFrom] = {}
        self.import_assignments = _all_import_assignments(self.scopes)

    def _qualnames(self, node: cst.CSTNode) -> set[str]:
        """What libcst's QualifiedNameProvider gives `node` (it asks the node's scope), asked
        only for the calls rewritten: the provider's own pass visits every node of the file."""
        scope = self.scopes.get(node)
        return {q.name for q in scope.get_qualified_names_for(node)} if scope else set()

    def _start_line(self, node: cst.CSTNode) -> int:
        rng = self.positions.get(node)
        return rng.start.line if rng else 1 << 30

    def plan(self, site: RewriteSite) -> RewriteResult:
        if site.call not in ZEROS_CALLS:
            return Skip(site, f"{site.call} is not a zero-filling call this tool rewrites")
        candidates = self.collector.calls.get((site.line, site.col - 1), [])
        if not candidates:
            return Skip(site, f"no call starts at {site} (file changed since the analysis?)")
        if site.end_line is not None and site.end_col is not None:
            candidates = [
                (c, r)
                for c, r in candidates
                if (r.end.line, r.end.column + 1) == (site.end_line, site.end_col)
            ]
            if not candidates:
                return Skip(site, f"no call spans {site}-{site.end_line}:{site.end_col}")
        kinds = [(c, _call_kind(c)) for c, _ in candidates]
        matching = [(c, k) for c, k in kinds if k in (site.call, "name")]
        if len(matching) != 1:
            found = ", ".join(cst.Module([]).code_for_node(c.func) for c, _ in kinds)
            if not matching:
                return Skip(site, f"the call at {site} is `{found}`, not {site.call}")
            return Skip(site, f"several calls start at {site}; cannot tell which is meant")
        call, kind = matching[0]
        if call in self.analysis.plans:
            return Skip(site, f"the call at {site} is already planned by another finding")
        result = self._plan_attr(site, call) if kind != "name" else self._plan_name(site, call)
        return result

    def _plan_attr(self, site: RewriteSite, call: cst.Call) -> RewriteResult:
        func = call.func
        assert isinstance(func, cst.Attribute)
        new_attr = _EMPTY_ATTR[site.call]
        if site.call != "Tensor.new_zeros":
            # `X.zeros` must be torch's: then `X` is the torch module and `X.empty` is torch's too.
            names = self._qualnames(func)
            if names != {site.call}:
                shown = ", ".join(sorted(names)) or "nothing"
                return Skip(site, f"`{_code(func)}` resolves to {shown}, not only {site.call}")
        new_func = func.with_changes(attr=func.attr.with_changes(value=new_attr))
        self.analysis.plans[call] = _Plan(func=new_func, attr=new_attr)
        return self._success(site, call)

    def _plan_name(self, site: RewriteSite, call: cst.Call) -> RewriteResult:
        func = call.func
        assert isinstance(func, cst.Name)
        if self._qualnames(func) != {site.call}:
            shown = ", ".join(sorted(self._qualnames(func))) or "nothing"
            return Skip(site, f"`{func.value}` resolves to {shown}, not only {site.call}")
        scope = self.scopes.get(call)
        if scope is None:
            return Skip(site, "no scope information for the call")
        empty = f"torch.{_EMPTY_ATTR[site.call]}"
        line = self._start_line(call)
        # Preference: an existing import of the empty function; adding `empty` next to a
        # function's own `from torch import zeros`; the file's own `import torch`; adding
        # `empty as _torch_empty` to the `zeros` import. A module-level import never gains a
        # public name: `from mod import *` elsewhere would import it over the importer's own.
        new_name = self._existing_binding(scope, empty, line) or self._via_zeros_import(
            site, scope, func, plain=True
        )
        module = None if new_name else self._existing_binding(scope, "torch", line)
        if module is not None:
            new_func: cst.BaseExpression = cst.Attribute(
                value=cst.Name(module),
                attr=cst.Name(_EMPTY_ATTR[site.call]),
                lpar=func.lpar,
                rpar=func.rpar,
            )
            self.analysis.plans[call] = _Plan(func=new_func)
            return self._success(site, call)
        new_name = new_name or self._via_zeros_import(site, scope, func, plain=False)
        if new_name is not None:
            new_func = func.with_changes(value=new_name)
            self.analysis.plans[call] = _Plan(func=new_func, name=new_name)
            return self._success(site, call)
        return Skip(site, f"cannot spell {empty} here without guessing: no import to extend")

    def _success(self, site: RewriteSite, call: cst.Call) -> Success:
        self.site_calls[site] = call
        return Success(site, "")  # the replacement text is filled in after the rewrite

    def _existing_binding(self, scope: Scope, qualname: str, before_line: int) -> str | None:
        """A name that, at `scope`, can only be an import of `qualname` made before the call."""
        candidates = {
            _bound_name(alias)
            for assignment in self.import_assignments
            if isinstance(assignment.node, cst.Import | cst.ImportFrom)
            and not isinstance(assignment.node.names, cst.ImportStar)
            for alias in assignment.node.names
            if _binds(assignment.node, _bound_name(alias), qualname)
        }
        for name in sorted(candidates):
            assignments = scope[name]
            if assignments and all(
                isinstance(a, ImportAssignment)
                and _binds(a.node, name, qualname)
                and id(a.node) in self.collector.top_imports
                and self._start_line(a.node) < before_line
                for a in assignments
            ):
                return name
        return None

    def _via_zeros_import(
        self, site: RewriteSite, scope: Scope, func: cst.Name, *, plain: bool
    ) -> str | None:
        """Add the empty function to the very `from torch import zeros` the call uses.

        The same statement binds it under the same conditions (same scope, same branch), so the
        new name exists wherever the old one did. The name must be unused in the whole module.
        """
        referents = [a for access in scope.accesses[func] for a in access.referents]
        statements = {id(a.node): a.node for a in referents if isinstance(a, ImportAssignment)}
        if (
            len(referents) == 0
            or len(statements) != 1
            or len(referents) != len([a for a in referents if isinstance(a, ImportAssignment)])
        ):
            return None
        statement = next(iter(statements.values()))
        if not isinstance(statement, cst.ImportFrom):
            return None
        if isinstance(self.scopes.get(statement), ClassScope):
            return None  # a name added there is a class attribute: it may hide an inherited one
        if plain and not isinstance(self.scopes.get(statement), FunctionScope):
            return None  # a public module attribute: what `from mod import *` exports changes
        imported = _EMPTY_ATTR[site.call]
        key = (statement, imported)
        if key in self.added:
            self.site_imports[site] = statement
            return self.added[key]
        choices = _name_choices(imported, self.collector.star_import)
        for name in choices[:1] if plain else choices[1:]:
            if name and name not in self.taken:
                self.taken.add(name)
                self.added[key] = name
                asname = None if name == imported else name
                self.analysis.imports.setdefault(statement, []).append((imported, asname))
                self.site_imports[site] = statement
                return name
        return None


def _name_choices(plain: str, star_import: bool) -> list[str]:
    """The plain name first (unusable next to a star import, which may bind any public name),
    then underscore aliases, which a star import never binds."""
    first = "" if star_import else plain
    return [first, f"_torch_{plain}", *(f"_torch_{plain}_{i}" for i in range(1, 10))]


def _all_import_assignments(scopes: Mapping[cst.CSTNode, Scope | None]) -> list[Assignment]:
    seen: dict[int, Assignment] = {}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        for assignment in scope.assignments:
            if isinstance(assignment, ImportAssignment):
                seen[id(assignment)] = assignment
    return list(seen.values())


def _dotted(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _module_name(node: cst.Import | cst.ImportFrom) -> str:
    if isinstance(node, cst.Import):
        return ""
    if node.relative or node.module is None:
        return "."  # relative imports never name torch
    return _dotted(node.module)


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name).split(".", 1)[0]


def _binds(node: cst.CSTNode, name: str, qualname: str) -> bool:
    """Whether import statement `node` binds `name` to exactly `qualname`."""
    if not isinstance(node, cst.Import | cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
        return False
    module = _module_name(node)
    for alias in node.names:
        full = _dotted(alias.name)
        real = f"{module}.{full}" if module else full
        if _bound_name(alias) != name:
            continue
        # Only an exact `import torch [as t]` or `from torch import empty [as e]` counts
        # (`import torch.nn` binds `torch` too, but spelled like that it is not worth the risk).
        return real == qualname
    return False


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class _Rewriter(cst.CSTTransformer):
    def __init__(self, analysis: _Analysis) -> None:
        super().__init__()
        self.analysis = analysis
        self.rewritten: dict[cst.Call, cst.Call] = {}
        self.imports: dict[cst.ImportFrom, cst.ImportFrom] = {}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        plan = self.analysis.plans.get(original_node)
        if plan is None:
            return updated_node
        new = self._rewrite(plan, updated_node)
        self.rewritten[original_node] = new
        return new

    def _rewrite(self, plan: _Plan, updated_node: cst.Call) -> cst.Call:
        func = updated_node.func
        # Rename in the updated node so edits inside the arguments (nested sites) survive.
        if plan.attr is not None and isinstance(func, cst.Attribute):
            return updated_node.with_changes(
                func=func.with_changes(attr=func.attr.with_changes(value=plan.attr))
            )
        if plan.name is not None and isinstance(func, cst.Name):
            return updated_node.with_changes(func=func.with_changes(value=plan.name))
        return updated_node.with_changes(func=plan.func)

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom:
        additions = self.analysis.imports.get(original_node)
        if not additions or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        names = list(updated_node.names)
        last = names[-1]
        # The new aliases go last and take over the last alias's comma (trailing comma or none);
        # the old last alias gets the separator the others use, so layout and style carry over.
        separator = next(
            (a.comma for a in names[:-1] if isinstance(a.comma, cst.Comma)),
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        if isinstance(last.comma, cst.Comma) and len(names) == 1:
            separator = last.comma
            after, lpar = last.comma.whitespace_after, updated_node.lpar
            if isinstance(after, cst.ParenthesizedWhitespace) and lpar is not None:
                opening = lpar.whitespace_after
                if isinstance(opening, cst.ParenthesizedWhitespace):
                    # One alias per line: indent the new one like the first (after the `(`).
                    separator = last.comma.with_changes(
                        whitespace_after=after.with_changes(
                            indent=opening.indent, last_line=opening.last_line
                        )
                    )
        trailing = last.comma
        names[-1] = last.with_changes(comma=separator)
        for i, (name, asname) in enumerate(additions):
            alias = cst.ImportAlias(
                name=cst.Name(name),
                asname=cst.AsName(name=cst.Name(asname)) if asname else None,
                comma=trailing if i == len(additions) - 1 else separator,
            )
            names.append(alias)
        new = updated_node.with_changes(names=names)
        self.imports[original_node] = new
        return new


def rewrite_module(
    module: cst.Module, sites: Sequence[RewriteSite]
) -> tuple[cst.Module, list[RewriteResult]]:
    """Rewrite the zero-filling calls at `sites`; one result per site, in the order given."""
    new_module, results, _ = _rewrite_module(module, sites, parsed=False)
    return new_module, results


def _rewrite_module(
    module: cst.Module, sites: Sequence[RewriteSite], *, parsed: bool
) -> tuple[cst.Module, list[RewriteResult], str | None]:
    """`rewrite_module`, plus the new module's code when anything was rewritten. `parsed`: the
    module comes straight from the parser, so no node appears twice in it and libcst's metadata
    needs no copy of it (the copy is libcst's guard against trees built by hand)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=parsed)
    collector = _Collector()
    wrapper.visit(collector)
    planner = _Planner(wrapper, collector)
    results: list[RewriteResult] = []
    for site in sites:
        try:
            result = planner.plan(site)
        except Exception as exc:  # a libcst corner we did not foresee: skip, never half-apply
            result = Failure(site, f"{type(exc).__name__}: {exc}")
        results.append(result)
    if not planner.analysis.plans:
        return module, results, None
    rewriter = _Rewriter(planner.analysis)
    new_module = wrapper.visit(rewriter)
    # Report each call's final text as the new module spells it (nested rewrites inside its
    # arguments included; `code_for_node` alone would drop the indentation of continuation
    # lines), and the import statement it extends, as an edit of the original span.
    written = _Written(new_module)
    final: list[RewriteResult] = []
    for result in results:
        if isinstance(result, Success):
            call = rewriter.rewritten[planner.site_calls[result.site]]
            edits: tuple[Edit, ...] = ()
            statement = planner.site_imports.get(result.site)
            if statement is not None:
                rng = planner.positions[statement]
                new = written.text(rewriter.imports[statement])
                start, end = rng.start, rng.end
                edits = (Edit(start.line, start.column + 1, end.line, end.column + 1, new),)
            result = Success(result.site, written.text(call), edits)
        final.append(result)
    return new_module, final, written.code


class _Written:
    """The text a node of the rewritten module has in that module's code."""

    def __init__(self, module: cst.Module) -> None:
        self.code = module.code
        self.positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(self.code)]

    def text(self, node: cst.CSTNode) -> str:
        rng = self.positions[node]  # an import's range ends before its `;`
        start = self.starts[rng.start.line - 1] + rng.start.column
        return self.code[start : self.starts[rng.end.line - 1] + rng.end.column]


def rewrite_source(
    source: bytes, sites: Sequence[RewriteSite]
) -> tuple[bytes, list[RewriteResult]]:
    """Parse bytes (libcst honours the encoding cookie and BOM), rewrite, encode back the same way.

    Returns the input object unchanged when nothing was rewritten, so callers can skip the write.
    """
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError) as exc:
        message = f"cannot parse: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
        return source, [Failure(site, message) for site in sites]
    new_module, results, new_code = _rewrite_module(module, sites, parsed=True)
    if new_module is module or new_code is None or not any(isinstance(r, Success) for r in results):
        return source, results
    # libcst must reproduce the untouched file exactly, or its output may lose bytes elsewhere.
    # The one divergence seen (CR-only line endings lose the final CR) is a dropped suffix,
    # restored here; any other means the file is not rewritten.
    roundtrip = module.bytes
    new_bytes = new_code.encode(new_module.encoding)  # what `new_module.bytes` would generate
    if roundtrip == source:
        return new_bytes, results
    if source.startswith(roundtrip):
        return new_bytes + source[len(roundtrip) :], results
    message = "libcst does not reproduce this file byte for byte; not rewritten"
    return source, [Failure(r.site, message) if isinstance(r, Success) else r for r in results]


__all__ = [
    "Failure",
    "RewriteResult",
    "RewriteSite",
    "Skip",
    "Success",
    "rewrite_module",
    "rewrite_source",
]
