"""Files to findings: discovery, configuration, per-file analysis, caching, worker processes."""
