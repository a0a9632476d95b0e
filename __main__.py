"""`python -m zeroopt`: the same command as `zeroopt`."""

from zeroopt.cli.app import main

if __name__ == "__main__":
    main()
