package soc

import common.{Gen, Generator}

/** `soc.Generate [--preset NAME] [--out DIR] [--uart-baud N] [--ip-width 32|128] [--units M] [--ways 2|4] [--shared-dma-port] [--dma-port-width 256|512] [--dma-write-burst BEATS] [--dma-read-ports 1|2|4] [--dma-write-group] [--nand-channels N] [--nand-pad-input-cycles 0..3] [--dma-port-slice] [--dma-arbiter-slice] [--ram-kib 128|256] [--no-sim-ctrl] [--no-docs]`:
  * DIR/LsmcSoc.v (default build/gen/soc), the register blocks of every IP (unless --no-docs), the memory map
  * exported from SocMap (lsmc_soc.h / .ld / .json), the build's manifest.json and the SoC harness's
  * lsmc_soc_config.h. With a preset (SocPresets) options given beside it override its values; without one
  * the options apply to LsmcSocConfig's defaults, as before presets. */
object Generate extends Generator("build/gen/soc",
  Gen.choiceOpt("preset", SocPresets.all.map(_.name), "PRESET"),
  Gen.intOpt("uart-baud", 115200, what = "BAUD", min = 1),
  Gen.intOpt("ip-width", 128, allowed = Seq(32, 128)),
  // Compaction units M and their ways K (default LsmcSocConfig: 4 x 4; Table III builds: 1 x 2).
  Gen.intOpt("units", LsmcSocConfig().units, allowed = 1 to SocMap.Units.max),
  Gen.intOpt("ways", LsmcSocConfig().compaction.ways, allowed = Seq(2, 4)),
  Gen.flagOpt("shared-dma-port", "the units share one DDR port for their DMAs (default: a port per unit)"),
  Gen.intOpt("dma-port-width", LsmcSocConfig().dma.portWidth, allowed = Seq(256, 512)),
  Gen.intOpt("dma-write-burst", LsmcSocConfig().dma.writeBurst, what = "BEATS", min = 1),
  Gen.intOpt("dma-read-ports", LsmcSocConfig().dma.readPorts, allowed = Seq(1, 2, 4)),
  Gen.flagOpt("dma-write-group", "the units' DMA writers write their full bursts together (docs/scaling.md)"),
  Gen.intOpt("nand-channels", LsmcSocConfig().nand.channels, allowed = 1 to SocMap.NandChannels.max),
  // Board builds behind the NV-DDR pad wrapper: its IDDR's cycle (lsmc/boards/nand_pads.py PAD_INPUT_CYCLES).
  Gen.intOpt("nand-pad-input-cycles", LsmcSocConfig().nand.padInputCycles, allowed = 0 to 3),
  Gen.flagOpt("dma-port-slice", "a full register slice on each DMA master before its DDR port crossbar (timing experiment; off in every build)"),
  Gen.flagOpt("dma-arbiter-slice", "a register slice between each write decoder and DMA port 0's write arbiter (on in the board builds)"),
  MapConfig.ramKibOpt, // the on-chip RAM (board variants: the ECPIX-5 builds 128 KiB)
  Gen.flagOpt("no-sim-ctrl", "leave the simulation-control block out (board builds)"),
  Gen.flagOpt("no-docs", "do not write the register headers")) {

  /** The options that change the configuration (all but --preset, --out, --no-docs). */
  private val configOpts = Seq("uart-baud", "ip-width", "units", "ways", "shared-dma-port", "dma-port-width",
    "dma-write-burst", "dma-read-ports", "dma-write-group", "nand-channels", "nand-pad-input-cycles", "dma-port-slice",
    "dma-arbiter-slice", "ram-kib", "no-sim-ctrl")

  def preset(a: Gen.Args): Option[SocPreset] = SocPresets.byName(a.str("preset"))

  def config(a: Gen.Args): LsmcSocConfig = {
    val base = preset(a).map(_.config).getOrElse(LsmcSocConfig(uartBaud = a.int("uart-baud"), units = a.int("units"),
      compaction = _root_.compaction.CompactionConfig(dataWidth = a.int("ip-width"), ways = a.int("ways")),
      dma = SocDmaConfig(portPerUnit = !a.flag("shared-dma-port"), portWidth = a.int("dma-port-width"),
        writeBurst = a.int("dma-write-burst"), readPorts = a.int("dma-read-ports"), writeGroup = a.flag("dma-write-group"),
        portSlice = a.flag("dma-port-slice"), arbiterSlice = a.flag("dma-arbiter-slice")),
      nand = SocNandConfig(channels = a.int("nand-channels"), padInputCycles = a.int("nand-pad-input-cycles")),
      onChipRamSize = BigInt(a.int("ram-kib")) * 1024, withSimCtrl = !a.flag("no-sim-ctrl")))
    if (preset(a).isEmpty) return base.copy(withDocs = !a.flag("no-docs"))
    // With a preset: only the options given change it.
    def int(name: String, v: Int) = if (a.given(name)) a.int(name) else v
    def on(name: String, v: Boolean) = v || a.flag(name)
    base.copy(uartBaud = int("uart-baud", base.uartBaud), units = int("units", base.units),
      compaction = base.compaction.copy(dataWidth = int("ip-width", base.compaction.dataWidth),
        ways = int("ways", base.compaction.ways)),
      dma = base.dma.copy(portPerUnit = base.dma.portPerUnit && !a.flag("shared-dma-port"),
        portWidth = int("dma-port-width", base.dma.portWidth), writeBurst = int("dma-write-burst", base.dma.writeBurst),
        readPorts = int("dma-read-ports", base.dma.readPorts), writeGroup = on("dma-write-group", base.dma.writeGroup),
        portSlice = on("dma-port-slice", base.dma.portSlice),
        arbiterSlice = on("dma-arbiter-slice", base.dma.arbiterSlice)),
      nand = base.nand.copy(channels = int("nand-channels", base.nand.channels),
        padInputCycles = int("nand-pad-input-cycles", base.nand.padInputCycles)),
      onChipRamSize = if (a.given("ram-kib")) BigInt(a.int("ram-kib")) * 1024 else base.onChipRamSize,
      withSimCtrl = base.withSimCtrl && !a.flag("no-sim-ctrl"), withDocs = !a.flag("no-docs"))
  }
  // Board builds (no simulation control) carry no simulation clock gate either.
  def top(a: Gen.Args) = {
    val c = config(a)
    common.SimClockGate.Enabled(c.withSimCtrl) on { new LsmcSoc(c).setDefinitionName("LsmcSoc") }
  }
  override def clockHz(a: Gen.Args) = Some(config(a).clockHz)
  override def after(a: Gen.Args, report: spinal.core.SpinalReport[spinal.core.Component]) = {
    val c = config(a)
    SocMap.writeFiles(c.mapConfig, a.out)
    // A build from options alone gets a manifest too (no preset, folder or variant named).
    val p = preset(a).getOrElse(SocPreset("", "", "", if (c.withSimCtrl) "sim" else "board", "options only", c))
    SocPresets.write(a.out, "manifest.json", common.Json.render(SocPresets.manifest(p, c, configOpts.filter(a.given))) + "\n")
    SocPresets.write(a.out, "lsmc_soc_config.h", SocPresets.harnessHeader(p, c))
  }
}
