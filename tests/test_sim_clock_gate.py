"""common.SimClockGate stops the clock of an idle block in Verilator only; synthesis (and a Verilator build
with -DLSMC_NO_CLOCK_GATE) sees a free-running clock, and the board variant of the SoC has no gate at
all. A gated block must behave exactly as the free-running one: the NAND controller (its BCH decoder is
gated) and the SoC (each compaction unit, IP + DMA + register bridge, behind one gate) are run through
the same work in both builds and must give the same completions, data and cycle counts."""
import random
import re
import subprocess

import pytest

from lsmc import build
from lsmc.boards import gateware
from lsmc.build import firmware
from lsmc.model.bch import Bch
from lsmc.sim import nandsim as ns
from lsmc.sim import scaling, soc

GATE_INSTANCE = re.compile(r"^\s*LsmcSimClockGate\s+\w+\s*\(", re.M)


def _gate_module(v: str) -> str:
    body = v[v.index("module LsmcSimClockGate"):]
    return body[:body.index("endmodule")]


def test_generated_gate_is_free_running_outside_verilator():
    ns.build_sim()  # generates NandController.v
    v = (ns.GEN / "NandController.v").read_text()
    body = _gate_module(v)
    # gated only under VERILATOR and not LSMC_NO_CLOCK_GATE; every other branch is a plain wire
    assert "`ifdef VERILATOR" in body and "`ifndef LSMC_NO_CLOCK_GATE" in body
    assert body.count("assign gclk = clk;") == 2 and body.count("assign gclk = clk & enLow;") == 1
    assert GATE_INSTANCE.search(v)  # instantiated (the BCH decoder's)


def test_soc_gates_every_unit_and_the_board_soc_has_none():
    """The simulated SoC has three gates per compaction unit (the unit; its THROUGHPUT_COUNTER register,
    which also runs while it counts every cycle; the IP's datapath), the NAND controller's and its BCH
    decoder's, the NAND DMA path's, DMA port 0's crossbar's and input stage's, the on-chip RAM's, the
    UART's and the CPU-side interconnect's;
    the Verilog that boards synthesise (soc.Generate --no-sim-ctrl) has no gate module at all: one
    plain clock."""
    units = 2
    v = soc.generate_soc(units=units, ways=4).read_text()
    modules = dict(re.findall(r"^module (\w+) \((.*?)^endmodule", v, re.MULTILINE | re.DOTALL))
    top = modules["LsmcSoc"]
    channels = len(re.findall(r"^\s*NandController\w*\s+\w+\s*\(", top, re.MULTILINE))
    assert channels >= 1
    # in the top: each unit's gate and its throughput counter's, each NAND channel's controller gate, the
    # on-chip RAM's, the UART's (whose time base rests while idle in every build: SimUart), the NAND channels' DMA path
    # (upsizers and their crossbar) and DMA port 0's crossbar, which that path shares with unit 0, the
    # CPU-side interconnect's, DMA port 0's input stage (unit 0's clock or the NAND DMA path's)
    assert len(GATE_INSTANCE.findall(top)) == 2 * units + channels + 2 + 2 + 1 + 1
    for enable in ("ramClockEnable", "uartClockEnable", "busClockEnable"):
        assert re.search(rf"assign\s+\w+_en\s*=\s*\({enable}\s*\|\|\s*reset\)", top), enable
    ips = [body for name, body in modules.items() if name.startswith("CompactionIp")]
    assert len(ips) == units and all(len(GATE_INSTANCE.findall(b)) == 1 for b in ips)  # the datapath's
    assert len(GATE_INSTANCE.findall(modules["NandCommandLayer"])) == 1  # the BCH decoder's, per channel
    for name in ("compaction", "unit1"):  # each unit's enable leaves its own settle register
        assert re.search(rf"reg\s+\[2:0\]\s+{name}_activity_settle;", v), name
    assert re.search(r"reg\s+\[2:0\]\s+simActivity_settle;", v)  # the NAND controller's
    assert re.search(r"reg\s+\[2:0\]\s+busActivity_settle;", top)  # the interconnect's
    # every DDR port's slave-driven signals pass an input stage (registered only in the gated Verilator
    # build, a wire elsewhere): 5 per port (AR/AW/W ready, R valid, R payload, B valid, B payload)
    ports = len(re.findall(r"^\s*output\s+wire\s+io_ddr\w*_ar_valid\b", top, re.MULTILINE))
    assert ports == 1 + units * soc.scaling_read_ports(units, 4)  # the CPU's port and the units' (one per reader)
    assert len(re.findall(r"^\s*LsmcSimInputStage\s+#", top, re.MULTILINE)) == 5 * ports
    stage = v[v.index("module LsmcSimInputStage"):]
    stage = stage[:stage.index("endmodule")]
    assert "`ifndef LSMC_NO_CLOCK_GATE" in stage and stage.count("assign q = d;") == 2
    board = gateware.generate_soc_verilog().read_text()
    assert "LsmcSimClockGate" not in board and "gclk" not in board and "LsmcSimInputStage" not in board
    # the UART's resting time base is hardware (SimUart): its divider is cleared on reset and at rest
    uart = board[board.index("module UartCtrl ("):]
    assert uart[:uart.index("endmodule")].count("clockDivider_counter <= 20'h0;") == 2


