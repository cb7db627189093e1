"""Where the KB16 cross-check vectors are. They were made by an independent implementation of the
spec (shared/spec/kb16-vectors in the steering repository); a copy is kept in tests/vectors/kb16 so a
fresh clone tests against them. KB16_VECTORS points elsewhere (e.g. a newer shared copy)."""
import os
from pathlib import Path

from lsmc.paths import ROOT

VECTORS = Path(os.environ.get("KB16_VECTORS", ROOT / "tests" / "vectors" / "kb16"))
