"""Register block of the compaction IP over AXI4-Lite (RTL in Verilator, both widths).

Checks docs/architecture.md's register table: offsets and reset values, RW/RO/W1C behaviour,
the Table I counters (writable, counting 32-bit words), COUNT_CONTROL modes 1/0/2, HW_CYCLES,
the interrupt (enable, status, write-1-to-clear, level of the irq pin), ID/VERSION, CTRL
self-clearing, soft reset keeping the configuration, and inputs not ready while idle.
Scripts use the harness's `expect` command; a failed expectation is listed by the test.
"""
import pytest

from lsmc.model import kb16
from lsmc.sim import ipsim

R = ipsim.REGS
G = 16


@pytest.fixture(scope="module", params=ipsim.WIDTHS, ids=lambda w: f"w{w}")
def width(request):
    ipsim.build(request.param)
    return request.param


def run(width, lines):
    res = ipsim.run_script(lines, width=width, check=False)
    fails = [l for l in res.lines if " FAIL" in l]
    assert res.returncode == 0 and not fails, "\n".join(fails) + "\n" + res.stderr
    return res


def x(v):
    return f"0x{v:08x}"


def job_lines(tmp_path, run0, run1, name="j", group=G, start=True, run=True):
    """Configure and start one job (files written under tmp_path)."""
    lines = [f"write {R['GROUP']} {group}", f"write {R['IN0_BYTES']} {len(run0)}",
             f"write {R['IN1_BYTES']} {len(run1)}"]
    for k, data in enumerate((run0, run1)):
        if data:
            f = tmp_path / f"{name}.in{k}"
            f.write_bytes(data)
            lines.append(f"load {k} {f}")
    if start:
        lines.append(f"write {R['CTRL']} 1")
    if run:
        lines.append("run")
    return lines


@pytest.fixture(scope="module")
def runs():
    r0, r1 = ipsim.encoded_runs("uniform", 200, 0.5, 5, G)
    merged, inv = kb16.merge(r0, r1, G)
    return r0, r1, merged, inv


def bad_run():
    run, _ = ipsim.encoded_runs("short", 80, 0.0, 6, G)
    return run[:16 * 5] + bytes([0, 0, 0, 0x80]) + run[16 * 5 + 4:]      # reserved bit 31 at entry 5


def test_reset_values_and_identification(width):
    lines = [f"expect {off} {x(ipsim.RESET_VALUES[n])}" for n, off in R.items() if n in ipsim.RESET_VALUES]
    lines += [f"expect {R['VERSION']} {x(ipsim.version_value(width))}", "expect-irq 0"]
    res = run(width, lines)
    assert sum(l.startswith("expect 0x") and " ok " in l for l in res.lines) == len(R)
    assert ipsim.version_value(width) >> 16 == width and ipsim.RESET_VALUES["ID"] == 0x4C534D43


def test_rw_registers_and_read_only_ones(width):
    patterns = {"ENCODER_DATA_OUT_CNT": 0xDEADBEE0, "INVALID_ADDR_OUT_CNT": 0x01234567,
                "KEY0_ENTRY_IN_CNT": 0x89ABCDEF, "KEY1_ENTRY_IN_CNT": 0xFFFFFFFF, "THROUGHPUT_COUNTER": 0x5A5A5A5A,
                "GROUP": 200, "IRQ_ENABLE": 3, "IN0_BYTES": 0x12345670, "IN1_BYTES": 0x0FEDCBA0,
                "OUT_CAPACITY": 0xA5A5A5A0, "INV_CAPACITY": 0x00000004}
    assert set(patterns) == set(ipsim.RW_REGS)
    lines = []
    for n, v in patterns.items():
        lines += [f"write {R[n]} {x(v)}", f"expect {R[n]} {x(v)}"]
    for n in patterns:                   # firmware can zero every RW register, counters included
        lines += [f"write {R[n]} 0", f"expect {R[n]} 0"]
    lines.append("expect-irq 0")
    for n in ("ID", "VERSION", "STATUS", "ERR_INDEX", "HW_CYCLES", "OUT_KEYS"):
        want = ipsim.version_value(width) if n == "VERSION" else ipsim.RESET_VALUES[n]
        lines += [f"write {R[n]} 0xFFFFFFFF", f"expect {R[n]} {x(want)}"]
    lines += [f"expect {R['CTRL']} 0"]
    run(width, lines)


