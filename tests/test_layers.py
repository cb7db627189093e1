"""The layers of the package `lsmc` hold (docs/architecture.md, *Layers of the Python package*): a module
imports only modules of its own layer or of a lower one, and no modules import each other in a circle.
Every import counts, a function-local one too: a late import changes when a module loads, not what it
needs. The board targets (boards/<board>/target.py, scripts) stand above every layer."""
import ast
from pathlib import Path

from lsmc.paths import ROOT

# Lowest first; a module belongs to the layer of the longest prefix of its name listed here (the package
# `lsmc` itself, empty, is in the base layer).
LAYERS = [
    ("base", ["lsmc.paths", "lsmc.cliutil", "lsmc.progress", "lsmc.cluster"]),
    ("model", ["lsmc.model"]),
    ("build", ["lsmc.build"]),
    ("sim", ["lsmc.sim"]),
    ("report", ["lsmc.report"]),
    ("tools", ["lsmc.__main__", "lsmc.cli", "lsmc.gendocs", "lsmc.console", "lsmc.console_suite", "lsmc.board_report",
               "lsmc.leveldb", "lsmc.tables", "lsmc.fpga", "lsmc.boards"]),
    ("targets", ["boards"]),
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path) -> dict:
    """module name -> file, for every module of lsmc/ and every board target."""
    files = sorted((root / "lsmc").rglob("*.py")) + sorted((root / "boards").glob("*/target.py"))
    return {module_name(f, root): f for f in files}


def layer_of(module: str) -> int | None:
    if module == "lsmc":
        return 0
    best, layer = -1, None
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, layer = len(p), i
    return layer


def imports(module: str, path: Path, modules: dict) -> list:
    """(line, imported project module) of every import in `path`, at any depth of the code; `from A
    import B` is an import of A.B when that is a module, else of A."""
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".")[:len(module.split(".")) - node.level + is_pkg]
                base = ".".join(pkg + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:  # `import lsmc.build.firmware` of a module of a package
                name = name.rpartition(".")[0]
            if name and name != module and (node.lineno, name) not in out:
                out.append((node.lineno, name))
    return out


def graph(root: Path) -> tuple[dict, dict]:
    modules = project_modules(root)
    return modules, {m: imports(m, f, modules) for m, f in modules.items()}


def upward_imports(root: Path) -> list:
    """One line per import from a higher layer, and per module in no layer."""
    modules, edges = graph(root)
    bad = []
    for m, f in modules.items():
        here = layer_of(m)
        if here is None:
            bad.append(f"{f.relative_to(root)}: {m} is in no layer (add it to LAYERS in tests/test_layers.py "
                       "and to docs/architecture.md)")
            continue
        for line, target in edges[m]:
            there = layer_of(target)
            if there is not None and there > here:
                bad.append(f"{f.relative_to(root)}:{line}: {m} ({LAYERS[here][0]}) imports {target} "
                           f"({LAYERS[there][0]}, a higher layer)")
    return bad


def import_cycles(root: Path) -> list:
    """One line per circle of modules that import each other (Tarjan's strongly connected components),
    with the imports that close it."""
    modules, edges = graph(root)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for _line, w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    out = []
    for comp in comps:
        ties = [f"{modules[a].relative_to(root)}:{line} -> {b}" for a in comp for line, b in edges[a] if b in comp]
        out.append(f"circle {' <-> '.join(comp)}: " + "; ".join(ties))
    return out


def test_no_import_from_a_higher_layer():
    bad = upward_imports(ROOT)
    assert not bad, "imports from a higher layer (move the code to the layer that owns it):\n" + "\n".join(bad)


def test_no_import_cycles():
    bad = import_cycles(ROOT)
    assert not bad, "modules that import each other:\n" + "\n".join(bad)


def test_every_module_and_target_is_seen():
    modules = project_modules(ROOT)
    for m in ("lsmc.cliutil", "lsmc.model.kb16", "lsmc.build.firmware", "lsmc.sim.soc", "lsmc.report.demo",
              "lsmc.fpga.flow", "lsmc.boards.litex_soc", "boards.ecpix5.target"):
        assert m in modules, m
    assert [layer_of(m) for m in ("lsmc.paths", "lsmc.model.kb16", "lsmc.build", "lsmc.sim.soc", "lsmc.report.demo",
                                  "lsmc.fpga.cli", "boards.sim.target")] == [0, 1, 2, 3, 4, 5, 6]


def _tree(tmp_path, files: dict) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (tmp_path / "boards").mkdir(exist_ok=True)
    return tmp_path


def test_checks_find_what_they_look_for(tmp_path):
    """The checks are not vacuous: a late upward import, a relative one and a circle are each named with
    the file and line; a tree without them passes."""
    root = _tree(tmp_path, {
        "lsmc/__init__.py": "",
        "lsmc/paths.py": "",
        "lsmc/model/a.py": "import os\n\n\ndef f():\n    from lsmc.sim import b\n",
        "lsmc/sim/__init__.py": "",
        "lsmc/sim/b.py": "from . import c\n",
        "lsmc/sim/c.py": "import lsmc.sim.b\n",
        "lsmc/report/d.py": "from lsmc.sim import b\nfrom lsmc.model import a\n",
        "lsmc/stray.py": "",
    })
    up = upward_imports(root)
    assert any(l.startswith("lsmc/model/a.py:5: lsmc.model.a (model) imports lsmc.sim.b (sim") for l in up), up
    assert any("lsmc.stray is in no layer" in l for l in up), up
    assert len(up) == 2, up
    cycles = import_cycles(root)
    assert cycles == ["circle lsmc.sim.b <-> lsmc.sim.c: lsmc/sim/b.py:1 -> lsmc.sim.c; "
                      "lsmc/sim/c.py:1 -> lsmc.sim.b"], cycles
    (root / "lsmc/model/a.py").write_text("import os\n")
    (root / "lsmc/sim/c.py").write_text("from lsmc.model import a\n")
    (root / "lsmc/stray.py").unlink()
    assert upward_imports(root) == [] and import_cycles(root) == []


def test_board_glue_is_imported_from_where_it_lives():
    """lsmc.boards is the folder lsmc/boards of this tree (no package-dir mapping onto boards/), so a clone or
    worktree imports its own glue, not an installed copy's."""
    import importlib.util

    import lsmc.boards

    assert Path(lsmc.boards.__file__).resolve() == (ROOT / "lsmc" / "boards" / "__init__.py").resolve()
    glue = importlib.util.find_spec("lsmc.boards.litex_soc").origin  # found, not run: LiteX need not be here
    assert Path(glue).resolve().parent == (ROOT / "lsmc" / "boards").resolve()
    assert not list((ROOT / "boards").glob("*.py")), "board glue belongs in lsmc/boards, targets in boards/<board>/"
