"""Calibration of the SoC harness's DDR model (sim/common/ddr_model.h) against LiteDRAM (docs/ddr-model.md).

The reference is the board simulation (boards/sim: the board's LiteX design with LiteDRAM and its DRAM
model, MT41K128M16 at 125 MHz 1:4, SoC at 100 MHz), running the same console commands as the SoC
harness: `run N` (firmware-generated Table III workload; the IP's HW_CYCLES window, the firmware's
FW_CYCLES bracket, and SW_CYCLES, the C merge on the CPU reading DDR through its cache). Its numbers are
kept in sim/common/ddr_calibration.json (measured once: minutes of simulation); the harness with
`--ddr boardsim` is compared against them.

    python3 -m lsmc.sim.ddrcal                 # harness (--ddr boardsim and fixed) vs the stored reference
    python3 -m lsmc.sim.ddrcal --board DIR     # re-measure the reference on a built board simulation
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from lsmc import build

REFERENCE = build.ROOT / "sim" / "common" / "ddr_calibration.json"
METRICS = ("hw_cycles", "fw_cycles", "sw_cycles")
TOLERANCE = 0.10  # the calibration's goal: within 10 % of LiteDRAM's cycle counts
_ROW = re.compile(r"entries_in=(\d+) .*?fw_cycles=(\d+) hw_cycles=(\d+) .*?sw_cycles=(\d+) .*?(PASS|FAIL)")


class CalError(Exception):
    pass


def parse_rows(console: str) -> dict:
    """{"run N": {metric: cycles}} from the console lines of `run N` commands."""
    rows = {}
    for m in _ROW.finditer(console):
        if m.group(5) != "PASS":
            raise CalError(f"run {m.group(1)} did not pass: {m.group(0)}")
        rows[f"run {m.group(1)}"] = {"fw_cycles": int(m.group(2)), "hw_cycles": int(m.group(3)),
                                     "sw_cycles": int(m.group(4))}
    return rows


def load_reference() -> dict:
    try:
        ref = json.loads(REFERENCE.read_text())
    except (OSError, ValueError) as e:
        raise CalError(f"{REFERENCE}: {e}") from e
    for name, row in ref.get("workloads", {}).items():
        if not re.fullmatch(r"run \d+", name) or set(row) != set(METRICS):
            raise CalError(f"{REFERENCE}: workload {name!r} needs exactly {', '.join(METRICS)}")
    if not ref.get("workloads"):
        raise CalError(f"{REFERENCE}: no workloads")
    return ref


def measure_harness(workloads, ddr: str = "boardsim", timeout: float = 900) -> tuple[dict, str]:
    """Run the workloads on the SoC harness with `--ddr ddr`; returns the rows and the `ddr:` line's value."""
    from lsmc.build import firmware
    from lsmc.sim import soc
    elf = firmware.build_firmware()
    script = "".join(f"{w}\n" for w in workloads) + "exit 0\n"
    res = soc.run_soc(elf, arg=firmware.SCEN["CONSOLE"],
                      uart_in=script, uart_prompt="lsmc> ", extra=["--ddr", ddr], timeout=timeout)
    if res.returncode != 0:
        raise CalError(f"SoC harness (--ddr {ddr}) exit {res.returncode}: {res.stderr[-1500:]}")
    m = re.search(r"^ddr: (\S+)$", res.stderr, re.M)
    rows = parse_rows(res.uart)
    missing = [w for w in workloads if w not in rows]
    if missing:
        raise CalError(f"SoC harness printed no result for {missing}: {res.uart[-1500:]}")
    return rows, (m.group(1) if m else "")


def measure_board(output_dir: Path, workloads, timeout: float = 1800) -> dict:
    """Run the workloads on a built board simulation (boards/sim/target.py --build)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("board_sim", build.ROOT / "boards" / "sim" / "target.py")
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    script = [("lsmc> ", f"{w}\r") for w in workloads]
    log = sim.run_sim(output_dir, script=script, until="lsmc> ", timeout=timeout)
    rows = parse_rows(log)
    missing = [w for w in workloads if w not in rows]
    if missing:
        raise CalError(f"board simulation printed no result for {missing}: {log[-1500:]}")
    return rows


def errors(model: dict, ref: dict) -> dict:
    """Relative error (model - reference) / reference per workload and metric."""
    return {w: {k: (model[w][k] - r[k]) / r[k] for k in METRICS} for w, r in ref.items()}


def table(ref: dict, runs: dict) -> str:
    """Markdown: per workload and metric, LiteDRAM's cycles and each harness model's with its error."""
    names = list(runs)
    head = "| workload | metric | LiteDRAM (boards/sim) | " + " | ".join(f"`--ddr {n}`" for n in names) + " |"
    lines = [head, "|" + "---|" * (3 + len(names))]
    for w, r in ref.items():
        for k in METRICS:
            cells = [f"{runs[n][w][k]:,} ({(runs[n][w][k] - r[k]) / r[k]:+.1%})" for n in names]
            lines.append(f"| `{w}` | {k} | {r[k]:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", type=Path, metavar="DIR",
                    help="re-measure the reference on the board simulation built in DIR and print it as JSON")
    ap.add_argument("--workloads", default="run 512,run 2048", help="console commands, comma-separated")
    args = ap.parse_args(argv)
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    bad = [w for w in workloads if not re.fullmatch(r"run \d+", w)]
    if bad:
        print(f"ddrcal: error: --workloads: {bad} (expected 'run N')", file=sys.stderr)
        return 2
    try:
        if args.board:
            print(json.dumps(measure_board(args.board, workloads), indent=2))
            return 0
        ref = load_reference()["workloads"]
        runs = {n: measure_harness(list(ref), n)[0] for n in ("boardsim", "fixed")}
    except (CalError, build.BuildError) as e:
        print(f"ddrcal: error: {e}", file=sys.stderr)
        return 2
    print(table(ref, runs))
    worst = max(abs(e) for row in errors(runs["boardsim"], ref).values() for e in row.values())
    print(f"\nworst error of --ddr boardsim: {worst:.1%} (goal {TOLERANCE:.0%})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
