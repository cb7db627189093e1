"""An output that cannot be written (a full disk: `> /dev/full`) ends every command with one error line and
exit status 1 (cliutil.tool_main, the wrapper of every tool and of the `lsmc` dispatcher); other OS errors
are bugs and still show."""
import errno
import os
import subprocess
import sys

import pytest

from lsmc import cliutil
from lsmc.model import kb16, workloads
from lsmc.paths import ROOT

FULL = "/dev/full"
ENOSPC = os.strerror(errno.ENOSPC)
pytestmark = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this system")


def lsmc(argv, stdout) -> subprocess.CompletedProcess:
    with open(stdout, "w") as out:
        return subprocess.run([sys.executable, "-m", "lsmc", *argv], cwd=ROOT, stdout=out, stderr=subprocess.PIPE,
                              text=True, timeout=120)


@pytest.fixture
def run_file(tmp_path):
    path = tmp_path / "r0.kb16"
    path.write_bytes(kb16.encode(workloads.make_runs("uniform", 400, 0.25, 3)[0]))
    return path


@pytest.mark.parametrize("argv,prog", [
    (["kb16", "decode", "RUN"], "kb16"),  # a long listing: fails while printing
    (["kb16", "gen", "--keys", "20", "--out0", "A", "--out1", "B"], "kb16"),  # a one-line summary: fails at the flush
    (["--help"], "lsmc"),  # the dispatcher's own text
])
def test_full_disk_is_one_line_and_status_1(argv, prog, run_file, tmp_path):
    argv = [str(run_file) if a == "RUN" else str(tmp_path / a) if a in ("A", "B") else a for a in argv]
    r = lsmc(argv, FULL)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == [f"{prog}: cannot write standard output: {ENOSPC}"], r.stderr


def test_the_same_commands_succeed_on_a_writable_output(run_file, tmp_path):
    r = lsmc(["kb16", "decode", str(run_file)], tmp_path / "out.txt")
    assert r.returncode == 0 and r.stderr == ""
    assert len((tmp_path / "out.txt").read_text().splitlines()) == len(run_file.read_bytes()) // 16


def test_write_errors_and_bugs_apart(tmp_path, capsys):
    """In the wrapper: a failed write names its file; an OS error that is no write failure propagates."""
    def failing(err):
        @cliutil.tool_main("t")
        def main(argv=None):
            raise err
        return main

    assert failing(OSError(errno.EIO, os.strerror(errno.EIO), str(tmp_path / "x.csv")))([]) == 1
    assert capsys.readouterr().err == f"t: cannot write {tmp_path / 'x.csv'}: {os.strerror(errno.EIO)}\n"
    with pytest.raises(FileNotFoundError):
        failing(FileNotFoundError(errno.ENOENT, "No such file or directory", "in.kb16"))([])
    assert failing(cliutil.CliError("bad"))([]) == 2
    assert capsys.readouterr().err == "t: bad\n"
