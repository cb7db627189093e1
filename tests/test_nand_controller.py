"""NAND controller against the ONFI model in the standalone Verilator harness (hw/ip/nand/dv/).

Every simulation runs with the model's timing checker on: any ONFI violation ends the simulation and
raises SimViolation, so every test here also checks the timing of all the traffic it causes."""
import random
import re

import pytest

from lsmc.sim import nandsim as ns

PAGE, SPARE = 2048, 64
FULL = PAGE + SPARE
T, ECC_BYTES = 8, 13  # default BCH code: 8 bits per 512-byte sector, 13 check bytes


@pytest.fixture(scope="module", autouse=True)
def _built():
    ns.build_sim()


def sim(**kw):
    kw.setdefault("blocks", 64)
    return ns.NandSim(**kw)


def rnd(n, seed):
    return random.Random(seed).randbytes(n)


def erase_ok(s, block, target=0):
    c = s.cmd(ns.OP_ERASE, target=target, row=s.row(block, 0))
    assert c.err == ns.ERR_OK and c.status & 0x41 == 0x40, c


def program(s, row, data, target=0, ecc=False, addr=ns.DDR):
    s.mem_write(addr, data)
    return s.cmd(ns.OP_PROGRAM, target=target, row=row, length=len(data), dma=True, dma_addr=addr, ecc=ecc)


def read(s, row, n, target=0, ecc=False, addr=ns.DDR + 0x100000, col=0):
    c = s.cmd(ns.OP_PAGE_READ, target=target, row=row, col=col, length=n, dma=True, dma_addr=addr, ecc=ecc)
    return c, s.mem_read(addr, PAGE if ecc else n)


def test_header_matches_register_map():
    hdr = (ns.GEN / "nand_regs.h").read_text()
    found = dict(re.findall(r"^#define NAND_([A-Z0-9_]+)\s+(0x[0-9a-fA-F]+)\b", hdr, re.M))
    # The contract of hw/ip/nand/doc/nand.md, written out: the JSON (ns.REG) and the header must both match it.
    contract = dict(ID=0x00, VERSION=0x04, CTRL=0x08, STATUS=0x0C, IRQ_ENABLE=0x10, IRQ_STATUS=0x14,
                    BUF_BYTES=0x18, TIMING0=0x20, TIMING1=0x24, TIMING2=0x28, TIMING3=0x2C, SAMPLE=0x30,
                    RB_TIMEOUT=0x34, GEOMETRY=0x38, DMA_LO=0x3C, DMA_HI=0x40, CMD_CTRL=0x50, CMD_ROW=0x54,
                    CMD_COL=0x58, CMD_LEN=0x5C, CMD_DMA=0x60, CMD_PARAM=0x64, CMD_PUSH=0x68, COMP_INFO=0x70,
                    COMP_STATUS=0x74, COMP_DATA=0x78, COMP_POP=0x7C, PERF_CYCLES=0x80, PERF_BYTES=0x84)
    for name, off in contract.items():
        assert ns.REG[name] == off and int(found[name], 16) == off, name
    assert (ns.GEN / "nand_regs.html").exists() and (ns.GEN / "nand_regs.json").exists()


def test_identification_registers_and_reset_values():
    with sim() as s:
        assert s.r("ID") == 0x4E414E44
        v = s.r("VERSION")
        assert v & 0xFFFF == 0x0200 and (v >> 16) & 0xFF == 2
        assert s.r("BUF_BYTES") >= FULL
        # Reset timing = mode 0 at 100 MHz.
        for k, val in ns.timing_words(0).items():
            assert s.r(k) == val, k


def test_read_id_and_parameter_page():
    with sim(blocks=64) as s:
        s.init(mode=0, targets=1)
        c = s.cmd(ns.OP_READ_ID, length=5, dma=True, dma_addr=ns.DDR)
        assert c.err == 0
        assert s.mem_read(ns.DDR, 5) == bytes([0x2C, 0xDC, 0x90, 0x95, 0x56])  # MT29F4G08ABADA
        c = s.cmd(ns.OP_READ_ID, row=0x20, length=4)
        assert c.data.to_bytes(4, "little") == b"ONFI"
        c = s.cmd(ns.OP_READ_PARAM, length=768, dma=True, dma_addr=ns.DDR + 0x1000)
        assert c.err == 0
        pp = s.mem_read(ns.DDR + 0x1000, 768)
        for copy in range(3):
            p = pp[256 * copy:256 * (copy + 1)]
            assert p[:4] == b"ONFI"
            assert int.from_bytes(p[254:256], "little") == ns.onfi_crc16(p[:254])
        p = pp[:256]
        assert p[32:44].decode().strip() == "MICRON"
        assert p[44:64].decode().strip() == "MT29F4G08ABADAWP"
        assert int.from_bytes(p[80:84], "little") == PAGE
        assert int.from_bytes(p[84:86], "little") == SPARE
        # only what the model implements: no optional features; optional commands = program cache (bit 0),
        # read cache (bit 1) and GET/SET FEATURES (bit 2)
        assert int.from_bytes(p[6:8], "little") == 0 and int.from_bytes(p[8:10], "little") == 0x0007
        assert int.from_bytes(p[92:96], "little") == 64
        assert int.from_bytes(p[96:100], "little") == 64
        assert p[101] == 0x23
        assert int.from_bytes(p[129:131], "little") == 0x3F  # modes 0..5


