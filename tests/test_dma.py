"""CompactionDma (hw/ip/dma) in Verilator: readers, writers, bounds, errors, abort, flush, IRQ, rate.

The C++ harness hw/ip/dma/dv/main.cpp holds an AXI4 memory model (latency, random stalls, SLVERR window,
AXI rule checks) and is driven by a command script on stdin; each test writes such a script."""
from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from lsmc import build
from lsmc.build import regmap

ROOT = build.ROOT
MEM = regmap.memmap().base("DDR")  # memory model base (DDR in the SoC map, lsmc_soc.json)
MEM_SIZE = 1 << 20
BUSY, DONE, ERROR, ABORTED = 1, 2, 4, 8
ERR_AXI, ERR_OVERFLOW, ERR_MISALIGNED = 1, 2, 3
# Channel registers and stride from the generated dma_regs.json (the RTL's regif declaration).
_CH = regmap.load("dma").arrays["CH"]
ADDR, LEN, CTRL, STATUS, BYTES, IRQ_EN, IRQ_ST, ADDR2, LEN2 = (_CH["registers"][n].offset for n in (
    "ADDR", "LEN", "CTRL", "STATUS", "BYTES", "IRQ_ENABLE", "IRQ_STATUS", "ADDR2", "LEN2"))
STRIDE = _CH["stride"]


# The write-grouping build (CompactionDma writeGroup, as the scaling SoCs use it): 4 KiB write bursts.
GROUP_BURST = 128


def sim_exe(width: int, group: bool = False) -> Path:
    name = f"dma_w{width}" + ("_group" if group else "")
    gen = ROOT / "build" / "gen" / name
    extra = ["--write-burst", str(GROUP_BURST), "--write-group"] if group else []
    build.generate("dma", "dma.Generate", gen, ["--width", str(width), "--out", str(gen), *extra])
    srcs, flags = build.sim_common()
    defs = f"-DDMA_W={width}" + (f" -DDMA_WRITE_GROUP -DDMA_MAX_BEATS={GROUP_BURST}" if group else "")
    return build.verilate("CompactionDma", [gen / "CompactionDma.v"], [ROOT / "hw/ip/dma/dv/main.cpp", *srcs],
                          ROOT / "build" / "sim" / name, flags=flags + ["-CFLAGS", defs])


_EXES: dict[tuple, Path] = {}


def exe_for(width: int, group: bool = False) -> Path:
    if (width, group) not in _EXES:
        _EXES[width, group] = sim_exe(width, group)
    return _EXES[width, group]


class Result:
    def __init__(self, text: str):
        self.text = text
        self.waits = {}
        self.sinks = {}
        self.reads = []
        self.irqs = []
        self.stats = {}
        self.all_stats, self.urgent = [], []  # every `stats` line in order; every `urgent` answer
        for line in text.splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "wait":
                kv = dict(x.split("=") for x in f[3:])
                self.waits.setdefault(int(f[1]), []).append(dict(
                    ok=f[2] == "ok", cycles=int(kv["cycles"]), status=int(kv["status"], 16),
                    bytes=int(kv["bytes"]), irq=int(kv["irq"], 16)))
            elif f[0] == "sink":
                kv = dict(x.split("=") for x in f[2:])
                self.sinks.setdefault(f[1], []).append(dict(
                    beats=int(kv["beats"]), first=int(kv["first"]), last=int(kv["last"]),
                    lasts=[int(x) for x in kv["lasts"].split(",") if x]))
            elif f[0] == "rd":
                self.reads.append((int(f[1], 16), int(f[2], 16)))
            elif f[0] == "irq":
                self.irqs.append(int(f[1], 16))
            elif f[0] == "stats":
                self.stats = {k: int(v) for k, v in (x.split("=") for x in f[1:])}
                self.all_stats.append(self.stats)
            elif f[0] == "urgent":
                self.urgent.append(int(f[1]))

    def wait(self, ch, i=-1):
        return self.waits[ch][i]


