"""Build of the table engine's reference compactor (`table_ref`) and of its stock-LevelDB driver
(`ldb_stock`), hw/ip/table_engine/dv/reference/ (docs/table-engine.md).

`table_ref` is compiled against LevelDB 1.23's own source: Debian's source package, fetched as
`scripts/leveldb` fetches it (build/leveldb/dl, shared with that build), unpacked here without the
project's offload patch (the reference is stock LevelDB's code), and the table, util and version-edit
files it needs compiled into build/table_engine/leveldb/ with Debian's libsnappy. `ldb_stock` is built
against Debian's installed libleveldb (public headers and library only). Both are rebuilt only when
their sources, the source package or the flags change; one build at a time (a file lock)."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsmc.build import BuildError
from lsmc.paths import BUILD, ROOT

REF_SRC = ROOT / "hw/ip/table_engine/dv/reference"
OUT = BUILD / "table_engine"
DL = BUILD / "leveldb" / "dl"
VERSION = "1.23-4"
DSC = DL / f"leveldb_{VERSION}.dsc"
# What table_ref uses of LevelDB: tables (reader, builder, blocks, filter, merger, two-level iterator),
# the utilities under them, internal keys, and the MANIFEST writer (version edit, log, file names).
LEVELDB_FILES = [
    *(f"table/{n}.cc" for n in ("block", "block_builder", "filter_block", "format", "iterator", "merger",
                                "table", "table_builder", "two_level_iterator")),
    *(f"util/{n}.cc" for n in ("arena", "bloom", "cache", "coding", "comparator", "crc32c", "env", "env_posix",
                               "filter_policy", "hash", "logging", "options", "status")),
    "db/dbformat.cc", "db/version_edit.cc", "db/log_writer.cc", "db/filename.cc",
]
# As Debian builds LevelDB (-O2, CMake's defines for a POSIX little-endian host), without assertions: a
# malformed input table must end in a named error, not an abort inside LevelDB.
CXXFLAGS = ["-O2", "-std=c++17", "-DNDEBUG", "-DLEVELDB_PLATFORM_POSIX", "-DLEVELDB_IS_BIG_ENDIAN=0", "-pthread"]
# port/port_config.h as CMake writes it on this machine: Snappy from Debian, CRC32C in LevelDB's own code.
PORT_CONFIG = """#ifndef STORAGE_LEVELDB_PORT_PORT_CONFIG_H_
#define STORAGE_LEVELDB_PORT_PORT_CONFIG_H_
#define HAVE_FDATASYNC 1
#define HAVE_FULLFSYNC 0
#define HAVE_O_CLOEXEC 1
#define HAVE_CRC32C 0
#define HAVE_SNAPPY 1
#endif
"""


def _say(msg: str) -> None:
    print(f"table_ref: {msg}", flush=True)


def _run(cmd, what: str) -> None:
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"{what} failed ({res.returncode}): {' '.join(map(str, cmd))}\n"
                         f"{(res.stdout + res.stderr)[-4000:]}")


def fetch_source() -> Path:
    """Debian's leveldb source package in build/leveldb/dl (scripts/leveldb fetch: the same download
    the LevelDB build uses); returns the .dsc."""
    if not DSC.exists():
        _say(f"fetching Debian's leveldb {VERSION} source package")
        _run([ROOT / "scripts/leveldb", "fetch"], "scripts/leveldb fetch")
    if not DSC.exists():
        raise BuildError(f"{DSC} missing after scripts/leveldb fetch")
    return DSC


def _digest(paths, extra=()) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).name.encode())
        h.update(Path(p).read_bytes())
    for e in extra:
        h.update(repr(e).encode())
    return h.hexdigest()[:24]


def _unpack(dsc: Path, src: Path) -> None:
    stamp = src / ".lsmc-dsc"
    want = _digest([dsc])
    if stamp.exists() and stamp.read_text() == want:
        return
    shutil.rmtree(src, ignore_errors=True)
    src.parent.mkdir(parents=True, exist_ok=True)
    _run(["dpkg-source", "-q", "-x", dsc, src], "unpacking the leveldb source package (dpkg-source)")
    (src / "port" / "port_config.h").write_text(PORT_CONFIG)
    stamp.write_text(want)


def build_table_ref() -> Path:
    """build/table_engine/reference/table_ref (and ldb_stock beside it); returns table_ref's path."""
    dsc = fetch_source()
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "reference" / "table_ref"
    stock = OUT / "reference" / "ldb_stock"
    sources = sorted(REF_SRC.glob("*.cc")) + sorted(REF_SRC.glob("*.h"))
    digest = _digest([dsc, *sources], extra=(CXXFLAGS, LEVELDB_FILES, PORT_CONFIG))
    stamp = OUT / "reference" / ".stamp"
    if exe.exists() and stock.exists() and stamp.exists() and stamp.read_text() == digest:
        return exe
    with open(OUT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.exists() and stock.exists() and stamp.exists() and stamp.read_text() == digest:
            return exe
        src = OUT / "leveldb-src"
        _unpack(dsc, src)
        objs = OUT / "leveldb-obj"
        objs.mkdir(exist_ok=True)
        inc = ["-I", src, "-I", src / "include"]
        lib = OUT / "libleveldb_ref.a"
        lib_stamp = OUT / ".lib-stamp"
        lib_digest = _digest([dsc], extra=(CXXFLAGS, LEVELDB_FILES, PORT_CONFIG))
        if not (lib.exists() and lib_stamp.exists() and lib_stamp.read_text() == lib_digest):
            _say(f"compiling {len(LEVELDB_FILES)} files of LevelDB 1.23 (Debian's source) into {lib.relative_to(ROOT)}")

            def compile_one(rel: str) -> Path:
                obj = objs / (rel.replace("/", "_")[:-3] + ".o")
                _run(["g++", *CXXFLAGS, *inc, "-c", src / rel, "-o", obj], f"compiling {rel}")
                return obj

            with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
                built = list(pool.map(compile_one, LEVELDB_FILES))
            lib.unlink(missing_ok=True)
            _run(["ar", "rcs", lib, *built], "archiving LevelDB's objects")
            lib_stamp.write_text(lib_digest)
        (OUT / "reference").mkdir(exist_ok=True)
        _say(f"linking {exe.relative_to(ROOT)}")
        _run(["g++", *CXXFLAGS, *inc, REF_SRC / "table_ref.cc", lib, "-lsnappy", "-lz", "-o", exe], "building table_ref")
        # Stock LevelDB: Debian's headers and shared library only (no source include path).
        _run(["g++", "-O2", "-std=c++17", REF_SRC / "ldb_stock.cc", "-lleveldb", "-lz", "-o", stock], "building ldb_stock")
        stamp.write_text(digest)
    return exe


def stock_driver() -> Path:
    """build/table_engine/reference/ldb_stock (built with table_ref)."""
    build_table_ref()
    return OUT / "reference" / "ldb_stock"
