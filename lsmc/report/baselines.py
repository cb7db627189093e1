"""CPU baselines of the compaction job: LevelDB 1.23's own compaction and the firmware's KB16 merge
compiled for the host. Both run on exactly the keys and addresses of a workload (the runs the IP
merges), and both are checked against the reference merge of lsmc/model/kb16.py, so a fast but
wrong baseline can never enter the report. What is timed and why: docs/baselines.md."""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lsmc.model import kb16
from lsmc.paths import ROOT

SRC = ROOT / "baselines"
BUILD = ROOT / "build" / "baselines"
TIMEOUT = 1800  # seconds; a baseline past this is reported as an error, never waited for forever


class BaselineError(RuntimeError):
    pass


def _make(target: str) -> None:
    from lsmc import build
    from lsmc.build import facts

    with build.lock(BUILD / ".lock"):  # one make at a time in build/baselines
        res = subprocess.run(["make", "-s", "-C", str(SRC), f"BUILD={BUILD}", f"FACTS={facts.include_dir()}", target],
                             capture_output=True, text=True)
    if res.returncode != 0:
        raise BaselineError(f"building {target} failed:\n{(res.stdout + res.stderr)[-4000:]}")


def build_leveldb() -> Path:
    """Compile baselines/leveldb_compact.cc against Debian's libleveldb-dev (make skips it when fresh)."""
    if not Path("/usr/include/leveldb/db.h").exists():
        raise BaselineError("LevelDB headers missing: apt-get install libleveldb-dev (scripts/setup does)")
    _make("leveldb")
    return BUILD / "leveldb_compact"


def build_host_merge() -> Path:
    """Compile the firmware's portable merge (fw/lib/kb16.c) natively with gcc -O2 and our driver."""
    if not (ROOT / "fw" / "lib" / "kb16.c").exists():
        raise BaselineError("fw/lib/kb16.c is missing: the host C merge baseline needs the firmware's merge")
    _make("host-merge")
    return BUILD / "host_merge"


