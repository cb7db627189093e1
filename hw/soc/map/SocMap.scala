package soc

/** Sizes and clock the map depends on; LsmcSocConfig takes its defaults from here. */
case class MapConfig(onChipRamSize: BigInt = 256 * 1024, ddrSize: BigInt = BigInt(256) * 1024 * 1024,
                     clockHz: BigInt = 100000000) {
  require(MapConfig.ramKibChoices.contains(onChipRamSize / 1024) && onChipRamSize % 1024 == 0,
    s"on-chip RAM must be one of ${MapConfig.ramKibChoices.mkString(", ")} KiB, not $onChipRamSize bytes")
}

object MapConfig {
  /** On-chip RAM sizes a build may choose (`--ram-kib`): 256 KiB in simulation and on the Xilinx boards;
    * 128 KiB on the ECPIX-5, whose ECP5 has 208 block RAMs (lsmc.elf needs ~83 KiB and its 16 KiB stack). */
  val ramKibChoices = Seq(128, 256)
  def ramKibOpt = common.Gen.intOpt("ram-kib", (MapConfig().onChipRamSize / 1024).toInt, allowed = ramKibChoices)
}

/** The SoC's memory map, interrupt lines, small peripheral registers and the firmware's reserved
  * regions: the ONE source of these facts. soc.Generate exports them next to the Verilog as
  * `lsmc_soc.h` (firmware, harnesses), `lsmc_soc.ld` (the firmware's linker script) and
  * `lsmc_soc.json` (Python: `lsmc.build.memmap`). Names are the C names the firmware uses. */
object SocMap {
  val ddrBase     = 0x40000000L
  val ramBase     = 0x80000000L
  val apbBase     = 0xF0000000L
  val apbSize     = 1 << 20 // 0xF000_0000 .. 0xF00F_FFFF: every peripheral below
  val uart        = 0x00000
  val timer       = 0x01000
  val irqCtrl     = 0x02000
  val dma         = 0x03000
  val simCtrl     = 0x0F000
  val compaction  = 0x10000
  val nand        = 0x20000
  val periphSize  = 4 << 10
  val nandSize    = 64 << 10

  /** Compaction units (IP + its DMA): unit u's registers at `dma` / `compaction` + u * unitStride, so
    * unit 0 keeps the one-unit SoC's addresses. Slots of units a build leaves out read 0 (ID too), so
    * one firmware finds the units present by their ID. */
  object Units {
    val max    = 8
    val stride = 0x1000
    def dmaOf(u: Int): Long = dma + u.toLong * stride
    def compactionOf(u: Int): Long = compaction + u.toLong * stride
  }

  /** NAND channels (a controller with its chip enables each): channel c's registers at
    * `nand` + c * stride, so channel 0 keeps the one-channel SoC's address; slots of channels a build
    * leaves out read 0 (the NAND ID register too), so firmware finds the channels present by their ID. */
  object NandChannels {
    val max    = 4
    val stride = nandSize
    def baseOf(c: Int): Long = nand + c.toLong * stride
  }

  /** Table-engine units (the engine behind its register front end, te_regs.h): unit u's registers at
    * `tableEngine` + u * stride, after the NAND channels' slots. A build without them leaves the slots unmapped;
    * one with them maps the absent ones to read 0, so firmware finds the units present by their ID. */
  val tableEngine = 0x60000
  object TableEngines {
    val max    = 4
    val stride = 0x1000
    def baseOf(u: Int): Long = tableEngine + u.toLong * stride
  }

  object Irq {
    val uart       = 0
    val compaction = 1
    val dma0       = 2 // 2..5: DMA channels 0..3
    val dmaCount   = 4
    val nand       = 6
    val cipUnit1   = 8 // 8..14: the IP of units 1..7 (unit 0 keeps line 1)
    def cip(u: Int): Int = if (u == 0) compaction else cipUnit1 + u - 1
    val nandChannel1 = 16 // 16..18: NAND channels 1..3 (channel 0 keeps line 6)
    def nandOf(c: Int): Int = if (c == 0) nand else nandChannel1 + c - 1
    val te0        = 20 // 20..23: table-engine units 0..3
    def teOf(u: Int): Int = te0 + u
    val count      = 24
  }

