"""The DMA port slices (LsmcSocConfig.dmaPortSlice, soc.Generate --dma-port-slice: a full register slice on the
compaction unit's DDR master and on the NAND link before DMA port 0's crossbar) and the board builds' arbiter
slice (LsmcSocConfig.dma.arbiterSlice, --dma-arbiter-slice: between each write decoder and DMA port 0's write
arbiter).
The simulated SoC with them runs the storage flow (runs to NAND over the NAND link, read back, merged by
the compaction IP through its DMA, written back, verified) as the default build does: same console but
for the cycle figures, same merged run and invalid addresses in DDR, no AXI protocol violation (the
harness's checks on every DDR port exit 4), both NAND targets used. Only latency may differ."""
import re

import pytest

from lsmc.build import firmware, presets
from lsmc.sim import soc

# fw/apps/storage/flow.c: the IP's merged run and invalid addresses (ST_HW_OUT, ST_HW_INV), their sizes.
HW_OUT, HW_INV = 0x4C400000, 0x4C600000
_CYCLES = re.compile(r"^storage: cycles write (\d+), read (\d+), merge (\d+), write-back (\d+), verify (\d+)$", re.M)
_MERGED = re.compile(r"-> merged (\d+) B, (\d+) invalid addresses")


def _storage(exe, workdir):
    elf = firmware.BUILD_FW / "storage.elf"
    workdir.mkdir(parents=True, exist_ok=True)
    # Dumps as large as the flow's buffers (ST_OUT_CAP); compared up to the sizes the flow reports.
    dumps = [(HW_OUT, 0x200000, workdir / "out.bin"), (HW_INV, 0x100000, workdir / "inv.bin")]
    r = soc.run_soc(elf, arg=0, exe=exe, dumps=dumps, timeout=1800)
    assert r.returncode == 0 and "storage: PASS" in r.uart, r.uart[-2000:] + r.stderr[-1000:]
    merged, invalid = map(int, _MERGED.search(r.uart).groups())
    return {"uart": _CYCLES.sub("", r.uart), "cycles": tuple(map(int, _CYCLES.search(r.uart).groups())),
            "total": r.cycles, "stderr": r.stderr,
            "out": (workdir / "out.bin").read_bytes()[:merged], "inv": (workdir / "inv.bin").read_bytes()[:invalid * 4]}


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    firmware.build_firmware()
    return _storage(soc.build_soc(), tmp_path_factory.mktemp("plain"))


def _same_but_latency(plain, sliced, what):
    assert len(plain["out"]) > 0 and len(plain["inv"]) > 0
    for key in ("uart", "out", "inv"):
        assert sliced[key] == plain[key], f"{key} differs with {what}"
    assert re.search(r"^sim: nand1: \d+ commands", sliced["stderr"], re.M)  # both targets worked
    # Latency only: a cycle or two per transaction each way, a few percent of each phase at most.
    for a, b in zip(plain["cycles"], sliced["cycles"]):
        assert abs(b - a) <= a // 10 + 1000, (plain["cycles"], sliced["cycles"])
    print(f"storage flow cycles (write, read, merge, write-back, verify): default {plain['cycles']} "
          f"total {plain['total']}, {what} {sliced['cycles']} total {sliced['total']}")


# Only with LSMC_LONG=1: the port slices are a timing experiment no board preset uses (a SoC build of ~165 s in CI).
@pytest.mark.slow
@pytest.mark.long
def test_storage_flow_with_dma_port_slices_matches_default(plain, tmp_path):
    # the flag took effect: the NAND link's slice (named after its output) is in the sliced Verilog only
    assert "nandDma_path_toPort_r_s2mPipe" in soc.generate_soc(dma_port_slice=True).read_text()
    assert "nandDma_path_toPort" not in soc.generate_soc().read_text()
    _same_but_latency(plain, _storage(soc.build_soc(dma_port_slice=True), tmp_path), "the DMA port slices")


def test_arbiter_slice_is_where_the_board_builds_want_it():
    """The board builds' slice between DMA port 0's write decoders and its write arbiter (LsmcSoc.arbiterSlice,
    preset table3-w128-arbslice): W through an m2sPipe and an s2mPipe, AW and B through halfPipes."""
    sliced_v = soc.generate_preset(presets.soc("table3-w128-arbslice")).read_text()
    plain_v = soc.generate_soc().read_text()
    # the flag took effect: unit 0's and the NAND link's W each through two 256-bit data registers (the
    # m2sPipe's and the s2mPipe's), nowhere else
    wide = re.compile(r"^\s*reg\s+\[255:0\]\s", re.M)
    assert len(wide.findall(sliced_v)) - len(wide.findall(plain_v)) == 4
    assert all(p.arbiter_slice for p in presets.soc_presets().values() if p.target == "board")


# Only with LSMC_LONG=1 (a SoC build of ~165 s in CI): the storage flow through the sliced SoC. In CI the sliced
# SoC still runs: it is the board SoC, whose simulation (tests/test_boards.py) runs a compaction job through the DMA.
@pytest.mark.slow
@pytest.mark.long
def test_storage_flow_with_the_arbiter_slice_matches_default(plain, tmp_path):
    _same_but_latency(plain, _storage(soc.build_soc(preset="table3-w128-arbslice"), tmp_path), "the arbiter slice")
