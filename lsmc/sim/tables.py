"""The table engine's jobs and back ends, for `lsmc tables` and the table-engine report: job folders made
from generated workloads by LevelDB's own TableBuilder (the reference compactor), one job run on a back end
(reference, model, rtl), and output folders compared (hw/ip/table_engine/doc/table-engine.md)."""
from __future__ import annotations

import importlib
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

from lsmc.cliutil import CliError
from lsmc.model import sstable
from lsmc.model.table_workloads import Workload, generate

BACKENDS = ("reference", "model", "rtl", "soc")
# Named workloads of `make` (each a Workload; the flags below adjust them).
WORKLOADS = {
    "dbbench": dict(keys="dbbench", values="dbbench", runs=4, entries=20000),
    "key64": dict(keys="key64", values="dbbench", runs=4, entries=10000),
    "random": dict(keys="random", values="random", runs=4, entries=200, deletions=0.2),
    "snapshots": dict(keys="dbbench", values="dbbench", runs=4, entries=2000, snapshot=True, deletions=0.3),
    "non-base": dict(keys="dbbench", values="dbbench", runs=2, entries=2000, base_level=False, deletions=0.3,
                     input_level=1),
    "one-entry": dict(keys="dbbench", values="dbbench", runs=2, entries=50, entries_per_table=1, input_level=1),
    "grandparents": dict(keys="dbbench", values="dbbench", runs=2, entries=4000, input_level=1,
                         grandparent_bytes=400_000, options={"max_file_size": 16384}),
    # LevelDB's issue320_test's entries (1 KiB keys and values): index blocks past the writer's index buffer.
    "key1k": dict(keys="key1k", values="noise", value_bytes=1024, runs=2, entries=1500, input_level=1),
    # Level-0 heavy: 8 Level-0 tables and the Level-1 run under them (more runs than the rtl back end's ways).
    "level0": dict(keys="dbbench", values="dbbench", runs=9, entries=2000, deletions=0.2),
}
NO_SNAPSHOT = sstable.MAX_SEQUENCE - 1  # every sequence at or below it: as a DB with no live snapshot


# ---------------------------------------------------------------------------------------- back ends
def reference_exe() -> Path:
    from lsmc.build import BuildError
    from lsmc.build.table_ref import build_table_ref

    try:
        return build_table_ref()
    except BuildError as e:
        raise CliError(f"building the reference compactor failed: {str(e).splitlines()[0]}") from None


def model_exe() -> Path:
    """The engine's C++ model (hw/ip/table_engine/model/, built by lsmc.build.table_model)."""
    try:
        mod = importlib.import_module("lsmc.build.table_model")
    except ModuleNotFoundError:
        raise CliError("the model back end is not built: the engine's C++ model (hw/ip/table_engine/model/, "
                       "lsmc.build.table_model) is not in this checkout yet") from None
    from lsmc.build import BuildError

    try:
        return Path(mod.build_table_model())
    except BuildError as e:
        raise CliError(f"building the engine's C++ model failed: {str(e).splitlines()[0]}") from None


RTL_WIDTH, RTL_WAYS = 16, 4  # the rtl back end's build: 16 bytes a beat, 4 runs merged a pass (more cascade)


def rtl_exe() -> Path:
    """The whole engine in Verilator (hw/ip/table_engine/rtl/TableEngine.scala, lsmc.build.table_engine_top): the
    SoC's unit, its merge stage presets.te_merge_bytes() wide."""
    from lsmc.build import BuildError, presets, table_engine_top

    try:
        return table_engine_top.build_harness(RTL_WIDTH, RTL_WAYS, presets.te_merge_bytes())
    except BuildError as e:
        raise CliError(f"building the table engine's RTL failed: {str(e).splitlines()[0]}") from None


SOC_PRESET = "tables-m1"  # the SoC with one 4-way table-engine unit (hw/soc/rtl/Presets.scala)
SOC_PARTS_PRESETS = ("tables-m1", "tables-m2", "tables-m4")  # 1, 2, 4 units: --parts P takes the first with P


