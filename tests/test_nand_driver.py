"""The firmware NAND driver (fw/drivers/nand.c) compiled natively with LSMC_HOST_SHIM, its register
and DDR accesses forwarded to the standalone controller simulation (hw/ip/nand/dv): the real driver code
runs against the real controller RTL and the ONFI model with its timing checker."""
import ctypes
import random
import re

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
                ("modes", ctypes.c_uint16), ("features", ctypes.c_uint16), ("nvddr_modes", ctypes.c_uint16),
                ("crc", ctypes.c_uint16), ("mode", ctypes.c_int), ("nvddr", ctypes.c_int), ("targets", ctypes.c_int),
                ("planes", ctypes.c_int)]


class Comp(ctypes.Structure):
    _fields_ = [("op", ctypes.c_uint8), ("err", ctypes.c_uint8), ("target", ctypes.c_uint8), ("status", ctypes.c_uint8),
                ("tag", ctypes.c_uint16), ("corrected", ctypes.c_uint8), ("corr_map", ctypes.c_uint8),
                ("unc_map", ctypes.c_uint8), ("data", ctypes.c_uint32), ("sectors", ctypes.c_uint32)]


class Cmd(ctypes.Structure):
    _fields_ = [("opcode", ctypes.c_uint8), ("target", ctypes.c_uint8), ("flags", ctypes.c_uint32),
                ("tag", ctypes.c_uint16), ("row", ctypes.c_uint32), ("col", ctypes.c_uint32), ("len", ctypes.c_uint32),
                ("dma_addr", ctypes.c_uint32), ("param", ctypes.c_uint32)]


class ChanProg(ctypes.Structure):
    _fields_ = [("cmds", ctypes.POINTER(Cmd)), ("n", ctypes.c_uint32), ("submitted", ctypes.c_uint32),
                ("completed", ctypes.c_uint32), ("last", ctypes.c_uint64)]


class SchedErr(ctypes.Structure):
    _fields_ = [("channel", ctypes.c_int), ("index", ctypes.c_uint32), ("comp", Comp)]


ON_COMP = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Comp), ctypes.c_void_p)


class EccStats(ctypes.Structure):
    _fields_ = [("reads", ctypes.c_uint32), ("corrected_bits", ctypes.c_uint32), ("uncorrectable", ctypes.c_uint32),
                ("retries", ctypes.c_uint32), ("recovered", ctypes.c_uint32), ("max_sector_bits", ctypes.c_uint8)]


class NandCh(ctypes.Structure):
    """A channel handle (nand.h nand_ch): the driver's calls take one; nand_chans[c] is channel c's."""
    _fields_ = [("base", ctypes.c_size_t), ("index", ctypes.c_int), ("dev", ctypes.POINTER(Info)),
                ("ecc", ctypes.POINTER(EccStats)), ("st", ctypes.c_void_p)]


HANDLE = ctypes.POINTER(NandCh)


@pytest.fixture(scope="module")
def lib():
    ns.build_sim()  # also generates build/gen/nand/nand_regs.h
    fw = ROOT / "fw"
    # the driver, and the storage app's `nand ...` console commands on top of it
    so = firmware.build_host_lib("nanddrv", [fw / "drivers" / "nand.c", fw / "drivers" / "timer.c",
                                             fw / "apps" / "storage" / "nandcon.c", fw / "lib" / "parse.c",
                                             ROOT / "tests" / "fw_host" / "shim.c"],
                                 defines=["LSMC_HOST_SHIM"],
                                 includes=[ns.GEN, ROOT / "tests" / "fw_host"])
    l = ctypes.CDLL(str(so))
    l.shim_install.argtypes = [READ_FN, WRITE_FN]
    l.nand_init.argtypes = [HANDLE, ctypes.POINTER(Info), ctypes.c_int, ctypes.c_uint32]
    l.nand_program.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int,
                               ctypes.POINTER(Comp)]
    l.nand_read.argtypes = l.nand_program.argtypes
    l.nand_erase.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Comp)]
    l.nand_scan_bad.argtypes = [HANDLE, ctypes.c_int, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32,
                                ctypes.POINTER(ctypes.c_uint32)]
    l.nand_err_name.restype = ctypes.c_char_p
    l.nand_console.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    l.nand_bbt_scan.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
    l.nand_block_bad.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32]
    l.nand_bbt_mark.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32]
    l.nand_run_channels.argtypes = [ctypes.POINTER(ChanProg), ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(SchedErr),
                                    ON_COMP, ctypes.c_void_p]
    for f in (l.nand_cache_read_cmds, l.nand_cache_program_cmds, l.nand_mp_read_cmds, l.nand_mp_program_cmds):
        f.argtypes = [HANDLE, ctypes.POINTER(Cmd), ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32,
                      ctypes.c_uint32, ctypes.c_uint32]
    return l


