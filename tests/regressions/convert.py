"""Print a regression file of the old one-file format as a `Case(...)` for a grouped module.

    python tests/regressions/convert.py NNN.py [NAME]

The old format: a header of `#` comments naming the site (`at line N`), the program, then an
`if __name__ == "__main__":` block printing the result with zeros and with poison (or a
`def run():` scenario). The output marks the site with `# <- site`, turns the main block into a
`run()` entry returning the zeros result, and keeps the header, cleaned of history, as `why`.
Paste it into the `CASES` list of the module of its mechanism and run that module's tests.
Unconverted, a numbered file in tests/regressions/ runs as it is (test_numbered.py).
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.regressions.harness import Case, case_from_numbered

_HISTORY = [
    (r"^(UNSOUND|COUNTEREXAMPLE|WRONG REWRITE)[^:]*?(\([^)]*\))?[^:]*?:\s*", ""),
    (r"\s*\((engine at|lifecycle models before)[^)]*\)", ""),
    (r"\s*\(?engine at (commit )?[0-9a-f]{7}\)?,?", ""),
    (r"Responsible:.*?\.(\s|$)", ""),
    (r"Found by .*?\.(\s|$)", ""),
    (r"(Run )?`python \d+\.py`[^.]*(\.|$)", ""),
    (r"Needs CUDA:?\s*", "Needs CUDA. "),
    (r"\bzeroopt\s+says\b", "The analysis said"),
    (r"\bzeroopt must not say\b", "The analysis must not say"),
]


def clean_why(why: str, offset: int) -> str:
    """The header without development history, its `line N` counted from the program's start."""
    for pattern, replacement in _HISTORY:
        why = re.sub(pattern, replacement, why)
    why = re.sub(r"\bline (\d+)", lambda m: f"line {int(m.group(1)) - offset}", why)
    why = re.sub(r"\blines (\d+)", lambda m: f"lines {int(m.group(1)) - offset}", why)
    return re.sub(r"\s+", " ", why).strip()


def _text(text: str, indent: str) -> str:
    quote = '"""' if '"""' not in text else "'''"
    return f"r{quote}\n{text.strip(chr(10))}\n{quote}"


def format_case(case: Case, name: str, why: str) -> str:
    lines = [
        "    Case(",
        f"        {name!r},",
        "        why=(",
        *(f"            {part!r}" for part in textwrap.wrap(why + " ", 86, drop_whitespace=False)),
        "        ),",
        f"        source={_text(case.source, '        ')},",
    ]
    if case.scenario.strip():
        lines.append(f"        scenario={_text(case.scenario, '        ')},")
    if case.gpu:
        lines.append("        gpu=True,")
    lines.append("    ),")
    return "\n".join(lines)


def header_lines(path: Path) -> int:
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        i += 1
    return i


def main(argv: list[str]) -> None:
    path = Path(argv[0])
    name = argv[1] if len(argv) > 1 else f"case_{path.stem}"
    case = case_from_numbered(path)
    print(format_case(case, name, clean_why(case.why, header_lines(path))))


if __name__ == "__main__":
    main(sys.argv[1:])
