"""Scan the pinned sglang and vllm wheels (bench/corpus.py) and print counts by rule, verdict and
reason; optionally save the normalised JSON (findings sorted, timing dropped) for a before/after
comparison of two engines, byte for byte:

    python bench/wheel_scan.py [--out OUT.json] [--cache-dir DIR] [--callers-closed]

The zeroopt that runs is the one installed beside the Python that runs this script.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # bench/ is not a package: imported from beside this script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the normalised JSON here")
    parser.add_argument("--cache-dir", type=Path, default=corpus.DEFAULT_CACHE)
    parser.add_argument(
        "--callers-closed", action="store_true", help="scan with `--callers-closed`"
    )
    args = parser.parse_args()
    packages = corpus.ensure_corpus(args.cache_dir)
    exe = shutil.which("zeroopt", path=os.path.dirname(sys.executable)) or "zeroopt"
    root = packages[0].root.parent
    cmd = [exe, "scan", *(p.root.name for p in packages), "--format", "json", "--no-cache"]
    if args.callers_closed:
        cmd.append("--callers-closed")
    done = subprocess.run([*cmd, "--exit-zero"], capture_output=True, text=True, cwd=root)
    data = json.loads(done.stdout)
    data["summary"].pop("seconds", None)
    data.pop("root", None)
    data["findings"].sort(key=lambda f: (f["path"], f["line"], f["col"], f["rule"]))
    if args.out:
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True))
    counts = collections.Counter((f["rule"], f["verdict"]) for f in data["findings"])
    print(f"$ (cd {root} && {' '.join(cmd)})")
    print(
        f"files {data['summary']['files']}, findings {data['summary']['findings']}, "
        f"errors {len(data['errors'])}"
    )
    for (rule, verdict), n in sorted(counts.items()):
        print(f"  {rule} {verdict:9} {n:6}")


if __name__ == "__main__":
    main()