def te_units(preset: str) -> int:
    """How many table-engine units the SoC preset `preset` has."""
    from lsmc.build import presets

    return presets.soc(preset).derived["te_units"]


def soc_preset_for(parts: int | None) -> str:
    """The SoC preset a job in `parts` sub-compactions runs on: the smallest with that many table-engine units."""
    for name in SOC_PARTS_PRESETS:
        if te_units(name) >= (parts or 1):
            return name
    raise CliError(f"--parts {parts}: the SoC presets have at most {te_units(SOC_PARTS_PRESETS[-1])} "
                   "table-engine units")


def soc_exe(preset: str = SOC_PRESET) -> Path:
    """The SoC with table-engine units (preset `preset`) in Verilator; its job runs through soc_job (the unit's
    harness lays the job out and reads the tables back)."""
    from lsmc.build import BuildError, table_engine_unit
    from lsmc.sim import soc

    try:
        table_engine_unit.build_harness(4)
        return soc.build_soc(preset=preset)
    except BuildError as e:
        raise CliError(f"building the SoC with a table-engine unit failed: {str(e).splitlines()[0]}") from None


def backend_exe(backend: str) -> Path:
    if backend == "reference":
        return reference_exe()
    if backend == "model":
        return model_exe()
    if backend == "rtl":
        return rtl_exe()
    if backend == "soc":
        return soc_exe()
    raise CliError(f"unknown back end {backend}: use --backend {', '.join(BACKENDS)}")


_SOC_DONE = re.compile(r"tables: done cycles=(\d+) engine_cycles=(\d+) fw_cycles=(\d+) entries_in=(\d+) "
                       r"entries_out=(\d+) dropped=(\d+) tables_out=(\d+) bytes_out=(\d+)")
_SOC_ERROR = re.compile(r"tables: error=(\w+) unit=(\w+) run=(\d+) table=(\d+) offset=(\d+) entry=(\d+)")
_SOC_PARTS = re.compile(r"tables: parts=(\d+) units=(\d+) plan_cycles=(\d+) dispatch_wait_cycles=(\d+) "
                        r"collect_cycles=(\d+) job_cycles=(\d+)")
_SOC_PART = re.compile(r"tables: part=(\d+) lo=(\w+) hi=(\w+) unit=(-?\d+) tables_out=(\d+) entries_in=(\d+) "
                       r"entries_out=(\d+) dropped=(\d+) bytes_out=(\d+) cycles=(\d+) engine_cycles=(\d+)")


def soc_parts_json(uart: str) -> list[dict]:
    """The firmware's per-part lines as result.json's "parts" (the model's keys: bounds, first output table, counts,
    and the unit's CYCLES as the part's cycles)."""
    parts, first = [], 0
    for m in _SOC_PART.finditer(uart):
        parts.append({"lo": None if m[2] == "null" else m[2], "hi": None if m[3] == "null" else m[3],
                      "first_table": first, "tables_out": int(m[5]), "entries_in": int(m[6]),
                      "entries_out": int(m[7]), "cycles": int(m[10])})
        first += int(m[5])
    return parts


PLANS = ("firmware", "host")  # soc_job's `plan`: who plans a job's sub-compaction parts


