"""The `kb16` command (scripts/kb16): outputs agree with the model, bad input gives exit 2 and one
stderr line naming the file and entry, never a traceback; `gen` is deterministic per seed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsmc.model import kb16, workloads
from lsmc.model.vectors import VECTORS as VEC

ROOT = Path(__file__).resolve().parents[1]
KB16 = ROOT / "scripts" / "kb16"

MALFORMED = json.loads((VEC / "malformed.json").read_text())


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "lsmc", "kb16", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


def assert_bad(r, *fragments):
    """Exit 2, exactly one stderr line starting with 'kb16: ' and holding every fragment."""
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 or lines[0].startswith("usage:"), r.stderr
    for f in fragments:
        assert f in lines[-1], r.stderr
    return lines[-1]


def gen(tmp, tag, kind="uniform", keys=300, overlap=0.3, seed=1, group=16):
    o0, o1, k0, k1 = (tmp / f"{tag}.{s}" for s in ("r0.kb16", "r1.kb16", "k0.txt", "k1.txt"))
    r = run("gen", "--kind", kind, "--keys", keys, "--overlap", overlap, "--seed", seed,
            "--group", group, "--out0", o0, "--out1", o1, "--keys-out0", k0, "--keys-out1", k1)
    assert r.returncode == 0, r.stderr
    return o0, o1, k0, k1


def test_executable():
    """scripts/kb16 (the README's wrapper) and the installed `lsmc kb16` entry point both run the tool."""
    assert KB16.stat().st_mode & 0o111
    for cmd in ([str(KB16), "--help"], ["lsmc", "kb16", "--help"]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "gen" in r.stdout and "merge" in r.stdout, (cmd, r.stderr)


def test_gen_matches_model_and_is_deterministic(tmp_path):
    o0, o1, k0, k1 = gen(tmp_path, "a", "prefix", 300, 0.3, 11, 5)
    want0, want1 = workloads.make_runs("prefix", 300, 0.3, 11)
    assert o0.read_bytes() == kb16.encode(want0, 5) and o1.read_bytes() == kb16.encode(want1, 5)
    assert k0.read_text() == workloads.format_keys(want0)
    assert workloads.parse_keys(k1.read_text()) == want1
    b0, b1, _, _ = gen(tmp_path, "b", "prefix", 300, 0.3, 11, 5)
    assert b0.read_bytes() == o0.read_bytes() and b1.read_bytes() == o1.read_bytes()
    c0, _, _, _ = gen(tmp_path, "c", "prefix", 300, 0.3, 12, 5)
    assert c0.read_bytes() != o0.read_bytes()


def test_encode_decode_round_trip(tmp_path):
    o0, _, k0, _ = gen(tmp_path, "a", "long", 200, 0, 2, 3)
    out = tmp_path / "enc.kb16"
    r = run("encode", k0, "--group", 3, "--out", out)
    assert r.returncode == 0 and "encoded 100 keys" in r.stdout
    assert out.read_bytes() == o0.read_bytes()
    r = run("decode", out, "-g", 3, "--keys")
    assert r.returncode == 0 and r.stdout == k0.read_text()
    r = run("decode", out, "-g", 3)                      # dump: one line per entry
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == len(out.read_bytes()) // 16
    assert lines == [kb16.format_entry(d) for d in kb16.iter_entries(out.read_bytes(), 3)]


def test_encode_text_format(tmp_path):
    txt = tmp_path / "k.txt"
    txt.write_text("# paper example\n68656c6c6f6462 1\n\n68656c6c6f776f726c64 0x2  # helloworld\n"
                   "68656c6c6f776f726c6430 3\n")
    out = tmp_path / "k.kb16"
    assert run("encode", txt, "--out", out).returncode == 0
    assert out.read_bytes() == (VEC / "paper-fig3" / "run0.kb16").read_bytes()


def test_merge_matches_model(tmp_path):
    o0, o1, _, _ = gen(tmp_path, "a", "ycsb", 400, 0.5, 4, 16)
    out, inv = tmp_path / "m.kb16", tmp_path / "inv.bin"
    r = run("merge", o0, o1, "--group", 16, "--out", out, "--invalid", inv)
    assert r.returncode == 0, r.stderr
    want_m, want_i = kb16.merge(o0.read_bytes(), o1.read_bytes(), 16)
    assert out.read_bytes() == want_m and inv.read_bytes() == want_i
    assert r.stdout.strip() == (f"merged 200 + 200 keys -> 300 keys ({len(want_m) // 16} entries, "
                                f"{len(want_m)} bytes), 100 invalid addresses")


def test_merge_n_runs(tmp_path):
    """`merge` with four runs (newest first): the model's N-way merge; one run is refused."""
    paths = []
    for i in range(4):
        r0, _, _, _ = gen(tmp_path, f"n{i}", "short", 120, 0.0, 10 + i, 16)
        paths.append(r0)
    out, inv = tmp_path / "m.kb16", tmp_path / "inv.bin"
    r = run("merge", *paths, "--group", 16, "--out", out, "--invalid", inv)
    assert r.returncode == 0, r.stderr
    runs = [p.read_bytes() for p in paths]
    want_m, want_i = kb16.merge_runs(runs, 16)
    assert out.read_bytes() == want_m and inv.read_bytes() == want_i
    counts = " + ".join(str(len(kb16.decode(x, 16))) for x in runs)
    assert r.stdout.startswith(f"merged {counts} keys -> ")
    assert_bad(run("merge", paths[0], "--out", out, "--invalid", inv), "at least two runs")


@pytest.mark.parametrize("name", ["paper-fig3", "prefixes", "pad-at-group-end"])
def test_merge_vectors(tmp_path, name):
    group = {c["name"]: c["group"] for c in json.loads((VEC / "cases.json").read_text())}[name]
    d = VEC / name
    out, inv = tmp_path / "m.kb16", tmp_path / "inv.bin"
    r = run("merge", d / "run0.kb16", d / "run1.kb16", "-g", group, "--out", out, "--invalid", inv)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == (d / "merged.kb16").read_bytes()
    assert inv.read_bytes() == (d / "invalid.bin").read_bytes()


@pytest.mark.parametrize("m", MALFORMED, ids=[m["file"] for m in MALFORMED])
def test_malformed_vectors(tmp_path, m):
    path = VEC / m["file"]
    for args in (("decode", path), ("decode", path, "--keys")):
        r = run(*args, "--group", m["group"])
        line = assert_bad(r, f"kb16: {path}: ")
        if m["first_bad_entry"] is None:
            assert "not a multiple of 16" in line
        else:
            assert line == f"kb16: {path}: {m['reference_message']}"
    # the dump shows the good entries before the bad one
    if m["first_bad_entry"] is not None:
        assert len(run("decode", path).stdout.splitlines()) == m["first_bad_entry"]
    good = VEC / "paper-fig3" / "run0.kb16"
    out, inv = tmp_path / "m.kb16", tmp_path / "i.bin"
    assert_bad(run("merge", good, path, "--out", out, "--invalid", inv), f"kb16: {path}: ")
    assert_bad(run("merge", path, good, "--out", out, "--invalid", inv), f"kb16: {path}: ")
    assert not out.exists()


def test_bad_keys_text(tmp_path):
    txt, out = tmp_path / "k.txt", tmp_path / "o.kb16"
    cases = [
        ("0a 1\n0a 2\n", "line 2: key 0a not strictly greater"),
        ("# c\n0b 1\n0a 2\n", "line 3: key 0a not strictly greater"),
        ("0a 1\nzz 2\n", "line 2: bad hex key 'zz'"),
        ("0a\n", "line 1: expected '<hex key> <address>'"),
        ("0a 1 2\n", "line 1: expected"),
        ("0a 12x\n", "line 1: bad address '12x'"),
        ("0a -1\n", "line 1: bad address '-1'"),
        ("0a 0x100000000\n", "line 1: address 4294967296 is not a uint32"),
        (("00" * 17) + " 1\n", "line 1: key length 17 outside 1..16"),
        ("0a 1\n 2\n", "line 2: expected"),
    ]
    for text, msg in cases:
        txt.write_text(text)
        assert_bad(run("encode", txt, "--out", out), f"kb16: {txt}: {msg}")
    txt.write_bytes(b"\xff\xfe\x00garbage")
    assert_bad(run("encode", txt, "--out", out), f"kb16: {txt}: not a text file")
    assert not out.exists()


def test_file_problems(tmp_path):
    missing = tmp_path / "nope.kb16"
    assert_bad(run("decode", missing), f"kb16: {missing}: cannot read")
    assert_bad(run("merge", missing, missing, "--out", tmp_path / "o", "--invalid", tmp_path / "i"),
               f"kb16: {missing}: cannot read")
    good = VEC / "paper-fig3" / "run0.kb16"
    bad_out = tmp_path / "no" / "dir" / "o.kb16"
    assert_bad(run("merge", good, good, "--out", bad_out, "--invalid", tmp_path / "i"),
               f"kb16: {bad_out}: cannot write")


@pytest.mark.parametrize("args,fragment", [
    (("decode", "x.kb16", "--group", "1"), "argument --group/-g: 1 is outside the allowed range 2..256"),
    (("decode", "x.kb16", "--group", "sixteen"), "argument --group/-g: 'sixteen' is not a decimal integer"),
    (("gen", "--keys", "10", "--overlap", "1.5", "--out0", "a", "--out1", "b"),
     "argument --overlap: 1.5 is outside the allowed range 0 <= x <= 1"),
    (("gen", "--keys", "-3", "--out0", "a", "--out1", "b"), "argument --keys: '-3' is not a decimal integer"),
    (("gen", "--kind", "zipf", "--keys", "3", "--out0", "a", "--out1", "b"), "invalid choice"),
    (("frobnicate",), "invalid choice"),
])
def test_bad_arguments(args, fragment):
    assert_bad(run(*args), fragment)


def test_wrong_group_is_detected(tmp_path):
    # A run made with G=16 read with G=4: its long keys' virtual entries land in bad slots.
    o0, _, _, _ = gen(tmp_path, "a", "long", 100, 0, 3, 16)
    line = assert_bad(run("decode", o0, "-g", 4, "--keys"), f"kb16: {o0}: entry ")
    assert int(line.split("entry ")[1].split(":")[0]) < len(o0.read_bytes()) // 16