@pytest.mark.parametrize("mode", range(6))
def test_every_timing_mode_program_read_erase(mode):
    with sim(blocks=16, tprog_ns=20000, tbers_ns=20000) as s:
        s.init(mode=mode, targets=1)
        assert s.model(0, "mode") == str(mode)
        c = s.cmd(ns.OP_GET_FEATURES, row=0x01)
        assert c.err == 0 and c.data & 0xFF == mode
        data = rnd(PAGE, mode)
        erase_ok(s, 2)
        c = program(s, s.row(2, 0), data)
        assert c.err == 0 and c.status == 0xE0, c
        c, back = read(s, s.row(2, 0), PAGE)
        assert c.err == 0 and back == data
        assert s.peek(0, s.row(2, 0))[:PAGE] == data
        erase_ok(s, 2)
        assert s.peek(0, s.row(2, 0)) == b"\xff" * FULL
        c, back = read(s, s.row(2, 0), 64)
        assert back == b"\xff" * 64


def test_timing_checker_catches_wrong_registers():
    """Controller timing registers for mode 5 while the flash is still in mode 0: the model aborts."""
    with sim() as s:
        s.init(mode=0, targets=1)
        s.set_timing(5)
        with pytest.raises(ns.SimViolation, match=r"t(WP|WC|CS|CLS|WH)"):
            s.cmd(ns.OP_READ_STATUS)


def test_sample_delay_matters():
    """The PHY sample point is real: sampling before tREA reads junk, the computed delay reads data."""
    with sim(blocks=8) as s:
        s.init(mode=5, targets=1)
        s.w("SAMPLE", 1)
        c = s.cmd(ns.OP_READ_ID, length=4)
        assert c.data != 0x9590DC2C
        s.w("SAMPLE", ns.timing_cycles(5)["SAMPLE"])
        c = s.cmd(ns.OP_READ_ID, length=4)
        assert c.data == 0x9590DC2C


