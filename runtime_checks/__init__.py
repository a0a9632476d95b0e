"""Runtime verification: poison one allocation at its exact source position and compare outputs.

`Checker(scenario, ...).verify(sites)` runs the zeros baseline and the poisoned trials, each in
its own subprocess, and returns a `VerifyReport` whose `to_json()` is the contract of docs/contracts.md.
"""

from zeroopt.runtime_checks.sites import Site, parse_site, sites_from_report
from zeroopt.runtime_checks.verdicts import RuntimeVerdict, VerifyReport

__all__ = ["RuntimeVerdict", "Site", "VerifyReport", "parse_site", "sites_from_report"]
