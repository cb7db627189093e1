package soc

import scala.collection.immutable.ListMap

import _root_.compaction.CompactionConfig

/** A named build of the SoC: its folder under build/gen, its simulator's folder under build/sim (`variant`),
  * whether it runs in the SoC harness or on a board (`target`), and its configuration. */
case class SocPreset(name: String, folder: String, variant: String, target: String, what: String, config: LsmcSocConfig)

/** Every SoC that is built today, by name (`soc.Generate --preset NAME`). The Python package, the harness
  * build and the board targets find a build here (through the rendered list lsmc/data/presets.json and the
  * manifest beside each generated Verilog), never by rebuilding folder names or limits themselves. */
object SocPresets {
  import LsmcSocConfig.{paper, tableIII128}

  /** DDR ports per unit of a scaling build: one per reader (each its own read buffer at the controller),
    * fewer (a divisor of K) when M x K ports would exceed maxDmaPorts. */
  def scalingReadPorts(units: Int, ways: Int): Int =
    Iterator.iterate(ways)(_ / 2).find(p => units * p <= LsmcSocConfig.maxDmaPorts).get

  /** M units of K ways for the scaling sweep (docs/scaling.md, "What limits"): 512-bit DDR ports (the
    * KCU105's native LiteDRAM word), 128-beat (4 KiB) write bursts grouped across the units, a port per
    * reader (reader 0 shares the first with the writers). */
  def scaling(units: Int, ways: Int) = LsmcSocConfig(units = units,
    compaction = CompactionConfig(dataWidth = 128, ways = ways),
    dma = SocDmaConfig(portWidth = 512, writeBurst = 128, readPorts = scalingReadPorts(units, ways), writeGroup = true))

  /** The LiteX boards' SoC: Table III's one two-way unit, no simulation control, one NAND channel (each
    * board's pin plan wires one NAND header), the slice between DMA port 0's write decoders and its arbiter. */
  def board(ramKib: Int = 256, padInputCycles: Int = 0, slice: Boolean = false) = tableIII128.copy(
    onChipRamSize = BigInt(ramKib) * 1024, withSimCtrl = false,
    dma = tableIII128.dma.copy(portSlice = slice, arbiterSlice = true), nand = SocNandConfig(channels = 1, padInputCycles = padInputCycles))

  /** Table III's SoC with `units` 4-way table-engine units, each unit's read and write masters on a DDR port of its
    * own (SocTableEngineConfig.readPortPerUnit: a port's read buffer carries about one unit's reads on the kcu105
    * model, so two units on one port ran only 1.4 times one; writePortPerUnit: port 0's crossbar passed one unit's
    * 16-byte beats at a time, which held four units to 16 bytes a clock of output), writing 4 KiB bursts
    * (SocTableEngineConfig.writeBurst) so they turn the DDR bus around less often. The ports are the KCU105's native
    * 512-bit LiteDRAM word. Each unit has two ports, its runs' reads split over them (readPortsPerUnit: four units on
    * one port each ran 281,725 clocks on the db_bench job, 230,627 with twice the read buffer a port). Every tables
    * preset's units have the wider merge stage (`tablesMerge`). */
  def tablesOn512(units: Int) = tableIII128.copy(dma = tableIII128.dma.copy(portWidth = 512),
    tableEngine = SocTableEngineConfig(units = units, ways = 4, readPortPerUnit = true, writePortPerUnit = true,
      writeBurst = 256, mergeBytes = tablesMerge, readPortsPerUnit = 2, writeGroup = true))

  /** The tables presets' merge stage: 32 bytes a beat inside a unit of 16 (table_engine/doc/merge.md, "A wider stage";
    * 100.51 MHz alone on the ECP5, the SoC's clock is 100 MHz). `lsmc tables compact`'s rtl and model back ends
    * build and estimate the same unit (presets.json's te_merge_bytes). */
  val tablesMerge = 32

  private def sliced(c: LsmcSocConfig) = c.copy(dma = c.dma.copy(portSlice = true))

