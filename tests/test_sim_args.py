"""The simulators' shared library (sim/common): one strict option parser, checked inputs and outputs,
commands that answer errors instead of crashing, the UART over TCP and a pseudo-terminal, the DDR
model's AXI protocol checks, the NAND fault options of the full SoC.

Every refusal must be exit status 2 with one line naming the option (never a signal, never a number
silently cut to its width), and must come before any simulation work."""
from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import threading
import time

import pytest

from lsmc.build import regmap
from lsmc.sim import nandsim, soc

DDR = regmap.memmap().base("DDR")  # from the one memory map
TOO_BIG = str(1 << 64)           # does not fit in 64 bits
BIG64 = "0x100000000"            # fits in 64 bits, not in the 32 of an address or a SIM_ARG
NOT_NUMBERS = ["abc", "12x", "-1", "+5", " 7", "1_000", "0x", "0x+4", "\u0663", "1e3", ""]


@pytest.fixture(scope="module")
def exe():
    return soc.build_soc()


@pytest.fixture(scope="module")
def elf():
    return soc.build_selftest()


@pytest.fixture(scope="module")
def nand_exe():
    return nandsim.build_sim()


def _refused(cmd, *needles, stdin=None):
    t0 = time.monotonic()
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60, input=stdin)
    assert res.returncode == 2, (cmd, res.returncode, res.stderr[-500:])
    for n in needles:
        assert n in res.stderr, (cmd, n, res.stderr)
    assert "cycles in" not in res.stderr  # refused at start-up, nothing simulated
    assert time.monotonic() - t0 < 30
    return res


# ------------------------------------------------------------------------------------ SoC options
@pytest.mark.parametrize("opt, value", [
    ("--arg", BIG64), ("--arg", TOO_BIG), ("--uart-div", BIG64), ("--uart-div", "-2"),
    ("--nand-blocks", BIG64), ("--nand-blocks", "0"), ("--ddr-latency", BIG64), ("--max-cycles", TOO_BIG),
    ("--max-cycles", "0"), ("--uart-gap", TOO_BIG), ("--uart-tcp", "65536"), ("--nand-bit-errors", BIG64),
    ("--nand-stuck-busy", "2"), ("--nand-bad", "4096"), ("--nand-bad", "1,,2"),
])
def test_soc_numbers_checked_against_their_width(exe, elf, opt, value):
    _refused([exe, elf, opt, value], opt)


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_soc_non_numbers_refused(exe, elf, value):
    _refused([exe, elf, "--arg", value], "--arg")


@pytest.mark.parametrize("spec, needle", [
    (f"{BIG64}={{f}}", "--load address"), (f"{{f}}@{BIG64}", "--load address"), ("0x40000000", "--load wants"),
])
def test_soc_load_address_width(exe, elf, tmp_path, spec, needle):
    f = tmp_path / "x.bin"
    f.write_bytes(b"1234")
    _refused([exe, elf, "--load", spec.format(f=f)], needle)


@pytest.mark.parametrize("spec, needle", [
    (f"{BIG64}:16={{d}}/o", "--dump address"), (f"0x40000000:{BIG64}={{d}}/o", "--dump length"),
    ("0xFFFFFFF0:0x20={d}/o", "32-bit address space"), ("0x10:16={d}/o", "outside DDR"),
    ("0x40000000:16={d}", "is a directory"), ("0x40000000:16={d}/no/such/o", "cannot write"),
])
def test_soc_dump_checked_at_start(exe, elf, tmp_path, spec, needle):
    _refused([exe, elf, "--dump", spec.format(d=tmp_path)], needle)


