"""Analyse one file: parse with the stdlib `ast`, find allocations, run the rules. (placeholder)"""

from __future__ import annotations

import hashlib
from pathlib import Path

from zeroopt.findings import FileError, FileResult
from zeroopt.rules.options import AnalysisOptions


def analyse_source(
    source: str | bytes, path: str, options: AnalysisOptions | None = None
) -> FileResult:
    data = source.encode("utf-8") if isinstance(source, str) else source
    return FileResult(path=path, source_hash=hashlib.sha256(data).hexdigest())


def analyse_file(
    file: Path, display_path: str, options: AnalysisOptions | None = None
) -> FileResult:
    try:
        data = file.read_bytes()
    except OSError as exc:
        return FileResult(path=display_path, errors=[FileError(display_path, str(exc))])
    return analyse_source(data, display_path, options)
