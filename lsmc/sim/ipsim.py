"""Drive the compaction IP in Verilator through the C++ harness hw/ip/compaction/dv/harness.cpp.

build(width) generates the Verilog (build.generate) and verilates the harness (build.verilate), both
cached by stamps. run_script() runs raw harness commands; run_jobs() batches many compaction jobs into
one harness process (one simulator start for a whole test), returning a JobResult per job.
The commands and the measurement window are documented in hw/ip/compaction/doc/compaction-sim.md.
"""
from __future__ import annotations

import functools
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lsmc import build as _build
from lsmc.build import presets, regmap
from lsmc.model import kb16

ROOT = _build.ROOT
HARNESS = ROOT / "hw" / "ip" / "compaction" / "dv" / "harness.cpp"
# The widths and K the IP is built with alone (its presets, hw/ip/compaction/rtl/CompactionConfig.scala).
WIDTHS = tuple(sorted({p["config"]["dataWidth"] for p in presets.ip_presets("compaction").values()}))
WAYS = tuple(sorted({p["config"]["ways"] for p in presets.ip_presets("compaction").values()}))

# Register offsets: the generated compaction_regs.json (lsmc.build.regmap), read on first use.
# Reset values and bits: the contract the RTL implements (docs/architecture.md), checked by the tests.
REGS = regmap.LazyOffsets("compaction")
ID_MAGIC = 0x4C534D43
IP_VERSION = 0x0100
NO_LIMIT = 0xFFFFFFFF


def _reset_values() -> dict:
    values = {name: 0 for name in REGS}
    values.update(ID=ID_MAGIC, GROUP=16, OUT_CAPACITY=NO_LIMIT, INV_CAPACITY=NO_LIMIT)
    del values["VERSION"]  # width-dependent: version_value(width)
    return values


RESET_VALUES = regmap.LazyMap(_reset_values, "compaction reset values")
RW_REGS = ("ENCODER_DATA_OUT_CNT", "INVALID_ADDR_OUT_CNT", "KEY0_ENTRY_IN_CNT", "KEY1_ENTRY_IN_CNT",
           "THROUGHPUT_COUNTER", "GROUP", "IRQ_ENABLE", "IN0_BYTES", "IN1_BYTES", "OUT_CAPACITY",
           "INV_CAPACITY")
CTRL_START, CTRL_SOFT_RESET = 1, 2
ST_BUSY, ST_DONE, ST_ERROR = 1, 2, 4
IRQ_DONE, IRQ_ERROR = 1, 2
STREAMS = ("key0", "key1", "out", "invalid", "ctrl")


def version_value(width: int) -> int:
    return width << 16 | IP_VERSION


class SimError(RuntimeError):
    """The harness could not run the script (bad command, unreadable file, bus hang)."""


def preset(width: int, ways: int = 2) -> presets.IpPreset:
    """The IP's standalone preset of `width` and `ways` (CompactionConfig.presets; ValueError if none)."""
    _check_width(width, ways)
    try:
        return presets.find_ip("compaction", dataWidth=width, ways=ways)
    except presets.PresetError as e:
        raise ValueError(str(e)) from None


def gen_dir(width: int, ways: int = 2) -> Path:
    return preset(width, ways).gen_dir


def _check_width(width: int, ways: int = 2) -> None:
    if width not in WIDTHS:
        raise ValueError(f"width {width!r} not one of {WIDTHS}")
    if ways not in WAYS:
        raise ValueError(f"ways {ways!r} not one of {WAYS}")


def generate(width: int = 128, ways: int = 2) -> Path:
    """Generate CompactionIp.v (and compaction_regs.h, manifest.json) for `width` and `ways` inputs; cached."""
    p = preset(width, ways)
    return _build.generate("compaction", "compaction.Generate", p.gen_dir,
                           ["--preset", p.name, "--out", str(p.gen_dir.relative_to(ROOT))])


