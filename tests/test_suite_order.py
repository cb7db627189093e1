"""The suite's scheduling (tests/conftest.py): every file LONGEST_FIRST names exists (a renamed file would
silently fall back to the default order), and collection puts those files first, in that order."""
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# By path: with pytest-xdist, `import conftest` may find another folder's conftest.py (tests/console, ...).
_spec = importlib.util.spec_from_file_location("tests_conftest", ROOT / "tests" / "conftest.py")
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


def test_longest_first_names_existing_files():
    missing = [f for f in conftest.LONGEST_FIRST if not (ROOT / f).is_file()]
    assert not missing, f"tests/conftest.py LONGEST_FIRST names files that do not exist: {missing}"
    assert len(set(conftest.LONGEST_FIRST)) == len(conftest.LONGEST_FIRST)


def test_collection_runs_longest_files_first():
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-n", "0", "tests/test_suite_order.py", *reversed(conftest.LONGEST_FIRST[:3])],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    files = []
    for line in r.stdout.splitlines():
        f = line.split("::")[0]
        if "::" in line and (not files or files[-1] != f):
            files.append(f)
    assert files[:3] == list(conftest.LONGEST_FIRST[:3]) and files[-1] == "tests/test_suite_order.py", r.stdout[-2000:]
