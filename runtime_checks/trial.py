"""One trial, in its own process: `python -m zeroopt.runtime_checks.trial SPEC.json`.

A CUDA illegal memory access leaves the process's CUDA context unusable, and a scenario may
print anything or hang, so the parent never shares a process with a trial and never parses its
stdout: the outcome goes to files named in the spec (status JSON, outputs via torch.save).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEVICE_ENV = "ZEROOPT_DEVICE"


class ScenarioNotFound(Exception):
    """The scenario spec names no loadable function: a usage error, not a failing scenario."""


def check_scenario_spec(spec: str) -> str | None:
    """What is wrong with `spec` that can be seen without importing it, or None."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name or not name.isidentifier():
        return f"scenario {spec!r} is not FILE.py:FUNCTION or MODULE:FUNCTION"
    if _is_file_target(target):
        if not Path(target).is_file():
            return f"scenario file {target} does not exist"
        return None
    top = target.split(".", 1)[0]  # find_spec of a submodule would import its package
    try:
        found = importlib.util.find_spec(top) if top.isidentifier() else None
    except (ImportError, ValueError):
        found = None
    if found is None:
        return f"scenario module {target} cannot be found (not installed, or not on sys.path)"
    return None


def _is_file_target(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or "/" in target


def load_scenario(spec: str) -> Callable[..., Any]:
    """`path/to/file.py:function` or `package.module:function`."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name or not name.isidentifier():
        raise ScenarioNotFound(f"scenario {spec!r} is not FILE.py:FUNCTION or MODULE:FUNCTION")
    if _is_file_target(target):
        path = Path(target).resolve()
        if not path.is_file():
            raise ScenarioNotFound(f"scenario file {target} does not exist")
        module_name = f"zeroopt_scenario_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(path.parent))
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (target == exc.name or target.startswith(exc.name + ".")):
                raise ScenarioNotFound(
                    f"scenario module {target} cannot be found (not installed, or not on sys.path)"
                ) from None
            raise
    func = getattr(module, name, None)
    if func is None:
        raise ScenarioNotFound(f"scenario {spec!r}: {target} has no function {name}")
    if not callable(func):
        raise ScenarioNotFound(f"scenario {spec!r}: {name} in {target} is not a function")
    return func


def call_scenario(func: Callable[..., Any], device: str) -> Any:
    """Pass the device if the scenario takes a `device` parameter; it is in $ZEROOPT_DEVICE too."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return func()
    if "device" in params:
        return func(device=device)
    return func()


def run(spec: dict[str, Any]) -> int:
    from zeroopt.runtime_checks.intercept import Interceptor, Target
    from zeroopt.runtime_checks.targets import PoisonSite

    status_path = Path(spec["status"])
    targets = [Target(PoisonSite.from_json(t["site"]), t.get("pattern")) for t in spec["targets"]]
    loaded: list[str] = []
    interceptor = Interceptor(targets, on_load=loaded.append)
    status: dict[str, Any] = {"ok": False}
    try:
        import torch

        from zeroopt.runtime_checks.compare import flatten_outputs

        os.environ[DEVICE_ENV] = spec["device"]
        torch.manual_seed(0)
        interceptor.install()
        try:
            func = load_scenario(spec["scenario"])
        except ScenarioNotFound as exc:
            status["usage"] = str(exc)
            raise
        result = call_scenario(func, spec["device"])
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()  # surface asynchronous kernel errors here, not later
        outputs = flatten_outputs(result)
        torch.save(outputs, spec["outputs"])
        status["ok"] = True
    except BaseException as exc:  # the trial reports every failure, SystemExit included
        status["error"] = f"{type(exc).__name__}: {exc}".strip()
        status["traceback"] = traceback.format_exc(limit=-8)
    finally:
        interceptor.uninstall()
        status["sites"] = {k: s.to_json() for k, s in interceptor.stats.items()}
        status["loaded"] = sorted(set(loaded))
        status_path.write_text(json.dumps(status), encoding="utf-8")
    return 0 if status["ok"] else 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m zeroopt.runtime_checks.trial SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    return run(spec)


if __name__ == "__main__":
    # os._exit: skip interpreter teardown, where a broken CUDA context can hang or abort.
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