def leveldb_package_version() -> str:
    """Debian's package version of the LevelDB library the program links (e.g. '1.23-4')."""
    try:
        res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libleveldb-dev"],
                             capture_output=True, text=True, timeout=30)
        return res.stdout.strip() if res.returncode == 0 else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def memory_db_dir() -> Path | None:
    """A folder on a RAM file system (tmpfs: writes land in memory, fsync returns at once), or None."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm / "lsmc-baselines"
    return None


# ---- key lists: one "<hex key> <address>" per line (the format of `kb16 encode` / `kb16 decode --keys`)

def write_keys(path: Path, keys) -> None:
    Path(path).write_text("".join(f"{k.hex()} {a}\n" for k, a in keys))


def read_keys(path: Path) -> list[tuple[bytes, int]]:
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError("expected '<hex key> <address>'")
            out.append((bytes.fromhex(parts[0]), int(parts[1], 0)))
        except ValueError as e:
            raise BaselineError(f"{path}: line {n}: {e}") from None
    return out


def _stats(values: list[float]) -> tuple[float, float]:
    vals = [v for v in values if v == v]  # drop NaN
    if not vals:
        return float("nan"), float("nan")
    return min(vals), statistics.median(vals)


# ---- LevelDB ----------------------------------------------------------------------------------------

@dataclass
class LevelDbResult:
    version: str                 # as the library reports itself (kMajorVersion.kMinorVersion)
    keys_in: int
    reps: int
    core_us: list[float]         # per repetition: "Compacting" .. "compacted to" (the compaction)
    total_us: list[float]        # per repetition: the CompactRange(nullptr, nullptr) call
    automatic: int               # repetitions where LevelDB started the compaction by itself
    compaction: str              # LevelDB's description, e.g. "Compacting 1@1 + 1@2 files"
    merged: list[tuple[bytes, int]] = field(default_factory=list, repr=False)

    @property
    def core_min(self) -> float: return _stats(self.core_us)[0]
    @property
    def core_median(self) -> float: return _stats(self.core_us)[1]
    @property
    def total_min(self) -> float: return _stats(self.total_us)[0]
    @property
    def total_median(self) -> float: return _stats(self.total_us)[1]


_REP = re.compile(r'^rep=(\d+) core_us=(\S+) total_us=(\S+) automatic=([01]) compaction="([^"]*)"$')
_VERSION = re.compile(r"^leveldb version=(\S+) ")


def parse_leveldb_output(text: str) -> LevelDbResult:
    """Parse the stdout of leveldb_compact (one `rep=` line per repetition, then `result`)."""
    version, reps, compaction, keys_in = None, [], "", None
    for line in text.splitlines():
        if m := _VERSION.match(line):
            version = m.group(1)
        elif m := _REP.match(line):
            reps.append((float(m.group(2)), float(m.group(3)), int(m.group(4))))
            compaction = m.group(5)
        elif line.startswith("result "):
            fields = dict(f.split("=", 1) for f in line.split()[1:])
            keys_in = int(fields["keys_in"])
    if version is None or not reps or keys_in is None:
        raise BaselineError(f"unrecognised leveldb_compact output:\n{text[-2000:]}")
    return LevelDbResult(version=version, keys_in=keys_in, reps=len(reps),
                         core_us=[r[0] for r in reps], total_us=[r[1] for r in reps],
                         automatic=sum(r[2] for r in reps), compaction=compaction)


def run_leveldb(keys0, keys1, reps: int = 9, db_dir: Path | None = None, compression: str = "none",
                verify: bool = True) -> LevelDbResult:
    """Time LevelDB's compaction of run1 (older) and run0 (newer) `reps` times on fresh databases.

    keys0/keys1: sorted (key bytes, address) lists. With `verify`, the merged database of the last
    repetition must equal kb16.merge_keys(keys0, keys1) (keys and addresses), else BaselineError."""
    exe = build_leveldb()
    with tempfile.TemporaryDirectory(prefix="lsmc-leveldb-") as tmp:
        tmp = Path(tmp)
        write_keys(tmp / "run0.keys", keys0)
        write_keys(tmp / "run1.keys", keys1)
        # Default: a folder on the project's disk, so table writes and fsyncs hit a real file system
        # as in the paper's set-up (an SSD); /dev/shm can be passed to take the device out.
        parent = Path(db_dir) if db_dir else BUILD / "db"
        parent.mkdir(parents=True, exist_ok=True)
        db = parent / f"leveldb-{os.getpid()}"
        cmd = [exe, "--run0", tmp / "run0.keys", "--run1", tmp / "run1.keys", "--db", db,
               "--reps", str(reps), "--compression", compression]
        if verify:
            cmd += ["--dump", tmp / "merged.keys"]
        try:
            res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BaselineError(f"leveldb_compact did not finish within {TIMEOUT} s") from None
        finally:
            shutil.rmtree(db, ignore_errors=True)
        if res.returncode != 0:
            raise BaselineError(f"leveldb_compact failed ({res.returncode}): {res.stderr.strip()}")
        result = parse_leveldb_output(res.stdout)
        if verify:
            result.merged = read_keys(tmp / "merged.keys")
            want, _ = kb16.merge_keys(keys0, keys1)
            if result.merged != want:
                bad = next((i for i, (a, b) in enumerate(zip(result.merged, want)) if a != b),
                           min(len(want), len(result.merged)))
                raise BaselineError(f"LevelDB's merged contents differ from the reference merge at key {bad}"
                                    f" ({len(result.merged)} keys vs {len(want)} expected)")
    return result


# ---- host C merge (fw/lib/kb16.c compiled natively) ----------------------------------------------

@dataclass
class HostMergeResult:
    entries_in: int              # 16-byte entries in both runs of the first data set
    entries_out: int
    invalid: int
    sets: int                    # data sets rotated through while timing
    reps: int
    us_per_entry: list[float]    # every timed merge, normalised by its own set's entries_in

    @property
    def min(self) -> float: return _stats(self.us_per_entry)[0]
    @property
    def median(self) -> float: return _stats(self.us_per_entry)[1]


def parse_host_merge_output(text: str) -> HostMergeResult:
    samples, result = [], None
    for line in text.splitlines():
        if line.startswith("sample "):
            samples.append(float(line.split("us_per_entry=", 1)[1].split()[0]))
        elif line.startswith("result "):
            result = dict(f.split("=", 1) for f in line.split()[1:])
    if result is None or not samples:
        raise BaselineError(f"unrecognised host_merge output:\n{text[-2000:]}")
    return HostMergeResult(entries_in=int(result["entries_in"]), entries_out=int(result["entries_out"]),
                           invalid=int(result["invalid"]), sets=int(result["sets"]),
                           reps=int(result["reps"]), us_per_entry=samples)


def run_host_merge(pairs, group: int = 16, reps: int = 20, verify: bool = True,
                   expected: tuple[bytes, bytes] | None = None) -> HostMergeResult:
    """Time the firmware's C merge on the host over `pairs` = [(run0 bytes, run1 bytes), ...].

    The pairs are merged in turn, `reps` rounds (the rotation keeps the branch predictor from learning
    one data set). The first pair is the job's own workload; with `verify` its output must equal the
    reference model's merge byte for byte (`expected`, when the caller has it already), else
    BaselineError."""
    exe = build_host_merge()
    if not pairs:
        raise BaselineError("run_host_merge needs at least one pair of runs")
    with tempfile.TemporaryDirectory(prefix="lsmc-hostc-") as tmp:
        tmp = Path(tmp)
        files = []
        for i, (r0, r1) in enumerate(pairs):
            (tmp / f"{i}.run0").write_bytes(r0)
            (tmp / f"{i}.run1").write_bytes(r1)
            files += [tmp / f"{i}.run0", tmp / f"{i}.run1"]
        cmd = [exe, "--group", str(group), "--reps", str(reps),
               "--out", tmp / "merged.kb16", "--invalid", tmp / "invalid.bin", *files]
        try:
            res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BaselineError(f"host_merge did not finish within {TIMEOUT} s") from None
        if res.returncode != 0:
            raise BaselineError(f"host_merge failed ({res.returncode}): {res.stderr.strip()}")
        result = parse_host_merge_output(res.stdout)
        if verify:
            want_out, want_inv = expected or kb16.merge(pairs[0][0], pairs[0][1], group)
            if (tmp / "merged.kb16").read_bytes() != want_out or (tmp / "invalid.bin").read_bytes() != want_inv:
                raise BaselineError("host C merge output differs from the reference model's merge")
    return result
