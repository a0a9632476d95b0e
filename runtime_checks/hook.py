"""The in-process side of `zeroopt verify -- CMD`: poison sites in every Python process CMD starts.

verify puts a private directory holding only `sitecustomize.py` (SITECUSTOMIZE below) first on
PYTHONPATH and names a trial spec in $ZEROOPT_VERIFY_SPEC. Every Python process that inherits
that environment (the command itself, `multiprocessing` spawn and forkserver children, Python
subprocesses) runs the bootstrap at start-up; it uses the zeroopt package the parent runs
($ZEROOPT_VERIFY_PACKAGE), whether or not the child's Python has zeroopt installed; it calls `arm()`, which only adds an import hook:
the interceptor goes in right after `torch` finishes importing, so a process that never imports
torch pays for one JSON read and nothing else. Forked children inherit the armed interceptor.
The bootstrap then runs the `sitecustomize` it shadows, if there is one.

Each process reports what it saw as small files in the spec's `reports` directory, written at
the moment it happens (a reached site: once per site and process; a target file whose code
started running), because workers often end with `os._exit` and a crash ends everything.

Limits: a process started with `python -I`, `-E` or `-S`, or with an environment that drops
PYTHONPATH, is not instrumented (its sites show as not reached).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
from types import ModuleType
from typing import Any

SPEC_ENV = "ZEROOPT_VERIFY_SPEC"
PACKAGE_ENV = "ZEROOPT_VERIFY_PACKAGE"

# Written into the private PYTHONPATH directory. It must work in a Python where zeroopt is not
# installed (a project's own virtualenv): it then loads the package from $ZEROOPT_VERIFY_PACKAGE.
SITECUSTOMIZE = '''\
"""Written by `zeroopt verify`: poisons the sites of one trial (see zeroopt.runtime_checks.hook)."""


def _zeroopt_verify_boot():
    import os
    import sys

    if not os.environ.get("ZEROOPT_VERIFY_SPEC"):
        return
    try:
        import importlib.util

        package = os.environ.get("ZEROOPT_VERIFY_PACKAGE", "")
        found = None if "zeroopt" in sys.modules else importlib.util.find_spec("zeroopt")
        where = list(found.submodule_search_locations or ()) if found is not None else []
        same = any(os.path.realpath(p) == os.path.realpath(package) for p in where)
        if package and "zeroopt" not in sys.modules and not same:
            # Not installed here, or another copy: load the one the parent runs, so the spec
            # format and the interceptor are the parent's.
            spec = importlib.util.spec_from_file_location(
                "zeroopt",
                os.path.join(package, "__init__.py"),
                submodule_search_locations=[package],
            )
            module = importlib.util.module_from_spec(spec)
            sys.modules["zeroopt"] = module
            spec.loader.exec_module(module)
        from zeroopt.runtime_checks import hook

        hook.arm(os.environ["ZEROOPT_VERIFY_SPEC"])
    except Exception as exc:  # never break the user's process; the parent sees nothing reached
        sys.stderr.write(f"zeroopt verify: could not instrument this process: {exc!r}\\n")


def _zeroopt_verify_chain():
    """Run the sitecustomize this file shadows (distributions ship one), as Python would have."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_zeroopt_verify_boot()
_zeroopt_verify_chain()
'''


class _Reporter:
    """Writes one small JSON file per event into the trial's reports directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._pid = os.getpid()
        self._count = 0
        self._sent: set[str] = set()

    def send(self, key: str, record: dict[str, Any]) -> None:
        if os.getpid() != self._pid:  # a forked child reports for itself
            self._pid, self._count, self._sent = os.getpid(), 0, set()
        if key in self._sent:
            return
        self._sent.add(key)
        self._count += 1
        name = os.path.join(self.directory, f"{self._pid}-{self._count}.json")
        try:
            with open(name + ".tmp", "w", encoding="utf-8") as out:
                json.dump(record, out)
            os.replace(name + ".tmp", name)
        except OSError:
            pass


def read_reports(directory: str) -> tuple[dict[str, dict[str, Any]], set[str], set[int]]:
    """(site key -> first hit record, files loaded, pids seen) from a reports directory."""
    hits: dict[str, dict[str, Any]] = {}
    loaded: set[str] = set()
    pids: set[int] = set()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return hits, loaded, pids
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue
        pids.add(int(record.get("pid", 0)))
        if record.get("kind") == "hit":
            hits.setdefault(record["site"], record)
        elif record.get("kind") == "loaded":
            loaded.add(record["path"])
        elif record.get("kind") == "armed":
            pass
    return hits, loaded, pids


class _ArmingLoader(importlib.abc.Loader):
    """Runs torch's own loader, then installs the interceptor."""

    def __init__(self, loader: Any, on_loaded: Any) -> None:
        self._loader = loader
        self._on_loaded = on_loaded

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._on_loaded()

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, is_package...
        return getattr(self._loader, name)


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """First on sys.meta_path until torch is imported; looks at no other module."""

    def __init__(self, on_loaded: Any) -> None:
        self._on_loaded = on_loaded

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None:
            spec.loader = _ArmingLoader(spec.loader, self._on_loaded)
        return spec


_ARMED: dict[str, Any] = {}


def arm(spec_path: str) -> None:
    """Install the interceptor of the trial `spec_path` now if torch is loaded, else on import."""
    if _ARMED:
        return
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    reporter = _Reporter(spec["reports"])
    reporter.send("armed", {"kind": "armed", "pid": os.getpid()})
    _ARMED["spec"] = spec

    def install() -> None:
        if "interceptor" in _ARMED:
            return
        from zeroopt.runtime_checks.intercept import Interceptor, SiteStats, Target
        from zeroopt.runtime_checks.targets import PoisonSite

        def on_hit(target: Target, stats: SiteStats) -> None:
            key = target.site.key
            reporter.send(
                "hit " + key,
                {
                    "kind": "hit",
                    "pid": os.getpid(),
                    "site": key,
                    "dtype": stats.dtype,
                    "shape": stats.shape,
                    "device": stats.device,
                    "calls": sorted(stats.calls),
                },
            )

        def on_load(real: str) -> None:
            reporter.send("load " + real, {"kind": "loaded", "pid": os.getpid(), "path": real})

        targets = [
            Target(PoisonSite.from_json(t["site"]), t.get("pattern")) for t in spec["targets"]
        ]
        interceptor = Interceptor(targets, on_hit=on_hit, on_load=on_load)
        interceptor.install()
        _ARMED["interceptor"] = interceptor
        for i, finder in enumerate(list(sys.meta_path)):
            if isinstance(finder, _TorchWatcher):
                del sys.meta_path[i]
                break

    if "torch" in sys.modules:
        install()
    else:
        sys.meta_path.insert(0, _TorchWatcher(install))
