"""The firmware NAND driver (fw/drivers/nand.c) compiled natively with LSMC_HOST_SHIM, its register
and DDR accesses forwarded to the standalone controller simulation (sim/nand): the real driver code
runs against the real controller RTL and the ONFI model with its timing checker."""
import ctypes
import random

import pytest

from lsmc.build import firmware
from lsmc.paths import ROOT
from lsmc.sim import nandsim as ns

NAND_BASE, TIMER_BASE = 0xF002_0000, 0xF000_1000
READ_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64)
WRITE_FN = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint32)
SCRATCH = ns.DDR + 0x80_0000


class Info(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint8 * 5), ("manufacturer", ctypes.c_char * 13), ("model", ctypes.c_char * 21),
                ("page_bytes", ctypes.c_uint32), ("spare_bytes", ctypes.c_uint32),
                ("pages_per_block", ctypes.c_uint32), ("blocks", ctypes.c_uint32),
                ("row_cycles", ctypes.c_uint8), ("col_cycles", ctypes.c_uint8), ("ecc_bits", ctypes.c_uint8),
                ("modes", ctypes.c_uint16), ("crc", ctypes.c_uint16), ("mode", ctypes.c_int), ("targets", ctypes.c_int)]


class Comp(ctypes.Structure):
    _fields_ = [("op", ctypes.c_uint8), ("err", ctypes.c_uint8), ("target", ctypes.c_uint8), ("status", ctypes.c_uint8),
                ("tag", ctypes.c_uint16), ("corrected", ctypes.c_uint8), ("corr_map", ctypes.c_uint8),
                ("unc_map", ctypes.c_uint8), ("data", ctypes.c_uint32), ("sectors", ctypes.c_uint32)]


class EccStats(ctypes.Structure):
    _fields_ = [("reads", ctypes.c_uint32), ("corrected_bits", ctypes.c_uint32), ("uncorrectable", ctypes.c_uint32),
                ("retries", ctypes.c_uint32), ("recovered", ctypes.c_uint32), ("max_sector_bits", ctypes.c_uint8)]


@pytest.fixture(scope="module")
def lib():
    ns.build_sim()  # also generates build/gen/nand/nand_regs.h
    fw = ROOT / "fw"
    # the driver, and the storage app's `nand ...` console commands on top of it
    so = firmware.build_host_lib("nanddrv", [fw / "drivers" / "nand.c", fw / "drivers" / "timer.c",
                                             fw / "apps" / "storage" / "nandcon.c", fw / "lib" / "parse.c",
                                             ROOT / "tests" / "fw_host" / "shim.c"],
                                 defines=["LSMC_HOST_SHIM", "LSMC_NAND=1"],
                                 includes=[ns.GEN, ROOT / "tests" / "fw_host"])
    l = ctypes.CDLL(str(so))
    l.shim_install.argtypes = [READ_FN, WRITE_FN]
    l.nand_init.argtypes = [ctypes.POINTER(Info), ctypes.c_int, ctypes.c_uint32]
    l.nand_program.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int,
                               ctypes.POINTER(Comp)]
    l.nand_read.argtypes = l.nand_program.argtypes
    l.nand_erase.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Comp)]
    l.nand_scan_bad.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32,
                                ctypes.POINTER(ctypes.c_uint32)]
    l.nand_err_name.restype = ctypes.c_char_p
    l.nand_console.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    l.nand_bbt_scan.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
    l.nand_block_bad.argtypes = [ctypes.c_int, ctypes.c_uint32]
    l.nand_bbt_mark.argtypes = [ctypes.c_int, ctypes.c_uint32]
    return l


class Bridge:
    """Routes the driver's MMIO to the simulation; each timer read lets 20 cycles pass (a CPU poll loop)."""

    def __init__(self, lib, sim):
        self.sim = sim

        def rd(addr):
            if NAND_BASE <= addr < NAND_BASE + 0x10000:
                return sim.r(addr - NAND_BASE)
            if addr in (TIMER_BASE, TIMER_BASE + 4):
                sim.run(20)
                c = sim.cycles()
                return c & 0xFFFFFFFF if addr == TIMER_BASE else c >> 32
            if ns.DDR <= addr < ns.DDR + 0x1000_0000:
                return int.from_bytes(sim.mem_read(addr, 4), "little")
            raise AssertionError(f"driver read of unmapped {addr:#x}")

        def wr(addr, val):
            if NAND_BASE <= addr < NAND_BASE + 0x10000:
                sim.w(addr - NAND_BASE, val)
            elif ns.DDR <= addr < ns.DDR + 0x1000_0000:
                sim.mem_write(addr, val.to_bytes(4, "little"))
            else:
                raise AssertionError(f"driver write to unmapped {addr:#x}")

        self.cbs = (READ_FN(rd), WRITE_FN(wr))  # keep alive
        lib.shim_install(*self.cbs)


def test_init_id_param_and_fastest_mode(lib):
    with ns.NandSim(blocks=32, targets=2) as s:
        _bridge = Bridge(lib, s)  # noqa: F841 (keeps the callbacks alive)
        info = Info()
        assert lib.nand_init(ctypes.byref(info), 2, SCRATCH) == 0
        assert bytes(info.id) == bytes([0x2C, 0xDC, 0x90, 0x95, 0x56])
        assert info.manufacturer == b"MICRON" and info.model == b"MT29F4G08ABADAWP"
        assert (info.page_bytes, info.spare_bytes, info.pages_per_block, info.blocks) == (2048, 64, 64, 32)
        assert info.mode == 5 and info.modes == 0x3F and info.targets == 2
        assert s.model(0, "mode") == "5" and s.model(1, "mode") == "5"
        assert s.r("TIMING0") == ns.timing_words(5)["TIMING0"]
        assert s.r("GEOMETRY") == 2048 | 64 << 16


