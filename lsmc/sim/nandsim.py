"""Host side of the standalone NAND simulation (hw/ip/nand/dv/nand_harness.cpp): builds the controller and
the harness, runs it as a subprocess speaking its line protocol, and offers a small driver that
mirrors fw/drivers/nand.c (timing registers per ONFI mode, command queue, completions).

    from lsmc import nandsim
    with nandsim.NandSim(blocks=64) as s:
        s.init(mode=5)
        c = s.cmd(nandsim.OP_READ_ID, length=5)
"""
from __future__ import annotations

import math
import random
import re
import subprocess
from collections import namedtuple
from pathlib import Path

from lsmc import build
from lsmc.build import onfi, regmap
from lsmc.model.bch import Bch
from lsmc.sim.pads import TAPS

ROOT = build.ROOT
GEN = build.GEN / "nand"
SIMDIR = build.BUILD / "sim" / "nand"

# Controller opcodes and completion errors: NandOp / NandErr (hw/ip/nand/rtl/NandTypes.scala), read from the
# generated nand_regs.json.
OPS = regmap.load("nand").enums["OP"].values
ERRS = regmap.load("nand").enums["E"].values
(OP_RESET, OP_READ_ID, OP_READ_PARAM, OP_READ_STATUS, OP_SET_FEATURES, OP_GET_FEATURES, OP_PAGE_READ,
 OP_CHANGE_COL, OP_PROGRAM, OP_ERASE, OP_WAIT_STATUS, OP_READ_DATA, OP_READ_CACHE, OP_READ_CACHE_END,
 OP_PROGRAM_CACHE) = (OPS[n] for n in (
    "RESET", "READ_ID", "READ_PARAM", "READ_STATUS", "SET_FEATURES", "GET_FEATURES", "PAGE_READ", "CHANGE_COL",
    "PROGRAM", "ERASE", "WAIT_STATUS", "READ_DATA", "READ_CACHE", "READ_CACHE_END", "PROGRAM_CACHE"))
# CMD_CTRL flag bits (NandController.scala): MPLANE turns PAGE_READ / PROGRAM / ERASE into the first plane's
# command of a multi-plane operation (32h / 11h / D1h, then tDBSY) and READ_DATA into 06h-E0h (select the plane).
F_MPLANE = 1 << 12
ERR_NAMES = {v: n for n, v in ERRS.items()}
(ERR_OK, ERR_TIMEOUT, ERR_NAND_FAIL, ERR_BAD_CMD, ERR_DMA_BOUNDS, ERR_DMA_BUS, ERR_ECC) = (ERRS[n] for n in (
    "OK", "TIMEOUT", "NAND_FAIL", "BAD_CMD", "DMA_BOUNDS", "DMA_BUS", "ECC_UNCORRECTABLE"))

# Register offsets, read from the generated nand_regs.json (lsmc.build.regmap) on first use.
REG = regmap.LazyOffsets("nand")

DDR = regmap.memmap().base("DDR")  # generated from hw/soc/map/SocMap.scala
CLK_NS = 10

# ONFI asynchronous timing modes 0..5 (ns): the one table, hw/ip/nand/data/onfi_timing.json.
ONFI_MODES = onfi.modes("async")


def timing_cycles(mode: int, clk_ns: int = CLK_NS) -> dict:
    """Register values (cycles) for ONFI timing `mode` at clock period clk_ns; see hw/ip/nand/doc/nand.md."""
    t = ONFI_MODES[mode]
    c = lambda *ns: max(1, max(math.ceil(x / clk_ns) for x in ns))
    return dict(
        T_WP=c(t["tWP"], t["tDS"]), T_WH=c(t["tWH"], t["tDH"], t["tCLH"], t["tALH"]), T_WC=c(t["tWC"]),
        T_RP=c(t["tRP"]),
        T_REH=c(t["tREH"]), T_RC=c(t["tRC"]), T_CS=c(t["tCS"]), T_HOLD=c(t["tCH"], t["tCLH"], t["tALH"]),
        T_CLS=c(t["tCLS"], t["tALS"]), T_CLR=c(t["tCLR"], t["tAR"], t["tIR"]), T_WHR=c(t["tWHR"]), T_ADL=c(t["tADL"]),
        T_RHW=c(t["tRHW"], t["tRHZ"]), T_RR=c(t["tRR"]), T_WB=c(t["tWB"]), T_CCS=c(t["tCCS"]),
        SAMPLE=math.ceil(t["tREA"] / clk_ns) + 1)


def timing_words(mode: int) -> dict:
    v = timing_cycles(mode)
    pack = lambda a, b, c, d: a | b << 8 | c << 16 | d << 24
    return {
        "TIMING0": pack(v["T_WP"], v["T_WH"], v["T_WC"], v["T_RP"]),
        "TIMING1": pack(v["T_REH"], v["T_RC"], v["T_CS"], v["T_HOLD"]),
        "TIMING2": pack(v["T_CLS"], v["T_CLR"], v["T_WHR"], v["T_ADL"]),
        "TIMING3": pack(v["T_RHW"], v["T_RR"], v["T_WB"], v["T_CCS"]),
        "SAMPLE": v["SAMPLE"],
    }


# NV-DDR timing modes 0..5 (ps, and 1/100 tCK): the same data file.
NVDDR_MODES = onfi.modes("nvddr")
# CLK period (controller cycles) per NV-DDR mode at 100 MHz: the smallest whole number of cycles >= the
# mode's tCK (CLK comes from the output DDR flops at the controller clock, so 10 or 20 ns near the top):
# modes 0..2 at 50 / 30 / 20 ns, modes 3 and 4 at 20 ns (100 MT/s), mode 5 at 10 ns = two bytes per cycle.
NVDDR_CK_DIV = {m: max(1, math.ceil(onfi.modes("nvddr")[m]["tCK"] / (CLK_NS * 1000))) for m in range(6)}
# The NV-DDR part of the harness (--part mt29f16g08ababa): geometry as hw/ip/nand/model onfi::mt29f16g08ababa().
NVDDR_PART = dict(page_bytes=4096, spare_bytes=224, pages=128, planes=2)


