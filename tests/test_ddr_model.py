"""The SoC harness's DDR timing model (sim/common/ddr_model.h, docs/ddr-model.md).

- Its preset table (sim/common/ddr_presets.json; the harness's ddr_presets.h is rendered from it) is
  what the installed litedram computes for each board's module, clock and rate: one table, checked here, never restated.
- The model itself, driven without Verilator (tests/ddr/ddr_model_drive.cpp), against latencies worked
  out here from litedram's numbers: row empty / hit / miss, refresh, write-to-read turnaround, the
  streaming rate of one port, and two ports sharing one data bus.
"""
import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest

from lsmc.build import facts

ROOT = Path(__file__).resolve().parent.parent
PRESETS_H = ROOT / "sim" / "common" / "ddr_presets.json"
DRIVE_SRC = ROOT / "tests" / "ddr" / "ddr_model_drive.cpp"
SOC_HZ = 100_000_000

# Each board's DRAM as the board targets build it (boards/*/target.py): module, controller clock, data bits.
BOARDS = {"kcu105": ("EDY4016A", 125e6, 64), "arty": ("MT41K128M16", 100e6, 16),
          "boardsim": ("MT41K128M16", 125e6, 16)}
FIELDS = ("name module memtype sysMHz nphases dataBits bankBits rowBits colBits tRP tRCD tWR tWTR tREFI tRFC "
          "tRAS tRC tCCD tRRD tFAW cl cwl readLatency writeLatency").split()


def presets() -> dict:
    rows = {p["name"]: p for p in json.loads(PRESETS_H.read_text())["presets"]}
    assert all(list(p) == FIELDS for p in rows.values()), f"{PRESETS_H}: fields differ from {FIELDS}"
    return rows


def litedram_row(module_name, sys_hz, bits) -> dict:
    import litedram.modules
    from litedram.phy.model import get_sdram_phy_settings
    mod = getattr(litedram.modules, module_name)(sys_hz, "1:4")
    t, g = mod.timing_settings, mod.geom_settings
    phy = get_sdram_phy_settings(mod.memtype, bits, sys_hz)
    row = {"module": module_name, "memtype": mod.memtype, "sysMHz": round(sys_hz / 1e6), "nphases": phy.nphases,
           "dataBits": bits, "bankBits": g.bankbits, "rowBits": g.rowbits, "colBits": g.colbits,
           "cl": phy.cl, "cwl": phy.cwl, "readLatency": phy.read_latency, "writeLatency": phy.write_latency}
    for k in ("tRP", "tRCD", "tWR", "tWTR", "tREFI", "tRFC", "tRAS", "tRC", "tCCD", "tRRD", "tFAW"):
        row[k] = getattr(t, k)
    return row


def test_presets_match_litedram():
    table = presets()
    assert set(table) == set(BOARDS), f"{PRESETS_H}: presets {sorted(table)}, expected {sorted(BOARDS)}"
    for name, args in BOARDS.items():
        want = litedram_row(*args)
        got = {k: v for k, v in table[name].items() if k != "name"}
        assert got == want, f"{PRESETS_H}: preset {name} differs from litedram: " + ", ".join(
            f"{k} {got.get(k)} != {want[k]}" for k in want if got.get(k) != want[k])


def test_presets_match_the_board_targets():
    """The module each board target instantiates is the preset's (a board change must move the preset)."""
    for name, folder in (("kcu105", "kcu105"), ("arty", "arty_a7"), ("boardsim", "sim")):
        src = (ROOT / "boards" / folder / "target.py").read_text()
        module, hz, _ = BOARDS[name]
        assert re.search(rf"\b{module}\(", src), f"boards/{folder}/target.py no longer uses {module}"
        if folder != "sim":
            assert f"sys_clk_freq = {hz / 1e6:g}e6" in src, f"boards/{folder}/target.py: controller clock changed"
        else:
            assert f"SYS_CLK = {hz / 1e6:g}e6" in src


