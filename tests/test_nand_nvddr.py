"""NV-DDR through the controller (NandDdrTiming + the harness's pad model of the DDR I/O primitives)
against the MT29F16G08ABABA model with every NV-DDR timing check on (a violation ends the simulation)."""
import random

import pytest

from lsmc.sim import nandsim as ns

FAST = dict(blocks=8, pages=64, targets=2, part="mt29f16g08ababa", tr_ns=2000, tprog_ns=5000, tbers_ns=8000)
ONFI = int.from_bytes(b"ONFI", "little")


def eye_ps(mode):
    """Width of the DQ eye after a DQS edge at the clock the controller runs: [tDQSQ, tCK/2 - tQHS)."""
    t = ns.NVDDR_MODES[mode]
    return ns.NVDDR_CK_DIV[mode] * ns.CLK_NS * 1000 // 2 - t["tQHS"] - t["tDQSQ"]


def session(s, mode):
    first, last, kept = s.init_nvddr(mode, tap_step=16)
    assert first <= kept <= last and last - first < eye_ps(mode)
    c = s.cmd(ns.OP_READ_ID, row=0, length=4)
    assert c.err == ns.ERR_OK and c.data.to_bytes(4, "little") == bytes([0x2C, 0x48, 0x00, 0x26])
    assert s.cmd(ns.OP_GET_FEATURES, row=1).data == 0x10 | mode
    page = s.geometry["page_bytes"]
    rng = random.Random(mode)
    for t in (0, 1):
        c = s.cmd(ns.OP_ERASE, target=t, row=s.row(1, 0))
        assert c.err == ns.ERR_OK and c.status == 0xE0, c
        for p in range(2):
            data = rng.randbytes(page)
            s.mem_write(ns.DDR, data)
            c = s.cmd(ns.OP_PROGRAM, target=t, row=s.row(1, p), dma=True, ecc=True, dma_addr=ns.DDR)
            assert c.err == ns.ERR_OK and c.status == 0xE0, c
            assert s.peek(t, s.row(1, p))[:page] == data  # the array holds exactly what was sent
            c = s.cmd(ns.OP_PAGE_READ, target=t, row=s.row(1, p), dma=True, ecc=True, dma_addr=ns.DDR + 0x10000)
            assert c.err == ns.ERR_OK and c.sectors == [0] * 8, c
            assert s.mem_read(ns.DDR + 0x10000, page) == data
    assert s.r("DDR_CAPTURE") >> 16 & 1 == 0  # no data-input underrun
    return first, last, kept


def test_nvddr_mode2_session_and_training():
    with ns.NandSim(**FAST) as s:
        session(s, 2)
        # outside the eye the capture reads junk: the check that training is needed, and works
        kept = s.r("DDR_CAPTURE") & 0x7FFF
        for off in (0, kept - (1 << 9), kept + (4 << 9)):  # slot 0; one half-cycle earlier; a DQS period later
            s.w("DDR_CAPTURE", off)
            assert s.cmd(ns.OP_READ_ID, row=0x20, length=4).data != ONFI, hex(off)
        s.w("DDR_CAPTURE", kept)
        assert s.cmd(ns.OP_READ_ID, row=0x20, length=4).data == ONFI


def test_nvddr_training_measures_the_eye():
    """With a delay line as long as half a cycle (128 taps of 40 ps = 5.1 ns: every sample position
    reachable, unlike the ECP5's 3.175 ns) the trained run is mode 5's eye [tDQSQ, tCK/2 - tQHS) to a tap;
    with the ECP5's 25 ps taps it is the eye's reachable part (the gaps between slots cut it)."""
    for tap_ps in (40, ns.TAP_PS):
        with ns.NandSim(tap_ps=tap_ps, **FAST) as s:
            first, last, kept = s.init_nvddr(5, tap_step=1)
            width, shortest = last - first, eye_ps(5) - 2 * tap_ps if tap_ps == 40 else 0
            assert shortest < width < eye_ps(5), (tap_ps, width)
            assert s.cmd(ns.OP_READ_ID, row=0x20, length=4).data == ONFI


