"""The `zeroopt` command line: one module per command, wired together in app.py."""
