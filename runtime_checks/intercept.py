"""Replace the allocation at one exact source position with poisoned memory, touching nothing else.

`torch.zeros`, `torch.zeros_like`, `Tensor.new_zeros` and the empties (`torch.empty`,
`empty_like`, `empty_strided`, `Tensor.new_empty`) are wrapped for the life of a trial process. The wrapper looks at its caller's frame: on Python 3.11+ `co_positions()` at
`f_lasti // 2` is the span of the executing CALL instruction, which is the whole call
expression, so (file, line, col) identifies one call even when a line holds several. Code
positions count columns in UTF-8 bytes from 0; scan findings count characters from 1, so the
byte offset is converted through the source line. Every other call passes straight through.
The result of a matched call is filled with the pattern right after allocation ("poison once
at allocation"): the memory then holds exactly what an uninitialised buffer might. An empty
site is zero-filled in the baseline (pattern None), so the baseline is what `torch.zeros` would
give and a trial shows what reading its unwritten memory does.

`on_hit(target, stats)` is called on every matched call, and `on_load(realpath)` once per target
file whose module code starts executing (seen through the `exec` audit event): a command-mode
trial reports both through files, since the processes it watches may end with `os._exit`.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from zeroopt.analysis.semantics import EMPTY_CALLS, ZEROS_CALLS
from zeroopt.runtime_checks.patterns import dtype_name, poison_, zero_
from zeroopt.runtime_checks.targets import PoisonSite
from zeroopt.scan.findings import char_col as contract_char_col


@dataclass(frozen=True)
class Target:
    """A site and the pattern to fill it with; pattern None only counts hits (the baseline)."""

    site: PoisonSite
    pattern: str | None = None


@dataclass
class SiteStats:
    hits: int = 0
    dtype: str | None = None
    shape: list[int] | None = None
    device: str | None = None
    calls: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": self.hits,
            "dtype": self.dtype,
            "shape": self.shape,
            "device": self.device,
            "calls": sorted(self.calls),
        }


def char_col(filename: str, line: int, byte_col: int) -> int:
    """1-based character column of a 0-based UTF-8 byte offset in `filename`'s line."""
    text = linecache.getline(filename, line)
    if not text:
        return byte_col + 1
    return contract_char_col(text, byte_col)


def call_position(frame: FrameType) -> tuple[int, int | None]:
    """(line, 1-based char col) of the call expression `frame` is executing."""
    code = frame.f_code
    pos = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None), None)
    line = pos[0] if pos is not None else None
    col = pos[2] if pos is not None else None
    if line is None:
        return frame.f_lineno, None
    if col is None:
        return line, None
    return line, char_col(code.co_filename, line, col)


class Interceptor:
    """Installs the wrappers; `stats` counts, per site key, how often each allocation ran."""

    CALLS = (*ZEROS_CALLS, *EMPTY_CALLS)

    def __init__(
        self,
        targets: Iterable[Target],
        on_hit: Callable[[Target, SiteStats], None] | None = None,
        on_load: Callable[[str], None] | None = None,
    ) -> None:
        self.targets = list(targets)
        self.on_hit = on_hit
        self.on_load = on_load
        self.loaded: set[str] = set()
        self.stats: dict[str, SiteStats] = {t.site.key: SiteStats() for t in self.targets}
        self._by_file: dict[str, list[Target]] = {}
        for t in self.targets:
            self._by_file.setdefault(t.site.realpath, []).append(t)
        self._realpaths: dict[str, str] = {}
        self._saved: list[tuple[Any, str, Any]] = []
        self._audit_added = False

    def _realpath(self, filename: str) -> str:
        real = self._realpaths.get(filename)
        if real is None:
            real = os.path.realpath(filename)
            self._realpaths[filename] = real
        return real

    def _match(self, frame: FrameType) -> list[Target]:
        candidates = self._by_file.get(self._realpath(frame.f_code.co_filename))
        if not candidates:
            return []
        line, col = call_position(frame)
        return [
            t
            for t in candidates
            if t.site.line == line and (t.site.col is None or t.site.col == col)
        ]

    def _wrap(self, original: Callable[..., Any], call: str) -> Callable[..., Any]:
        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            frame = sys._getframe(1)
            try:
                matched = self._match(frame)
            finally:
                del frame
            for target in matched:
                stats = self.stats[target.site.key]
                stats.hits += 1
                stats.calls.add(call)
                if stats.dtype is None:
                    stats.dtype = dtype_name(result.dtype)
                    stats.shape = list(result.shape)
                    stats.device = str(result.device)
                if target.pattern is not None:
                    poison_(result, target.pattern)
                elif call in EMPTY_CALLS:
                    zero_(result)  # the baseline of an empty site is what zeros would give
                if self.on_hit is not None:
                    self.on_hit(target, stats)
            return result

        return wrapper

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "exec" or not self._saved or not args:
            return
        filename = getattr(args[0], "co_filename", None)
        if not isinstance(filename, str):
            return
        self._note_loaded(filename)

    def _note_loaded(self, filename: str) -> None:
        real = self._realpath(filename)
        if real in self._by_file and real not in self.loaded:
            self.loaded.add(real)
            if self.on_load is not None:
                self.on_load(real)

    def install(self) -> None:
        import torch

        if not self._saved and self.on_load is not None:
            # Target files imported before the wrappers went in count as loaded too. (Only
            # on_load is told: without it, resolving every loaded module's path is wasted.)
            for module in list(sys.modules.values()):
                filename = getattr(module, "__file__", None)
                if isinstance(filename, str):
                    self._note_loaded(filename)
        for call in (*ZEROS_CALLS, *EMPTY_CALLS):
            owner_name, name = call.rsplit(".", 1)
            owner = torch.Tensor if owner_name == "Tensor" else torch
            original = getattr(owner, name)
            self._saved.append((owner, name, original))
            setattr(owner, name, self._wrap(original, call))
        if self.on_load is not None and not self._audit_added:
            # Audit hooks cannot be removed: _audit does nothing once uninstalled.
            sys.addaudithook(self._audit)
            self._audit_added = True

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()