def nvddr_words(mode: int, clk_ns: int = CLK_NS) -> dict:
    """Register values for NV-DDR `mode`: DDR_CFG and the TIMING fields the NV-DDR layer uses
    (hw/ip/nand/doc/nand.md)."""
    if mode not in NVDDR_CK_DIV:
        raise ValueError(f"NV-DDR mode {mode}: ONFI defines modes {sorted(NVDDR_CK_DIV)}")
    t = NVDDR_MODES[mode]
    c = lambda *ps: max(1, max(math.ceil(x / (clk_ns * 1000)) for x in ps))
    words = timing_words(0)  # fields the NV-DDR layer does not read keep their mode-0 values
    pack = lambda a, b, cc, d: a | b << 8 | cc << 16 | d << 24
    w0 = lambda reg, i: words[reg] >> 8 * i & 0xFF
    words["TIMING1"] = pack(w0("TIMING1", 0), w0("TIMING1", 1), c(t["tCS"]), c(t["tCH"]))
    words["TIMING2"] = pack(w0("TIMING2", 0), w0("TIMING2", 1), c(t["tWHR"]), c(t["tADL"]))
    words["TIMING3"] = pack(c(t["tRHW"]), c(t["tRR"]), c(t["tWB"]), c(t["tCCS"]))
    words["DDR_CFG"] = 1 | NVDDR_CK_DIV[mode] << 4 | c(t["tCAD"]) << 8 | c(t["tWRCK"]) << 16 | c(t["tDQSHZ"]) << 24
    words["DDR_CFG2"] = c(t["tCEH"])
    return words


def onfi_crc16(data: bytes) -> int:
    crc = 0x4F4E
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def _variant(path: Path, pad_input_cycles: int) -> Path:
    """The build folder of the controller generated with `pad_input_cycles` (0: the default one)."""
    return path if not pad_input_cycles else path.with_name(f"{path.name}_pad{pad_input_cycles}")


def generate(pad_input_cycles: int = 0) -> Path:
    """Generate NandController.v (+ nand_regs.h), the default parameters but for the pads' input register
    stages (NandParams.padInputCycles; lsmc/boards/nand_pads.py PAD_INPUT_CYCLES behind the NV-DDR pad
    wrapper); returns the Verilog."""
    gen = _variant(GEN, pad_input_cycles)
    pads = ["--pad-input-cycles", str(pad_input_cycles)] if pad_input_cycles else []
    build.generate("nand", "nand.Generate", gen, args=["--out", str(gen), *pads])
    return gen / "NandController.v"


def build_sim(pad_input_cycles: int = 0) -> Path:
    """Generate NandController.v (+ nand_regs.h) and build the Verilator harness; returns the binary. The
    harness models the pads' input stages the controller reports (SAMPLE.PAD_CYCLES)."""
    v = generate(pad_input_cycles)
    model = ROOT / "hw" / "ip" / "nand" / "model"
    common_srcs, common_flags = build.sim_common(model / "onfi_model.h",
                                                 model / "nvddr_pads.h", v.parent / "nand_regs.h")
    return build.verilate("NandController", [v],
                          [ROOT / "hw/ip/nand/dv/nand_harness.cpp", model / "onfi_model.cpp", *common_srcs],
                          _variant(SIMDIR, pad_input_cycles),
                          flags=common_flags + ["-CFLAGS", f"-I{model} -I{v.parent}"], cflags="-O2")


# ---------------------------------------------------------------- NV-DDR read capture settings
# The DQ delay line: taps per platform from the pad wrapper; ~25 ps a tap (ECP5 DELAYF, the model's).
TAP_PS = 25
SLOTS = 64  # DDR_CAPTURE.SLOT: 6 bits


def capture_word(slot: int, tap: int) -> int:
    """DDR_CAPTURE with SLOT (bits 14:9) and TAP (bits 8:0)."""
    return slot << 9 | tap


