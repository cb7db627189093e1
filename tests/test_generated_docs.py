"""Generated content in docs/ (register tables and field values, memory map, interrupt lines, the paper's
Table III, KB16 error codes, the firmware's job ABI) is current: each is rendered again from its one
source and compared. `lsmc docs` rewrites whatever this reports as stale."""
import shutil

import pytest

from lsmc import gendocs
from lsmc.paths import ROOT

# Where each generated block must appear (a page losing its marker fails here, not silently).
EXPECTED = {
    "hw/ip/compaction/doc/compaction-ip.md": {("regs", "compaction"), ("table3", "paper")},
    "hw/ip/dma/doc/dma.md": {("regs", "dma")},
    "hw/ip/nand/doc/nand.md": {("regs", "nand"), ("onfi", "async"), ("onfi", "nvddr"), ("onfi", "nvddr_tck"),
                               ("enum", "nand.OP"), ("enum", "nand.E")},
    "docs/architecture.md": {("regs", "compaction"), ("memmap", "soc"), ("irqs", "soc"), ("kb16", "errors")},
    "docs/firmware.md": {("abi", "scenarios.lsmc"), ("abi", "layout.JOB_DESC"), ("abi", "layout.JOB_RES"),
                         ("abi", "layout.TABLE_HEAD"), ("abi", "layout.TABLE_ROW")},
    "docs/boards.md": {("fpga", "resources"), ("fpga", "blocks")},
    "docs/configurations.md": {("presets", "soc"), ("presets", "ip")},
    "hw/ip/table_engine/doc/calibration.md": {("calibration", "table_engine")},
}


def test_every_generated_block_is_current():
    stale = gendocs.update(check=True)
    assert not stale, "stale generated content (run `lsmc docs`): " + "; ".join(stale)


def test_expected_blocks_are_present():
    for page, want in EXPECTED.items():
        have = {(k, a) for k, a, _ in gendocs.blocks(ROOT / page)}
        assert want <= have, f"{page} lacks generated block(s) {sorted(want - have)}"


def test_stale_block_is_found_and_rewritten(tmp_path):
    page = tmp_path / "page.md"
    shutil.copy(ROOT / "hw" / "ip" / "dma" / "doc" / "dma.md", page)
    text = page.read_text()
    page.write_text(text.replace("| 0x104 | ALL_STATUS |", "| 0x108 | ALL_STATUS |"))
    assert [s.split(": ", 1)[1] for s in gendocs.update([page], check=True) if s.startswith(str(page))] == \
        ["regs dma"]
    assert page.read_text() != text                     # check only: untouched
    gendocs.update([page])
    assert page.read_text() == text                     # rewritten to the generated table


def test_unterminated_or_unknown_marker_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("x\n<!-- BEGIN GENERATED: regs dma -->\n| stale |\n")
    with pytest.raises(gendocs.DocsError, match="no matching"):
        gendocs.update([page], check=True)
    page.write_text("<!-- BEGIN GENERATED: bogus x -->\n<!-- END GENERATED -->\n")
    with pytest.raises(gendocs.DocsError, match="unknown generated-content kind 'bogus'"):
        gendocs.update([page], check=True)


def test_cli_check_exit_status(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("<!-- BEGIN GENERATED: irqs soc -->\nold\n<!-- END GENERATED -->\n")
    assert gendocs.main(["--check", str(page)]) == 1
    assert "stale:" in capsys.readouterr().out
    assert gendocs.main([str(page)]) == 0 and gendocs.main(["--check", str(page)]) == 0
    assert gendocs.main([str(tmp_path / "missing.md")]) == 2
