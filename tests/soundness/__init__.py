"""Differential soundness testing: generated PyTorch programs, executed with each zeros
allocation poisoned, against the static analysis' verdicts."""
