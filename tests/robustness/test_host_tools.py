"""Every host tool's entry point with bad input.

Each case runs `lsmc <tool> ...` in-process (the same `lsmc.cli.main` the `lsmc` command and
scripts/<tool> run) in a folder holding good inputs, earlier outputs, a folder and a plain file, and
asserts: a non-zero exit status, a last stderr line naming the option or file, no traceback, every file
in the folder byte-for-byte unchanged and no new file (no partial output, no temporary file left).
Simulators, builds and baselines are replaced by tripwires: a bad input must be refused before any
work starts. The case counts per tool are printed by `test_case_counts` (docs/robustness.md)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsmc import build, cli
from lsmc.build import firmware
from lsmc.model import kb16, workloads
from lsmc.paths import ROOT
from lsmc.report import baselines
from lsmc.sim import ipsim, nandsim, soc

PREVIOUS = b"an earlier output that a failed run must not touch\n"
BIG = 300 * 1024 * 1024  # sparse file above the 256 MiB input limit


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """The working folder of a case: good inputs, earlier outputs, a folder, a plain file."""
    r0, r1 = workloads.make_runs("uniform", 60, 0.3, 7)
    (tmp_path / "r0.kb16").write_bytes(kb16.encode(r0))
    (tmp_path / "r1.kb16").write_bytes(kb16.encode(r1))
    (tmp_path / "keys.txt").write_text(workloads.format_keys(r0))
    (tmp_path / "prev.kb16").write_bytes(PREVIOUS)
    (tmp_path / "prev.inv").write_bytes(PREVIOUS)
    (tmp_path / "afile").write_bytes(b"a plain file\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "bench.md").mkdir()
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00junk")
    (tmp_path / "odd.kb16").write_bytes(bytes(20))
    with open(tmp_path / "huge.kb16", "wb") as f:
        f.truncate(BIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def tripwires(monkeypatch):
    """Any simulation, build or baseline run fails the case: bad input is refused before work."""
    def trip(*_a, **_k):
        raise AssertionError("work started before the bad input was refused")
    for obj, name in [(build, "mill"), (build, "verilate"), (build, "generate"), (ipsim, "run_jobs"),
                      (ipsim, "run_script"), (ipsim, "build"), (nandsim, "build_sim"), (soc, "build_soc"),
                      (soc, "run_soc"), (firmware, "build_firmware"), (baselines, "run_leveldb"),
                      (baselines, "run_host_merge")]:
        monkeypatch.setattr(obj, name, trip)
    monkeypatch.setattr(nandsim.NandSim, "__init__", trip)


def snapshot(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, root)
            out[rel] = ("size", os.path.getsize(p)) if f.startswith("huge") else Path(p).read_bytes()
    return out


def run(argv, capsys):
    try:
        rc = cli.main([str(a) for a in argv])
    except SystemExit as e:  # argparse's usage errors
        rc = e.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


# (case id, argv, fragment of the last stderr line). Files are relative to the case's folder.
RUNS = ["r0.kb16", "r1.kb16"]
KB16 = [
    # numbers: only ASCII decimal digits, ranges checked up front
    ("gen-keys-underscore", ["gen", "--keys", "1_000", "--out0", "o0", "--out1", "o1"], "argument --keys: '1_000'"),
    ("gen-keys-arabic-indic", ["gen", "--keys", "\u0661\u0660", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-fullwidth", ["gen", "--keys", "\uff11\uff10", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-negative", ["gen", "--keys", "-1", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-plus", ["gen", "--keys", "+5", "--out0", "o0", "--out1", "o1"], "argument --keys: '+5'"),
    ("gen-keys-hex", ["gen", "--keys", "0x10", "--out0", "o0", "--out1", "o1"], "argument --keys: '0x10'"),
    ("gen-keys-empty", ["gen", "--keys", "", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-space", ["gen", "--keys", " 5", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-exponent", ["gen", "--keys", "1e3", "--out0", "o0", "--out1", "o1"], "argument --keys"),
    ("gen-keys-too-many", ["gen", "--keys", "16000001", "--out0", "o0", "--out1", "o1"], "0..16000000"),
    ("gen-seed-negative", ["gen", "--keys", "9", "--seed", "-1", "--out0", "o0", "--out1", "o1"], "argument --seed"),
    ("gen-seed-33bit", ["gen", "--keys", "9", "--seed", "4294967296", "--out0", "o0", "--out1", "o1"],
     "0..4294967295"),
    ("gen-seed-arabic-indic", ["gen", "--keys", "9", "--seed", "\u0663", "--out0", "o0", "--out1", "o1"],
     "argument --seed"),
    ("gen-overlap-nan", ["gen", "--keys", "9", "--overlap", "nan", "--out0", "o0", "--out1", "o1"], "--overlap"),
    ("gen-overlap-inf", ["gen", "--keys", "9", "--overlap", "inf", "--out0", "o0", "--out1", "o1"], "--overlap"),
    ("gen-overlap-above", ["gen", "--keys", "9", "--overlap", "1.5", "--out0", "o0", "--out1", "o1"],
     "0 <= x <= 1"),
    ("gen-overlap-exponent", ["gen", "--keys", "9", "--overlap", "1e-1", "--out0", "o0", "--out1", "o1"],
     "--overlap"),
    ("gen-overlap-vulgar-half", ["gen", "--keys", "9", "--overlap", "\u00bd", "--out0", "o0", "--out1", "o1"],
     "--overlap"),
    ("gen-group-low", ["gen", "--keys", "9", "--group", "1", "--out0", "o0", "--out1", "o1"], "2..256"),
    ("gen-group-high", ["gen", "--keys", "9", "-g", "257", "--out0", "o0", "--out1", "o1"], "2..256"),
    ("gen-group-float", ["gen", "--keys", "9", "-g", "16.0", "--out0", "o0", "--out1", "o1"], "--group"),
    ("gen-kind", ["gen", "--keys", "9", "--kind", "zipf", "--out0", "o0", "--out1", "o1"], "--kind"),
    # outputs: collisions, folders, missing folders, read-only and full devices
    ("gen-two-outputs-one-path", ["gen", "--keys", "9", "--out0", "o", "--out1", "o"], "both --out0 and --out1"),
    ("gen-keys-out-on-run", ["gen", "--keys", "9", "--out0", "o0", "--out1", "o1", "--keys-out0", "o1"],
     "both --out1 and --keys-out0"),
    ("gen-out-is-folder", ["gen", "--keys", "9", "--out0", "dir", "--out1", "o1"], "dir: is a folder"),
    ("gen-out-missing-folder", ["gen", "--keys", "9", "--out0", "nodir/o0", "--out1", "o1"],
     "folder nodir does not exist"),
    ("gen-out-under-a-file", ["gen", "--keys", "9", "--out0", "afile/o0", "--out1", "o1"], "afile is not a folder"),
    ("gen-out-read-only", ["gen", "--keys", "9", "--out0", "prev.kb16", "--out1", "/sys/lsmc.kb16"],
     "/sys/lsmc.kb16: cannot write"),
    ("gen-out-disk-full", ["gen", "--keys", "9", "--out0", "prev.kb16", "--out1", "/dev/full"],
     "/dev/full: cannot write: No space left on device"),
    ("gen-keys-out-disk-full", ["gen", "--keys", "9", "--out0", "prev.kb16", "--out1", "prev.inv",
                                "--keys-out0", "/dev/full"], "/dev/full: cannot write"),
    ("gen-out-empty-path", ["gen", "--keys", "9", "--out0", "", "--out1", "o1"], "--out0: empty path"),
    # encode: input files and the key list's numbers
    ("encode-missing", ["encode", "nope.txt", "--out", "o"], "nope.txt: cannot read: No such file"),
    ("encode-folder", ["encode", "dir", "--out", "o"], "dir: cannot read: is a folder"),
    ("encode-binary", ["encode", "binary.txt", "--out", "o"], "binary.txt: not a text file"),
    ("encode-dev-zero", ["encode", "/dev/zero", "--out", "o"], "/dev/zero: cannot read: more than the limit"),
    ("encode-huge", ["encode", "huge.kb16", "--out", "o"], "huge.kb16: cannot read: 314572800 bytes"),
    ("encode-unreadable", ["encode", "/proc/self/mem", "--out", "o"], "/proc/self/mem: cannot read"),
    ("encode-out-is-input", ["encode", "keys.txt", "--out", "keys.txt"], "--out would overwrite the input KEYS_TXT"),
    ("encode-out-disk-full", ["encode", "keys.txt", "--out", "/dev/full"], "/dev/full: cannot write"),
    ("encode-group", ["encode", "keys.txt", "--out", "o", "-g", "0x10"], "argument --group/-g: '0x10'"),
    # decode
    ("decode-missing", ["decode", "nope.kb16"], "nope.kb16: cannot read"),
    ("decode-folder", ["decode", "dir"], "dir: cannot read: is a folder"),
    ("decode-dev-zero", ["decode", "/dev/zero"], "/dev/zero: cannot read: more than the limit"),
    ("decode-huge", ["decode", "huge.kb16"], "huge.kb16: cannot read: 314572800 bytes"),
    ("decode-cut", ["decode", "odd.kb16"], "odd.kb16: entry 0"),
    # merge
    ("merge-out-is-run0", ["merge", *RUNS, "--out", "r0.kb16", "--invalid", "i"],
     "--out would overwrite the input RUN0"),
    ("merge-invalid-is-run1", ["merge", *RUNS, "--out", "o", "--invalid", "r1.kb16"],
     "--invalid would overwrite the input RUN1"),
    ("merge-out-is-invalid", ["merge", *RUNS, "--out", "x", "--invalid", "x"], "both --out and --invalid"),
    ("merge-out-via-other-spelling", ["merge", *RUNS, "--out", "./dir/../r1.kb16", "--invalid", "i"],
     "would overwrite the input RUN1"),
    ("merge-invalid-disk-full", ["merge", *RUNS, "--out", "prev.kb16", "--invalid", "/dev/full"],
     "/dev/full: cannot write"),
    ("merge-invalid-folder", ["merge", *RUNS, "--out", "prev.kb16", "--invalid", "dir"], "dir: is a folder"),
    ("merge-run-folder", ["merge", "dir", "r1.kb16", "--out", "o", "--invalid", "i"], "dir: cannot read: is a folder"),
    ("merge-run-dev-zero", ["merge", "r0.kb16", "/dev/zero", "--out", "o", "--invalid", "i"], "/dev/zero"),
    ("merge-missing-option", ["merge", *RUNS, "--out", "o"], "--invalid"),
    ("unknown-subcommand", ["frobnicate"], "invalid choice"),
]
COMPACT = [
    ("group-word", [*RUNS, "--out", "o", "--invalid", "i", "--group", "abc"], "argument --group/-g: 'abc'"),
    ("group-negative", [*RUNS, "--out", "o", "--invalid", "i", "--group", "-1"], "argument --group/-g"),
    ("group-33bit", [*RUNS, "--out", "o", "--invalid", "i", "--group", "4294967296"], "0..4294967295"),
    ("out-capacity-signed-hex", [*RUNS, "--out", "o", "--invalid", "i", "--out-capacity", "0x+4"],
     "argument --out-capacity: '0x+4'"),
    ("out-capacity-33bit", [*RUNS, "--out", "o", "--invalid", "i", "--out-capacity", "0x100000000"],
     "0x0..0xffffffff"),
    ("inv-capacity-underscore", [*RUNS, "--out", "o", "--invalid", "i", "--inv-capacity", "1_0"],
     "argument --inv-capacity"),
    ("stall-one", [*RUNS, "--out", "o", "--invalid", "i", "--stall", "1"], "0 <= x < 1"),
    ("parts-zero", [*RUNS, "--out", "o", "--invalid", "i", "--parts", "0"], "argument --parts: 0 is outside"),
    ("parts-past-max", [*RUNS, "--out", "o", "--invalid", "i", "--parts", "17"], "allowed range 1..16"),
    ("parts-word", [*RUNS, "--out", "o", "--invalid", "i", "--parts", "four"], "argument --parts: 'four'"),
    ("stall-nan", [*RUNS, "--out", "o", "--invalid", "i", "--stall", "nan"], "argument --stall"),
    ("seed-33bit", [*RUNS, "--out", "o", "--invalid", "i", "--seed", "99999999999"], "argument --seed"),
    ("width", [*RUNS, "--out", "o", "--invalid", "i", "--width", "64"], "argument --width"),
    ("width-underscore", [*RUNS, "--out", "o", "--invalid", "i", "--width", "1_28"], "argument --width: '1_28'"),
    ("width-arabic-indic", [*RUNS, "--out", "o", "--invalid", "i", "--width", "\u0663\u0662"], "argument --width"),
    ("out-is-run0", [*RUNS, "--out", "r0.kb16", "--invalid", "i"], "--out would overwrite the input RUN0"),
    ("out-is-invalid", [*RUNS, "--out", "x", "--invalid", "x"], "both --out and --invalid"),
    ("wave-missing-folder", [*RUNS, "--out", "o", "--invalid", "i", "--wave", "nodir/w.fst"],
     "folder nodir does not exist"),
    ("wave-is-folder", [*RUNS, "--out", "o", "--invalid", "i", "--wave", "dir"], "dir: is a folder"),
    ("out-read-only", [*RUNS, "--out", "/sys/o.kb16", "--invalid", "i"], "/sys/o.kb16"),
    ("run-missing", ["nope", "r1.kb16", "--out", "o", "--invalid", "i"], "nope: cannot read"),
    ("run-folder", ["dir", "r1.kb16", "--out", "o", "--invalid", "i"], "dir: cannot read: is a folder"),
    ("run-dev-zero", ["r0.kb16", "/dev/zero", "--out", "o", "--invalid", "i"], "/dev/zero: cannot read"),
    ("run-huge", ["huge.kb16", "r1.kb16", "--out", "o", "--invalid", "i"], "huge.kb16: cannot read"),
]
BENCH = [
    ("sizes-one", ["--sizes", "1"], "argument --sizes: 1 is outside the allowed range 2..16000000"),
    ("sizes-too-big", ["--sizes", "16000001"], "argument --sizes"),
    ("sizes-underscore", ["--sizes", "1_000"], "argument --sizes: '1_000'"),
    ("sizes-empty-item", ["--sizes", "512,,1024"], "argument --sizes: ''"),
    ("sizes-twice", ["--sizes", "512", "512"], "value given twice: 512"),
    ("widths", ["--widths", "64"], "argument --widths: '64' is not one of 32, 128"),
    ("widths-twice", ["--widths", "128,128"], "argument --widths"),
    ("kinds", ["--kinds", "zipf"], "argument --kinds"),
    ("seed", ["--seed", "-5"], "argument --seed"),
    ("overlap", ["--overlap", "2"], "argument --overlap"),
    ("group", ["--group", "300"], "argument --group/-g"),
    ("stall", ["--stall", "1.0"], "argument --stall"),
    ("out-dir-is-file", ["--out-dir", "afile"], "afile: is a file; --out-dir needs a folder"),
    ("out-dir-under-file", ["--out-dir", "afile/sub"], "afile is a file"),
    ("output-is-folder", ["--out-dir", "dir"], "bench.md: is a folder"),
    ("old-spelling", ["--results", "x"], "unrecognized arguments"),
]
NAND_REPORT = [
    ("pages-zero", ["--pages", "0"], "argument --pages: 0 is outside the allowed range 1..32"),
    ("pages-high", ["--pages", "33"], "argument --pages"),
    ("pages-arabic-indic", ["--pages", "\u0664"], "argument --pages"),
    ("modes-six", ["--modes", "6"], "argument --modes: '6' is not one of"),
    ("modes-empty-item", ["--modes", "1,,2"], "argument --modes"),
    ("modes-empty", ["--modes", ""], "argument --modes"),
    ("modes-hex", ["--modes", "0x1"], "argument --modes"),
    ("modes-twice", ["--modes", "1,1"], "argument --modes"),
    ("out-dir-is-file", ["--out-dir", "afile"], "afile: is a file"),
    ("soc-pages-high", ["--soc-pages", "33"], "argument --soc-pages: 33 is outside the allowed range 0..32"),
    ("soc-pages-negative", ["--soc-pages", "-1"], "argument --soc-pages"),
]
REPORT = [
    ("sizes-one", ["--sizes", "1"], "argument --sizes"),
    ("sizes-sign", ["--sizes", "+512"], "argument --sizes"),
    ("leveldb-reps-zero", ["--leveldb-reps", "0"], "argument --leveldb-reps: 0 is outside the allowed range 1..1000"),
    ("leveldb-reps-high", ["--leveldb-reps", "1001"], "argument --leveldb-reps"),
    ("host-sets", ["--host-sets", "65"], "argument --host-sets"),
    ("soc-max", ["--soc-max", "-1"], "argument --soc-max"),
    ("group", ["--group", "1"], "argument --group/-g"),
    ("overlap", ["--overlap", "-0.5"], "argument --overlap"),
    ("width", ["--width", "256"], "argument --width"),
    ("width-underscore", ["--width", "1_28"], "argument --width"),
    ("soc-csv-missing", ["--soc-csv", "nope.csv"], "nope.csv: cannot read: No such file"),
    ("soc-csv-folder", ["--soc-csv", "dir"], "dir: cannot read: is a folder"),
    ("soc-csv-empty", ["--soc-csv", "empty.txt"], "empty.txt: empty file"),
    ("soc-csv-binary", ["--soc-csv", "binary.txt"], "binary.txt: not a text file"),
    ("soc-csv-dev-zero", ["--soc-csv", "/dev/zero"], "/dev/zero: cannot read: more than the limit of 1048576"),
    # an output of the report given as its input: refused before the hour-long run
    ("soc-csv-is-output", ["--soc-csv", "dir2/report.csv", "--out-dir", "dir2"],
     "--out-dir report.csv would overwrite the input --soc-csv"),
    ("out-dir-is-file", ["--out-dir", "afile"], "afile: is a file"),
    ("db-dir-is-file", ["--db-dir", "afile", "--out-dir", "res"], "afile: is a file; --db-dir needs a folder"),
    ("old-spelling", ["--compact", "x"], "unrecognized arguments"),
]
DEMO = [
    ("max-cycles-underscore", ["--max-cycles", "1_000"], "argument --max-cycles: '1_000'"),
    ("max-cycles-zero", ["--max-cycles", "0"], "argument --max-cycles: 0 is outside"),
    ("max-cycles-65bit", ["--max-cycles", str(2**64)], "argument --max-cycles"),
    ("timeout-negative", ["--timeout", "-1"], "argument --timeout"),
    ("timeout-arabic-indic", ["--timeout", "\u0663\u0666"], "argument --timeout"),
    ("scenario", ["tablethree"], "invalid choice"),
    ("scaling-sizes-word", ["scaling", "--sizes", "abc"], "argument --sizes: 'abc'"),
    ("scaling-ddr-unknown", ["scaling", "--ddr", "nope"], "argument --ddr: invalid choice: 'nope'"),
    ("tables-entries-zero", ["tables", "--entries", "0"], "argument --entries: 0 is outside"),
    ("tables-entries-past-limit", ["tables", "--entries", "10000001"], "argument --entries"),
    ("entries-without-tables", ["scaling", "--entries", "5"], "--entries: only with the tables scenario"),
    ("cluster-with-table3", ["table3", "--cluster"], "--cluster: only with the scaling and tables scenarios"),
]
LSMC = [
    ("unknown-command", ["frobnicate"], "lsmc: unknown command 'frobnicate'"),
    ("no-command", [], "usage: lsmc COMMAND"),
    ("tables-soc-preset-unknown", ["tables", "compact", "--job", "j.json", "--out-dir", "o", "--backend", "soc",
                                   "--soc-preset", "nope"], "--soc-preset nope: not a SoC preset with table-engine"),
    # console-suite: refused before the suite is collected or any simulator starts
    ("console-suite-groups-zero", ["console-suite", "--groups", "0", "--cluster"], "argument --groups: 0 is outside"),
    ("console-suite-groups-past", ["console-suite", "--groups", "1001", "--cluster"], "argument --groups: 1001"),
    ("console-suite-groups-text", ["console-suite", "--groups", "two"], "argument --groups: 'two'"),
    ("console-suite-target", ["console-suite", "--target", "fpga"], "argument --target: invalid choice: 'fpga'"),
    ("console-suite-junit-folder", ["console-suite", "--junitxml", "dir"], "dir: is a folder; --junitxml needs a file"),
    ("console-suite-junit-no-folder", ["console-suite", "--junitxml", "nodir/c.xml"],
     "nodir/c.xml: cannot write: folder nodir does not exist"),
    ("console-suite-board-cluster", ["console-suite", "--target", "board", "--port", "/dev/null", "--cluster"],
     "--target board has one serial line"),
    ("console-suite-board-no-port", ["console-suite", "--target", "board"], "--target board needs --port"),
]

CASES = ([("kb16", *c) for c in KB16] + [("compact", *c) for c in COMPACT] + [("bench", *c) for c in BENCH]
         + [("nand-report", *c) for c in NAND_REPORT] + [("report", *c) for c in REPORT]
         + [("demo", *c) for c in DEMO] + [("lsmc", *c) for c in LSMC])


@pytest.mark.parametrize("tool,case,argv,fragment", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bad_input_is_refused_and_nothing_changes(tool, case, argv, fragment, ws, tripwires, capsys):
    if case == "soc-csv-is-output":
        (ws / "dir2").mkdir()
        (ws / "dir2" / "report.csv").write_text("entries_in\n")
    before = snapshot(ws)
    rc, out, err = run(argv if tool == "lsmc" else [tool, *argv], capsys)
    assert rc not in (0, None), (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert lines, "no error message"
    assert fragment in lines[-1] or (tool == "lsmc" and fragment in err), err
    # one message line (argparse adds its usage lines before it)
    assert all(l.startswith(("usage:", " ")) or l == lines[-1] for l in lines) or tool == "lsmc", err
    assert snapshot(ws) == before, "a file changed, appeared or disappeared"


def test_failed_second_output_keeps_the_first_untouched(ws, capsys):
    """merge writes two files: when the second cannot be written, the first (already complete) is not
    renamed into place either, so the earlier OUT survives byte for byte."""
    rc, _, err = run(["kb16", "merge", *RUNS, "--out", "prev.kb16", "--invalid", "/dev/full"], capsys)
    assert rc == 2 and (ws / "prev.kb16").read_bytes() == PREVIOUS
    assert not [p for p in os.listdir(ws) if p.endswith(".tmp")]


def test_good_runs_replace_earlier_outputs(ws, capsys):
    """The positive side: the same commands with good paths succeed and replace earlier files."""
    rc, _, err = run(["kb16", "merge", *RUNS, "--out", "prev.kb16", "--invalid", "prev.inv"], capsys)
    assert rc == 0, err
    want = kb16.merge((ws / "r0.kb16").read_bytes(), (ws / "r1.kb16").read_bytes())
    assert ((ws / "prev.kb16").read_bytes(), (ws / "prev.inv").read_bytes()) == want
    rc, _, err = run(["kb16", "gen", "--keys", "10", "--out0", "/dev/null", "--out1", "/dev/null"], capsys)
    assert rc == 0, err  # special files may be named twice
    assert not [p for p in os.listdir(ws) if p.endswith(".tmp")]


def test_case_counts():
    """The number of bad-input cases per interface (quoted in docs/robustness.md); fails when a list shrinks."""
    counts = {"kb16": len(KB16), "compact": len(COMPACT), "bench": len(BENCH), "nand-report": len(NAND_REPORT),
              "report": len(REPORT), "demo": len(DEMO), "lsmc": len(LSMC), "board target.py": len(BOARD_TARGET),
              "fpga": len(FPGA)}
    print(counts)
    assert counts == {"kb16": 55, "compact": 24, "bench": 16, "nand-report": 11, "report": 19, "demo": 12, "lsmc": 11,
                      "board target.py": 8, "fpga": 12}


BOARD_TARGET = [
    ("sys-clk-underscore", ["--sys-clk-freq", "1_00e6"], "argument --sys-clk-freq: '1_00e6'"),
    ("sys-clk-low", ["--sys-clk-freq", "1000"], "outside the allowed range"),
    ("lsmc-clk-nan", ["--lsmc-clk-freq", "nan"], "argument --lsmc-clk-freq"),
    ("firmware-missing", ["--firmware", "nope.elf"], "nope.elf: cannot read: No such file"),
    ("firmware-folder", ["--firmware", "dir"], "dir: cannot read: is a folder"),
    ("firmware-empty", ["--firmware", "empty.txt"], "empty.txt: empty file (--firmware)"),
    ("soc-verilog-dev-zero", ["--soc-verilog", "/dev/zero"], "/dev/zero: cannot read: more than the limit"),
    ("output-dir-is-file", ["--output-dir", "afile"], "afile: is a file; --output-dir needs a folder"),
]


@pytest.mark.parametrize("case,argv,fragment", BOARD_TARGET, ids=[c[0] for c in BOARD_TARGET])
def test_board_target_refuses_bad_input(case, argv, fragment, ws):
    """boards/<board>/target.py (run as the user runs it): refused before LiteX or Mill start."""
    before = snapshot(ws)
    r = subprocess.run([sys.executable, str(ROOT / "boards" / "arty_a7" / "target.py"), *argv], cwd=ws,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert fragment in r.stderr.strip().splitlines()[-1], r.stderr
    assert snapshot(ws) == before


def test_sim_board_refuses_a_bad_verilator(ws):
    """boards/sim/target.py --build with LSMC_VERILATOR naming no Verilator: one line before LiteX starts, nothing
    written (the model is built with lsmc.build.verilator's choice)."""
    before = snapshot(ws)
    r = subprocess.run([sys.executable, str(ROOT / "boards" / "sim" / "target.py"), "--build", "--output-dir", "out"],
                       cwd=ws, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LSMC_VERILATOR=str(ws / "dir")))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "no bin/verilator and include/verilated.mk in" in r.stderr.strip().splitlines()[-1], r.stderr
    assert snapshot(ws) == before


