"""zeroopt: turn provably-overwritten torch.zeros into torch.empty, soundly."""

__version__ = "0.1.0"