def soc_job(job_path: Path, out_dir: Path, timeout: float = 1800, ddr: str | None = None, parts: int | None = None,
            preset: str | None = None, plan: str = "firmware") -> tuple[int, str, str]:
    """One job on the full SoC (preset tables-m1): the unit's harness lays the job out as a DDR image (descriptor at
    DDR_HOST_BASE), the SoC runs tables.elf (SIM_ARG TABLES JOB: the firmware's driver, GO, interrupt, status), the
    host dumps the image's memory and the harness writes the output folder from the unit's records. As run_job:
    (exit status, the last stdout line, stderr); the line before the last names the SoC's clocks (`soc cycles=...`:
    the firmware's bracket from GO to the status read, the unit's CYCLES and ENGINE_CYCLES). `ddr`: the harness's DDR
    timing model (`--ddr`: fixed, the default, or a preset such as kcu105). On success stderr is the SoC harness's
    (with a DDR model its per-port lines: lsmc.sim.soc.ddr_port_words); on failure the reason.

    `parts`: tables.elf's PARTS scenario instead (preset: the smallest of SOC_PARTS_PRESETS with that many units,
    or `preset`): the firmware plans the job into P parts from the tables' index blocks in DDR, runs one a unit side
    by side and gathers their records; the first line is then `soc job_cycles=W bracket=B ... parts=P` (W the whole
    job from the plan's start to the last record gathered, B the longest unit's CYCLES) and, for P > 1,
    result.json gets the model's "parts" list (`table_model --parts P`).

    `plan` "host" (P >= 2): the host plans instead (the unit harness's --parts: the model's PlanSubcompactions, a
    descriptor a part, a PARTS_HEAD; tables.elf SIM_ARG PARTS_HOST checks the head and runs the parts), so
    `plan_cycles` is the firmware's checks of the head; the line adds `plan=host plan_host_us=U`, the plan's time on
    this host's CPU (fw/lib/te_plan.c built -O2, whose choices are the model's, the mean over repeats)."""
    import tempfile

    from lsmc.build import BuildError, facts, firmware, regmap, table_engine_unit
    from lsmc.sim import soc

    if plan not in PLANS:
        raise CliError(f"--plan {plan}: use {' or '.join(PLANS)}")
    host_plan = plan == "host" and (parts or 1) >= 2
    if parts is not None or preset is not None:
        preset = preset or soc_preset_for(parts)
    if (parts or 1) == 1:
        try:
            spec = sstable.read_job(job_path)
        except sstable.JobFormatError as e:
            return 1, "", f"error=BAD_JOB table={job_path} offset=0 {e}"
        ways = presets_te_ways(preset or SOC_PRESET)
        if len(spec.runs) > ways:
            return soc_cascade(job_path, spec, out_dir, ways, timeout, ddr, preset)
    exe = soc_exe(preset or SOC_PRESET)
    try:
        harness = table_engine_unit.build_harness(4)
        elf = firmware.build_firmware().parent / "tables.elf"
    except (BuildError, firmware.FirmwareError) as e:
        raise CliError(f"building the table engine's firmware failed: {str(e).splitlines()[0]}") from None
    base = regmap.memmap().base("DDR_HOST")
    with tempfile.TemporaryDirectory(prefix="lsmc-tables-soc-") as tmp:
        img, dump = Path(tmp) / "image.bin", Path(tmp) / "dump.bin"
        by_host = ["--parts", str(parts)] if host_plan else []
        r = subprocess.run([str(harness), str(job_path), str(out_dir), "--base", str(base), "--image", str(img),
                            *by_host], capture_output=True, text=True)
        if r.returncode != 0:
            return r.returncode, "", r.stderr.strip()
        info = dict(kv.split("=") for kv in r.stdout.split())
        end, mem_end = int(info["end"]), int(info["mem_end"])  # the dump's end; the index spill region's
        if mem_end - base > regmap.memmap().size("DDR_HOST"):
            # refused=limits: a capacity of this SoC, not a fault (LevelDB's hook counts it as soc-limits)
            return 1, "", f"error=BAD_JOB table={job_path} offset=0 refused=limits the job needs " \
                          f"{mem_end - base} bytes of DDR, the host's region has {regmap.memmap().size('DDR_HOST')}"
        if host_plan:
            arg = facts.scenarios("tables")["PARTS_HOST"]
        elif parts is None:
            arg = facts.scenarios("tables")["JOB"]
        else:
            arg = facts.scenarios("tables")["PARTS"] | parts << facts.constant("TABLES_PARTS_SHIFT")
        run = soc.run_soc(elf, arg=arg, loads={base: img},
                          dumps=[(base, end - base, dump)], exe=exe, timeout=timeout,
                          extra=["--ddr", ddr] if ddr else ())
        done = _SOC_DONE.search(run.uart)
        if not done:
            err = _SOC_ERROR.search(run.uart)
            if err:
                return 1, "", f"error={err[1]} table={job_path} offset={err[5]} the SoC's table-engine unit " \
                              f"stopped the job ({err[2].lower()}, run {err[3]}, table {err[4]}, entry {err[6]})"
            tail = " / ".join(run.uart.strip().splitlines()[-2:])
            return 1, "", f"error=BAD_JOB table={job_path} offset=0 the SoC ended without the job's status " \
                          f"(exit {run.returncode}): {tail}"
        cyc, eng, fw, n_in, n_out, dropped, n_tables, n_bytes = done.groups()
        c = subprocess.run([str(harness), str(job_path), str(out_dir), "--base", str(base), "--collect", str(dump),
                            "--counts", ",".join([n_in, n_out, dropped, n_tables, n_bytes, cyc, eng]), *by_host],
                           capture_output=True, text=True)
        if c.returncode != 0:
            return c.returncode, "", c.stderr.strip()
        line = c.stdout.strip().splitlines()[-1]
        speed = f" soc_cycles={run.cycles} soc_mcycles_per_s={run.mcycles_per_s:.2f}" \
            if run.cycles and run.mcycles_per_s else ""
        if parts is None:
            return 0, f"soc job_cycles={fw} cycles={cyc} engine_cycles={eng}{speed}\n{line}", run.stderr.strip()
        by_host_line = ""
        if host_plan:  # what the plan costs the host: fw/lib/te_plan.c (the same choices) on this machine's CPU
            from lsmc.sim import te_plan
            ns = te_plan.host_ns(te_plan.image(te_plan.job_index_blocks(job_path), parts), Path(tmp))
            by_host_line = f" plan=host plan_host_us={ns / 1000:.1f}"
        head = _SOC_PARTS.search(run.uart)
        if not head:
            return 1, "", f"error=BAD_JOB table={job_path} offset=0 the SoC gave no parts line"
        if parts > 1:
            result = json.loads((out_dir / "result.json").read_text())
            result["parts"] = soc_parts_json(run.uart)
            (out_dir / "result.json").write_text(json.dumps(result, indent=2) + "\n")
        return 0, (f"soc job_cycles={fw} bracket={cyc} engine_cycles={eng} plan_cycles={head[3]} "
                   f"dispatch_wait_cycles={head[4]} collect_cycles={head[5]} parts={head[1]} units={head[2]} "
                   f"preset={preset} ddr={ddr or 'fixed'}{by_host_line}{speed}\n{line}"), run.stderr.strip()


