"""docs/nand.md: the register table is the one rendered from the generated NandRegs.json."""
from lsmc.paths import ROOT
from lsmc.sim import nandsim


def test_doc_register_map_is_current():
    nandsim.build_sim()
    text = (ROOT / "docs" / "nand.md").read_text()
    a = text.index(nandsim.REGMAP_BEGIN) + len(nandsim.REGMAP_BEGIN)
    b = text.index(nandsim.REGMAP_END)
    assert text[a:b].strip() == nandsim.regmap_markdown().strip(), \
        "docs/nand.md register map is stale: run nandsim.update_doc_regmap()"
    for reg in nandsim.REG:
        assert f"| {reg} |" in text[a:b], reg