def test_soc_inputs_missing_empty_directory(exe, elf, tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    _refused([exe, elf, "--load", f"0x40000000={tmp_path / 'missing'}"], "--load", "cannot read")
    _refused([exe, elf, "--load", f"0x40000000={empty}"], "--load", "is empty")
    _refused([exe, elf, "--load", f"0x40000000={tmp_path}"], "--load", "is a directory")
    _refused([exe, tmp_path], "firmware", "is a directory")
    _refused([exe, empty], "firmware", "is empty")
    _refused([exe], "missing FIRMWARE")
    _refused([exe, elf, elf], "unexpected argument")
    _refused([exe, elf, "--arg", "1", "--arg", "2"], "--arg given twice")


def test_soc_outputs_checked_at_start(exe, elf, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        for opt in ("--log", "--wave"):
            _refused([exe, elf, opt, tmp_path], opt, "is a directory")
            _refused([exe, elf, opt, tmp_path / "no" / "such"], opt, "cannot write")
            if os.geteuid() != 0:  # root writes anywhere
                _refused([exe, elf, opt, ro / "x"], opt, "cannot write")
    finally:
        ro.chmod(0o700)


def test_soc_load_both_spellings_and_dump_atomic(exe, elf, tmp_path):
    """FILE@ADDR and ADDR=FILE load the same bytes; ADDR:LEN@FILE dumps like ADDR:LEN=FILE; a dump
    replaces its file whole."""
    blob = random.Random(3).randbytes(4096)
    (tmp_path / "in.bin").write_bytes(blob)
    outs = []
    for i, (load, dump) in enumerate([(f"{tmp_path}/in.bin@{DDR + (1 << 20):#x}", "{a:#x}:1024@{p}"),
                                      (f"{DDR + (1 << 20):#x}={tmp_path}/in.bin", "{a:#x}:1024={p}")]):
        out = tmp_path / f"out{i}.bin"
        out.write_bytes(b"old" * 1000)
        res = subprocess.run([str(exe), str(elf), "--arg", "3", "--load", load,
                              "--dump", dump.format(a=DDR + (2 << 20), p=out)], capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr
        outs.append((re.search(r"ddr: bad 0 sum 0x[0-9a-f]+", res.stdout).group(0), out.read_bytes()))
        assert len(outs[-1][1]) == 1024
        assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
    assert outs[0] == outs[1]


def test_soc_cpu_time_line_and_line_buffered_stdout(exe, elf):
    """stdout piped: the console arrives line by line while the simulation still runs."""
    proc = subprocess.Popen([str(exe), str(elf), "--arg", "4", "--max-cycles", "3000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert "hang" in first or first, first
    assert proc.poll() is None  # still simulating when the first line came
    out, err = proc.communicate(timeout=300)
    assert re.search(r"sim: cpu time [\d.]+ s = [\d.]+ Mcycles/s per core", err)
    assert re.search(r"sim: 3000000 cycles in [\d.]+ s", err)


# ------------------------------------------------------------------------------------ UART link
def _start(cmd):
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(r"sim: UART on (\S+)", line)
    assert m, line
    # Keep draining stderr (progress lines): a full pipe would stop the simulation, and its last lines
    # say what the simulation did when a session times out.
    proc.stderr_lines = []
    threading.Thread(target=lambda: proc.stderr_lines.extend(proc.stderr), daemon=True).start()
    return proc, m.group(1)


def _echo_session(port, proc):
    got = b""
    deadline = time.monotonic() + 120

    def expect(s):
        nonlocal got
        while s not in got:
            assert time.monotonic() < deadline, (got, proc.poll(), "".join(proc.stderr_lines[-20:]))
            got += port.read(1)  # byte-wise: pyserial's socket:// drops a partial read when the peer closes
        got = got[got.index(s) + len(s):]

    expect(b"> ")
    port.write(b"over tcp\n")
    expect(b"echo: over tcp\n")
    expect(b"> ")
    port.write(b"quit\n")
    expect(b"echo: quit\n")


def test_uart_over_tcp_with_pyserial(exe, elf):
    serial = pytest.importorskip("serial")
    proc, url = _start([exe, elf, "--arg", "5", "--uart-tcp", "0", "--quiet", "--max-cycles", "400000000"])
    try:
        assert url.startswith("socket://127.0.0.1:")
        port = serial.serial_for_url(url, timeout=0.2)
        _echo_session(port, proc)
        port.close()
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
        proc.wait()
    # loopback only: the port is not reachable on another address of this machine
    host = socket.gethostbyname(socket.gethostname())
    if not host.startswith("127."):
        proc, url = _start([exe, elf, "--arg", "5", "--uart-tcp", "0", "--quiet", "--max-cycles", "100000000"])
        try:
            with pytest.raises(OSError):
                socket.create_connection((host, int(url.rsplit(":", 1)[1])), timeout=2)
        finally:
            proc.kill()
            proc.wait()


@pytest.mark.xfail(strict=False, reason="race, open: pyserial's open() flushes the pty's input (tcflush), so a prompt "
                   "written before it opened is lost and its next read reports readiness without data; a raw "
                   "os.read of the same pty gets the prompt")
def test_uart_over_pty_with_pyserial(exe, elf):
    serial = pytest.importorskip("serial")
    proc, path = _start([exe, elf, "--arg", "5", "--uart-pty", "--quiet", "--max-cycles", "400000000"])
    try:
        assert path.startswith("/dev/pts/")
        port = serial.Serial(path, timeout=0.2)
        _echo_session(port, proc)
        assert proc.wait(timeout=120) == 0
        port.close()
    finally:
        proc.kill()
        proc.wait()


def test_uart_tcp_port_taken(exe, elf):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        _refused([exe, elf, "--uart-tcp", str(s.getsockname()[1])], "--uart-tcp", "cannot listen")
    finally:
        s.close()
    _refused([exe, elf, "--uart-tcp", "0", "--uart-pty"], "choose one")


# ------------------------------------------------------------------------------------ NAND harness
@pytest.mark.parametrize("args, needle", [
    (["--blocks", "abc"], "--blocks"), (["--blocks", TOO_BIG], "--blocks"), (["--blocks", BIG64], "--blocks"),
    (["--targets", "3"], "--targets"), (["--pages", "48"], "power of two"), (["--bad", "64"], "--bad"),
    (["--axi-stall", "100"], "--axi-stall"), (["--seed", "-1"], "--seed"), (["--tr"], "needs a value"),
    (["--bogus"], "unknown option"),
])
def test_nand_harness_options(nand_exe, args, needle):
    _refused([nand_exe, *args], needle, stdin="quit\n")


def test_nand_harness_bad_requests_answer_err_and_go_on(nand_exe):
    reqs = ["peek 7 0", "stats 5", "peek 0 99999999", "poke 0 4096 00", "param 2", "model 9 errors 1",
            "model 0 bogus 1", "w zz 1", "w 0 100000000", "mr ffffffff 10", "mw 0 abc", "run", "run x",
            f"run {TOO_BIG}", "peek -1 0", "stats", "nonsense"]
    script = "".join(f"{r}\ncycles\n" for r in reqs) + "stats 0\nquit\n"
    res = subprocess.run([str(nand_exe)], input=script, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2 * len(reqs) + 2, lines
    for i, r in enumerate(reqs):
        assert lines[2 * i].startswith("err "), (r, lines[2 * i])
        assert lines[2 * i + 1].startswith("ok "), (r, lines[2 * i + 1])
    assert lines[-2].startswith("ok commands=") and lines[-1] == "ok"


# ------------------------------------------------------------------------------------ IP and DMA harnesses
@pytest.fixture(scope="module")
def ip_exe():
    from lsmc.sim import ipsim
    return ipsim.build(128)


@pytest.mark.parametrize("line, needle", [
    ("write 0x100000020 1", "bad offset"), ("write 0x20 0x100000000", "bad value"), ("read -4", "bad offset"),
    ("expect 0x18 1 0x1ffffffff", "bad mask"), ("load 2 x", "input (0..1)"), ("step 12x", "bad cycles"),
    ("stall key0 1", "bad stall probability"), ("stall key0 nan", "bad stall probability"),
])
def test_ip_harness_numbers_checked(ip_exe, line, needle):
    res = subprocess.run([str(ip_exe)], input=line + "\n", capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and needle in res.stderr, res.stderr


def test_ip_harness_files_checked(ip_exe, tmp_path):
    _refused([ip_exe, tmp_path], "script", "is a directory")
    _refused([ip_exe, tmp_path / "missing"], "script", "cannot read")
    _refused([ip_exe, "--wave", tmp_path / "no" / "w.fst"], "--wave", "cannot write")
    _refused([ip_exe, "--bogus"], "unknown option")


def test_dma_harness_numbers_checked():
    from test_dma import exe_for  # tests/ is on sys.path (pytest prepend import mode)
    for line in ("rd 0x100000000", "wr 0 4294967296", "run -1", "seed 1_0"):
        res = subprocess.run([str(exe_for(128))], input=line + "\n", capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and re.search(r"FATAL (bad number|.* larger than the maximum)", res.stdout), \
            (line, res.stdout)


@pytest.mark.slow
def test_soc_nand_bit_errors_corrected_by_the_storage_flow(exe):
    """--nand-bit-errors reaches the full SoC's NAND models: every page read carries flips, the
    controller's ECC corrects them, the storage flow still passes and the harness counts them."""
    from lsmc.build import firmware
    firmware.build_firmware()
    res = soc.run_soc(firmware.BUILD_FW / "storage.elf", arg=1, exe=exe, timeout=1800,
                      uart_in="storage 64 25 2\nexit 0\n", uart_prompt="storage> ", extra=["--nand-bit-errors", "2"])
    assert res.returncode == 0 and "storage: PASS" in res.uart, res.uart[-2000:] + res.stderr[-1000:]
    flips = [int(n) for n in re.findall(r"sim: nand\d: .* (\d+) bit errors", res.stderr)]
    assert flips and sum(flips) > 0, res.stderr
    corrected = re.search(r"(\d+) ECC corrections", res.uart)
    assert corrected and int(corrected.group(1)) > 0, res.uart[-2000:]
