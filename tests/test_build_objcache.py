"""lsmc.build's model builds through ccache: a second model in another folder takes the Verilator runtime's
objects from the cache instead of compiling them again, and the model it links still runs; without ccache
on PATH the build passes no OBJCACHE."""
import shutil
import subprocess

import pytest

from lsmc import build

COUNTER = ("module Counter(input clk, input [7:0] a, output reg [7:0] b);\n"
           "  always @(posedge clk) b <= a + 1;\nendmodule\n")
MAIN = """#include "VCounter.h"
#include "verilated.h"
int main() {
  VerilatedContext ctx; VCounter m(&ctx);
  m.a = 41; m.clk = 0; m.eval(); m.clk = 1; m.eval();
  return m.b == 42 ? 0 : 1;
}
"""


def _stats(cache) -> dict:
    out = subprocess.run(["ccache", "--print-stats"], env={"CCACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split("\t") for line in out.splitlines() if "\t" in line)}


@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed (scripts/setup installs it)")
def test_second_model_takes_the_runtime_from_the_cache(tmp_path, monkeypatch):
    (tmp_path / "counter.v").write_text(COUNTER)
    (tmp_path / "main.cpp").write_text(MAIN)
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "cache"))
    first = build.verilate("Counter", [tmp_path / "counter.v"], [tmp_path / "main.cpp"], tmp_path / "a")
    after_first = _stats(tmp_path / "cache")
    assert after_first.get("direct_cache_hit", 0) + after_first.get("preprocessed_cache_hit", 0) == 0
    # Another model: the runtime (verilated.cpp, ...) and the harness are the same sources and flags.
    (tmp_path / "counter.v").write_text(COUNTER.replace("a + 1", "a + 8'd1"))
    second = build.verilate("Counter", [tmp_path / "counter.v"], [tmp_path / "main.cpp"], tmp_path / "b")
    hits = _stats(tmp_path / "cache")
    assert hits.get("direct_cache_hit", 0) + hits.get("preprocessed_cache_hit", 0) >= 2, hits
    for exe in (first, second):
        assert subprocess.run([str(exe)]).returncode == 0


def test_no_ccache_no_objcache(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert build.objcache({"A": "1"}) == ({"A": "1"}, ())
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/ccache")
    monkeypatch.setenv("CCACHE_DIR", "/elsewhere")
    env, make_vars = build.objcache(None)
    assert env["CCACHE_DIR"] == "/elsewhere" and make_vars == ("OBJCACHE=ccache",)