def _nand_session(exe):
    """Program and read pages with 0, t and t + 1 bit errors per sector, plus raw and status commands;
    returns everything observable with the cycle count of each command."""
    saved = ns.build_sim
    ns.build_sim = lambda *args, **kw: exe  # (build_sim takes the pad stages since df6d713)
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


# scripts/test's gated-against-free comparison: a block harness build (the SoC comparisons below each build a
# free-running SoC, ~165 s in CI: LSMC_LONG=1).
def test_gated_and_free_running_controllers_agree():
    gated = ns.build_sim()
    model = build.ROOT / "hw" / "ip" / "nand" / "model"
    # the includes of ns.build_sim (the harness reads nand_regs.h, generated beside the Verilog)
    srcs, flags = build.sim_common(model / "onfi_model.h", model / "nvddr_pads.h",
                                   ns.GEN / "nand_regs.h")
    free = build.verilate("NandController", [ns.GEN / "NandController.v"],
                          [build.ROOT / "hw/ip/nand/dv/nand_harness.cpp", model / "onfi_model.cpp", *srcs],
                          build.BUILD / "sim" / "nand-free-clock",
                          # -O1: its run is 3 s, its compile the test's cost
                          flags=["-DLSMC_NO_CLOCK_GATE", *flags, "-CFLAGS", f"-I{model} -I{ns.GEN}"], cflags="-O1")
    a, b = _nand_session(gated), _nand_session(free)
    assert a == b
    assert a[-4].sectors[:4] == [ns.SECTOR_UNCORRECTABLE] * 4  # the t + 1 read was really uncorrectable


# ---- the SoC: compaction units gated -------------------------------------------------------------
UNITS, WAYS = 2, 4  # the build tests/test_soc_units.py uses (cached between them)
_TIMING = re.compile(r"^sim: (cpu time|\d+ cycles in|progress).*$\n?", re.M)


def _observable(r: soc.SocRun) -> dict:
    """A run as the firmware and the harness see it: all but the speed lines."""
    return {"exit": r.returncode, "cycles": r.cycles, "uart": r.uart, "stderr": _TIMING.sub("", r.stderr)}


