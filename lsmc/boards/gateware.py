"""Gateware sources of a board: the board variant of the SoC's Verilog, its module names made private,
the firmware ELF preloaded into its on-chip RAM, and a yosys elaboration check of the generated top."""
from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

from lsmc import build
from lsmc.boards.ports import ONCHIP_RAM_BASE, ONCHIP_RAM_SIZE, SOC_TOP, BoardError
from lsmc.build import presets, regmap


# ------------------------------------------------------------------------------- SoC Verilog source
def board_preset(ram_kib: int | None = None, nand_pad_input_cycles: int = 0,
                 dma_port_slice: bool = False) -> presets.SocPreset:
    """The board SoC preset (hw/soc/rtl/Presets.scala: Table III's one two-way unit, no simulation control,
    one NAND channel: each board's pin plan wires one NAND header) with this on-chip RAM (None: the default
    map's), NAND pad input cycles and DMA port slices; BoardError naming them when there is none."""
    try:
        return presets.find_soc("board", 128, 1, 2, dma_port_slice,
                                ONCHIP_RAM_SIZE // 1024 if ram_kib is None else ram_kib, nand_pad_input_cycles)
    except presets.PresetError as e:
        raise BoardError(str(e)) from None


def generate_soc_verilog(outdir: Path | None = None, uart_baud: int = 115200, ram_kib: int | None = None,
                         nand_pad_input_cycles: int = 0, dma_port_slice: bool = False) -> Path:
    """Board variant of the SoC (`board_preset`) through the project's Mill wrapper, in the preset's folder
    (build/gen/soc_board, soc_board_ram128, ...) unless `outdir`, with its memory map (lsmc_soc.json, read
    back by `ram_region`) and manifest next to the Verilog. `ram_kib`: the board's on-chip RAM (a board
    class's `ram_kib`). `nand_pad_input_cycles`: register stages of the board's pads ahead of NAND DQ in
    (lsmc/boards/nand_pads.py PAD_INPUT_CYCLES behind the NV-DDR pad wrapper). `dma_port_slice`: full register
    slices before the DMA port crossbars (a timing experiment, off in the board builds: soc_generate_args).
    `uart_baud`: the UART's reset baud rate, when not the preset's."""
    p = board_preset(ram_kib, nand_pad_input_cycles, dma_port_slice)
    outdir = Path(outdir) if outdir else p.gen_dir
    baud = ["--uart-baud", str(uart_baud)] if uart_baud != p.config["uartBaud"] else []
    build.generate("soc", "soc.Generate", outdir, args=["--preset", p.name, *baud, "--out", str(outdir)])
    v = outdir / f"{SOC_TOP}.v"
    if not v.is_file():
        raise BoardError(f"soc.Generate did not write {v}")
    return v


def ram_region(soc_verilog: Path) -> tuple[int, int]:
    """(base, size) of the on-chip RAM of the SoC in `soc_verilog`: from the memory map soc.Generate
    wrote next to it (lsmc_soc.json); the default map's when there is none (a Verilog from elsewhere)."""
    j = Path(soc_verilog).parent / "lsmc_soc.json"
    if not j.is_file():
        return ONCHIP_RAM_BASE, ONCHIP_RAM_SIZE
    try:
        return regmap.memmap(str(j)).regions["RAM"]
    except regmap.RegMapError as e:
        raise BoardError(str(e)) from None


# --------------------------------------------------------------------------- firmware → on-chip RAM
def elf_symbol(data: bytes, name: str) -> int | None:
    """Value of symbol `name` in a 32-bit little-endian ELF's .symtab (None: no such symbol or table)."""
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    want = name.encode()
    for i in range(shnum):
        _n, sh_type, _f, _a, off, size, link, _i, _al, entsize = struct.unpack_from("<10I", data, shoff + i * shentsize)
        if sh_type != 2 or entsize != 16:  # SHT_SYMTAB
            continue
        stroff, = struct.unpack_from("<I", data, shoff + link * shentsize + 16)
        for k in range(size // 16):
            st_name, st_value = struct.unpack_from("<II", data, off + 16 * k)
            end = data.index(b"\0", stroff + st_name)
            if data[stroff + st_name:end] == want:
                return st_value
    return None


def elf_to_ram_words(elf: Path, base: int = ONCHIP_RAM_BASE, size: int = ONCHIP_RAM_SIZE) -> list[int]:
    """Little-endian 32-bit words of the on-chip RAM image of a firmware ELF (loadable segments only;
    every byte must fall inside the RAM window, else the board would silently run a truncated image).
    A firmware linked for another RAM size (its `__stack`, the top of the RAM it was linked for, not this
    RAM's end) is refused too: its loadable bytes may fit while its stack lies outside the RAM."""
    try:
        data = Path(elf).read_bytes()
    except OSError as e:
        raise BoardError(f"{elf}: cannot read the firmware ({e.strerror})") from None
    if data[:4] != b"\x7fELF" or data[4:5] != b"\x01" or data[5:6] != b"\x01":
        raise BoardError(f"{elf}: not a 32-bit little-endian ELF")
    try:
        return _ram_image(elf, data, base, size)
    except (struct.error, ValueError) as e:  # a header, table or string pointing past the file's end
        raise BoardError(f"{elf}: truncated or malformed ELF ({e})") from None


def _ram_image(elf: Path, data: bytes, base: int, size: int) -> list[int]:
    if struct.unpack_from("<H", data, 18)[0] != 0xF3:
        raise BoardError(f"{elf}: not a RISC-V ELF")
    stack = elf_symbol(data, "__stack")
    if stack is not None and stack != base + size:
        raise BoardError(f"{elf}: linked for a {(stack - base) // 1024} KiB on-chip RAM (__stack 0x{stack:08x}), "
                         f"this SoC has {size // 1024} KiB (build it with lsmc.build.firmware.build_firmware"
                         f"(ram_kib={size // 1024}))")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    image = bytearray(size)
    loaded = 0
    for i in range(phnum):
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _flags, _align = struct.unpack_from(
            "<8I", data, phoff + i * phentsize)
        if p_type != 1 or p_memsz == 0:  # PT_LOAD only
            continue
        if p_paddr < base or p_paddr + p_memsz > base + size:
            raise BoardError(f"{elf}: segment at 0x{p_paddr:08x}+0x{p_memsz:x} is outside the on-chip RAM "
                             f"0x{base:08x}..0x{base + size:08x} (the board loads only the on-chip RAM)")
        if p_offset + p_filesz > len(data):
            raise BoardError(f"{elf}: segment at 0x{p_paddr:08x} holds 0x{p_filesz:x} bytes at file offset "
                             f"0x{p_offset:x}, past the file's end (0x{len(data):x}): truncated ELF")
        image[p_paddr - base: p_paddr - base + p_filesz] = data[p_offset: p_offset + p_filesz]
        loaded += p_filesz
    if loaded == 0:
        raise BoardError(f"{elf}: no loadable bytes")
    return list(struct.unpack(f"<{size // 4}I", bytes(image)))


# ------------------------------------------------------------------------- module name clashes
def prefix_modules(verilog: Path, prefix: str, keep: str = SOC_TOP) -> int:
    """Rename every module defined in `verilog` but `keep` to prefix+name, definitions and
    instantiations alike (SpinalHDL style: `module Name (` / `  Name inst (` / `  Name #(...) inst (`, with
    optional `(* attributes *)` before an instance),
    so the SoC's `VexRiscv`, `StreamFifo`, ... cannot clash with LiteX's modules. Returns the count."""
    verilog = Path(verilog)
    text = verilog.read_text()
    names = set(re.findall(r"^\s*module\s+([A-Za-z_]\w*)", text, re.M)) - {keep}
    if not names:
        return 0
    if any(n.startswith(prefix) for n in names):
        raise BoardError(f"{verilog}: modules already carry the prefix {prefix}")
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    text = re.sub(rf"^(\s*module\s+)({alt})\b", lambda m: m.group(1) + prefix + m.group(2), text, flags=re.M)
    text, n_inst = re.subn(rf"^(\s*(?:\(\*[^*]*\*\)\s*)*)({alt})(\s+(?:#\s*\(|[A-Za-z_]\w*\s*\())",
                           lambda m: m.group(1) + prefix + m.group(2) + m.group(3), text, flags=re.M)
    if n_inst < 1:
        raise BoardError(f"{verilog}: no instantiation of its {len(names)} submodules found")
    verilog.write_text(text)
    return len(names)


# ------------------------------------------------------------------------- firmware into the RAM
def attach_firmware(soc_v: Path, words: list[int]) -> None:
    """Preload the SoC's on-chip RAM from `words` by adding `$readmemh` initial blocks for the RAM arrays
    SpinalHDL generated for `Axi4SharedOnChipRam` (Vivado infers initialised BRAMs from them).
    The arrays are found by their depth (RAM words) in the module that holds them."""
    soc_v = Path(soc_v)
    text = soc_v.read_text()
    depth = len(words)
    # SpinalHDL emits a byte-masked RAM either as one 32-bit array or as four 8-bit symbol arrays.
    decl = re.compile(rf"^\s*reg\s+\[(\d+):0\]\s+(\w+)\s*\[0:{depth - 1}\]\s*;", re.M)
    arrays = [(m.group(2), int(m.group(1)) + 1, m.end()) for m in decl.finditer(text)]
    if not arrays:
        raise BoardError(f"{soc_v}: no {depth}-word RAM array found for the firmware image")
    widths = sorted(w for _, w, _ in arrays)
    if widths not in ([32], [8, 8, 8, 8]):
        raise BoardError(f"{soc_v}: unexpected on-chip RAM arrays {[(n, w) for n, w, _ in arrays]}")
    if re.search(r"\$readmem[hb]\s*\(\s*\"[^\"]*\"\s*,\s*(" + "|".join(n for n, _, _ in arrays) + r")\b", text):
        raise BoardError(f"{soc_v}: the on-chip RAM already has an init file (generated with one?)")
    inserts = []
    for name, width, end in arrays:
        if width == 32:
            lines = [f"{w:08x}" for w in words]
        else:
            lane = int(re.search(r"(\d+)$", name).group(1)) if re.search(r"(\d+)$", name) else None
            if lane is None or lane > 3:
                raise BoardError(f"{soc_v}: cannot tell the byte lane of RAM array {name}")
            lines = [f"{(w >> (8 * lane)) & 0xFF:02x}" for w in words]
        fname = f"{SOC_TOP}_{name}.hex"
        (soc_v.parent / fname).write_text("\n".join(lines) + "\n")
        inserts.append((end, f"\n  initial begin\n    $readmemh(\"{fname}\", {name});\n  end\n"))
    for end, ins in sorted(inserts, reverse=True):
        text = text[:end] + ins + text[end:]
    soc_v.write_text(text)


def yosys_check_top(gateware: Path, top: str) -> str:
    """Elaborate the generated top with yosys (`hierarchy -check`, Xilinx cells as black boxes): fails on
    a missing module or port; returns the log so callers can look for port-width warnings."""
    gateware = Path(gateware)
    tcl = (gateware / f"{top}.tcl").read_text()
    srcs = re.findall(r"^read_verilog \{(.+?)\}", tcl, re.M)
    if not srcs:
        raise BoardError(f"{gateware}/{top}.tcl reads no Verilog")
    script = ("read_verilog -lib +/xilinx/cells_sim.v +/xilinx/cells_xtra.v; "
              + " ".join(f"read_verilog {s};" for s in srcs) + f" hierarchy -check -top {top}")
    res = subprocess.run(["yosys", "-p", script], cwd=gateware, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise BoardError(f"yosys could not elaborate {top}:\n{(res.stdout + res.stderr)[-3000:]}")
    return res.stdout
