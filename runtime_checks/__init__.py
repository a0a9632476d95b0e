"""Runtime verification: poison one allocation at its exact source position and compare outputs.

`Checker(scenario, ...).verify(sites)` runs the zeros baseline and the poisoned trials, each in
its own subprocess, and returns a `VerifyReport` whose `to_json()` is the contract of docs/contracts.md.
"""

from zeroopt.runtime_checks.results import RuntimeVerdict, VerifyReport
from zeroopt.runtime_checks.targets import PoisonSite, parse_site, sites_from_report

__all__ = ["PoisonSite", "RuntimeVerdict", "VerifyReport", "parse_site", "sites_from_report"]
