"""What every host tool shares on its command line, written once (docs/robustness.md lists the rules):

* strict numbers: ASCII decimal digits, `0x` hex only where an option documents it; no signs, no `_`,
  no other scripts' digits, no spaces, no exponents (Python's int()/float() accept all of these);
* option types that check the range up front and name it in the message;
* input files checked and read with a size limit (no MemoryError on /dev/zero), folders and
  unreadable files named as such;
* output paths checked before any work: a folder in place of a file, a missing folder, an output that
  is also an input, two outputs on one path;
* atomic outputs: each file is written to a temporary file in its own folder, flushed to the disk and
  renamed over the target only when every output of the run is complete, so a failed run leaves the
  previous files untouched and no partial file behind;
* one error convention: a `CliError` becomes one line `<tool>: <message>` on stderr and exit status 2
  (`tool_main`), never a traceback; so does an output that cannot be written (a full disk, `> /dev/full`),
  with exit status 1. Programming errors are not caught: they must show.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

EXIT_BAD_INPUT = 2
# The largest input file a tool reads: the SoC's DDR window (256 MiB). A run that does not fit there
# cannot be compacted by the platform, and the Python model would need gigabytes for it.
MAX_INPUT_BYTES = 256 * 1024 * 1024
U32_MAX = 0xFFFF_FFFF

_DEC = re.compile(r"[0-9]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_FRAC = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


class CliError(Exception):
    """A user-facing failure (bad input, unusable path, failed write): `<tool>: <message>`, exit 2."""


# ---------------------------------------------------------------------------------------- numbers
def parse_int(text: str, *, hex_ok: bool = False) -> int:
    """A non-negative integer in ASCII decimal (or `0x` hex when hex_ok); ValueError otherwise."""
    if _DEC.fullmatch(text):
        return int(text, 10)
    if hex_ok and _HEX.fullmatch(text):
        return int(text[2:], 16)
    raise ValueError(f"{text!r} is not a {'decimal or 0x-hex' if hex_ok else 'decimal'} integer")


def parse_fraction(text: str) -> float:
    """A non-negative decimal number (`0.25`, `1`, `.5`), ASCII digits only; ValueError otherwise."""
    if not _FRAC.fullmatch(text):
        raise ValueError(f"{text!r} is not a decimal number")
    return float(text)


def _bounds(lo: int, hi: int, hex_ok: bool) -> str:
    return f"{lo:#x}..{hi:#x}" if hex_ok and hi > 0xFFFF else f"{lo}..{hi}"


def int_option(lo: int, hi: int, *, hex_ok: bool = False) -> Callable[[str], int]:
    """argparse type: an integer in lo..hi (argparse prefixes the option's name to the message)."""
    def parse(text: str) -> int:
        try:
            v = parse_int(text, hex_ok=hex_ok)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"{e} (allowed {_bounds(lo, hi, hex_ok)})") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text} is outside the allowed range {_bounds(lo, hi, hex_ok)}")
        return v
    parse.__name__ = "integer"
    return parse


def fraction_option(lo: float, hi: float, *, hi_open: bool = False) -> Callable[[str], float]:
    """argparse type: a decimal number in [lo, hi] (or [lo, hi) with hi_open)."""
    rng = f"{lo:g} <= x {'<' if hi_open else '<='} {hi:g}"

    def parse(text: str) -> float:
        try:
            v = parse_fraction(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"{e} (allowed {rng})") from None
        if not (lo <= v < hi if hi_open else lo <= v <= hi):
            raise argparse.ArgumentTypeError(f"{text} is outside the allowed range {rng}")
        return v
    parse.__name__ = "number"
    return parse


_HZ = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][0-9]{1,2})?")


def hz_option(lo: float, hi: float) -> Callable[[str], float]:
    """argparse type: a frequency in Hz, ASCII digits with an optional fraction and exponent (`125e6`)."""
    def parse(text: str) -> float:
        if not _HZ.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{text!r} is not a frequency in Hz (e.g. 100000000 or 100e6)")
        v = float(text)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text} Hz is outside the allowed range {lo:g}..{hi:g} Hz")
        return v
    parse.__name__ = "frequency"
    return parse


def int_list_option(lo: int, hi: int, *, max_items: int = 64) -> Callable[[str], list[int]]:
    """argparse type: comma-separated integers in lo..hi (`512,1024`); with nargs='+' the lists of
    several words are joined by `flatten` (so `--sizes 512 1024` and `--sizes 512,1024` agree)."""
    one = int_option(lo, hi)

    def parse(text: str) -> list[int]:
        items = text.split(",")
        if len(items) > max_items:
            raise argparse.ArgumentTypeError(f"more than {max_items} values")
        return [one(t) for t in items]
    parse.__name__ = "list"
    return parse


