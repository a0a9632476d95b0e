"""What would decide an `unproven` finding, and the reason class it falls in (`--statistics`).

Derived from what the finding carries (its message and evidence) and the source line of the
call that stopped the analysis; nothing here changes a verdict. Two ways to decide:
- the callee the buffer was handed to is opaque: if it writes the whole argument without
  reading it, a `[tool.zeroopt.contracts]` entry says so (the key is the name the analysis
  printed, which is the one it matches: the qualified name where imports resolve it);
- anything else: `zeroopt verify` runs the code with that one allocation poisoned.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Any

from zeroopt.analysis.resolve import walk_all
from zeroopt.scan.findings import Finding, Verdict

# The reason the analysis gave, after "cannot prove `X` is written before it is read (line N): ".
_REASON = re.compile(r"\(line \d+\): (.*)\Z", re.S)
_CALLEE = re.compile(r"(?:call to|passed to) `([^`]+)`")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_LIFECYCLE = re.compile(r"\(lifecycle [^:()]+: ")
# Names of compiled-kernel entry points: custom-op namespaces, extension modules, kernel packages.
_KERNEL_HINTS = (
    "torch.ops.",
    "._C.",
    "_C.",
    "_custom_ops",
    "sgl_kernel",
    "flashinfer",
    "flash_attn",
    "triton",
    "deep_gemm",
    "cutlass",
    ".ops.",
    "kernel",
)
SCENARIO = "SCENARIO.py:function"


@dataclass(frozen=True)
class NextStep:
    text: str  # one line, for text output
    command: str  # the `zeroopt verify` command line that decides the site at run time
    toml: str | None = None  # the configuration entry that decides it statically, if one can

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "command": self.command, "toml": self.toml}


def reason(message: str) -> str:
    match = _REASON.search(message)
    return match.group(1) if match else message


def callee(f: Finding) -> str | None:
    """The opaque callee the decisive reason names (`call to X`, `passed to X`), if any."""
    match = _CALLEE.search(reason(f.message))
    if match is None:
        for e in f.evidence:
            if e.kind in ("unknown-call", "escape"):
                match = _CALLEE.search(e.text)
                if match is not None:
                    break
    return match.group(1) if match else None


def _is_kernel(name: str) -> bool:
    return "[" in name or any(h in name for h in _KERNEL_HINTS)


def reason_class(f: Finding) -> str:
    """A short class for the reason an unproven finding stayed unproven ('' for the others)."""
    if f.verdict is not Verdict.UNPROVEN:
        return ""
    text = reason(f.message)
    if _LIFECYCLE.search(text):
        return "lifecycle class not judged"
    if "unreachable" in text:
        return "unreachable"
    if text.startswith(("call to `", "`with ")) or "(context manager) may read it" in text:
        name = callee(f)
        return "opaque kernel" if name and _is_kernel(name) else "unknown call"
    if text.startswith("passed to `") or "passed to `" in text.split(":", 1)[0]:
        name = callee(f)
        return "opaque kernel" if name and _is_kernel(name) else "passed as argument"
    checks: tuple[tuple[str, str], ...] = (
        ("attribute `", "escapes to attribute"),
        ("stored into `self.", "escapes to attribute"),
        ("stored in `self.", "escapes to attribute"),
        ("the function returns", "returned"),
        ("returned", "returned"),
        ("stored in a container", "stored in container"),
        ("stored into `", "stored in container"),
        ("collected by a comprehension", "stored in container"),
        ("which holds the buffer, is used as a whole", "container used as a whole"),
        ("read after only partial or possible writes", "partial writes"),
        ("is a view or, with a tensor index, a gather", "view or gather"),
        ("may copy the data", "possible copy"),
        ("allocated again", "reallocated while still reachable"),
        ("memory exposed by", "memory exposed"),
        ("share its storage", "memory exposed"),
        ("captured by", "closure"),
        ("generator expression", "closure"),
        ("nested function", "closure"),
        ("split into views", "views not followed"),
        ("unpacked into views", "views not followed"),
        ("an import", "import runs code"),
        ("CUDA-graph capture", "CUDA-graph capture"),
        ("possible read", "possible read"),
    )
    for needle, cls in checks:
        if needle in text:
            return cls
    return "other"


def _argument_key(line_text: str, name: str, target: str) -> int | str | None:
    """Position or keyword of `target` in the call to `name` on `line_text`, when one call
    there passes exactly the buffer (not a view of it)."""
    calls = _calls_on(line_text)
    if calls is None:
        return None
    wanted = _spelled(target)
    if wanted is None:
        return None
    last = name.rsplit(".", 1)[-1]
    keys: set[int | str] = set()
    for func, args, keywords in calls:
        if func != name and func.rsplit(".", 1)[-1] != last:
            continue
        keys.update(i for i, a in enumerate(args) if a == wanted)
        keys.update(k for k, v in keywords if v == wanted)
    return keys.pop() if len(keys) == 1 else None


# A report names one call line (and one buffer) for several findings: each is parsed once.
@functools.lru_cache(maxsize=4096)
def _calls_on(
    line_text: str,
) -> tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], ...] | None:
    """The calls on a source line: (callee, positional arguments up to the first starred one,
    (keyword, value) pairs), each as `ast.unparse` spells it; None where the line does not
    parse (also as the head of a compound statement)."""
    try:
        tree = ast.parse(line_text.strip(), mode="exec")
    except SyntaxError:
        try:
            tree = ast.parse(line_text.strip().rstrip(":") + ": pass", mode="exec")
        except SyntaxError:
            return None
    calls = []
    for node in walk_all(tree):
        if not isinstance(node, ast.Call):
            continue
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                break
            args.append(ast.unparse(a))
        keywords = tuple((k.arg, ast.unparse(k.value)) for k in node.keywords if k.arg is not None)
        calls.append((ast.unparse(node.func), tuple(args), keywords))
    return tuple(calls)


@functools.lru_cache(maxsize=4096)
def _spelled(target: str) -> str | None:
    """`target` as `ast.unparse` spells it (None where it does not parse)."""
    try:
        return ast.unparse(ast.parse(target, mode="eval").body)
    except SyntaxError:
        return None


def next_step(f: Finding) -> NextStep | None:
    """What would decide `f` (None unless it is unproven)."""
    if f.verdict is not Verdict.UNPROVEN:
        return None
    site = f"{f.path}:{f.line}:{f.col}"
    command = f"zeroopt verify {SCENARIO} --site {site}"
    name = callee(f)
    # torch's own functions are modelled by the analysis (a user contract would override what it
    # knows); `self.x` is not a name a contract can match.
    if (
        name is not None
        and _DOTTED.match(name)
        and not name.startswith(("self.", "torch.", "builtins."))
    ):
        lines = [e.line for e in f.evidence if name in e.text] or [f.line]
        key = None
        for line in dict.fromkeys(lines):
            key = _argument_key(f.source_line(line), name, f.target)
            if key is not None:
                break
        if key is not None:
            written = str(key) if isinstance(key, int) else f'"{key}"'
            toml = f'[tool.zeroopt.contracts]\n"{name}" = {{ writes = [{written}] }}'
            text = (
                f"if `{name}` writes all of argument {written} without reading it: "
                f'[tool.zeroopt.contracts] "{name}" = {{ writes = [{written}] }}; '
                f"otherwise run `{command}`"
            )
            return NextStep(text, command, toml)
    return NextStep(f"run `{command}`", command)
