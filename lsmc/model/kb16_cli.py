"""kb16: make, encode, decode, check and merge KB16 runs (the compaction IP's key-block format).

Usage: docs/kb16-tool.md. Exit status 0 on success, 2 on bad input (one line on stderr:
`kb16: <file>: entry <i>: <problem>`), never a traceback for a bad file.
"""

import argparse
import os
import sys

from lsmc.model import kb16, workloads


class Fail(Exception):
    """A user-facing error: printed as `kb16: <message>`, exit 2."""


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise Fail(f"{path}: cannot read: {e.strerror}") from None


def write_bytes(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise Fail(f"{path}: cannot write: {e.strerror}") from None


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode())


def group_arg(text: str) -> int:
    try:
        g = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"group size {text!r} is not an integer") from None
    if not kb16.GROUP_MIN <= g <= kb16.GROUP_MAX:
        raise argparse.ArgumentTypeError(f"group size {g} outside {kb16.GROUP_MIN}..{kb16.GROUP_MAX}")
    return g


def fraction_arg(text: str) -> float:
    try:
        f = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= f <= 1.0:
        raise argparse.ArgumentTypeError(f"overlap {f} outside 0..1")
    return f


def count_arg(text: str) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= n <= workloads.MAX_KEYS:
        raise argparse.ArgumentTypeError(f"key count {n} outside 0..{workloads.MAX_KEYS}")
    return n


def decode_file(path: str, group: int) -> list:
    try:
        return kb16.decode(read_bytes(path), group)
    except kb16.Kb16Error as e:
        raise Fail(f"{path}: {e.message}") from None


def summary(keys0, keys1, merged_keys, merged: bytes, invalid: list) -> str:
    return (f"merged {len(keys0)} + {len(keys1)} keys -> {len(merged_keys)} keys "
            f"({len(merged) // kb16.ENTRY_BYTES} entries, {len(merged)} bytes), "
            f"{len(invalid)} invalid addresses")


def cmd_gen(a) -> None:
    run0, run1 = workloads.make_runs(a.kind, a.keys, a.overlap, a.seed)
    b0, b1 = kb16.encode(run0, a.group), kb16.encode(run1, a.group)
    write_bytes(a.out0, b0)
    write_bytes(a.out1, b1)
    if a.keys_out0:
        write_text(a.keys_out0, workloads.format_keys(run0))
    if a.keys_out1:
        write_text(a.keys_out1, workloads.format_keys(run1))
    print(f"{a.kind} seed {a.seed}: run0 {len(run0)} keys ({len(b0)} bytes), "
          f"run1 {len(run1)} keys ({len(b1)} bytes), G={a.group}")


def cmd_encode(a) -> None:
    try:
        text = read_bytes(a.keys_txt).decode()
    except UnicodeDecodeError:
        raise Fail(f"{a.keys_txt}: not a text file") from None
    lines: list = []
    try:
        pairs = workloads.parse_keys(text, a.keys_txt, lines)
    except ValueError as e:
        raise Fail(str(e)) from None
    try:
        data = kb16.encode(pairs, a.group)
    except kb16.KeyListError as e:
        problem = str(e).split(": ", 1)[1]
        raise Fail(f"{a.keys_txt}: line {lines[e.index]}: {problem}") from None
    write_bytes(a.out, data)
    print(f"encoded {len(pairs)} keys -> {len(data) // kb16.ENTRY_BYTES} entries "
          f"({len(data)} bytes), G={a.group}")


def cmd_decode(a) -> None:
    data = read_bytes(a.run)
    if a.keys:
        sys.stdout.write(workloads.format_keys(decode_file(a.run, a.group)))
        return
    try:
        for d in kb16.iter_entries(data, a.group):
            print(kb16.format_entry(d))
    except kb16.Kb16Error as e:
        sys.stdout.flush()
        raise Fail(f"{a.run}: {e.message}") from None


def cmd_merge(a) -> None:
    keys0 = decode_file(a.run0, a.group)
    keys1 = decode_file(a.run1, a.group)
    merged_keys, invalid = kb16.merge_keys(keys0, keys1)
    merged = kb16.encode(merged_keys, a.group)
    write_bytes(a.out, merged)
    write_bytes(a.invalid, kb16.pack_addresses(invalid))
    print(summary(keys0, keys1, merged_keys, merged, invalid))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kb16", description="KB16 run files: generate, encode, decode, merge.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def group_opt(sp):
        sp.add_argument("--group", "-g", type=group_arg, default=kb16.GROUP_DEFAULT,
                        help="group size G, 2..256 (default 16)")

    g = sub.add_parser("gen", help="generate two seeded runs (run0 newer, run1 older)")
    g.add_argument("--kind", choices=workloads.KINDS, default="uniform")
    g.add_argument("--keys", type=count_arg, required=True, help="total keys over both runs")
    g.add_argument("--overlap", type=fraction_arg, default=0.0,
                   help="fraction of run1's keys also in run0 (0..1)")
    g.add_argument("--seed", type=int, default=1)
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

    m = sub.add_parser("merge", help="merge RUN0 (newer) and RUN1 (older) like the IP")
    m.add_argument("run0", metavar="RUN0")
    m.add_argument("run1", metavar="RUN1")
    group_opt(m)
    m.add_argument("--out", required=True)
    m.add_argument("--invalid", required=True, help="file for superseded addresses (LE uint32)")
    m.set_defaults(fn=cmd_merge)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        args.fn(args)
    except Fail as e:
        print(f"kb16: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:            # `kb16 decode big.kb16 | head`: quiet, like cat
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
