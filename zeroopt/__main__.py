"""`python -m zeroopt`: the same command as `zeroopt`."""

from zeroopt.cli import main

if __name__ == "__main__":
    main()
