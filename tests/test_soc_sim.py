"""Whole-SoC Verilator simulation (hw/soc + sim/soc) with the self-test firmware of fw/apps/selftest:
boot, UART out and in, exit codes, timer and external interrupts, DDR from the CPU with host load/dump,
bus faults, the max-cycles guard, the DMA + compaction IP path, the NAND controller slot, harness
argument errors. The first test builds everything (Mill + Verilator, a few minutes cold; cached after)."""
import random
import struct
import subprocess

import pytest

from lsmc.build import regmap
from lsmc.model import kb16
from lsmc.sim import soc

DDR = regmap.memmap().base("DDR")  # from the one memory map


@pytest.fixture(scope="module")
def exe():
    return soc.build_soc()


@pytest.fixture(scope="module")
def elf():
    return soc.build_selftest()


def run(elf, exe, arg, **kw):
    kw.setdefault("max_cycles", 5_000_000)
    res = soc.run_soc(elf, arg=arg, exe=exe, timeout=300, **kw)
    return res


def test_boot_uart_and_speed_line(elf, exe):
    res = run(elf, exe, 0)
    assert res.returncode == 0, res.uart + res.stderr
    assert "selftest: hello from LsmcSoc" in res.uart
    assert "mul 0x5eefaff7 div 125082 rem 855" in res.uart  # RV32M through the pipeline
    assert res.cycles and res.cycles > 1000 and res.mcycles_per_s > 0
    assert "framing" not in res.stderr


def test_statistics_lines_are_printed_and_parseable(elf, exe):
    """The closing lines every run prints on stderr (sim/common/run_stats.h), which the demo, the docs'
    speed table and benchmarks read: wall clock and CPU time over the same simulated cycles."""
    res = run(elf, exe, 4, max_cycles=300_000)
    lines = [line for line in res.stderr.splitlines() if line.startswith("sim: ")]
    cpu = [line for line in lines if line.startswith("sim: cpu time ")]
    wall = [line for line in lines if " cycles in " in line]
    assert len(cpu) == 1 and len(wall) == 1, res.stderr
    assert lines[-2:] == [cpu[0], wall[0]], "the two statistics lines close the run"
    assert res.cycles == 300_000  # counted from the end of reset, as --max-cycles is
    assert res.seconds > 0 and res.cpu_seconds > 0 and res.cpu_mcycles_per_s > 0
    # Each rate is the cycles over its own time, to the printed precision.
    assert res.mcycles_per_s == pytest.approx(res.cycles / res.seconds / 1e6, rel=0.02, abs=0.002)
    assert res.cpu_mcycles_per_s == pytest.approx(res.cycles / res.cpu_seconds / 1e6, rel=0.02, abs=0.002)
    # A run without a cpu-time line is reported as unknown, not as zero.
    bare = soc.soc_result(0, b"", res.stderr.replace(cpu[0], "").encode())
    assert bare.cycles == res.cycles and bare.cpu_mcycles_per_s is None


def test_exit_code_is_returned(elf, exe):
    res = run(elf, exe, 1)
    assert res.returncode == 42
    assert "exit: 42" in res.uart  # the harness drains the UART after SIM_EXIT


def test_timer_interrupt(elf, exe):
    res = run(elf, exe, 2)
    assert res.returncode == 0, res.uart
    assert "timer: ticks 1 cause 0x80000007" in res.uart


def test_external_interrupt_through_controller(elf, exe):
    res = run(elf, exe, 7)
    assert res.returncode == 0, res.uart
    assert "ext: irqs 1 cause 0x8000000b" in res.uart


def test_bus_fault_traps(elf, exe):
    res = run(elf, exe, 6)
    assert res.returncode == 0, res.uart
    assert "fault: count 1 cause 0x00000005" in res.uart


def _sum31(data: bytes) -> int:
    s = 0
    for (w,) in struct.iter_unpack("<I", data):
        s = (s * 31 + w) & 0xFFFFFFFF
    return s


def test_ddr_cpu_access_load_and_dump(elf, exe, tmp_path):
    blob = random.Random(7).randbytes(4096)
    (tmp_path / "in.bin").write_bytes(blob)
    out = tmp_path / "out.bin"
    log = tmp_path / "uart.log"
    res = run(elf, exe, 3, loads={DDR + (1 << 20): tmp_path / "in.bin"},
              dumps=[(DDR + (2 << 20), 1024, out)], log=log)
    assert res.returncode == 0, res.uart
    assert f"ddr: bad 0 sum {_sum31(blob):#010x}" in res.uart
    assert out.read_bytes() == b"".join(struct.pack("<I", 0xC0DE0000 + i) for i in range(256))
    assert log.read_text() == res.uart


def test_ddr_latency_option_changes_timing(elf, exe):
    fast = run(elf, exe, 3, ddr_latency=2)
    slow = run(elf, exe, 3, ddr_latency=80)
    assert fast.returncode == slow.returncode == 0
    assert slow.cycles > fast.cycles * 1.2, (fast.cycles, slow.cycles)


def test_max_cycles_guard(elf, exe):
    res = run(elf, exe, 4, max_cycles=200_000)
    assert res.timed_out and res.returncode == soc.TIMEOUT_EXIT
    assert "hang: looping forever" in res.uart
    assert "--max-cycles 200000 reached" in res.stderr
    assert res.cycles == 200_000


