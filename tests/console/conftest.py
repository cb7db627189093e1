"""The console suite's targets. The same tests run against whatever serial line `--target` names:

    pytest tests/console                                      # --target sim (default): the SoC simulator
    pytest tests/console --target boardsim                    # the LiteX board simulation (serial2tcp)
    pytest tests/console --target board --port /dev/ttyUSB1   # a board's USB-UART, 115200 8N1

`--target` and `--port` are pytest-embedded's own options; each test gets pytest-embedded-serial's
`dut` (a SerialDut on the pyserial URL, with pexpect's expect()). For `sim` one simulator,
`VLsmcSoc lsmc.elf --arg 1 --uart-tcp 0`, serves the whole session on a loopback port it picks; each
test connects anew (the harness accepts the next client when one leaves).
"""
from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

import pytest

from lsmc.console import BAUD, PROMPT, Console, ConsoleError, open_port

TARGETS = ("sim", "boardsim", "board")
TIMEOUT_SCALE = {"boardsim": 10}  # per target: every wait of a test times this


@dataclass
class Endpoint:
    """The serial line the session's tests talk to."""
    target: str
    url: str
    banner: str  # what the first connection read before the first prompt
    proc: subprocess.Popen | None = None
    stderr: list = field(default_factory=list)


def _target(config) -> str:
    t = config.getoption("target", default=None) or "sim"
    if t not in TARGETS:
        raise pytest.UsageError(f"--target {t!r}: the console suite runs on {', '.join(TARGETS)}")
    return t


def _drain(stream, sink: list) -> None:
    for line in iter(stream.readline, b""):
        sink.append(line.decode("latin-1"))