class Sim:
    """Collects a harness script; run() executes it and checks the harness saw no AXI rule broken."""

    def __init__(self, width: int, tmp: Path, seed: int = 1, group: bool = False):
        self.width = width
        self.group = group
        self.wbytes = width // 8
        self.tmp = tmp
        self.lines = [f"seed {seed}"]
        self.files = 0

    def __call__(self, *cmd):
        self.lines.append(" ".join(str(c) for c in cmd))
        return self

    def file(self, data: bytes) -> Path:
        self.files += 1
        p = self.tmp / f"f{self.files}.bin"
        p.write_bytes(data)
        return p

    def load(self, addr, data):
        return self("load", hex(addr), self.file(data))

    def out(self, name) -> Path:
        return self.tmp / name

    def wr(self, ch, off, val):
        return self("wr", hex(STRIDE * ch + off), hex(val))

    def start(self, ch, addr, length):
        self.wr(ch, ADDR, addr).wr(ch, LEN, length)
        return self.wr(ch, CTRL, 1)

    def run(self, expect_protocol_ok=True, timeout=120) -> Result:
        self.lines += ["stats", "quit"]
        res = subprocess.run([str(exe_for(self.width, self.group))], input="\n".join(self.lines) + "\n",
                             capture_output=True, text=True, timeout=timeout)
        out = res.stdout + res.stderr
        assert "FATAL" not in out, out
        if expect_protocol_ok:
            assert "PROTOCOL" not in out and res.returncode == 0, out
        return Result(out)


def padded(data: bytes, wbytes: int) -> bytes:
    return data + bytes(-len(data) % wbytes)


def code(status):
    return (status >> 8) & 0xFF


# ---------------------------------------------------------------- readers

