"""House rules of the Python code: `ruff check .` is clean (config in pyproject.toml) and no tracked
Python file edits sys.path (the package `lsmc` is installed; pytest.ini names the test helpers)."""
import ast
import shutil
import subprocess

import pytest

from lsmc.paths import ROOT


def _tracked_python() -> list:
    out = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p and (ROOT / p).is_file()]


def test_ruff_clean():
    if shutil.which("ruff") is None:
        pytest.fail("ruff is not installed: run scripts/setup")
    r = subprocess.run(["ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _edits_sys_path(tree: ast.AST) -> list:
    """Lines that change sys.path: sys.path.insert/append/extend/..., assignments to sys.path, site.addsitedir."""
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            parent_call = getattr(node, "_parent", None)
            if isinstance(parent_call, ast.Attribute) and parent_call.attr in (
                    "insert", "append", "extend", "remove", "pop", "clear", "__setitem__", "__iadd__"):
                hits.append(node.lineno)
            elif isinstance(parent_call, (ast.Assign, ast.AugAssign)) and node in getattr(
                    parent_call, "targets", [getattr(parent_call, "target", None)]):
                hits.append(node.lineno)
            elif isinstance(parent_call, ast.Subscript) and isinstance(parent_call.ctx, (ast.Store, ast.Del)):
                hits.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "addsitedir":
            hits.append(node.lineno)
    return hits


def _with_parents(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._parent = node
    return tree


def test_no_sys_path_edits():
    files = _tracked_python()
    assert len(files) > 20
    bad = []
    for f in files:
        tree = _with_parents(ast.parse(f.read_text(), str(f)))
        bad += [f"{f.relative_to(ROOT)}:{n}" for n in _edits_sys_path(tree)]
    assert not bad, "sys.path edited (install the package / use pytest.ini pythonpath instead): " + ", ".join(bad)


def test_sys_path_check_finds_edits():
    """The check above is not vacuous: it sees each way of editing sys.path."""
    for src in ("import sys\nsys.path.insert(0, 'x')\n", "import sys\nsys.path.append('x')\n",
                "import sys\nsys.path = ['x']\n", "import sys\nsys.path[0:0] = ['x']\n",
                "import sys\nsys.path += ['x']\n", "import site\nsite.addsitedir('x')\n"):
        assert _edits_sys_path(_with_parents(ast.parse(src))), src
    for src in ("import sys\nprint(sys.path)\n", "import sys\nfirst = sys.path[0]\n", "import sys\np = sys.path\n"):
        assert not _edits_sys_path(_with_parents(ast.parse(src))), src