def _start_sim():
    """VLsmcSoc + lsmc.elf, built (cached) unless LSMC_CONSOLE_SIM / LSMC_CONSOLE_FW name other builds."""
    import os

    from lsmc.build.firmware import build_firmware
    from lsmc.sim.soc import build_soc
    exe = os.environ.get("LSMC_CONSOLE_SIM") or build_soc()
    elf = os.environ.get("LSMC_CONSOLE_FW") or build_firmware()
    # Console scenario (SIM_ARG 1); the cycle guard is far beyond a session (~1 Mcycles/s at most).
    proc = subprocess.Popen([str(exe), str(elf), "--arg", "1", "--uart-tcp", "0", "--quiet",
                             "--max-cycles", str(10**12)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err: list = []
    threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"socket://127\.0\.0\.1:\d+", "".join(err))
        if m:
            return proc, m.group(0), err
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"the simulator did not announce its --uart-tcp port; stderr: {''.join(err)[-2000:]}")


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_boardsim():
    """boards/sim's LiteX board simulation (BIOS calibration, hand-over, then lsmc.elf) with LiteX's
    serial2tcp module in place of serial2console: built once in build/boards/sim-console (several
    minutes), its sim_config.js switched to serial2tcp only while the simulator starts (the build's
    stamp covers that file)."""
    import importlib.util
    import json

    from lsmc.boards import litex_soc
    from lsmc.boards.ports import BOARDS_BUILD
    from lsmc.build.firmware import build_firmware
    from lsmc.paths import ROOT
    spec = importlib.util.spec_from_file_location("lsmc_board_sim", ROOT / "boards" / "sim" / "target.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = BOARDS_BUILD / "sim-console"
    # One worker at a time builds the folder and starts its simulator (pytest-xdist: the other suites
    # of the board simulation); sim_config.js is only switched to serial2tcp while one starts.
    from lsmc import build
    with build.lock(out / ".lock"):
        # The console line at the sim board's fast rate (its firmware built for it): the line's speed is
        # simulated, and at 115200 baud the SoC's output took most of each test's time.
        litex_soc.build_target(mod.board_with_baud(mod.FAST_UART_BAUD), out,
                               firmware=build_firmware(baud=mod.FAST_UART_BAUD), run=True)
        exe = mod.compile_sim(out)
        gw = out / "gateware"
        cfg_path = gw / "sim_config.js"
        original = cfg_path.read_text()
        port = _free_port()
        cfg = json.loads(original)
        for m in cfg:
            if m.get("module") == "serial2console":
                m["module"], m["args"] = "serial2tcp", {"port": str(port)}
        cfg_path.write_text(json.dumps(cfg, indent=4))
        err: list = []
        try:
            # Line-buffered: into a pipe the simulator's stdio would hold "[serial2tcp] loaded" in a 4 KiB
            # block buffer, and the wait below saw nothing (the whole suite errored at setup).
            # SIGPIPE ignored (inherited through exec): a test that gives up while output is still on its
            # way closes the socket, and serial2tcp's next write would otherwise end the simulator for every
            # test after it (seen: one timeout, then 42 "connection refused").
            proc = subprocess.Popen(["stdbuf", "-oL", "-eL", str(exe)], cwd=gw, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT,
                                    preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
            threading.Thread(target=_drain, args=(proc.stdout, err), daemon=True).start()
            # No probing connection: serial2tcp would keep writing to it once closed (SIGPIPE ends the
            # simulator). Its start-up line says it is listening.
            deadline = time.monotonic() + 120
            while "[serial2tcp] loaded" not in "".join(err):
                if time.monotonic() > deadline or proc.poll() is not None:
                    proc.kill()
                    raise RuntimeError(f"board simulation did not start serial2tcp: {''.join(err)[-2000:]}")
                time.sleep(0.2)
            time.sleep(1)
        finally:
            cfg_path.write_text(original)
    return proc, f"socket://127.0.0.1:{port}", err


@pytest.fixture(scope="module")
def endpoint(request):
    """Start (sim, boardsim) or name (board) the serial line; read up to the first prompt once.
    Module scope: the simulator runs freely while it waits at the prompt, so it must stop when the
    console tests end, not hold a core for the rest of the suite (a session fixture did: 20 CPU-min)."""
    target = _target(request.config)
    proc, err = None, []
    if target == "board":
        url = request.config.getoption("port", default=None)
        if not url:
            raise pytest.UsageError("--target board needs --port (e.g. /dev/ttyUSB1)")
    elif target == "sim":
        proc, url, err = _start_sim()
    else:
        proc, url, err = _start_boardsim()
    try:
        ser = None
        for _ in range(100):  # the listener may need a moment after announcing itself
            try:
                ser = open_port(url, BAUD)
                break
            except ConsoleError:
                time.sleep(0.1)
        if ser is None:
            ser = open_port(url, BAUD)
        con = Console(ser)
        try:
            # A fresh simulator has printed its banner and a prompt; a board may be anywhere: ask.
            if target == "board":
                banner = con.sync(timeout=10)
            else:
                banner = con.read_until(PROMPT, timeout=300)
        finally:
            ser.close()
        ep = Endpoint(target, url, banner, proc, err)
        yield ep
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


# pytest-embedded's fixtures, pointed at the endpoint: `dut` is then a SerialDut on that URL.
def socket_line(url: str):
    """pyserial's socket:// port, but with a true `in_waiting`: pyserial's says 1 whenever the socket is
    readable, and pytest-embedded's reader takes `read_all()` (in_waiting bytes) every 50 ms, which
    made the line 20 characters per second."""
    import fcntl
    import struct
    import termios

    import serial
    from serial.urlhandler.protocol_socket import Serial as SocketSerial

    class Line(SocketSerial):
        @property
        def in_waiting(self):
            if not self.is_open:
                raise serial.PortNotOpenError()
            n = struct.unpack("I", fcntl.ioctl(self._socket.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
            return n or super().in_waiting  # 0 bytes: let pyserial see a closed peer

    line = Line(None, baudrate=BAUD, timeout=0.05)
    line.port = url
    line.open()
    return line


@pytest.fixture
def port(request):
    # pytest-embedded asks every test for `port` (an autouse fixture): start the line only for tests
    # that talk to it.
    if "dut" not in request.fixturenames:
        return None
    url = request.getfixturevalue("endpoint").url
    return socket_line(url) if url.startswith("socket://") else url


@pytest.fixture
def embedded_services():
    return "serial"


@pytest.fixture
def baud():
    return BAUD


class Session:
    """The test's view of the console through pytest-embedded's dut: `cmd` sends a line and returns the
    output up to the prompt that follows it."""

    def __init__(self, dut, endpoint):
        self.dut = dut
        self.endpoint = endpoint
        self._n = 0
        # The LiteX board simulation (LiteDRAM, BIOS CPU and the SoC in one Verilator model) ran ~20 k
        # cycles/s here at load 8: a few characters per second at 115200 baud, so its waits are longer.
        self.scale = TIMEOUT_SCALE.get(endpoint.target, 1)

    def sync(self, timeout=60):
        """Make the next prompt ours, whatever is still queued (output the previous connection left,
        prompts of garbage lines): end any partial line (the console may be discarding an over-long
        one), type a unique marker, wait for its echo, erase it, send the line."""
        self._n += 1
        marker = f"zq{self._n:03d}"
        self.write(b"\n" + marker.encode())
        self.dut.expect_exact(marker, timeout=timeout * self.scale)
        self.write(b"\x08" * len(marker) + b"\n")
        self.dut.expect_exact(PROMPT, timeout=timeout * self.scale)

    def write(self, data: bytes) -> None:
        self.dut.serial.proc.write(data)

    def cmd(self, line: str | bytes, timeout: float = 60) -> str:
        self.write((line.encode("latin-1") if isinstance(line, str) else line) + b"\n")
        return self.until(PROMPT, timeout)

    def until(self, text: str, timeout: float = 60) -> str:
        """Output up to and including `text` (literal)."""
        before = self.dut.expect_exact(text, timeout=timeout * self.scale, return_what_before_match=True)
        return before.decode("latin-1") + text

    def check_alive(self, n: int = 64) -> dict:
        """After anything odd: the prompt comes back and a small job still passes."""
        from lsmc.report.table3 import parse_run_line
        self.sync()
        out = self.cmd(f"run {n}", timeout=300)
        row = parse_run_line(out)
        assert row["pass"] and row["entries_in"] == n, out
        return row


@pytest.fixture
def console(dut, endpoint):
    s = Session(dut, endpoint)
    s.sync()
    return s