def choice_list_option(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """argparse type: comma-separated names, each one of `choices`, no repeats."""
    choices = tuple(choices)

    def parse(text: str) -> list[str]:
        items = text.split(",")
        for t in items:
            if t not in choices:
                raise argparse.ArgumentTypeError(f"{t!r} is not one of {', '.join(choices)}")
        if len(set(items)) != len(items):
            raise argparse.ArgumentTypeError(f"{text!r} names a value twice")
        return items
    parse.__name__ = "list"
    return parse


def flatten(lists) -> list:
    """Join the lists an nargs='+' list option returns; repeated values are an error."""
    out = [v for sub in lists for v in sub]
    dup = sorted({v for v in out if out.count(v) > 1})
    if dup:
        raise CliError(f"value given twice: {', '.join(map(str, dup))}")
    return out


# ------------------------------------------------------------------------------------------ inputs
def _why(e: OSError) -> str:
    return e.strerror or e.__class__.__name__


def read_input(path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file. Refused, naming the file: missing, a folder, unreadable, larger than
    `limit` (checked from its size when it has one, else while reading, e.g. /dev/zero)."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise CliError(f"{path}: cannot read: is a folder, not a file")
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise CliError(f"{path}: cannot read: {st.st_size} bytes, more than the limit of {limit} bytes")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise CliError(f"{path}: cannot read: {_why(e)}") from None
    if len(data) > limit:
        raise CliError(f"{path}: cannot read: more than the limit of {limit} bytes")
    return data


def read_text_input(path, limit: int = MAX_INPUT_BYTES) -> str:
    """An input text file (UTF-8), with read_input's checks."""
    try:
        return read_input(path, limit).decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{path}: not a text file (not UTF-8)") from None


# ----------------------------------------------------------------------------------------- outputs
def _is_special(path: Path) -> bool:
    """An existing non-regular, non-folder file (/dev/null, /dev/full, a FIFO): written in place."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def _same_path(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_file(path, option: str) -> None:
    """`path` can be written as a file: not a folder, and its folder exists and is a folder."""
    p = Path(path)
    if str(path) == "":
        raise CliError(f"{option}: empty path")
    if p.is_dir():
        raise CliError(f"{path}: is a folder; {option} needs a file path")
    parent = p.parent
    if not parent.exists():
        raise CliError(f"{path}: cannot write: folder {parent} does not exist")
    if not parent.is_dir():
        raise CliError(f"{path}: cannot write: {parent} is not a folder")
    if _is_special(p):
        return
    try:  # a read-only folder or file system shows now, not after the run
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CliError(f"{path}: cannot write: {_why(e)}") from None


def check_paths(outputs: dict, inputs: dict | None = None, *, folders_made: bool = False) -> None:
    """Before any work: every output (option name -> path, None = not given) is writable as a file,
    no two outputs share a path and no output is one of the inputs (name -> path). Special files
    such as /dev/null may be given more than once. folders_made: the outputs' folder is made later
    (a results folder), so only the collisions are checked."""
    for opt, p in outputs.items():
        if p is not None and str(p) == "":
            raise CliError(f"{opt}: empty path")
    outs = [(opt, Path(p)) for opt, p in outputs.items() if p is not None]
    ins = [(name, Path(p)) for name, p in (inputs or {}).items() if p is not None]
    for opt, p in outs:
        if not folders_made:
            check_output_file(p, opt)
    for i, (o1, p1) in enumerate(outs):
        if _is_special(p1):
            continue
        for o2, p2 in outs[i + 1:]:
            if _same_path(p1, p2):
                raise CliError(f"{p1}: given as both {o1} and {o2}; each output needs its own file")
        for name, q in ins:
            if _same_path(p1, q):
                raise CliError(f"{p1}: {o1} would overwrite the input {name}")


def check_output_dir(path, option: str, files: Iterable[str] = ()) -> None:
    """A results folder: absent (it will be made) or a folder; the nearest existing ancestor is a
    folder; none of `files` inside it is a folder."""
    p = Path(path)
    if str(path) == "":
        raise CliError(f"{option}: empty path")
    if p.exists() and not p.is_dir():
        raise CliError(f"{path}: is a file; {option} needs a folder")
    anc = p
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise CliError(f"{path}: cannot make the folder: {anc} is a file")
    for name in files:
        if (p / name).is_dir():
            raise CliError(f"{p / name}: is a folder; {option} would write a file there")


def make_output_dir(path) -> Path:
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"{path}: cannot make the folder: {_why(e)}") from None
    return p


class Outputs:
    """Atomic outputs of one run. `add(path, data)` writes a temporary file beside `path` (same folder,
    so the rename is atomic), flushes and fsyncs it; `commit()` renames every staged file over its
    target. On an error, or when the `with` block ends with an exception, the temporary files are
    removed and no target has changed. Special files (/dev/null, /dev/full, FIFOs) are written in place."""

    def __init__(self):
        self._staged: list[tuple[str, Path]] = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.discard()
        return False

    def add(self, path, data: bytes | str) -> None:
        # Through a symbolic link the file it points to is replaced, not the link.
        target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
        if isinstance(data, str):
            data = data.encode()
        if _is_special(target):
            try:
                with open(target, "wb") as f:
                    f.write(data)
            except OSError as e:
                self.discard()
                raise CliError(f"{path}: cannot write: {_why(e)}") from None
            return
        tmp = None
        try:
            if target.is_dir():
                raise CliError(f"{path}: cannot write: is a folder")
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            try:
                mode = stat.S_IMODE(os.stat(target).st_mode)
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
        except OSError as e:
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            self.discard()
            raise CliError(f"{path}: cannot write: {_why(e)}") from None
        except CliError:
            self.discard()
            raise
        self._staged.append((tmp, target))

    def commit(self) -> None:
        staged, self._staged = self._staged, []
        for i, (tmp, target) in enumerate(staged):
            try:
                os.replace(tmp, target)
            except OSError as e:
                for t, _ in staged[i:]:
                    with contextlib.suppress(OSError):
                        os.unlink(t)
                raise CliError(f"{target}: cannot write: {_why(e)}") from None

    def discard(self) -> None:
        for tmp, _ in self._staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self._staged = []


def write_output(path, data: bytes | str) -> None:
    """One atomic output file (see Outputs)."""
    with Outputs() as out:
        out.add(path, data)


# ------------------------------------------------------------------------------------- entry points
# A write that fails for want of room or a working device (`> /dev/full`, a full disk, a lost mount), as
# opposed to a bug: one error line and EXIT_WRITE_FAILED, not a traceback.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}
EXIT_WRITE_FAILED = 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush of what is still buffered cannot fail."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def tool_main(prog: str):
    """Decorator of a tool's `main(argv) -> int`: a CliError becomes `<prog>: <message>` on stderr and
    exit status 2; a closed stdout (`| head`) ends quietly; an output that cannot be written (a full
    disk, `> /dev/full`) is one line `<prog>: cannot write <output>: <reason>` and exit status 1. stdout
    is flushed before the tool returns (also on --help's SystemExit), so its failure is seen here.
    Everything else propagates (bugs show)."""
    def wrap(fn):
        @functools.wraps(fn)
        def main(argv=None) -> int:
            try:
                try:
                    rc = fn(argv)
                except SystemExit:
                    sys.stdout.flush()
                    raise
                sys.stdout.flush()
                return rc
            except CliError as e:
                with contextlib.suppress(OSError):
                    sys.stdout.flush()
                print(f"{prog}: {e}", file=sys.stderr)
                return EXIT_BAD_INPUT
            except BrokenPipeError:
                _quiet_stdout()
                return 0
            except OSError as e:
                if e.errno not in _WRITE_ERRNOS:
                    raise
                _quiet_stdout()
                print(f"{prog}: cannot write {e.filename or 'standard output'}: {_why(e)}", file=sys.stderr)
                return EXIT_WRITE_FAILED
        return main
    return wrap


# ------------------------------------------------------------------ options shared by several tools
# Same spelling, same range, same message in every tool that has them (the KB16 group: kb16_cli.add_group;
# keys per job: workloads.sizes_option).
def add_seed(ap: argparse.ArgumentParser, default: int, what: str = "workload generator") -> None:
    ap.add_argument("--seed", type=int_option(0, U32_MAX), default=default, metavar="N",
                    help=f"seed of the {what}, 0..{U32_MAX} (default {default})")


def add_overlap(ap: argparse.ArgumentParser, default: float) -> None:
    ap.add_argument("--overlap", type=fraction_option(0.0, 1.0), default=default, metavar="F",
                    help=f"fraction of run1's keys also in run0, 0..1 (default {default:g})")


def add_stall(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--stall", type=fraction_option(0.0, 1.0, hi_open=True), default=0.0, metavar="P",
                    help="random stall probability on every stream and the register bus, 0 <= P < 1 (default 0)")


def add_out_dir(ap: argparse.ArgumentParser, default, what: str) -> None:
    ap.add_argument("--out-dir", type=Path, default=Path(default), metavar="DIR",
                    help=f"folder for {what} (default {default}; made when missing)")


def add_width(ap: argparse.ArgumentParser, default: int = 128) -> None:
    """--width 32|128: the IP's stream width (exact ASCII spelling: `1_28` or `０x80` are not 128)."""
    def parse(text: str) -> int:
        if text not in ("32", "128"):
            raise argparse.ArgumentTypeError(f"{text!r} is not one of 32, 128")
        return int(text)
    parse.__name__ = "width"
    ap.add_argument("--width", type=parse, default=default, metavar="32|128",
                    help=f"IP stream width in bits, 32 or 128 (default {default})")
