"""kb16: make, encode, decode, check and merge KB16 runs (the compaction IP's key-block format).

Usage: docs/kb16-tool.md. Exit status 0 on success, 2 on bad input (one line on stderr:
`kb16: <file>: entry <i>: <problem>`), never a traceback for a bad file.
"""

import argparse
import sys

from lsmc import cliutil
from lsmc.cliutil import CliError
from lsmc.model import kb16, workloads


def decode_file(path: str, group: int) -> list:
    try:
        return kb16.decode(cliutil.read_input(path), group)
    except kb16.Kb16Error as e:
        raise CliError(f"{path}: {e.message}") from None


def summary(key_lists, merged_keys, merged: bytes, invalid: list) -> str:
    return (f"merged {' + '.join(str(len(k)) for k in key_lists)} keys -> {len(merged_keys)} keys "
            f"({len(merged) // kb16.ENTRY_BYTES} entries, {len(merged)} bytes), "
            f"{len(invalid)} invalid addresses")


def cmd_gen(a) -> None:
    cliutil.check_paths({"--out0": a.out0, "--out1": a.out1, "--keys-out0": a.keys_out0, "--keys-out1": a.keys_out1})
    run0, run1 = workloads.make_runs(a.kind, a.keys, a.overlap, a.seed)
    b0, b1 = kb16.encode(run0, a.group), kb16.encode(run1, a.group)
    with cliutil.Outputs() as out:
        out.add(a.out0, b0)
        out.add(a.out1, b1)
        if a.keys_out0:
            out.add(a.keys_out0, workloads.format_keys(run0))
        if a.keys_out1:
            out.add(a.keys_out1, workloads.format_keys(run1))
    print(f"{a.kind} seed {a.seed}: run0 {len(run0)} keys ({len(b0)} bytes), "
          f"run1 {len(run1)} keys ({len(b1)} bytes), G={a.group}")


def cmd_encode(a) -> None:
    cliutil.check_paths({"--out": a.out}, {"KEYS_TXT": a.keys_txt})
    text = cliutil.read_text_input(a.keys_txt)
    lines: list = []
    try:
        pairs = workloads.parse_keys(text, a.keys_txt, lines)
    except ValueError as e:
        raise CliError(str(e)) from None
    try:
        data = kb16.encode(pairs, a.group)
    except kb16.KeyListError as e:
        problem = str(e).split(": ", 1)[1]
        raise CliError(f"{a.keys_txt}: line {lines[e.index]}: {problem}") from None
    cliutil.write_output(a.out, data)
    print(f"encoded {len(pairs)} keys -> {len(data) // kb16.ENTRY_BYTES} entries "
          f"({len(data)} bytes), G={a.group}")


def cmd_decode(a) -> None:
    data = cliutil.read_input(a.run)
    if a.keys:
        sys.stdout.write(workloads.format_keys(decode_file(a.run, a.group)))
        return
    try:
        for d in kb16.iter_entries(data, a.group):
            print(kb16.format_entry(d))
    except kb16.Kb16Error as e:
        raise CliError(f"{a.run}: {e.message}") from None


def cmd_merge(a) -> None:
    if len(a.runs) < 2:
        raise cliutil.CliError("merge needs at least two runs (RUN0 RUN1 [RUN2 ...])")
    cliutil.check_paths({"--out": a.out, "--invalid": a.invalid}, {f"RUN{i}": p for i, p in enumerate(a.runs)})
    key_lists = [decode_file(path, a.group) for path in a.runs]
    merged_keys, invalid = kb16.merge_keys_n(key_lists)
    merged = kb16.encode(merged_keys, a.group)
    with cliutil.Outputs() as out:
        out.add(a.out, merged)
        out.add(a.invalid, kb16.pack_addresses(invalid))
    print(summary(key_lists, merged_keys, merged, invalid))


def add_group(ap: argparse.ArgumentParser) -> None:
    """--group G, the KB16 group size (also bench's and report's)."""
    ap.add_argument("--group", "-g", type=cliutil.int_option(kb16.GROUP_MIN, kb16.GROUP_MAX),
                    default=kb16.GROUP_DEFAULT, metavar="G",
                    help=f"KB16 group size, {kb16.GROUP_MIN}..{kb16.GROUP_MAX} (default {kb16.GROUP_DEFAULT})")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kb16", description="KB16 run files: generate, encode, decode, merge.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    group_opt = add_group

    g = sub.add_parser("gen", help="generate two seeded runs (run0 newer, run1 older)")
    g.add_argument("--kind", choices=workloads.KINDS, default="uniform")
    g.add_argument("--keys", type=cliutil.int_option(0, workloads.MAX_KEYS), required=True,
                   help=f"total keys over both runs, 0..{workloads.MAX_KEYS}")
    cliutil.add_overlap(g, 0.0)
    cliutil.add_seed(g, 1)
    group_opt(g)
    g.add_argument("--out0", required=True)
    g.add_argument("--out1", required=True)
    g.add_argument("--keys-out0", help="also write run0's keys as text")
    g.add_argument("--keys-out1", help="also write run1's keys as text")
    g.set_defaults(fn=cmd_gen)

    e = sub.add_parser("encode", help="encode '<hex key> <address>' lines into a run")
    e.add_argument("keys_txt", metavar="KEYS_TXT")
    group_opt(e)
    e.add_argument("--out", required=True)
    e.set_defaults(fn=cmd_encode)

    d = sub.add_parser("decode", help="check a run and dump its entries (or its keys)")
    d.add_argument("run", metavar="RUN")
    group_opt(d)
    d.add_argument("--keys", action="store_true", help="print '<hex key> <address>' lines instead")
    d.set_defaults(fn=cmd_decode)

    m = sub.add_parser("merge", help="merge RUN0 RUN1 [RUN2 ...] (newest first) like the IP")
    m.add_argument("runs", metavar="RUN", nargs="+", help="KB16 runs, newest first (at least two)")
    group_opt(m)
    m.add_argument("--out", required=True)
    m.add_argument("--invalid", required=True, help="file for superseded addresses (LE uint32)")
    m.set_defaults(fn=cmd_merge)
    return p


@cliutil.tool_main("kb16")
def main(argv=None) -> int:
    args = parser().parse_args(argv)
    args.fn(args)   # `kb16 decode big.kb16 | head`: tool_main ends quietly on the closed pipe, like cat
    return 0


if __name__ == "__main__":
    sys.exit(main())
