"""Fault injection in the ONFI model (nandsim's set) seen through the controller: random bit flips up
to a bound, weak blocks, weak pages, grave pages, program/erase failures, grown bad blocks, stuck
R/B# and power cuts during program and erase."""
import random

import pytest

from lsmc.sim import nandsim as ns

PAGE = 2048


@pytest.fixture(scope="module", autouse=True)
def _built():
    ns.build_sim()


def prog(s, row, data, **kw):
    s.mem_write(ns.DDR, data)
    return s.cmd(ns.OP_PROGRAM, row=row, dma=True, ecc=True, dma_addr=ns.DDR, **kw)


def read(s, row):
    c = s.cmd(ns.OP_PAGE_READ, row=row, dma=True, ecc=True, dma_addr=ns.DDR + 0x10_0000)
    return c, s.mem_read(ns.DDR + 0x10_0000, PAGE)


def test_bit_flips_up_to_a_bound_are_corrected():
    with ns.NandSim(blocks=8, seed=3) as s:
        s.init(mode=5, targets=1)
        data = random.Random(1).randbytes(PAGE)
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == 0
        assert prog(s, s.row(1, 0), data).err == 0
        s.model(0, "flipmax", 8)  # at most 8 per page: never more than t = 8 in a sector
        seen = 0
        for _ in range(6):
            c, back = read(s, s.row(1, 0))
            assert c.err == 0 and back == data, c
            seen += c.corrected
        assert seen > 0  # flips did happen


def test_weak_block_weak_page_and_injected_failures():
    with ns.NandSim(blocks=8, seed=4) as s:
        s.init(mode=5, targets=1)
        s.model(0, "weakblock", 2, 1)  # block 2: one erase succeeds
        assert s.cmd(ns.OP_ERASE, row=s.row(2, 0)).err == ns.ERR_OK
        c = s.cmd(ns.OP_ERASE, row=s.row(2, 0))
        assert c.err == ns.ERR_NAND_FAIL and c.status & 1
        assert s.cmd(ns.OP_ERASE, row=s.row(2, 0)).err == ns.ERR_NAND_FAIL  # grown bad from now on
        assert prog(s, s.row(2, 0), b"\0" * PAGE).err == ns.ERR_NAND_FAIL
        data = random.Random(2).randbytes(PAGE)
        assert s.cmd(ns.OP_ERASE, row=s.row(3, 0)).err == 0
        s.model(0, "weakpage", s.row(3, 1), 0)  # page 1 of block 3 fails its first program
        assert prog(s, s.row(3, 0), data).err == 0
        assert prog(s, s.row(3, 1), data).err == ns.ERR_NAND_FAIL
        c, _ = read(s, s.row(3, 1))  # the failed program left it torn: flagged, not delivered as good
        assert c.err == ns.ERR_ECC and s.peek(0, s.row(3, 1))[:PAGE] != data
        s.model(0, "failerase", 1)
        assert s.cmd(ns.OP_ERASE, row=s.row(4, 0)).err == ns.ERR_NAND_FAIL
        assert s.cmd(ns.OP_ERASE, row=s.row(4, 0)).err == ns.ERR_OK
        s.model(0, "failprog", 1)
        assert prog(s, s.row(4, 0), data).err == ns.ERR_NAND_FAIL
        assert prog(s, s.row(4, 1), data).err == ns.ERR_OK
        s.model(0, "growbad", 5)
        assert s.cmd(ns.OP_ERASE, row=s.row(5, 0)).err == ns.ERR_NAND_FAIL


def test_grave_page_becomes_uncorrectable_after_its_read_limit():
    with ns.NandSim(blocks=8, seed=5) as s:
        s.init(mode=5, targets=1)
        data = random.Random(3).randbytes(PAGE)
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == 0
        assert prog(s, s.row(1, 0), data).err == 0
        s.model(0, "gravepage", s.row(1, 0), 2)
        for _ in range(2):
            c, back = read(s, s.row(1, 0))
            assert c.err == 0 and back == data
        c, back = read(s, s.row(1, 0))
        assert c.err == ns.ERR_ECC and c.unc_map == 0xF


@pytest.mark.parametrize("op", ["program", "erase"])
def test_power_cut_leaves_random_bits_and_the_target_off(op):
    with ns.NandSim(blocks=8, seed=6) as s:
        s.init(mode=5, targets=1)
        s.w("RB_TIMEOUT", 100_000)
        data = random.Random(4).randbytes(PAGE)
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == 0
        if op == "erase":
            assert prog(s, s.row(1, 0), data).err == 0
        s.model(0, "powercut", 0)
        c = prog(s, s.row(1, 0), data) if op == "program" else s.cmd(ns.OP_ERASE, row=s.row(1, 0))
        assert c.err == ns.ERR_TIMEOUT  # no power: R/B# never rises
        assert s.model(0, "powered") == "0"
        raw = s.peek(0, s.row(1, 0))[:PAGE]
        assert raw != data and raw != b"\xff" * PAGE  # torn: neither old nor new
        c, back = read(s, s.row(1, 0))
        assert c.err == ns.ERR_TIMEOUT
        s.w("CTRL", 3)  # soft reset (WP# stays high)
        s.model(0, "poweron")
        s.init(mode=5, targets=1)
        c, back = read(s, s.row(1, 0))
        assert c.err == ns.ERR_ECC  # a torn page is reported, never returned as data
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == 0
        assert prog(s, s.row(1, 0), data).err == 0
        c, back = read(s, s.row(1, 0))
        assert c.err == 0 and back == data
