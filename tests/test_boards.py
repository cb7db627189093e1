"""Board targets (boards/<board>/target.py, lsmc.boards): the generated gateware sources.

No Vivado here: the tests generate the LiteX sources (without --build), check that the top instantiates
the LSMC SoC and LiteDRAM, that the constraints hold the UART and DDR pins, that the SoC Verilog is read
by the Vivado script, and elaborate the top with yosys so a port-name or width mismatch between the
LiteX wiring and LsmcSoc fails here rather than in Vivado."""
import importlib.util
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from lsmc.boards import gateware, litex_soc, ports

ROOT = Path(__file__).resolve().parents[1]
BOARD_DIRS = {"kcu105": "KCU105", "arty_a7": "ArtyA7"}


def load_board(name):
    spec = importlib.util.spec_from_file_location(f"board_{name}", ROOT / "boards" / name / "target.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, BOARD_DIRS[name])


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    return ports.contract_stub_verilog(tmp_path_factory.mktemp("soc") / "LsmcSoc.v")


@pytest.fixture(scope="module", params=sorted(BOARD_DIRS))
def generated(request, stub, tmp_path_factory):
    board = load_board(request.param)
    out = tmp_path_factory.mktemp(board.name)
    litex_soc.build_target(board, out, soc_verilog=stub, compile_software=False)
    return board, out / "gateware"


# ------------------------------------------------------------------------------ port contract
def test_contract_ports_classified(stub):
    itf = ports.soc_interface(stub)
    assert (itf.ddr.data_width, itf.ddr_dma.data_width) == (32, 256)
    assert itf.ddr.id_width == 4 and itf.ddr.addr_width == 32
    assert itf.uart_txd.direction == "output" and itf.nand is None


def test_missing_port_is_reported(tmp_path, stub):
    bad = tmp_path / "LsmcSoc.v"
    bad.write_text(stub.read_text().replace("io_ddrDma_r_payload_last", "io_ddrDma_r_payload_lst"))
    with pytest.raises(ports.BoardError, match="io_ddrDma_r_payload_last missing"):
        ports.soc_interface(bad)


def test_sim_ctrl_variant_rejected(tmp_path):
    v = ports.contract_stub_verilog(tmp_path / "LsmcSoc.v", extra_ports=[("input", "io_simArg", 32)])
    with pytest.raises(ports.BoardError, match="--no-sim-ctrl"):
        ports.soc_interface(v)


def test_unknown_port_rejected(tmp_path):
    v = ports.contract_stub_verilog(tmp_path / "LsmcSoc.v", extra_ports=[("input", "io_gpio", 4)])
    with pytest.raises(ports.BoardError, match="io_gpio"):
        ports.soc_interface(v)


def test_wrong_strobe_width_rejected(tmp_path, stub):
    bad = tmp_path / "LsmcSoc.v"
    bad.write_text(stub.read_text().replace("[31:0] io_ddrDma_w_payload_strb", "[15:0] io_ddrDma_w_payload_strb"))
    with pytest.raises(ports.BoardError, match="strobe"):
        ports.soc_interface(bad)


def test_missing_file_and_module(tmp_path):
    with pytest.raises(ports.BoardError, match="not found"):
        ports.parse_ports(tmp_path / "none.v")
    (tmp_path / "x.v").write_text("module Other(input wire a);\nendmodule\n")
    with pytest.raises(ports.BoardError, match="module LsmcSoc not found"):
        ports.parse_ports(tmp_path / "x.v")


# ------------------------------------------------------------------------------ generated sources
def test_top_instantiates_soc_and_litedram(generated):
    board, gw = generated
    top = (gw / f"{board.name}.v").read_text()
    inst = re.search(r"^LsmcSoc lsmc_soc\((.*?)\);", top, re.S | re.M)
    assert inst, "LsmcSoc instance missing"
    conns = dict(re.findall(r"\.(\w+)\s*\(([^()]*)\)", inst.group(1)))
    itf = ports.soc_interface(gw / "LsmcSoc.v")
    assert set(conns) == {p.name for p in itf.ports}  # every SoC port wired
    assert conns["clk"].strip() == "lsmc_clk"  # the SoC runs in its own 100 MHz domain
    assert all(conns[p.name].strip() for p in itf.ports)
    # LiteDRAM controller, PHY and the two AXI->native bridges, the second 256 bits wide.
    assert "litedramcore" in top or "LiteDRAMCore" in top or "sdram_bankmachine" in top
    assert len(re.findall(r"axi2native|litedramaxi2native", top, re.I)) > 0
    assert re.search(r"\[255:0\]\s+\w*axiinterface1_w_payload_data", top)


def test_constraints_and_sources(generated):
    board, gw = generated
    xdc = (gw / f"{board.name}.xdc").read_text()
    for pin in ("serial_tx", "serial_rx", "ddram_dq[0]", "ddram_dqs_p[0]", "ddram_a[0]", "cpu_reset"):
        assert re.search(rf"set_property (LOC|PACKAGE_PIN) \w+ \[get_ports \{{{re.escape(pin)}\}}\]", xdc), pin
    tcl = (gw / f"{board.name}.tcl").read_text()
    assert f"read_verilog {{{gw / 'LsmcSoc.v'}}}" in tcl
    assert "create_clock" in xdc or "create_clock" in tcl
    # 100 MHz SoC clock from the CRG's PLL/MMCM (period constraint propagates from the input clock).
    assert re.search(r"CLKOUT\d_DIVIDE", (gw / f"{board.name}.v").read_text())


def test_bios_calibration_csrs(generated):
    board, gw = generated
    csr = (gw.parent / "software" / "include" / "generated" / "csr.h").read_text()
    # liblitedram writes these after leveling + memtest; they release the SoC from reset.
    assert "ddrctrl_init_done_write" in csr and "ddrctrl_init_error_write" in csr
    assert "sdram_dfii_control_write" in csr


@pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys not installed")
def test_top_elaborates_with_soc(generated):
    board, gw = generated
    log = gateware.yosys_check_top(gw, board.name)
    assert not re.search(r"Warning: Resizing cell port \S*lsmc_soc", log), "LsmcSoc port width mismatch"


def test_yosys_check_catches_port_mismatch(tmp_path, stub):
    """The elaboration check above can fail: a SoC whose port differs from the wiring is refused."""
    if shutil.which("yosys") is None:
        pytest.skip("yosys not installed")
    board = load_board("arty_a7")
    out = tmp_path / "arty"
    litex_soc.build_target(board, out, soc_verilog=stub, compile_software=False)
    soc_v = out / "gateware" / "LsmcSoc.v"
    soc_v.write_text(soc_v.read_text().replace("io_uart_rxd", "io_uart_rx"))
    with pytest.raises(ports.BoardError, match="io_uart_rxd|does not have a port"):
        gateware.yosys_check_top(out / "gateware", board.name)


def test_nand_pins_on_header(tmp_path):
    board = load_board("arty_a7")
    v = ports.contract_stub_verilog(tmp_path / "LsmcSoc.v", nand_targets=1)
    out = tmp_path / "arty"
    litex_soc.build_target(board, out, soc_verilog=v, compile_software=False)
    xdc = (out / "gateware" / "arty_a7.xdc").read_text()
    for pin in ("lsmc_nand_dq[0]", "lsmc_nand_dq[7]", "lsmc_nand_cle", "lsmc_nand_rb_n", "lsmc_nand_ce_n"):
        assert f"[get_ports {{{pin}}}]" in xdc, pin
    assert "IOBUF" in (out / "gateware" / "arty_a7.v").read_text()  # DQ is bidirectional
    (tmp_path / "five").mkdir()
    v2 = ports.contract_stub_verilog(tmp_path / "five" / "LsmcSoc.v", nand_targets=5)
    with pytest.raises(ports.BoardError, match="4 CE#"):
        litex_soc.build_target(board, tmp_path / "arty2", soc_verilog=v2, compile_software=False)


def test_cli_without_vivado_generates_only(tmp_path, stub):
    exe = ROOT / "boards" / "kcu105" / "target.py"
    res = subprocess.run([str(exe), "--soc-verilog", str(stub), "--output-dir", str(tmp_path / "k"),
                          "--no-compile-software"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "k" / "gateware" / "kcu105.tcl").is_file()
    assert not (tmp_path / "k" / "gateware" / "kcu105.bit").exists()
    if shutil.which("vivado") is None:
        res = subprocess.run([str(exe), "--soc-verilog", str(stub), "--output-dir", str(tmp_path / "k2"), "--build",
                              "--no-compile-software"], capture_output=True, text=True, timeout=300)
        assert res.returncode == 2 and "needs Vivado" in res.stderr
    res = subprocess.run([str(exe), "--soc-verilog", str(tmp_path / "missing.v"), "--output-dir", str(tmp_path / "k3")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "missing.v: cannot read: No such file" in res.stderr


# ------------------------------------------------------------------------------ firmware preload
def _elf(segments, machine=0xF3):
    """Minimal ELF32 LE with PT_LOAD segments [(paddr, bytes, memsz)]."""
    phoff, n = 52, len(segments)
    data_off = phoff + 32 * n
    hdr = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    hdr += struct.pack("<HHIIIIIHHHHHH", 2, machine, 1, segments[0][0], phoff, 0, 0, 52, 32, n, 0, 0, 0)
    ph, body = b"", b""
    for paddr, blob, memsz in segments:
        ph += struct.pack("<8I", 1, data_off + len(body), paddr, paddr, len(blob), memsz, 7, 4)
        body += blob
    return hdr + ph + body


def test_elf_to_ram_words(tmp_path):
    elf = tmp_path / "fw.elf"
    elf.write_bytes(_elf([(0x8000_0000, bytes(range(8)), 8), (0x8000_0100, b"\xaa\xbb\xcc\xdd", 0x40)]))
    words = gateware.elf_to_ram_words(elf)
    assert len(words) == 64 * 1024
    assert words[0] == 0x03020100 and words[1] == 0x07060504 and words[0x40] == 0xDDCCBBAA and words[0x41] == 0


def test_elf_outside_ram_rejected(tmp_path):
    elf = tmp_path / "fw.elf"
    elf.write_bytes(_elf([(0x4000_0000, b"\x00" * 4, 4)]))
    with pytest.raises(ports.BoardError, match="outside the on-chip RAM"):
        gateware.elf_to_ram_words(elf)
    elf.write_bytes(_elf([(0x8000_0000, b"\x00" * 4, 4)], machine=0x3E))
    with pytest.raises(ports.BoardError, match="not a RISC-V"):
        gateware.elf_to_ram_words(elf)
    elf.write_bytes(b"not an elf")
    with pytest.raises(ports.BoardError, match="not a 32-bit"):
        gateware.elf_to_ram_words(elf)
    good = _elf([(0x8000_0000, bytes(range(8)), 8)])
    for cut in (30, 60, len(good) - 4):  # headers, tables or a segment's bytes past the file's end
        elf.write_bytes(good[:cut])
        with pytest.raises(ports.BoardError, match="truncated"):
            gateware.elf_to_ram_words(elf)
    with pytest.raises(ports.BoardError, match="cannot read the firmware"):
        gateware.elf_to_ram_words(tmp_path / "missing.elf")


def test_firmware_for_another_ram_size_rejected(tmp_path):
    """The real firmware carries the top of the RAM it was linked for (`__stack`): the default build
    (256 KiB) is refused for the ECPIX-5's 128 KiB RAM although its loadable bytes would fit, the build
    linked for 128 KiB is taken; and the RAM a board's SoC Verilog has is read from the map next to it."""
    from lsmc.build import firmware
    base = ports.ONCHIP_RAM_BASE
    with pytest.raises(ports.BoardError, match=r"linked for a 256 KiB on-chip RAM .*this SoC has 128 KiB"):
        gateware.elf_to_ram_words(firmware.build_firmware(), base, 128 * 1024)
    elf128 = firmware.build_firmware(ram_kib=128)
    assert gateware.elf_symbol(elf128.read_bytes(), "__stack") == base + 128 * 1024
    assert len(gateware.elf_to_ram_words(elf128, base, 128 * 1024)) == 32 * 1024
    with pytest.raises(ports.BoardError, match="linked for a 128 KiB"):
        gateware.elf_to_ram_words(elf128)
    v = tmp_path / "LsmcSoc.v"
    v.write_text("module LsmcSoc(input clk);\nendmodule\n")
    assert gateware.ram_region(v) == (base, ports.ONCHIP_RAM_SIZE)  # no map beside it: the default
    shutil.copyfile(firmware.memory_map_dir(128) / "lsmc_soc.json", tmp_path / "lsmc_soc.json")
    assert gateware.ram_region(v) == (base, 128 * 1024)


@pytest.mark.parametrize("style", ["symbols", "word"])
def test_attach_firmware_to_ram(tmp_path, style):
    depth = 16
    if style == "symbols":  # SpinalHDL's byte-lane split of a masked RAM
        decl = "".join(f"  reg [7:0] ram_symbol{i} [0:{depth - 1}];\n" for i in range(4))
    else:
        decl = f"  reg [31:0] ram [0:{depth - 1}];\n"
    v = tmp_path / "LsmcSoc.v"
    v.write_text(f"module Axi4SharedOnChipRam(input clk);\n{decl}endmodule\n")
    words = [0x11223344 + i for i in range(depth)]
    gateware.attach_firmware(v, words)
    text = v.read_text()
    if style == "symbols":
        for lane in range(4):
            assert f'$readmemh("LsmcSoc_ram_symbol{lane}.hex", ram_symbol{lane});' in text
            lines = (tmp_path / f"LsmcSoc_ram_symbol{lane}.hex").read_text().split()
            assert lines == [f"{(w >> (8 * lane)) & 0xFF:02x}" for w in words]
    else:
        assert '$readmemh("LsmcSoc_ram.hex", ram);' in text
        assert (tmp_path / "LsmcSoc_ram.hex").read_text().split()[1] == "11223345"
    with pytest.raises(ports.BoardError, match="already has an init file"):
        gateware.attach_firmware(v, words)
    if shutil.which("yosys"):  # the result is still valid Verilog
        subprocess.run(["yosys", "-q", "-p", f"read_verilog {v}"], cwd=tmp_path, check=True)


def test_attach_firmware_needs_ram(tmp_path):
    v = tmp_path / "LsmcSoc.v"
    v.write_text("module LsmcSoc(input clk);\n  reg [31:0] other [0:3];\nendmodule\n")
    with pytest.raises(ports.BoardError, match="no 65536-word RAM"):
        gateware.attach_firmware(v, [0] * 65536)


def test_prefix_modules(tmp_path):
    v = tmp_path / "LsmcSoc.v"
    v.write_text("module LsmcSoc (input wire clk);\n  VexRiscv cpu (\n    .clk(clk)\n  );\n"
                 "  (* keep_hierarchy = \"TRUE\" *) BufferCC #(\n    .W(1)\n  ) cc (\n    .clk(clk)\n  );\n"
                 "  wire VexRiscv_unused;\nendmodule\nmodule VexRiscv (input wire clk);\nendmodule\n"
                 "module BufferCC #(parameter W = 1) (input wire clk);\nendmodule\n")
    assert gateware.prefix_modules(v, "Lsmc_") == 2
    text = v.read_text()
    assert "module LsmcSoc (" in text and "module Lsmc_VexRiscv (" in text and "module Lsmc_BufferCC #(" in text
    assert "  Lsmc_VexRiscv cpu (" in text and '*) Lsmc_BufferCC #(' in text
    assert "wire VexRiscv_unused;" in text  # signals are not module names
    with pytest.raises(ports.BoardError, match="already carry"):
        gateware.prefix_modules(v, "Lsmc_")


# ------------------------------------------------------------------------------ the real SoC
@pytest.fixture(scope="module")
def real_soc():
    """Board variant of the SoC from hw/soc (soc.Generate --no-sim-ctrl through Mill, cached)."""
    return gateware.generate_soc_verilog()


def test_real_soc_matches_contract(real_soc):
    itf = ports.soc_interface(real_soc)
    assert (itf.ddr.data_width, itf.ddr_dma.data_width) == (32, 256)
    assert itf.ddr.addr_width == 32 and itf.ddr_dma.addr_width == 32


@pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys not installed")
@pytest.mark.parametrize("name", sorted(BOARD_DIRS))
def test_real_soc_on_board_with_firmware(real_soc, name, tmp_path):
    """The real SoC with a firmware image: generated, preloaded into the four RAM byte lanes, the SoC's
    modules renamed apart from LiteX's VexRiscv, and the whole top elaborated by yosys."""
    board = load_board(name)
    elf = tmp_path / "fw.elf"
    code = bytes(range(256)) * 4
    elf.write_bytes(_elf([(0x8000_0000, code, len(code) + 64)]))
    out = tmp_path / name
    litex_soc.build_target(board, out, soc_verilog=real_soc, firmware=elf, compile_software=False)
    gw = out / "gateware"
    soc_text = (gw / "LsmcSoc.v").read_text()
    for lane in range(4):
        assert re.search(rf'\$readmemh\("LsmcSoc_\w*ram_symbol{lane}\.hex"', soc_text)
    lane1 = next(gw.glob("LsmcSoc_*ram_symbol1.hex")).read_text().split()
    assert len(lane1) == 64 * 1024 and lane1[:3] == ["01", "05", "09"] and lane1[300] == "00"
    assert "module Lsmc_VexRiscv" in soc_text and "\nmodule VexRiscv" not in soc_text
    log = gateware.yosys_check_top(gw, board.name)
    assert not re.search(r"Warning: Resizing cell port \S*lsmc_soc", log)
    itf = ports.soc_interface(gw / "LsmcSoc.v")
    if itf.nand:  # the NAND controller's pins are on the board's header
        xdc = (gw / f"{board.name}.xdc").read_text()
        assert "[get_ports {lsmc_nand_dq[0]}]" in xdc and "[get_ports {lsmc_nand_rb_n[0]}]" in xdc


@pytest.mark.slow
@pytest.mark.long  # a whole board SoC elaborated more (~100 s, under the one Mill lock); scripts/test keeps the
# firmware linked for 128 KiB and refused elsewhere (test_firmware_for_another_ram_size_rejected) and the
# board's ram_kib in the flow's variants (tests/test_fpga.py); scripts/fpga soc builds this Verilog
@pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys not installed")
def test_ecpix5_soc_has_its_128_kib_ram(tmp_path):
    """The ECPIX-5 builds its board's RAM size (ECPIX5.ram_kib, soc.Generate --ram-kib): a 32 Ki-word RAM
    preloaded with the firmware linked for it, the map beside the Verilog saying 128 KiB."""
    pytest.importorskip("litex_boards")
    from lsmc.build import firmware
    from lsmc.fpga import flow
    board = flow.ecpix5_board()
    assert board.ram_kib == 128
    v = gateware.generate_soc_verilog(ram_kib=board.ram_kib)
    assert v.parent.name == "soc_board_ram128" and gateware.ram_region(v)[1] == 128 * 1024
    assert len(re.findall(r"reg \[7:0\] \w*ram_symbol\d \[0:32767\];", v.read_text())) == 4
    out = tmp_path / "ecpix5"
    litex_soc.build_target(board, out, soc_verilog=v, firmware=firmware.build_firmware(ram_kib=128),
                           compile_software=False)
    lane0 = next((out / "gateware").glob("LsmcSoc_*ram_symbol0.hex")).read_text().split()
    assert len(lane0) == 32 * 1024 and lane0[0] != "00"


# ------------------------------------------------------------------------------ board simulation
def _load_sim_module():
    spec = importlib.util.spec_from_file_location("board_sim", ROOT / "boards" / "sim" / "target.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sim_prerequisites_missing():
    """What LiteX's BIOS build and simulation need beyond LiteX itself (scripts/setup installs them)."""
    missing = [m for m in ("pythondata_software_picolibc", "pythondata_software_compiler_rt",
                           "pythondata_misc_tapcfg") if importlib.util.find_spec(m) is None]
    missing += [t for t in ("meson", "ninja", "verilator", "riscv64-unknown-elf-gcc") if shutil.which(t) is None]
    missing += [h for h in ("/usr/include/event2/event.h", "/usr/include/json-c/json.h") if not Path(h).exists()]
    return missing


def test_fast_uart_baud_divides_the_soc_clock():
    """boards/sim's FAST_UART_BAUD is exact on the SoC clock the firmware is built for (the generated CPU_HZ, from
    hw/soc/map/SocMap.scala): the UART's divider (fw/drivers/uart.h: clock / (baud * 8) - 1) is a whole number, at
    least 0, so the SoC's line and the board simulation's agree to the bit."""
    from lsmc.build import regmap
    clock = regmap.memmap().clock_hz
    fast = _load_sim_module().FAST_UART_BAUD
    assert clock % (8 * fast) == 0 and clock // (8 * fast) >= 1, (clock, fast)


def test_board_simulation_is_not_recompiled_for_a_new_generation_time(tmp_path):
    """The board simulation's compile stamp ignores the times LiteX writes into each generation (its header's
    Date line, the `Auto-Generated by LiteX on` line before the memory contents): a regenerated, unchanged design
    keeps its simulator (each run of the console suite recompiled it, and a second group on the machine deleted
    the first group's running build); any other change of a source, of LiteX's build script or of the Verilator
    and flags compile_sim adds is a new digest."""
    sim = _load_sim_module()
    a, b = tmp_path / "a", tmp_path / "b"
    for d, t in ((a, "2026-11-30 18:37:42"), (b, "2026-12-01 09:05:13")):
        d.mkdir()
        (d / "sim.v").write_text(f"// Filename   : sim.v\n// Date       : {t}\nmodule sim;\nendmodule\n"
                                 f"//  Auto-Generated by LiteX on {t}.\n")
        (d / "sim_init.cpp").write_text("int x;\n")
        (d / "sim_config.js").write_text("[]\n")
        (d / "build_sim.sh").write_text("make OPT_LEVEL=g0\n")
    assert sim.sources_digest(a) == sim.sources_digest(b)
    (b / "sim.v").write_text((b / "sim.v").read_text().replace("module sim;", "module sim; wire w;"))
    assert sim.sources_digest(a) != sim.sources_digest(b)
    (b / "sim.v").write_text((a / "sim.v").read_text())
    (b / "sim_config.js").write_text('[{"module": "serial2tcp"}]\n')
    assert sim.sources_digest(a) != sim.sources_digest(b)
    (b / "sim_config.js").write_text("[]\n")
    (b / "build_sim.sh").write_text("make OPT_LEVEL=O3\n")  # LiteX's compiler flags
    assert sim.sources_digest(a) != sim.sources_digest(b)
    (b / "build_sim.sh").write_text("make OPT_LEVEL=g0\n")
    # the Verilator and make flags compile_sim adds
    assert sim.sources_digest(a, extra=("system", "OPT_FAST=-O1")) != sim.sources_digest(a, ("wheel", "OPT_FAST=-O1"))
    assert sim.sources_digest(a) == sim.sources_digest(b)


@pytest.mark.slow
@pytest.mark.skipif(bool(_sim_prerequisites_missing()),
                    reason=f"board simulation prerequisites missing: {_sim_prerequisites_missing()}")
def test_board_simulation_runs_a_compaction_job(real_soc):
    """The whole board design in Verilator: the BIOS sets up the (model) DRAM and releases the SoC,
    whose preloaded firmware answers on the console and runs a 128-entry compaction job through the
    DMA -> LiteDRAM path (checked by the firmware against its C merge: PASS). The SoC's console line runs at
    the sim board's fast rate (the firmware built for it; at 115200 baud its output took 90 of 128 s)."""
    sim = _load_sim_module()
    from lsmc.build.firmware import build_firmware
    elf = build_firmware(baud=sim.FAST_UART_BAUD)  # shared with the console suite's board simulation
    out = ROOT / "build" / "boards" / "sim-test"  # fixed folder: the Verilator model is reused when unchanged
    litex_soc.build_target(sim.board_with_baud(sim.FAST_UART_BAUD), out, soc_verilog=real_soc,
                           firmware=elf, run=True)
    sim.compile_sim(out)
    log = sim.run_sim(out, script=[("lsmc> ", "run 128\r")], until="lsmc> ", timeout=900)
    assert "Initializing SDRAM" in log and "Memtest OK" in log  # BIOS part of the console
    tail = log.rsplit("run 128", 1)[1]
    assert re.search(r"entries_in=128 .*PASS", tail), log[-2000:]


# ------------------------------------------------------------------------------ DDR register slice
def test_axi_register_slice_passes_every_beat_with_ready_registered():
    """The register slice between the SoC's DDR ports and LiteDRAM (migen simulation, random stalls on
    both sides): every beat of every channel arrives once and in order, downstream for aw/w/ar and
    upstream for r/b."""
    import random

    from litex.soc.interconnect.axi import AXIInterface
    from migen.sim import run_simulation

    soc_side = AXIInterface(data_width=32, address_width=28, id_width=1)
    dram_side = AXIInterface(data_width=32, address_width=28, id_width=1)
    dut = litex_soc._axi_register_slice(soc_side, dram_side, "sys")
    rng = random.Random(7)
    n = 60
    chans = {"aw": ("addr", True), "w": ("data", True), "ar": ("addr", True), "r": ("data", False),
             "b": ("resp", False)}
    sent = {c: [rng.randrange(1 << (2 if f == "resp" else 28)) for _ in range(n)] for c, (f, _) in chans.items()}
    got = {c: [] for c in chans}

    def ends(c):
        down = chans[c][1]
        return (getattr(soc_side, c), getattr(dram_side, c)) if down else (getattr(dram_side, c), getattr(soc_side, c))

    def producer(c):
        src, _ = ends(c)
        field = chans[c][0]
        for v in sent[c]:
            while rng.random() < 0.3:  # idle cycles between beats
                yield src.valid.eq(0)
                yield
            yield src.valid.eq(1)
            yield getattr(src, field).eq(v)
            yield
            for _ in range(100):
                if (yield src.ready):
                    break
                yield
            else:
                raise AssertionError(f"{c}: the slice never took a beat")
        yield src.valid.eq(0)

    def consumer(c):
        _, dst = ends(c)
        field = chans[c][0]
        for _ in range(20 * n):
            r = rng.random() < 0.6
            yield dst.ready.eq(r)
            yield
            if r and (yield dst.valid):
                got[c].append((yield getattr(dst, field)))

    gens = [producer(c) for c in chans] + [consumer(c) for c in chans]
    run_simulation(dut, gens)
    for c in chans:
        assert got[c] == sent[c], c
