"""Generated Verilog of the compaction IP: both widths generate, carry the contract's top-level
ports and regif outputs, and pass `verilator --lint-only -Wall` with only the documented waivers of
hw/ip/compaction/data/lint.vlt (each scoped to CompactionIp.v and a message pattern, each explained)."""
import re
import subprocess

import pytest

from lsmc import build

ROOT = build.ROOT
WAIVERS = ROOT / "hw" / "ip" / "compaction" / "data" / "lint.vlt"
WIDTHS = (128, 32)


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"w{w}")
def gen(request):
    w = request.param
    out = build.GEN / f"compaction_w{w}"
    build.generate("compaction", "compaction.Generate", out,
                   ["--width", str(w), "--out", str(out.relative_to(ROOT))])
    return w, out


def lint(verilog, extra=()):
    return subprocess.run(["verilator", "--lint-only", "-Wall", *map(str, extra), str(verilog),
                           "--top-module", "CompactionIp"], capture_output=True, text=True, timeout=300)


def test_lint_clean_with_waivers(gen):
    _, out = gen
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
    _, out = gen
    res = lint(out / "CompactionIp.v")
    rules = set(re.findall(r"%Warning-([A-Z]+):", res.stderr))
    waived = set(re.findall(r"-rule ([A-Z]+)", WAIVERS.read_text()))
    assert rules and rules <= waived, f"unexpected rules {rules - waived}"


def test_top_ports_and_outputs(gen):
    w, out = gen
    v = (out / "CompactionIp.v").read_text()
    m = re.search(r"module CompactionIp \((.*?)\);", v, re.S)
    assert m, "no module CompactionIp"
    ports = dict((name, width) for width, name in
                 re.findall(r"(?:input|output)\s+wire\s+(\[\d+:0\])?\s*(\w+)", m.group(1)))
    for s in ("key0", "key1"):
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
