"""Full-SoC simulation of the storage flow (fw/apps/storage.c on VexRiscv + compaction IP + NAND
controller + two ONFI models): KB16 runs to NAND, back, merged, merged run written back, verified."""
import pytest

from lsmc import nandsim


@pytest.mark.slow
def test_storage_flow_full_soc():
    passed, run = nandsim.storage_demo()
    assert passed, run.uart[-2000:] + run.stderr[-2000:]
    assert "mode 5, 2 target(s)" in run.uart
    # both targets were used (interleaved runs) and nothing violated the ONFI timing
    assert "nand0:" in run.stderr and "nand1:" in run.stderr
    assert "contention" not in run.stderr
