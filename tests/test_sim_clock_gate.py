"""common.SimClockGate stops the clock of an idle block in Verilator only; synthesis (and a Verilator build
with -DLSMC_NO_CLOCK_GATE) sees a free-running clock. The gated block must then behave exactly as the
free-running one: the NAND controller (its BCH decoder is gated) is run through the same commands in
both builds and must give the same completions, data and cycle counts."""
import random
import re

import pytest

from lsmc import build
from lsmc.model.bch import Bch
from lsmc.sim import nandsim as ns


def test_generated_gate_is_free_running_outside_verilator():
    ns.build_sim()  # generates NandController.v
    v = (ns.GEN / "NandController.v").read_text()
    body = v[v.index("module LsmcSimClockGate"):]
    body = body[:body.index("endmodule")]
    # gated only under VERILATOR and not LSMC_NO_CLOCK_GATE; every other branch is a plain wire
    assert "`ifdef VERILATOR" in body and "`ifndef LSMC_NO_CLOCK_GATE" in body
    assert body.count("assign gclk = clk;") == 2 and body.count("assign gclk = clk & enLow;") == 1
    assert re.search(r"^\s*LsmcSimClockGate\s+\w+\s*\(", v, re.M)  # instantiated (the BCH decoder's)


def _session(exe):
    """Program and read pages with 0, t and t + 1 bit errors per sector, plus raw and status commands;
    returns everything observable with the cycle count of each command."""
    saved = ns.build_sim
    ns.build_sim = lambda: exe
    try:
        out = []
        with ns.NandSim(blocks=8, seed=3) as sim:
            sim.init(mode=5, targets=1)
            code = Bch()
            rng = random.Random(11)
            for blk, errors in ((1, 0), (2, code.t), (3, code.t + 1)):
                row = sim.row(blk, 0)
                out.append(sim.cmd(ns.OP_ERASE, row=row))
                sim.mem_write(ns.DDR, rng.randbytes(2048))
                out.append(sim.cmd(ns.OP_PROGRAM, row=row, dma=True, ecc=True, dma_addr=ns.DDR))
                raw = bytearray(sim.peek(0, row))
                for sec in range(4):
                    for b in rng.sample(range(sec * 4096, sec * 4096 + 4096), errors):
                        raw[b // 8] ^= 0x80 >> (b % 8)
                sim.poke(0, row, bytes(raw))
                c0 = sim.cycles()
                out.append(sim.cmd(ns.OP_PAGE_READ, row=row, dma=True, ecc=True, dma_addr=ns.DDR + 0x4000))
                out.append(("cycles", sim.cycles() - c0, sim.mem_read(ns.DDR + 0x4000, 2048)))
            out.append(sim.cmd(ns.OP_READ_STATUS))
            out.append(("end", sim.cycles()))
        return out
    finally:
        ns.build_sim = saved


@pytest.mark.long
def test_gated_and_free_running_controllers_agree():
    gated = ns.build_sim()
    model = build.ROOT / "nand" / "model"
    srcs, flags = build.sim_common(model / "onfi_model.h", model / "onfi_timing.h")
    free = build.verilate("NandController", [ns.GEN / "NandController.v"],
                          [build.ROOT / "sim" / "nand" / "nand_harness.cpp", model / "onfi_model.cpp", *srcs],
                          build.BUILD / "sim" / "nand-free-clock",
                          flags=["-DLSMC_NO_CLOCK_GATE", *flags, "-CFLAGS", f"-I{model}"], cflags="-O2")
    a, b = _session(gated), _session(free)
    assert a == b
    assert a[-4].sectors[:4] == [ns.SECTOR_UNCORRECTABLE] * 4  # the t + 1 read was really uncorrectable