def test_uart_rx_paced_by_prompt(elf, exe):
    res = run(elf, exe, 5, uart_in=r"hello soc\nquit\n", uart_prompt="> ")
    assert res.returncode == 0, res.uart + res.stderr
    assert "echo: hello soc\n" in res.uart and "echo: quit\n" in res.uart


def test_uart_at_hardware_baud_rate(elf, exe):
    """--uart-div -1 keeps the UART's reset divider (115200 baud at 100 MHz: 868 cycles per bit); the
    harness decodes and drives the line at whatever rate the UART register holds."""
    res = run(elf, exe, 5, uart_in=r"hi\nquit\n", uart_prompt="> ", extra=["--uart-div", "-1"])
    assert res.returncode == 0, res.uart + res.stderr
    assert "> echo: hi\n> echo: quit\n" in res.uart
    assert res.cycles > 20 * 10 * 868  # ~20 characters at 10 bits of 868 cycles


def test_uart_rx_from_file(elf, exe, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("abc\nquit\n")
    res = run(elf, exe, 5, uart_in=str(f))
    assert res.returncode == 0, res.uart
    assert "echo: abc\n" in res.uart


def test_dma_and_compaction_ip_smoke(elf, exe):
    res = run(elf, exe, 8)
    assert res.returncode == 0, res.uart
    assert "ip: cached 0xdeadbeef after invalidate 0x00000001" in res.uart  # D$ flush instruction works
    assert "ip: mismatches 0" in res.uart
    assert "out 48 inv 4" in res.uart


def _keys(rng, n, addr_base):
    keys = sorted({bytes(rng.randrange(97, 123) for _ in range(rng.randrange(1, 17))) for _ in range(n)})
    return [(k, addr_base + i) for i, k in enumerate(keys)]


def test_host_job_matches_reference_model(elf, exe, tmp_path):
    """Random runs with shared keys, long keys (virtual entries) and pads; the result must equal the
    Python reference merge byte for byte, through the DMA's 256-bit DDR port."""
    rng = random.Random(2024)
    group = 8
    k0 = _keys(rng, 120, 0x10000)
    k1 = _keys(rng, 100, 0x20000) + [(k, 0x30000 + i) for i, (k, _) in enumerate(k0[::7])]
    k1 = sorted(dict(k1).items())
    run0, run1 = kb16.encode(k0, group), kb16.encode(k1, group)
    want_out, want_inv = kb16.merge(run0, run1, group)
    desc = struct.pack("<4I", 0x21424F4A, len(run0), len(run1), group)
    for name, data in (("desc", desc), ("run0", run0), ("run1", run1)):
        (tmp_path / name).write_bytes(data)
    res = run(elf, exe, 10, max_cycles=20_000_000,
              loads={DDR: tmp_path / "desc", DDR + (16 << 20): tmp_path / "run0", DDR + (32 << 20): tmp_path / "run1"},
              dumps=[(DDR, 32, tmp_path / "result"), (DDR + (48 << 20), len(want_out) + 64, tmp_path / "out"),
                     (DDR + (64 << 20), len(want_inv) + 32, tmp_path / "inv")])
    assert res.returncode == 0, res.uart
    status, out_bytes, inv_bytes = struct.unpack("<3I", (tmp_path / "result").read_bytes()[16:28])
    assert status & 7 == 2
    assert (out_bytes, inv_bytes) == (len(want_out), len(want_inv))
    assert (tmp_path / "out").read_bytes()[:out_bytes] == want_out
    assert (tmp_path / "inv").read_bytes()[:inv_bytes] == want_inv
    assert len(want_inv) > 0


def test_nand_controller_slot(elf, exe):
    res = run(elf, exe, 9)
    assert res.returncode == 0, res.uart
    assert "nand: id 0x4e414e44" in res.uart
    # LsmcSocConfig's default: 4 channels, each controller at its own NAND_CHANNEL_BASE(c)
    assert "nand: channels 0x00000004" in res.uart


@pytest.mark.parametrize("args, message", [
    (["--arg"], "--arg needs a value"),
    (["--bogus"], "unknown option --bogus"),
    (["--load", "0x10=/nonexistent"], "cannot read /nonexistent"),
    (["--dump", "0x40000000=x"], "--dump wants ADDR:LEN=FILE"),
    (["--max-cycles", "12x"], "bad number '12x'"),
])
def test_harness_rejects_bad_arguments(elf, exe, args, message):
    res = subprocess.run([str(exe), str(elf), *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert message in res.stderr


def test_harness_rejects_bad_firmware(exe, tmp_path):
    bad = tmp_path / "junk.elf"
    bad.write_bytes(b"not an elf at all" * 8)
    res = subprocess.run([str(exe), str(bad)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "not an ELF file" in res.stderr
    res = subprocess.run([str(exe), str(tmp_path / "missing.elf")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "firmware: cannot read" in res.stderr


def test_load_outside_memory_is_refused(elf, exe, tmp_path):
    (tmp_path / "x").write_bytes(b"1234")
    res = soc.run_soc(elf, exe=exe, loads={0x10000000: tmp_path / "x"})
    assert res.returncode == 2 and "neither in on-chip RAM nor in DDR" in res.stderr


@pytest.mark.long  # a second, traced SoC build (5 min); scripts/test keeps the IP harness's --wave test
def test_wave_dump(elf, tmp_path):
    wave = tmp_path / "boot.fst"
    res = soc.run_soc(elf, arg=1, wave=wave, max_cycles=100_000)
    assert res.returncode == 42
    assert wave.stat().st_size > 1000