def test_random_pages_both_targets_raw_and_ecc():
    with sim(blocks=16, tprog_ns=30000, tbers_ns=30000, seed=7) as s:
        s.init(mode=5)
        rng = random.Random(3)
        written = {}
        for t in (0, 1):
            for b in (1, 2):
                erase_ok(s, b, t)
        for i in range(6):
            t, b = i % 2, 1 + (i // 2) % 2
            page = sum(1 for k in written if k[0] == t and k[1] // 64 == b)
            row = s.row(b, page)
            ecc = bool(i % 3 == 0)
            data = rng.randbytes(PAGE)
            c = program(s, row, data, target=t, ecc=ecc)
            assert c.err == 0, c
            written[(t, row)] = (data, ecc)
        for (t, row), (data, ecc) in written.items():
            c, back = read(s, row, PAGE, target=t, ecc=ecc)
            assert c.err == 0 and back == data, (t, row)
            if ecc:
                assert c.corrected == 0
                spare = s.peek(t, row)[PAGE:]
                end = 8 + 4 * ECC_BYTES  # check bytes of the 4 sectors from spare byte 8
                assert spare[:8] == b"\xff" * 8 and spare[end:] == b"\xff" * (SPARE - end)


def test_change_read_column():
    with sim(blocks=8) as s:
        s.init(mode=4, targets=1)
        data = rnd(PAGE, 11)
        erase_ok(s, 1)
        assert program(s, s.row(1, 0), data).err == 0
        c, back = read(s, s.row(1, 0), 16)
        assert back == data[:16]
        c = s.cmd(ns.OP_CHANGE_COL, col=1000, length=100, dma=True, dma_addr=ns.DDR + 0x2000)
        assert c.err == 0
        assert s.mem_read(ns.DDR + 0x2000, 100) == data[1000:1100]
        c, back = read(s, s.row(1, 0), 40, col=2000)
        assert back == data[2000:2040]


def test_ecc_corrects_up_to_limit_and_reports_above():
    with sim(blocks=8, seed=5) as s:
        s.init(mode=5, targets=1)
        data = rnd(PAGE, 21)
        erase_ok(s, 1)
        assert program(s, s.row(1, 0), data, ecc=True).err == 0
        assert s.r("ECC_CFG") == T | ECC_BYTES << 8 | 512 << 16
        # t errors in every sector (4 x t, spread by the model): all corrected, counted per sector
        s.model(0, "errors", 4 * T)
        c, back = read(s, s.row(1, 0), PAGE, ecc=True)
        assert c.err == ns.ERR_OK and c.corrected == 4 * T and c.corr_map == 0xF and c.unc_map == 0
        assert c.sectors[:4] == [T] * 4 and back == data
        # t + 1 errors in every sector: detected, reported uncorrectable
        s.model(0, "errors", 4 * (T + 1))
        c, back = read(s, s.row(1, 0), PAGE, ecc=True)
        assert c.err == ns.ERR_ECC and c.unc_map == 0xF and back != data
        assert c.sectors[:4] == [ns.SECTOR_UNCORRECTABLE] * 4
        # without ECC the raw errors are visible
        s.model(0, "errors", 1)
        c, back = read(s, s.row(1, 0), PAGE)
        assert sum(bin(a ^ b).count("1") for a, b in zip(back, data)) == 1
        s.model(0, "errors", 0)
        # a flipped bit in a stored check word (spare) is corrected too
        raw = bytearray(s.peek(0, s.row(1, 0)))
        raw[PAGE + 8 + ECC_BYTES] ^= 0x04  # sector 1, check byte 0
        s.poke(0, s.row(2, 0), bytes(raw))
        c, back = read(s, s.row(2, 0), PAGE, ecc=True)
        assert c.err == 0 and c.corrected == 1 and c.corr_map == 0x2 and back == data and c.sectors[:4] == [0, 1, 0, 0]
        # an erased page reads clean through ECC
        c, back = read(s, s.row(3, 0), PAGE, ecc=True)
        assert c.err == 0 and c.corrected == 0 and back == b"\xff" * PAGE


def test_stuck_busy_times_out_and_recovers_after_reset():
    with sim(blocks=8) as s:
        s.init(mode=5, targets=1)
        s.w("RB_TIMEOUT", 20000)
        s.model(0, "stuck", 1)
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=16)
        assert c.err == ns.ERR_TIMEOUT
        c = s.cmd(ns.OP_RESET)
        assert c.err == ns.ERR_TIMEOUT  # the part is still stuck: still an error, never a hang
        s.model(0, "stuck", 0)
        s.w("CTRL", 1 | 2)  # soft reset, keep WP# high
        assert s.r("STATUS") & 1 == 0
        s.init(mode=5, targets=1)
        c, back = read(s, s.row(1, 0), 16)
        assert c.err == 0 and back == b"\xff" * 16


def test_status_errors_like_a_real_part():
    with sim(blocks=8, bad=[3]) as s:
        s.init(mode=5, targets=1)
        # factory bad-block marker visible on a raw read of the spare
        c, back = read(s, s.row(3, 0), 1, col=PAGE)
        assert back == b"\x00"
        c = s.cmd(ns.OP_ERASE, row=s.row(3, 0))
        assert c.err == ns.ERR_NAND_FAIL and c.status & 1
        erase_ok(s, 1)
        data = rnd(PAGE, 5)
        assert program(s, s.row(1, 0), data).err == 0
        c = program(s, s.row(1, 0), data)  # page not erased
        assert c.err == ns.ERR_NAND_FAIL and c.status & 1
        assert program(s, s.row(1, 5), data).err == 0
        c = program(s, s.row(1, 2), data)  # pages must be programmed in order within a block
        assert c.err == ns.ERR_NAND_FAIL
        s.w("CTRL", 0)  # WP# low
        c = s.cmd(ns.OP_READ_STATUS)
        assert c.status & 0x80 == 0
        c = program(s, s.row(1, 6), data)
        assert c.err == ns.ERR_NAND_FAIL
        s.w("CTRL", 2)


def test_dma_bounds_and_bad_commands():
    with sim(blocks=8) as s:
        s.init(mode=5, targets=1)
        s.w("DMA_LO", ns.DDR + 0x1000)
        s.w("DMA_HI", ns.DDR + 0x2000)
        s.touched()
        erase_ok(s, 1)
        s.mem_write(ns.DDR + 0x1000, rnd(PAGE, 1))
        for addr, n in ((ns.DDR, 16), (ns.DDR + 0x1F00, 0x200), (ns.DDR + 0x1002, 16), (ns.DDR + 0x3000, 4)):
            c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=n, dma=True, dma_addr=addr)
            assert c.err == ns.ERR_DMA_BOUNDS, (hex(addr), n)
            c = s.cmd(ns.OP_PROGRAM, row=s.row(1, 0), length=n & ~3 or 4, dma=True, dma_addr=addr)
            assert c.err == ns.ERR_DMA_BOUNDS
        assert s.touched() == (0, 0)
        s.w("DMA_HI", ns.DDR + 0x1800)
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=0x800, dma=True, dma_addr=ns.DDR + 0x1000)
        assert c.err == 0
        lo, hi = s.touched()
        assert lo == ns.DDR + 0x1000 and hi == ns.DDR + 0x1800
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=0x801, dma=True, dma_addr=ns.DDR + 0x1000)
        assert c.err == ns.ERR_DMA_BOUNDS  # rounded up to whole words, one past the window
        # bad descriptors: never reach the flash or the bus
        for kw in (dict(op=15), dict(op=ns.OP_PAGE_READ, length=5000),
                   dict(op=ns.OP_PROGRAM, length=6), dict(op=ns.OP_PAGE_READ, ecc=True, col=4)):
            c = s.cmd(**kw)
            assert c.err == ns.ERR_BAD_CMD, kw
        # AXI error response
        s.req(f"axi_err {ns.DDR + 0x1400:x} {ns.DDR + 0x1500:x}")
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=0x800, dma=True, dma_addr=ns.DDR + 0x1000)
        assert c.err == ns.ERR_DMA_BUS