def test_table1_counters_count_words_and_accumulate(width, tmp_path, runs):
    r0, r1, merged, inv = runs
    zero = [f"write {R[n]} 0" for n in ("ENCODER_DATA_OUT_CNT", "INVALID_ADDR_OUT_CNT",
                                       "KEY0_ENTRY_IN_CNT", "KEY1_ENTRY_IN_CNT")]

    def counts(k):
        return [f"expect {R['ENCODER_DATA_OUT_CNT']} {k * len(merged) // 4}",
                f"expect {R['INVALID_ADDR_OUT_CNT']} {k * len(inv) // 4}",
                f"expect {R['KEY0_ENTRY_IN_CNT']} {k * len(r0) // 4}",
                f"expect {R['KEY1_ENTRY_IN_CNT']} {k * len(r1) // 4}"]
    lines = zero + job_lines(tmp_path, r0, r1, "a") + counts(1)
    lines += ["stall key0 0.3", "stall out 0.4"] + job_lines(tmp_path, r0, r1, "b") + counts(2)
    lines += zero + counts(0)
    res = run(width, lines)
    assert [r["status"] for r in res.records("run")] == ["done", "done"]


def test_counters_skip_discarded_words_after_error(width, tmp_path):
    bad = bad_run()
    lines = [f"write {R['KEY0_ENTRY_IN_CNT']} 0"] + job_lines(tmp_path, bad, b"") + [f"read {R['KEY0_ENTRY_IN_CNT']}"]
    res = run(width, lines)
    rec = res.records("run")[0]
    assert (rec["status"], rec["code"], rec["index"], rec["drained"]) == ("error", kb16.RESERVED_BITS, 5, 1)
    words = res.reads()[-1]
    assert 0 < words < len(bad) // 4, f"KEY0_ENTRY_IN_CNT {words}: discarded words must not count"
    assert words >= 5 * 4, "the words of the five good entries were accepted"


def test_count_control_modes(width, tmp_path, runs):
    r0, r1, _, _ = runs
    tp, cc = R["THROUGHPUT_COUNTER"], R["COUNT_CONTROL"]
    lines = [f"write {cc} 1", f"read {tp}", f"read {tp}", "step 100", f"read {tp}",    # mode 1: every cycle
             f"write {cc} 0", f"read {tp}", "step 100", f"read {tp}",                  # mode 0: hold
             f"write {cc} 1", f"read {tp}",                                            # mode 1 clears again
             f"write {cc} 2", f"expect {tp} 0", "step 50", f"expect {tp} 0"]           # mode 2: idle until input
    lines += job_lines(tmp_path, r0, r1) + [f"read {tp}", f"read {R['HW_CYCLES']}", "step 100", f"read {tp}"]
    lines += [f"write {cc} 2"] + job_lines(tmp_path, b"", b"", "e") + [f"read {tp}", f"read {R['HW_CYCLES']}"]
    res = run(width, lines)
    a, b, c, held0, held1, cleared, tp_job, hw_job, tp_after, tp_empty, hw_empty = res.reads()
    gap = b - a                          # cycles between two back-to-back reads
    assert gap > 0 and c - b == gap + 100
    assert held0 == held1 and held0 >= c
    assert cleared < held1 and cleared <= 2 * gap + 4
    assert tp_job == hw_job > 0 and tp_after == tp_job
    rec = res.records("run")
    assert rec[0]["status"] == "done" and abs(rec[0]["sim_cycles"] - tp_job) <= 2
    assert rec[1]["status"] == "done" and 1 <= tp_empty == hw_empty < 50


