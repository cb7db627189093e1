"""Builds of the table engine's C++ model (hw/ip/table_engine/model): the `table_model` CLI that runs
a table job (the `model` back end of `lsmc tables compact`), its sanitizer build for the malformed-
input tests, and the test driver `model_check` that links Debian's libleveldb and libsnappy (tests
only). Each lands under build/table_engine/ and is rebuilt only when a source changes."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsmc.build import BuildError, _hash_paths, _up_to_date, lock, run
from lsmc.paths import BUILD, ROOT

MODEL = ROOT / "hw" / "ip" / "table_engine" / "model"
OUT = BUILD / "table_engine"
CXXFLAGS = ["-std=c++17", "-Wall", "-Wextra"]
SANITIZE = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
            "-fno-omit-frame-pointer"]


def _sources() -> list[Path]:
    return sorted(p for p in MODEL.glob("*.cc") if p.name != "table_model_main.cc")


def _objects(flags: list[str]) -> list[Path]:
    """The model's sources compiled with `flags`, an object each under build/table_engine/obj/<flags' hash>/, shared
    by the binaries built with the same flags (table_model_asan and model_check; table_model and plan_dump) and
    compiled as many at a time as the machine has cores; an object is redone when its source, a header or the
    flags change."""
    odir = OUT / "obj" / hashlib.sha256(repr(tuple(flags)).encode()).hexdigest()[:12]
    headers = sorted(MODEL.glob("*.h"))
    with lock(odir / ".lock"):
        objs, todo = [], []
        for src in _sources():
            obj = odir / f"{src.stem}.o"
            digest = _hash_paths([src, *headers], extra=(tuple(flags),))
            objs.append(obj)
            if not (obj.exists() and _up_to_date(obj.with_suffix(".stamp"), digest)):
                todo.append((src, obj, digest))

        def compile_one(item):
            src, obj, digest = item
            tmp = obj.with_suffix(".o.tmp")
            res = subprocess.run(["g++", *CXXFLAGS, *flags, "-I", str(MODEL), "-c", "-o", str(tmp), str(src)],
                                 capture_output=True, text=True)
            if res.returncode != 0:
                raise BuildError(f"compiling {src.relative_to(ROOT)} ({' '.join(flags)}) failed:\n"
                                 f"{(res.stdout + res.stderr)[-6000:]}")
            tmp.replace(obj)
            obj.with_suffix(".stamp").write_text(digest)

        if todo:
            print(f"table_model: compiling {len(todo)} model sources ({' '.join(flags)})", file=sys.stderr)
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                list(pool.map(compile_one, todo))  # list(): a failed compile's BuildError is raised here
    return objs


def _build(name: str, main: Path, flags: list[str], libs: list[str]) -> Path:
    exe = OUT / name
    inputs = [*_sources(), main, *MODEL.glob("*.h")]
    digest = _hash_paths(inputs, extra=(tuple(flags), tuple(libs)))
    stamp = OUT / f".{name}.stamp"
    if exe.exists() and _up_to_date(stamp, digest):
        return exe
    OUT.mkdir(parents=True, exist_ok=True)
    with lock(OUT / f".{name}.lock"):  # one build at a time; the winner's serves all
        if exe.exists() and _up_to_date(stamp, digest):
            return exe
        objs = _objects(flags)
        print(f"table_model: building {exe.relative_to(ROOT)}", file=sys.stderr)
        tmp = exe.with_name(exe.name + ".tmp")
        run(["g++", *CXXFLAGS, *flags, "-I", MODEL, "-o", tmp, main, *objs, *libs])
        tmp.replace(exe)
        stamp.write_text(digest)
    return exe


def build_table_model(sanitize: bool = False) -> Path:
    """The `table_model JOB.json OUT_DIR` executable (-O2; with `sanitize`, ASan + UBSan at -O1)."""
    return _build("table_model_asan" if sanitize else "table_model", MODEL / "table_model_main.cc",
                  SANITIZE if sanitize else ["-O2"], ["-ljson-c"])


def build_model_check() -> Path:
    """The test driver (ASan + UBSan) against Debian's libleveldb and libsnappy."""
    return _build("model_check", MODEL / "test" / "model_check.cc", SANITIZE,
                  ["-ljson-c", "-lleveldb", "-lsnappy"])


def build_plan_dump() -> Path:
    """`plan_dump JOB.json P`: the model's sub-compaction plan printed as the firmware's plan prints it
    (the host test of fw/lib/te_plan.c compares the two)."""
    return _build("plan_dump", MODEL / "test" / "plan_dump.cc", ["-O2"], ["-ljson-c"])


def limits() -> dict[str, int]:
    """The engine's fixed sizes (limits.h): kMaxUserKeyBytes -> max_user_key_bytes, ..."""
    text = (MODEL / "limits.h").read_text()
    out = {}
    for name, expr in re.findall(r"constexpr \w+ k(\w+) = ([^;]+);", text):
        m = re.fullmatch(r"(\d+)u?(?:ll)?(?: << (\d+))?|(\d+)u? << (\d+)", expr.strip())
        if not m:
            continue
        base, shift = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        out[snake] = int(base) << int(shift or 0)
    return out


if __name__ == "__main__":  # python3 -m lsmc.build.table_model: build the CLI, print its path
    print(build_table_model())