def ecp5_margin(tdqsck_ps):
    """Mode 5 with the flash's tDQSCK at `tdqsck_ps` (the eye's phase against the controller clock): the
    eye measured with a contiguous 40-ps line, the setting the ECP5's 25-ps line trains to, and the
    smaller distance from that setting to an eye edge (ps)."""
    with ns.NandSim(tap_ps=40, tdqsck_ps=tdqsck_ps, **FAST) as s:
        eye_first, eye_last, _ = s.init_nvddr(5, tap_step=1)
    with ns.NandSim(tdqsck_ps=tdqsck_ps, **FAST) as s:
        _, _, kept = s.init_nvddr(5, tap_step=1)
        assert s.cmd(ns.OP_READ_ID, row=0x20, length=4).data == ONFI
    return min(kept - eye_first, eye_last - kept)


def test_nvddr_mode5_ecp5_margin_worst_phase():
    """At the phase where the eye's middle falls in the gap between two slots' DELAYF ranges (tDQSCK
    8.5 ns here) the trained setting keeps the margin hw/ip/nand/doc/nand.md computes for mode 5 (0.65 ns, to the
    40-ps measurement's resolution) and no more."""
    assert 600 <= ecp5_margin(8500) < 700


@pytest.mark.long
def test_nvddr_mode5_ecp5_margin_every_phase():
    """tDQSCK over a whole 5 ns (every eye phase against the sample grid, 250 ps apart): the ECP5 line
    always trains inside mode 5's eye, with 0.64-1.52 ns to its nearer edge (ideal: 1.575)."""
    margins = [ecp5_margin(t) for t in range(5000, 10001, 250)]
    assert 600 <= min(margins) < 700 and max(margins) <= eye_ps(5) // 2, margins


def test_nvddr_mode5_two_bytes_per_cycle():
    """Mode 5: CLK = the controller clock (CK_DIV 1), two bytes per cycle through the page buffer, the BCH
    encoder/remainder steps and the check-byte collection; the trained window is mode 5's eye."""
    with ns.NandSim(**FAST) as s:
        session(s, 5)
        # errors: 0..t+1 per sector, data and check bits, every sector's verdict equal to the reference decoder's
        rows = ns.ecc_sweep(s, pages=1, max_extra=1, seed=5)
        code = ns.ecc_code(s)
        for r in rows:
            assert r.miscorrected == 0
            assert (r.uncorrectable == 1) == (r.bits_injected > code.t), r


def test_nvddr_mode5_throughput_at_the_bus_rate():
    """During data transfers the mode-5 bus moves 2 bytes per controller cycle (PERF_BYTES / PERF_CYCLES)."""
    with ns.NandSim(**FAST) as s:
        s.init_nvddr(5, tap_step=16)
        for op in ("read", "program"):
            m = ns.measure_nvddr(s, op, targets=1, pages=2)
            assert m.data_bytes / m.data_cycles > 1.95, m
            assert m.bus_limit_mb_per_s == 200.0


@pytest.mark.long
@pytest.mark.parametrize("mode", [0, 1, 3, 4])
def test_nvddr_slow_modes(mode):
    with ns.NandSim(**FAST) as s:
        session(s, mode)


def test_nvddr_other_tdqsck_still_trains():
    with ns.NandSim(**FAST, tdqsck_ps=21000) as s:  # a late part: DQS more than two mode-2 clocks after CLK
        session(s, 2)


def test_nvddr_mode_outside_onfi_is_refused():
    with pytest.raises(ValueError, match="NV-DDR mode 6"):
        ns.nvddr_words(6)


