"""lsmc.build's guard around Mill's cache: a compile whose classes are gone is forgotten (so Mill compiles it
again), one whose classes are there is left alone."""
import json

from lsmc import build


def _compile(out, module, classes_ref, make_classes):
    d = out / module
    (d / "compile.dest").mkdir(parents=True)
    (d / "compile.dest" / "zinc").write_bytes(b"analysis")
    if make_classes:
        (d / "compile.dest" / "classes").mkdir()
    (d / "compile.json").write_text(json.dumps({"value": {"analysisFile": str(d / "compile.dest" / "zinc"),
                                                           "classes": classes_ref(d / "compile.dest" / "classes")}}))
    (d / "compile.log").write_text("[info] done compiling\n")
    (d / "sources.json").write_text("{}")
    return d


def test_lost_classes_are_forgotten_kept_ones_stay(tmp_path):
    lost = _compile(tmp_path, "table_engine", lambda p: f"ref:v0:d0e705e1:{p}", make_classes=False)
    kept = _compile(tmp_path, "common", lambda p: f"ref:v0:4225bebd:{p}", make_classes=True)
    plain = _compile(tmp_path, "mill-build", str, make_classes=False)
    assert build.drop_stale_compiles(tmp_path) == ["mill-build", "table_engine"]
    for d in (lost, plain):
        assert not list(d.glob("compile.*")) and (d / "sources.json").exists()
    assert {p.name for p in kept.glob("compile.*")} == {"compile.dest", "compile.json", "compile.log"}
    assert build.drop_stale_compiles(tmp_path) == []


def test_unknown_cache_shapes_are_left_to_mill(tmp_path):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "compile.json").write_text("not json")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "compile.json").write_text(json.dumps({"value": 3}))
    assert build.drop_stale_compiles(tmp_path) == []
    assert (tmp_path / "odd" / "compile.json").exists()


def test_mill_and_generator_jvms_share_the_jit_options():
    """Mill's own JVM (.mill-jvm-opts) and the generators' (build.sc forkArgs) run at the JIT's first tier with the
    code cache the JVM reserves at full tiering: at the first tier alone JDK 17 reserves 48 MiB, which a fresh
    clone's compile filled once (a VirtualMachineError, not a slower run)."""
    import re

    from lsmc.paths import ROOT
    mill = (ROOT / ".mill-jvm-opts").read_text().split()
    fork = re.findall(r'"(-XX:[^"]+)"', re.search(r"def forkArgs = Seq\(([^)]*)\)",
                                                  (ROOT / "build.sc").read_text()).group(1))
    assert sorted(o for o in mill if o.startswith("-XX:")) == sorted(fork)
    if "-XX:TieredStopAtLevel=1" in fork:
        size = next(o for o in fork if o.startswith("-XX:ReservedCodeCacheSize="))
        assert int(size.split("=")[1].rstrip("m")) >= 240
