"""The shared command-line layer (lsmc/cliutil.py): atomic outputs, input limits, path checks, the
error convention, and the wrappers users run (scripts/<tool>, the `lsmc` entry point)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from lsmc import cliutil
from lsmc.cliutil import CliError
from lsmc.paths import ROOT


def leftovers(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith((".tmp", ".probe")))


def test_outputs_replace_together(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"old a")
    with cliutil.Outputs() as out:
        out.add(a, b"new a")
        out.add(b, "new b")
        assert a.read_bytes() == b"old a" and not b.exists()  # nothing visible before the end
    assert a.read_bytes() == b"new a" and b.read_text() == "new b"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_outputs_untouched_when_the_run_fails(tmp_path, failure):
    a = tmp_path / "a"
    a.write_bytes(b"old a")
    with pytest.raises(failure):
        with cliutil.Outputs() as out:
            out.add(a, b"new a")
            out.add(tmp_path / "b", b"new b")
            raise failure()
    assert a.read_bytes() == b"old a" and not (tmp_path / "b").exists()
    assert leftovers(tmp_path) == []


def test_outputs_second_file_fails(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"old a")
    (tmp_path / "d").mkdir()
    with pytest.raises(CliError, match=r"d: cannot write: is a folder"):
        with cliutil.Outputs() as out:
            out.add(a, b"new a")
            out.add(tmp_path / "d", b"x")
    assert a.read_bytes() == b"old a" and leftovers(tmp_path) == []


def test_outputs_keep_the_mode(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"old")
    os.chmod(a, 0o640)
    cliutil.write_output(a, b"new")
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o640
    umask = os.umask(0o022)
    try:
        cliutil.write_output(tmp_path / "fresh", b"x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "fresh").st_mode) == 0o644  # as open() would make it


def test_outputs_through_a_symlink(tmp_path):
    (tmp_path / "real").write_bytes(b"old")
    (tmp_path / "link").symlink_to("real")
    cliutil.write_output(tmp_path / "link", b"new")
    assert (tmp_path / "link").is_symlink() and (tmp_path / "real").read_bytes() == b"new"


def test_disk_full_and_read_only():
    with pytest.raises(CliError, match="^/dev/full: cannot write: No space left on device$"):
        cliutil.write_output("/dev/full", b"x")
    with pytest.raises(CliError, match="^/sys/lsmc-test: cannot write: "):
        cliutil.check_output_file("/sys/lsmc-test", "--out")
    cliutil.write_output("/dev/null", b"x")  # special files are written in place


def test_read_input_limits(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"0123456789")
    assert cliutil.read_input(f, limit=10) == b"0123456789"
    with pytest.raises(CliError, match="10 bytes, more than the limit of 9 bytes"):
        cliutil.read_input(f, limit=9)
    with pytest.raises(CliError, match="^/dev/zero: cannot read: more than the limit of 100 bytes$"):
        cliutil.read_input("/dev/zero", limit=100)
    with pytest.raises(CliError, match="is a folder"):
        cliutil.read_input(tmp_path)
    with pytest.raises(CliError, match="No such file or directory"):
        cliutil.read_input(tmp_path / "missing")
    (tmp_path / "bin").write_bytes(b"\xff")
    with pytest.raises(CliError, match="not a text file"):
        cliutil.read_text_input(tmp_path / "bin")


def test_output_dir_checks(tmp_path):
    (tmp_path / "file").write_text("x")
    cliutil.check_output_dir(tmp_path / "new" / "deeper", "--out-dir")  # made later
    with pytest.raises(CliError, match="is a file; --out-dir needs a folder"):
        cliutil.check_output_dir(tmp_path / "file", "--out-dir")
    with pytest.raises(CliError, match="cannot make the folder: .*file is a file"):
        cliutil.check_output_dir(tmp_path / "file" / "sub", "--out-dir")
    (tmp_path / "res" / "out.md").mkdir(parents=True)
    with pytest.raises(CliError, match="out.md: is a folder"):
        cliutil.check_output_dir(tmp_path / "res", "--out-dir", ["out.md"])


def test_tool_main_convention(capsys):
    @cliutil.tool_main("t")
    def bad(argv):
        raise CliError("x.bin: cannot read: gone")

    @cliutil.tool_main("t")
    def bug(argv):
        raise KeyError("a real bug")

    assert bad([]) == 2
    assert capsys.readouterr().err == "t: x.bin: cannot read: gone\n"
    with pytest.raises(KeyError):  # bugs are not dressed up as user errors
        bug([])


@pytest.mark.parametrize("cmd", [
    [str(ROOT / "scripts" / "kb16"), "gen", "--keys", "1_000", "--out0", "a", "--out1", "b"],
    [sys.executable, "-m", "lsmc", "kb16", "decode", "/dev/zero"],
    ["lsmc", "compact", "a", "b", "--out", "o", "--invalid", "o"],
    ["lsmc", "nope"],
])
def test_entry_points_end_with_one_line(cmd, tmp_path):
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().splitlines()[-1].split(":")[0] in (
        "kb16", "kb16 gen", "compact", "lsmc")
    assert os.listdir(tmp_path) == []


def test_terminated_run_keeps_earlier_outputs(tmp_path):
    """SIGTERM in the middle of a long `kb16 gen`: status 130, one line, earlier files as they were."""
    prev = tmp_path / "prev.kb16"
    prev.write_bytes(b"earlier")
    p = subprocess.Popen([sys.executable, "-m", "lsmc", "kb16", "gen", "--keys", "3000000", "--out0", str(prev),
                          "--out1", str(tmp_path / "o1")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Signal once the tool is past its imports and generating (1 s of its own CPU time), however busy
    # the machine is; the generation itself takes several seconds more.
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        if int(fields[11]) + int(fields[12]) >= os.sysconf("SC_CLK_TCK"):
            break
        time.sleep(0.05)
    p.terminate()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.strip() == "kb16: interrupted" and "Traceback" not in err
    assert prev.read_bytes() == b"earlier" and sorted(os.listdir(tmp_path)) == ["prev.kb16"]