def test_hw_cycles_window(width, tmp_path, runs):
    r0, r1, merged, _ = runs
    small0, small1 = ipsim.encoded_runs("short", 20, 0.5, 1, G)
    lines = job_lines(tmp_path, r0, r1, "big") + [f"read {R['HW_CYCLES']}", f"write {R['HW_CYCLES']} 0",
                                                  f"read {R['HW_CYCLES']}"]
    lines += ["stall key0 0.5", "stall key1 0.5"] + job_lines(tmp_path, small0, small1, "small", start=False, run=False)
    lines += [f"write {R['CTRL']} 1", f"expect {R['HW_CYCLES']} 0 0xffffff00", "run", f"read {R['HW_CYCLES']}"]
    res = run(width, lines)
    hw_big, hw_ro, hw_small = res.reads()
    big, small = res.records("run")
    assert hw_ro == hw_big, "HW_CYCLES is read-only"
    assert abs(big["sim_cycles"] - hw_big) <= 2 and abs(small["sim_cycles"] - hw_small) <= 2
    assert hw_small < hw_big, "HW_CYCLES restarts at START"
    beats_out = len(merged) // (width // 8)
    assert hw_big >= beats_out, "faster than one output beat per clock is impossible"


def test_irq_enable_status_w1c_and_pin(width, tmp_path, runs):
    r0, r1, _, _ = runs
    en, st = R["IRQ_ENABLE"], R["IRQ_STATUS"]
    lines = [f"write {en} 0"] + job_lines(tmp_path, r0, r1, "d")
    lines += [f"expect {st} 1", "expect-irq 0",             # status set even when not enabled
              f"write {en} 1", "expect-irq 1",              # level: STATUS & ENABLE
              f"write {st} 2", f"expect {st} 1", "expect-irq 1",   # W1C of the other bit: no effect
              f"write {st} 0", f"expect {st} 1",
              f"write {en} 2", "expect-irq 0", f"write {en} 1", "expect-irq 1",
              f"write {st} 1", f"expect {st} 0", "expect-irq 0"]
    lines += [f"write {en} 2"] + job_lines(tmp_path, bad_run(), b"", "e")
    lines += [f"expect {st} 2", "expect-irq 1", f"write {en} 1", "expect-irq 0", f"write {en} 3", "expect-irq 1",
              f"write {st} 2", f"expect {st} 0", "expect-irq 0"]
    lines += [f"write {R['CTRL']} 2", f"expect {R['STATUS']} 0"] + job_lines(tmp_path, bad_run(), b"", "f")
    lines += [f"expect {st} 2", "expect-irq 1", f"write {R['CTRL']} 2",        # soft reset clears IRQ_STATUS
              f"expect {st} 0", "expect-irq 0", f"expect {en} 3"]
    res = run(width, lines)
    assert [r["status"] for r in res.records("run")] == ["done", "error", "error"]


def test_ctrl_self_clearing_and_busy(width, tmp_path, runs):
    r0, r1, _, _ = runs
    st = R["STATUS"]
    lines = ["stall key0 0.9", "stall key1 0.9"] + job_lines(tmp_path, r0, r1, run=False)
    lines += [f"expect {R['CTRL']} 0", f"expect {st} 1 0xff07", "run", f"expect {st} 2 0xff07",
              f"expect {R['CTRL']} 0", "stall key0 0", "stall key1 0"]
    lines += job_lines(tmp_path, r0, r1, "again")  # START again after done, without a soft reset
    lines += [f"expect {st} 2 0xff07"]
    res = run(width, lines)
    assert [r["status"] for r in res.records("run")] == ["done", "done"]


def test_soft_reset_keeps_configuration(width, tmp_path):
    config = {"GROUP": 5, "IN0_BYTES": 0x40, "IN1_BYTES": 0x80, "OUT_CAPACITY": 0x1000, "INV_CAPACITY": 0x2000,
              "IRQ_ENABLE": 3, "COUNT_CONTROL": 0, "ENCODER_DATA_OUT_CNT": 11, "INVALID_ADDR_OUT_CNT": 12,
              "KEY0_ENTRY_IN_CNT": 13, "KEY1_ENTRY_IN_CNT": 14, "THROUGHPUT_COUNTER": 1234}
    bad = bad_run()
    lines = [f"write {R['GROUP']} 16", f"write {R['IN0_BYTES']} {len(bad)}", f"write {R['IN1_BYTES']} 0"]
    f = tmp_path / "bad"
    f.write_bytes(bad)
    lines += [f"load 0 {f}", f"write {R['CTRL']} 1", "run", f"expect {R['ERR_INDEX']} 5",
              f"expect {R['STATUS']} 0x104 0x1ff06"]
    lines += [f"write {R[n]} {v}" for n, v in config.items()]
    lines += [f"write {R['CTRL']} 2"]
    lines += [f"expect {R[n]} {v}" for n, v in config.items()]
    lines += [f"expect {R[n]} 0" for n in ("STATUS", "ERR_INDEX", "IRQ_STATUS", "HW_CYCLES")]
    lines += ["expect-irq 0", f"expect {R['CTRL']} 0"]
    run(width, lines)


