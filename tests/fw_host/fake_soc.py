"""A fake SoC for host tests of the firmware drivers: the drivers are compiled natively with
LSMC_HOST_SHIM (fw/include/mmio.h), so every register access arrives here. The fake models the
registers the drivers use (timer, UART, interrupt controller, sim control, compaction IP, DMA) with
configurable behaviour (finish, fail, hang) and delivers interrupts by calling the firmware's
trap_handler, like the CPU would between two instructions. Register offsets come from the
GENERATED headers, so the tests check the firmware against the RTL's register map."""
from __future__ import annotations

import ctypes
import re
from pathlib import Path

from lsmc.build import firmware, regmap
from lsmc.paths import ROOT

FW = ROOT / "fw"
HERE = Path(__file__).resolve().parent

# The memory map generated from hw/soc/map/SocMap.scala (build/gen/soc_map/lsmc_soc.json).
_MAP = regmap.memmap()
UART, TIMER, IRQC, DMA, SIMCTL, CIP = (_MAP.base(n) for n in ("UART", "TIMER", "IRQC", "DMA", "SIMCTL", "CIP"))
IRQ_CIP = _MAP.irqs["CIP"]
MCAUSE_EXT = 0x8000000B
MIE_MEIE = 1 << 11

CIP_OK, CIP_E_IP, CIP_E_DMA, CIP_E_TIMEOUT, CIP_E_ARG = 0, -1, -2, -3, -4
CIP_WAIT_NONE, CIP_WAIT_IP, CIP_WAIT_RESET = -1, 4, 5
DMA_OK, DMA_FAILED, DMA_TIMEOUT, DMA_BAD_ARG, DMA_ABORTED = 0, -1, -2, -3, -4


def parse_header(path: Path) -> dict[str, int]:
    """#define NAME 0x... / decimal of a regif C header."""
    defs = {}
    for m in re.finditer(r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", path.read_text(), re.M):
        defs[m.group(1)] = int(m.group(2), 0)
    return defs


def headers():
    firmware.ensure_headers()
    # the maps the firmware is compiled against (ensure_headers makes them; another build's folder may
    # not exist yet when this file runs first on its own worker)
    cip = parse_header(firmware.FW_IP.gen_dir / "compaction_regs.h")
    dma = parse_header(firmware.FW_DMA.gen_dir / "dma_regs.h")
    return cip, dma


class DmaStatus(ctypes.Structure):
    _fields_ = [("status", ctypes.c_uint32), ("code", ctypes.c_uint32), ("bytes", ctypes.c_uint32)]


class Counters(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in
                ("enc_words", "inv_addrs", "key0_words", "key1_words", "throughput", "hw_cycles", "out_keys")]


class Job(ctypes.Structure):
    _fields_ = [("group", ctypes.c_uint)] + [(n, ctypes.c_uint32) for n in (
        "run0_addr", "run0_len", "run1_addr", "run1_len", "out_addr", "out_buf", "inv_addr", "inv_buf",
        "out_capacity", "inv_capacity")] + [("use_irq", ctypes.c_int), ("bracket", ctypes.c_int),
                                          ("timeout_cycles", ctypes.c_uint64)]


class Result(ctypes.Structure):
    _fields_ = [("rc", ctypes.c_int), ("status", ctypes.c_uint32), ("err_code", ctypes.c_uint32),
                ("err_input", ctypes.c_uint32), ("err_index", ctypes.c_uint32), ("timeout_what", ctypes.c_int),
                ("dma_rc", ctypes.c_int * 4), ("dma", DmaStatus * 4), ("cnt", Counters)]


READ_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64)
WRITE_FN = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint32)

_lib = None


