"""The data that flows one way through zeroopt: rules produce these, everything else consumes them.

Plain frozen dataclasses so they pickle across worker processes, hash into caches and serialise
to the JSON contract of docs/contracts.md without a schema library.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from zeroopt.analysis import semantics


class Verdict(StrEnum):
    SAFE = "safe"  # proven: every element written before any element is read, on every path
    UNSAFE = "unsafe"  # a read of unwritten memory is possible, with the read as evidence
    UNPROVEN = "unproven"  # neither; a candidate for runtime verification


@dataclass(frozen=True)
class Evidence:
    """One line that decided a verdict, so a reviewer can check the reasoning in seconds."""

    line: int
    kind: (
        str  # "alloc", "write", "partial-write", "read", "possible-read", "escape", "contract", ...
    )
    text: str  # what happened there, in words and source

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "text": self.text}  # asdict, but faster


@dataclass(frozen=True)
class Edit:
    """Another span a fix rewrites: the import statement that gains the empty function.
    Positions as a finding's: 1-based line, 1-based character column, end exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int
    replacement: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Fix:
    """What `zeroopt apply` writes for the finding, exactly (patcher/codemod.py computes it):
    the new text of the whole call expression span, and any other span the rewrite changes."""

    replacement: str
    edits: tuple[Edit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"replacement": self.replacement}
        if self.edits:  # additive: only a fix that also extends an import carries it
            data["edits"] = [e.to_json() for e in self.edits]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fix:
        edits = tuple(Edit(**e) for e in data.get("edits", ()))
        return cls(str(data["replacement"]), edits)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters, at the first character of the call expression
    end_line: int
    end_col: int  # 1-based, exclusive: the column just after the last character of the call
    call: str  # "torch.zeros" | "torch.zeros_like" | "Tensor.new_zeros" | "torch.empty" | ...
    target: str  # the buffer as written in source, e.g. "self.meta['page_table']"
    verdict: Verdict
    rule: str  # rule code, e.g. "ZO001"
    message: str
    evidence: tuple[Evidence, ...] = ()
    fix: Fix | None = None
    # Not part of the JSON contract: where the allocation runs and how big it is, for ranking
    # findings by what a rewrite saves (a per-step memset before an init-time one).
    function: str = ""
    hot: bool = False  # in a function that runs per step (forward, decode, replay, ...)
    nbytes: int | None = None  # when the shape and dtype are constant expressions
    # The text of the finding's own line and of the lines its evidence cites, as analysed, so
    # that what reads a finding (renderers, next steps) never reads the file again.
    source_lines: tuple[tuple[int, str], ...] = ()

    def explained(self, prefix: str, notes: Iterable[Evidence] = ()) -> Finding:
        """This finding as a pass beyond one function decided it: `prefix` (the model or rule
        that decided) before the message, and `notes` (its assumptions) among the evidence, by
        line."""
        evidence = tuple(sorted((*self.evidence, *notes), key=lambda e: e.line))
        return replace(self, message=f"{prefix}: {self.message}", evidence=evidence)

    def source_line(self, line: int) -> str:
        """The source text of `line` if the finding carries it ('' otherwise)."""
        return next((text for n, text in self.source_lines if n == line), "")

    @property
    def actionable(self) -> bool:
        """Something a user should act on: a rewrite to make, or an empty that is not proven
        written before it is read (`unsafe`; `unproven` ones exist only where every empty is
        judged, `scan --since`, and there they must prove themselves or be verified)."""
        if self.verdict is Verdict.SAFE and self.fix is not None:
            return True
        return self.verdict is not Verdict.SAFE and self.call in EMPTY_CALLS

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "call": self.call,
            "target": self.target,
            "verdict": str(self.verdict),
            "rule": self.rule,
            "message": self.message,
            "evidence": [e.to_json() for e in self.evidence],
            "fix": self.fix.to_json() if self.fix else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        fix = data.get("fix")
        return cls(
            path=data["path"],
            line=int(data["line"]),
            col=int(data["col"]),
            end_line=int(data["end_line"]),
            end_col=int(data["end_col"]),
            call=data["call"],
            target=data.get("target", ""),
            verdict=Verdict(data["verdict"]),
            rule=data["rule"],
            message=data.get("message", ""),
            evidence=tuple(Evidence(**e) for e in data.get("evidence", ())),
            fix=Fix.from_json(fix) if fix else None,
        )


@dataclass(frozen=True)
class FileError:
    """A file that could not be analysed; never a crash of the whole scan."""

    path: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FileResult:
    """What analysing one file produced. `source_hash` lets apply refuse a file that changed since."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    source_hash: str = ""
    lifecycles: list[LifecycleReport] = field(default_factory=list)
    # What each finding judged, by its span (line, col, end_line, end_col): the call's source text
    # and its function's fingerprint (scan/site_identity.py), computed from the analysed bytes.
    identities: dict[tuple[int, int, int, int], tuple[str, str]] = field(default_factory=dict)
    # What the result depends on besides the file's bytes: the modules of the scanned tree that
    # names were resolved through (module -> SHA-256 of the bytes read), the file's own module
    # name, and module-existence checks (analysis/project.py). The cache checks them before reuse.
    deps: dict[str, str] = field(default_factory=dict)


# The allocation calls live with the rest of the torch semantics (analysis/semantics).
ZEROS_CALLS = semantics.ZEROS_CALLS
EMPTY_CALLS = semantics.EMPTY_CALLS
# The rewrite each zero-filling call gets, and the name it is spelled with in source.
EMPTY_OF = dict(zip(ZEROS_CALLS, EMPTY_CALLS[:3], strict=True))
EMPTY_NAME = {call: empty.rsplit(".", 1)[1] for call, empty in EMPTY_OF.items()}


def char_col(line_text: str, byte_col: int) -> int:
    """The contract's 1-based character column of a 0-based UTF-8 byte offset (what `ast` nodes
    and code-object positions give) in `line_text`."""
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace")) + 1


@dataclass(frozen=True)
class LifecycleBuffer:
    """One row of a class's lifecycle table: where a buffer is written and read, phase by phase."""

    target: str
    line: int
    verdict: Verdict
    written: tuple[str, ...]  # phases ("replay: init_forward_metadata_replay_cuda_graph", ...)
    read: tuple[str, ...]
    coupled: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        return data


@dataclass(frozen=True)
class LifecycleReport:
    """A class analysed across its methods under a lifecycle model: buffers followed across methods."""

    path: str
    class_name: str
    line: int
    model: str
    buffers: tuple[LifecycleBuffer, ...]
    # Buffers whose reads depend on each other's values (a kernel reads `page_table` rows up to
    # `cache_seqlens`): each group by its members' (target, line); to be verified together.
    coupled_groups: tuple[tuple[tuple[str, int], ...], ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LifecycleReport:
        buffers = tuple(
            LifecycleBuffer(
                target=b["target"],
                line=int(b["line"]),
                verdict=Verdict(b["verdict"]),
                written=tuple(b["written"]),
                read=tuple(b["read"]),
                coupled=tuple(b.get("coupled", ())),
            )
            for b in data["buffers"]
        )
        groups = tuple(
            tuple((m["target"], int(m["line"])) for m in group)
            for group in data.get("coupled_groups", ())
        )
        return cls(data["path"], data["class"], int(data["line"]), data["model"], buffers, groups)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "class": self.class_name,
            "line": self.line,
            "model": self.model,
            "buffers": [b.to_json() for b in self.buffers],
            "coupled_groups": [
                [{"target": target, "line": line} for target, line in group]
                for group in self.coupled_groups
            ],
        }
