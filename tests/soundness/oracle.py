"""The execution oracle: is a zeros allocation observably needed, on the inputs we try?

For each zero-allocation site (found with `ast`, positions as in the scan contract: 1-based line,
1-based character column of the call's first character), a variant of the source wraps exactly
that call in `_zo_poison(<call>, "<pattern>")`, which overwrites the fresh buffer with a poison
pattern (same shape, dtype and strides, since it fills the zeros result itself). Running the
variant and the untouched program on the same inputs and comparing the results bitwise (NaN equal
to NaN at the same place) says whether the zeros mattered. A difference, or an exception that the
zeros version does not raise, makes the site *unsafe by execution*. The converse does not hold:
equivalence on a few inputs is evidence, not proof, so the oracle can only ever catch a wrong
`safe`, never confirm one.

Programs run in-process (exec in a fresh namespace per run): CPU, tiny shapes and bounded loops
keep each run well under a millisecond; a wall-clock alarm guards against a poisoned value that
turns into a loop bound.
"""

from __future__ import annotations

import ast
import math
import signal
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from zeroopt.scan.findings import ZEROS_CALLS, Finding, Verdict

from .gen_model import INPUTS, make_inp

# Patterns per dtype family, as runtime verification uses them (docs/contracts.md): NaN, a large finite value, -1, 1 for floats;
# the dtype's max, 2**30, -1, 1 for integers; True for bool.
PATTERNS = ("nan|max", "large", "minus-one", "one")
RUN_TIMEOUT_S = 2.0


def poison_value(dtype: torch.dtype, pattern: str) -> float | int | bool:
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point or dtype.is_complex:
        return {"nan|max": math.nan, "large": 1e30, "minus-one": -1.0, "one": 1.0}[pattern]
    info = torch.iinfo(dtype)
    if pattern == "nan|max":
        return info.max
    if pattern == "large":
        return 2**30 if info.max >= 2**30 else info.max
    if pattern == "minus-one":
        return -1 if info.min < 0 else info.max
    return 1


def _poison(t: torch.Tensor, pattern: str) -> torch.Tensor:
    return t.fill_(poison_value(t.dtype, pattern))


@dataclass(frozen=True)
class Site:
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_line: int
    end_col: int  # 1-based, exclusive
    call: str  # one of ZEROS_CALLS

    @property
    def key(self) -> tuple[int, int]:
        return (self.line, self.col)


def _char_col(source_lines: list[str], lineno: int, byte_offset: int) -> int:
    """ast columns are UTF-8 byte offsets; the contract counts characters."""
    line = source_lines[lineno - 1].encode("utf-8")
    return len(line[:byte_offset].decode("utf-8", errors="replace"))


