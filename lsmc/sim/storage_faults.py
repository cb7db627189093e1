"""`scripts/demo storage --faults`: the power-cut-safe storage flow (fw/apps/storage/store.c, SIM_ARG 2)
in the full SoC under a NAND fault schedule (sim/soc/nand_faults.h) that covers every fault kind of
the ONFI model, power cuts included (docs/storage.md).

The host makes the KB16 runs (lsmc.model), loads them with a work list (store runs, merge pairs on
the IP), and keeps its own copy of every run and of every merge result (the Python reference merge).
The harness resets the SoC at each power cut (NAND array kept, DDR and CPU state lost) and saves the
firmware's readback area just before each cut and at the end. After every boot the host takes the
runs the firmware read back from that dump and compares them byte for byte with its copy; PASS only
if every run reported stored is read back intact after every later recovery and at the end, and no
run is ever returned altered."""
from __future__ import annotations

import re
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lsmc.build import facts, regmap
from lsmc.model import kb16, workloads

SCEN_FAULTS = facts.scenarios("storage")["FAULTS"]  # SIM_ARG of storage.elf (fw/include/job_abi.json)
WORK_MAGIC = facts.constant("STORAGE_WORK_MAGIC")
RB_BASE, RB_BYTES = 0x4E000000, 0x800000  # store.c RB_MOUNT .. RB_FINAL + 4 MiB: what the harness dumps
SLOT = 0x10000             # the host's runs, 64 KiB apart after the work list
GROUP = 16
NAND_BLOCKS = 48           # small device: mount's bad-block scan stays short (store area: blocks 8..47)
MANIFEST = (8, 13)         # store.c: manifest area blocks; data blocks 14..47

# Every fault kind, in the order of the report.
KINDS = ["bit-flips", "bad", "grown-bad", "weak-block", "weak-page", "grave-page", "fail program",
         "fail erase", "stuck-busy", "power-cut program (data)", "power-cut program (manifest)",
         "power-cut erase"]

# Blocks: manifest area 8..13 (channel 0), data 14..47 (store.c). K counts matching operations over the
# whole run. Run copies spread over the SoC's four channels (store.c copy_place: run n's copies on
# channels 2n and 2n + 1 mod 4), so a target "C.T" of channel C takes faults as channel 0's do.
SHORT_SCHEDULE = """\
# fault schedule of the short run (tests/test_nand_faults.py): every kind but stuck R/B#, on channel 0
# and on channels 1..3 (C.T)
bit-flips * 3
bit-flips 2.* 3
bad 0 15
bad 3.0 14
grown-bad 1.1 14
weak-block 0 11 0
weak-page 1 9 0 0
grave-page 0 9 0 5
grave-page 0 14 0 3
fail 0 program 14-47 2
fail 2.0 program 14-47 1
fail 1.0 erase 14-47 1
power-cut 3.1 program 14-47 1
power-cut 1 program 8-13 3
power-cut 0 erase 8-13 6
"""

FULL_SCHEDULE = SHORT_SCHEDULE.replace("every kind but stuck R/B#", "every kind") + """\
power-cut 3.1 erase 14-47 2
power-cut 0 program 8-13 9
stuck-busy 1 20000000
"""


class ScheduleError(RuntimeError):
    """The harness refused the fault schedule (exit 2 before the first cycle): its message."""


@dataclass
class Boot:
    text: str
    cut: str = ""                                  # the harness's power-cut line that ended it
    stored: list = field(default_factory=list)     # run ids reported stored in this boot
    readback: list = field(default_factory=list)   # (pass, id, addr, bytes, crc, copy)
    lost: list = field(default_factory=list)       # (pass, id)


@dataclass
class Result:
    passed: bool
    lines: list                                     # the report
    boots: list
    returncode: int
    uart: str
    stderr: str
    cycles: int | None
    cpu_seconds: float | None


