"""Several compaction units in the full SoC: the host-loaded task-queue job (firmware SIM_ARG 8,
fw/apps/lsmc/scale.c) and the scaling sweep of `scripts/demo scaling` (docs/scaling.md).

    from lsmc.sim import scaling
    tasks = scaling.make_tasks(cus=2, ways=4, entries=8192)
    res = scaling.run_tasks(tasks, units=2, ways=4, ddr="kcu105")
    res["cycles"], res["pass"], [t["unit"] for t in res["tasks"]]

The host builds every task's runs and its reference merge (lsmc.model.kb16), loads them with the
descriptor at DDR_BASE, the firmware runs all tasks through its task queue on the units at once and
brackets them with the machine timer; the host reads every output back (`--dump`) and compares it
byte for byte with the reference. A sweep point of N entries on M units is one job of K runs that the
firmware splits by key range into M parts (sub-compaction, scale_image(split=True)), or that the host
splits (make_job) into M tasks."""
from __future__ import annotations

import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lsmc import build
from lsmc.build import facts, firmware
from lsmc.sim.ddr import bank_geometry, ddr_presets

# Descriptor of SIM_ARG 8 (fw/apps/lsmc/scale.c, docs/firmware.md "Several units"): the job ABI,
# fw/include/job_abi.json (lsmc.build.facts).
SCEN_SCALE = firmware.SCEN["SCALE"]
SCALE_MAGIC = facts.constant("SCALE_MAGIC")
SCALE_VERSION = facts.constant("SCALE_VERSION")
SCALE_RESULT_MAGIC = facts.constant("SCALE_RESULT_MAGIC")
# POLL; NO_CHECK: the firmware compares only lengths, the host the bytes (large jobs); SPLIT: one job the
# firmware splits into `units` parts, runs them, stitches the outputs
FLAG_POLL, FLAG_NO_CHECK, FLAG_SPLIT = (facts.flags("SCALE_F")[n] for n in ("POLL", "NO_CHECK", "SPLIT"))
DESC_BYTES = facts.constant("SCALE_DESC_BYTES")
RESULT_OFF = facts.constant("SCALE_RESULT_OFF")
HEAD = facts.layout("SCALE_HEAD")
TASK0, TASK_WORDS = len(HEAD), len(facts.layout("SCALE_TASK"))
MAX_WAYS = facts.layout("SCALE_TASK").count("run0_off") // 2  # (offset, length) per run
MAX_TASKS = (RESULT_OFF // 4 - TASK0) // TASK_WORDS
HEAD_FIELDS = tuple(f for f in facts.layout("SCALE_RES_HEAD") if f)
HEAD_WORDS = len(facts.layout("SCALE_RES_HEAD"))
TASK_FIELDS = tuple(f for f in facts.layout("SCALE_RES_TASK") if f)
TASK_RES_WORDS = len(facts.layout("SCALE_RES_TASK"))
# A split job's result: its merged run and invalid addresses as segments, after task 0's result words
SPLIT_RES = facts.layout("SCALE_RES_SPLIT")
SPLIT_RES_OFF = 4 * (HEAD_WORDS + TASK_RES_WORDS)
STATES = {0: "pending", 1: "running", 2: "done", 3: "done_cpu", 4: "failed"}
STATUS = facts.status("SCALE")
FAULT_BAD_GROUP = 1  # the unit is programmed with group 1: it must report an error, the CPU finishes

WORKLOAD = {"kind": "short", "overlap": 0.25, "group": 16}


class ScalingError(RuntimeError):
    pass


@dataclass
class _Runs:
    """Input runs (newest first) of a task or a job."""
    runs: list

    @property
    def entries_in(self) -> int:
        return sum(len(r) for r in self.runs) // 16


@dataclass
class Task(_Runs):
    """One merge task: its runs (newest first) and the reference merge of them; `split_keys`: the
    firmware's split keys when the task is a job the firmware splits (make_fw_job)."""
    merged: bytes
    invalid: bytes
    fault: int = 0
    split_keys: list | None = None


def make_task(ways: int, keys: int, seed: int, group: int = 16, kind: str = "short",
              overlap: float = 0.25) -> Task:
    """`ways` runs with `keys` keys in all: pairs from the Table III generator (lsmc.model.workloads,
    25 % overlap inside a pair, a seed per pair), newest first, and their reference merge."""
    from lsmc.model import kb16, workloads

    if ways < 1 or ways > MAX_WAYS:
        raise ScalingError(f"ways {ways}: the firmware's tasks take 1..{MAX_WAYS} runs")
    key_runs = []
    per_pair = keys // ((ways + 1) // 2)
    for p in range((ways + 1) // 2):
        r0, r1 = workloads.make_runs(kind, per_pair if 2 * p + 1 < ways else per_pair // 2, overlap,
                                     seed * 1000 + p)
        key_runs.append(r0)
        if 2 * p + 1 < ways:
            key_runs.append(r1)
    runs = [kb16.encode(r, group) for r in key_runs]
    merged, invalid = kb16.merge_runs(runs, group)
    return Task(runs, merged, invalid)


@dataclass
class Job(_Runs):
    """One merge split by key range into sub-jobs (sub-compaction, lsmc.model.split): `tasks` are
    the parts, one per unit; their outputs stitched in part order must equal `merged` byte for byte,
    their invalid streams concatenated `invalid`."""
    merged: bytes
    invalid: bytes
    keys: list
    tasks: list
    group: int = 16

    def check(self, outs: list, invs: list) -> bool:
        from lsmc.model import split

        return split.stitch(outs, self.group) == self.merged and b"".join(invs) == self.invalid


def make_workload(ways: int, entries: int, seed: int = 1, group: int = 16) -> Job:
    """The sweep's job before splitting: the Table III workload of `entries` keys (kb16 gen short, 25 %
    overlap) dealt into `ways` runs (workloads.deal) and its reference merge."""
    from lsmc.model import kb16, workloads

    if ways not in (2, 4):
        raise ScalingError(f"ways {ways}: 2 or 4")
    k0, k1 = workloads.make_runs(WORKLOAD["kind"], entries, WORKLOAD["overlap"], seed)
    runs = [kb16.encode(k, group) for k in workloads.deal(k0, k1, ways)]
    merged, invalid = kb16.merge_runs(runs, group)
    return Job(runs, merged, invalid, [], [], group)


def make_job(cus: int, ways: int, entries: int, seed: int = 1, group: int = 16, base: Job | None = None) -> Job:
    """The workload (or `base`, make_workload's) split into `cus` parts at group-start keys of the
    reference output at equal fractions, so that the stitched output is byte-identical to the unsplit
    merge (docs/scaling.md; split.split_keys' input-balanced keys give the same keys, possibly another
    valid encoding)."""
    from lsmc.model import kb16, split

    w = base or make_workload(ways, entries, seed, group)
    runs, merged, invalid, group = w.runs, w.merged, w.invalid, w.group
    starts = split.output_group_keys(merged, group)
    keys = [starts[len(starts) * j // cus] for j in range(1, cus)]
    tasks = []
    for row in split.plan(runs, group, keys):
        subs = [sub.bytes(r) for sub, r in zip(row, runs)]
        m, inv = kb16.merge_runs(subs, group)
        tasks.append(Task(subs, m, inv))
    return Job(runs, merged, invalid, keys, tasks, group)


def make_fw_job(cus: int, base: Job, stagger: tuple[int, int] | None = None) -> Task:
    """The workload as ONE task for the firmware's own split (scale_image(split=True)): its expected
    output is the sub-compaction at the firmware's split keys (split.split_keys_fast, equal to
    kb16_split_keys_fast; split.subcompact equals kb16_subcompact step by step), which decodes to
    the unsplit merge's (key, address) sequence; the invalid stream is the unsplit merge's. `stagger`:
    the geometry the firmware gets (scale_image), which skews its split points by a bank row per part."""
    from lsmc.model import kb16, split

    skew = stagger[0] // (16 * base.group) if stagger else 0
    keys = split.split_keys_fast(base.runs, base.group, cus, skew)
    out, inv, _ = split.subcompact(base.runs, base.group, cus, keys=keys)
    if inv != base.invalid or kb16.decode(out, base.group) != kb16.decode(base.merged, base.group):
        raise ScalingError("the split reference differs from the unsplit merge")  # a model bug, never the SoC's
    return Task(base.runs, out, inv, split_keys=keys)


def run_offsets(img: bytes, task: int = 0) -> list[int]:
    """Offsets from DDR_BASE of one task's runs in a scale_image image (its descriptor words)."""
    w = struct.unpack_from(f"<{TASK_WORDS}I", img, 4 * (TASK0 + TASK_WORDS * task))
    return [w[2 + 2 * k] for k in range(w[0])]


def segment_inputs(task: Task, img: bytes, group: int, parts: int) -> dict:
    """How the firmware's split (scale.c scale_split) hands its sub-runs to the DMA readers, from the model's
    plan at the same split keys: `heads` sub-runs that start with a re-encoded head (read as two segments,
    head then tail in place), `off_align` sub-runs with no head whose tail starts off the DMA's 32-byte
    alignment (read as a lone second segment, 16-byte aligned). Nothing is copied in either case."""
    from lsmc.model import split

    if task.split_keys is None or len(task.split_keys) != parts - 1:
        raise ScalingError(f"the task carries no split keys for {parts} parts (make a firmware job with make_fw_job)")
    at = [firmware.DDR_BASE + o for o in run_offsets(img)]
    heads = off_align = 0
    for row in split.plan(task.runs, group, task.split_keys):
        for sub, a in zip(row, at):
            if sub.head:
                heads += 1
            elif sub.tail_end > sub.tail_begin and (a + 16 * sub.tail_begin) % 32:
                off_align += 1
    return {"heads": heads, "off_align": off_align}


def make_tasks(cus: int, ways: int, entries: int, seed: int = 1, group: int = 16) -> list[Task]:
    """`cus` independent tasks of entries/cus keys, `ways` runs each (tests)."""
    if entries < cus * ways:
        raise ScalingError(f"{entries} entries are fewer than one per run ({cus} units x {ways} ways)")
    return [make_task(ways, entries // cus, seed * 100 + i, group) for i in range(cus)]


def _align(n: int, a: int = 32) -> int:
    return (n + a - 1) // a * a


def scale_image(tasks: list[Task], group: int = 16, units: int = 0, poll: bool = False,
                fw_check: bool = True, stagger: tuple[int, int] | None = None,
                split: bool = False) -> tuple[bytes, list]:
    """DDR image (at DDR_BASE) of a task-queue job: the descriptor (magic, version, G, flags, units
    (0: all), task count; per task its runs, fault, expected output and invalid addresses, output
    buffers), then the data. Returns (image, [(out address, out buffer, inv address, inv buffer)]).
    `stagger` = (bytes of a bank's row, banks) (lsmc.sim.ddr.bank_geometry): the buffers the units
    stream (runs, outputs) start in successive banks (a split job's: `units` banks apart), so streams
    that advance together do not keep meeting in one bank on different rows (runs of equal size would
    otherwise sit a row-set apart).
    `split`: one task, which the firmware splits into `units` parts (sub-compaction): its output
    buffers get room for every part's closing and a work area (heads, copied sub-runs) follows."""
    if not 1 <= len(tasks) <= MAX_TASKS:
        raise ScalingError(f"{len(tasks)} tasks: the firmware takes 1..{MAX_TASKS}")
    if split and (len(tasks) != 1 or units < 1):
        raise ScalingError("a split job is one task on a given number of units")
    flags = (FLAG_POLL if poll else 0) | (0 if fw_check else FLAG_NO_CHECK) | (FLAG_SPLIT if split else 0)
    head = dict(magic=SCALE_MAGIC, version=SCALE_VERSION, group=group, flags=flags, units=units, tasks=len(tasks))
    words = [head.get(f, 0) for f in HEAD]
    off, blobs, bufs, streams = DESC_BYTES, [], [], 0
    # A split job's runs start `units` banks apart: with the firmware's one-row skew per part
    # (kb16_split_keys_skew), part j's reader of run i starts in bank units * i + j (mod banks), so the
    # K x M readers spread evenly over the banks (one bank apart, the readers of neighbouring parts and
    # runs met: docs/scaling.md, "Buffers across banks").
    step = units if split else 1

    def place(data: bytes, size: int | None = None, streamed: bool = True) -> int:
        nonlocal off, streams
        if stagger and streamed:
            row, banks = stagger
            want = streams * step % banks * row
            off += (want - off) % (row * banks)
            streams += 1
        at = off
        blobs.append((at, data))
        off = _align(off + max(size if size is not None else len(data), 1))
        return at

    for t in tasks:
        if not 1 <= len(t.runs) <= MAX_WAYS:
            raise ScalingError(f"a task has {len(t.runs)} runs: 1..{MAX_WAYS}")
        tw = [len(t.runs), t.fault]
        for k in range(MAX_WAYS):
            if k < len(t.runs):
                tw += [place(t.runs[k]), len(t.runs[k])]
            else:
                tw += [0, 0]
        tw += [place(t.merged, streamed=False), len(t.merged), place(t.invalid, streamed=False), len(t.invalid)]
        out_buf, inv_buf = _align(len(t.merged) + 32), _align(len(t.invalid) + 32)
        if split:  # the firmware's per-part buffers (scale.c scale_split): 2x the part's input (its
            # heads re-encode at most 8 groups per run) + a group each, each staggered by up to a row-set
            n_in = sum(len(r) for r in t.runs) + units * len(t.runs) * 8 * 16 * group
            span = stagger[0] * stagger[1] if stagger else 0
            out_buf = _align(2 * n_in + units * (16 * group + 64 + span) + 64)
            inv_buf = _align(n_in // 4 + units * (64 + span) + 64)
        out_at, inv_at = place(b"", out_buf), place(b"", inv_buf)
        tw += [out_at, out_buf, inv_at, inv_buf]
        if split and stagger:
            tw += list(stagger)
        words += tw + [0] * (TASK_WORDS - len(tw))
        bufs.append((firmware.DDR_BASE + out_at, out_buf, firmware.DDR_BASE + inv_at, inv_buf))
    if split:  # heads, copied sub-runs, the closing's scratch, a general stitch's output
        span = stagger[0] * stagger[1] if stagger else 0
        work = 2 * sum(len(r) for r in tasks[0].runs) + 256 * 1024 + units * len(tasks[0].runs) * span
        words[HEAD.index("work_off")], words[HEAD.index("work_len")] = _align(off, 64), work
        off = _align(off, 64) + work
    img = bytearray(off)
    img[:4 * len(words)] = struct.pack(f"<{len(words)}I", *words)
    for o, data in blobs:
        img[o:o + len(data)] = data
    return bytes(img), bufs


def parse_result(raw: bytes, ntasks: int, split: bool = False) -> dict:
    """The firmware's result block (RESULT_OFF in the descriptor); a split job's also has its segments
    (`out_segs`, `inv_segs`: (offset from DDR_BASE, bytes) in order)."""
    need = 4 * (HEAD_WORDS + TASK_RES_WORDS * ntasks) if not split else SPLIT_RES_OFF + 4 * len(SPLIT_RES)
    if len(raw) < need:
        raise ScalingError(f"result block has {len(raw)} bytes, {need} expected")
    head = dict(zip(HEAD_FIELDS, struct.unpack_from(f"<{len(HEAD_FIELDS)}I", raw)))
    if head["magic"] != SCALE_RESULT_MAGIC:
        raise ScalingError("no scaling result block (the firmware did not run the job)")
    head["cycles"] = head.pop("cycles_lo") | head.pop("cycles_hi") << 32
    head["total_cycles"] = head.pop("total_lo") | head.pop("total_hi") << 32  # split jobs: split + units + stitch
    head["status_text"] = STATUS.get(head["status"], "unknown")
    tasks = []
    for i in range(ntasks):
        vals = struct.unpack_from(f"<{len(TASK_FIELDS)}I", raw, 4 * (HEAD_WORDS + TASK_RES_WORDS * i))
        t = dict(zip(TASK_FIELDS, vals))
        t["unit"] = struct.unpack("<i", struct.pack("<I", t["unit"]))[0]
        t["hw_rc"] = struct.unpack("<i", struct.pack("<I", t["hw_rc"]))[0]
        t["state_text"] = STATES.get(t["state"], "unknown")
        tasks.append(t)
    head["tasks"] = tasks
    if split:
        words = struct.unpack_from(f"<{len(SPLIT_RES)}I", raw, SPLIT_RES_OFF)
        for kind in ("out", "inv"):  # no segments when the job failed
            n, i = words[SPLIT_RES.index(f"{kind}_segs")], SPLIT_RES.index(f"{kind}_seg")
            most = SPLIT_RES.count(f"{kind}_seg") // 2
            if n > most:
                raise ScalingError(f"split result: {n} {kind} segments (at most {most})")
            head[f"{kind}_segs"] = [(words[i + 2 * j], words[i + 2 * j + 1]) for j in range(n)]
    return head


def scaling_command(exe, elf, img: Path, bufs: list, workdir: Path, ntasks: int, ddr: str = "kcu105",
                    max_cycles: int | None = None, log=None) -> list:
    """The simulator's command line for a task-queue job whose image is at `img`."""
    from lsmc.sim import soc

    # the result block, with a split job's segments (after task 0's words; inside the descriptor either way)
    res_bytes = max(4 * (HEAD_WORDS + TASK_RES_WORDS * ntasks), SPLIT_RES_OFF + 4 * len(SPLIT_RES))
    dumps = [(firmware.DDR_BASE + RESULT_OFF, res_bytes, workdir / "result.bin")]
    for i, (oa, ob, ia, ib) in enumerate(bufs):
        dumps += [(oa, ob, workdir / f"out{i}.bin"), (ia, ib, workdir / f"inv{i}.bin")]
    extra = ["--ddr", ddr] if ddr else []
    return soc.soc_command(exe, elf, arg=SCEN_SCALE, max_cycles=max_cycles, loads={firmware.DDR_BASE: img},
                           dumps=dumps, log=log, extra=extra)


def gather(dump: bytes, base: int, segs: list) -> bytes:
    """A split job's run (or invalid stream) read back: its segments, in order, out of the dumped buffer
    that starts at `base` (an offset from DDR_BASE, like the segments')."""
    parts = []
    for off, n in segs:
        if off < base or off - base + n > len(dump):
            raise ScalingError(f"split result: segment at offset 0x{off:x} ({n} bytes) outside its buffer "
                               f"(0x{base:x}, {len(dump)} bytes)")
        parts.append(dump[off - base:off - base + n])
    return b"".join(parts)


def collect(tasks: list[Task], workdir: Path, returncode: int, uart: str, stderr: str = "",
            job: Job | None = None, split_bufs: tuple | None = None) -> dict:
    """Result of a finished simulation: the firmware's block plus the host's byte-for-byte check of
    every task's output against its reference ("pass" per task and overall). `split_bufs`: a split job's
    (out address, out size, inv address, inv size), scale_image's; its run is read from its segments."""
    res_file = workdir / "result.bin"
    if not res_file.exists():
        raise ScalingError(f"simulation wrote no result (exit {returncode}):\n{uart[-2000:]}\n{stderr[-2000:]}")
    res = parse_result(res_file.read_bytes(), len(tasks), split=split_bufs is not None)
    ok = returncode == 0 and res["status"] == 0
    outs, invs = [], []
    for i, (t, r) in enumerate(zip(tasks, res["tasks"])):
        out, inv = (workdir / f"out{i}.bin").read_bytes(), (workdir / f"inv{i}.bin").read_bytes()
        if split_bufs is not None:
            out = gather(out, split_bufs[0] - firmware.DDR_BASE, res["out_segs"])
            inv = gather(inv, split_bufs[2] - firmware.DDR_BASE, res["inv_segs"])
        else:
            out, inv = out[:r["out_bytes"]], inv[:r["inv_bytes"]]
        r["pass"] = out == t.merged and inv == t.invalid and r["state"] in (2, 3)
        ok = ok and r["pass"]
        outs.append(out)
        invs.append(inv)
    if job is not None:
        res["stitched_pass"] = ok and job.check(outs, invs)
        ok = res["stitched_pass"]
    res.update({"exit": returncode, "uart": uart, "pass": ok, "entries_in": sum(t.entries_in for t in tasks),
                "bytes_in": sum(len(r) for t in tasks for r in t.runs),
                "bytes_out": sum(len(t.merged) + len(t.invalid) for t in tasks)})
    return res


def bank_stagger(ddr: str | None) -> tuple[int, int] | None:
    """Bank geometry of a DRAM preset for scale_image's staggering (None for `fixed`: no banks)."""
    return bank_geometry(ddr) if ddr and ddr in ddr_presets() else None


def run_tasks(tasks: list[Task], units: int, ways: int, workdir: Path | None = None, group: int = 16,
              poll: bool = False, ddr: str = "kcu105", use_units: int = 0, max_cycles: int | None = None,
              elf: Path | None = None, job: Job | None = None, fw_check: bool = True, split: bool = False) -> dict:
    """Build (cached) the SoC of `units` x `ways` and the firmware, run the tasks, check them (and the
    stitched output of `job` when the tasks are its parts)."""
    from lsmc.sim import soc

    workdir = Path(workdir or build.BUILD / "scaling" / f"m{units}k{ways}")
    workdir.mkdir(parents=True, exist_ok=True)
    exe = soc.build_soc(units=units, ways=ways)
    elf = elf or firmware.build_firmware()
    img, bufs = scale_image(tasks, group, use_units, poll, fw_check, bank_stagger(ddr), split)
    (workdir / "job.bin").write_bytes(img)
    for f in workdir.glob("*.bin"):
        if f.name != "job.bin":
            f.unlink()
    cmd = scaling_command(exe, elf, workdir / "job.bin", bufs, workdir, len(tasks), ddr, max_cycles)
    p = subprocess.run(cmd, capture_output=True, timeout=7200, check=False)
    r = soc.soc_result(p.returncode, p.stdout, p.stderr)
    res = collect(tasks, workdir, r.returncode, r.uart, r.stderr, job, bufs[0] if split else None)
    res["sim_seconds"], res["mcycles_per_s"], res["stderr"] = r.seconds, r.mcycles_per_s, r.stderr
    return res