def build(width: int = 128, wave: bool = False, ways: int = 2) -> Path:
    """Path of the harness executable for `width` and `ways` (FST waves only in a separate `_wave` build)."""
    out = generate(width, ways)
    verilog = sorted(out.glob("*.v"))
    if not any(v.name == "CompactionIp.v" for v in verilog):
        raise _build.BuildError(f"{out}/CompactionIp.v was not generated")
    simdir = _build.BUILD / "sim" / (out.name + ("_wave" if wave else ""))
    flags = ["--trace-fst", "-CFLAGS", "-DWAVES"] if wave else []
    # The harness's K (hw/ip/compaction/dv/harness.cpp `WAYS`, 2 unless defined): the build's own, from its manifest.
    k = presets.manifest(out)["config"]["ways"]
    if k != 2:
        flags += ["-CFLAGS", f"-DWAYS={k}"]
    common_srcs, common_flags = _build.sim_common(out / "compaction_regs.h")
    flags += ["-CFLAGS", f"-I{out}"]  # compaction_regs.h: the harness's register offsets
    return _build.verilate("CompactionIp", verilog, [HARNESS, *common_srcs], simdir, flags=flags + common_flags)


@dataclass
class ScriptResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def records(self, kind: str) -> list[dict]:
        """Parsed `kind key=value ...` lines (e.g. every `run` line) in order."""
        return [parse_fields(l) for l in self.lines if l.split(" ", 1)[0] == kind]

    def reads(self) -> list[int]:
        """Values of every `read` command in order."""
        return [int(l.split()[2], 16) for l in self.lines if l.startswith("read ")]


def parse_fields(line: str) -> dict:
    out = {}
    for tok in line.split()[1:]:
        if "=" in tok:
            k, v = tok.split("=", 1)
            try:
                out[k] = int(v, 0)
            except ValueError:
                out[k] = v
    return out


def run_script(script, width: int = 128, exe: Path | None = None, wave: str | None = None,
               timeout: float = 900, check: bool = True, ways: int = 2) -> ScriptResult:
    """Run harness commands (a string or list of lines). SimError if the harness rejects the script
    (exit 2) or `check` and an expectation/protocol check failed (exit 1)."""
    if exe is None:
        exe = build(width, wave=wave is not None, ways=ways)
    text = script if isinstance(script, str) else "\n".join(script) + "\n"
    cmd = [str(exe)] + (["--wave", str(wave)] if wave else []) + ["-"]
    try:
        res = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SimError(f"harness did not finish in {timeout} s") from None
    r = ScriptResult(res.returncode, res.stdout, res.stderr)
    if res.returncode == 2 or (check and res.returncode != 0):
        raise SimError(f"harness exit {res.returncode}: {res.stderr.strip()[-2000:]}\n{res.stdout[-2000:]}")
    return r


@dataclass
class Job:
    """One compaction job. Lengths default to the data lengths; `nolast*` drops the `last` flag.
    `more` holds runs 2..K-1 of a K-way IP (older than run1, newest first)."""
    run0: bytes
    run1: bytes
    group: int = kb16.GROUP_DEFAULT
    out_capacity: int = NO_LIMIT
    inv_capacity: int = NO_LIMIT
    stalls: dict = field(default_factory=dict)   # stream name -> stall probability (0 <= p < 1);
    # "every" on out/invalid: each beat is taken one clock after it is offered (a stall at every beat)
    seed: int = 1
    in0_bytes: int | None = None
    in1_bytes: int | None = None
    nolast0: bool = False
    nolast1: bool = False
    count_mode: int = 2
    limit: int | None = None                     # cycle limit of `run` (default from the size)
    more: tuple = ()                             # runs 2.. (K-way IP)

    @property
    def runs(self) -> list[bytes]:
        return [self.run0, self.run1, *self.more]


@dataclass
class JobResult:
    status: str            # done | error | stalled | timeout
    code: int
    input: int
    index: int
    hw_cycles: int         # HW_CYCLES register: first input beat .. done
    sim_cycles: int        # the harness's own count: first input beat .. last output beat
    out: bytes
    invalid: bytes
    out_keys: int
    last_ok: bool
    drained: bool
    violations: int
    after_error: int       # output beats that left after STATUS showed ERROR (must be 0)
    fields: dict

    @property
    def code_name(self) -> str:
        return kb16.ERROR_NAMES.get(self.code, f"CODE_{self.code}")

    @property
    def invalid_count(self) -> int:
        return len(self.invalid) // 4


def streams(ways: int = 2) -> tuple[str, ...]:
    """Stream names of a `ways`-input IP (for stalls)."""
    return tuple(f"key{k}" for k in range(ways)) + ("out", "invalid", "ctrl")


