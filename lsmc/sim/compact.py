"""Merge two KB16 runs on the compaction IP simulated in Verilator (RTL, not the model).

  compact RUN0 RUN1 --out OUT --invalid INV [--group G] [--width 32|128] [--out-capacity BYTES]

RUN0 is the newer run. Writes the merged run to OUT and the superseded addresses (LE uint32) to INV;
the last line printed is `cycles=<HW_CYCLES> entries_in=<n> entries_out=<m> invalid=<k>`.
Exit status: 0 done; 2 missing/unreadable file or bad option; 3 the IP reported an error
(`error: <CODE_NAME> at input <i> entry <index>`, nothing written); 1 simulator failure or, with
--check, an output differing from the reference model. See docs/compaction-sim.md.
"""
import argparse
import sys

from lsmc import build
from lsmc.model import kb16
from lsmc.sim import ipsim


def read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        print(f"compact: cannot read {what} '{path}': {e.strerror}", file=sys.stderr)
        sys.exit(2)


def write(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        print(f"compact: cannot write '{path}': {e.strerror}", file=sys.stderr)
        sys.exit(2)


def prob(text: str) -> float:
    v = float(text)
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("stall probability must be in [0, 1)")
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="compact", description=__doc__.split("\n\n")[0])
    ap.add_argument("run0", metavar="RUN0", help="newer run (KB16 file)")
    ap.add_argument("run1", metavar="RUN1", help="older run (KB16 file)")
    ap.add_argument("--out", required=True, help="merged run to write")
    ap.add_argument("--invalid", required=True, help="superseded value addresses to write (LE uint32)")
    ap.add_argument("--group", type=int, default=16, help="group size G (default 16)")
    ap.add_argument("--width", type=int, choices=ipsim.WIDTHS, default=128, help="IP stream width in bits")
    ap.add_argument("--out-capacity", type=lambda s: int(s, 0), default=ipsim.NO_LIMIT,
                    help="OUT_CAPACITY in bytes (default unlimited)")
    ap.add_argument("--inv-capacity", type=lambda s: int(s, 0), default=ipsim.NO_LIMIT,
                    help="INV_CAPACITY in bytes (default unlimited)")
    ap.add_argument("--stall", type=prob, default=0.0,
                    help="random stall probability on every stream and the register bus")
    ap.add_argument("--seed", type=int, default=1, help="seed of the stall generator")
    ap.add_argument("--wave", metavar="FILE.fst", help="write an FST waveform (separate traced build)")
    ap.add_argument("--check", action="store_true", help="also compare the output with the model")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the harness's measurements")
    a = ap.parse_args(argv)
    for name in ("out_capacity", "inv_capacity"):
        if not 0 <= getattr(a, name) <= ipsim.NO_LIMIT:
            ap.error(f"--{name.replace('_', '-')} must fit in 32 bits")
    if not 0 <= a.group <= ipsim.NO_LIMIT:
        ap.error("--group must fit in 32 bits")  # out-of-range G in 32 bits is the IP's BAD_GROUP
    run0, run1 = read(a.run0, "RUN0"), read(a.run1, "RUN1")
    if len(run0) > ipsim.NO_LIMIT or len(run1) > ipsim.NO_LIMIT:
        print("compact: a run is larger than 4 GiB", file=sys.stderr)
        return 2
    stalls = {s: a.stall for s in ipsim.STREAMS} if a.stall else {}
    try:
        r = ipsim.compact(run0, run1, a.group, a.width, wave=a.wave, out_capacity=a.out_capacity,
                          inv_capacity=a.inv_capacity, stalls=stalls, seed=a.seed)
    except (build.BuildError, ipsim.SimError) as e:
        print(f"compact: simulator failed: {e}", file=sys.stderr)
        return 1
    if a.verbose:
        print(" ".join(f"{k}={v}" for k, v in r.fields.items()))
    if r.violations:
        print(f"compact: the IP broke the stream/AXI protocol {r.violations} time(s)", file=sys.stderr)
        return 1
    if r.status == "error":
        print(f"error: {r.code_name} at input {r.input} entry {r.index}")
        return 3
    if r.status != "done":
        print(f"compact: the IP did not finish ({r.status}: {r.fields})", file=sys.stderr)
        return 1
    if a.check:
        try:
            want = kb16.merge(run0, run1, a.group)
        except kb16.Kb16Error as e:
            print(f"compact: IP finished but the model rejects the input: {e!r}", file=sys.stderr)
            return 1
        if (r.out, r.invalid) != want:
            print("compact: IP output differs from the model", file=sys.stderr)
            return 1
    write(a.out, r.out)
    write(a.invalid, r.invalid)
    entries_in = (len(run0) + len(run1)) // kb16.ENTRY_BYTES
    print(f"cycles={r.hw_cycles} entries_in={entries_in} entries_out={len(r.out) // kb16.ENTRY_BYTES} "
          f"invalid={r.invalid_count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