def driver_lib():
    """fw/drivers + fw/lib/kb16.c + shim.c compiled natively (cached)."""
    global _lib
    if _lib is None:
        firmware.ensure_headers()
        srcs = [FW / "drivers" / f"{n}.c" for n in ("timer", "uart", "irq", "sys", "dma", "compaction")]
        so = firmware.build_host_lib("fwdrv", srcs + [FW / "lib" / "kb16.c", HERE / "shim.c"],
                                     defines=["LSMC_HOST_SHIM"], includes=firmware.GEN_INCLUDES + [HERE])
        lib = ctypes.CDLL(str(so))
        lib.cip_run.argtypes = [ctypes.POINTER(Job), ctypes.POINTER(Result)]
        lib.cip_wait.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(Result)]
        lib.cip_describe.argtypes = [ctypes.POINTER(Result), ctypes.c_char_p, ctypes.c_uint]
        lib.cip_describe.restype = ctypes.c_char_p
        lib.cip_check_id.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
        lib.dma_wait.argtypes = [ctypes.c_uint, ctypes.c_uint64, ctypes.POINTER(DmaStatus)]
        lib.dma_start.argtypes = [ctypes.c_uint, ctypes.c_uint32, ctypes.c_uint32]
        lib.dma_err_name.restype = ctypes.c_char_p
        lib.timer_now.restype = ctypes.c_uint64
        lib.uart_getc_timeout.argtypes = [ctypes.c_uint64]
        lib.trap_handler.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
        lib.trap_handler.restype = ctypes.c_uint32
        lib.shim_install.argtypes = [READ_FN, WRITE_FN]
        _lib = lib
    return _lib


def describe(lib, res: Result) -> str:
    buf = ctypes.create_string_buffer(200)
    return lib.cip_describe(ctypes.byref(res), buf, 200).decode()


class Channel:
    def __init__(self):
        self.regs = {"ADDR": 0, "LEN": 0, "STATUS": 0, "BYTES": 0, "IRQ_ENABLE": 0, "IRQ_STATUS": 0}
        self.behaviour = "ok"     # ok | error | hang
        self.err_code = 1
        self.produce = None       # writers: bytes the IP sends (None: LEN)
        self.busy = False


