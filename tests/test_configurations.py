"""Named configurations (docs/configurations.md): the checked-in list of presets is what the Scala renders,
a generated build's manifest is its preset's entry and agrees with the ports of its Verilog, the Makefiles'
defaults are the package's folders, and a build no preset describes is one clear error."""
import dataclasses
import json
import re
import subprocess

import pytest

from lsmc.build import firmware, presets
from lsmc.paths import ROOT
from lsmc.sim import ipsim, soc


def test_presets_json_is_what_the_scala_renders():
    """lsmc/data/presets.json is a rendered copy (python3 -m lsmc.build.presets render): no hand edit, no drift."""
    assert presets.render() == presets.PRESETS_JSON.read_text(), \
        "lsmc/data/presets.json is stale: run `python3 -m lsmc.build.presets render`"


@pytest.fixture(scope="module")
def default_build():
    p = soc.preset_for()
    return p, soc.generate_preset(p).parent


def test_manifest_is_the_presets_entry(default_build):
    p, folder = default_build
    assert p.name == "table3-w128" and folder == presets.GEN / "soc"
    assert presets.manifest(folder) == json.loads(presets.PRESETS_JSON.read_text())["soc"][p.name]


def _ports(verilog: str, pattern: str) -> set:
    return set(re.findall(pattern, verilog))


@pytest.mark.parametrize("name", ["table3-w128", "scaling-m2k2", "tables-m2"])
def test_manifest_and_harness_header_match_the_verilog(name):
    """The counts the harness binds (lsmc_soc_config.h) and the manifest states are the Verilog's own ports; the
    table-engine units' own ports (te_read_ports, after the KB16 units'; te_unit_ports, readPortsPerUnit of them a
    unit) carry the unit's reads, and its writes where te_write_ports names them (writePortPerUnit: each unit's first
    port), else their write channels are tied off."""
    p = presets.soc(name)
    v = soc.generate_preset(p)
    text = v.read_text()
    m = presets.manifest(v.parent)["derived"]
    dma = _ports(text, r"\binput\s+wire\s+io_ddrDma(\d*)_aw_ready\b")
    nand = _ports(text, r"\boutput\s+wire\s+\[7:0\]\s+io_nand(\d*)_dq_o\b")
    assert len(dma) == m["dma_ports"] and len(nand) == m["nand_channels"]
    width = re.search(r"output\s+wire\s+\[(\d+):0\]\s+io_ddrDma_w_payload_data\b", text)
    assert (int(width.group(1)) + 1) // 8 == m["dma_port_bytes"]
    header = (v.parent / presets.HARNESS_HEADER).read_text()
    defines = dict(re.findall(r"^#define (LSMC_\w+) (\d+)$", header, re.M))
    assert int(defines["LSMC_DMA_PORTS"]) == len(dma) and int(defines["LSMC_NAND_CHANNELS"]) == len(nand)
    more = re.search(r"#define LSMC_FOR_EACH_MORE_DMA_PORT\(X\)(.*)$", header, re.M).group(1)
    assert sorted(int(n) for n in re.findall(r"X\((\d+)\)", more)) == sorted(int(n) for n in dma if n)
    te_ports, te = m["te_read_ports"], p.config["tableEngine"]
    per_unit = te["readPortsPerUnit"] if te["readPortPerUnit"] else 0
    assert len(te_ports) == m["te_units"] * per_unit
    assert te_ports == list(range(m["dma_ports"] - len(te_ports), m["dma_ports"]))  # the last ports
    assert m["te_unit_ports"] == [te_ports[u * per_unit:(u + 1) * per_unit] for u in range(m["te_units"])] \
        if per_unit else m["te_unit_ports"] == []
    writes = m["te_write_ports"]
    assert writes == ([ports[0] for ports in m["te_unit_ports"]] if te["writePortPerUnit"] else [])
    for n in te_ports:
        u = (n - te_ports[0]) // per_unit
        for ch in ("aw", "w"):
            if n in writes:
                assert re.match(rf"te{u}_write\w*_{ch}_valid$", _driver(text, f"io_ddrDma{n}_{ch}_valid") or ""), \
                    f"io_ddrDma{n} {ch}: not table-engine unit {u}'s writes"
            else:
                assert _driver(text, f"io_ddrDma{n}_{ch}_valid") == "1'b0", f"io_ddrDma{n} {ch}: not tied off"
        assert re.match(rf"te{u}_read\w*_ar_valid$", _driver(text, f"io_ddrDma{n}_ar_valid") or ""), \
            f"io_ddrDma{n}: not table-engine unit {u}'s reads"


def _driver(verilog: str, signal: str) -> str | None:
    """The expression driving `signal` in `verilog`, through `assign a = b;` aliases (SpinalHDL's port wires)."""
    found = None
    while m := re.search(rf"^\s*assign {signal} = (.+);$", verilog, re.M):
        found = m[1]
        if not re.fullmatch(r"\w+", found):
            break
        signal = found
    return found


