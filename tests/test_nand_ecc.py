"""BCH ECC of the NAND controller: the reference model (lsmc.bch) against the code's definition, and the
controller's encoder and decoder against the reference model with 0 .. t + 2 bit errors per sector."""
import random

import pytest

from lsmc.model.bch import Bch
from lsmc.sim import nandsim as ns


def flip(buf: bytearray, positions):
    for b in positions:
        buf[b // 8] ^= 0x80 >> (b % 8)


@pytest.mark.parametrize("t,sector", [(8, 512), (4, 512), (12, 1024)])
def test_reference_model_is_a_t_error_correcting_code(t, sector):
    code = Bch(t=t, data_bytes=sector, m=13 if sector == 512 else 14)
    assert code.r == code.m * t  # distinct minimal polynomials of degree m
    for j in range(1, 2 * t + 1):  # a^1 .. a^2t are roots of g
        acc = 0
        for d in range(code.r + 1):
            if code.gen >> d & 1:
                acc ^= code.exp[j * d % code.n]
        assert acc == 0, j
    assert code.ecc(b"\xff" * sector) == b"\xff" * code.ecc_bytes  # erased sector is a codeword
    rng = random.Random(t)
    nbits = 8 * (sector + code.ecc_bytes)
    for k in (0, 1, t - 1, t, t + 1, t + 2):
        data = rng.randbytes(sector)
        raw = bytearray(data + code.ecc(data))
        assert not any(code.syndromes(code.codeword(data, raw[sector:])))
        usable = [b for b in range(nbits) if b < 8 * sector + code.r]  # not the pad bits
        flip(raw, rng.sample(usable, k))
        out, n = code.decode(bytes(raw[:sector]), bytes(raw[sector:]))
        if k <= t:
            assert (out, n) == (data, k)
        else:
            assert n is None or out != data  # beyond t: flagged (or, rarely, another codeword)


def test_reference_model_rejects_bad_parameters():
    with pytest.raises(ValueError, match="do not fit"):
        Bch(t=8, data_bytes=1024, m=13)
    with pytest.raises(ValueError, match="sector must be 512 bytes"):
        Bch().ecc(b"\0" * 100)


@pytest.fixture(scope="module")
def sim():
    ns.build_sim()
    with ns.NandSim(blocks=8, seed=9) as s:
        s.init(mode=5, targets=1)
        yield s


def test_controller_matches_reference_up_to_t_plus_2(sim):
    rows = ns.ecc_sweep(sim, pages=2, seed=4)
    code = ns.ecc_code(sim)
    assert [r.bits_injected for r in rows] == list(range(code.t + 3))
    for r in rows:
        assert r.miscorrected == 0, r
        if r.bits_injected <= code.t:
            assert r.corrected == r.pages, r
        else:
            assert r.uncorrectable == r.pages, r


def test_errors_in_one_sector_only_and_erased_pages(sim):
    code = ns.ecc_code(sim)
    page = sim.geometry["page_bytes"]
    data = random.Random(2).randbytes(page)
    row = sim.row(2, 0)
    assert sim.cmd(ns.OP_ERASE, row=row).err == 0
    sim.mem_write(ns.DDR, data)
    assert sim.cmd(ns.OP_PROGRAM, row=row, dma=True, ecc=True, dma_addr=ns.DDR).err == 0
    raw = bytearray(sim.peek(0, row))
    # sector 2: t errors in its first and last data bytes and its check bytes; others clean
    first, last = 2 * 512 * 8, 3 * 512 * 8 - 1
    spare = 8 * (page + 8 + 2 * code.ecc_bytes)
    spots = [first, first + 1, last, last - 7, spare, spare + 8 * code.ecc_bytes - 1, spare + 50, first + 2000]
    flip(raw, spots[:code.t])
    sim.poke(0, row, bytes(raw))
    c = sim.cmd(ns.OP_PAGE_READ, row=row, dma=True, ecc=True, dma_addr=ns.DDR + 0x4000)
    assert c.err == 0 and c.sectors[:4] == [0, 0, code.t, 0] and c.corr_map == 0x4 and c.corrected == code.t
    assert sim.mem_read(ns.DDR + 0x4000, page) == data
    # an erased page, and one with a few bits flipped, read as FFh
    erased = sim.row(3, 0)
    assert sim.cmd(ns.OP_ERASE, row=erased).err == 0
    c = sim.cmd(ns.OP_PAGE_READ, row=erased, dma=True, ecc=True, dma_addr=ns.DDR + 0x4000)
    assert c.err == 0 and c.corrected == 0 and sim.mem_read(ns.DDR + 0x4000, page) == b"\xff" * page
    raw = bytearray(sim.peek(0, erased))
    flip(raw, [5, 9000, 8 * (page + 8) + 3])
    sim.poke(0, erased, bytes(raw))
    c = sim.cmd(ns.OP_PAGE_READ, row=erased, dma=True, ecc=True, dma_addr=ns.DDR + 0x4000)
    assert c.err == 0 and c.sectors[:4] == [2, 0, 1, 0] and sim.mem_read(ns.DDR + 0x4000, page) == b"\xff" * page


def test_decoder_cycles_per_codeword(sim):
    """Latency the decoder adds to a page read with t errors in every sector, against a clean read."""
    code = ns.ecc_code(sim)
    row = sim.row(4, 0)
    assert sim.cmd(ns.OP_ERASE, row=row).err == 0
    sim.mem_write(ns.DDR, random.Random(5).randbytes(2048))
    assert sim.cmd(ns.OP_PROGRAM, row=row, dma=True, ecc=True, dma_addr=ns.DDR).err == 0
    clean = bytes(sim.peek(0, row))

    def timed(raw, dma=False):  # without DMA: the DMA out would hide part of the decoder (it trails it)
        sim.poke(0, row, raw)
        c0 = sim.cycles()
        c = sim.cmd(ns.OP_PAGE_READ, row=row, dma=dma, ecc=True, dma_addr=ns.DDR + 0x4000)
        return c, sim.cycles() - c0
    _, base = timed(clean)
    _, base_dma = timed(clean, dma=True)
    raw = bytearray(clean)
    for sec in range(4):  # t errors in the data part of each sector
        flip(raw, [sec * 4096 + 500 * i for i in range(code.t)])
    c, worst = timed(bytes(raw))
    assert c.sectors[:4] == [code.t] * 4
    per_codeword = (worst - base) / 4
    print(f"decoder: {per_codeword:.0f} cycles per codeword with t = {code.t} errors")
    worst_reg = sim.r("ECC_DEC") & 0xFFFF
    assert worst_reg - 8 <= per_codeword <= worst_reg
    # with the DMA on, sectors already corrected go out while the decoder works on the next: at least
    # the decoding of the first three sectors hides behind the DMA
    c, worst_dma = timed(bytes(raw), dma=True)
    assert c.sectors[:4] == [code.t] * 4 and sim.mem_read(ns.DDR + 0x4000, 2048) == clean[:2048]
    assert worst_dma - base_dma < (worst - base) - 2 * worst_reg, (worst_dma - base_dma, worst - base)
