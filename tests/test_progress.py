"""Long work announces itself (lsmc.progress.step, used by every build command and SoC simulation): a step
still running after its threshold prints one line when that passes and one with its time when it ends;
a quick step prints nothing."""
import io
import re
import time

import pytest

from lsmc import build, progress


def test_a_long_step_says_what_and_how_long():
    out = io.StringIO()
    with progress.step("mill soc.Generate", after=0.05, stream=out):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert lines[0] == "lsmc: mill soc.Generate ..."
    assert re.fullmatch(r"lsmc: mill soc\.Generate: \d+ s", lines[1]) and len(lines) == 2


def test_a_quick_step_is_silent_and_a_failing_one_still_ends_its_line():
    out = io.StringIO()
    with progress.step("make", after=5, stream=out):
        pass
    assert out.getvalue() == ""
    with pytest.raises(RuntimeError), progress.step("verilator", after=0.01, stream=out):
        time.sleep(0.1)
        raise RuntimeError("build failed")
    assert out.getvalue().splitlines()[-1].startswith("lsmc: verilator: ")


def test_build_commands_read_as_short_lines():
    assert build.step_label([build.ROOT / "mill", "--no-server", "soc.runMain", "soc.Generate", "--out",
                             build.GEN / "soc_w128"]) == "mill soc.runMain soc.Generate --out build/gen/soc_w128"
    assert build.step_label(["verilator", "--cc", "--top-module", "LsmcSoc", "x.v"]) == "verilator: C++ model VLsmcSoc"
    assert len(build.step_label(["make", *["X=" + "y" * 30] * 10])) == 100
