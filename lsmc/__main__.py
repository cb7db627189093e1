"""`python3 -m lsmc COMMAND ...`, the same as the `lsmc` command."""
import sys

from lsmc.cli import main

if __name__ == "__main__":  # not again in the worker processes a LocalCluster spawns (they import __main__)
    sys.exit(main())