def test_nvddr_cache_read_sequence_overlaps_tr():
    """READ CACHE (31h) / READ CACHE END (3Fh): four pages of one block come back in order, byte-exact
    with clean sector verdicts, and the array reads the next page while the bus moves this one, so the
    sequence hides the tR of the pages after the first (tR 20 us here)."""
    with ns.NandSim(blocks=8, pages=16, targets=1, part="mt29f16g08ababa", tr_ns=20000, tprog_ns=5000,
                    tbers_ns=8000) as s:
        s.init_nvddr(5, tap_step=16)
        page, n = s.geometry["page_bytes"], 4
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == ns.ERR_OK
        datas = [random.Random(p).randbytes(page) for p in range(n)]
        for p, data in enumerate(datas):
            s.mem_write(ns.DDR, data)
            assert s.cmd(ns.OP_PROGRAM, row=s.row(1, p), dma=True, ecc=True, dma_addr=ns.DDR).err == ns.ERR_OK
        c0 = s.cycles()
        for p in range(n):
            c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, p), dma=True, ecc=True, dma_addr=ns.DDR + 0x10000)
            assert c.err == ns.ERR_OK and c.sectors == [0] * 8, c
        plain = s.cycles() - c0
        c0 = s.cycles()
        assert s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), split=True).err == ns.ERR_OK
        for p in range(n):
            op = ns.OP_READ_CACHE if p < n - 1 else ns.OP_READ_CACHE_END
            c = s.cmd(op, dma=True, ecc=True, dma_addr=ns.DDR + 0x20000 + p * page)
            assert c.err == ns.ERR_OK and c.sectors == [0] * 8, (p, c)
        cached = s.cycles() - c0
        for p, data in enumerate(datas):
            assert s.mem_read(ns.DDR + 0x20000 + p * page, page) == data, p
        assert s.cmd(ns.OP_READ_STATUS).status & 0x60 == 0x60  # array and cache ready after 3Fh
        # three of the four tR (2,000 cycles at 100 MHz each) overlap a transfer; at least two must be hidden
        assert plain - cached > 2 * 2000, (plain, cached)


def test_nvddr_cache_program_overlaps_tprog_and_reports_failc():
    """PROGRAM_CACHE (80h..15h): the next page's transfer overlaps the previous page's tPROG, the array
    holds every page, and a page that fails is reported by the next page's completion (FAILC, status bit
    1), as ONFI's cache program does; the closing 10h reports its own page (FAIL)."""
    with ns.NandSim(blocks=8, pages=16, targets=1, part="mt29f16g08ababa", tr_ns=2000, tprog_ns=50000,
                    tbers_ns=8000) as s:
        s.init_nvddr(5, tap_step=16)
        page, n = s.geometry["page_bytes"], 4
        datas = [random.Random(10 + p).randbytes(page) for p in range(n)]
        for p, data in enumerate(datas):
            s.mem_write(ns.DDR + p * page, data)

        def run(block, op_of, fail_page=None):
            assert s.cmd(ns.OP_ERASE, row=s.row(block, 0)).err == ns.ERR_OK
            c0, errs = s.cycles(), []
            for p in range(n):
                if p == fail_page:
                    s.model(0, "failprog", 1)
                c = s.cmd(op_of(p), row=s.row(block, p), dma=True, ecc=True, dma_addr=ns.DDR + p * page)
                errs.append(c.err)
            c = s.cmd(ns.OP_WAIT_STATUS)
            return s.cycles() - c0, errs, c
        plain, errs, _ = run(1, lambda p: ns.OP_PROGRAM)
        assert errs == [ns.ERR_OK] * n
        cached, errs, last = run(2, lambda p: ns.OP_PROGRAM_CACHE if p < n - 1 else ns.OP_PROGRAM)
        assert errs == [ns.ERR_OK] * n and last.status & 0x63 == 0x60, last
        for p, data in enumerate(datas):
            assert s.peek(0, s.row(2, p))[:page] == data, p
        # three of the four transfers (21.6 us + the DMA in, > 2,160 cycles each) hide behind tPROG (50 us)
        assert plain - cached > 3 * 2000, (plain, cached)
        _, errs, _ = run(3, lambda p: ns.OP_PROGRAM_CACHE if p < n - 1 else ns.OP_PROGRAM, fail_page=1)
        assert errs == [ns.ERR_OK, ns.ERR_OK, ns.ERR_NAND_FAIL, ns.ERR_OK], errs