def presets_te_ways(preset: str) -> int:
    """Runs a table-engine unit of the SoC preset `preset` merges in one pass."""
    from lsmc.build import presets
    return presets.soc(preset).derived["te_ways"]


def cascade_plan(runs: int, ways: int) -> list[list[int]]:
    """The model's CascadePlan (hw/ip/table_engine/model/cycle_model.h), step for step: each pass merges the list's
    first inputs, `ways` of them or just enough to leave `ways`, into a temporary run that joins the list's end
    (temporary run t as -1 - t); the last entry is the final pass."""
    todo, plan = list(range(runs)), []
    while len(todo) > ways:
        m = min(ways, len(todo) - ways + 1)
        plan.append(todo[:m])
        todo = todo[m:] + [-len(plan)]
    return plan + [todo]


WRITER_INDEX_BYTES = 1 << 16  # an output table's index block: rtl/TableWriter.scala's indexBytes, as in the testbench


def _pass_deeper() -> list:
    """A cascade pass's deeper level: one file over every user key up to the engine's limit, so that no key is at its
    base level and every deletion marker is kept. With smallest_snapshot 0 (LevelDB's sequences start at 1) a pass
    drops nothing."""
    from lsmc.build import table_model
    return [[{"smallest": "", "largest": "ff" * table_model.limits()["max_user_key_bytes"]}]]


