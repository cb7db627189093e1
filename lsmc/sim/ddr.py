"""The DDR presets of the SoC harness's DDR timing model (sim/common/ddr_presets.h, the one table of them;
docs/ddr-model.md): read for the host side of the simulations and their reports."""
from __future__ import annotations

import re
from pathlib import Path

from lsmc.paths import ROOT

PRESETS_H = ROOT / "sim" / "common" / "ddr_presets.h"
_FIELDS = ("name module memtype sysMHz nphases dataBits bankBits rowBits colBits tRP tRCD tWR tWTR tREFI "
           "tRFC tRAS tRC tCCD tRRD tFAW cl cwl readLatency writeLatency").split()


class DdrError(ValueError):
    """The preset table is unreadable or has no such preset."""


def ddr_presets(path: Path = PRESETS_H) -> dict:
    """Preset name -> fields of sim/common/ddr_presets.h (numbers as int)."""
    text = path.read_text()
    body = text[text.index("kDdrPresets[]"):]
    rows = {}
    for m in re.finditer(r"\{([^{}]*)\}", body):
        vals = [v.strip().strip('"') for v in m.group(1).split(",")]
        if len(vals) != len(_FIELDS):
            raise DdrError(f"{path}: a preset row has {len(vals)} fields, expected {len(_FIELDS)}")
        row = dict(zip(_FIELDS, vals))
        rows[row["name"]] = {k: (v if k in ("name", "module", "memtype") else int(v)) for k, v in row.items()}
    return rows


def bank_geometry(preset: str) -> tuple[int, int]:
    """(bytes of one bank's row, banks) of a preset under LiteDRAM's ROW_BANK_COL mapping: consecutive
    row-bytes-sized blocks of DDR go to consecutive banks."""
    table = ddr_presets()
    if preset not in table:
        raise DdrError(f"DDR preset {preset!r} has no banks (presets: {', '.join(sorted(table))})")
    p = table[preset]
    native = 2 * p["nphases"] * p["dataBits"] // 8
    return native << (p["colBits"] - 3), 1 << p["bankBits"]