def make_work(runs: int = 4, keys: int = 48, seed: int = 7):
    """Input runs 1, 2, 4, 5 ... (pairs), merges 3 = 1+2, 6 = 4+5 ...: (work list bytes, {id: expected bytes})."""
    expect, items, data = {}, [], []
    for p in range(runs // 2):
        a, b = workloads.make_runs("prefix", keys, 0.25, seed + p)
        ra, rb = kb16.encode(a, GROUP), kb16.encode(b, GROUP)
        ia, ib, im = 3 * p + 1, 3 * p + 2, 3 * p + 3
        for i, r in ((ia, ra), (ib, rb)):
            expect[i] = r
            items.append((1, i, len(data), r))
            data.append(r)
        expect[im] = kb16.merge(ra, rb, GROUP)[0]
        items.append((2 | GROUP << 8, im, ia, ib))
    host = regmap.memmap().base("DDR_HOST")
    head = 8 + 16 * len(items)
    first = (head + SLOT - 1) // SLOT * SLOT
    blob = bytearray(first + SLOT * len(data))
    struct.pack_into("<II", blob, 0, WORK_MAGIC, len(items))
    for n, it in enumerate(items):
        if it[0] == 1:
            _, i, slot, r = it
            addr = host + first + SLOT * slot
            struct.pack_into("<IIII", blob, 8 + 16 * n, 1, i, addr, len(r))
            blob[first + SLOT * slot:first + SLOT * slot + len(r)] = r
        else:
            struct.pack_into("<IIII", blob, 8 + 16 * n, *it)
    return bytes(blob), expect


_STORED = re.compile(r"^store: stored run (\d+): (\d+) bytes crc 0x([0-9a-f]+)", re.M)
_RB = re.compile(r"^readback: (\w+) run (\d+) at 0x([0-9a-f]+) bytes (\d+) crc 0x([0-9a-f]+) copy (\d)", re.M)
_LOST = re.compile(r"^readback: (\w+) run (\d+) LOST", re.M)
# targets: "T" on channel 0, "C.T" on channel C (the harness and store.c name them so)
_CUT = re.compile(r"^\[sim: power cut \d+ at cycle \d+: target ([\d.]+) (program|erase) row \d+ \(block (\d+)\).*\]$",
                  re.M)


def split_boots(uart: str) -> list:
    boots, pos = [], 0
    for m in _CUT.finditer(uart):
        boots.append(Boot(uart[pos:m.start()], cut=m.group(0)))
        pos = m.end()
    boots.append(Boot(uart[pos:]))
    for b in boots:
        b.stored = [int(m.group(1)) for m in _STORED.finditer(b.text)]
        b.readback = [(m.group(1), int(m.group(2)), int(m.group(3), 16), int(m.group(4)), int(m.group(5), 16),
                       int(m.group(6))) for m in _RB.finditer(b.text)]
        b.lost = [(m.group(1), int(m.group(2))) for m in _LOST.finditer(b.text)]
    return boots


def check(boots: list, dumps: list, expect: dict) -> tuple[list, list]:
    """Problems (empty = PASS) and per-boot lines. dumps[i] = readback area after boot i (bytes)."""
    problems, lines, reported = [], [], set()
    for i, (b, dump) in enumerate(zip(boots, dumps)):
        seen = {}
        for pas, rid, addr, n, crc, _copy in b.readback:
            if rid not in expect:
                problems.append(f"boot {i}: {pas} readback of run {rid}, which the host never asked for")
                continue
            got = dump[addr - RB_BASE:addr - RB_BASE + n] if dump is not None else None
            if n != len(expect[rid]) or crc != zlib.crc32(expect[rid]):
                problems.append(f"boot {i}: {pas} run {rid}: length/CRC {n}/{crc:#x} differ from the host's copy")
            elif got is None:
                problems.append(f"boot {i}: no dump of the readback area")
            elif got != expect[rid]:
                at = next(k for k in range(n) if got[k] != expect[rid][k])
                problems.append(f"boot {i}: {pas} run {rid} read back differs from the host's copy at byte {at}")
            seen.setdefault(pas, set()).add(rid)
        for pas, rid in b.lost:
            if rid in reported:
                problems.append(f"boot {i}: {pas}: run {rid}, reported stored earlier, is LOST")
        mounted = seen.get("mount", set())
        # a cut during mount (its readback, a repair) may come before every run was read back
        missing = sorted(reported - mounted) if "store: mount done" in b.text else []
        if missing:
            problems.append(f"boot {i}: runs reported stored before are not read back at mount: {missing}")
        reported |= set(b.stored)
        if "final" in seen and reported - seen["final"]:
            problems.append(f"boot {i}: final readback misses reported runs {sorted(reported - seen['final'])}")
        lines.append(f"boot {i}: mount read back {len(mounted)} run(s) byte-identical, stored {b.stored or 'none'}"
                     + (f"; ended by {b.cut.strip('[]')}" if b.cut else ""))
    final = {rid for pas, rid, *_ in boots[-1].readback if pas == "final"}
    if set(expect) - final:  # a run may be stored without a report (power cut after the manifest commit)
        problems.append(f"runs of the work list not in the final readback: {sorted(set(expect) - final)}")
    return problems, lines


def _target(word: str) -> tuple:
    """'T', '*', 'C.T' or 'C.*' -> (channel, target or None)."""
    ch, _, t = word.rpartition(".")
    return int(ch or 0), None if t == "*" else int(t)


def _schedule(schedule: str) -> list:
    """(kind, (channel, target), block or (lo, hi), page) of every line (the harness checked the syntax)."""
    out = []
    for line in schedule.splitlines():
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        t = _target(w[1])
        if w[0] in ("fail", "power-cut"):
            lo, _, hi = w[3].partition("-") if w[3] != "*" else ("0", "", "99999")
            blocks = (int(lo), int(hi or lo))
            kind = f"{w[0]} {w[2]}"
            if w[0] == "power-cut" and w[2] == "program":
                kind += " (manifest)" if MANIFEST[0] <= blocks[0] <= MANIFEST[1] else " (data)"
            out.append((kind, t, blocks, None))
        elif w[0] in ("bad", "grown-bad", "weak-block"):
            out.append((w[0], t, int(w[2]), None))
        elif w[0] in ("weak-page", "grave-page"):
            out.append((w[0], t, int(w[2]), int(w[3])))
        else:
            out.append((w[0], t, None, None))
    return out


def classify(schedule: str, uart: str, stderr: str) -> list:
    """Per fault kind in the schedule: (kind, injected, detected). Injected: the harness's counts (op
    faults, weak blocks/pages), the models' bit-error and grave-read counts, 'armed' for static faults.
    Detected: the firmware's `fault:` lines, each given to the first fault it names (target and block),
    else by what it says; factory-bad blocks by mount's scan; power cuts by the reboot that follows."""
    faults = _schedule(schedule)
    inj: dict = {}
    for m in re.finditer(r"^sim: fault \S+ \((.*)\): (?:injected (\d+)|armed)$", stderr, re.M):
        (kind, *_), = _schedule(m.group(1))
        inj[kind] = inj.get(kind, 0) + int(m.group(2) or 0)
    inj["bit-flips"] = sum(int(x) for x in re.findall(r"^sim: nand[\d.]+: .* (\d+) bit errors$", stderr, re.M))
    inj["grave-page"] = sum(int(x) for x in re.findall(r"^sim: nand[\d.]+: (\d+) grave-page reads$", stderr, re.M))
    det = {k: 0 for k, *_ in faults}
    for line in re.findall(r"^fault: .*$", uart, re.M):
        m = re.search(r"target ([\d.]+) block (\d+)(?: page (\d+))?", line)
        t, blk, page = (_target(m.group(1)), int(m.group(2)), m.group(3)) if m else (None, None, None)
        kind = None
        for k, ft, fb, fp in faults:
            same_target = m and ft[0] == t[0] and (ft[1] is None or ft[1] == t[1])
            if same_target and not isinstance(fb, tuple) and fb == blk and \
                    k in ("grown-bad", "weak-block", "weak-page", "grave-page") and "retired" not in line:
                if fp is None or page is None or int(page) == fp:
                    kind = k
                    break
        if kind is None:
            if "ECC corrected" in line:
                kind = "bit-flips"
            elif "TIMEOUT" in line or "targets:" in line:
                kind = "stuck-busy"
            elif "program status" in line and "NAND_FAIL" in line:
                kind = "fail program"
            elif "erase" in line and "NAND_FAIL" in line:
                kind = "fail erase"
        if kind in det:
            det[kind] += 1
    det["bad"] = len(re.findall(r"^mount: target [\d.]+: \d+ factory-bad", uart, re.M)) if "bad" in det else 0
    for _t, op, blk in _CUT.findall(uart):
        k = "power-cut " + op
        if op == "program":
            k += " (manifest)" if MANIFEST[0] <= int(blk) <= MANIFEST[1] else " (data)"
        det[k] = det.get(k, 0) + 1
    rows = []
    for k in KINDS:
        if any(f[0] == k for f in faults):
            n = "armed" if k in ("bad", "grown-bad", "stuck-busy") else inj.get(k, 0)
            rows.append((k, n, det.get(k, 0)))
    return rows


def run(schedule: str = SHORT_SCHEDULE, out_dir: Path | None = None, timeout: float = 3600,
        max_cycles: int = 400_000_000, exe: Path | None = None, schedule_name: str | None = None) -> Result:
    """Run the store under `schedule`; ScheduleError (naming `schedule_name`:LINE) if the harness refuses it."""
    from lsmc.build import firmware
    from lsmc.sim import soc
    firmware.build_firmware()
    elf = firmware.BUILD_FW / "storage.elf"
    exe = exe or soc.build_soc()
    tmp = tempfile.TemporaryDirectory(prefix="lsmc-faults-")
    d = Path(out_dir) if out_dir else Path(tmp.name)
    d.mkdir(parents=True, exist_ok=True)
    blob, expect = make_work()
    (d / "work.bin").write_bytes(blob)
    (d / "faults.txt").write_text(schedule)
    dump = d / "readback.bin"
    for old in d.glob("readback.bin*"):
        old.unlink()
    host = regmap.memmap().base("DDR_HOST")
    r = soc.run_soc(elf, arg=SCEN_FAULTS, max_cycles=max_cycles, loads={host: d / "work.bin"},
                    dumps=[(RB_BASE, RB_BYTES, dump)], log=d / "console.log", timeout=timeout, exe=exe,
                    extra=["--nand-blocks", str(NAND_BLOCKS), "--nand-faults", d / "faults.txt"])
    refused = re.search(r"^sim: error: (.*)$", r.stderr, re.M)
    if r.returncode == 2 and refused:
        tmp.cleanup()
        raise ScheduleError(refused.group(1).replace(str(d / "faults.txt"), schedule_name or "schedule"))
    boots = split_boots(r.uart)
    dumps = []
    for i in range(len(boots)):
        p = Path(f"{dump}.cut{i + 1}") if i < len(boots) - 1 else dump
        dumps.append(p.read_bytes() if p.exists() else None)
    problems, lines = check(boots, dumps, expect)
    if r.returncode != 0:
        why = re.findall(r"^sim: error: .*$", r.stderr, re.M)
        problems.append(f"simulation exit {r.returncode} (store.c: 0 = work list done, nothing lost)"
                        + (f": {why[0]}" if why else ""))
    rows = classify(schedule, r.uart, r.stderr)
    report = [f"storage faults: {len(boots) - 1} power cut(s), {len(boots)} boot(s), {len(expect)} runs "
              f"({sum(1 for b in boots for _ in b.stored)} store reports)", *lines,
              f"{'fault kind':30s} {'injected':>9s} {'detected':>9s}  recovered"]
    ok = not problems
    for k, n, det in rows:
        struck = n == "armed" or n > 0
        report.append(f"{k:30s} {n!s:>9s} {det:>9d}  {('yes' if ok else 'NO') if struck else '-'}")
    report += [f"problem: {p}" for p in problems]
    cpu = re.search(r"sim: cpu time ([\d.]+) s", r.stderr)
    report.append(f"storage faults: {'PASS' if ok else 'FAIL'} ({r.cycles} cycles, "
                  f"{cpu.group(1) if cpu else '?'} s CPU)")
    tmp.cleanup()
    return Result(ok, report, boots, r.returncode, r.uart, r.stderr, r.cycles,
                  float(cpu.group(1)) if cpu else None)
