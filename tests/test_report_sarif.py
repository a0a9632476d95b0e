from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.report import rule_catalog


def _check_sarif(log: dict[str, Any]) -> None:
    """The SARIF 2.1.0 fields that are required, or that GitHub code scanning relies on."""
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "zeroopt" and isinstance(driver["version"], str)
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
    for res in run["results"]:
        assert res["level"] in ("none", "note", "warning", "error")
        assert res["message"]["text"]
        assert res["ruleId"] in ids
        if "ruleIndex" in res:
            assert ids[res["ruleIndex"]] == res["ruleId"]
        for loc in res["locations"]:
            region = loc["physicalLocation"]["region"]
            assert region["startLine"] >= 1 and region.get("startColumn", 1) >= 1
            assert isinstance(loc["physicalLocation"]["artifactLocation"]["uri"], str)
        for fix in res.get("fixes", []):
            for change in fix["artifactChanges"]:
                assert change["artifactLocation"]["uri"]
                for rep in change["replacements"]:
                    assert rep["deletedRegion"]["startLine"] >= 1
                    assert isinstance(rep["insertedContent"]["text"], str)


def test_sarif_output(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project(
        "pkg/a.py",
        "import torch\nx = torch.zeros(4)\ny = torch.empty(2)\nz = 1  # zeroopt: ignore[ZO001]\n",
    )
    result = CliRunner().invoke(app, ["scan", ".", "--format", "sarif", "--no-cache"])
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    _check_sarif(log)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {
        str(r.code) for r in rule_catalog()
    }
    by_rule = {r["ruleId"]: r for r in run["results"]}
    safe, unsafe, unused = by_rule["ZO001"], by_rule["ZO002"], by_rule["ZO900"]
    assert (safe["level"], unsafe["level"], unused["level"]) == ("warning", "error", "note")
    loc = safe["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "pkg/a.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 19}
    (rep,) = safe["fixes"][0]["artifactChanges"][0]["replacements"]
    assert rep["insertedContent"]["text"] == "torch.empty(4)"
    assert rep["deletedRegion"] == loc["region"]
    assert "fixes" not in unsafe
