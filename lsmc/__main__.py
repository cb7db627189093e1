"""`python3 -m lsmc COMMAND ...`, the same as the `lsmc` command."""
import sys

from lsmc.cli import main

sys.exit(main())