def test_inputs_not_ready_while_idle(width, tmp_path, runs):
    r0, r1, _, _ = runs
    beats0 = -(-len(r0) // (width // 8))
    lines = job_lines(tmp_path, r0, r1, "pre", start=False, run=False) + ["step 200", "info"]
    lines += [f"write {R['CTRL']} 1", "run"]
    lines += job_lines(tmp_path, r0, b"", "post", start=False, run=False) + ["step 200", "info"]   # after done
    lines += [f"write {R['CTRL']} 2", "step 200", "info"]                                         # after soft reset
    res = run(width, lines)
    infos = res.records("info")
    assert infos[0]["left0"] == beats0 and infos[0]["left1"] > 0, "inputs taken before START"
    assert infos[1]["left0"] == beats0 and infos[2]["left0"] == beats0, "inputs taken while idle"
    assert res.records("run")[0]["status"] == "done"


# The register map of docs/architecture.md (the contract; the paper's Table I offsets), written out here on
# purpose: the generated JSON, the C header and ipsim.REGS must all match it.
CONTRACT = {
    "ENCODER_DATA_OUT_CNT": 0x00, "INVALID_ADDR_OUT_CNT": 0x04, "KEY0_ENTRY_IN_CNT": 0x08,
    "KEY1_ENTRY_IN_CNT": 0x0C, "COUNT_CONTROL": 0x10, "THROUGHPUT_COUNTER": 0x14, "ID": 0x18,
    "VERSION": 0x1C, "CTRL": 0x20, "GROUP": 0x24, "STATUS": 0x28, "ERR_INDEX": 0x2C,
    "IRQ_ENABLE": 0x30, "IRQ_STATUS": 0x34, "IN0_BYTES": 0x38, "IN1_BYTES": 0x3C,
    "OUT_CAPACITY": 0x40, "INV_CAPACITY": 0x44, "HW_CYCLES": 0x48, "OUT_KEYS": 0x4C,
}


def test_generated_header_matches_contract(width):
    defs = ipsim.header_defines(width)
    assert defs, "compaction_regs.h defines nothing"
    assert dict(R) == CONTRACT, "compaction_regs.json differs from the contract"
    missing = [f"{name} @ 0x{off:02x}" for name, off in CONTRACT.items() if defs.get(f"CIP_{name}") != off]
    assert not missing, f"compaction_regs.h lacks offsets for: {', '.join(missing)}"
    bits = {"CIP_CTRL_START_SHIFT": 0, "CIP_CTRL_SOFT_RESET_SHIFT": 1, "CIP_STATUS_BUSY_SHIFT": 0,
            "CIP_STATUS_DONE_SHIFT": 1, "CIP_STATUS_ERROR_SHIFT": 2, "CIP_STATUS_ERR_CODE_SHIFT": 8,
            "CIP_STATUS_ERR_CODE_MASK": 0xFF00, "CIP_STATUS_ERR_INPUT_SHIFT": 16, "CIP_IRQ_ENABLE_DONE_SHIFT": 0,
            "CIP_IRQ_ENABLE_ERROR_SHIFT": 1, "CIP_IRQ_STATUS_DONE_SHIFT": 0, "CIP_IRQ_STATUS_ERROR_SHIFT": 1,
            "CIP_VERSION_IP_MASK": 0xFFFF, "CIP_VERSION_WIDTH_SHIFT": 16}
    assert {k: defs.get(k) for k in bits} == bits
