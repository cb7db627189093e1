"""The DDR presets of the SoC harness's DDR timing model (sim/common/ddr_presets.json, the one table of them;
docs/ddr-model.md): read for the host side of the simulations and their reports."""
from __future__ import annotations

from lsmc.build import facts


class DdrError(ValueError):
    """The preset table is unreadable or has no such preset."""


def ddr_presets() -> dict:
    """Preset name -> fields of sim/common/ddr_presets.json (numbers as int; lsmc.build.facts reads it)."""
    try:
        return facts.ddr_presets()
    except facts.FactsError as e:
        raise DdrError(str(e)) from None


def bank_geometry(preset: str) -> tuple[int, int]:
    """(bytes of one bank's row, banks) of a preset under LiteDRAM's ROW_BANK_COL mapping: consecutive
    row-bytes-sized blocks of DDR go to consecutive banks."""
    table = ddr_presets()
    if preset not in table:
        raise DdrError(f"DDR preset {preset!r} has no banks (presets: {', '.join(sorted(table))})")
    p = table[preset]
    native = 2 * p["nphases"] * p["dataBits"] // 8
    return native << (p["colBits"] - 3), 1 << p["bankBits"]
