"""Where the KB16 cross-check vectors are: tests/vectors/kb16, made by an independent implementation of
the format (docs/kb16-format.md, *Test vectors*). KB16_VECTORS points the tests at another copy."""
import os
from pathlib import Path

from lsmc.paths import ROOT

VECTORS = Path(os.environ.get("KB16_VECTORS", ROOT / "tests" / "vectors" / "kb16"))