def chan(lib, k):
    """Channel k's handle (nand_chans[k])."""
    return ctypes.pointer((NandCh * 4).in_dll(lib, "nand_chans")[k])


def stats_of(lib, ch):
    """The ECC statistics of channel ch (behind its handle)."""
    return chan(lib, ch).contents.ecc.contents


class Bridge:
    """Routes the driver's MMIO to the simulation; each timer read lets `tick` cycles pass (a CPU poll
    loop). Channel c's registers at NAND_BASE + c * 0x10000 (lsmc_soc.h NAND_CHANNEL_BASE); a slot past
    the simulation's channels reads 0, as an absent channel in the SoC."""

    def __init__(self, lib, sim, tick=20):
        self.sim = sim

        def chan(addr):
            c = (addr - NAND_BASE) >> 16
            if 0 <= c < 4:
                return c, (addr - NAND_BASE) & 0xFFFF
            return None, None

        def rd(addr):
            c, off = chan(addr)
            if c is not None and c >= sim.channels:
                return 0
            if c is not None:
                sim.select(c)
                return sim.r(off)
            if addr in (TIMER_BASE, TIMER_BASE + 4):
                sim.run(tick)
                c = sim.cycles()
                return c & 0xFFFFFFFF if addr == TIMER_BASE else c >> 32
            if ns.DDR <= addr < ns.DDR + 0x1000_0000:
                return int.from_bytes(sim.mem_read(addr, 4), "little")
            raise AssertionError(f"driver read of unmapped {addr:#x}")

        def wr(addr, val):
            c, off = chan(addr)
            if c is not None and c < sim.channels:
                sim.select(c)
                sim.w(off, val)
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
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0
        assert bytes(info.id) == bytes([0x2C, 0xDC, 0x90, 0x95, 0x56])
        assert info.manufacturer == b"MICRON" and info.model == b"MT29F4G08ABADAWP"
        assert (info.page_bytes, info.spare_bytes, info.pages_per_block, info.blocks) == (2048, 64, 64, 32)
        assert info.mode == 5 and info.modes == 0x3F and info.targets == 2
        assert s.model(0, "mode") == "5" and s.model(1, "mode") == "5"
        assert s.r("TIMING0") == ns.timing_words(5)["TIMING0"]
        assert s.r("GEOMETRY") == 2048 | 64 << 16


def test_param_page_crc_checked(lib):
    """A parameter page whose three copies all fail their CRC-16 is refused; one bad copy is not."""
    lib.nand_read_param.argtypes = [HANDLE, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Info)]
    with ns.NandSim(blocks=8, targets=1) as s:
        _bridge = Bridge(lib, s)  # noqa: F841
        info = Info()
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 1, SCRATCH) == 0
        assert lib.nand_read_param(chan(lib, 0), 0, SCRATCH, ctypes.byref(info)) == 0
        s.model(0, "corrupt_param", 100)
        assert lib.nand_read_param(chan(lib, 0), 0, SCRATCH, ctypes.byref(info)) == -2  # NAND_DRV_CRC
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 1, SCRATCH) == -2
        s.w("DMA_HI", SCRATCH + 16)  # the parameter page DMA may not leave the window
        assert lib.nand_read_param(chan(lib, 0), 0, SCRATCH, ctypes.byref(info)) == ns.ERR_DMA_BOUNDS


