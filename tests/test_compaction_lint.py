"""Generated Verilog of the compaction IP: both widths (and 4 and 8 inputs at 128 bits) generate,
carry the contract's top-level ports and regif outputs, and pass `verilator --lint-only -Wall` with
only the documented waivers of hw/ip/compaction/data/lint.vlt (each scoped to CompactionIp.v and a
message pattern, each explained)."""
import re
import subprocess

import pytest

from lsmc import build
from lsmc.sim import ipsim

ROOT = build.ROOT
WAIVERS = ROOT / "hw" / "ip" / "compaction" / "data" / "lint.vlt"
CONFIGS = ((128, 2), (32, 2), (128, 4), (128, 8))   # (width, ways)


@pytest.fixture(scope="module", params=CONFIGS, ids=lambda c: f"w{c[0]}" + ("" if c[1] == 2 else f"k{c[1]}"))
def gen(request):
    w, k = request.param
    return w, ipsim.generate(w, k), k


def lint(verilog, extra=()):
    return subprocess.run(["verilator", "--lint-only", "-Wall", *map(str, extra), str(verilog),
                           "--top-module", "CompactionIp"], capture_output=True, text=True, timeout=300)


def test_lint_clean_with_waivers(gen):
    _, out, _ = gen
    res = lint(out / "CompactionIp.v", [WAIVERS])
    assert res.returncode == 0 and "%Warning" not in res.stderr and "%Error" not in res.stderr, res.stderr[-4000:]


def test_waivers_are_scoped_and_explained():
    lines = WAIVERS.read_text().splitlines()
    assert lines[0].strip() == "`verilator_config"
    for i, line in enumerate(lines):
        if line.startswith("lint_off"):
            assert '-file "*CompactionIp.v"' in line and "-match" in line, f"unscoped waiver: {line}"
            above = next(l for l in reversed(lines[:i]) if not l.startswith("lint_off"))
            assert above.startswith("//"), f"waiver without an explanation: {line}"


def test_unwaived_lint_reports_only_waived_kinds(gen):
    """Without the waiver file the warnings are exactly of the waived rules (so the file is needed and
    nothing else hides behind it)."""
    _, out, _ = gen
    res = lint(out / "CompactionIp.v")
    rules = set(re.findall(r"%Warning-([A-Z]+):", res.stderr))
    waived = set(re.findall(r"-rule ([A-Z]+)", WAIVERS.read_text()))
    assert rules and rules <= waived, f"unexpected rules {rules - waived}"


def test_top_ports_and_outputs(gen):
    w, out, k = gen
    v = (out / "CompactionIp.v").read_text()
    m = re.search(r"module CompactionIp \((.*?)\);", v, re.S)
    assert m, "no module CompactionIp"
    ports = dict((name, width) for width, name in
                 re.findall(r"(?:input|output)\s+wire\s+(\[\d+:0\])?\s*(\w+)", m.group(1)))
    assert f"io_key{k}_valid" not in ports
    for s in (f"key{i}" for i in range(k)):
        assert ports[f"io_{s}_payload_fragment"] == f"[{w - 1}:0]"
        assert {f"io_{s}_valid", f"io_{s}_ready", f"io_{s}_payload_last"} <= ports.keys()
    assert ports["io_out_payload_fragment"] == f"[{w - 1}:0]"
    assert ports["io_invalid_payload_fragment"] == "[31:0]"
    assert ports["io_ctrl_aw_payload_addr"] == "[11:0]" and ports["io_ctrl_r_payload_data"] == "[31:0]"
    assert {"clk", "reset", "io_irq", "io_out_payload_last", "io_invalid_payload_last"} <= ports.keys()
    assert "posedge reset" not in v, "reset must be synchronous"
    header = (out / "compaction_regs.h").read_text()
    assert re.search(r"#define CIP_OUT_KEYS\s+0x0*4C\b", header), "header lacks OUT_KEYS"
    assert re.search(r"#define CIP_STATUS_ERR_CODE_SHIFT\s+8\b", header)
    md = (out / "compaction_regs.md").read_text()
    assert "| 0x4C | OUT_KEYS |" in md and (out / "compaction_regs.html").exists()
    assert (out / "compaction_regs.json").exists()
    if k == 2:  # the two-way map ends at OUT_KEYS
        assert "WAYS" not in header and "IN2_BYTES" not in header
    else:
        assert re.search(r"#define CIP_WAYS\s+0x0*50\b", header, re.I)
        for i in range(2, k):
            assert re.search(rf"#define CIP_IN{i}_BYTES\s+0x0*{0x54 + 8 * (i - 2):x}\b", header, re.I)
            assert re.search(rf"#define CIP_KEY{i}_ENTRY_IN_CNT\s+0x0*{0x58 + 8 * (i - 2):x}\b", header, re.I)