# ------------------------------------------------------------------------------ the model itself
@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    exe = tmp_path_factory.mktemp("ddr") / "ddr_model_drive"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'sim' / 'common'}",
                    f"-I{facts.include_dir()}", str(DRIVE_SRC), "-o", str(exe)], check=True)

    def run(preset, lines):
        res = subprocess.run([str(exe), preset, str(SOC_HZ)], input="\n".join(lines) + "\n", capture_output=True,
                             text=True, check=True)
        return [list(map(int, ln.split()[1:])) for ln in res.stdout.splitlines()]
    return run


class Ref:
    """Latencies worked out from litedram's numbers and the controller parameters of DdrController."""

    def __init__(self, preset):
        self.p = litedram_row(*BOARDS[preset])
        self.sys_ps = 1_000_000 // self.p["sysMHz"]
        self.soc_ps = 10**12 // SOC_HZ
        self.native = 2 * self.p["nphases"] * self.p["dataBits"] // 8
        c = controller()
        self.port_in, self.cmd_queue, self.port_out = c["portIn"], c["cmdQueue"], c["portOut"]

    def cmd_at(self, cycle):  # first controller cycle the command can use
        t = cycle * self.soc_ps + self.port_in * self.soc_ps + self.cmd_queue * self.sys_ps
        return math.ceil(t / self.sys_ps) * self.sys_ps

    def done(self, cas_ps):
        ps = cas_ps + self.p["readLatency"] * self.sys_ps + self.port_out * self.soc_ps
        return math.ceil(ps / self.soc_ps)

    def cyc(self, *names):
        return sum(self.p[n] for n in names) * self.sys_ps


def controller() -> dict:
    """DdrController's defaults, read from the header (the calibrated values)."""
    text = (ROOT / "sim" / "common" / "ddr_model.h").read_text()
    body = text[text.index("struct DdrController"):]
    body = body[:body.index("};")]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"unsigned (\w+) = (\d+);", body)}


@pytest.mark.parametrize("preset", sorted(BOARDS))
def test_row_empty_hit_miss(drive, preset):
    r = Ref(preset)
    row_bytes = r.native << (r.p["colBits"] - 3)      # one row of one bank (ROW_BANK_COL)
    other_row_same_bank = row_bytes << r.p["bankBits"]
    out = drive(preset, ["r 100 0 16 0 16", "r 200 16 16 0 16", f"r 300 {other_row_same_bank} 16 0 16"])
    # empty bank: ACT then CAS after tRCD
    t = r.cmd_at(100)
    assert out[0] == [r.done(t + r.cyc("tRCD"))] * 2
    # same row: CAS at once
    assert out[1] == [r.done(r.cmd_at(200))] * 2
    # other row, same bank: precharge (tRAS long past), tRP, ACT, tRCD
    assert out[2] == [r.done(r.cmd_at(300) + r.cyc("tRP", "tRCD"))] * 2


@pytest.mark.parametrize("preset", sorted(BOARDS))
def test_refresh_blocks_and_closes_rows(drive, preset):
    r = Ref(preset)
    refi = r.cyc("tREFI")
    # a request arriving just as the first refresh starts waits tRP + tRFC, then finds its row closed
    cycle = next(c for c in range(10**6) if r.cmd_at(c) >= refi)
    out = drive(preset, ["r 100 0 16 0 16", f"r {cycle} 0 16 0 16", "stats"])
    start = max(refi, r.cmd_at(cycle))
    end = refi + r.cyc("tRP", "tRFC")
    assert out[1] == [r.done(max(start, end) + r.cyc("tRCD"))] * 2
    assert out[2][4] == 1  # one refresh
    # long idle stretches cost nothing and count their refreshes
    out = drive(preset, ["r 100 0 16 0 16", "r 10000000 0 16 0 16", "stats"])
    assert out[2][4] == (10_000_000 * r.soc_ps) // refi


