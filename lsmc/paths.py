"""Where the project's folders are: the repository root (this package sits at its top) and the shared
build folder every step writes under."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
GEN = BUILD / "gen"
RESULTS = ROOT / "results"
