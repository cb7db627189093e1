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


# ------------------------------------------------------------------ the full SoC (sim/soc/nand_faults.h)
BAD_SCHEDULES = [  # (line, what the harness's message must name)
    ("explode 0 3", "unknown fault 'explode'"),
    ("bad 2 3", "bad target"),
    ("bad 4.0 3", "bad channel"),          # the default SoC has channels 0..3
    ("grown-bad 1.2 3", "grown-bad target"),
    ("bad 0 48", "bad block"),
    ("weak-page 0 9 64 1", "weak-page page"),
    ("fail 0 read 9 1", "operation must be 'program' or 'erase', not 'read'"),
    ("power-cut 0 program 12-9 1", "block range 12-9 is empty"),
    ("power-cut 0 program 9 0", "K counts from 1"),
    ("power-cut 0 program 9", "expected 'fail|power-cut T program|erase BLOCKS K'"),
    ("bit-flips * 1_000", "bit-flips MAX"),
    ("stuck-busy 0 12 7", "expected 'stuck-busy T [CYCLE]'"),
]


@pytest.fixture(scope="module")
def soc_exe():
    from lsmc.sim import soc
    return soc.build_soc()


@pytest.mark.parametrize("line,why", BAD_SCHEDULES, ids=[b[0] for b in BAD_SCHEDULES])
def test_soc_fault_schedule_refuses_bad_lines_naming_file_and_line(soc_exe, tmp_path, line, why):
    """A schedule is checked whole before the simulation starts: exit 2, file:line and the cause named."""
    import subprocess

    from lsmc.build import firmware
    elf = firmware.build_firmware().parent / "storage.elf"
    f = tmp_path / "faults.txt"
    f.write_text("# a comment, then a good line and a blank one\nbit-flips * 2\n\n" + line + "\n")
    r = subprocess.run([str(soc_exe), str(elf), "--nand-blocks", "48", "--nand-faults", str(f)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"{f}:4" in r.stderr and why in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "cycles" not in r.stderr  # refused before any cycle
    r = subprocess.run([str(soc_exe), str(elf), "--nand-blocks", "48", "--nand-fault", line],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--nand-fault" in r.stderr and why in r.stderr, r.stderr


def test_storage_fault_checker_catches_lost_and_altered_runs():
    """The host's check (lsmc.sim.storage_faults) is not a formality: a byte altered in a readback, a
    run reported stored but missing at the next mount, a LOST run and a wrong CRC all fail it."""
    from lsmc.sim import storage_faults as sf
    data = {1: b"A" * 100, 2: b"B" * 50}

    def boots(rb0, rb1, stored0=(1,), lost1=()):
        b0 = sf.Boot("store: mount done\n", cut="[sim: power cut 1 ...]", stored=list(stored0), readback=rb0)
        b1 = sf.Boot("store: mount done\n", stored=[2], readback=rb1, lost=list(lost1))
        return [b0, b1]

    def rb(pas, rid, slot, crc=None):
        crc = sf.zlib.crc32(data[rid]) if crc is None else crc
        return (pas, rid, sf.RB_BASE + slot * 0x1000, len(data[rid]), crc, 0)

    dump = bytearray(0x4000)
    dump[0x1000:0x1064] = data[1]
    dump[0x2000:0x2032] = data[2]
    good = boots([], [rb("mount", 1, 1), rb("final", 1, 1), rb("final", 2, 2)])
    assert sf.check(good, [None, bytes(dump)], data)[0] == []
    bad = bytearray(dump)
    bad[0x1000 + 17] ^= 4
    assert "differs from the host's copy at byte 17" in " ".join(sf.check(good, [None, bytes(bad)], data)[0])
    missing = boots([], [rb("final", 1, 1), rb("final", 2, 2)])
    assert "not read back at mount: [1]" in " ".join(sf.check(missing, [None, bytes(dump)], data)[0])
    lost = boots([], [rb("final", 2, 2)], lost1=[("mount", 1)])
    assert "reported stored earlier, is LOST" in " ".join(sf.check(lost, [None, bytes(dump)], data)[0])
    crc = boots([], [rb("mount", 1, 1, crc=5), rb("final", 1, 1), rb("final", 2, 2)])
    assert "length/CRC" in " ".join(sf.check(crc, [None, bytes(dump)], data)[0])


def _check_faults_result(res, schedule):
    from lsmc.sim import storage_faults as sf
    assert res.passed, "\n".join(res.lines) + res.uart[-3000:] + res.stderr[-2000:]
    rows = {k: (n, det) for k, n, det in sf.classify(schedule, res.uart, res.stderr)}
    kinds = {line.split()[0] for line in schedule.splitlines() if line and not line.startswith("#")}
    for k, (n, det) in rows.items():  # every scheduled fault struck and the firmware saw it
        assert (n == "armed" or n > 0) and det > 0, (k, n, det, "\n".join(res.lines))
    assert {k.split()[0] for k in rows} == kinds
    cuts = [b.cut for b in res.boots if b.cut]
    assert len(cuts) >= 3 and any("erase" in c for c in cuts)
    assert sum(len(b.stored) for b in res.boots) >= 4  # runs reported stored, all read back after each cut


@pytest.mark.slow
def test_storage_survives_every_fault_kind_and_power_cuts_full_soc():
    """The short schedule (every fault kind but stuck R/B#; power cuts during a data program, a manifest
    program and an erase) in the full SoC: nothing reported stored is lost or altered, byte for byte,
    after each of the three recoveries and at the end (scripts/demo storage --faults runs the full one)."""
    from lsmc.sim import storage_faults as sf
    res = sf.run(sf.SHORT_SCHEDULE, max_cycles=150_000_000, timeout=1800)
    _check_faults_result(res, sf.SHORT_SCHEDULE)


@pytest.mark.long
def test_storage_survives_the_full_fault_schedule_full_soc():
    """The demo's full schedule: five power cuts and a target that sticks busy (the store goes on with
    the other target's copies)."""
    from lsmc.sim import storage_faults as sf
    res = sf.run(sf.FULL_SCHEDULE, max_cycles=400_000_000, timeout=3600)
    _check_faults_result(res, sf.FULL_SCHEDULE)


def test_demo_schedule_refused_with_its_name_and_line(soc_exe, tmp_path):
    """`scripts/demo storage --faults --schedule FILE`: the harness's refusal comes back naming FILE:LINE."""
    from lsmc.sim import storage_faults as sf
    with pytest.raises(sf.ScheduleError, match=r"--schedule mine.txt:2: .*unknown fault 'melt'"):
        sf.run("bit-flips * 1\nmelt 0 9\n", out_dir=tmp_path, exe=soc_exe, schedule_name="--schedule mine.txt")


def test_host_and_firmware_agree_on_the_store_layout():
    """lsmc.sim.storage_faults restates a few numbers of fw/apps/storage/store.c (the readback area it
    dumps, the manifest blocks it classifies cuts by): drift fails here. The work list's magic and the SIM_ARG
    are the job ABI's (fw/include/job_abi.json, tests/test_facts.py)."""
    import re

    from lsmc.paths import ROOT
    from lsmc.sim import storage_faults as sf
    src = (ROOT / "fw" / "apps" / "storage" / "store.c").read_text()
    d = {k: int(v.rstrip("u"), 0) for k, v in re.findall(r"^#define (\w+) (0x[0-9A-Fa-f]+u?|\d+u?)\b", src, re.M)}
    assert d["RB_MOUNT"] == sf.RB_BASE and d["RB_FINAL"] + (d["RB_FINAL"] - d["RB_MOUNT"]) == sf.RB_BASE + sf.RB_BYTES
    assert (d["MAN_FIRST"], d["MAN_FIRST"] + d["MAN_BLOCKS"] - 1) == sf.MANIFEST
    assert d["AREA_END"] <= sf.NAND_BLOCKS