  /** Registers of the small peripherals that have no regif block (offsets from their base). */
  object Regs {
    val uart    = Seq("DATA" -> 0x00, "STATUS" -> 0x04, "CLOCK_DIVIDER" -> 0x08, "FRAME_CONFIG" -> 0x0C)
    val timer   = Seq("MTIME_LO" -> 0x00, "MTIME_HI" -> 0x04, "MTIMECMP_LO" -> 0x08, "MTIMECMP_HI" -> 0x0C)
    val irqCtrl = Seq("PENDING" -> 0x00, "ENABLE" -> 0x04)
    val simCtrl = Seq("EXIT" -> 0x00, "ARG" -> 0x04, "ID" -> 0x08)
    def offset(regs: Seq[(String, Int)], name: String): Int = regs.find(_._1 == name).get._2
  }
  val simIdMagic = 0x53494D43L // "SIMC": SIMCTL_ID reads it in simulation, 0 on a board

  /** Firmware stack at the top of the on-chip RAM; code, data and heap below it. */
  val fwStackSize = 16L << 10
  /** DDR split: the host (harness `--load`, board loader) writes jobs and runs in the lower half;
    * the firmware's own working buffers (bench, storage, NAND scratch) live in the upper half. */
  def ddrHostSize(ddrSize: BigInt): BigInt = ddrSize / 2

  case class Region(name: String, base: BigInt, size: BigInt, doc: String)

  /** Every addressable region, in address order of the bus it sits on. */
  def regions(cfg: MapConfig): Seq[Region] = Seq(
    Region("DDR", ddrBase, cfg.ddrSize, "DDR (sim: C++ memory model; board: DDR controller)"),
    Region("RAM", ramBase, cfg.onChipRamSize, "on-chip RAM: firmware code, data, stack (reset vector)"),
    Region("UART", apbBase + uart, periphSize, "UART (spinal.lib Apb3UartCtrl)"),
    Region("TIMER", apbBase + timer, periphSize, "machine timer (mtime/mtimecmp, counts clock cycles)"),
    Region("IRQC", apbBase + irqCtrl, periphSize, "interrupt controller (PENDING/ENABLE, machine external IRQ)"),
    Region("DMA", apbBase + dma, periphSize, "compaction DMA, 4 channels (dma_regs.h)"),
    Region("SIMCTL", apbBase + simCtrl, periphSize, "simulation control (absent on boards: reads 0)"),
    Region("DMA_UNITS", apbBase + Units.dmaOf(1), Units.stride * (Units.max - 1), "DMA blocks of compaction units 1..7 (unit u at DMA_BASE + u * UNIT_STRIDE)"),
    Region("CIP", apbBase + compaction, periphSize, "compaction IP registers (compaction_regs.h)"),
    Region("CIP_UNITS", apbBase + Units.compactionOf(1), Units.stride * (Units.max - 1), "compaction IPs of units 1..7 (unit u at CIP_BASE + u * UNIT_STRIDE)"),
    Region("NAND", apbBase + nand, nandSize, "NAND controller registers of channel 0 (nand_regs.h)"),
    Region("NAND_CHANNELS", apbBase + NandChannels.baseOf(1), NandChannels.stride * (NandChannels.max - 1),
      "NAND controllers of channels 1..3 (channel c at NAND_BASE + c * NAND_CHANNEL_STRIDE)"),
    Region("TE", apbBase + tableEngine, TableEngines.stride * TableEngines.max,
      "table-engine units 0..3 (te_regs.h; unit u at TE_BASE + u * TE_STRIDE; unmapped in builds without them)")
  )

  /** The firmware's reserved regions, inside DDR and RAM above (job-descriptor checks use them). */
  def firmwareRegions(cfg: MapConfig): Seq[Region] = {
    val host = ddrHostSize(cfg.ddrSize)
    Seq(
      Region("FW_IMAGE", ramBase, cfg.onChipRamSize - fwStackSize, "firmware code, data, bss and heap"),
      Region("FW_STACK", ramBase + cfg.onChipRamSize - fwStackSize, fwStackSize, "firmware stack (grows down from the end of RAM)"),
      Region("DDR_HOST", ddrBase, host, "host-loaded data: job descriptor at its start, runs, expected results"),
      Region("DDR_SCRATCH", ddrBase + host, cfg.ddrSize - host, "firmware working buffers (bench, storage, NAND scratch)")
    )
  }

