"""Inline suppressions (`# noqa: ZO001`, `# zeroopt: ignore[ZO001]`) and the unused ones.

Comments are found with `tokenize`, not a regex over lines, so a `# noqa` inside a string is
not a suppression. A suppression that no longer suppresses anything is reported (code ZO900,
like ruff's RUF100): stale suppressions hide the next real finding on that line.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zeroopt.scan.config import UNUSED_SUPPRESSION_CODE
from zeroopt.scan.findings import Finding

_NOQA = re.compile(
    r"#\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_ZEROOPT = re.compile(r"#\s*zeroopt:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


@dataclass(frozen=True)
class Suppression:
    line: int
    col: int  # 1-based column of the comment's '#'
    kind: str  # "noqa" | "zeroopt"
    codes: tuple[str, ...] | None  # None: every rule on the line
    text: str  # the directive as written

    def covers(self, rule: str) -> bool:
        return self.codes is None or rule in self.codes

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "col": self.col,
            "kind": self.kind,
            "codes": list(self.codes) if self.codes is not None else None,
            "text": self.text,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Suppression:
        codes = data["codes"]
        return cls(
            int(data["line"]),
            int(data["col"]),
            str(data["kind"]),
            tuple(codes) if codes is not None else None,
            str(data["text"]),
        )


@dataclass(frozen=True)
class UnusedSuppression:
    """A ZO900 entry: verdict-less, so not a Finding, and never changes the exit status."""

    path: str
    line: int
    col: int
    codes: tuple[str, ...]  # the unused codes; empty for an unused blanket `# zeroopt: ignore`
    text: str
    rule: str = UNUSED_SUPPRESSION_CODE

    @property
    def message(self) -> str:
        what = ", ".join(self.codes) if self.codes else "all rules"
        return f"unused suppression `{self.text}`: nothing to suppress for {what}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "rule": self.rule,
            "codes": list(self.codes),
            "text": self.text,
            "message": self.message,
        }


_ANY_DIRECTIVE = re.compile(rb"noqa|zeroopt:", re.IGNORECASE)
_OUR_CODE = re.compile(rb"zo[0-9]")


def _has_own_directive(data: bytes) -> bool:
    """A directive that could be reported unused: ours, or a noqa naming one of our codes.
    Plain substring searches first: a case-insensitive regex over every file is slow."""
    if b"zeroopt:" in data and _ZEROOPT.search(data.decode("latin-1")):
        return True
    lowered = data.lower()
    pos = lowered.find(b"noqa:")
    while pos >= 0:
        end = lowered.find(b"\n", pos)
        if _OUR_CODE.search(lowered, pos, end if end >= 0 else len(lowered)):
            return True
        pos = lowered.find(b"noqa:", pos + 5)
    return False


def needs_suppressions(data: bytes, findings: Sequence[Finding]) -> bool:
    """Whether `parse_suppressions` must run: tokenizing costs about as much as parsing, and
    most files with a `# noqa` (for other linters) have no finding on that line.

    True when the file holds a directive that could be reported unused, or any directive on a
    line spanned by a finding. A byte-level pre-test, so it may say True needlessly, never
    False wrongly.
    """
    if _has_own_directive(data):
        return True
    if not findings:
        return False
    if b"\r" in data.replace(b"\r\n", b""):
        return True  # old-Mac line ends: counting b"\n" would misplace lines
    spans = [(f.line, max(f.line, f.end_line)) for f in findings]
    line, pos = 1, 0
    for m in _ANY_DIRECTIVE.finditer(data):
        line += data.count(b"\n", pos, m.start())
        pos = m.start()
        if any(lo <= line <= hi for lo, hi in spans):
            return True
    return False


def parse_suppressions(data: bytes | str) -> list[Suppression]:
    """Every suppression directive in the file's comments, up to where tokenizing fails
    (the file analysis reports the syntax error itself)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    out: list[Suppression] = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(raw).readline):
            if tok.type != tokenize.COMMENT:
                continue
            line, col = tok.start[0], tok.start[1] + 1
            for m in _ZEROOPT.finditer(tok.string):
                body = m.group("codes")
                codes = None if body is None else tuple(_CODE.findall(body.upper()))
                out.append(Suppression(line, col, "zeroopt", codes, m.group(0)))
            m2 = _NOQA.search(tok.string)
            if m2:
                body = m2.group("codes")
                codes = None if body is None else tuple(_CODE.findall(body.upper()))
                out.append(Suppression(line, col, "noqa", codes, m2.group(0)))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        pass
    return out


def apply_suppressions(
    path: str,
    findings: Sequence[Finding],
    suppressions: Sequence[Suppression],
    enabled: Callable[[str], bool],
) -> tuple[list[Finding], list[UnusedSuppression]]:
    """Drop suppressed findings; a directive on any line of a call's span applies to it.

    Returns the kept findings and the unused suppressions. A blanket `# noqa` is never reported
    as unused (other linters own it); codes of other tools (E501) and codes of rules that are
    not enabled are not ours to judge either.
    """
    if not suppressions:
        return list(findings), []
    by_line: dict[int, list[Suppression]] = {}
    for s in suppressions:
        by_line.setdefault(s.line, []).append(s)
    used: dict[Suppression, set[str]] = {s: set() for s in suppressions}
    kept: list[Finding] = []
    for f in findings:
        hit = False
        for line in range(f.line, max(f.line, f.end_line) + 1):
            for s in by_line.get(line, ()):
                if s.covers(f.rule):
                    used[s].add(f.rule)
                    hit = True
        if not hit:
            kept.append(f)
    unused: list[UnusedSuppression] = []
    if enabled(UNUSED_SUPPRESSION_CODE):
        for s in suppressions:
            unused.extend(_unused(path, s, used[s], enabled))
    return kept, unused


def _unused(
    path: str, s: Suppression, used: set[str], enabled: Callable[[str], bool]
) -> Iterable[UnusedSuppression]:
    if s.codes is None:
        if s.kind == "zeroopt" and not used:
            yield UnusedSuppression(path, s.line, s.col, (), s.text)
        return
    stale = tuple(
        c
        for c in s.codes
        if c.startswith("ZO") and c != UNUSED_SUPPRESSION_CODE and c not in used and enabled(c)
    )
    if stale:
        yield UnusedSuppression(path, s.line, s.col, stale, s.text)


class UnusedSuppressionRule:
    """# ZO900 unused-suppression

    **What it does.** Reports a `# zeroopt: ignore[...]` or `# noqa: ZO...` comment that
    suppressed nothing in this scan.

    **Why.** A stale suppression silently hides the next real finding on that line, for
    example an `unsafe` `torch.empty` introduced later by an automated rewrite.

    **Example.**

    ```python
    x = torch.ones(4)  # noqa: ZO001   <- nothing to suppress: reported as ZO900
    ```

    **Fix.** Delete the comment, or the stale code from it. Blanket `# noqa` comments are never
    reported (other linters own them), nor are codes of other tools or of rules that are not
    enabled. ZO900 never changes the exit status; `--ignore ZO900` turns it off.
    """

    code = UNUSED_SUPPRESSION_CODE
    name = "unused-suppression"
    summary = "A suppression comment that suppressed nothing"
    examples: tuple[Any, ...] = ()