def soc_cascade(job_path: Path, spec, out_dir: Path, ways: int, timeout: float, ddr: str | None,
                preset: str | None) -> tuple[int, str, str]:
    """A job of more runs than the SoC's unit merges, as the RTL's testbench cascades it (table_engine_top.md,
    "Cascades"): each pass a job of its own on the SoC into temporary tables (the host keeps them between
    passes), then the job itself on the last inputs. The result line's cycles are the passes' sum."""
    import tempfile

    base = Path(job_path).parent
    opts = spec.options
    block = opts.get("block_size", 4096)
    # Each temporary table's index within the writer's index buffer for the longest internal key (+ 28 bytes of
    # varints, handle and restart offset an index entry), as the testbench sizes its passes (for its scanned key).
    from lsmc.build import table_engine_top, table_model
    longest = table_model.limits()["max_user_key_bytes"] + 8
    blocks = min(table_engine_top.MAX_BLOCKS, (WRITER_INDEX_BYTES - 64) // (longest + 28))
    pass_file = max(1, (blocks - 2) * block)
    pass_opts = {**opts, "compression": "none", "bloom_bits_per_key": 0, "max_file_size": pass_file}
    plan = cascade_plan(len(spec.runs), ways)
    total = 0
    with tempfile.TemporaryDirectory(prefix="lsmc-soc-cascade-") as tmp:
        temps: list[list[Path]] = []

        def tables_of(i: int) -> list[Path]:
            return [base / t for t in spec.runs[i]] if i >= 0 else temps[-1 - i]

        def job_for(folder: Path, inputs: list[int], job) -> Path:
            (folder / "in").mkdir(parents=True)
            runs = []
            for i in inputs:
                names = []
                for t in tables_of(i):
                    name = f"in/{len(list((folder / 'in').iterdir())):06d}_{t.name}"
                    shutil.copyfile(t, folder / name)
                    names.append(name)
                runs.append(names)
            job.runs = runs
            sstable.write_job(job, folder / "job.json")
            return folder / "job.json"

        for j, inputs in enumerate(plan):
            final = j == len(plan) - 1
            folder = Path(tmp) / f"pass{j}"
            job = sstable.Job(runs=[], options=opts if final else pass_opts,
                              smallest_snapshot=spec.smallest_snapshot if final else 0,
                              grandparents=spec.grandparents if final else [],
                              deeper_levels=spec.deeper_levels if final else _pass_deeper(),
                              first_file_number=spec.first_file_number if final else 1)
            path = job_for(folder, inputs, job)
            out = out_dir if final else folder / "out"
            rc, line, err = soc_job(path, out, timeout, ddr, None, preset)
            if rc != 0:
                return rc, "", err.replace(str(path), f"{job_path} (cascade pass {j + 1} of {len(plan)})")
            total += int(re.search(r"\bcycles=(\d+)", line.splitlines()[-1])[1])
            if not final:
                temps.append([out / t["file"] for t in sstable.read_result(out / "result.json")["tables"]])
    # The final pass read the temporary tables: the job's input is its own tables (the passes drop nothing, so
    # the entry counts are the job's already).
    bytes_in = sum((base / t).stat().st_size for run in spec.runs for t in run)
    result = json.loads((out_dir / "result.json").read_text())
    result["bytes_in"] = bytes_in
    (out_dir / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    head, last = line.splitlines()
    last = re.sub(r"\bcycles=\d+", f"cycles={total}", last, count=1)
    last = re.sub(r"\bbytes_in=\d+", f"bytes_in={bytes_in}", last, count=1)
    return 0, f"{head} passes={len(plan)}\n{last}", err


def run_job(exe: Path, job_path: Path, out_dir: Path, parts: int | None = None) -> tuple[int, str, str]:
    """Run one job (in `parts` sub-compactions when given: model and rtl); (exit status, last stdout line, stderr)."""
    if exe.name == "VLsmcSoc":
        return soc_job(job_path, out_dir, parts=parts)
    cmd = [str(exe), str(job_path), str(out_dir)] if exe.name != "table_ref" else \
        [str(exe), "compact", str(job_path), str(out_dir)]
    if exe.name == "table_model":  # the cycle estimate of the SoC's unit
        from lsmc.build import presets
        cmd += ["--merge-bytes", str(presets.te_merge_bytes())]
    res = subprocess.run(cmd + (["--parts", str(parts)] if parts else []), capture_output=True, text=True)
    lines = res.stdout.strip().splitlines()
    return res.returncode, lines[-1] if lines else "", res.stderr.strip()


# ----------------------------------------------------------------------------------------------- make
def make_table(exe: Path, path: Path, entries, options: dict) -> None:
    res = subprocess.run([str(exe), "make-table", str(path), "--options", json.dumps(options)],
                         input=sstable.entry_stream(entries), capture_output=True)
    if res.returncode != 0:
        raise CliError(f"make-table {path}: {res.stderr.decode(errors='replace').strip()}")


def make_job(folder: Path, w: Workload, exe: Path | None = None) -> sstable.Job:
    """Write a job folder for workload `w`: in/NNNNNN.ldb (LevelDB's TableBuilder), job.json and
    layout.json (the same tables at their levels, for `table_ref make-db` and stock LevelDB). The deeper
    levels' files are real tables too (deep/), holding their range's two end keys at sequence 0, the
    first grandparents padded so that their sizes add up to the workload's grandparent_bytes; the job's
    grandparents carry their real sizes."""
    exe = exe or reference_exe()
    data = generate(w)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "in").mkdir(exist_ok=True)
    number = 1000
    runs: list[list[str]] = []
    for run in data.runs:
        names = []
        for t in run:
            name = f"in/{sstable.table_name(number)}"
            make_table(exe, folder / name, t.entries, data.options)
            names.append(name)
            number += 1
        runs.append(names)
    output_level = w.input_level + 1
    deeper_levels = data.deeper_levels[:sstable.NUM_LEVELS - 1 - output_level]
    deeper_tables: list[list[str]] = []
    grandparents: list[dict] = []
    pad_rng = random.Random(w.seed)
    for li, files in enumerate(deeper_levels):
        names = []
        pad = w.grandparent_bytes // max(1, len(files)) if li == 0 else 0
        for f in files:
            lo, hi = bytes.fromhex(f["smallest"]), bytes.fromhex(f["largest"])
            ents = [(sstable.internal_key(lo, 0), pad_rng.randbytes(pad))]
            if hi != lo:
                ents.append((sstable.internal_key(hi, 0), b""))
            name = f"deep/{sstable.table_name(number)}"
            (folder / "deep").mkdir(exist_ok=True)
            make_table(exe, folder / name, ents, data.options)
            names.append(name)
            number += 1
            if li == 0:
                grandparents.append({"largest": sstable.internal_key(hi, 0).hex(),
                                     "size": (folder / name).stat().st_size})
        deeper_tables.append(names)
    # Grandparents are the next level's files that overlap the compaction's user-key range.
    users = [e[0][:-8] for run in data.runs for t in run for e in (t.entries[0], t.entries[-1])]
    lo_user, hi_user = min(users), max(users)
    grandparents = [g for g, f in zip(grandparents, deeper_levels[0] if deeper_levels else [])
                    if not (bytes.fromhex(f["largest"]) < lo_user or bytes.fromhex(f["smallest"]) > hi_user)]
    job = sstable.Job(runs=runs, options=data.options, smallest_snapshot=data.smallest_snapshot,
                      grandparents=grandparents, deeper_levels=deeper_levels, first_file_number=number)
    sstable.write_job(job, folder / "job.json")
    # The same tables at their levels for stock LevelDB: Level-0 tables oldest first (make-db numbers
    # them in order, and a DB's newer Level-0 files have higher numbers).
    levels: list[list[str]] = [[] for _ in range(sstable.NUM_LEVELS)]
    if w.input_level == 0:
        levels[0] = [t for r in reversed(runs[:-1]) for t in r]
        levels[1] = runs[-1]
    else:
        levels[w.input_level], levels[w.input_level + 1] = runs[0], runs[1]
    for li, names in enumerate(deeper_tables):
        levels[output_level + 1 + li] = names
    (folder / "layout.json").write_text(json.dumps({"levels": levels, "last_sequence": data.smallest_snapshot},
                                                   indent=1) + "\n")
    return job


# -------------------------------------------------------------------------------------------- compare
def dump_entries(exe: Path, table: Path) -> list[str]:
    res = subprocess.run([str(exe), "dump", str(table)], capture_output=True, text=True)
    if res.returncode != 0:
        raise CliError(f"{table}: {res.stderr.strip()}")
    return [ln for ln in res.stdout.splitlines() if ln.startswith("entry ")]


def _counted(result: dict) -> dict:
    """result.json without what one back end estimates and another measures or lacks: a sub-compaction's plan and
    cycles, and per part its planned bytes and cycles (the model's are estimates, the RTL's clocks)."""
    r = {k: v for k, v in result.items() if k not in ("plan", "cycles")}
    if "parts" in r:
        r["parts"] = [{k: v for k, v in p.items() if k not in ("bytes", "cycles")} for p in r["parts"]]
    return r


def compare_dirs(a: Path, b: Path, decoded: bool = False, exe: Path | None = None) -> tuple[bool, str]:
    """(same, one-line verdict) of two output folders."""
    try:
        ra, rb = sstable.read_result(a / "result.json"), sstable.read_result(b / "result.json")
    except sstable.JobFormatError as e:
        return False, f"DIFFERENT: {e}"
    ta, tb = [t["file"] for t in ra["tables"]], [t["file"] for t in rb["tables"]]
    if len(ta) != len(tb):
        return False, f"DIFFERENT: {len(ta)} tables in {a}, {len(tb)} in {b}"
    keys = ("entries", "smallest", "largest") if decoded else ("number", "size", "entries", "smallest", "largest")
    for i, (x, y) in enumerate(zip(ra["tables"], rb["tables"])):
        for k in keys:
            if x[k] != y[k]:
                return False, f"DIFFERENT: table {i} ({x['file']} / {y['file']}) {k} {x[k]} != {y[k]}"
    for k in ("entries_in", "entries_out", "dropped", "bytes_in") + (() if decoded else ("bytes_out",)):
        if ra[k] != rb[k]:
            return False, f"DIFFERENT: result.json {k} {ra[k]} != {rb[k]}"
    if decoded:
        exe = exe or reference_exe()
        for x, y in zip(ta, tb):
            ea, eb = dump_entries(exe, a / x), dump_entries(exe, b / y)
            if ea != eb:
                n = next((i for i, (p, q) in enumerate(zip(ea, eb)) if p != q), min(len(ea), len(eb)))
                return False, f"DIFFERENT: {x} / {y}: entry {n} differs ({len(ea)} / {len(eb)} entries)"
        total = sum(t["entries"] for t in ra["tables"])
        return True, f"SAME (decoded): {len(ta)} tables, {total} entries, same file boundaries"
    size = 0
    for x, y in zip(ta, tb):
        da, db = (a / x).read_bytes(), (b / y).read_bytes()
        if da != db:
            n = next((i for i, (p, q) in enumerate(zip(da, db)) if p != q), min(len(da), len(db)))
            return False, f"DIFFERENT: {x} / {y} differ at byte {n} ({len(da)} / {len(db)} bytes)"
        size += len(da)
    ja, jb = ((d / "result.json").read_bytes() for d in (a, b))
    if ja != jb and _counted(json.loads(ja)) != _counted(json.loads(jb)):
        return False, "DIFFERENT: result.json"
    return True, f"SAME: {len(ta)} tables, {size} bytes, byte-identical"