@pytest.mark.parametrize("w", [128, 32])
def test_read_random_lengths_and_addresses(w, tmp_path):
    rng = random.Random(w)
    for rnd in range(3):
        sim = Sim(w, tmp_path, seed=rnd + 1)
        sim("lat", rng.randint(3, 40), rng.randint(1, 20))("axistall", 0.2)
        sim("sinkstall", "key0", 0.3)("sinkstall", "key1", 0.1)
        jobs = []
        for ch in (0, 1):
            # lengths: tiny, not a multiple of the beat, crossing several 4 KiB pages
            length = rng.choice([1, 3, 16, 31, 33, rng.randint(1, 9000)])
            addr = MEM + 0x8000 * (ch + 1) + 32 * rng.randint(0, 127) + (0xF00 if rnd == 0 else 0)
            data = os.urandom(length)
            sim.load(addr, data)
            jobs.append((ch, addr, data))
        for ch, addr, data in jobs:
            sim.wr(ch, ADDR, addr).wr(ch, LEN, len(data))
        for ch, _addr, _data in jobs:
            sim.wr(ch, CTRL, 1)
        for ch, _, _ in jobs:
            sim("wait", ch, 200000)
            sim("sink", f"key{ch}", sim.out(f"k{ch}_{rnd}.bin"))
        r = sim.run()
        for ch, addr, data in jobs:
            wt = r.wait(ch)
            assert wt["ok"] and wt["status"] == DONE, (ch, hex(addr), len(data), wt)
            assert wt["bytes"] == len(data)
            got = sim.out(f"k{ch}_{rnd}.bin").read_bytes()
            assert got == padded(data, w // 8), f"channel {ch}: bytes differ (len {len(data)})"
            s = r.sinks[f"key{ch}"][-1]
            beats = -(-len(data) // (w // 8))
            assert s["beats"] == beats and s["lasts"] == [beats - 1], s


@pytest.mark.parametrize("w", [128, 32])
def test_read_two_segments(w, tmp_path):
    """LEN bytes from ADDR then LEN2 from ADDR2 as one stream (a re-encoded head, then a run's tail in
    place): both addresses at any stream beat (w/8 bytes), segments across 4 KiB pages, an empty first
    segment (the second alone, off the 32-byte alignment); random AXI and sink stalls, the AXI rules
    checked. Bytes, BYTES, beat count and the one `last` against the concatenation of the two ranges."""
    wb = w // 8
    rng = random.Random(7 * w)
    cases = [(wb * rng.randint(0, 300), rng.randint(1, 5000)) for _ in range(4)]
    cases += [(0, 16), (0, rng.randint(1, 3000)), (wb, 1), (4096 - wb, 4096 + wb)]  # empty first; tiny; pages
    for rnd, (len1, len2) in enumerate(cases):
        sim = Sim(w, tmp_path, seed=rnd + 3)
        sim("lat", rng.randint(3, 40), 5)("axistall", 0.2)("sinkstall", "key0", 0.3)("sinkstall", "key1", 0.2)
        jobs = []
        for ch in (0, 1):
            a1 = MEM + 0x10000 * (2 * ch + 1) - (len1 // 2 // 32 * 32) + wb * rng.randint(0, 32 // wb - 1)
            a2 = MEM + 0x10000 * (2 * ch + 2) + 0x1000 - 32 + wb * rng.randint(0, 32 // wb - 1)
            d1, d2 = os.urandom(len1), os.urandom(len2)
            sim.load(a1, d1).load(a2, d2)
            sim.wr(ch, ADDR, a1).wr(ch, LEN, len1).wr(ch, ADDR2, a2).wr(ch, LEN2, len2)
            jobs.append((ch, d1 + d2))
        sim.wr(0, CTRL, 1).wr(1, CTRL, 1)
        for ch, _ in jobs:
            sim("wait", ch, 400000)("sink", f"key{ch}", sim.out(f"s{ch}_{rnd}.bin"))
        r = sim.run()
        for ch, data in jobs:
            wt = r.wait(ch)
            assert wt["ok"] and wt["status"] == DONE and wt["bytes"] == len(data), (rnd, ch, len1, len2, wt)
            assert sim.out(f"s{ch}_{rnd}.bin").read_bytes() == padded(data, wb), (rnd, ch, len1, len2)
            beats = len1 // wb + -(-len2 // wb)
            s = r.sinks[f"key{ch}"][-1]
            assert s["beats"] == beats and s["lasts"] == [beats - 1], (rnd, ch, s)


def test_two_segments_then_one_and_alignment_rules(tmp_path):
    """With two segments an address or the first length off the stream beat is error 3 without a bus
    access; LEN2 written back to 0 gives the one-segment channel again, whose ADDR must still be 32-byte
    aligned (error 3 at +16, as before)."""
    head, tail, one = os.urandom(48), os.urandom(100), os.urandom(200)
    sim = Sim(128, tmp_path)
    sim.load(MEM + 0x100, head).load(MEM + 0x2010, tail).load(MEM + 0x4000, one)
    for a1, l1, a2 in ((MEM + 8, 16, MEM + 0x2010), (MEM + 0x100, 16, MEM + 0x2008), (MEM + 0x100, 24, MEM + 0x2010)):
        sim.wr(0, ADDR2, a2).wr(0, LEN2, 64).start(0, a1, l1)("wait", 0, 100)
    sim("stats")
    sim.wr(0, ADDR2, MEM + 0x2010).wr(0, LEN2, len(tail)).start(0, MEM + 0x100, len(head))("wait", 0, 10000)
    sim("sink", "key0", sim.out("two.bin"))
    sim.wr(0, LEN2, 0).start(0, MEM + 0x4000, len(one))("wait", 0, 10000)("sink", "key0", sim.out("one.bin"))
    sim.start(0, MEM + 0x4010, 64)("wait", 0, 100)
    r = sim.run()
    for i in range(3):
        assert r.wait(0, i)["status"] == ERROR | (ERR_MISALIGNED << 8), (i, r.wait(0, i))
    assert r.all_stats[0]["ar"] == 0
    assert r.wait(0, 3)["status"] == DONE and r.wait(0, 3)["bytes"] == len(head) + len(tail)
    assert r.wait(0, 4)["status"] == DONE and r.wait(0, 4)["bytes"] == len(one)
    assert sim.out("two.bin").read_bytes() == padded(head + tail, 16)
    assert sim.out("one.bin").read_bytes() == padded(one, 16)
    assert r.wait(0, 5)["status"] == ERROR | (ERR_MISALIGNED << 8)


def test_read_zero_length_is_done_without_beats(tmp_path):
    sim = Sim(128, tmp_path)
    sim.start(0, MEM, 0)("wait", 0, 100)("sink", "key0", sim.out("k.bin"))
    r = sim.run()
    assert r.wait(0)["status"] == DONE and r.wait(0)["bytes"] == 0
    assert r.sinks["key0"][0]["beats"] == 0 and r.stats["ar"] == 0


def test_read_full_rate_latency_30(tmp_path):
    """Both readers at once, 64 KiB each, DDR latency 30: one 128-bit beat per clock on each."""
    n = 64 * 1024
    d0, d1 = os.urandom(n), os.urandom(n)
    sim = Sim(128, tmp_path)
    sim("lat", 30, 10).load(MEM, d0).load(MEM + 0x20000, d1)
    sim.start(0, MEM, n)("wait", 0, 100000)("sink", "key0", sim.out("a.bin"))      # alone
    sim.wr(0, ADDR, MEM).wr(0, LEN, n).wr(1, ADDR, MEM + 0x20000).wr(1, LEN, n)
    sim.wr(0, CTRL, 1).wr(1, CTRL, 1)                                               # together
    sim("wait", 0, 100000)("wait", 1, 100000)
    sim("sink", "key0", sim.out("b.bin"))("sink", "key1", sim.out("c.bin"))
    r = sim.run()
    assert sim.out("a.bin").read_bytes() == d0
    assert sim.out("b.bin").read_bytes() == d0 and sim.out("c.bin").read_bytes() == d1
    beats = n // 16
    for s in (r.sinks["key0"][0], r.sinks["key0"][1], r.sinks["key1"][0]):
        assert s["beats"] == beats
        rate = beats / (s["last"] - s["first"] + 1)
        assert rate >= 0.99, f"{rate:.3f} beats/cycle"


# ---------------------------------------------------------------- writers

def poison_check(mem: bytes, lo: int, data: bytes, what: str):
    """mem covers [lo-256, ...): data must sit at offset 256, the rest stays 0xAA."""
    assert mem[256:256 + len(data)] == data, f"{what}: written bytes differ"
    outside = mem[:256] + mem[256 + len(data):]
    assert outside == b"\xAA" * len(outside), f"{what}: bytes changed outside [ADDR, ADDR+n)"


@pytest.mark.parametrize("w", [128, 32])
def test_write_exact_bytes_nothing_outside(w, tmp_path):
    rng = random.Random(7 + w)
    wb = w // 8
    for rnd in range(3):
        sim = Sim(w, tmp_path, seed=rnd + 3)
        sim("lat", rng.randint(1, 30), rng.randint(1, 30))("axistall", 0.25)
        sim("fill", MEM, 0x40000, 0xAA)
        sim("srcstall", "out", 0.3)("srcstall", "invalid", 0.2)
        out = os.urandom(wb * rng.choice([1, 2, 3, rng.randint(1, 700)]))
        inv = os.urandom(4 * rng.choice([1, 5, rng.randint(1, 900)]))
        a_out = MEM + 0x1000 + 32 * rng.randint(0, 200) + (0xFE0 if rnd == 1 else 0)
        a_inv = MEM + 0x20000 + 32 * rng.randint(0, 200)
        cap_out = len(out) + rng.choice([0, 1, 32, 1000])     # room is enough (sometimes exact)
        cap_inv = len(inv) + rng.choice([0, 4, 100])
        sim("src", "out", sim.file(out))("src", "invalid", sim.file(inv))
        sim.wr(2, ADDR, a_out).wr(2, LEN, cap_out).wr(3, ADDR, a_inv).wr(3, LEN, cap_inv)
        sim.wr(2, CTRL, 1).wr(3, CTRL, 1)
        sim("wait", 2, 200000)("wait", 3, 200000)
        sim("dump", hex(a_out - 256), cap_out + 512 + 64, sim.out("o.bin"))
        sim("dump", hex(a_inv - 256), cap_inv + 512 + 64, sim.out("i.bin"))
        r = sim.run()
        assert r.wait(2)["status"] == DONE and r.wait(2)["bytes"] == len(out), r.wait(2)
        assert r.wait(3)["status"] == DONE and r.wait(3)["bytes"] == len(inv), r.wait(3)
        poison_check(sim.out("o.bin").read_bytes(), a_out, out, "out")
        poison_check(sim.out("i.bin").read_bytes(), a_inv, inv, "invalid")


def test_write_full_rate_latency_30(tmp_path):
    """The merged run (128-bit beats) is taken at one beat per clock while `invalid` also writes."""
    out, inv = os.urandom(64 * 1024), os.urandom(16 * 1024)
    sim = Sim(128, tmp_path)
    sim("lat", 30, 30)("src", "out", sim.file(out))("src", "invalid", sim.file(inv))
    sim.wr(2, ADDR, MEM).wr(2, LEN, len(out)).wr(3, ADDR, MEM + 0x20000).wr(3, LEN, len(inv))
    sim.wr(3, CTRL, 1).wr(2, CTRL, 1)("wait", 2, 100000)("wait", 3, 100000)
    sim("dump", hex(MEM), len(out), sim.out("o.bin"))("dump", hex(MEM + 0x20000), len(inv), sim.out("i.bin"))
    r = sim.run()
    assert r.wait(2)["status"] == DONE and r.wait(3)["status"] == DONE
    assert sim.out("o.bin").read_bytes() == out and sim.out("i.bin").read_bytes() == inv
    beats = len(out) // 16
    rate = beats / (r.stats["out_last"] - r.stats["out_first"] + 1)
    assert r.stats["out_taken"] == beats and rate >= 0.99, f"{rate:.3f} beats/cycle"


def test_write_group_holds_full_bursts_until_urgent_or_group(tmp_path):
    """Write grouping (the scaling SoCs): a full 4 KiB burst waits until the writer is urgent (3/4 of its
    256-word FIFO without an AW) or the SoC's group signal says another writer is; the end of the
    stream still writes the rest at once, every byte in place."""
    out = os.urandom(64 * 1024)
    sim = Sim(128, tmp_path, group=True)
    sim("lat", 4, 4)("src", "out", sim.file(out))
    sim.wr(2, ADDR, MEM).wr(2, LEN, len(out)).wr(2, CTRL, 1)
    # one 128-bit beat per cycle = half a 256-bit word: a full burst (128 words) after ~260 cycles,
    # urgent (192) after ~390
    sim("run", 320)("stats")("urgent")          # a full burst held: no AW
    sim("group", 1)("run", 8)("group", 0)("stats")  # the group releases it
    sim("run", 200)("stats")                    # the next full burst is held again
    sim("run", 200)("stats")("urgent")          # urgent by itself: written
    sim("wait", 2, 100000)("dump", hex(MEM), len(out), sim.out("o.bin"))
    r = sim.run()
    held, released, held2, alone, end = r.all_stats
    assert (held["aw"], released["aw"], held2["aw"], alone["aw"]) == (0, 1, 1, 2), r.all_stats
    assert r.urgent == [0, 0] and r.wait(2)["status"] == DONE, r.text
    assert sim.out("o.bin").read_bytes() == out and end["aw"] == len(out) // 4096


@pytest.mark.parametrize("w", [128, 32])
def test_write_overflow_error_2_nothing_past_end(w, tmp_path):
    wb = w // 8
    for cap in (64, 100, 7, 0):          # multiple of 32, of w/8 only, of neither, empty buffer
        sim = Sim(w, tmp_path, seed=cap)
        sim("fill", MEM, 0x10000, 0xAA)("axistall", 0.1)
        nbeats = cap // wb + 6           # more than fits
        data = os.urandom(wb * nbeats)
        sim("src", "out", sim.file(data))
        sim.start(2, MEM + 0x1000, cap)("wait", 2, 100000)
        sim("dump", hex(MEM + 0x1000 - 256), 1024, sim.out("o.bin"))
        r = sim.run()
        wt = r.wait(2)
        assert wt["status"] == ERROR | (ERR_OVERFLOW << 8), wt
        fit = cap // wb * wb             # only whole beats that fit are written
        assert wt["bytes"] == fit
        poison_check(sim.out("o.bin").read_bytes(), MEM + 0x1000, data[:fit], f"cap {cap}")
        assert r.stats["out_taken"] == nbeats, "surplus beats must be accepted (drained), not stalled"


def test_flush_empty_stream_done_zero_bytes(tmp_path):
    sim = Sim(128, tmp_path)
    sim.start(2, MEM, 4096).start(3, MEM + 0x2000, 4096)("run", 100)("rd", hex(2 * STRIDE + STATUS))
    sim("flush", 1)("wait", 2, 1000)("wait", 3, 1000)
    r = sim.run()
    assert r.reads[0][1] == BUSY, "no last and no flush: the writer waits"
    for ch in (2, 3):
        assert r.wait(ch)["status"] == DONE and r.wait(ch)["bytes"] == 0
    assert r.stats["aw"] == 0 and r.stats["wbeats"] == 0


def test_flush_high_at_start_is_stale(tmp_path):
    """The IP's DONE of the previous job is still high when firmware starts the writers (before the
    IP's START): a flush level present at START only counts after it has dropped once."""
    data = os.urandom(16 * 10)
    sim = Sim(128, tmp_path)
    sim("flush", 1).start(2, MEM, 4096)("run", 200)("rd", hex(2 * STRIDE + STATUS))
    sim("flush", 0)("src", "out", sim.file(data), "nolast")("run", 200)("rd", hex(2 * STRIDE + STATUS))
    sim("flush", 1)("wait", 2, 1000)("dump", hex(MEM), len(data), sim.out("o.bin"))
    r = sim.run()
    assert r.reads[0][1] == BUSY and r.reads[1][1] == BUSY
    assert r.wait(2)["status"] == DONE and r.wait(2)["bytes"] == len(data)
    assert sim.out("o.bin").read_bytes() == data


def test_ip_start_pulse_makes_flush_current(tmp_path):
    """IP START failing at once (BAD_GROUP): DONE -> ERROR with flush never low; ipStart arms it."""
    sim = Sim(128, tmp_path)
    sim("flush", 1).start(2, MEM, 4096)("run", 100)("rd", hex(2 * STRIDE + STATUS))
    sim("ipstart")("wait", 2, 1000)
    r = sim.run()
    assert r.reads[0][1] == BUSY
    assert r.wait(2)["status"] == DONE and r.wait(2)["bytes"] == 0


@pytest.mark.parametrize("w", [128, 32])
def test_flush_ends_partial_stream(w, tmp_path):
    """IP stopped on error: no `last`; flush writes what came (partial 256-bit word, WSTRB)."""
    wb = w // 8
    sim = Sim(w, tmp_path)
    sim("fill", MEM, 0x10000, 0xAA)
    data = os.urandom(wb * 11)
    sim("src", "out", sim.file(data), "nolast")
    sim.start(2, MEM + 0x1000, 4096)("run", 400)("rd", hex(2 * STRIDE + STATUS))
    sim("flush", 1)("wait", 2, 1000)("dump", hex(MEM + 0x1000 - 256), 1024, sim.out("o.bin"))
    r = sim.run()
    assert r.reads[-1][1] & BUSY, "without last or flush the writer must keep waiting"
    assert r.wait(2)["status"] == DONE and r.wait(2)["bytes"] == len(data)
    poison_check(sim.out("o.bin").read_bytes(), MEM + 0x1000, data, "flushed")


# ---------------------------------------------------------------- errors, abort, IRQ

def test_misaligned_addr_error_3_without_bus_access(tmp_path):
    sim = Sim(128, tmp_path)
    for ch in range(4):
        sim.start(ch, MEM + 16, 256)("wait", ch, 100)
    r = sim.run()
    for ch in range(4):
        assert r.wait(ch)["status"] == ERROR | (ERR_MISALIGNED << 8), r.wait(ch)
    assert r.stats["ar"] == 0 and r.stats["aw"] == 0


def test_slverr_error_1_then_channel_recovers(tmp_path):
    data = os.urandom(0x4000)
    sim = Sim(128, tmp_path)
    sim("lat", 20, 10).load(MEM, data)("err", hex(MEM + 0x1000), 32)
    sim.start(0, MEM, 0x2000)("wait", 0, 100000)("sink", "key0", sim.out("bad.bin"))
    # writer into the error window
    out = os.urandom(4096)
    sim("src", "out", sim.file(out)).start(2, MEM + 0x800, 8192)("wait", 2, 100000)
    # same reader again, clear of the window: must be clean
    sim.start(0, MEM + 0x2000, 4096)("wait", 0, 100000)("sink", "key0", sim.out("good.bin"))
    r = sim.run()
    assert r.wait(0, 0)["status"] == ERROR | (ERR_AXI << 8), r.wait(0, 0)
    assert r.waits[0][1]["status"] == DONE
    assert sim.out("good.bin").read_bytes() == data[0x2000:0x3000]
    assert r.wait(2)["status"] == ERROR | (ERR_AXI << 8), r.wait(2)
    assert r.stats["out_taken"] == 4096 // 16, "writer must drain its source after an AXI error"


def test_abort_reader_and_writer_then_restart(tmp_path):
    data = os.urandom(32768)
    sim = Sim(128, tmp_path)
    sim("lat", 30, 10).load(MEM, data)("sinkstall", "key0", 0.5)
    sim.start(0, MEM, len(data))("run", 300).wr(0, CTRL, 2)("wait", 0, 10000)
    sim("sink", "key0", sim.out("part.bin"))
    sim("sinkstall", "key0", 0)
    sim.start(0, MEM + 0x100, 1000)("wait", 0, 10000)("sink", "key0", sim.out("again.bin"))
    # writer: endless-looking source (no last), abort mid-way
    sim("src", "out", sim.file(os.urandom(16 * 3000)), "nolast")
    sim.start(2, MEM + 0x10000, 0x10000)("run", 300).wr(2, CTRL, 2)("wait", 2, 10000)
    sim("src", "out", sim.file(b"\x55" * 96))
    sim.start(2, MEM + 0x30000, 4096)("wait", 2, 10000)("dump", hex(MEM + 0x30000), 96, sim.out("w.bin"))
    r = sim.run()
    a = r.wait(0, 0)
    assert a["ok"] and a["status"] == ABORTED, a
    part = sim.out("part.bin").read_bytes()
    assert 0 < len(part) < len(data) and part == data[:len(part)]
    assert r.waits[0][1]["status"] == DONE and sim.out("again.bin").read_bytes() == padded(data[0x100:0x100 + 1000], 16)
    assert r.wait(2, 0)["status"] == ABORTED, r.wait(2, 0)
    assert r.wait(2, 1)["status"] == DONE and sim.out("w.bin").read_bytes() == b"\x55" * 96


def test_irq_level_enable_and_w1c(tmp_path):
    sim = Sim(128, tmp_path)
    sim.load(MEM, bytes(64))
    sim.wr(0, IRQ_EN, 1).start(0, MEM, 64)("wait", 0, 1000)("irq")          # done, enabled -> bit 0
    sim("rd", hex(IRQ_ST))
    sim.wr(0, IRQ_ST, 1)("irq")                                             # W1C clears
    sim.wr(1, IRQ_EN, 1).start(1, MEM + 8, 64)("wait", 1, 1000)("irq")      # error, only done enabled
    sim("rd", hex(STRIDE + IRQ_ST))
    sim.wr(1, IRQ_EN, 2)("irq")                                             # enable error -> bit 1
    sim.wr(1, IRQ_ST, 2)("irq")
    sim.wr(3, IRQ_EN, 3).start(3, MEM, 64)("run", 2)("flush", 1)("wait", 3, 1000)("irq")
    r = sim.run()
    assert r.irqs == [0b0001, 0, 0, 0b0010, 0, 0b1000], r.irqs
    assert r.reads[0] == (IRQ_ST, 1) and r.reads[1] == (STRIDE + IRQ_ST, 2)


def test_all_channels_together_with_stalls(tmp_path):
    """Readers and writers share one AXI port (arbiters); slow sinks must not block the others."""
    k0, k1 = os.urandom(20000), os.urandom(12000)
    out, inv = os.urandom(16 * 900), os.urandom(4 * 700)
    sim = Sim(128, tmp_path, seed=9)
    sim("lat", 25, 15)("axistall", 0.15)("sinkstall", "key0", 0.9)("srcstall", "out", 0.2)
    sim.load(MEM, k0).load(MEM + 0x8000, k1)("fill", hex(MEM + 0x20000), 0x10000, 0xAA)
    sim("src", "out", sim.file(out))("src", "invalid", sim.file(inv))
    for ch, a, n in ((0, MEM, len(k0)), (1, MEM + 0x8000, len(k1)), (2, MEM + 0x20000, 0x8000),
                     (3, MEM + 0x28000, 0x4000)):
        sim.wr(ch, ADDR, a).wr(ch, LEN, n)
    for ch in range(4):
        sim.wr(ch, CTRL, 1)
    for ch in (1, 2, 3, 0):
        sim("wait", ch, 400000)
    sim("sink", "key0", sim.out("k0.bin"))("sink", "key1", sim.out("k1.bin"))
    sim("dump", hex(MEM + 0x20000), len(out), sim.out("o.bin"))("dump", hex(MEM + 0x28000), len(inv), sim.out("i.bin"))
    r = sim.run()
    for ch in range(4):
        assert r.wait(ch)["status"] == DONE, (ch, r.wait(ch))
    # key1 finished while key0 was still crawling: the slow sink did not hold the shared R channel
    assert r.sinks["key1"][0]["last"] < r.sinks["key0"][0]["last"]
    assert sim.out("k0.bin").read_bytes() == padded(k0, 16) and sim.out("k1.bin").read_bytes() == k1
    assert sim.out("o.bin").read_bytes() == out and sim.out("i.bin").read_bytes() == inv


def test_generated_header_and_docs():
    gen = ROOT / "build" / "gen" / "dma_w128"
    exe_for(128)
    h = dict((k, int(v, 0)) for k, v in re.findall(r"^#define\s+(\w+)\s+(0x[0-9A-Fa-f]+|\d+)\b",
                                                    (gen / "dma_regs.h").read_text(), re.M))
    # The contract (docs/architecture.md): channel n at 0x40 * n, this layout, two global registers.
    layout = (("ADDR", 0), ("LEN", 4), ("CTRL", 8), ("STATUS", 0xC), ("BYTES", 0x10), ("IRQ_ENABLE", 0x14),
              ("IRQ_STATUS", 0x18), ("ADDR2", 0x1C), ("LEN2", 0x20))
    for n in range(4):
        for name, off in layout:
            assert h[f"DMA_CH{n}_{name}"] == 0x40 * n + off, (n, name)
    for name, off in layout:
        assert h[f"DMA_CH_{name}"] == off, name
    assert (ADDR, LEN, CTRL, STATUS, BYTES, IRQ_EN, IRQ_ST, ADDR2, LEN2) == tuple(off for _, off in layout)
    assert h["DMA_CH_STRIDE"] == STRIDE == 0x40 and h["DMA_CH_COUNT"] == 4
    assert h["DMA_START_MASK"] == 0x100 and h["DMA_ALL_STATUS"] == 0x104
    assert h["DMA_CH_STATUS_ERR_CODE_SHIFT"] == 8 and h["DMA_CH_STATUS_ERR_CODE_MASK"] == 0xFF00
    for f in ("dma_regs.html", "dma_regs.json", "dma_regs.md", "CompactionDma.v"):
        assert (gen / f).exists(), f


def test_generator_rejects_bad_width(tmp_path):
    with pytest.raises(build.BuildError, match="width must be one of 32, 128"):
        build.mill("dma.runMain", "dma.Generate", "--width", "64", "--out", str(tmp_path))


@pytest.mark.parametrize("script, msg", [("bogus 1", "unknown command"), ("axistall 2", "bad probability"),
                                         ("wr 0x00", "too few arguments"), ("rd zz", "bad number")])
def test_harness_rejects_bad_script(script, msg):
    res = subprocess.run([str(exe_for(128))], input=script + "\n", capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and f"FATAL {msg}" in res.stdout, res.stdout