def test_program_read_erase_ecc_and_bad_blocks(lib):
    with ns.NandSim(blocks=16, targets=2, bad=[2, 9], tprog_ns=20000, tbers_ns=20000) as s:
        _bridge = Bridge(lib, s)  # noqa: F841 (keeps the callbacks alive)
        info = Info()
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0
        bad = (ctypes.c_uint8 * 16)()
        n = ctypes.c_uint32()
        assert lib.nand_scan_bad(chan(lib, 0), 0, bad, 16, ctypes.byref(n)) == 0
        assert n.value == 2 and [b for b in range(16) if bad[b]] == [2, 9]
        c = Comp()
        assert lib.nand_erase(chan(lib, 0), 0, 2, ctypes.byref(c)) == ns.ERR_NAND_FAIL and c.status & 1
        assert lib.nand_erase(chan(lib, 0), 1, 3, ctypes.byref(c)) == 0
        data = random.Random(9).randbytes(2048)
        s.mem_write(ns.DDR, data)
        assert lib.nand_program(chan(lib, 0), 1, 3 * 64, ns.DDR, 2048, 1, ctypes.byref(c)) == 0
        s.model(1, "errors", 3)
        assert lib.nand_read(chan(lib, 0), 1, 3 * 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == 0
        assert c.corrected == 3 and c.unc_map == 0
        assert s.mem_read(ns.DDR + 0x4000, 2048) == data
        assert lib.nand_program(chan(lib, 0), 1, 3 * 64, ns.DDR, 2048, 1, ctypes.byref(c)) == ns.ERR_NAND_FAIL


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
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 1, SCRATCH) == 0
        stats = stats_of(lib, 0)
        n = ctypes.c_uint32()
        assert lib.nand_bbt_scan(chan(lib, 0), 0, 16, ctypes.byref(n)) == 0 and n.value == 1
        assert [b for b in range(16) if lib.nand_block_bad(chan(lib, 0), 0, b)] == [3]
        c = Comp()
        s.model(0, "weakblock", 6, 0)  # block 6 fails its first erase: grown bad, in the table
        assert lib.nand_erase(chan(lib, 0), 0, 6, ctypes.byref(c)) == ns.ERR_NAND_FAIL
        assert [b for b in range(16) if lib.nand_block_bad(chan(lib, 0), 0, b)] == [3, 6]
        assert lib.nand_erase(chan(lib, 0), 0, 1, ctypes.byref(c)) == 0
        data = random.Random(4).randbytes(2048)
        s.mem_write(ns.DDR, data)
        assert lib.nand_program(chan(lib, 0), 0, 64, ns.DDR, 2048, 1, ctypes.byref(c)) == 0
        s.model(0, "errors", 4 * 8)  # t = 8 in every sector: corrected, counted
        r0 = stats.reads  # the table scan's marker reads count too
        assert lib.nand_read(chan(lib, 0), 0, 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == 0
        assert c.sectors & 0xFFFF == 0x8888 and s.mem_read(ns.DDR + 0x4000, 2048) == data
        assert (stats.reads - r0, stats.corrected_bits, stats.max_sector_bits, stats.uncorrectable) == (1, 32, 8, 0)
        s.model(0, "errors", 4 * 9)  # beyond t: retried, still reported uncorrectable
        assert lib.nand_read(chan(lib, 0), 0, 64, ns.DDR + 0x4000, 2048, 1, ctypes.byref(c)) == ns.ERR_ECC
        assert c.sectors & 0xFFFF == 0xFFFF
        assert (stats.reads - r0, stats.uncorrectable, stats.retries, stats.recovered) == (4, 3, 2, 0)


def cmd_dicts(cmds, n):
    """C command structs as nandsim submit() keyword dicts (the fields the reference sets)."""
    out = []
    for c in cmds[:n]:
        d = dict(op=c.opcode, target=c.target)
        if c.row:
            d["row"] = c.row
        for flag, bit in (("ecc", 9), ("split", 10), ("dma", 11), ("mplane", 12)):
            if c.flags >> bit & 1:
                d[flag] = True
        if c.dma_addr:
            d["dma_addr"] = c.dma_addr
        out.append(d)
    return out


def test_channel_state_and_scheduler_against_the_reference(lib):
    """Per-channel driver state, and the firmware's channels x ways scheduler against its
    reference model (nandsim.run_channels) on two channels x two ways of the NV-DDR part in mode 5:
    the C command lists equal the reference's (cache read and cache program), each channel completes
    the same commands in the same order, every page arrives byte-exact, and the whole run's MB/s agree
    within 3 %. Channel 1's ECC statistics count its own corrected bits, channel 0's stay clean."""
    ways, pages, block = 2, 6, 1
    with ns.NandSim(channels=2, blocks=4, pages=128, targets=2, part="mt29f16g08ababa") as s:
        _bridge = Bridge(lib, s, tick=4)  # noqa: F841
        infos = [Info(), Info()]
        for k in (1, 0):
            assert lib.nand_init(chan(lib, k), ctypes.byref(infos[k]), 2, SCRATCH) == 0
        assert lib.nand_channel_present(1) and not lib.nand_channel_present(2) and lib.nand_channels() == 2
        st = [chan(lib, k).contents.dev.contents for k in range(4)]
        assert [st[k].page_bytes for k in range(4)] == [4096, 4096, 0, 0] and st[1].targets == 2
        lib.nand_bbt_mark(chan(lib, 0), 1, 3)  # channel 0's table only
        assert lib.nand_block_bad(chan(lib, 0), 1, 3) == 1 and lib.nand_block_bad(chan(lib, 1), 1, 3) == 0
        base = lambda k, t: ns.DDR + 0x100_0000 * (k + 1) + 0x40_0000 * t
        cap = 64
        progs, keep = (ChanProg * 4)(), []
        for k in (0, 1):
            cmds = (Cmd * cap)()
            n = lib.nand_cache_read_cmds(chan(lib, k), cmds, cap, ways, pages, block, base(k, 0), 0x40_0000)
            assert n == ways * (2 * pages + 1)
            assert cmd_dicts(cmds, n) == ns.cache_read_program(ways, pages, block, 128,
                                                               lambda t, q, k=k: base(k, t) + q * 4096)
            progs[k].cmds, progs[k].n = cmds, n
            keep.append(cmds)
            wcmds = (Cmd * cap)()
            n = lib.nand_cache_program_cmds(chan(lib, k), wcmds, cap, ways, pages, block, base(k, 0), 0x40_0000)
            assert cmd_dicts(wcmds, n) == ns.cache_program_program(ways, pages, block, 128,
                                                                   lambda t, q, k=k: base(k, t) + q * 4096)
            assert lib.nand_cache_read_cmds(chan(lib, k), cmds, n - 1, ways, pages, block, 0, 0) == -4  # too small
            assert lib.nand_cache_read_cmds(chan(lib, k), cmds, cap, 3, pages, block, 0, 0) == -4       # 2 targets
        for k in (0, 1):  # NV-DDR mode 5 (the Python driver: the firmware driver speaks SDR)
            s.select(k)
            s.init_nvddr(5, tap_step=16)
        code, rng, datas = ns.ecc_code(s), random.Random(11), {}
        for k in (0, 1):
            s.select(k)
            for t in range(ways):
                for q in range(pages):
                    datas[k, t, q] = rng.randbytes(4096)
                    s.poke(t, s.row(block, q), ns.page_raw(code, datas[k, t, q], 224))
        s.select(1)
        s.model(0, "errors", 8)  # one flip per sector on channel 1, way 0
        ref_prog = {k: ns.cache_read_program(ways, pages, block, 128, lambda t, q, k=k: base(k, t) + q * 4096)
                    for k in (0, 1)}
        c0 = s.cycles()
        ref = ns.run_channels(s, ref_prog)
        ref_cycles = s.cycles() - c0
        for (k, t, q), d in datas.items():
            assert s.mem_read(base(k, t) + q * 4096, 4096) == d
            s.mem_write(base(k, t) + q * 4096, bytes(4096))
        for k in (0, 1):
            s.select(k)
            s.w("IRQ_ENABLE", 0)
        ecc0 = [(stats_of(lib, k).reads, stats_of(lib, k).corrected_bits) for k in (0, 1)]
        seen = {0: [], 1: []}

        @ON_COMP
        def on_comp(ch, index, c, _ctx):
            seen[ch].append((c.contents.op, c.contents.target, index, c.contents.err))
        err = SchedErr()
        c0 = s.cycles()
        assert lib.nand_run_channels(progs, 6, 3_000_000, ctypes.byref(err), on_comp, None) == 0
        fw_cycles = s.cycles() - c0
        assert err.channel == -1 and [(progs[k].submitted, progs[k].completed) for k in (0, 1)] == [(26, 26)] * 2
        for k in (0, 1):
            assert seen[k] == [(c.op, c.target, c.tag, 0) for c in ref[k][0]], k
        for (k, t, q), d in datas.items():
            assert s.mem_read(base(k, t) + q * 4096, 4096) == d, (k, t, q)
        reads = ways * (pages + 1)  # PAGE_READ and READ_DATA completions per channel
        assert stats_of(lib, 0).reads - ecc0[0][0] == reads and stats_of(lib, 0).corrected_bits == ecc0[0][1]
        assert stats_of(lib, 1).reads - ecc0[1][0] == reads
        assert stats_of(lib, 1).corrected_bits - ecc0[1][1] == 8 * pages  # 8 bits in each of way 0's pages
        nbytes = 2 * ways * pages * 4096
        ref_mb, fw_mb = nbytes / (ref_cycles * 10) * 1000, nbytes / (fw_cycles * 10) * 1000
        assert abs(fw_mb / ref_mb - 1) < 0.03, (fw_mb, ref_mb)
        print(f"2 channels x 2 ways x {pages} pages, NV-DDR 5: reference {ref_mb:.1f} MB/s, firmware {fw_mb:.1f} MB/s")


def test_multiplane_lists_against_the_reference(lib):
    """The driver's multi-plane command lists (nand_mp_program_cmds / nand_mp_read_cmds) equal the reference's
    (nandsim.multiplane_program_program / multiplane_read_program) and their argument checks hold; run by the
    firmware's scheduler on the RTL in NV-DDR mode 5 (the part's 2 planes, from its parameter page; short
    busy times), they program 2 ways x 4 pages into blocks 2 and 3 and read every page back byte-exact."""
    ways, pages, block, stride = 2, 4, 2, 0x40_0000
    base = ns.DDR + 0x100_0000
    addr = lambda t, i: base + t * stride + i * 4096
    with ns.NandSim(blocks=8, pages=128, targets=2, part="mt29f16g08ababa", tr_ns=2000, tprog_ns=5000,
                    tbers_ns=8000) as s:
        _bridge = Bridge(lib, s, tick=4)  # noqa: F841
        info = Info()
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0
        assert info.planes == 2 and info.features & 0x08 and info.nvddr == 1
        norm = lambda prog: [{k: v for k, v in c.items() if v is not False} for c in prog]
        cap = 32
        wcmds, rcmds = (Cmd * cap)(), (Cmd * cap)()
        nw = lib.nand_mp_program_cmds(chan(lib, 0), wcmds, cap, ways, pages, block, base, stride)
        assert nw == ways * (pages + pages // 2)  # NAND_MP_PROGRAM_CMDS
        assert cmd_dicts(wcmds, nw) == norm(ns.multiplane_program_program(ways, pages, block, 128, addr))
        nr = lib.nand_mp_read_cmds(chan(lib, 0), rcmds, cap, ways, pages, block, base + 0x80_0000, stride)
        assert nr == ways * 2 * pages  # NAND_MP_READ_CMDS
        assert cmd_dicts(rcmds, nr) == norm(ns.multiplane_read_program(
            ways, pages, block, 128, lambda t, i: addr(t, i) + 0x80_0000))
        for bad in ((cap, ways, pages, 1), (cap, ways, 3, block), (nw - 1, ways, pages, block), (cap, 3, pages, block)):
            assert lib.nand_mp_program_cmds(chan(lib, 0), wcmds, *bad, 0, 0) == -4, bad  # NAND_DRV_ARG
        rng = random.Random(21)
        datas = {(t, i): rng.randbytes(4096) for t in range(ways) for i in range(pages)}
        for (t, i), d in datas.items():
            s.mem_write(addr(t, i), d)
        c = Comp()
        for t in range(ways):
            for b in (block, block + 1):
                assert lib.nand_erase(chan(lib, 0), t, b, ctypes.byref(c)) == 0
        err = SchedErr()
        for cmds, n in ((wcmds, nw), (rcmds, nr)):
            progs = (ChanProg * 4)()
            progs[0].cmds, progs[0].n = cmds, n
            assert lib.nand_run_channels(progs, 6, 3_000_000, ctypes.byref(err), ON_COMP(), None) == 0, err.comp.err
            assert progs[0].completed == n
        for (t, i), d in datas.items():
            assert s.peek(t, s.row(block + i % 2, i // 2))[:4096] == d, (t, i)
            assert s.mem_read(addr(t, i) + 0x80_0000, 4096) == d, (t, i)


def test_scheduler_stops_on_an_error_and_collects_what_is_queued(lib):
    """A completion error (a READ_DATA with its DMA outside the window) stops new submissions on every
    channel; the commands already queued are collected and the first error is reported with its
    channel and index. A channel that is absent is refused before anything is submitted."""
    with ns.NandSim(channels=2, blocks=4, pages=64, targets=1) as s:
        _bridge = Bridge(lib, s, tick=4)  # noqa: F841
        for k in (0, 1):
            assert lib.nand_init(chan(lib, k), ctypes.byref(Info()), 1, SCRATCH) == 0
        progs = (ChanProg * 4)()
        cmds = {}
        for k in (0, 1):
            c = (Cmd * 8)()
            for i in range(8):
                c[i].opcode, c[i].len = ns.OP_READ_STATUS, 1
            cmds[k] = c
            progs[k].cmds, progs[k].n = c, 8
        cmds[1][2].opcode, cmds[1][2].flags, cmds[1][2].len, cmds[1][2].dma_addr = ns.OP_READ_ID, 1 << 11, 4, 0x1000
        err = SchedErr()
        rc = lib.nand_run_channels(progs, 4, 1_000_000, ctypes.byref(err), ON_COMP(), None)
        assert rc == ns.ERR_DMA_BOUNDS and (err.channel, err.index, err.comp.op) == (1, 2, ns.OP_READ_ID)
        assert progs[1].submitted == progs[1].completed < 8 and progs[0].submitted == progs[0].completed
        assert not s.r("STATUS") >> 1 & 1  # nothing left in channel 1's completion queue
        progs[2].cmds, progs[2].n = cmds[0], 1
        assert lib.nand_run_channels(progs, 4, 1_000_000, ctypes.byref(err), ON_COMP(), None) == -4
        assert progs[0].submitted == 0
        progs[2].n = 0
        assert lib.nand_run_channels(progs, 9, 1_000_000, ctypes.byref(err), ON_COMP(), None) == -4


def bench_page(c, t, q, page=2048):
    """The page `nand channels` writes to channel c, way t, page q (nandcon.c chb_word)."""
    w0 = q * page // 4
    return b"".join(((0x9E3779B9 * (i + 1) ^ c << 24 ^ t << 20) & 0xFFFFFFFF).to_bytes(4, "little")
                    for i in range(w0, w0 + page // 4))


def test_console_channels_command(lib, capfd):
    """`nand channels [ways] [pages]`: every channel initialised, block 1 erased, cache-programmed and
    cache-read under the scheduler; the arrays of both channels hold the pattern, the reads come back
    intact, the figures are printed; bad arguments are refused before anything reaches the bus."""
    with ns.NandSim(channels=2, blocks=4, pages=64, targets=2, tprog_ns=20000, tbers_ns=20000) as s:
        _bridge = Bridge(lib, s, tick=4)  # noqa: F841

        def run(*args):
            argv = (ctypes.c_char_p * len(args))(*[a.encode() for a in args])
            return lib.nand_console(len(args), argv)
        assert run("nand", "channels", "3") != 0 and run("nand", "channels", "2", "33") != 0
        assert run("nand", "channels", "2", "3", "3") != 0 and run("nand", "channels", "2", "3", "1", "x") != 0
        assert run("nand", "channels", "2", "3") == 0
        out = capfd.readouterr().out
        assert "nand channels: ways must be a number 1..2, not '3'" in out
        assert "nand channels: pages must be a number 1..32, not '33'" in out
        assert "nand channels: channels must be a number 1..2, not '3'" in out
        assert "usage: nand channels [ways] [pages] [channels]" in out
        assert "nand channels: 2 channel(s), MICRON MT29F4G08ABADAWP, timing mode 5" in out
        assert "nand channels: read 2 channel(s) x 2 way(s) x 3 page(s), 24576 bytes in" in out
        assert "nand channels: program channel 1: 12288 bytes in" in out
        assert "every page read back intact" in out
        for c in (0, 1):
            s.select(c)
            for t in (0, 1):
                for q in range(3):
                    assert s.peek(t, 64 + q)[:2048] == bench_page(c, t, q), (c, t, q)


def test_nvddr_registers_match_the_reference(lib):
    """nand_nvddr_for_mode (C) and nandsim.nvddr_words (Python) compute the same registers in every mode."""

    class Regs(ctypes.Structure):
        _fields_ = [("timing", ctypes.c_uint32 * 4), ("sample", ctypes.c_uint32), ("ddr_cfg", ctypes.c_uint32),
                    ("ddr_cfg2", ctypes.c_uint32)]

    lib.nand_nvddr_for_mode.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(Regs)]
    for mode in range(6):
        r = Regs()
        lib.nand_nvddr_for_mode(mode, 100_000_000, ctypes.byref(r))
        want = ns.nvddr_words(mode)
        got = {"TIMING0": r.timing[0], "TIMING1": r.timing[1], "TIMING2": r.timing[2], "TIMING3": r.timing[3],
               "SAMPLE": r.sample, "DDR_CFG": r.ddr_cfg, "DDR_CFG2": r.ddr_cfg2}
        assert got == want, mode


def test_nvddr_bring_up_and_training(lib):
    """On the NV-DDR part nand_init switches both targets to NV-DDR mode 5 by SET FEATURES (P1 = 15h),
    trains the capture, pages go through ECC at 2 bytes per clock; RESET brings the channel back to SDR
    mode 0 (controller and parts) and init runs again; nand_sdr_only keeps the part in SDR."""
    kw = dict(blocks=8, pages=64, targets=2, part="mt29f16g08ababa", tr_ns=2000, tprog_ns=5000, tbers_ns=8000)
    with ns.NandSim(**kw) as s:
        _bridge = Bridge(lib, s)  # noqa: F841
        info = Info()
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0
        assert info.model == b"MT29F16G08ABABAWP" and info.features & 0x20 and info.nvddr_modes == 0x3F
        assert info.nvddr == 1 and info.mode == 5
        assert s.r("DDR_CFG") == ns.nvddr_words(5)["DDR_CFG"]
        # the driver's training keeps what the reference (nandsim.train_capture, same scan order and step)
        # keeps, and that setting reads right
        word = s.r("DDR_CAPTURE") & 0x7FFF
        step = int(re.search(r"#define NAND_TRAIN_STEP (\d+)u", (ROOT / "fw/drivers/nand.h").read_text()).group(1))
        first, last, kept = s.train_capture(step=step)
        assert s.r("DDR_CAPTURE") & 0x7FFF == word and first < kept < last
        assert s.cmd(ns.OP_READ_ID, row=0x20, length=4).data == int.from_bytes(b"ONFI", "little")
        for tgt in (0, 1):
            assert s.cmd(ns.OP_GET_FEATURES, target=tgt, row=1).data & 0x3F == 0x15
        c = Comp()
        data = random.Random(4).randbytes(4096)
        s.mem_write(ns.DDR, data)
        for tgt in (0, 1):
            assert lib.nand_erase(chan(lib, 0), tgt, 1, ctypes.byref(c)) == 0
            assert lib.nand_program(chan(lib, 0), tgt, 128, ns.DDR, 4096, 1, ctypes.byref(c)) == 0
            assert lib.nand_read(chan(lib, 0), tgt, 128, ns.DDR + 0x8000, 4096, 1, ctypes.byref(c)) == 0
            assert c.corrected == 0
            assert s.mem_read(ns.DDR + 0x8000, 4096) == data
        # RESET from NV-DDR (SPLIT, CE# high when the targets return to SDR mode 0), then init again
        lib.nand_reset.argtypes = [HANDLE, ctypes.c_int]
        assert lib.nand_reset(chan(lib, 0), 0) == 0
        assert s.r("DDR_CFG") & 1 == 0 and s.r("TIMING0") == ns.timing_words(0)["TIMING0"]
        for tgt in (0, 1):
            assert s.cmd(ns.OP_GET_FEATURES, target=tgt, row=1).data & 0x3F == 0
        assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0 and info.nvddr == 1
        assert lib.nand_read(chan(lib, 0), 1, 128, ns.DDR + 0x10000, 4096, 1, ctypes.byref(c)) == 0
        assert s.mem_read(ns.DDR + 0x10000, 4096) == data
    with ns.NandSim(**kw) as s:
        _bridge = Bridge(lib, s)  # noqa: F841
        ctypes.c_int.in_dll(lib, "nand_sdr_only").value = 1
        try:
            assert lib.nand_init(chan(lib, 0), ctypes.byref(info), 2, SCRATCH) == 0
            assert info.nvddr == 0 and info.mode == 5 and s.r("DDR_CFG") & 1 == 0
        finally:
            ctypes.c_int.in_dll(lib, "nand_sdr_only").value = 0