def test_queue_tags_and_interrupt():
    with sim(blocks=8) as s:
        s.init(mode=5, targets=1)
        s.w("IRQ_ENABLE", 3)
        s.w("IRQ_STATUS", 7)
        assert s.irq() == 0
        for tag in range(5):
            s.submit(ns.OP_READ_STATUS, tag=100 + tag)
        tags = [s.complete().tag for _ in range(5)]
        assert tags == [100, 101, 102, 103, 104]
        assert s.irq() == 1 and s.r("IRQ_STATUS") & 1
        s.w("IRQ_STATUS", 1)
        assert s.irq() == 0
        c = s.cmd(15)
        assert c.err == ns.ERR_BAD_CMD and s.r("IRQ_STATUS") & 2 and s.irq() == 1
        s.w("IRQ_STATUS", 3)
        s.w("IRQ_ENABLE", 0)


def _timed(s, fn):
    c0 = s.cycles()
    fn()
    return s.cycles() - c0


def test_two_targets_interleave():
    """SPLIT commands let tPROG / tR of one target overlap with work on the other."""
    with sim(blocks=8) as s:
        s.init(mode=5)
        for t in (0, 1):
            erase_ok(s, 1, t)
        d = [rnd(PAGE, 40 + t) for t in (0, 1)]
        s.mem_write(ns.DDR, d[0])
        s.mem_write(ns.DDR + 0x1000, d[1])

        def seq_prog(page):
            for t in (0, 1):
                assert s.cmd(ns.OP_PROGRAM, target=t, row=s.row(1, page), length=PAGE, dma=True,
                             dma_addr=ns.DDR + 0x1000 * t).err == 0

        def inter_prog(page):
            for t in (0, 1):
                assert s.cmd(ns.OP_PROGRAM, target=t, row=s.row(1, page), length=PAGE, dma=True,
                             dma_addr=ns.DDR + 0x1000 * t, split=True).err == 0
            for t in (0, 1):
                c = s.cmd(ns.OP_WAIT_STATUS, target=t)
                assert c.err == 0 and c.status == 0xE0

        seq = _timed(s, lambda: seq_prog(0))
        inter = _timed(s, lambda: inter_prog(1))
        assert inter < 0.75 * seq, (seq, inter)

        def seq_read(page):
            for t in (0, 1):
                assert s.cmd(ns.OP_PAGE_READ, target=t, row=s.row(1, page), length=PAGE, dma=True,
                             dma_addr=ns.DDR + 0x10000 + 0x1000 * t).err == 0

        def inter_read(page):
            for t in (0, 1):
                assert s.cmd(ns.OP_PAGE_READ, target=t, row=s.row(1, page), split=True).err == 0
            for t in (0, 1):
                assert s.cmd(ns.OP_READ_DATA, target=t, row=s.row(1, page), length=PAGE, dma=True,
                             dma_addr=ns.DDR + 0x20000 + 0x1000 * t).err == 0

        seq = _timed(s, lambda: seq_read(1))
        inter = _timed(s, lambda: inter_read(1))
        assert inter < seq, (seq, inter)
        for t in (0, 1):
            assert s.mem_read(ns.DDR + 0x10000 + 0x1000 * t, PAGE) == d[t]
            assert s.mem_read(ns.DDR + 0x20000 + 0x1000 * t, PAGE) == d[t]