class FakeSoc:
    BUSY, DONE, ERROR = 1, 2, 4

    def __init__(self, lib=None):
        self.lib = lib or driver_lib()
        self.cip_h, self.dma_h = headers()
        # Register offsets only: the header also carries named values (CIP_ERR_NONE = 0, ...) that would
        # shadow the register at the same number; the block's JSON lists which names are registers.
        regs = set(regmap.load("compaction", firmware.FW_IP.gen_dir / "compaction_regs.json").registers)
        self.cip_names = {v: k[len("CIP_"):] for k, v in self.cip_h.items()
                          if k.startswith("CIP_") and k[len("CIP_"):] in regs and v < 0x100}
        self.stride = self.dma_h["DMA_CH_STRIDE"]
        self.dma_names = {v: k[len("DMA_CH0_"):] for k, v in self.dma_h.items()
                          if k.startswith("DMA_CH0_") and not k.endswith(("_SHIFT", "_MASK"))}
        # time
        self.t = 1000
        self.tick = 37                    # cycles per timer read: every poll advances time
        # compaction IP
        self.cip = {n: 0 for n in self.cip_names.values()}
        self.cip.update(ID=0x4C534D43, VERSION=(128 << 16) | 0x0100, GROUP=16, OUT_CAPACITY=0xFFFFFFFF,
                        INV_CAPACITY=0xFFFFFFFF)
        self.behaviour = "done"           # done | error | hang
        self.job_cycles = 500             # cycles from START to the end of the job
        self.err = (8, 1, 37)             # code, input, index for behaviour "error"
        self.out_words = 0                # ENCODER_DATA_OUT_CNT reported at done (0: IN0+IN1 bytes / 4)
        self.inv_addrs = 0
        self.stuck_busy_after_reset = False
        self.irq_wired = True             # False: the IP's interrupt never reaches the controller
        self.count_start = None
        self.finish_at = 0
        self.running = False
        # DMA
        self.ch = [Channel() for _ in range(4)]
        # interrupt controller, UART, sim control
        self.irqc_enable = 0
        self.uart_tx = bytearray()
        self.uart_rx = bytearray()
        self.uart_tx_free = 16
        self.sim_id = 0x53494D43
        self.sim_arg = 0
        self.sim_exit = None
        self.log = []                     # ("cip"|"dma<n>"|..., register name, value) of every write
        self.in_trap = False
        self.traps = 0
        self._r, self._w = READ_FN(self._read), WRITE_FN(self._write)
        self.lib.shim_install(self._r, self._w)

    # ---- helpers for tests
    def writes(self, block=None):
        return [(b, n, v) for b, n, v in self.log if block is None or b == block]

    def _cip_irq(self) -> bool:
        return self.irq_wired and bool(self.cip["IRQ_STATUS"] & self.cip["IRQ_ENABLE"])

    def _pending(self) -> int:
        return (1 << IRQ_CIP) if self._cip_irq() else 0

    def _maybe_interrupt(self):
        """The CPU takes the external interrupt when enabled at the controller, mie and mstatus."""
        mie = ctypes.c_uint32.in_dll(self.lib, "shim_mie").value
        glob = ctypes.c_int.in_dll(self.lib, "shim_global_irq").value
        if self.in_trap or not glob or not (mie & MIE_MEIE) or not (self._pending() & self.irqc_enable):
            return
        self.in_trap = True
        self.traps += 1
        try:
            self.lib.trap_handler(MCAUSE_EXT, 0, 0)
        finally:
            self.in_trap = False

    def _finish_ip(self):
        self.running = False
        if self.behaviour == "done":
            self.cip["STATUS"] = self.DONE
            self.cip["IRQ_STATUS"] |= 1
            self.cip["ENCODER_DATA_OUT_CNT"] = self.out_words or (self.cip["IN0_BYTES"] + self.cip["IN1_BYTES"]) // 4
            self.cip["INVALID_ADDR_OUT_CNT"] = self.inv_addrs
            self.cip["HW_CYCLES"] = 1234
        else:
            code, inp, idx = self.err
            self.cip["STATUS"] = self.ERROR | (code << 8) | (inp << 16)
            self.cip["ERR_INDEX"] = idx
            self.cip["IRQ_STATUS"] |= 2
        self.cip["KEY0_ENTRY_IN_CNT"] = self.cip["IN0_BYTES"] // 4
        self.cip["KEY1_ENTRY_IN_CNT"] = self.cip["IN1_BYTES"] // 4

    def _ip_finished(self) -> bool:
        return bool(self.cip["STATUS"] & (self.DONE | self.ERROR))

    def _channel_status(self, n: int) -> int:
        c = self.ch[n]
        if c.busy and c.behaviour != "hang":
            writer = n >= 2
            if c.behaviour == "error":
                c.busy = False
                c.regs["STATUS"] = 4 | (c.err_code << 8)
            elif not writer or self._ip_finished():
                c.busy = False
                want = c.regs["LEN"] if c.produce is None else c.produce
                if writer and want > c.regs["LEN"]:
                    c.regs["STATUS"] = 4 | (2 << 8)
                    c.regs["BYTES"] = c.regs["LEN"]
                else:
                    c.regs["STATUS"] = 2
                    c.regs["BYTES"] = want
        return c.regs["STATUS"]

    @staticmethod
    def _dma_start(c) -> None:
        if not c.busy:  # ignored while busy, as in hw/ip/dma
            c.busy = True
            c.regs.update(STATUS=1, BYTES=0)

    # ---- bus
    def _read(self, addr: int) -> int:
        if self.running and self.behaviour != "hang" and self.t >= self.finish_at:
            self._finish_ip()
        v = self._read_reg(addr) & 0xFFFFFFFF
        self._maybe_interrupt()
        return v

    def _read_reg(self, addr: int) -> int:
        if addr == TIMER + 0:
            self.t += self.tick
            return self.t & 0xFFFFFFFF
        if addr == TIMER + 4:
            return self.t >> 32
        if addr == UART + 4:
            return (self.uart_tx_free << 16) | (min(len(self.uart_rx), 255) << 24)
        if addr == UART + 0:
            if self.uart_rx:
                return (1 << 16) | self.uart_rx.pop(0)
            return 0
        if addr == IRQC + 0:
            return self._pending()
        if addr == IRQC + 4:
            return self.irqc_enable
        if addr == SIMCTL + 8:
            return self.sim_id
        if addr == SIMCTL + 4:
            return self.sim_arg
        if CIP <= addr < CIP + 0x1000:
            name = self.cip_names.get(addr - CIP)
            if name is None:
                return 0
            if name == "THROUGHPUT_COUNTER" and self.count_start is not None:
                return self.t - self.count_start
            return self.cip[name]
        if addr == DMA + self.dma_h["DMA_ALL_STATUS"]:
            st = [self._channel_status(n) for n in range(4)]
            return sum(((s & 1) << n) | (((s >> 1) & 1) << (8 + n)) | (((s >> 2) & 1) << (16 + n))
                       for n, s in enumerate(st))
        if DMA <= addr < DMA + 4 * self.stride:
            n, off = divmod(addr - DMA, self.stride)
            name = self.dma_names[off]
            if name == "STATUS":
                return self._channel_status(n)
            return self.ch[n].regs.get(name, 0)
        return 0

    def _write(self, addr: int, value: int) -> None:
        if CIP <= addr < CIP + 0x1000:
            name = self.cip_names.get(addr - CIP, hex(addr - CIP))
            self.log.append(("cip", name, value))
            if name == "CTRL":
                if value & 2:
                    self.running = False
                    if self.stuck_busy_after_reset:
                        self.cip["STATUS"] = self.BUSY
                    else:
                        self.cip.update(STATUS=0, ERR_INDEX=0, IRQ_STATUS=0, HW_CYCLES=0)
                if value & 1:
                    g = self.cip["GROUP"]
                    self.cip.update(STATUS=self.BUSY, HW_CYCLES=0, OUT_KEYS=0)
                    self.running, self.finish_at = True, self.t + self.job_cycles
                    if not 2 <= g <= 256:
                        self.behaviour, self.err = "error", (13, 0, 0)
                        self._finish_ip()
            elif name == "IRQ_STATUS":
                self.cip["IRQ_STATUS"] &= ~value
            elif name == "COUNT_CONTROL":
                if value == 1:
                    self.count_start = self.t
                    self.cip["THROUGHPUT_COUNTER"] = 0
                elif value == 0 and self.count_start is not None:
                    self.cip["THROUGHPUT_COUNTER"] = self.t - self.count_start
                    self.count_start = None
                self.cip[name] = value
            elif name in self.cip and name not in ("ID", "VERSION", "STATUS", "ERR_INDEX", "HW_CYCLES", "OUT_KEYS"):
                self.cip[name] = value
        elif addr == DMA + self.dma_h["DMA_START_MASK"]:
            self.log.append(("dma", "START_MASK", value))
            for n in range(4):
                if value >> n & 1:
                    self._dma_start(self.ch[n])
        elif DMA <= addr < DMA + 4 * self.stride:
            n, off = divmod(addr - DMA, self.stride)
            name = self.dma_names.get(off, hex(off))
            self.log.append((f"dma{n}", name, value))
            c = self.ch[n]
            if name == "CTRL":
                if value & 1:
                    self._dma_start(c)
                if value & 2:
                    c.busy = False
                    c.regs["STATUS"] = 8  # ABORTED
            elif name == "IRQ_STATUS":
                c.regs["IRQ_STATUS"] &= ~value
            elif name in c.regs and name not in ("STATUS", "BYTES"):
                c.regs[name] = value
        elif addr == IRQC + 4:
            self.log.append(("irqc", "ENABLE", value))
            self.irqc_enable = value
        elif addr == UART + 0:
            self.uart_tx.append(value & 0xFF)
        elif addr in (UART + 8, UART + 12):
            self.log.append(("uart", "CLOCK_DIVIDER" if addr == UART + 8 else "FRAME_CONFIG", value))
        elif addr == SIMCTL + 0:
            self.log.append(("simctl", "EXIT", value))
            self.sim_exit = value
        self._maybe_interrupt()