  def irqs: Seq[(String, Int, String)] = Seq(("UART", Irq.uart, "UART"), ("CIP", Irq.compaction, "compaction IP")) ++
    (0 until Irq.dmaCount).map(n => (s"DMA$n", Irq.dma0 + n, s"DMA channel $n")) ++ Seq(("NAND", Irq.nand, "NAND controller")) ++
    (1 until Units.max).map(u => (s"CIP$u", Irq.cip(u), s"compaction IP of unit $u")) ++
    (1 until NandChannels.max).map(c => (s"NAND$c", Irq.nandOf(c), s"NAND controller of channel $c")) ++
    (0 until TableEngines.max).map(u => (s"TE$u", Irq.teOf(u), s"table-engine unit $u"))

  private def h(v: BigInt, d: Int = 8) = s"0x%0${d}X".format(v.bigInteger)

  /** C header in LiteX export.py style: `#define X_BASE 0x...u`, sizes, IRQ numbers. */
  def cHeader(cfg: MapConfig): String = {
    def blk(title: String, defs: Seq[(String, String, String)]) = {
      val w = defs.map(_._1.length).max + 1
      s"/* $title */\n" + defs.map { case (n, v, c) =>
        val d = s"#define %-${w}s %s".format(n, v)
        if (c.isEmpty) d else s"$d /* $c */"
      }.mkString("\n") + "\n"
    }
    val regs = blk("Memory map", regions(cfg).flatMap(r => Seq((s"${r.name}_BASE", h(r.base) + "u", r.doc), (s"${r.name}_SIZE", h(r.size) + "u", ""))))
    val fw = blk("Firmware regions", firmwareRegions(cfg).flatMap(r => Seq((s"${r.name}_BASE", h(r.base) + "u", r.doc), (s"${r.name}_SIZE", h(r.size) + "u", ""))))
    val irq = blk("Interrupt lines of the interrupt controller", irqs.map { case (n, i, d) => (s"IRQ_$n", i.toString, d) } ++
      Seq(("IRQ_DMA(ch)", s"(${Irq.dma0} + (ch))", "DMA channel ch (unit 0)"),
        ("IRQ_CIP_UNIT(u)", s"((u) ? ${Irq.cipUnit1 - 1} + (u) : ${Irq.compaction})", "compaction IP of unit u"),
        ("IRQ_NAND_CHANNEL(c)", s"((c) ? ${Irq.nandChannel1 - 1} + (c) : ${Irq.nand})", "NAND controller of channel c"),
        ("IRQ_LINES", Irq.count.toString, "lines of the controller")))
    val units = blk("Compaction units (IP + DMA); a slot without a unit reads 0", Seq(
      ("UNITS_MAX", Units.max.toString, "unit slots in the map"),
      ("UNIT_STRIDE", h(Units.stride, 4) + "u", "bytes between the register blocks of two units"),
      ("CIP_UNIT_BASE(u)", s"(CIP_BASE + (u) * UNIT_STRIDE)", "compaction IP of unit u"),
      ("DMA_UNIT_BASE(u)", s"(DMA_BASE + (u) * UNIT_STRIDE)", "DMA of unit u")))
    val nandCh = blk("NAND channels; a slot without a channel reads 0", Seq(
      ("NAND_CHANNELS_MAX", NandChannels.max.toString, "channel slots in the map"),
      ("NAND_CHANNEL_STRIDE", h(NandChannels.stride, 5) + "u", "bytes between the register blocks of two channels"),
      ("NAND_CHANNEL_BASE(c)", "(NAND_BASE + (c) * NAND_CHANNEL_STRIDE)", "NAND controller of channel c")))
    val teUnits = blk("Table-engine units (te_regs.h)", Seq(
      ("TE_UNITS_MAX", TableEngines.max.toString, "unit slots in the map"),
      ("TE_STRIDE", h(TableEngines.stride, 4) + "u", "bytes between the register blocks of two units"),
      ("TE_UNIT_BASE(u)", "(TE_BASE + (u) * TE_STRIDE)", "table-engine unit u"),
      ("IRQ_TE_UNIT(u)", s"(${Irq.te0} + (u))", "its interrupt line")))
    def per(p: String, rs: Seq[(String, Int)]) = rs.map { case (n, o) => (s"${p}_$n", h(o, 2), "") }
    val pregs = blk("Registers of the small peripherals (offsets from their base)",
      per("UART", Regs.uart) ++ Seq(("UART_DATA_VALID", "(1u << 16)", "read of UART_DATA: a byte was received")) ++
        per("TIMER", Regs.timer) ++ per("IRQC", Regs.irqCtrl) ++ per("SIMCTL", Regs.simCtrl) ++
        Seq(("SIMCTL_ID_MAGIC", h(simIdMagic) + "u", "\"SIMC\"")))
    val clk = blk("Clock", Seq(("CPU_HZ", s"${cfg.clockHz}u", "nominal system clock: cycles -> time")))
    s"""/* LsmcSoc memory map, generated by soc.Generate from hw/soc/map/SocMap.scala. Do not edit. */
       |#ifndef LSMC_SOC_MAP_H
       |#define LSMC_SOC_MAP_H
       |
       |$regs
       |$fw
       |$irq
       |$units
       |$nandCh
       |$teUnits
       |$pregs
       |$clk
       |#endif /* LSMC_SOC_MAP_H */
       |""".stripMargin
  }

