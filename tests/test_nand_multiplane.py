"""Multi-plane operations through the controller RTL against the MT29F16G08ABABA model (2 planes,
its plane rules checked): PROGRAM / PAGE_READ / ERASE with CMD_CTRL.MPLANE confirm a plane before the last
with 11h / 32h / D1h, READ_DATA with MPLANE selects a plane's page register by 06h-E0h. The command lists
(nandsim.multiplane_*_program) are the reference the firmware driver's are checked against
(tests/test_nand_driver.py)."""
import pytest

from lsmc.sim import nandsim as ns

PART = dict(blocks=8, pages=128, targets=2, part="mt29f16g08ababa")


def test_multiplane_lists():
    """Page i of a way goes to plane i % 2 at page address i // 2; the planes before the last carry MPLANE
    (11h), the last plane's command is a SPLIT cache program (15h), a plain program (10h) in the last group;
    reads end with a READ_DATA (06h-E0h) per plane."""
    addr = lambda t, i: 0x1000 * (4 * t + i)
    prog = ns.multiplane_program_program(2, 4, block=2, pages_per_block=128, dma_addr=addr)
    P, C, W = ns.OP_PROGRAM, ns.OP_PROGRAM_CACHE, ns.OP_WAIT_STATUS
    assert [(c["op"], c["target"], c.get("row"), c.get("mplane", False)) for c in prog] == [
        (P, 0, 256, True), (C, 0, 384, False), (P, 1, 256, True), (C, 1, 384, False),
        (W, 0, None, False), (P, 0, 257, True), (P, 0, 385, False), (W, 1, None, False), (P, 1, 257, True),
        (P, 1, 385, False), (W, 0, None, False), (W, 1, None, False)]
    assert [c["dma_addr"] for c in prog if c["op"] in (P, C)] == [addr(t, i) for i0 in (0, 2) for t in (0, 1)
                                                             for i in (i0, i0 + 1)]
    rd = ns.multiplane_read_program(1, 4, block=2, pages_per_block=128, dma_addr=addr)
    R, D = ns.OP_PAGE_READ, ns.OP_READ_DATA
    assert [(c["op"], c["row"], c.get("mplane", False), c.get("split", False)) for c in rd] == [
        (R, 256, True, False), (R, 384, False, True), (D, 256, True, False), (D, 384, True, False),
        (R, 257, True, False), (R, 385, False, True), (D, 257, True, False), (D, 385, True, False)]
    # two ways: a way's next reads begin after its last READ_DATA, one command after each READ_DATA
    rd = ns.multiplane_read_program(2, 4, block=2, pages_per_block=128, dma_addr=addr)
    assert [(c["op"], c["target"], c["row"] % 128) for c in rd] == [
        (R, 0, 0), (R, 0, 0), (R, 1, 0), (R, 1, 0),
        (D, 0, 0), (D, 0, 0), (R, 0, 1), (D, 1, 0), (R, 0, 1), (D, 1, 0), (R, 1, 1),
        (D, 0, 1), (R, 1, 1), (D, 0, 1), (D, 1, 1), (D, 1, 1)]
    with pytest.raises(ValueError, match="a block of plane 0"):
        ns.multiplane_program_program(2, 4, block=1, pages_per_block=128, dma_addr=addr)
    with pytest.raises(ValueError, match="3 pages per way over 2 planes"):
        ns.multiplane_read_program(2, 3, block=2, pages_per_block=128, dma_addr=addr)


def test_multiplane_program_and_read_nvddr5():
    """NV-DDR mode 5, one channel x 2 ways x 8 pages: multi-plane programs (two planes per tPROG) take the
    time that tPROG allows twice the pages in, against the one-plane cache programs of the same pages;
    multi-plane reads bring every page back byte-exact (checked in DDR by measure_channels, the programs
    in the arrays)."""
    with ns.NandSim(**PART) as s:
        s.init_nvddr(5, tap_step=16)
        assert ns.planes_of(s) == 2
        one = ns.measure_channels(s, ways=2, pages=8, block=1, op="program")
        two = ns.measure_channels(s, ways=2, pages=8, block=2, op="mp_program")
        rd = ns.measure_channels(s, ways=2, pages=8, block=4, op="mp_read")
    bound = lambda planes: 2 * planes * 4096 / 230.0  # MB/s tPROG allows 2 ways x planes pages
    assert 0.85 * bound(1) < one.mb_per_s < bound(1), one
    assert 0.75 * bound(2) < two.mb_per_s < bound(2), two
    assert two.mb_per_s > 1.6 * one.mb_per_s, (one.mb_per_s, two.mb_per_s)
    assert rd.mb_per_s > 0.7 * 200, rd  # a tR per two pages hides behind the other way's transfers


def test_multiplane_read_sdr():
    """The same part in SDR mode 5: 32h / 30h and 06h-E0h through the SDR time sequence layer."""
    with ns.NandSim(**PART) as s:
        s.init(mode=5)
        code, page = ns.ecc_code(s), s.geometry["page_bytes"]
        datas = {}
        for i in range(4):
            datas[i] = bytes([i + 1]) * page
            s.poke(0, s.row(2 + i % 2, i // 2), ns.page_raw(code, datas[i], s.geometry["spare_bytes"]))
        prog = ns.multiplane_read_program(1, 4, block=2, pages_per_block=128,
                                          dma_addr=lambda t, i: ns.DDR + 0x10_0000 + i * page)
        for c in prog:
            got = s.cmd(**c)
            assert got.err == ns.ERR_OK, (c, got)
        for i, d in datas.items():
            assert s.mem_read(ns.DDR + 0x10_0000 + i * page, page) == d, i


def test_multiplane_rules_reach_the_model():
    """The controller sends what it is told: a second plane in the same plane as the first is the model's
    violation (its parameter page promises one row per plane), and MPLANE on an opcode without a
    multi-plane form is refused (BAD_CMD) before the flash sees anything."""
    with ns.NandSim(**PART) as s:
        s.init(mode=5)
        c = s.cmd(ns.OP_READ_STATUS, mplane=True)
        assert c.err == ns.ERR_BAD_CMD, c
        assert s.cmd(ns.OP_PROGRAM, row=s.row(2, 0), length=4, mplane=True).err == ns.ERR_OK
        with pytest.raises(ns.SimViolation, match="blocks 2 and 4 are both in plane 0"):
            s.cmd(ns.OP_PROGRAM, row=s.row(4, 0), length=4)