@pytest.mark.parametrize("preset", sorted(BOARDS))
def test_write_to_read_turnaround(drive, preset):
    r = Ref(preset)
    out = drive(preset, ["r 100 0 16 0 16", "w 200 16 16 0 16", "r 200 32 16 0 16", "stats"])
    wr_cas = r.cmd_at(200)
    wtr = (r.p["tWTR"] + math.ceil(r.p["cwl"] / r.p["nphases"]) + r.p["tCCD"]) * r.sys_ps
    assert out[2] == [r.done(max(r.cmd_at(200), wr_cas + wtr))] * 2
    assert out[3][5] == 2  # read->write, write->read


@pytest.mark.parametrize("preset", sorted(BOARDS))
def test_streaming_rate_and_two_ports_share_the_bus(drive, preset):
    r = Ref(preset)
    n, burst = 256, 512  # 128 KiB in 512-byte bursts from a 32-byte port, all requested at once
    one = drive(preset, [f"r 1000 {i * burst} {burst} 0 32" for i in range(n)])
    span = one[-1][1] - 1000
    peak_ps = n * burst // r.native * r.sys_ps    # one native word per controller cycle
    bus = max(peak_ps, n * burst // 32 * r.soc_ps)  # nor faster than one 32-byte beat per SoC cycle
    # nor than readCredits beats per round trip of one beat (LiteDRAM's AXI bridge)
    trip = drive(preset, ["r 1000 0 32 0 32"])[0][0] - 1000
    credit = n * burst // 32 * trip / controller()["readCredits"]
    assert bus / r.soc_ps <= span <= 1.25 * max(bus / r.soc_ps, credit) + 100, (span, bus / r.soc_ps, credit)
    # the same traffic from two ports in other banks: twice the words through one bus
    far = 1 << 24
    two = drive(preset, [f"r 1000 {a + i * burst} {burst} {a // far} 32" for i in range(n) for a in (0, far)])
    span2 = two[-1][1] - 1000
    assert span2 >= 2 * peak_ps / r.soc_ps, (span2, peak_ps / r.soc_ps)


def stream(port, base, n, burst, cycle=1000, port_bytes=32):
    return [f"r {cycle} {base + i * burst} {burst} {port} {port_bytes}" for i in range(n)]


def test_ports_share_dram_time_not_a_queue(drive):
    """Two DMA ports streaming at once on kcu105 each keep their own (credit-bound) rate: together close
    to twice one port, as LiteDRAM's crossbar serves its ports side by side, and never above the DRAM's
    peak. Booking the CAS bus in arrival order (the model before its slot calendar) failed this: a port
    waiting for its read credits booked slots ahead and the other port queued behind them (about 1x)."""
    r = Ref("kcu105")
    n, burst = 128, 512
    bank_bytes = r.native << (r.p["colBits"] - 3)
    second = (1 << 24) + 4 * bank_bytes  # another buffer, half the banks away
    one = drive("kcu105", stream(0, 0, n, burst))
    span1 = one[-1][1] - 1000
    two = drive("kcu105", [ln for i in range(n) for ln in (stream(1, i * burst, 1, burst)
                                                            + stream(2, second + i * burst, 1, burst))])
    span2 = max(two[-1][1], two[-2][1]) - 1000
    peak = r.native * r.soc_ps / r.sys_ps                       # bytes per SoC cycle
    assert n * burst / span1 < 0.5 * peak, "one port should be below half the bus for this test to mean anything"
    ratio = 2 * span1 / span2                                   # throughput of two ports over one
    assert ratio >= 1.8, (span1, span2, ratio)
    assert 2 * n * burst / span2 <= peak, (span2, peak)
    # and 8 ports, one per unit of the largest SoC, all at once: the DRAM's peak is the ceiling
    eight = drive("kcu105", [ln for i in range(n) for p in range(8)
                             for ln in stream(p + 1, (p << 24) + p * bank_bytes + i * burst, 1, burst)])
    span8 = max(x[1] for x in eight) - 1000
    assert 8 * n * burst / span8 <= peak
    assert 8 * span1 / span8 >= 4, (span1, span8)


@pytest.mark.parametrize("preset", sorted(BOARDS))
def test_bus_protocol_on_random_traffic(drive, preset):
    """Random reads and writes from four ports (random sizes, addresses, bursts of arrivals): on the CAS
    calendar no two commands share a controller cycle (tCCD), the read->write turnaround
    (read_latency - 1) and the write->read one (tWTR + ceil(cwl/nphases) + tCCD) hold between every
    pair of neighbours, whichever was booked first; reads complete after their last CAS plus the PHY
    latency; the data moved never exceeds the peak."""
    import random

    r = Ref(preset)
    rng = random.Random(11 + len(preset))
    lines, cycle = ["trace"], 1000
    for _ in range(600):
        cycle += rng.choice((0, 0, 0, 1, 3, 20))
        port = rng.randrange(4)
        pb = 4 if port == 0 else 32
        op = rng.choice("rrw")
        nbytes = pb * rng.choice((1, 2, 8, 16))
        addr = rng.randrange(0, 1 << 22) // pb * pb
        lines.append(f"{op} {cycle} {addr} {nbytes} {port} {pb}")
    lines.append("cas")
    out = drive(preset, lines)
    nreq = len(lines) - 2
    results, cas = out[:nreq], sorted(tuple(x) for x in out[nreq:])
    ncas = len(cas)
    assert ncas > 600
    p = r.p
    rtw = p["readLatency"] - 1
    wtr = p["tWTR"] + math.ceil(p["cwl"] / p["nphases"]) + p["tCCD"]
    for (c0, w0), (c1, w1) in zip(cas, cas[1:]):
        need = p["tCCD"] if w0 == w1 else (wtr if w0 else rtw)
        assert c1 - c0 >= need, f"{preset}: CAS at {c0} ({'w' if w0 else 'r'}) then {c1} ({'w' if w1 else 'r'})"
    # reads: last beat no earlier than some CAS + PHY latency + the way out
    first_cas = cas[0][0] * r.sys_ps
    reads = [x for x, ln in zip(results, lines[1:-1]) if ln.startswith("r")]
    assert all(x[1] >= x[0] for x in reads)
    assert min(x[0] for x in reads) * r.soc_ps >= first_cas + p["readLatency"] * r.sys_ps
    assert ncas <= cas[-1][0] - cas[0][0] + 1  # one native word per controller cycle at most


def test_bus_statistics_account_for_every_cycle(drive):
    """The harness's `sim: ddr bus` line (busStats): over the units' window every controller cycle is a
    CAS, refresh, a turnaround or idle, as worked out here from the CAS log alone: a turnaround is the
    part of a gap between a read and a write (either order) shorter than that turnaround, refresh the
    cycles inside the fixed refresh windows (k tREFI + tRP + tRFC), idle the rest."""
    import random

    r = Ref("kcu105")
    p = r.p
    rng = random.Random(5)
    lines, cycle = ["trace"], 1000
    for _ in range(800):  # long enough to cross refresh windows; ports 1..3 only (the window's ports)
        cycle += rng.choice((0, 1, 2, 30, 150))
        port = rng.randrange(1, 4)
        lines.append(f"{rng.choice('rrw')} {cycle} {rng.randrange(0, 1 << 22) // 32 * 32} {32 * rng.choice((2, 16))} "
                     f"{port} 32")
    lines += ["cas", "bus"]
    out = drive("kcu105", lines)
    cas = sorted(tuple(x) for x in out[len(lines) - 3:-1])
    frm, to, cycles, data, refresh, turn, idle, switches = out[-1]
    assert (frm, to, cycles, data) == (cas[0][0], cas[-1][0], cas[-1][0] - cas[0][0] + 1, len(cas))
    rtw = p["readLatency"] - 1
    wtr = p["tWTR"] + math.ceil(p["cwl"] / p["nphases"]) + p["tCCD"]

    def in_refresh(c):
        return c >= p["tREFI"] and c % p["tREFI"] < p["tRP"] + p["tRFC"]

    want = {"refresh": 0, "turn": 0, "idle": 0, "switches": 0}
    for (c0, w0), (c1, w1) in zip(cas, cas[1:]):
        lim = c0 + (wtr if w0 else rtw) if w0 != w1 else c0
        want["switches"] += w0 != w1
        for c in range(c0 + 1, c1):
            want["refresh" if in_refresh(c) else "turn" if c < lim else "idle"] += 1
    assert (refresh, turn, idle, switches) == (want["refresh"], want["turn"], want["idle"], want["switches"])
    assert data + refresh + turn + idle == cycles
    assert refresh > 0 and turn > 0 and idle > 0  # the case exercises every kind


# ------------------------------------------------------------------------------ calibration (docs/ddr-model.md)
def test_calibration_case_within_goal():
    """The SoC harness with --ddr boardsim against LiteDRAM's cycle counts on the board simulation
    (sim/common/ddr_calibration.json): every workload and metric within the 10 % goal."""
    from lsmc.sim import ddrcal
    ref = ddrcal.load_reference()["workloads"]
    rows, preset = ddrcal.measure_harness(list(ref), "boardsim")
    assert preset == "boardsim"
    errs = ddrcal.errors(rows, ref)
    bad = {w: {k: f"{e:+.1%}" for k, e in row.items() if abs(e) > ddrcal.TOLERANCE} for w, row in errs.items()}
    assert not any(bad.values()), f"DDR model off LiteDRAM by more than {ddrcal.TOLERANCE:.0%}: {bad}\n" + \
        ddrcal.table(ref, {"boardsim": rows})


def test_harness_names_its_ddr_model():
    """`ddr: <model>` on stderr for reports; an unknown model is refused naming the option."""
    from lsmc.sim import soc
    exe = soc.build_soc()
    res = subprocess.run([str(exe), str(soc.build_selftest()), "--ddr", "ddr5"], capture_output=True, text=True)
    assert res.returncode == 2 and "--ddr" in res.stderr and "kcu105" in res.stderr
    res = subprocess.run([str(exe), str(soc.build_selftest()), "--ddr", "kcu105", "--ddr-latency", "5"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "--ddr-latency" in res.stderr
    for model in ("fixed", "kcu105"):
        run = soc.run_soc(soc.build_selftest(), arg=3, extra=["--ddr", model])
        assert run.returncode == 0, run.stderr[-1000:]
        assert re.search(rf"^ddr: {model}$", run.stderr, re.M)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("LSMC_DDR_REFERENCE"),
                    reason="re-measures LiteDRAM on a second board simulation (minutes); LSMC_DDR_REFERENCE=1 runs it, "
                           "scripts/test checks the harness against the stored reference")
def test_reference_is_what_litedram_gives():
    """Re-measure the stored reference on the board simulation (minutes: BIOS, Verilator build, run)."""
    import importlib.util
    import shutil

    from lsmc.sim import ddrcal
    spec = importlib.util.spec_from_file_location("board_sim", ROOT / "boards" / "sim" / "target.py")
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    missing = [t for t in ("verilator", "meson", "riscv64-unknown-elf-gcc") if shutil.which(t) is None]
    missing += [m for m in ("pythondata_software_picolibc", "pythondata_misc_tapcfg")
                if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"board simulation prerequisites missing: {missing}")
    from lsmc.boards import gateware, litex_soc
    from lsmc.build import firmware
    firmware.ensure_headers()
    fw = ROOT / "build" / "fw-board"
    from lsmc import build
    with build.lock(fw / ".lock"):  # tests/test_boards.py makes the same folder (pytest-xdist)
        subprocess.run(["make", "-s", "-C", str(ROOT / "fw"), f"BUILD={fw}", "BOARD=1"], check=True)
    out = ROOT / "build" / "boards" / "sim-ddr"
    verilog = gateware.generate_soc_verilog()  # the board variant of the SoC (no simulation control)
    litex_soc.build_target(sim.SimBoard, out, soc_verilog=verilog, firmware=fw / "lsmc.elf", run=True)
    sim.compile_sim(out)
    ref = ddrcal.load_reference()["workloads"]
    got = ddrcal.measure_board(out, list(ref))
    errs = ddrcal.errors(got, ref)
    assert all(abs(e) <= 0.02 for row in errs.values() for e in row.values()), (got, ref)
