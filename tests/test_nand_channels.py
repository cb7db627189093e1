"""The ping-pong page buffer (a page read's ECC correction and DMA in the back end while the next page
crosses the bus), cache reads under the channels x ways scheduler, and several channels in one
simulation: NV-DDR mode 5 against the MT29F16G08ABABA model, every timing check on."""
import random

import pytest

from lsmc.sim import nandsim as ns

PART = dict(blocks=4, pages=128, targets=2, part="mt29f16g08ababa")


def nvddr5(s):
    for k in range(s.channels):
        s.select(k)
        s.init_nvddr(5, tap_step=16)


def poke_pages(s, pages, seed, block=1):
    """Random pages with ECC written through the back door of each target of the current channel."""
    code, g, rng = ns.ecc_code(s), s.geometry, random.Random(seed)
    datas = {}
    for t in range(s.targets):
        for p in range(pages):
            datas[t, p] = rng.randbytes(g["page_bytes"])
            s.poke(t, s.row(block, p), ns.page_raw(code, datas[t, p], g["spare_bytes"]))
    return datas


def test_back_end_keeps_completion_order_and_corrects_while_the_next_page_moves():
    """Eight commands queued at once: page reads whose correction (t errors in every sector, the decoder's
    worst case) and DMA run in the back end, and status reads the front end completes meanwhile (held until
    the older page is out). Completions arrive in submission order, every page byte-exact."""
    with ns.NandSim(**PART) as s:
        nvddr5(s)
        page = s.geometry["page_bytes"]
        datas = poke_pages(s, 2, seed=3)
        for t in (0, 1):
            s.model(t, "errors", 64)  # 8 flips in each of the 8 sectors = t
        dst = lambda t, p: ns.DDR + 0x20_0000 + (2 * t + p) * page
        rd = lambda t, p: dict(op=ns.OP_PAGE_READ, target=t, row=s.row(1, p), ecc=True, dma=True, dma_addr=dst(t, p))
        cmds = [rd(0, 0), dict(op=ns.OP_READ_STATUS, target=1), rd(1, 0), dict(op=ns.OP_READ_STATUS, target=0),
                rd(0, 1), rd(1, 1), dict(op=ns.OP_READ_STATUS, target=1), dict(op=ns.OP_READ_ID, row=0x20, length=4)]
        for i, c in enumerate(cmds):
            s.submit(**c, tag=i)
        got = [s.complete() for _ in cmds]
        assert [c.tag for c in got] == list(range(len(cmds)))
        assert [c.op for c in got] == [c["op"] for c in cmds]
        for c in got:
            assert c.err == ns.ERR_OK, c
            if c.op == ns.OP_PAGE_READ:
                assert c.corrected == 64 and c.sectors == [8] * 8, c
            else:
                assert c.corrected == 0 and c.sectors == [0] * 8, c
        assert got[1].status & 0x40 and got[7].data == int.from_bytes(b"ONFI", "little")
        for (t, p), data in datas.items():
            assert s.mem_read(dst(t, p), page) == data, (t, p)


def test_cache_read_program_order():
    """Per way: PAGE_READ, 31h for page 0, then READ_DATA / 31h taking turns with the other ways; 3Fh last."""
    prog = ns.cache_read_program(2, 3, block=1, pages_per_block=128, dma_addr=lambda t, q: 0x1000 * (3 * t + q))
    ops = [(c["op"], c["target"]) for c in prog]
    PR, RC, RE, RD = ns.OP_PAGE_READ, ns.OP_READ_CACHE, ns.OP_READ_CACHE_END, ns.OP_READ_DATA
    assert ops == [(PR, 0), (PR, 1), (RC, 0), (RC, 1), (RD, 0), (RC, 0), (RD, 1), (RC, 1), (RD, 0), (RE, 0),
                   (RD, 1), (RE, 1), (RD, 0), (RD, 1)]
    assert [c["dma_addr"] for c in prog if c["op"] == RD] == [0, 0x3000, 0x1000, 0x4000, 0x2000, 0x5000]
    with pytest.raises(ValueError, match="a block holds 128"):
        ns.cache_read_program(2, 129, block=1, pages_per_block=128, dma_addr=lambda t, q: 0)


def test_two_channels_cache_read_near_the_bus_limit():
    """Two channels x two ways x 24 pages, bit errors on one target (corrected in the back end): every page
    byte-exact in DDR, each channel above 87 % of its 200 MB/s bus over the whole run (first tR included),
    and the two together twice one channel within 1 %."""
    with ns.NandSim(channels=2, **PART) as s:
        nvddr5(s)
        s.select(1)
        s.model(0, "errors", 16)
        r = ns.measure_channels(s, ways=2, pages=24)
    assert r.channels == 2 and r.bytes == 2 * 2 * 24 * 4096 and r.bus_limit_mb_per_s == 400.0
    for _, nbytes, _, _, eff in r.per_channel:
        assert nbytes == 2 * 24 * 4096 and eff > 0.87, r.per_channel
    assert r.mb_per_s > 0.99 * sum(mb for *_, mb, _ in r.per_channel)


def test_channel_selection_is_checked():
    with ns.NandSim(channels=2, **PART) as s:
        with pytest.raises(ns.SimError, match="channel 2 out of range 0..1"):
            s.select(2)
        with pytest.raises(ns.SimError, match="out of range"):
            s.req("ch 5")
