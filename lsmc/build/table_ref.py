"""Build of the table engine's reference compactor (`table_ref`) and of its stock-LevelDB driver
(`ldb_stock`), hw/ip/table_engine/dv/reference/ (hw/ip/table_engine/doc/table-engine.md).

`table_ref` is built against LevelDB 1.23's own code: its internal headers (table/, db/, util/, port/)
come from Debian's source package, fetched as `scripts/leveldb` fetches it (build/leveldb/dl, shared
with that build) and unpacked here without the project's offload patch; its code is Debian's static
library of the same source (`libleveldb.a` of libleveldb-dev 1.23-4, the very build of the stock
`libleveldb.so`), linked with Debian's libsnappy. So the reference runs the same compiled LevelDB as
stock LevelDB, and its build is one C++ file. `ldb_stock` uses Debian's public headers and shared
library only. Both are rebuilt only when their sources, the source package or the library change; one
build at a time (a file lock)."""
from __future__ import annotations

import shutil
from pathlib import Path

from lsmc import build as _build
from lsmc.build import BuildError, _hash_paths, _up_to_date
from lsmc.paths import BUILD, ROOT

REF_SRC = ROOT / "hw/ip/table_engine/dv/reference"
OUT = BUILD / "table_engine"
DL = BUILD / "leveldb" / "dl"
VERSION = "1.23-4"
DSC = DL / f"leveldb_{VERSION}.dsc"
# Debian's static LevelDB (package libleveldb-dev, scripts/setup): the same build as libleveldb.so.1d.
DEBIAN_LIB = Path("/usr/lib/x86_64-linux-gnu/libleveldb.a")
# CMake's defines for a POSIX little-endian host, as Debian's build of the library had them.
CXXFLAGS = ["-O2", "-std=c++17", "-DLEVELDB_PLATFORM_POSIX", "-DLEVELDB_IS_BIG_ENDIAN=0", "-pthread"]


def _say(msg: str) -> None:
    print(f"table_ref: {msg}", flush=True)


def fetch_source() -> Path:
    """Debian's leveldb source package in build/leveldb/dl (scripts/leveldb fetch: the same download
    the LevelDB build uses); returns the .dsc."""
    if not DSC.exists():
        _say(f"fetching Debian's leveldb {VERSION} source package")
        _build.run([ROOT / "scripts/leveldb", "fetch"])
    if not DSC.exists():
        raise BuildError(f"{DSC} missing after scripts/leveldb fetch")
    return DSC


def _unpack(dsc: Path, src: Path) -> None:
    stamp = src / ".lsmc-dsc"
    want = _hash_paths([dsc])
    if _up_to_date(stamp, want):
        return
    shutil.rmtree(src, ignore_errors=True)
    src.parent.mkdir(parents=True, exist_ok=True)
    _build.run(["dpkg-source", "-q", "-x", dsc, src])
    stamp.write_text(want)


def _debian_lib() -> Path:
    lib = DEBIAN_LIB
    if not lib.exists():
        found = sorted(Path("/usr/lib").glob("*/libleveldb.a"))
        if not found:
            raise BuildError("Debian's static LevelDB (libleveldb.a) is missing: apt-get install libleveldb-dev "
                             "(scripts/setup installs it)")
        lib = found[0]
    return lib


def build_table_ref() -> Path:
    """build/table_engine/reference/table_ref (and ldb_stock beside it); returns table_ref's path."""
    dsc = fetch_source()
    lib = _debian_lib()
    exe = OUT / "reference" / "table_ref"
    stock = OUT / "reference" / "ldb_stock"
    sources = sorted(REF_SRC.glob("*.cc")) + sorted(REF_SRC.glob("*.h"))
    digest = _hash_paths([dsc, *sources], extra=(CXXFLAGS, str(lib), lib.stat().st_mtime_ns))
    stamp = OUT / "reference" / ".stamp"
    built = lambda: exe.exists() and stock.exists() and _up_to_date(stamp, digest)  # noqa: E731
    if built():
        return exe
    (OUT / "reference").mkdir(parents=True, exist_ok=True)
    with _build.lock(OUT / ".table_ref.lock"):  # one build at a time; the winner's serves all
        if built():
            return exe
        src = OUT / "leveldb-src"
        _unpack(dsc, src)
        _say(f"building {exe.relative_to(ROOT)} (LevelDB 1.23's headers from Debian's source, its {lib})")
        _build.run(["g++", *CXXFLAGS, "-I", src, "-I", src / "include", REF_SRC / "table_ref.cc", lib, "-lsnappy",
                    "-lz", "-o", exe.with_suffix(".tmp")])
        exe.with_suffix(".tmp").replace(exe)
        # Stock LevelDB: Debian's headers and shared library only (no source include path).
        _build.run(["g++", "-O2", "-std=c++17", REF_SRC / "ldb_stock.cc", "-lleveldb", "-lz",
                    "-o", stock.with_suffix(".tmp")])
        stock.with_suffix(".tmp").replace(stock)
        stamp.write_text(digest)
    return exe


def stock_driver() -> Path:
    """build/table_engine/reference/ldb_stock (built with table_ref)."""
    build_table_ref()
    return OUT / "reference" / "ldb_stock"
