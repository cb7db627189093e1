"""sim/common/tb.h, the harnesses' testbench library: its PRNG against the xorshift64* definition
(Vigna, "An experimental exploration of Marsaglia's xorshift generators, scrambled") written here in
Python, its pause generators' rate and reproducibility, and a stream source feeding a sink through
random stalls on both sides without losing, duplicating or reordering a byte."""
import shutil
import subprocess

import pytest

from lsmc.paths import ROOT

MASK = (1 << 64) - 1


def xorshift64star(seed: int):
    """The generator as defined, seeded as tb.h's Prng::seed documents (golden-ratio multiply, odd add)."""
    s = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & MASK or 1
    while True:
        s ^= s >> 12
        s ^= (s << 25) & MASK
        s ^= s >> 27
        yield (s * 0x2545F4914F6CDD1D) & MASK


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    if not shutil.which("verilator") or not shutil.which("g++"):
        pytest.skip("needs g++ and verilator's headers")
    root = subprocess.run(["verilator", "--getenv", "VERILATOR_ROOT"], capture_output=True, text=True,
                          check=True).stdout.strip()
    out = tmp_path_factory.mktemp("tb") / "tb_check"
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'sim' / 'common'}",
                    "-isystem", f"{root}/include", "-isystem", f"{root}/include/vltstd",
                    str(ROOT / "tests" / "sim_tb" / "tb_check.cpp"), "-o", str(out)], check=True)
    return out


def run(exe, *args) -> str:
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**64 - 1])
def test_prng_is_xorshift64star(exe, seed):
    ref = xorshift64star(seed)
    assert [int(x) for x in run(exe, "prng", seed, 50).split()] == [next(ref) for _ in range(50)]


def test_pause_rate_and_reproducibility(exe):
    n = 200_000
    held, after = map(int, run(exe, "pause", 7, 0.25, n).split())
    assert abs(held / n - 0.25) < 0.01
    assert run(exe, "pause", 7, 0.25, n) == run(exe, "pause", 7, 0.25, n)  # seeded: the same run again
    assert run(exe, "pause", 8, 0.25, n) != run(exe, "pause", 7, 0.25, n)
    # probability 0 holds nothing back and draws nothing: the next number is the generator's first
    held0, first = map(int, run(exe, "pause", 7, 0, n).split())
    assert held0 == 0 and first == next(xorshift64star(7))


@pytest.mark.parametrize("words, nbytes, psrc, psnk", [(1, 64, 0, 0), (4, 1000, 0.3, 0.6), (4, 17, 0.9, 0.9),
                                                       (1, 4, 0.5, 0)])
def test_stream_source_to_sink_under_stalls(exe, words, nbytes, psrc, psnk):
    data, lasts, stats = run(exe, "stream", 3, psrc, psnk, nbytes, words).splitlines()
    beats = -(-nbytes // (4 * words))
    sent = bytes((i * 7 + 3) & 0xFF for i in range(nbytes))
    got = bytes.fromhex(data)
    assert got == sent + bytes(beats * 4 * words - nbytes)  # the short final beat zero-filled
    assert lasts.split() == ["lasts", str(beats - 1)]
    f = stats.split()
    cycles, violations, fired = int(f[1]), int(f[3]), int(f[5])
    assert violations == 0 and fired == beats
    assert (cycles == beats) == (psrc == 0 and psnk == 0)  # stalls cost cycles, none without them


def test_sink_catches_a_beat_changed_before_it_was_taken(exe):
    assert run(exe, "unstable").split() == ["violations", "3"]