def _torch_names(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """Names bound to the torch module, and names imported from it (alias -> original)."""
    modules, members = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch":
                    modules.add(a.asname or "torch")
        elif isinstance(node, ast.ImportFrom) and node.module == "torch" and node.level == 0:
            for a in node.names:
                members[a.asname or a.name] = a.name
    return modules, members


def find_sites(source: str, assume: tuple[set[str], dict[str, str]] | None = None) -> list[Site]:
    """Every torch.zeros / torch.zeros_like / .new_zeros call, in source order.

    Name resolution is deliberately simple (module-level imports only): it is the oracle for
    generated programs, which never shadow these names.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    modules, members = _torch_names(tree)
    if assume is not None:  # names bound to torch by another module (multi-module programs)
        modules |= assume[0]
        members.update(assume[1])
    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        call = None
        if isinstance(fn, ast.Attribute):
            if (
                isinstance(fn.value, ast.Name)
                and fn.value.id in modules
                and fn.attr in ("zeros", "zeros_like")
            ):
                call = f"torch.{fn.attr}"
            elif fn.attr == "new_zeros":
                call = "Tensor.new_zeros"
        elif isinstance(fn, ast.Name) and members.get(fn.id) in ("zeros", "zeros_like"):
            call = f"torch.{members[fn.id]}"
        if call is None:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        sites.append(
            Site(
                line=node.lineno,
                col=_char_col(lines, node.lineno, node.col_offset) + 1,
                end_line=node.end_lineno,
                end_col=_char_col(lines, node.end_lineno, node.end_col_offset) + 1,
                call=call,
            )
        )
    return sorted(sites, key=lambda s: s.key)


def replace_span(source: str, site: Site, new_text: Callable[[str], str]) -> str:
    """Replace the call's exact span (character positions) by new_text(old_text)."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    start = starts[site.line - 1] + site.col - 1
    end = starts[site.end_line - 1] + site.end_col - 1
    return source[:start] + new_text(source[start:end]) + source[end:]


def poisoned_variant(source: str, site: Site, pattern: str, replacement: str | None = None) -> str:
    """The source with exactly this site's call (or `replacement`, e.g. a fix) wrapped in poison."""
    return replace_span(source, site, lambda old: f"_zo_poison({replacement or old}, {pattern!r})")


# ---- running ------------------------------------------------------------------------------------


class RunTimeout(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise RunTimeout(f"ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Outcome:
    value: Any = None
    error: str | None = None  # "ExcType: message" when the run raised


def run_once(
    code: Any,
    args: tuple[int, int, int, bool],
    hits: list[int],
    extra: dict[str, Any] | None = None,
) -> Outcome:
    variant, n, k, flag = args

    def poison(t: torch.Tensor, pattern: str) -> torch.Tensor:
        hits[0] += 1
        return _poison(t, pattern)

    namespace: dict[str, Any] = {"__name__": "zo_generated", "_zo_poison": poison, **(extra or {})}
    # A module of a package (multi-module programs) is the one its package's other modules
    # import (`from .main import f` inside a function of lib.py): this run's, not a copy read
    # from disk without the poison.
    name = str(namespace["__name__"])
    registered = bool(namespace.get("__package__"))
    saved = sys.modules.get(name)
    if registered:
        module = types.ModuleType(name)
        module.__dict__.update(namespace)
        namespace = module.__dict__
        sys.modules[name] = module
    # The programs run on CPU tensors: the CPU generator is the one to reset. (torch.manual_seed
    # also queues a lazy seeding call, with a captured stack, for each accelerator backend that is
    # not initialised: a third of the oracle's time, and a list that grows with every run.)
    torch.default_generator.manual_seed(0)
    try:
        with _deadline(RUN_TIMEOUT_S), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, namespace)
            return Outcome(value=namespace["f"](make_inp(variant), n, k, flag))
    except RunTimeout as exc:
        return Outcome(error=f"timeout: {exc}")
    except Exception as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}")
    except RecursionError as exc:  # pragma: no cover - subclass of Exception, kept for clarity
        return Outcome(error=f"RecursionError: {exc}")
    finally:
        if registered:
            if saved is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = saved


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().reshape(-1).contiguous().view(torch.uint8)


def difference(zeros: Any, other: Any, where: str = "result") -> str | None:
    """None when equal: bitwise, except that NaN equals NaN where the zeros version has NaN too."""
    if isinstance(zeros, torch.Tensor) or isinstance(other, torch.Tensor):
        if not (isinstance(zeros, torch.Tensor) and isinstance(other, torch.Tensor)):
            return f"{where}: tensor vs {type(other).__name__}"
        if zeros.dtype != other.dtype or zeros.shape != other.shape:
            return (
                f"{where}: {zeros.dtype}{tuple(zeros.shape)} vs {other.dtype}{tuple(other.shape)}"
            )
        a, b = zeros.detach(), other.detach()
        if a.dtype.is_floating_point or a.dtype.is_complex:
            nan_a, nan_b = torch.isnan(a), torch.isnan(b)
            if not torch.equal(nan_a, nan_b):
                return f"{where}: NaN at different places"
            a, b = a.masked_fill(nan_a, 0), b.masked_fill(nan_b, 0)
        if not torch.equal(_bits(a), _bits(b)):
            return f"{where}: values differ ({_short(a)} vs {_short(b)})"
        return None
    if isinstance(zeros, (tuple, list)) and isinstance(other, (tuple, list)):
        if type(zeros) is not type(other) or len(zeros) != len(other):
            return f"{where}: sequence shape differs"
        for i, (x, y) in enumerate(zip(zeros, other, strict=True)):
            d = difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    if isinstance(zeros, dict) and isinstance(other, dict):
        if list(zeros) != list(other):
            return f"{where}: keys differ"
        for key in zeros:
            d = difference(zeros[key], other[key], f"{where}[{key!r}]")
            if d:
                return d
        return None
    if isinstance(zeros, float) and isinstance(other, float):
        if math.isnan(zeros) and math.isnan(other):
            return None
        same = zeros == other and math.copysign(1, zeros) == math.copysign(1, other)
        return None if same else f"{where}: {zeros!r} vs {other!r}"
    if type(zeros) is not type(other) or zeros != other:
        return f"{where}: {zeros!r} vs {other!r}"
    return None


def _short(t: torch.Tensor) -> str:
    text = repr(t.reshape(-1)[:6].tolist())
    return text if t.numel() <= 6 else text[:-1] + ", ...]"


# ---- per-program verdicts -----------------------------------------------------------------------


@dataclass
class SiteReport:
    site: Site
    reached: bool = False
    unsafe: bool = False  # unsafe by execution
    detail: str = ""  # the first observed difference: pattern, input, what differed
    finding: Finding | None = None
    fix_detail: str = ""  # set when the finding's own fix text, poisoned, changed the result

    @property
    def verdict(self) -> Verdict | None:
        return self.finding.verdict if self.finding else None

    @property
    def equivalent(self) -> bool:
        return self.reached and not self.unsafe

    @property
    def unsound(self) -> bool:
        """The analysis said safe, yet poisoning this allocation changed what the program did."""
        return self.verdict is Verdict.SAFE and (self.unsafe or bool(self.fix_detail))


@dataclass
class ProgramReport:
    source: str
    valid: bool  # the zeros version ran without error, deterministically, on every input
    reason: str = ""
    sites: list[SiteReport] = field(default_factory=list)
    stray_findings: list[Finding] = field(default_factory=list)  # zeros findings at no site
    analysis_error: str = ""


def baseline(
    source: str,
    inputs: Sequence[tuple[int, int, int, bool]] = INPUTS,
    extra: dict[str, Any] | None = None,
) -> list[Outcome] | str:
    """The zeros version's results, or why the program is unusable."""
    try:
        # dont_inherit: this module's `from __future__ import annotations` must not turn the
        # program's annotations into strings (a dataclass would then look itself up in sys.modules)
        code = compile(source, "gen.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"does not compile: {exc}"
    if "torch.distributed" in source:
        process_group()
    outs = []
    for args in inputs:
        first, second = run_once(code, args, [0], extra), run_once(code, args, [0], extra)
        if first.error:
            return f"zeros version raised on {args}: {first.error}"
        if second.error or difference(first.value, second.value):
            return f"zeros version is not deterministic on {args}"
        outs.append(first)
    return outs


def process_group() -> None:
    """A Gloo process group of world size 1 in this process, for programs that call
    torch.distributed collectives (rank 0's tensor is the only one gathered)."""
    import tempfile

    import torch.distributed as dist

    if not dist.is_initialized():
        where = tempfile.mkdtemp(prefix="zo-gloo-")
        dist.init_process_group("gloo", init_method=f"file://{where}/pg", rank=0, world_size=1)


def trial(
    source: str,
    site: Site,
    base: Sequence[Outcome],
    inputs: Sequence[tuple[int, int, int, bool]] = INPUTS,
    patterns: Sequence[str] = PATTERNS,
    replacement: str | None = None,
    namespace: dict[str, Any] | None = None,
) -> tuple[bool, str]:
    """(reached, first difference or "") for one site under every pattern and input."""
    reached = False
    # A fix spelled `empty(...)` (the file did `from torch import zeros`) relies on apply adding
    # the matching import; provide it as the codemod would, unless the program binds the name.
    extra = {"empty": torch.empty, "empty_like": torch.empty_like} if replacement else {}
    extra.update(namespace or {})
    for pattern in patterns:
        variant = poisoned_variant(source, site, pattern, replacement)
        code = compile(variant, "gen.py", "exec", dont_inherit=True)
        for args, zeros in zip(inputs, base, strict=True):
            hits = [0]
            out = run_once(code, args, hits, extra)
            reached = reached or hits[0] > 0
            if out.error:
                return True, f"pattern {pattern}, input {args}: raised {out.error}"
            d = difference(zeros.value, out.value)
            if d:
                return True, f"pattern {pattern}, input {args}: {d}"
    return reached, ""


def check_program(
    source: str,
    analyse: Callable[[str], list[Finding]] | None = None,
    inputs: Sequence[tuple[int, int, int, bool]] = INPUTS,
    patterns: Sequence[str] = PATTERNS,
    namespace: dict[str, Any] | None = None,
    assume: tuple[set[str], dict[str, str]] | None = None,
) -> ProgramReport:
    """Execute every site poisoned; if `analyse` is given, attach its zeros findings by position.
    `namespace` adds globals to every run (`__name__`/`__package__` of a multi-module program);
    `assume` names torch modules and members that another module binds."""
    base = baseline(source, inputs, namespace)
    if isinstance(base, str):
        return ProgramReport(source, valid=False, reason=base)
    report = ProgramReport(source, valid=True)
    sites = find_sites(source, assume)
    findings: dict[tuple[int, int], Finding] = {}
    if analyse is not None:
        try:
            for fnd in analyse(source):
                if fnd.call in ZEROS_CALLS:
                    findings[(fnd.line, fnd.col)] = fnd
        except Exception as exc:  # the analysis must never raise; record it rather than stop
            report.analysis_error = f"{type(exc).__name__}: {exc}"
    keys = {s.key for s in sites}
    report.stray_findings = [f for key, f in findings.items() if key not in keys]
    for site in sites:
        reached, detail = trial(source, site, base, inputs, patterns, None, namespace)
        sr = SiteReport(
            site,
            reached=reached,
            unsafe=bool(detail),
            detail=detail,
            finding=findings.get(site.key),
        )
        if (
            sr.finding is not None
            and sr.verdict is Verdict.SAFE
            and sr.finding.fix is not None
            and not sr.unsafe
        ):
            # The rewrite itself, poisoned: catches a fix text that changes shape, dtype or device.
            try:
                _, fix_diff = trial(
                    source, site, base, inputs, patterns, sr.finding.fix.replacement, namespace
                )
            except SyntaxError as exc:
                fix_diff = f"fix text does not compile: {exc}"
            sr.fix_detail = fix_diff
        report.sites.append(sr)
    return report


# Settings of the analysis for every engine run of this process (bench/soundness.py
# --analysis-option): None runs the defaults.
ANALYSIS_OPTIONS: list[Any] = [None]


def set_analysis_options(settings: dict[str, Any]) -> None:
    """Run the engine with these AnalysisOptions fields (e.g. a closed-world switch); an unknown
    name raises, so a bench run never silently measures the defaults."""
    import dataclasses

    from zeroopt.analysis.options import AnalysisOptions

    known = {f.name for f in dataclasses.fields(AnalysisOptions)}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(
            f"AnalysisOptions has no {', '.join(unknown)} (has {', '.join(sorted(known))})"
        )
    ANALYSIS_OPTIONS[0] = AnalysisOptions(**settings) if settings else None


def engine_findings(source: str) -> list[Finding]:
    from zeroopt.scan.file_analysis import analyse_source

    return list(analyse_source(source, "gen.py", ANALYSIS_OPTIONS[0]).findings)


def minimise(source: str, still_failing: Callable[[str], bool]) -> str:
    """Greedy statement deletion (via ast) while `still_failing` holds: small repro files by hand
    take minutes, this takes seconds. The result is re-rendered by ast.unparse."""
    current = source
    changed = True
    while changed:
        changed = False
        tree = ast.parse(current)
        bodies = [
            (node, attr)
            for node in ast.walk(tree)
            for attr in ("body", "orelse", "finalbody", "handlers")
            if isinstance(getattr(node, attr, None), list) and getattr(node, attr)
        ]
        for node, attr in bodies:
            stmts = getattr(node, attr)
            for i in range(len(stmts)):
                candidate_stmts = stmts[:i] + stmts[i + 1 :]
                if not candidate_stmts and attr in ("body", "handlers"):
                    if attr == "handlers":
                        continue
                    candidate_stmts = [ast.Pass()]
                setattr(node, attr, candidate_stmts)
                try:
                    text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
                    ok = still_failing(text)
                except Exception:
                    ok = False
                if ok and text != current:
                    current = text
                    changed = True
                    break
                setattr(node, attr, stmts)
            if changed:
                break
    return current


def function_program(body: str) -> str:
    """`body` (unindented lines) as the body of `f(inp, n, k, flag)` in a module importing torch:
    the shape of the generated programs, so the oracle's inputs drive it."""
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"import torch\n\n\ndef f(inp, n, k, flag):\n{lines}\n"


def first_site(body: str) -> SiteReport:
    """The oracle's report on the first allocation of `function_program(body)`, run with zeros
    and poisoned over every input."""
    report = check_program(function_program(body), engine_findings)
    assert report.valid, report.reason
    assert report.sites, "no allocation"
    return report.sites[0]