  val all: Seq[SocPreset] = Seq(
    SocPreset("table3-w128", "soc", "soc", "sim",
      "the simulator's default: Table III at 128 bits, the storage flow, the console, LevelDB's kb16-soc back end", tableIII128),
    SocPreset("table3-w32", "soc_w32", "soc-w32", "sim",
      "Table III on Peng et al.'s platform: one two-way unit with 32-bit streams", paper),
    SocPreset("table3-w128-slice", "soc_slice", "soc-slice", "sim",
      "the default with the DMA port slices (a timing experiment, checked against the default)", sliced(tableIII128)),
    SocPreset("table3-w128-arbslice", "soc_arbslice", "soc-arbslice", "sim",
      "the default with the board builds' slice between DMA port 0's write decoders and its arbiter (checked against the default)",
      tableIII128.copy(dma = tableIII128.dma.copy(arbiterSlice = true)))
  ) ++ (for (m <- 1 to SocMap.Units.max; k <- Seq(2, 4) if (m, k) != (1, 2)) yield
    SocPreset(s"scaling-m${m}k$k", s"soc_m${m}k$k", s"soc-m${m}k$k", "sim",
      s"scaling: $m unit${if (m > 1) "s" else ""} of $k ways, ${scalingReadPorts(m, k)} DDR port(s) per unit", scaling(m, k))
  ) ++ Seq(
    SocPreset("tables-m1", "soc_te_m1", "soc-te-m1", "sim",
      "Table III's one two-way KB16 unit and one 4-way table-engine unit with the wider merge stage (lsmc tables compact --backend soc)",
      tableIII128.copy(tableEngine = SocTableEngineConfig(units = 1, ways = 4, mergeBytes = tablesMerge))),
    SocPreset("tables-m2", "soc_te_m2", "soc-te-m2", "sim",
      "tables-m1 with two 4-way table-engine units, two 512-bit DDR ports each (its runs' reads split over them, its writes on the first), 4 KiB write bursts grouped across the units (sub-compaction parts side by side)",
      tablesOn512(2)),
    SocPreset("tables-m4", "soc_te_m4", "soc-te-m4", "sim",
      "tables-m1 with four 4-way table-engine units, two 512-bit DDR ports each (its runs' reads split over them, its writes on the first), 4 KiB write bursts grouped across the units (sub-compaction parts side by side)",
      tablesOn512(4)),
    SocPreset("board", "soc_board", "soc-board", "board", "KCU105 and Arty A7 (LiteX): 256 KiB on-chip RAM", board()),
    SocPreset("board-ram128", "soc_board_ram128", "soc-board-ram128", "board", "ECPIX-5 (LiteX): 128 KiB on-chip RAM",
      board(ramKib = 128)),
    SocPreset("board-nvddr", "soc_board_pad1", "soc-board-pad1", "board",
      "KCU105 behind the NV-DDR pad wrapper (one pad input cycle)", board(padInputCycles = 1)),
    SocPreset("board-ram128-nvddr", "soc_board_ram128_pad1", "soc-board-ram128-pad1", "board",
      "ECPIX-5 behind the NV-DDR pad wrapper (one pad input cycle)", board(ramKib = 128, padInputCycles = 1)),
    SocPreset("board-slice", "soc_board_slice", "soc-board-slice", "board",
      "the KCU105/Arty SoC with the DMA port slices (timing experiment)", board(slice = true)),
    SocPreset("board-ram128-slice", "soc_board_ram128_slice", "soc-board-ram128-slice", "board",
      "the ECPIX-5 SoC with the DMA port slices (timing experiment, docs/boards.md)", board(ramKib = 128, slice = true))
  )
  require(all.map(_.name).distinct.size == all.size && all.map(_.folder).distinct.size == all.size, "preset names and folders are unique")

  def byName(name: String): Option[SocPreset] = all.find(_.name == name)

  /** What a consumer needs beyond the parameters: limits, counts and addresses that follow from them. */
  def derived(c: LsmcSocConfig): ListMap[String, Any] = ListMap(
    "clock_hz" -> c.clockHz,
    "ram_kib" -> c.onChipRamSize / 1024,
    "units" -> c.units,
    "ways" -> c.compaction.ways,
    "ip_width" -> c.compaction.dataWidth,
    "dma_ports" -> c.dmaPorts,
    "dma_port_bytes" -> c.dma.portWidth / 8,
    "nand_channels" -> c.nand.channels,
    "nand_targets" -> c.nand.targets,
    "sim_ctrl" -> c.withSimCtrl,
    "max_units" -> SocMap.Units.max,
    "max_dma_ports" -> LsmcSocConfig.maxDmaPorts,
    "max_nand_channels" -> SocMap.NandChannels.max,
    "te_units" -> c.tableEngine.units,
    "te_ways" -> c.tableEngine.ways,
    "te_merge_bytes" -> c.tableEngine.mergeBeat,
    // the DMA ports (n of io_ddrDma<n>) of the table-engine units' reads, unit by unit; empty: they share port 0
    "te_read_ports" -> (c.kb16DmaPorts until c.dmaPorts),
    // ... each unit's (readPortsPerUnit in a row: run r's reads on its port r mod their count)
    "te_unit_ports" -> (c.kb16DmaPorts until c.dmaPorts).grouped(c.tableEngine.readPortsPerUnit).map(_.toSeq).toSeq,
    // ... and of their writes (writePortPerUnit: each unit's first port); empty: port 0
    "te_write_ports" -> (if (c.tableEngine.writePortPerUnit)
      (c.kb16DmaPorts until c.dmaPorts by c.tableEngine.readPortsPerUnit).toSeq else Seq[Int]()),
    "unit_regs" -> (0 until c.units).map(u => ListMap(
      "cip" -> (SocMap.apbBase + SocMap.Units.compactionOf(u)), "dma" -> (SocMap.apbBase + SocMap.Units.dmaOf(u)),
      "irq" -> SocMap.Irq.cip(u))),
    "nand_regs" -> (0 until c.nand.channels).map(ch => ListMap(
      "base" -> (SocMap.apbBase + SocMap.NandChannels.baseOf(ch)), "irq" -> SocMap.Irq.nandOf(ch))),
    "te_regs" -> (0 until c.tableEngine.units).map(u => ListMap(
      "base" -> (SocMap.apbBase + SocMap.TableEngines.baseOf(u)), "irq" -> SocMap.Irq.teOf(u))))