@pytest.mark.long  # two NAND SoC builds (215 s); scripts/test keeps the controllers' comparison above
def test_gated_and_free_running_nand_in_the_soc_agree(tmp_path):
    """The NAND controller behind its gate in the SoC: the storage flow (erase, program and read with
    ECC through the DMA, status polls, both targets, idle time between commands while the CPU merges)
    gives the same console, cycle count and NAND model counts as on the free-running build."""
    firmware.build_firmware()
    elf = firmware.BUILD_FW / "storage.elf"
    runs = [_observable(soc.run_soc(elf, arg=0, exe=exe, timeout=1800))
            for exe in (soc.build_soc(), soc.build_soc(free_clock=True))]
    assert runs[0]["exit"] == 0 and "storage: PASS" in runs[0]["uart"], runs[0]["uart"][-2000:]
    assert re.search(r"^sim: nand1: \d+ commands", runs[0]["stderr"], re.M)  # both targets worked
    for key in runs[0]:
        assert runs[0][key] == runs[1][key], f"{key} differs between the gated and the free-running SoC"


def _soc_job(exe, elf, tasks, workdir, poll):
    """Run a task-queue job; everything observable: exit status, console, the harness's lines except
    its timing (cycle count, DDR beats, protocol checks stay), the firmware's result block (bracket and
    per-task hardware cycles, states, IRQ events) and every output buffer, byte for byte."""
    workdir.mkdir(parents=True, exist_ok=True)
    img, bufs = scaling.scale_image(tasks, poll=poll)
    (workdir / "job.bin").write_bytes(img)
    cmd = scaling.scaling_command(exe, elf, workdir / "job.bin", bufs, workdir, len(tasks))
    p = subprocess.run(cmd, capture_output=True, timeout=1800, check=False)
    r = soc.soc_result(p.returncode, p.stdout, p.stderr)
    res = scaling.collect(tasks, workdir, r.returncode, r.uart, r.stderr)
    dumps = {f.name: f.read_bytes() for f in sorted(workdir.glob("*.bin")) if f.name != "job.bin"}
    return {"exit": r.returncode, "cycles": r.cycles, "uart": r.uart, "stderr": _TIMING.sub("", r.stderr),
            "result": {k: v for k, v in res.items() if k not in ("uart", "stderr")}, "dumps": dumps}


def _jobs(long: bool):
    """Jobs that use both units with idle time and register polls between tasks, a unit error (BAD_GROUP:
    IP in ERROR until the driver's soft reset, the CPU finishes the task), in polling and IRQ mode."""
    sizes = [(4, 1024), (2, 256), (3, 600), (1, 300), (4, 512)] if long else [(4, 400), (2, 128), (3, 200)]
    tasks = [scaling.make_task(k, n, seed=20 + i) for i, (k, n) in enumerate(sizes)]
    tasks[1].fault = scaling.FAULT_BAD_GROUP
    jobs = [("poll", tasks, True)]
    if long:
        jobs.append(("irq", scaling.make_tasks(UNITS, WAYS, 4096, seed=7), False))
    return jobs


def _compare_socs(tmp_path, long: bool):
    gated = soc.build_soc(units=UNITS, ways=WAYS)
    free = soc.build_soc(units=UNITS, ways=WAYS, free_clock=True)
    elf = firmware.build_firmware()
    for name, tasks, poll in _jobs(long):
        a = _soc_job(gated, elf, tasks, tmp_path / name / "gated", poll)
        b = _soc_job(free, elf, tasks, tmp_path / name / "free", poll)
        assert a["exit"] == 0 and a["result"]["pass"], a["uart"][-2000:]
        assert sorted({t["unit"] for t in a["result"]["tasks"]}) == [0, 1]  # both units worked
        if poll:
            assert a["result"]["fallbacks"] == 1  # the BAD_GROUP task went through ERROR + soft reset
        for key in ("exit", "cycles", "uart", "stderr", "result", "dumps"):
            assert a[key] == b[key], f"{name}: {key} differs between the gated and the free-running SoC"


@pytest.mark.slow
@pytest.mark.long
def test_gated_and_free_running_socs_agree(tmp_path):
    _compare_socs(tmp_path, long=False)


@pytest.mark.long
def test_gated_and_free_running_socs_agree_long(tmp_path):
    _compare_socs(tmp_path, long=True)