def capture_taps(taps: int, tap_ps: int, half_ps: int) -> int:
    """Taps worth trying: a line longer than half a cycle only repeats positions of the next slot."""
    return min(taps, -(-half_ps // tap_ps))


def capture_positions(taps: int, tap_ps: int, half_ps: int, step: int = 1):
    """[(position ps, slot, tap)] of the capture settings in increasing sample position (slot by slot, each
    slot's taps from the top down): slot x half cycle later, tap x tap_ps earlier (the delay line delays
    the data). With taps x tap_ps shorter than half a cycle (ECP5: 3.175 of 5 ns) the positions leave
    gaps. fw/drivers/nand.c nand_train_capture walks the same order."""
    n = capture_taps(taps, tap_ps, half_ps)
    return [(slot * half_ps - tap * tap_ps, slot, tap) for slot in range(SLOTS) for tap in reversed(range(0, n, step))]


def nearest_capture(pos: int, taps: int, tap_ps: int, half_ps: int):
    """(position, slot, tap) of the reachable setting nearest to sample position `pos` ps (as the driver
    picks it: in the first slot reaching it, or the top of the slot before when it falls in a gap)."""
    n = capture_taps(taps, tap_ps, half_ps)
    slot = min(SLOTS - 1, 0 if pos <= 0 else -(-pos // half_ps))
    d = max(0, (slot * half_ps - pos + tap_ps // 2) // tap_ps)
    if d <= n - 1:
        tap = d
    elif slot > 0 and pos - (slot - 1) * half_ps < slot * half_ps - (n - 1) * tap_ps - pos:
        slot, tap = slot - 1, 0
    else:
        tap = n - 1
    return slot * half_ps - tap * tap_ps, slot, tap


class SimError(RuntimeError):
    pass


class SimViolation(SimError):
    """The NAND model (or the harness) found a protocol or timing violation."""


Completion = namedtuple("Completion", "op err target tag valid status corrected corr_map unc_map data sectors")
SECTOR_UNCORRECTABLE = 0xF  # COMP_SECTORS nibble of a sector the BCH decoder could not correct


class NandSim:
    def __init__(self, blocks=64, pages=64, page_bytes=2048, spare_bytes=64, targets=2, bad=(), seed=1,
                 tr_ns=None, tprog_ns=None, tbers_ns=None, axi_latency=4, axi_stall_pct=0, part=None, tdqsck_ps=None,
                 tap_ps=None, taps=None, channels=1, pad_input_cycles=0, pad_model=None):
        """`pad_input_cycles`: the controller generated for that many pad register stages ahead of DQ in
        (its own build); `pad_model`: the stages the harness models, when not the controller's own."""
        exe = build_sim(pad_input_cycles)
        if part == "mt29f16g08ababa":  # the NV-DDR part's geometry unless the caller says otherwise
            page_bytes, spare_bytes = NVDDR_PART["page_bytes"], NVDDR_PART["spare_bytes"]
        args = [str(exe), "--blocks", str(blocks), "--pages", str(pages), "--page-bytes", str(page_bytes),
                "--spare-bytes", str(spare_bytes), "--targets", str(targets), "--seed", str(seed),
                "--axi-latency", str(axi_latency), "--axi-stall", str(axi_stall_pct), "--channels", str(channels)]
        if bad:
            args += ["--bad", ",".join(map(str, bad))]
        for flag, v in (("--tr", tr_ns), ("--tprog", tprog_ns), ("--tbers", tbers_ns), ("--part", part),
                        ("--tdqsck-ps", tdqsck_ps), ("--tap-ps", tap_ps or TAP_PS), ("--taps", taps or TAPS["ecp5"]),
                        ("--pad-input-cycles", pad_model)):
            if v is not None:
                args += [flag, str(v)]
        self.geometry = dict(blocks=blocks, pages=pages, page_bytes=page_bytes, spare_bytes=spare_bytes)
        self.targets = targets
        self.channels = channels
        self.channel = 0  # the channel register, memory-port and model requests address (`select`)
        self.tap_ps = tap_ps or TAP_PS  # the DQ delay line (the ECP5's unless the caller says otherwise)
        self.taps = taps or TAPS["ecp5"]
        self.nvddr = False
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.mode = 0

    # ------------------------------------------------------------ protocol
    def req(self, line: str) -> str:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        resp = self.proc.stdout.readline()
        if not resp:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            raise SimError(f"simulator ended (code {self.proc.poll()}) on '{line}': {err.strip()}")
        resp = resp.strip()
        if resp.startswith("VIOLATION"):
            raise SimViolation(resp)
        if resp.startswith("err"):
            raise SimError(f"'{line}': {resp}")
        return resp[2:].strip()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.req("quit")
            except SimError:
                pass
            self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def select(self, channel: int):
        """Address channel `channel` (its registers, models and AXI port) in the requests that follow."""
        if not 0 <= channel < self.channels:
            raise SimError(f"channel {channel} out of range 0..{self.channels - 1}")
        if channel != self.channel:
            self.req(f"ch {channel}")
            self.channel = channel

    def wait_irq(self, max_cycles=3_000_000) -> int:
        """Run until some channel's interrupt line is high; returns the mask of those channels."""
        return int(self.req(f"wait_irq {max_cycles}"))

    def w(self, reg, val: int):
        self.req(f"w {REG.get(reg, reg) if isinstance(reg, str) else reg:x} {val & 0xFFFFFFFF:x}")

    def r(self, reg) -> int:
        return int(self.req(f"r {REG[reg] if isinstance(reg, str) else reg:x}"), 16)

    def mem_write(self, addr: int, data: bytes):
        for i in range(0, len(data), 4096):
            self.req(f"mw {addr + i:x} {data[i:i + 4096].hex()}")

    def mem_read(self, addr: int, n: int) -> bytes:
        return bytes.fromhex(self.req(f"mr {addr:x} {n:x}"))

    def run(self, n: int):
        self.req(f"run {n}")

    def cycles(self) -> int:
        return int(self.req("cycles"))

    def model(self, target: int, key: str, *vals: int) -> str:
        """Model knobs and faults of target `target` (see hw/ip/nand/dv/nand_harness.cpp, `model T key ...`)."""
        return self.req(" ".join(["model", str(target), key, *map(str, vals)]))

    def peek(self, target: int, row: int) -> bytes:
        return bytes.fromhex(self.req(f"peek {target} {row}"))

    def poke(self, target: int, row: int, data: bytes):
        self.req(f"poke {target} {row} {data.hex()}")

    def irq(self) -> int:
        return int(self.req("irq"))

    def touched(self):
        lo, hi = self.req("touched").split()
        return int(lo, 16), int(hi, 16)

    # ------------------------------------------------------------ driver
    def set_timing(self, mode: int):
        for k, v in timing_words(mode).items():
            self.w(k, v)

    def submit(self, op, target=0, row=0, col=0, length=0, dma_addr=0, param=0, ecc=False, split=False, dma=False,
               tag=0, mplane=False):
        self.w("CMD_CTRL", op | target << 8 | ecc << 9 | split << 10 | dma << 11 | (F_MPLANE if mplane else 0)
               | (tag & 0xFFFF) << 16)
        self.w("CMD_ROW", row)
        self.w("CMD_COL", col)
        self.w("CMD_LEN", length)
        self.w("CMD_DMA", dma_addr)
        self.w("CMD_PARAM", param)
        self.w("CMD_PUSH", 1)

    def complete(self, max_cycles=3_000_000) -> Completion:
        self.req(f"wait_comp {max_cycles}")
        info, st, data, sec = self.r("COMP_INFO"), self.r("COMP_STATUS"), self.r("COMP_DATA"), self.r("COMP_SECTORS")
        if not info >> 9 & 1:
            raise SimError(f"COMP_INFO not valid although STATUS said so: {info:#x}")
        self.w("COMP_POP", 1)
        return Completion(op=info & 15, err=info >> 4 & 15, target=info >> 8 & 1, tag=info >> 16, valid=info >> 9 & 1,
                          status=st & 0xFF, corrected=st >> 8 & 0xFF, corr_map=st >> 16 & 0xFF, unc_map=st >> 24,
                          data=data, sectors=[sec >> 4 * i & 15 for i in range(8)])

    def cmd(self, op, max_cycles=3_000_000, **kw) -> Completion:
        self.submit(op, **kw)
        return self.complete(max_cycles)

    def init(self, mode=5, targets=None):
        """RESET every target, then switch them to `mode` (SET FEATURES 01h) and the timing registers."""
        g = self.geometry
        self.w("GEOMETRY", g["page_bytes"] | g["spare_bytes"] << 16)
        self.set_timing(0)  # RESET puts the flash back into timing mode 0
        for t in range(targets if targets is not None else self.targets):
            c = self.cmd(OP_RESET, target=t)
            assert c.err == ERR_OK, c
            if mode:
                c = self.cmd(OP_SET_FEATURES, target=t, row=0x01, param=mode)
                assert c.err == ERR_OK, c
        self.set_timing(mode)
        self.mode = mode

    def init_nvddr(self, mode=2, targets=None, tap_step=4):
        """RESET every target (SDR mode 0), SET FEATURES 01h = 10h | mode (NV-DDR), switch the controller
        (DDR_CFG and the TIMING fields) and train the read capture; returns the training result."""
        g = self.geometry
        words = nvddr_words(mode)
        self.w("GEOMETRY", g["page_bytes"] | g["spare_bytes"] << 16)
        self.w("DDR_CFG", 0)
        self.set_timing(0)
        for t in range(targets if targets is not None else self.targets):
            for op, kw in ((OP_RESET, {}), (OP_SET_FEATURES, dict(row=0x01, param=0x10 | mode))):
                c = self.cmd(op, target=t, **kw)
                if c.err != ERR_OK:
                    raise SimError(f"NV-DDR switch of target {t}: {ERR_NAMES[c.err]} ({c})")
        for k, v in words.items():
            self.w(k, v)
        self.mode = mode
        self.nvddr = True
        return self.train_capture(step=tap_step)

    def train_capture(self, step=4):
        """Read-capture training: the PHY samples DQ at both controller clock edges behind a delay line
        (lsmc/boards/nand_pads.py, hw/ip/nand/model/nvddr_pads.h); DDR_CAPTURE.SLOT picks the half-cycle of a DQS
        pair's first sample, TAP delays DQ. `capture_positions` orders the settings by sample position;
        READ ID 20h ("ONFI", each byte on both DQS edges) at each, every `step`-th tap, passes when it
        reads right and no pair split (PAIR_SPLIT: the pair's bytes differ, half a DQS period off). The
        first passing run is the first byte's eye; the setting nearest its middle is kept.
        Returns (first, last, kept) sample positions in ps and sets DDR_CAPTURE."""
        half = CLK_NS * 1000 // 2
        first = last = None
        for pos, slot, tap in capture_positions(self.taps, self.tap_ps, half, step):
            self.w("DDR_CAPTURE", capture_word(slot, tap))
            c = self.cmd(OP_READ_ID, row=0x20, length=4)
            ok = c.err == ERR_OK and c.data == int.from_bytes(b"ONFI", "little") and not self.r("DDR_CAPTURE") >> 17 & 1
            if ok:
                first = pos if first is None else first
                last = pos
            elif first is not None:
                break
        if first is None:
            raise SimError("read-capture training: no capture slot and tap reads READ ID 20h right")
        pos, slot, tap = nearest_capture(first + (last - first) // 2, self.taps, self.tap_ps, half)
        self.w("DDR_CAPTURE", capture_word(slot, tap))
        return first, last, pos

    def row(self, block: int, page: int) -> int:
        return block * self.geometry["pages"] + page


# ---------------------------------------------------------------- throughput measurement (nand-report)
# efficiency = mb_per_s / bus_limit_mb_per_s (user data over the whole run); transfer_efficiency = the byte
# rate during the data-transfer micro-operations (PERF_BYTES / PERF_CYCLES) over the bus limit.
Measurement = namedtuple("Measurement", "mode op targets bytes cycles mb_per_s bus_limit_mb_per_s efficiency "
                                        "data_cycles data_bytes nvddr transfer_efficiency")


def bus_limit_mb_per_s(mode: int, op: str, nvddr: bool = False) -> float:
    """8-bit SDR bus: one byte per tRC (read) or tWC (program). NV-DDR: two bytes per tCK of the mode
    (ONFI's rate; the controller reaches it where its CLK period equals tCK: modes 0, 2 and 5 at 100 MHz)."""
    if nvddr:
        return 2 * 1e6 / NVDDR_MODES[mode]["tCK"]
    t = ONFI_MODES[mode]["tRC" if op == "read" else "tWC"]
    return 1000.0 / t


def label(mode: int, nvddr: bool) -> str:
    """`sdr0`..`sdr5`, `nvddr0`..`nvddr5` (the report's mode column)."""
    return f"{'nvddr' if nvddr else 'sdr'}{mode}"


def measure(s: NandSim, mode: int, op: str, targets: int, pages: int = 4, block: int = 1) -> Measurement:
    """Move `pages` pages per target with ECC (main area via DMA) and time it in controller cycles.
    One target: plain PAGE_READ / PROGRAM. Two targets: SPLIT commands pipelined so that the array
    time (tR / tPROG) of one target overlaps with the bus transfer of the other. `cache_program`: 80h..15h
    (PROGRAM_CACHE, SPLIT) for every page but the last, so a page's transfer overlaps the previous page's
    tPROG on the same target."""
    g = s.geometry
    page = g["page_bytes"]
    buf = lambda t, p: DDR + 0x10_0000 * (t + 1) + p * page
    for t in range(targets):  # data to program / a fresh block to read
        s.cmd(OP_ERASE, target=t, row=s.row(block, 0))
        for p in range(pages):
            s.mem_write(buf(t, p), random.Random(mode * 1000 + t * 100 + p).randbytes(page))
    if op == "read":  # something to read
        for t in range(targets):
            for p in range(pages):
                assert s.cmd(OP_PROGRAM, target=t, row=s.row(block, p), dma=True, ecc=True, dma_addr=buf(t, p)).err == 0
    else:
        s.cmd(OP_ERASE, target=0, row=s.row(block, 0))
        if targets > 1:
            s.cmd(OP_ERASE, target=1, row=s.row(block, 0))
    s.w("PERF_CYCLES", 0)
    s.w("PERF_BYTES", 0)
    c0 = s.cycles()

    def ok(c):
        if c.err != ERR_OK:
            raise SimError(f"{ERR_NAMES[c.err]} during the {op} measurement: {c}")

    rd = lambda t, p: dict(target=t, row=s.row(block, p), dma=True, ecc=True, dma_addr=buf(t, p) + 0x8_0000)
    if op == "cache_program":  # 15h for every page but the last (10h); SPLIT, WAIT_STATUS before the next
        for p in range(pages):
            for t in range(targets):
                if p:
                    ok(s.cmd(OP_WAIT_STATUS, target=t))
                ok(s.cmd(OP_PROGRAM if p == pages - 1 else OP_PROGRAM_CACHE, target=t, row=s.row(block, p), dma=True,
                         ecc=True, dma_addr=buf(t, p), split=True))
        for t in range(targets):
            ok(s.cmd(OP_WAIT_STATUS, target=t))
    elif targets == 1:
        for p in range(pages):
            if op == "read":
                ok(s.cmd(OP_PAGE_READ, **rd(0, p)))
            else:
                ok(s.cmd(OP_PROGRAM, target=0, row=s.row(block, p), dma=True, ecc=True, dma_addr=buf(0, p)))
    elif op == "read":
        for t in (0, 1):
            ok(s.cmd(OP_PAGE_READ, target=t, row=s.row(block, 0), split=True))
        for p in range(pages):
            for t in (0, 1):
                ok(s.cmd(OP_READ_DATA, **rd(t, p)))
                if p + 1 < pages:
                    ok(s.cmd(OP_PAGE_READ, target=t, row=s.row(block, p + 1), split=True))
    else:
        prog = lambda t, p: ok(s.cmd(OP_PROGRAM, target=t, row=s.row(block, p), dma=True, ecc=True,
                                     dma_addr=buf(t, p), split=True))
        for t in (0, 1):
            prog(t, 0)
        for p in range(pages):
            for t in (0, 1):
                c = s.cmd(OP_WAIT_STATUS, target=t)
                ok(c)
                if p + 1 < pages:
                    prog(t, p + 1)
    cycles = s.cycles() - c0
    data_cycles, data_bytes = s.r("PERF_CYCLES"), s.r("PERF_BYTES")
    if op == "read":  # the data really arrived
        for t in range(targets):
            for p in range(pages):
                want = random.Random(mode * 1000 + t * 100 + p).randbytes(page)
                if s.mem_read(buf(t, p) + 0x8_0000, page) != want:
                    raise SimError(f"read-back mismatch in the measurement (mode {mode}, target {t}, page {p})")
    else:  # the array holds what was programmed
        for t in range(targets):
            for p in range(pages):
                if s.peek(t, s.row(block, p))[:page] != random.Random(mode * 1000 + t * 100 + p).randbytes(page):
                    raise SimError(f"{op}: page {p} of target {t} does not hold the data (mode {mode})")
    nbytes = pages * targets * page
    mbps = nbytes / (cycles * CLK_NS) * 1000.0
    limit = bus_limit_mb_per_s(mode, op, s.nvddr)
    xfer = (data_bytes / (data_cycles * CLK_NS) * 1000.0) / limit if data_cycles else 0.0
    return Measurement(mode, op, targets, nbytes, cycles, mbps, limit, mbps / limit, data_cycles, data_bytes, s.nvddr,
                       xfer)


def measure_nvddr(s: NandSim, op: str, targets: int, pages: int = 4, block: int = 1) -> Measurement:
    """`measure` in the NV-DDR mode `s.init_nvddr` selected."""
    if not s.nvddr:
        raise SimError("measure_nvddr: the simulation is not in NV-DDR (call init_nvddr first)")
    return measure(s, s.mode, op, targets, pages=pages, block=block)


# ---------------------------------------------------------------- channels x ways scheduler (sequential reads)
def page_raw(code: Bch, data: bytes, spare_bytes: int) -> bytes:
    """A page as the controller programs it with ECC: data, spare FFh except the check bytes of sector s
    at spare bytes 8 + s * ecc_bytes (hw/ip/nand/doc/nand.md, spare layout)."""
    spare = bytearray(b"\xff" * spare_bytes)
    n, e = code.data_bytes, code.ecc_bytes
    for i in range(len(data) // n):
        spare[8 + i * e:8 + (i + 1) * e] = code.ecc(data[i * n:(i + 1) * n])
    return data + bytes(spare)


def cache_read_program(ways: int, pages: int, block: int, pages_per_block: int, dma_addr):
    """One channel's command list for `pages` sequential pages from `block` on each of `ways` targets:
    PAGE_READ (SPLIT) on every way, then per way READ_CACHE (31h, SPLIT: the bus is free during tRCBSY
    while the array reads the next page) and READ_DATA (the cache register out, ECC, DMA to
    dma_addr(way, page)), the ways taking turns so that one way's tRCBSY and array read hide behind the
    other ways' transfers; the last page of a way is moved by READ_CACHE_END (3Fh). Each entry is the
    keyword arguments of NandSim.submit."""
    if not 1 <= pages <= pages_per_block:
        raise ValueError(f"cache read: {pages} pages per way, a block holds {pages_per_block}")
    row = lambda p: block * pages_per_block + p
    cache = lambda t, q: dict(op=OP_READ_CACHE if q < pages - 1 else OP_READ_CACHE_END, target=t, split=True)
    prog = [dict(op=OP_PAGE_READ, target=t, row=row(0), split=True) for t in range(ways)]
    prog += [cache(t, 0) for t in range(ways)]
    for q in range(pages):
        for t in range(ways):
            prog.append(dict(op=OP_READ_DATA, target=t, ecc=True, dma=True, dma_addr=dma_addr(t, q)))
            if q + 1 < pages:
                prog.append(cache(t, q + 1))
    return prog


def cache_program_program(ways: int, pages: int, block: int, pages_per_block: int, dma_addr):
    """One channel's command list that programs `pages` pages of `block` on each of `ways` targets from
    dma_addr(way, page): PROGRAM_CACHE (80h..15h, SPLIT) for every page but the last, PROGRAM (10h) for the
    last, the ways taking turns; WAIT_STATUS collects a way's status before its next page (R/B# returns when
    the cache register is free: the transfer of page n+1 overlaps the tPROG of page n)."""
    if not 1 <= pages <= pages_per_block:
        raise ValueError(f"cache program: {pages} pages per way, a block holds {pages_per_block}")
    prog = []
    for q in range(pages):
        for t in range(ways):
            if q:
                prog.append(dict(op=OP_WAIT_STATUS, target=t))
            prog.append(dict(op=OP_PROGRAM if q == pages - 1 else OP_PROGRAM_CACHE, target=t,
                             row=block * pages_per_block + q, ecc=True, dma=True, dma_addr=dma_addr(t, q), split=True))
    return prog + [dict(op=OP_WAIT_STATUS, target=t) for t in range(ways)]


def _multiplane_args(pages: int, block: int, pages_per_block: int, planes: int, what: str) -> int:
    """Checks of the multi-plane command lists; returns the page addresses per plane."""
    if planes < 2 or block % planes:
        raise ValueError(f"{what}: {planes} planes from block {block} (needs 2 or more planes and a block of plane 0)")
    if pages % planes or not 1 <= pages // planes <= pages_per_block:
        raise ValueError(f"{what}: {pages} pages per way over {planes} planes of {pages_per_block}-page blocks")
    return pages // planes


def multiplane_program_program(ways: int, pages: int, block: int, pages_per_block: int, dma_addr, planes: int = 2):
    """One channel's command list that programs `pages` pages on each of `ways` targets by multi-plane
    programs: page i of a way goes to plane i % planes (block block + i % planes), page address i // planes,
    from dma_addr(way, i). Per way and page address: PROGRAM with MPLANE (80h..11h, then tDBSY) for every
    plane but the last and PROGRAM_CACHE (80h..15h, SPLIT) for the last, so the planes program together in
    one tPROG while the next group crosses the bus (PROGRAM, 10h, for the last group); the ways take
    turns, WAIT_STATUS collects a way's status (FAIL / FAILC of any plane) before its next group."""
    n = _multiplane_args(pages, block, pages_per_block, planes, "multi-plane program")
    prog = []
    for q in range(n):
        for t in range(ways):
            if q:
                prog.append(dict(op=OP_WAIT_STATUS, target=t))
            for k in range(planes):
                last = k == planes - 1
                op = OP_PROGRAM if not last or q == n - 1 else OP_PROGRAM_CACHE
                prog.append(dict(op=op, target=t, row=(block + k) * pages_per_block + q, ecc=True, dma=True,
                                 dma_addr=dma_addr(t, q * planes + k), split=last, mplane=not last))
    return prog + [dict(op=OP_WAIT_STATUS, target=t) for t in range(ways)]


def multiplane_read_program(ways: int, pages: int, block: int, pages_per_block: int, dma_addr, planes: int = 2):
    """One channel's command list that reads `pages` pages from each of `ways` targets by multi-plane reads
    (the layout of multiplane_program_program): per way and page address PAGE_READ with MPLANE (00h..32h,
    then tDBSY) for every plane but the last and PAGE_READ (00h..30h, SPLIT) for the last, so one tR reads
    every plane; then per plane READ_DATA with MPLANE (06h-E0h selects the plane's page register; ECC, DMA
    to dma_addr(way, i)). The ways take turns: one way's tR runs while the other's pages cross the bus. A
    way's next PAGE_READs start right after its last READ_DATA, one command after each READ_DATA: the
    controller holds one completion of the front end while the back end still writes a page to DDR, so two
    PAGE_READs in a row there would wait for that DMA."""
    n = _multiplane_args(pages, block, pages_per_block, planes, "multi-plane read")
    row = lambda k, q: (block + k) * pages_per_block + q
    reads = lambda t, q: [dict(op=OP_PAGE_READ, target=t, row=row(k, q), split=k == planes - 1,
                               mplane=k < planes - 1) for k in range(planes)]
    prog = [c for t in range(ways) for c in reads(t, 0)]
    pending = []  # PAGE_READs still to place, one after each READ_DATA
    for q in range(n):
        for t in range(ways):
            while pending and pending[0]["target"] == t:  # the way's own reads go before its data (one way)
                prog.append(pending.pop(0))
            for k in range(planes):
                prog.append(dict(op=OP_READ_DATA, target=t, row=row(k, q), ecc=True, dma=True,
                                 dma_addr=dma_addr(t, q * planes + k), mplane=True))
                if pending:
                    prog.append(pending.pop(0))
                elif k == planes - 1 and q + 1 < n:
                    nxt = reads(t, q + 1)
                    prog.append(nxt[0])
                    pending = nxt[1:]
    return prog + pending


def run_channels(s: NandSim, programs: dict, depth: int = 6, max_cycles: int = 3_000_000):
    """The channels x ways scheduler: keeps up to `depth` commands queued on every channel (its command
    queue holds 8), sleeps on the interrupt lines (IRQ_ENABLE.DONE) and drains each channel's completions
    when its line rises. programs: {channel: [submit kwargs, ...]}. Returns {channel: (completions, cycle
    of the last completion)}; any completion error raises SimError."""
    nxt = {k: 0 for k in programs}
    out = {k: 0 for k in programs}
    done = {k: ([], None) for k in programs}
    for k in programs:
        s.select(k)
        s.w("IRQ_STATUS", 7)
        s.w("IRQ_ENABLE", 1)
    while any(nxt[k] < len(programs[k]) or out[k] for k in programs):
        for k, prog in programs.items():
            if nxt[k] < len(prog) and out[k] < depth:
                s.select(k)
                while nxt[k] < len(prog) and out[k] < depth:
                    s.submit(**prog[nxt[k]], tag=nxt[k])
                    nxt[k] += 1
                    out[k] += 1
        mask = s.wait_irq(max_cycles)
        for k in programs:
            if not mask >> k & 1:
                continue
            s.select(k)
            s.w("IRQ_STATUS", 1)  # clear DONE first: a completion queued after this raises it again
            while s.r("COMP_INFO") >> 9 & 1:
                c = s.complete()
                if c.err != ERR_OK:
                    raise SimError(f"channel {k}: {ERR_NAMES[c.err]} on command {c.tag} ({c})")
                done[k][0].append(c)
                out[k] -= 1
            done[k] = (done[k][0], s.cycles())
    for k in programs:
        s.select(k)
        s.w("IRQ_ENABLE", 0)
    return done


# measure_channels' operations: sequential cache reads / cache programs, multi-plane programs / reads.
MEASURE_OPS = ("read", "program", "mp_program", "mp_read")
ChannelRun = namedtuple("ChannelRun",
                        "channels ways pages bytes cycles mb_per_s bus_limit_mb_per_s efficiency per_channel")


def planes_of(s: NandSim) -> int:
    """Planes per target, from the parameter page of target 0 (byte 113: plane address bits, when
    features bit 3 says multi-plane operations)."""
    c = s.cmd(OP_READ_PARAM, length=256, dma=True, dma_addr=DDR + 0xF0_0000)
    if c.err != ERR_OK:
        raise SimError(f"READ_PARAM: {ERR_NAMES[c.err]}")
    p = s.mem_read(DDR + 0xF0_0000, 256)
    return 1 << (p[113] & 0xF) if int.from_bytes(p[6:8], "little") & 0x08 else 1


def measure_channels(s: NandSim, ways: int = 2, pages: int = 32, block: int = 1, seed: int = 5,
                     op: str = "read") -> ChannelRun:
    """Sequential page reads (op "read") on every channel of `s` (NV-DDR, trained): `pages` pages per way
    written with ECC through the back door, then read by the cache-read program of every channel at once
    under the scheduler (`run_channels`), checked byte for byte in DDR. op "program": the block erased
    first (not timed), then the cache-program program of every channel at once, checked in the arrays.
    op "mp_program" / "mp_read": the same by multi-plane programs / reads (multiplane_program_program,
    multiplane_read_program: page q of a way in plane q % planes from `block`, which must be of plane 0).
    Cycles: from the first command to the last completion (all channels); per channel to its own last
    completion. Bus limit: 2 bytes per tCK of the mode per channel."""
    if op not in MEASURE_OPS:
        raise ValueError(f"measure_channels: op {op!r} ({', '.join(MEASURE_OPS)})")
    if not s.nvddr:
        raise SimError("measure_channels: the simulation is not in NV-DDR (call init_nvddr on every channel)")
    g = s.geometry
    page = g["page_bytes"]
    if ways > s.targets:
        raise SimError(f"measure_channels: {ways} ways, the simulation has {s.targets} targets per channel")
    s.select(0)
    code = ecc_code(s)
    rng = random.Random(seed)
    base = lambda k, t: DDR + 0x100_0000 * (k + 1) + 0x40_0000 * t
    planes = planes_of(s) if op.startswith("mp_") else 1
    reading = op in ("read", "mp_read")
    # page q of a way: its row (multi-plane: plane q % planes, page address q // planes)
    rowof = lambda q: s.row(block + q % planes, q // planes)
    datas = {}
    for k in range(s.channels):
        s.select(k)
        for t in range(ways):
            for q in range(pages):
                datas[k, t, q] = rng.randbytes(page)
                if reading:
                    s.poke(t, rowof(q), page_raw(code, datas[k, t, q], g["spare_bytes"]))
                else:
                    s.mem_write(base(k, t) + q * page, datas[k, t, q])
    addr = lambda k: (lambda t, q: base(k, t) + q * page)
    lists = dict(read=cache_read_program, program=cache_program_program, mp_read=multiplane_read_program,
                 mp_program=multiplane_program_program)[op]
    if not reading:
        erase = [dict(op=OP_ERASE, target=t, row=s.row(block + b, 0), split=True) for t in range(ways)
                 for b in range(planes)]
        run_channels(s, {k: [c for e in erase for c in (e, dict(op=OP_WAIT_STATUS, target=e["target"]))]
                         for k in range(s.channels)})
    extra = dict(planes=planes) if planes > 1 else {}
    programs = {k: lists(ways, pages, block, g["pages"], addr(k), **extra) for k in range(s.channels)}
    c0 = s.cycles()
    done = run_channels(s, programs)
    end = s.cycles()
    for (k, t, q), data in datas.items():
        s.select(k)
        got = s.mem_read(base(k, t) + q * page, page) if reading else s.peek(t, rowof(q))[:page]
        if got != data:
            raise SimError(f"{op}: mismatch (channel {k}, way {t}, page {q})")
    limit = bus_limit_mb_per_s(s.mode, "read" if reading else "program", True)
    per = []
    for k in range(s.channels):
        nb = ways * pages * page
        cyc = done[k][1] - c0
        mb = nb / (cyc * CLK_NS) * 1000.0
        per.append((k, nb, cyc, mb, mb / limit))
    nbytes = s.channels * ways * pages * page
    mbps = nbytes / ((end - c0) * CLK_NS) * 1000.0
    total_limit = limit * s.channels
    return ChannelRun(s.channels, ways, pages, nbytes, end - c0, mbps, total_limit, mbps / total_limit, per)


# ---------------------------------------------------------------- BCH sweep (nand-report, tests)
EccRow = namedtuple("EccRow", "ecc t bits_injected pages corrected uncorrectable miscorrected")


def ecc_code(s: NandSim):
    """The reference model (lsmc.model.bch) of the code the controller was generated with (ECC_CFG)."""
    cfg = s.r("ECC_CFG")
    code = Bch(t=cfg & 0xFF, data_bytes=cfg >> 16, m=13 if cfg >> 16 <= 512 else 14)
    if code.ecc_bytes != cfg >> 8 & 0xFF:
        raise SimError(f"ECC_CFG says {cfg >> 8 & 0xFF} check bytes per sector, the model {code.ecc_bytes}")
    return code


def ecc_sweep(s: NandSim, pages: int = 4, max_extra: int = 2, seed: int = 1, block: int = 1, check=None):
    """Program random pages with ECC, flip exactly k bits in every sector (data or check bits, through
    the raw back door) for k = 0 .. t + max_extra, read them back with ECC and classify each page:
    corrected (every sector exact, COMP_SECTORS = k), uncorrectable (a sector flagged, none wrong) or
    miscorrected (a sector delivered altered data without being flagged). Every sector's result is
    compared with the reference decoder (lsmc.model.bch); `check(msg)` is called on a disagreement
    (default: raise SimError). Returns one EccRow per k."""
    code = ecc_code(s)
    g = s.geometry
    page = g["page_bytes"]
    nsec = page // code.data_bytes
    rng = random.Random(seed)
    rows = []

    def fail(msg):
        if check:
            check(msg)
        else:
            raise SimError(msg)
    for k in range(code.t + max_extra + 1):
        corrected = unc = mis = 0
        s.cmd(OP_ERASE, target=0, row=s.row(block, 0))
        for p in range(pages):
            row = s.row(block, p)
            data = rng.randbytes(page)
            s.mem_write(DDR, data)
            c = s.cmd(OP_PROGRAM, row=row, dma=True, ecc=True, dma_addr=DDR)
            if c.err != ERR_OK:
                raise SimError(f"program with ECC failed: {c}")
            raw = bytearray(s.peek(0, row))
            for i in range(nsec):  # the encoder against the model
                sec = data[i * code.data_bytes:(i + 1) * code.data_bytes]
                got = bytes(raw[page + 8 + i * code.ecc_bytes:page + 8 + (i + 1) * code.ecc_bytes])
                if got != code.ecc(sec):
                    fail(f"check bytes of sector {i}: controller {got.hex()}, model {code.ecc(sec).hex()}")
            for i in range(nsec):  # k flips among the sector's data bits and its r check bits
                for b in rng.sample(range(code.data_bits + code.r), k):
                    if b < code.data_bits:
                        byte = i * code.data_bytes + b // 8
                    else:
                        byte = page + 8 + i * code.ecc_bytes + (b - code.data_bits) // 8
                    raw[byte] ^= 0x80 >> (b % 8)
            s.poke(0, row, bytes(raw))
            c = s.cmd(OP_PAGE_READ, row=row, dma=True, ecc=True, dma_addr=DDR + 0x10_0000)
            back = s.mem_read(DDR + 0x10_0000, page)
            flagged = wrong = False
            for i in range(nsec):
                lo, hi = i * code.data_bytes, (i + 1) * code.data_bytes
                clo = page + 8 + i * code.ecc_bytes
                ref, n = code.decode(bytes(raw[lo:hi]), bytes(raw[clo:clo + code.ecc_bytes]))
                rtl = c.sectors[i]
                if (n is None) != (rtl == SECTOR_UNCORRECTABLE) or (n is not None and (rtl != n or back[lo:hi] != ref)):
                    fail(f"k={k} page {p} sector {i}: controller reports {rtl}, model {n}")
                if rtl == SECTOR_UNCORRECTABLE:
                    flagged = True
                elif back[lo:hi] != data[lo:hi]:
                    wrong = True
            if (c.err == ERR_ECC) != flagged:
                fail(f"k={k} page {p}: completion error {ERR_NAMES[c.err]} but sector results {c.sectors[:nsec]}")
            if wrong:
                mis += 1
            elif flagged:
                unc += 1
            else:
                corrected += 1
        rows.append(EccRow(f"bch{code.t}_{code.data_bytes}", code.t, k, pages, corrected, unc, mis))
    return rows


# ---------------------------------------------------------------- full-SoC storage flow (scripts/demo storage)
def storage_demo(timeout: float = 1800, log=None):
    """Build the SoC simulator and the firmware, run storage.elf (SIM_ARG 0) and return
    (passed, SocRun). Passed = exit code 0 and "storage: PASS" on the UART."""
    from lsmc.build import firmware
    from lsmc.sim import soc  # the SoC and firmware parts are other modules of the project
    firmware.build_firmware()
    elf = firmware.BUILD_FW / "storage.elf"
    if not elf.exists():
        raise SimError(f"{elf} was not built (fw/apps/storage/)")
    run = soc.run_soc(elf, arg=firmware.STORAGE_SCEN["FLOW"], timeout=timeout, log=log)
    return run.returncode == 0 and "storage: PASS" in run.uart, run


# ---------------------------------------------------------------- firmware scheduler in the full SoC
SocChannelRun = namedtuple("SocChannelRun", "op mode channels ways pages bytes cycles mb_per_s bus_limit_mb_per_s "
                                            "efficiency per_channel nvddr", defaults=(False,))
_SOC_HEAD = re.compile(r"^nand channels: (\d+) channel\(s\), .*, (NV-DDR )?timing mode (\d+)$", re.M)
_SOC_ALL = re.compile(r"^nand channels: (program|read) (\d+) channel\(s\) x (\d+) way\(s\) x (\d+) page\(s\), "
                      r"(\d+) bytes in (\d+) cycles", re.M)
_SOC_CH = re.compile(r"^nand channels: (program|read) channel (\d+): (\d+) bytes in (\d+) cycles$", re.M)


def parse_soc_channels(uart: str) -> dict:
    """The lines of `nand channels` (fw/apps/storage/nandcon.c): {op: SocChannelRun} for program and read.
    Figures: bytes over cycles at CLK_NS (the SoC's 100 MHz); bus limit: SDR mode m's tRC (read) or tWC
    (program) per channel, times the channels."""
    head = _SOC_HEAD.search(uart)
    if not head or "nand channels: every page read back intact" not in uart:
        raise SimError("nand channels did not finish with every page intact: "
                       + (uart.strip().splitlines() or ["(no output)"])[-1])
    mode, nvddr = int(head.group(3)), head.group(2) is not None
    out = {}
    for m in _SOC_ALL.finditer(uart):
        op, ch, ways, pages, nbytes, cyc = m.group(1), *map(int, m.groups()[1:])
        limit = bus_limit_mb_per_s(mode, op, nvddr) * ch
        per = []
        for c in _SOC_CH.finditer(uart):
            if c.group(1) == op:
                k, b, cy = map(int, c.groups()[1:])
                mb = b / (cy * CLK_NS) * 1000.0
                per.append((k, b, cy, mb, mb / bus_limit_mb_per_s(mode, op, nvddr)))
        mb = nbytes / (cyc * CLK_NS) * 1000.0
        out[op] = SocChannelRun(op, mode, ch, ways, pages, nbytes, cyc, mb, limit, mb / limit, per, nvddr)
    if set(out) != {"program", "read"}:
        raise SimError(f"nand channels: figures missing ({sorted(out)})")
    return out


def soc_channels(ways: int = 2, pages: int = 8, channels: int | None = None, timeout: float = 1800, exe=None,
                 part: str | None = None):
    """storage.elf's `nand channels WAYS PAGES [CHANNELS]` in the full SoC (channels 0..CHANNELS-1, default
    every one the default build has; the firmware's scheduler; SDR on the MT29F4G08ABADA models, or
    `part` "mt29f16g08ababa": NV-DDR, which nand_init prefers when the parameter page offers it):
    ({op: SocChannelRun}, SocRun)."""
    from lsmc.build import firmware
    from lsmc.sim import soc
    firmware.build_firmware()
    cmd = f"nand channels {ways} {pages}" + (f" {channels}" if channels else "")
    run = soc.run_soc(firmware.BUILD_FW / "storage.elf", arg=firmware.STORAGE_SCEN["CONSOLE"],
                      uart_in=cmd + "\nexit\n", uart_prompt="storage> ",
                      timeout=timeout, exe=exe, extra=("--nand-part", part) if part else ())
    if run.returncode != 0:
        raise SimError(f"storage.elf exit {run.returncode}: " + (run.uart.strip().splitlines() or ["?"])[-1])
    return parse_soc_channels(run.uart), run