  /** The manifest of a build (manifest.json beside its Verilog; a preset's entry in the rendered list). */
  def manifest(p: SocPreset, c: LsmcSocConfig, overridden: Seq[String] = Nil): ListMap[String, Any] = ListMap(
    "preset" -> p.name, "variant" -> p.variant, "folder" -> p.folder, "target" -> p.target, "what" -> p.what,
    "overridden" -> overridden, "config" -> c, "derived" -> derived(c))

  /** The SoC harness's view of a build (sim/soc/harness.cpp includes it): port and channel counts and the
    * lists its binding macros expand over, so the harness holds no per-port ladder. */
  def harnessHeader(p: SocPreset, c: LsmcSocConfig): String = {
    def list(name: String, n: Int, what: String) =
      s"/* $what */\n#define $name(X)" + (1 until n).map(i => s" X($i)").mkString + "\n"
    s"""/* Generated by soc.Generate from preset ${p.name} (hw/soc/rtl/Presets.scala; manifest.json beside it). Do not edit. */
       |#ifndef LSMC_SOC_CONFIG_H
       |#define LSMC_SOC_CONFIG_H
       |#define LSMC_PRESET "${p.name}"
       |#define LSMC_UNITS ${c.units}
       |#define LSMC_WAYS ${c.compaction.ways}
       |#define LSMC_IP_WIDTH ${c.compaction.dataWidth}
       |#define LSMC_DMA_PORTS ${c.dmaPorts}
       |#define LSMC_DMA_PORT_BYTES ${c.dma.portWidth / 8}
       |#define LSMC_NAND_CHANNELS ${c.nand.channels}
       |#define LSMC_NAND_TARGETS ${c.nand.targets}
       |""".stripMargin +
      list("LSMC_FOR_EACH_MORE_DMA_PORT", c.dmaPorts, "X(n) for DMA DDR ports 1.. (io_ddrDma<n>; port 0 is io_ddrDma)") +
      list("LSMC_FOR_EACH_MORE_NAND_CHANNEL", c.nand.channels, "X(c) for NAND channels 1.. (io_nand<c>; channel 0 is io_nand)") +
      "#endif\n"
  }

  def write(dir: String, name: String, text: String): Unit = {
    new java.io.File(dir).mkdirs()
    val w = new java.io.PrintWriter(new java.io.File(dir, name), "UTF-8")
    try w.write(text) finally w.close()
  }
}

/** `soc.Presets --out DIR`: DIR/presets.json, every named build (the SoC's, the compaction IP's and the DMA's
  * alone) with its folder, parameters and derived limits, as lsmc/data/presets.json holds it (Python reads
  * that copy without starting the JVM; tests/test_configurations.py renders this again and compares). */
object Presets {
  def render: String = common.Json.render(ListMap(
    // as soc.Generate --preset builds them: with the register headers (no --no-docs)
    "soc" -> ListMap(SocPresets.all.map(p => p.name -> SocPresets.manifest(p, p.config.copy(withDocs = true))): _*),
    "compaction" -> ListMap(CompactionConfig.presets.map { case (n, f, c) => n -> ListMap("folder" -> f, "config" -> c) }: _*),
    "dma" -> ListMap(_root_.dma.DmaConfig.presets.map { case (n, f, c) => n -> ListMap("folder" -> f, "config" -> c) }: _*)
  )) + "\n"

  def main(args: Array[String]): Unit = {
    val a = common.Gen.parse("soc.Presets", args, "build/gen/presets", Nil)
    SocPresets.write(a.out, "presets.json", render)
  }
}
