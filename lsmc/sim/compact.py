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

from lsmc import build, cliutil
from lsmc.cliutil import U32_MAX
from lsmc.model import kb16
from lsmc.sim import ipsim


@cliutil.tool_main("compact")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="compact", description=__doc__.split("\n\n")[0])
    ap.add_argument("run0", metavar="RUN0", help="newer run (KB16 file)")
    ap.add_argument("run1", metavar="RUN1", help="older run (KB16 file)")
    ap.add_argument("--out", required=True, help="merged run to write")
    ap.add_argument("--invalid", required=True, help="superseded value addresses to write (LE uint32)")
    # Any 32-bit G reaches the IP's register: outside 2..256 the IP itself answers BAD_GROUP (exit 3).
    ap.add_argument("--group", "-g", type=cliutil.int_option(0, U32_MAX), default=kb16.GROUP_DEFAULT, metavar="G",
                    help=f"group size G, 0..{U32_MAX} (default {kb16.GROUP_DEFAULT}; the IP accepts "
                    f"{kb16.GROUP_MIN}..{kb16.GROUP_MAX})")
    cliutil.add_width(ap)
    ap.add_argument("--out-capacity", type=cliutil.int_option(0, ipsim.NO_LIMIT, hex_ok=True), default=ipsim.NO_LIMIT,
                    metavar="BYTES", help="OUT_CAPACITY in bytes, decimal or 0x-hex (default unlimited)")
    ap.add_argument("--inv-capacity", type=cliutil.int_option(0, ipsim.NO_LIMIT, hex_ok=True), default=ipsim.NO_LIMIT,
                    metavar="BYTES", help="INV_CAPACITY in bytes, decimal or 0x-hex (default unlimited)")
    cliutil.add_stall(ap)
    cliutil.add_seed(ap, 1, "stall generator")
    ap.add_argument("--wave", metavar="FILE.fst", help="write an FST waveform (separate traced build)")
    ap.add_argument("--check", action="store_true", help="also compare the output with the model")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the harness's measurements")
    a = ap.parse_args(argv)
    cliutil.check_paths({"--out": a.out, "--invalid": a.invalid, "--wave": a.wave}, {"RUN0": a.run0, "RUN1": a.run1})
    run0, run1 = cliutil.read_input(a.run0), cliutil.read_input(a.run1)
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
    with cliutil.Outputs() as out:
        out.add(a.out, r.out)
        out.add(a.invalid, r.invalid)
    entries_in = (len(run0) + len(run1)) // kb16.ENTRY_BYTES
    print(f"cycles={r.hw_cycles} entries_in={entries_in} entries_out={len(r.out) // kb16.ENTRY_BYTES} "
          f"invalid={r.invalid_count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