@functools.cache
def reg_offsets(width: int = 128, ways: int = 2) -> dict:
    """Register name -> offset of the IP with `ways` inputs, from its generated compaction_regs.json
    (K > 2 adds WAYS, IN<k>_BYTES and KEY<k>_ENTRY_IN_CNT after OUT_KEYS)."""
    if ways == 2:
        return dict(REGS)
    return regmap.load("compaction", str(generate(width, ways) / "compaction_regs.json")).offsets


def _stall_value(stream: str, value) -> str:
    if value == "every":
        if stream not in ("out", "invalid"):
            raise ValueError(f"stall 'every' is for the out/invalid streams, not {stream!r}")
        return "every"
    return repr(float(value))


def _job_lines(i: int, job: Job, tmp: Path, ways: int = 2, width: int = 128) -> list[str]:
    runs = job.runs
    if len(runs) > ways:
        raise ValueError(f"job {i} has {len(runs)} runs, the IP takes {ways}")
    runs += [b""] * (ways - len(runs))
    names = streams(ways)
    for name in job.stalls:
        if name not in names:
            raise ValueError(f"unknown stream {name!r} (one of {names})")
    lines = [f"echo job {i}", "recover", f"seed {job.seed}"]
    lines += [f"stall {s} {_stall_value(s, job.stalls.get(s, 0.0))}" for s in names]
    lens = [len(r) for r in runs]
    if job.in0_bytes is not None:
        lens[0] = job.in0_bytes
    if job.in1_bytes is not None:
        lens[1] = job.in1_bytes
    offs = reg_offsets(width, ways)
    lines += [f"write 0x24 {job.group}"] + [f"write {offs[f'IN{k}_BYTES']:#x} {n}" for k, n in enumerate(lens)]
    lines += [f"write 0x40 {job.out_capacity}", f"write 0x44 {job.inv_capacity}",
              f"write 0x10 {job.count_mode}"]
    nolast = [job.nolast0, job.nolast1] + [False] * (ways - 2)
    for k, data in enumerate(runs):
        if data:
            f = tmp / f"j{i}.in{k}"
            f.write_bytes(data)
            lines.append(f"load {k} {f}" + (" nolast" if nolast[k] else ""))
    words = sum(len(r) for r in runs) // 4 + 8
    limit = job.limit if job.limit is not None else 20000 + 64 * words
    lines += ["write 0x20 1", f"run {limit}", f"save out {tmp / f'j{i}.out'}",
              f"save invalid {tmp / f'j{i}.inv'}"]
    return lines


def run_jobs(jobs: list[Job], width: int = 128, exe: Path | None = None, wave: str | None = None,
             timeout: float = 1800, ways: int = 2) -> list[JobResult]:
    """Run jobs back to back in one harness process (a job after an error starts with a soft reset)."""
    with tempfile.TemporaryDirectory(prefix="ipsim-") as td:
        tmp = Path(td)
        lines = []
        for i, job in enumerate(jobs):
            lines += _job_lines(i, job, tmp, ways, width)
        res = run_script(lines, width=width, exe=exe, wave=wave, timeout=timeout, check=False, ways=ways)
        runs = res.records("run")
        if len(runs) != len(jobs):
            raise SimError(f"expected {len(jobs)} run results, got {len(runs)}: {res.stderr.strip()}")
        out = []
        for i, f in enumerate(runs):
            out.append(JobResult(
                status=f["status"], code=f["code"], input=f["input"], index=f["index"],
                hw_cycles=f["hw_cycles"], sim_cycles=f["sim_cycles"],
                out=(tmp / f"j{i}.out").read_bytes(), invalid=(tmp / f"j{i}.inv").read_bytes(),
                out_keys=f["out_keys"], last_ok=bool(f["last_ok"]), drained=bool(f["drained"]),
                violations=f["violations"], after_error=f["after_error"], fields=f))
        return out


def compact(run0: bytes, run1: bytes, group: int = kb16.GROUP_DEFAULT, width: int = 128,
            exe: Path | None = None, wave: str | None = None, **kw) -> JobResult:
    """One job (other keyword arguments as Job's)."""
    return run_jobs([Job(run0, run1, group, **kw)], width=width, exe=exe, wave=wave)[0]