def test_param_page_crc_checked(lib):
    """A parameter page whose three copies all fail their CRC-16 is refused; one bad copy is not."""
    lib.nand_read_param.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Info)]
    with ns.NandSim(blocks=8, targets=1) as s:
        _bridge = Bridge(lib, s)  # noqa: F841
        info = Info()
        assert lib.nand_init(ctypes.byref(info), 1, SCRATCH) == 0
        assert lib.nand_read_param(0, SCRATCH, ctypes.byref(info)) == 0
        s.model(0, "corrupt_param", 100)
        assert lib.nand_read_param(0, SCRATCH, ctypes.byref(info)) == -2  # NAND_DRV_CRC
        assert lib.nand_init(ctypes.byref(info), 1, SCRATCH) == -2
        s.w("DMA_HI", SCRATCH + 16)  # the parameter page DMA may not leave the window
        assert lib.nand_read_param(0, SCRATCH, ctypes.byref(info)) == ns.ERR_DMA_BOUNDS


def test_program_read_erase_ecc_and_bad_blocks(lib):
    with ns.NandSim(blocks=16, targets=2, bad=[2, 9], tprog_ns=20000, tbers_ns=20000) as s:
        _bridge = Bridge(lib, s)  # noqa: F841 (keeps the callbacks alive)
        info = Info()
        assert lib.nand_init(ctypes.byref(info), 2, SCRATCH) == 0
        bad = (ctypes.c_uint8 * 16)()
        n = ctypes.c_uint32()
        assert lib.nand_scan_bad(0, bad, 16, ctypes.byref(n)) == 0
        assert n.value == 2 and [b for b in range(16) if bad[b]] == [2, 9]
        c = Comp()
        assert lib.nand_erase(0, 2, ctypes.byref(c)) == ns.ERR_NAND_FAIL and c.status & 1
        assert lib.nand_erase(1, 3, ctypes.byref(c)) == 0
        data = random.Random(9).randbytes(2048)
        s.mem_write(ns.DDR, data)
        assert lib.nand_program(1, 3 * 64, ns.DDR, 2048, 1, ctypes.byref(c)) == 0
        s.model(1, "errors", 3)
        assert lib.nand_read(1, 3 * 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == 0
        assert c.corrected == 3 and c.unc_map == 0
        assert s.mem_read(ns.DDR + 0x4000, 2048) == data
        assert lib.nand_program(1, 3 * 64, ns.DDR, 2048, 1, ctypes.byref(c)) == ns.ERR_NAND_FAIL


def test_console_commands(lib, capfd):
    with ns.NandSim(blocks=8, targets=1, bad=[5]) as s:
        _bridge = Bridge(lib, s)  # noqa: F841 (keeps the callbacks alive)

        def run(*args):
            argv = (ctypes.c_char_p * len(args))(*[a.encode() for a in args])
            return lib.nand_console(len(args), argv)

        assert run("nand", "init", "1") == 0
        assert run("nand", "id", "0") == 0
        assert run("nand", "scan", "0") == 0
        assert run("nand", "bogus") != 0
        out = capfd.readouterr().out
        assert "MICRON MT29F4G08ABADAWP" in out and "timing mode 5" in out
        assert "ID 2c dc 90 95 56" in out
        assert "1 bad of 8 blocks: 5" in out


def test_bad_block_table_ecc_statistics_and_read_retry(lib):
    with ns.NandSim(blocks=16, targets=1, bad=[3], tprog_ns=20000, tbers_ns=20000) as s:
        _bridge = Bridge(lib, s)  # noqa: F841 (keeps the callbacks alive)
        info = Info()
        assert lib.nand_init(ctypes.byref(info), 1, SCRATCH) == 0
        stats = EccStats.in_dll(lib, "nand_ecc")
        n = ctypes.c_uint32()
        assert lib.nand_bbt_scan(0, 16, ctypes.byref(n)) == 0 and n.value == 1
        assert [b for b in range(16) if lib.nand_block_bad(0, b)] == [3]
        c = Comp()
        s.model(0, "weakblock", 6, 0)  # block 6 fails its first erase: grown bad, in the table
        assert lib.nand_erase(0, 6, ctypes.byref(c)) == ns.ERR_NAND_FAIL
        assert [b for b in range(16) if lib.nand_block_bad(0, b)] == [3, 6]
        assert lib.nand_erase(0, 1, ctypes.byref(c)) == 0
        data = random.Random(4).randbytes(2048)
        s.mem_write(ns.DDR, data)
        assert lib.nand_program(0, 64, ns.DDR, 2048, 1, ctypes.byref(c)) == 0
        s.model(0, "errors", 4 * 8)  # t = 8 in every sector: corrected, counted
        r0 = stats.reads  # the table scan's marker reads count too
        assert lib.nand_read(0, 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == 0
        assert c.sectors & 0xFFFF == 0x8888 and s.mem_read(ns.DDR + 0x4000, 2048) == data
        assert (stats.reads - r0, stats.corrected_bits, stats.max_sector_bits, stats.uncorrectable) == (1, 32, 8, 0)
        s.model(0, "errors", 4 * 9)  # beyond t: retried, still reported uncorrectable
        assert lib.nand_read(0, 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == ns.ERR_ECC
        assert c.sectors & 0xFFFF == 0xFFFF
        assert (stats.reads - r0, stats.uncorrectable, stats.retries, stats.recovered) == (4, 3, 2, 0)