  /** Linker-script fragment: the RAM the firmware links into and its stack size. */
  def ldScript(cfg: MapConfig): String = {
    val img = firmwareRegions(cfg).find(_.name == "FW_IMAGE").get
    s"""/* Generated by soc.Generate from hw/soc/map/SocMap.scala. Do not edit. */
       |MEMORY
       |{
       |    ram (rwx) : ORIGIN = ${h(ramBase)}, LENGTH = ${h(cfg.onChipRamSize)}
       |}
       |FW_STACK_SIZE = ${h(fwStackSize)};
       |FW_IMAGE_SIZE = ${h(img.size)};
       |""".stripMargin
  }

  def json(cfg: MapConfig): String = {
    def q(s: String) = "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
    def reg(r: Region) = s"""    {"name": ${q(r.name)}, "base": ${r.base}, "size": ${r.size}, "doc": ${q(r.doc)}}"""
    def per(rs: Seq[(String, Int)]) = rs.map { case (n, o) => s"${q(n)}: $o" }.mkString("{", ", ", "}")
    s"""{
       |  "source": "hw/soc/map/SocMap.scala",
       |  "clock_hz": ${cfg.clockHz},
       |  "regions": [
       |${regions(cfg).map(reg).mkString(",\n")}
       |  ],
       |  "firmware": [
       |${firmwareRegions(cfg).map(reg).mkString(",\n")}
       |  ],
       |  "irqs": {${irqs.map { case (n, i, _) => s"${q(n)}: $i" }.mkString(", ")}},
       |  "irq_lines": ${Irq.count},
       |  "units": {"max": ${Units.max}, "stride": ${Units.stride}, "cip_irq": [${(0 until Units.max).map(Irq.cip).mkString(", ")}]},
       |  "nand_channels": {"max": ${NandChannels.max}, "stride": ${NandChannels.stride}, "irq": [${(0 until NandChannels.max).map(Irq.nandOf).mkString(", ")}]},
       |  "table_engines": {"max": ${TableEngines.max}, "stride": ${TableEngines.stride}, "irq": [${(0 until TableEngines.max).map(Irq.teOf).mkString(", ")}]},
       |  "registers": {"UART": ${per(Regs.uart)}, "TIMER": ${per(Regs.timer)}, "IRQC": ${per(Regs.irqCtrl)}, "SIMCTL": ${per(Regs.simCtrl)}},
       |  "sim_id_magic": $simIdMagic
       |}
       |""".stripMargin
  }

  def writeFiles(cfg: MapConfig, dir: String): Unit = {
    new java.io.File(dir).mkdirs()
    for ((f, text) <- Seq("lsmc_soc.h" -> cHeader(cfg), "lsmc_soc.ld" -> ldScript(cfg), "lsmc_soc.json" -> json(cfg)))
      java.nio.file.Files.write(new java.io.File(dir, f).toPath, text.getBytes("UTF-8"))
  }
}

/** `soc.MemoryMap [--ram-kib 128|256] --out DIR`: only lsmc_soc.h / .ld / .json (Mill module `socmap`: no CPU, no
  * elaboration, seconds). soc.Generate writes the same files next to the Verilog. */
object MemoryMap {
  def main(args: Array[String]): Unit = {
    val a = common.Gen.parse("soc.MemoryMap", args, "build/gen/soc_map", Seq(MapConfig.ramKibOpt))
    SocMap.writeFiles(MapConfig(onChipRamSize = BigInt(a.int("ram-kib")) * 1024), a.out)
  }
}