class CascadeError(RuntimeError):
    """A step of a cascading compaction did not finish (IP error or simulator failure)."""

    def __init__(self, step: int, runs: list[int], result: JobResult):
        self.step, self.runs, self.result = step, runs, result
        super().__init__(f"step {step} (input runs {runs}): {result.status} {result.code_name} "
                         f"at input {result.input} entry {result.index}")


def cascade(runs: list[bytes], group: int = kb16.GROUP_DEFAULT, width: int = 128, ways: int = 2,
            **job_kw) -> tuple[bytes, bytes, list[tuple[int, int]], list[JobResult]]:
    """Merge any number of runs (newest first) on a `ways`-input IP: cascading compaction
    (kb16.cascade_plan: temporary runs first, then the final merge), one IP job per step.
    Returns (merged run, invalid addresses of all steps in step order, plan, one JobResult per step).
    CascadeError names the step and the original runs it read when a job fails: a malformed run
    surfaces at the first step that reads it."""
    origin = [[i] for i in range(len(runs))]   # original runs behind each current run
    results: list[JobResult] = []

    def merge(rs: list[bytes]) -> tuple[bytes, bytes]:
        step = len(results)
        # which current runs this step reads: the plan's window, or all for the final merge
        window = plan[step] if step < len(plan) else (0, len(origin))
        members = origin[window[0]:window[0] + window[1]]
        padded = list(rs) + [b""] * (2 - len(rs))
        r = run_jobs([Job(padded[0], padded[1], group, more=tuple(padded[2:]), **job_kw)],
                     width=width, ways=ways)[0]
        results.append(r)
        if r.status != "done":
            err_runs = members[r.input] if r.status == "error" and r.input < len(members) else sum(members, [])
            raise CascadeError(step, err_runs, r)
        origin[window[0]:window[0] + window[1]] = [sum(members, [])]
        return r.out, r.invalid

    plan = kb16.cascade_plan([len(r) for r in runs], ways)
    out, inv, _ = kb16.cascade_merge(list(runs), group, ways, merge)
    return out, inv, plan, results


def encoded_runs(kind: str, keys: int, overlap: float, seed: int, group: int) -> tuple[bytes, bytes]:
    """Workload of lsmc.workloads encoded with the model."""
    from lsmc.model import workloads
    k0, k1 = workloads.make_runs(kind, keys, overlap, seed)
    return kb16.encode(k0, group), kb16.encode(k1, group)


def model_merge(job: Job) -> tuple[bytes, bytes]:
    return kb16.merge_runs(job.runs, job.group)


def model_problems(job: Job, r: JobResult) -> list[str]:
    """Every way result `r` of a valid job differs from the model (empty list: correct)."""
    want_out, want_inv = model_merge(job)
    p = []
    if r.status != "done":
        p.append(f"status {r.status} ({r.code_name} input {r.input} index {r.index})")
    if r.out != want_out:
        n = min(len(r.out), len(want_out))
        first = next((i for i in range(n) if r.out[i] != want_out[i]), n)
        p.append(f"out differs at byte {first} (entry {first // 16}): got {len(r.out)} bytes, want {len(want_out)}")
    if r.invalid != want_inv:
        p.append(f"invalid differs: got {r.invalid_count} addresses, want {len(want_inv) // 4}")
    if not r.last_ok:
        p.append("`last` not (only) on the final beat")
    if r.violations:
        p.append(f"{r.violations} protocol violations")
    keys = len(kb16.decode(want_out, job.group))
    if r.out_keys != keys:
        p.append(f"OUT_KEYS {r.out_keys}, want {keys}")
    return p


def header_defines(width: int = 128) -> dict:
    """#define NAME VALUE pairs of the generated compaction_regs.h (numeric values only)."""
    out = {}
    for line in (gen_dir(width) / "compaction_regs.h").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "#define":
            v = parts[2].strip("()").rstrip("uUlL")
            try:
                out[parts[1]] = int(v, 0)
            except ValueError:
                pass
    return out


__all__ = ["build", "generate", "run_script", "run_jobs", "compact", "cascade", "CascadeError", "Job", "JobResult",
           "SimError",
           "REGS", "RESET_VALUES", "RW_REGS", "encoded_runs", "model_merge", "version_value"]