def test_dma_under_axi_stalls():
    """Random AXI ready stalls and read latency: data still exact, bursts legal (the harness checks
    WLAST, burst size/type and 4 KiB crossings)."""
    with sim(blocks=8, axi_stall_pct=40, axi_latency=9) as s:
        s.init(mode=5, targets=1)
        erase_ok(s, 1)
        for p, ecc in ((0, False), (1, True)):
            data = rnd(PAGE, 60 + p)
            addr = ns.DDR + 0x3C0 + p * 0x1000  # not burst aligned: first burst is short
            assert program(s, s.row(1, p), data, ecc=ecc, addr=addr).err == 0
            c, back = read(s, s.row(1, p), PAGE, ecc=ecc, addr=ns.DDR + 0x20FC0)
            assert c.err == 0 and back == data


def test_soft_reset_during_dma_and_busy():
    """Soft reset while a PROGRAM's DMA is reading DDR (slow AXI) and while a target is busy: the
    controller waits for the burst, empties its queues, and the next commands move exact data."""
    with sim(blocks=8, axi_stall_pct=60, axi_latency=30, tprog_ns=50000) as s:
        s.init(mode=5, targets=1)
        erase_ok(s, 1)
        data = rnd(PAGE, 77)
        s.mem_write(ns.DDR, data)
        s.submit(ns.OP_PROGRAM, row=s.row(1, 0), length=PAGE, dma=True, dma_addr=ns.DDR)
        s.run(40)  # the DDR -> page buffer DMA is under way
        s.w("CTRL", 1 | 2)
        s.run(3000)
        st = s.r("STATUS")
        assert st & 1 == 0 and st >> 16 & 0xFF == 0, hex(st)  # idle, no completion left
        s.init(mode=5, targets=1)  # RESET the flash too (it may have seen part of a command)
        assert program(s, s.row(1, 1), data).err == 0
        c, back = read(s, s.row(1, 1), PAGE)
        assert c.err == 0 and back == data
        # reset while the flash is busy programming: the next RESET + commands work
        s.submit(ns.OP_PROGRAM, row=s.row(1, 2), length=PAGE, dma=True, dma_addr=ns.DDR, split=False)
        s.run(8000)
        s.w("CTRL", 1 | 2)
        s.run(100)
        assert s.r("STATUS") & 1 == 0
        s.init(mode=5, targets=1)
        c, back = read(s, s.row(1, 1), PAGE)
        assert c.err == 0 and back == data


def test_opcode_numbers_agree_everywhere():
    """The opcodes are NandOp (NandTypes.scala), documented in CMD_CTRL.OPCODE's field doc and listed in
    nand_regs.json; nandsim's OP_* come from that list (the driver's NAND_OP_* from nand_regs.h:
    tests/test_facts.py)."""
    from lsmc.build import regmap
    doc = regmap.load("nand").registers["CMD_CTRL"].field("OPCODE").doc
    rtl = {name: int(num) for num, name in re.findall(r"(\d+) ([A-Z_]+)", doc)}
    assert len(rtl) == 15 and sorted(rtl.values()) == list(range(15)), doc
    assert {n: getattr(ns, "OP_" + n) for n in rtl} == rtl == regmap.load("nand").enums["OP"].values


def test_id_magic_is_generated_not_restated():
    """NAND_ID_MAGIC comes into nand_regs.h from the ID register's field (RegBlock constants), equal to
    the reset value nand_regs.json gives and to what the controller answers; no C source restates it."""
    from lsmc.build import ROOT, regmap
    magic = regmap.load("nand").registers["ID"].field("MAGIC").reset
    assert magic == int.from_bytes(b"NAND", "big")
    header = (ns.GEN / "nand_regs.h").read_text()
    assert re.search(rf"^#define NAND_ID_MAGIC\s+0x{magic:08X}u ", header, re.M), header[:400]
    literal = re.compile(rf"0x{magic:08x}", re.I)
    assert [p for p in (ROOT / "fw").rglob("*.[ch]") if literal.search(p.read_text())] == []
    with ns.NandSim(blocks=4, targets=1) as s:
        assert s.r("ID") == magic
