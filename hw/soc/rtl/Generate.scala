package soc

import common.{Gen, Generator}

/** `soc.Generate [--out DIR] [--uart-baud N] [--ip-width 32|128] [--units M] [--ways 2|4] [--shared-dma-port] [--dma-port-width 256|512] [--dma-write-burst BEATS] [--dma-read-ports 1|2|4] [--dma-write-group] [--nand-channels N] [--nand-pad-input-cycles 0..3] [--dma-port-slice] [--ram-kib 128|256] [--no-sim-ctrl] [--no-docs]`: DIR/LsmcSoc.v (default
  * build/gen/soc), the register blocks of every IP (unless --no-docs) and the memory map exported
  * from SocMap (lsmc_soc.h / .ld / .json). */
object Generate extends Generator("build/gen/soc",
  Gen.intOpt("uart-baud", 115200, what = "BAUD", min = 1),
  // 32: seed 000's platform (32-bit streams) for the faithful Table III; 128: this project's design.
  Gen.intOpt("ip-width", 128, allowed = Seq(32, 128)),
  // Compaction units M and their ways K (default LsmcSocConfig: 4 x 4; Table III builds: 1 x 2).
  Gen.intOpt("units", LsmcSocConfig().units, allowed = 1 to SocMap.Units.max),
  Gen.intOpt("ways", LsmcSocConfig().ways, allowed = Seq(2, 4)),
  Gen.flagOpt("shared-dma-port", "the units share one DDR port for their DMAs (default: a port per unit)"),
  Gen.intOpt("dma-port-width", LsmcSocConfig().dmaPortWidth, allowed = Seq(256, 512)),
  Gen.intOpt("dma-write-burst", LsmcSocConfig().dmaWriteBurst, what = "BEATS", min = 1),
  Gen.intOpt("dma-read-ports", LsmcSocConfig().dmaReadPorts, allowed = Seq(1, 2, 4)),
  Gen.flagOpt("dma-write-group", "the units' DMA writers write their full bursts together (docs/scaling.md)"),
  Gen.intOpt("nand-channels", LsmcSocConfig().nandChannels, allowed = 1 to SocMap.NandChannels.max),
  // Board builds behind the NV-DDR pad wrapper: its IDDR's cycle (boards/nand_pads.py PAD_INPUT_CYCLES).
  Gen.intOpt("nand-pad-input-cycles", LsmcSocConfig().nandPadInputCycles, allowed = 0 to 3),
  Gen.flagOpt("dma-port-slice", "a full register slice on each DMA master before its DDR port crossbar (timing experiment; off in every build)"),
  MapConfig.ramKibOpt, // the on-chip RAM (board variants: the ECPIX-5 builds 128 KiB)
  Gen.flagOpt("no-sim-ctrl", "leave the simulation-control block out (board builds)"),
  Gen.flagOpt("no-docs", "do not write the register headers")) {

  def config(a: Gen.Args) = LsmcSocConfig(uartBaud = a.int("uart-baud"), ipDataWidth = a.int("ip-width"),
    units = a.int("units"), ways = a.int("ways"), dmaPortPerUnit = !a.flag("shared-dma-port"),
    dmaPortWidth = a.int("dma-port-width"), dmaWriteBurst = a.int("dma-write-burst"),
    dmaReadPorts = a.int("dma-read-ports"), dmaWriteGroup = a.flag("dma-write-group"), nandChannels = a.int("nand-channels"),
    nandPadInputCycles = a.int("nand-pad-input-cycles"), dmaPortSlice = a.flag("dma-port-slice"),
    onChipRamSize = BigInt(a.int("ram-kib")) * 1024, withDocs = !a.flag("no-docs"),
    withSimCtrl = !a.flag("no-sim-ctrl"))
  // Board builds (no simulation control) carry no simulation clock gate either.
  def top(a: Gen.Args) = common.SimClockGate.Enabled(!a.flag("no-sim-ctrl")) on {
    new LsmcSoc(config(a)).setDefinitionName("LsmcSoc")
  }
  override def clockHz(a: Gen.Args) = Some(config(a).clockHz)
  override def after(a: Gen.Args, report: spinal.core.SpinalReport[spinal.core.Component]) =
    SocMap.writeFiles(config(a).mapConfig, a.out)
}