def test_ip_manifest_names_its_preset():
    out = ipsim.generate(128, 4)
    m = presets.manifest(out)
    assert m["preset"] == "ip-w128-k4" and m["config"]["ways"] == 4 and m["config"]["dataWidth"] == 128
    assert re.search(r"\bio_key3_valid\b", (out / "CompactionIp.v").read_text())


def _make_var(folder, var: str) -> str:
    res = subprocess.run(["make", "-s", "-C", str(folder), "--eval", f"print-var: ; @echo $({var})", "print-var"],
                         capture_output=True, text=True, timeout=120, check=True)
    return res.stdout.strip()


def test_makefile_defaults_are_the_packages_folders():
    assert _make_var(ROOT / "fw", "GEN_INC").split() == [str(g) for g in firmware.GEN_INCLUDES]
    assert _make_var(ROOT / "host", "GEN") == str(ipsim.gen_dir(128, 2))


def test_every_sim_width_units_ways_has_one_preset():
    seen = set()
    for w in soc.WIDTHS:
        for u in soc.UNITS:
            for k in soc.WAYS:
                try:
                    p = soc.preset_for(w, u, k)
                except presets.PresetError:
                    assert w != 128 and (u, k) != (1, 2)  # the 32-bit IP is built as Table III's one unit only
                    continue
                assert (p.derived["ip_width"], p.derived["units"], p.derived["ways"]) == (w, u, k)
                seen.add(p.name)
    # The KB16 sweep's presets; a SoC with table-engine units (tables-m1) is named by its own tools.
    assert len(seen) == len({p.name for p in presets.soc_presets().values()
                             if p.target == "sim" and not p.dma_port_slice and not p.arbiter_slice
                             and not p.derived.get("te_units")})


def test_scaling_read_ports_stay_within_the_harness():
    for u in soc.UNITS:
        for k in soc.WAYS:
            if (u, k) != (1, 2):
                ports = soc.scaling_read_ports(u, k)
                assert k % ports == 0 and u * ports <= soc.MAX_DMA_PORTS
                assert ports == k or u * ports * 2 > soc.MAX_DMA_PORTS  # a port per reader unless too many


def test_board_builds_each_find_their_preset():
    """Each board target's build (its on-chip RAM in boards/<board>/target.py, direct or NV-DDR pads) is a preset."""
    from types import SimpleNamespace

    from lsmc.boards import gateware, litex_soc
    targets = sorted((ROOT / "boards").glob("*/target.py"))
    assert len(targets) >= 3
    for t in targets:
        ram = re.search(r"^\s+ram_kib = (\d+)", t.read_text(), re.M)
        board = SimpleNamespace(ram_kib=int(ram.group(1)) if ram else None)
        for nvddr in (False, True):
            p = gateware.board_preset(**litex_soc.soc_generate_args(board, nvddr))
            assert p.target == "board" and p.derived["sim_ctrl"] is False and p.derived["nand_channels"] == 1
            assert p.derived["ram_kib"] == (board.ram_kib or firmware.default_ram_kib()), t


def test_unknown_or_unbuilt_configuration_is_one_error():
    with pytest.raises(presets.PresetError, match=r"no sim SoC preset with 32-bit streams, 2 unit\(s\) of 2 ways"):
        soc.preset_for(32, 2, 2)
    with pytest.raises(presets.PresetError, match="unknown SoC preset 'nope' \\(one of: table3-w128, "):
        presets.soc("nope")
    with pytest.raises(ValueError, match="width 64 not one of"):
        ipsim.gen_dir(64)
    res = subprocess.run(["python3", "-m", "lsmc.build.presets", "folder", "nope"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "unknown SoC preset 'nope'" in res.stderr


def test_damaged_presets_file_is_one_error(tmp_path, monkeypatch):
    bad = tmp_path / "presets.json"
    bad.write_text('{"soc": {}')
    monkeypatch.setattr(presets, "PRESETS_JSON", bad)
    presets._data.cache_clear()
    try:
        with pytest.raises(presets.PresetError, match=str(bad)):
            presets.soc_presets()
        bad.write_text('{"soc": []}')
        presets._data.cache_clear()
        with pytest.raises(presets.PresetError, match="no 'soc', 'compaction' and 'dma' objects"):
            presets.soc_presets()
    finally:
        presets._data.cache_clear()


def test_table_engine_units_have_one_merge_stage(monkeypatch):
    """Every preset with table-engine units has the same merge stage, the one the rtl and model back ends and
    LevelDB's host library build (presets.te_merge_bytes); presets that disagree are refused by name."""
    units = [p for p in presets.soc_presets().values() if p.derived["te_units"]]
    assert units and {p.derived["te_merge_bytes"] for p in units} == {presets.te_merge_bytes()}
    assert presets.te_merge_bytes() in (16, 32)
    odd = dataclasses.replace(units[0], derived={**units[0].derived, "te_merge_bytes": 16 if
                                                   presets.te_merge_bytes() == 32 else 32})
    monkeypatch.setattr(presets, "soc_presets", lambda: {**{p.name: p for p in units}, odd.name + "-odd": odd})
    with pytest.raises(presets.PresetError, match="te_merge_bytes differ"):
        presets.te_merge_bytes()
