"""Full-SoC simulation of the storage flow (fw/apps/storage.c on VexRiscv + compaction IP + NAND
controller + two ONFI models): KB16 runs to NAND, back, merged, merged run written back, verified."""
import pytest

from lsmc.sim import nandsim


@pytest.mark.slow
def test_storage_flow_full_soc():
    passed, run = nandsim.storage_demo()
    assert passed, run.uart[-2000:] + run.stderr[-2000:]
    assert "mode 5, 2 target(s)" in run.uart
    # both targets were used (interleaved runs) and nothing violated the ONFI timing
    assert "nand0:" in run.stderr and "nand1:" in run.stderr
    assert "contention" not in run.stderr


@pytest.mark.slow
def test_storage_console_commands_full_soc():
    """storage.elf console (SIM_ARG 1): the `storage` command and the `nand` commands on the SoC."""
    from lsmc.build import firmware
    from lsmc.sim import soc
    firmware.build_firmware()
    elf = firmware.BUILD_FW / "storage.elf"
    run = soc.run_soc(elf, arg=1, uart_in="nand init 2\nnand status 1\nstorage 64 50 2\nnand bogus\nexit\n",
                      uart_prompt="storage> ", timeout=1800)
    assert run.returncode == 0, run.uart[-2000:] + run.stderr[-1000:]
    out = run.uart
    assert "init: OK" in out and "MT29F4G08ABADAWP" in out and "timing mode 5, 2 target(s)" in out
    assert "status: OK (flash status 0xe0" in out
    assert "storage: PASS" in out
    assert "nand init [targets]" in out  # help printed for the unknown sub-command