@pytest.mark.parametrize("value,fragment", [("0", "--uart-baud 0: a positive baud rate"),
                                            ("fast", "argument --uart-baud: invalid int value: 'fast'")])
def test_sim_board_refuses_bad_baud(value, fragment, ws):
    """boards/sim/target.py --uart-baud: refused in one line before LiteX starts, nothing written."""
    before = snapshot(ws)
    r = subprocess.run([sys.executable, str(ROOT / "boards" / "sim" / "target.py"), "--uart-baud", value,
                        "--output-dir", "out"], cwd=ws, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert fragment in r.stderr.strip().splitlines()[-1], r.stderr
    assert snapshot(ws) == before


@pytest.mark.parametrize("value,fragment", [("abc", "BOARD_BAUD=abc: a baud rate in decimal"),
                                            ("0", "BOARD_BAUD=0: a baud rate in decimal"),
                                            ("99999999", "BOARD_BAUD above the UART's fastest rate")])
def test_firmware_refuses_bad_board_baud(value, fragment, tmp_path):
    """make -C fw ... BOARD_BAUD=N: not a positive decimal, or above the UART's fastest rate (CPU_HZ / 8): the
    build stops naming it, no lsmc.elf."""
    firmware.ensure_headers()
    gen = " ".join(str(g) for g in firmware.GEN_INCLUDES)
    elf = tmp_path / "lsmc.elf"
    r = subprocess.run(["make", "-s", "-C", str(ROOT / "fw"), f"BUILD={tmp_path}", f"GEN_INC={gen}",
                        f"BOARD_BAUD={value}", str(elf)], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and fragment in r.stderr.replace("\\'", "'"), r.stderr[-2000:]
    assert not elf.exists()


@pytest.mark.parametrize("baud", [0, 10**9])
def test_build_firmware_refuses_bad_baud(baud, tmp_path):
    """build_firmware(baud=...) (the console suite's and the board simulation's fast line): a rate make refuses is a
    FirmwareError naming BOARD_BAUD, no lsmc.elf."""
    with pytest.raises(firmware.FirmwareError, match="BOARD_BAUD"):
        firmware.build_firmware(tmp_path, baud=baud)
    assert not (tmp_path / "lsmc.elf").exists()


FPGA = [
    ("unknown-design", ["nandx"], "unknown design 'nandx'"),
    ("estimate-with-flow", ["blocks", "nand_dma"], "run apart from soc, ip, nand, nand_dma"),
    ("results-is-file-nand-dma", ["nand_dma", "--results", "afile"], "afile: is a file; --results needs a folder"),
    ("results-is-file-blocks", ["blocks", "--results", "afile"], "afile: is a file; --results needs a folder"),
    ("results-is-file-resources", ["resources", "--results", "afile"], "afile: is a file; --results needs a folder"),
    ("results-under-file", ["nand_dma", "--results", "afile/sub"], "afile/sub: cannot create the results folder"),
    ("timeout-not-number", ["nand_dma", "--timeout", "soon"], "argument --timeout"),
    ("nextpnr-args-flow-own", ["soc", "--nextpnr-args", "--freq 120"], "--freq is set by the flow itself"),
    ("nextpnr-args-not-option", ["ip", "--nextpnr-args", "tmg-ripup"], "'tmg-ripup' is not a nextpnr option"),
    ("seed-out-of-range", ["nand_dma", "--seed", "-3"], "--seed -3: out of range"),
    ("results-is-file-te-writer", ["te_writer", "--results", "afile"], "afile: is a file; --results needs a folder"),
    ("seed-out-of-range-te-reader", ["te_reader", "--seed", "-3"], "--seed -3: out of range"),
]


@pytest.mark.parametrize("case,argv,fragment", FPGA, ids=[c[0] for c in FPGA])
def test_fpga_refuses_bad_input_before_a_flow(case, argv, fragment, ws, tripwires, monkeypatch, capsys):
    """`scripts/fpga` / `lsmc fpga`: refused before any yosys or nextpnr flow starts (they take minutes to
    hours), one error line, exit 2, nothing written."""
    from lsmc.fpga import blocks, cli, flow, resources

    def trip(*_a, **_k):
        raise AssertionError("a flow started before the bad input was refused")
    for module, name in ((flow, "ip_flow"), (flow, "nand_flow"), (flow, "nand_dma_flow"), (flow, "soc_flow"),
                         (flow, "table_engine_unit_flow"), (resources, "resources_table"), (blocks, "blocks_soc")):
        monkeypatch.setattr(module, name, trip)
    before = snapshot(ws)
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err, err
    assert fragment in err.strip().splitlines()[-1], err
    assert snapshot(ws) == before


# The SoC build switches (scripts/test sets LSMC_PGO=0 and LSMC_SOC_QUICK=1): (variable, reader, its value unset,
# what its error names).
SOC_SWITCHES = [("LSMC_PGO", soc.pgo_wanted, True, r"0 \(no profile-guided optimisation.* or 1"),
                ("LSMC_SOC_QUICK", soc.quick_wanted, False, r"1 \(every SoC model at -O1, no PGO\) or 0")]


@pytest.mark.parametrize("name,wanted,default,meaning", SOC_SWITCHES)
@pytest.mark.parametrize("value", ["off", "on", "2", "yes", " 0", " 1"])
def test_soc_build_switch_refuses_bad_values(name, wanted, default, meaning, value, monkeypatch):
    """A value other than 0 or 1 is one named error before any build, never read as on or off."""
    monkeypatch.setenv(name, value)
    with pytest.raises(build.BuildError, match=rf"{name}=.*{meaning}"):
        wanted()


@pytest.mark.parametrize("name,wanted,default,meaning", SOC_SWITCHES)
@pytest.mark.parametrize("value", [None, "", "1", "0"])
def test_soc_build_switch_good_values(name, wanted, default, meaning, value, monkeypatch):
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    assert wanted() is (default if value in (None, "") else value == "1")
