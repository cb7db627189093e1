"""nextpnr-ecp5's timing and utilisation reports read: fmax per clock, cells per bel type, the critical
paths of the final timing analysis, condensed for reading."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lsmc.fpga.tools import FpgaError


@dataclass
class PnrResult:
    """What nextpnr-ecp5's --report JSON and log say about one placed-and-routed design."""
    design: str
    clocks: dict  # clock net -> (achieved MHz, constraint MHz)
    cells: dict  # bel type -> (used, available)
    critical_paths: dict  # clock net -> list of text lines (the log's critical path report)
    log: Path | None = None
    bitstream: Path | None = None
    seconds: dict = field(default_factory=dict)  # step -> wall time
    pnr_options: tuple = ()  # nextpnr options beyond the flow's own (seed included), for the record

    def clock(self, pattern: str) -> tuple[str, float, float]:
        """(net, achieved, constraint) of the one clock whose net name matches `pattern` (regex)."""
        hits = [(n, a, c) for n, (a, c) in self.clocks.items() if re.search(pattern, n)]
        if len(hits) != 1:
            raise FpgaError(f"{self.design}: {len(hits)} clocks match {pattern!r} in the timing report "
                            f"(clocks: {', '.join(sorted(self.clocks)) or 'none'})")
        return hits[0]

    def used(self, *types: str) -> int:
        return sum(self.cells.get(t, (0, 0))[0] for t in types)


def parse_report(report_json: Path, log: Path | None = None, design: str = "") -> PnrResult:
    """Read nextpnr's --report file (fmax per clock, utilisation per bel type) and, from the log, the
    critical path reports of the final (post-route) timing analysis."""
    report_json = Path(report_json)
    try:
        rep = json.loads(report_json.read_text())
    except (OSError, ValueError) as e:
        raise FpgaError(f"{report_json}: no readable nextpnr report ({e})") from None
    if "fmax" not in rep or "utilization" not in rep:
        raise FpgaError(f"{report_json}: not a nextpnr report (keys: {', '.join(rep)})")
    clocks = {n: (float(v["achieved"]), float(v["constraint"])) for n, v in rep["fmax"].items()}
    cells = {t: (int(v["used"]), int(v["available"])) for t, v in rep["utilization"].items()}
    paths = parse_critical_paths(Path(log).read_text(errors="replace")) if log and Path(log).is_file() else {}
    return PnrResult(design, clocks, cells, paths, log)


_CP_HEAD = re.compile(r"^Info: Critical path report for (?:clock '([^']+)'|cross-domain path '([^']+)')")


def parse_critical_paths(log_text: str) -> dict:
    """Critical path reports of the last timing analysis in a nextpnr log: {clock or 'a -> b': lines}."""
    lines = log_text.splitlines()
    # Each analysis (pre-route, post-route) prints its own set; the last "Critical path report" block
    # belongs to the final one: start after the last "Routing complete" when there is one.
    start = max((i for i, l in enumerate(lines) if "Routing complete" in l), default=0)
    out, cur = {}, None
    for l in lines[start:]:
        m = _CP_HEAD.match(l)
        if m:
            cur = m.group(1) or m.group(2)
            out[cur] = [l[6:]]
            continue
        if cur is None:
            continue
        body = l[6:] if l.startswith("Info: ") else l
        if not l.startswith("Info:") or l.startswith("Info: Max frequency") or l.startswith("Info: Max delay"):
            cur = None
            continue
        if body.strip() == "" and len(out[cur]) > 1 and out[cur][-1].strip() == "":
            cur = None
            continue
        out[cur].append(body)
    return {k: [x for x in v if x.strip()] for k, v in out.items()}


_STEP = re.compile(r"^\s*(clk-to-q|logic|routing|setup|source|clock)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+"
                   r"(?:Source|Net)\s+(\S+)")
_REF = re.compile(r"^\s+([^\s/][^\s:]*\.s?v):(\d+)")
# yosys/nextpnr append mapping suffixes to the RTL name of a cell or net; cut them for reading.
_MAPPED = re.compile(r"(_TRELLIS_|_LUT4_|_CCU2C_|_PFUMX|_L6MUX|_DPR16X4|_DP16KD|\$|\[).*$")


def short_name(name: str) -> str:
    return _MAPPED.sub("", name) or name


def condense_path(lines: list) -> list:
    """A critical path report as a few lines: consecutive steps through the same RTL signal merged
    (carry chains become one line), each with its delay, the running total and the Verilog lines
    it comes from. The raw report stays in the nextpnr log."""
    groups = []  # [short name, kinds, delay, total, refs]
    for l in lines:
        m = _STEP.match(l)
        if m:
            kind, curr, total, name = m.group(1), float(m.group(2)), float(m.group(3)), short_name(m.group(4))
            if groups and groups[-1][0] == name:
                g = groups[-1]
                g[1].add(kind)
                g[2] += curr
                g[3] = total
            else:
                groups.append([name, {kind}, curr, total, []])
            continue
        r = _REF.match(l)
        if r and groups:
            ref = f"{r.group(1)}:{r.group(2)}"
            if ref not in groups[-1][4]:
                groups[-1][4].append(ref)
    out = [f"{'total':>6} {'delay':>6}  {'step':<16} signal (Verilog lines)"]
    for name, kinds, delay, total, refs in groups:
        kind = "/".join(k for k in ("clk-to-q", "logic", "routing", "setup", "source", "clock") if k in kinds)
        out.append(f"{total:6.2f} {delay:6.2f}  {kind:<16} {name}" + (f" ({', '.join(refs[:3])})" if refs else ""))
    return out


def path_summary(lines: list) -> str:
    """One line for a critical path: its total delay, logic/routing split, start and end cells."""
    text = "\n".join(lines)
    total = re.findall(r"([\d.]+) ns logic, ([\d.]+) ns routing", text)
    src = re.search(r"Source\s+(\S+)", text)
    snk = re.findall(r"Sink\s+(\S+)", text)
    parts = []
    if total:
        lg, rt = map(float, total[-1])
        parts.append(f"{lg + rt:.2f} ns ({lg:.2f} logic, {rt:.2f} routing)")
    if src:
        parts.append(f"from {short_name(src.group(1))}")
    if snk:
        parts.append(f"to {short_name(snk[-1])}")
    return ", ".join(parts) or "(no path report)"


_UTIL = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%", re.M)


def overfull(log_text: str) -> list[str]:
    """The bel types a design needs more of than the device has, from nextpnr's utilisation lines (printed
    while packing, before a placement that cannot succeed): ["TRELLIS_COMB 156833/83640 (187 %)", ...]."""
    seen = {}
    for name, used, avail, _pct in _UTIL.findall(log_text):
        seen[name] = (int(used), int(avail))
    return [f"{n} {u}/{a} ({100 * u // a} %)" for n, (u, a) in seen.items() if a and u > a]
