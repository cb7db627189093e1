package soc

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.com.uart._
import spinal.lib.misc.MachineTimer
import vexriscv._
import vexriscv.ip.{DataCacheConfig, InstructionCacheConfig}
import vexriscv.plugin._

import scala.collection.mutable.ArrayBuffer

/** The SoC's DMA paths to DDR (the compaction units' DMA parameters beyond their IP's width and K). */
case class SocDmaConfig(
    // true: each unit's DMA has its own DDR port (io_ddrDma, io_ddrDma1..), as a multi-port controller
    // (LiteDRAM crossbar, MIG) gives them; false: the units share io_ddrDma through an Axi4 crossbar.
    portPerUnit: Boolean = true,
    // Width of the DMA DDR ports: 256 (the DMA's own width) or 512, the KCU105's native LiteDRAM word
    // (64-bit DDR4 at 1:4): an upsizer per unit then halves the beats a port has in flight for the same
    // bytes (docs/scaling.md).
    portWidth: Int = 256,
    // Beats (256-bit) per DMA write burst (DmaWriter maxBurst): 16 = 512 B; longer for several units.
    writeBurst: Int = 16,
    // DDR ports per unit (portPerUnit): 1, or P (a divisor of ways) with the DMA's readers split over
    // them (CompactionDma readPorts; P = ways: a port per reader): each port has its own read buffer at
    // the controller.
    readPorts: Int = 1,
    // Write grouping (CompactionDma writeGroup): the units' DMA writers hold full bursts until one of them
    // must write, then all write together: one read/write turnaround pair per group on the shared DDR bus.
    writeGroup: Boolean = false,
    // A full register slice (LsmcSoc.dmaPortSlice) on each compaction unit's DDR master and on the NAND link,
    // before their DMA port crossbar, so no ready/valid chain runs combinationally from a port's arbiter into a
    // unit's DMA or the NAND path. Off by default, in the board builds too: the whole ECPIX-5 route with it was
    // slower (its 256-bit W buffers' load enables became the critical path, docs/boards.md).
    portSlice: Boolean = false,
    // A register slice between each master's write decoder and the write arbiter of a DMA port crossbar with
    // several writers (DMA port 0: unit 0, the NAND link, table engines; LsmcSoc.arbiterSlice), so the
    // arbiter's route FIFO and grant never reach a decoder's counters in the same cycle. On in the board
    // builds (docs/boards.md, "Seed sweep"); off in the simulator's, whose cycle counts it would change.
    arbiterSlice: Boolean = false
) {
  require(portWidth == 256 || portWidth == 512, s"dma.portWidth must be 256 or 512, not $portWidth")
}

/** The SoC's NAND channels (each a controller, its AXI master, interrupt and register block). */
case class SocNandConfig(
    channels: Int = 4,
    targets: Int = 2,        // chip enables per channel
    padInputCycles: Int = 0, // register stages of the board's pads ahead of NAND DQ in (NandParams.padInputCycles)
    // true: the NAND channels' DMA reaches DDR through DMA port 0 (io_ddrDma, next to unit 0), each channel
    // upsized to the port's width; false: through the CPU side's 32-bit DDR port (io_ddr), shared with the
    // caches, 400 MB/s at 100 MHz for every channel together (hw/ip/nand/doc/nand.md).
    dmaPort: Boolean = true
) {
  require(channels >= 1 && channels <= SocMap.NandChannels.max,
    s"nand.channels must be 1..${SocMap.NandChannels.max}, not $channels")
  /** One channel's controller. */
  def params = _root_.nand.NandParams(targets = targets, padInputCycles = padInputCycles)
}

/** The SoC's table-engine units (each the engine behind its register front end, table_engine.TableEngineUnit):
  * `units` of `ways` (K) each; 0 (the default) leaves them out and the SoC is as it was. Their AXI masters, upsized
  * to the DMA port's width, join DMA port 0's crossbar; registers at SocMap.TableEngines, interrupt Irq.teOf(u).
  *
  * `readPortPerUnit`: each unit's read master has a DDR port of its own instead (as the KB16 units' read ports of
  * SocDmaConfig.readPorts; its write channels tied off unless writePortPerUnit), after the KB16 units' ports:
  * io_ddrDma<N + u> for unit u, N the KB16 ports (LsmcSocConfig.kb16DmaPorts). Why: a controller
  * port's read buffer (LiteDRAM's, the harness's DdrController::readCredits, docs/ddr-model.md) bounds the read beats
  * one port has in flight, about 9 bytes a clock of reads a port on the kcu105 model: one unit's rate on db_bench,
  * so units sharing port 0 could not scale (hw/ip/table_engine/doc/table_engine_soc.md, "Several units").
  *
  * `writePortPerUnit` (with readPortPerUnit): the unit's write master on that port too, instead of port 0's crossbar.
  * Why: a unit writes at most one 16-byte beat a clock, and a port's crossbar passes one write burst at a time, so
  * the units writing through port 0 together got 16 bytes a clock between them: four units' output of the db_bench
  * job (5.25 MB) alone took 328 k clocks there, the whole bracket, on the kcu105 DDR model and on the fixed one alike
  * (table_engine_soc.md, "Several units").
  *
  * `writeBurst`: beats (16 bytes) of a unit's write bursts. 16 (256 B) is the engine's own; 256 (4 KiB, one AXI page)
  * in tables-m2/-m4, where several units read and write at once: every short write burst split the reads and cost
  * the DDR bus a read/write turnaround each way (four units: 37.5 % of the controller's cycles at 256 B bursts,
  * table_engine_soc.md, "Several units").
  *
  * `mergeBytes`: the merge stage's beat inside the unit, 0 (the unit's 16) or 32, the wider stage (merge.md, "A wider
  * stage"): a db_bench entry in 8 clocks instead of 12, the input above 12 bytes a clock (the tables presets).
  *
  * `readPortsPerUnit` (with readPortPerUnit): DDR ports of each unit, its reads split over them by table reader (run
  * r's on the unit's port r mod n, the index spill's read-back as run K: common.Axi4ReadOnlyIdSplit, each an upsizer
  * of its own), its writes on the first. Why: a port's read buffer bounds its reads in flight, about 8 bytes a clock
  * on the kcu105 model, below one unit's 12 on db_bench once four units load the DDR (table_engine_soc.md, "Two read
  * ports a unit"). */
case class SocTableEngineConfig(units: Int = 0, ways: Int = 4, readPortPerUnit: Boolean = false,
                                writePortPerUnit: Boolean = false, writeBurst: Int = 16, mergeBytes: Int = 0,
                                readPortsPerUnit: Int = 1, writeGroup: Boolean = false) {
  require(units >= 0 && units <= SocMap.TableEngines.max, s"tableEngine.units must be 0..${SocMap.TableEngines.max}, not $units")
  require(Seq(2, 4, 8).contains(ways), s"tableEngine.ways must be 2, 4 or 8, not $ways")
  require(!readPortPerUnit || units > 0, "tableEngine.readPortPerUnit needs table-engine units (units 0 has none)")
  require(!writePortPerUnit || readPortPerUnit, "tableEngine.writePortPerUnit writes on the unit's own port: it needs readPortPerUnit")
  require(readPortsPerUnit >= 1 && readPortsPerUnit <= ways + 1 && (readPortsPerUnit == 1 || readPortPerUnit),
    s"tableEngine.readPortsPerUnit must be 1, or 2 .. ways + 1 (${ways + 1}) with readPortPerUnit, not $readPortsPerUnit")
  require(!writeGroup || units >= 2, "tableEngine.writeGroup groups several units' write bursts: it needs 2 or more units")
  require(mergeBytes == 0 || mergeBytes == 2 * SocTableEngineConfig.Bytes,
    s"tableEngine.mergeBytes must be 0 (the unit's ${SocTableEngineConfig.Bytes}) or ${2 * SocTableEngineConfig.Bytes}, not $mergeBytes")
  /** The merge stage's beat (bytes). */
  def mergeBeat: Int = if (mergeBytes == 0) SocTableEngineConfig.Bytes else mergeBytes
  /** DDR ports of the units' own (their read masters', and their write masters' with writePortPerUnit): `units` x
    * readPortsPerUnit with readPortPerUnit, else none; unit u's are readPortsPerUnit in a row, its writes on the first. */
  def readPorts: Int = if (readPortPerUnit) units * readPortsPerUnit else 0
  /** One unit's engine: 16 bytes a beat, K ways, the model's key and block limits (model/limits.h, read at
    * elaboration as lsmc.build.table_engine_top reads them for the engine's own builds), the walker's default
    * capacities. */
  def engine = _root_.table_engine.TableEngineConfig(bytes = SocTableEngineConfig.Bytes, ways = ways,
    keyLimit = SocTableEngineConfig.limit("kMaxUserKeyBytes") + 8, maxBlock = SocTableEngineConfig.limit("kMaxBlockBytes"),
    maxBlocks = 1024, writeBurst = writeBurst, writeFifoBeats = scala.math.max(64, 2 * writeBurst), mergeBytes = mergeBytes,
    writeGroup = writeGroup)
}

object SocTableEngineConfig {
  /** A unit's beat: 16 bytes. */
  val Bytes = 16
  val LimitsFile = "hw/ip/table_engine/model/limits.h"
  /** `constexpr ... NAME = N;` or `N << S` / `Nu << S` of model/limits.h. */
  def limit(name: String): Int = {
    val text = { val s = scala.io.Source.fromFile(LimitsFile, "UTF-8"); try s.mkString finally s.close() }
    val m = (name + """\s*=\s*(\d+)u?(?:\s*<<\s*(\d+))?\s*;""").r.findFirstMatchIn(text)
      .getOrElse(throw new IllegalArgumentException(s"$LimitsFile: no constant $name"))
    m.group(1).toInt << Option(m.group(2)).map(_.toInt).getOrElse(0)
  }
}

/** Every generation parameter of the SoC, the IPs' own configurations nested (VexRiscv's style: a case
  * class per block). The named builds: SocPresets (Presets.scala, docs/configurations.md). */
case class LsmcSocConfig(
    clockHz: BigInt = MapConfig().clockHz,
    onChipRamSize: BigInt = MapConfig().onChipRamSize,
    ddrSize: BigInt = MapConfig().ddrSize,
    iCacheSize: Int = 8192,
    dCacheSize: Int = 8192,
    uartBaud: Int = 115200,
    units: Int = 4,  // compaction units M (IP + DMA each)
    // Each unit's IP: its stream width and ways K (2 or 4 in the SoC), FIFO depths.
    compaction: _root_.compaction.CompactionConfig = _root_.compaction.CompactionConfig(dataWidth = 128, ways = 4),
    dma: SocDmaConfig = SocDmaConfig(),
    nand: SocNandConfig = SocNandConfig(),
    tableEngine: SocTableEngineConfig = SocTableEngineConfig(),
    withDocs: Boolean = false, // write the register headers of the IPs next to the Verilog
    withSimCtrl: Boolean = true
) {
  require(units >= 1 && units <= SocMap.Units.max, s"units must be 1..${SocMap.Units.max}, not $units")
  require(compaction.ways == 2 || compaction.ways == 4, s"ways must be 2 or 4 in the SoC, not ${compaction.ways}")
  require(dma.readPorts == 1 || (dma.portPerUnit && compaction.ways % dma.readPorts == 0 &&
    units * dma.readPorts <= LsmcSocConfig.maxDmaPorts),
    s"dmaReadPorts ${dma.readPorts}: 1, or a divisor of ways (${compaction.ways}) with a port per unit and at most " +
      s"${LsmcSocConfig.maxDmaPorts} DMA ports in all ($units units)")
  require(dmaPorts <= LsmcSocConfig.maxDmaPorts, s"$dmaPorts DMA ports ($kb16DmaPorts of the compaction units, " +
    s"${tableEngine.readPorts} table-engine read ports): at most ${LsmcSocConfig.maxDmaPorts} (the harness binds that many)")
  /** One unit's DMA: the IP's width and a reader per input. */
  def unitDma = _root_.dma.DmaConfig(dataWidth = compaction.dataWidth, readers = compaction.ways,
    writeBurst = dma.writeBurst, readPorts = dma.readPorts, writeGroup = dma.writeGroup)
  /** DMA DDR ports of the compaction (KB16) units: io_ddrDma .. io_ddrDma<kb16DmaPorts - 1>. */
  def kb16DmaPorts: Int = if (dma.portPerUnit) units * dma.readPorts else 1
  /** DMA DDR ports of the SoC (io_ddrDma, io_ddrDma1 ..): the KB16 units' then the table-engine units' read ports. */
  def dmaPorts: Int = kb16DmaPorts + tableEngine.readPorts
  def mapConfig = MapConfig(onChipRamSize, ddrSize, clockHz)
  /** DDR port of the CPU side (I$/D$ refills, NAND DMA): 32-bit like the CPU buses. */
  def ddrCpuAxiConfig = Axi4Config(addressWidth = 32, dataWidth = 32, idWidth = 4,
    useRegion = false, useLock = false, useQos = false, useCache = false, useProt = false)
  /** DDR port of the compaction DMA: `dmaPortWidth` bits (see docs/soc.md, docs/scaling.md).
    * The units' crossbar adds log2(M) id bits to a DMA's own; at least 4 (the one-unit port). */
  /** The NAND channels' link into DMA port 0: every channel's AXI master upsized to the port's width,
    * arbitrated by a crossbar of its own (its id bits name the channel). */
  def nandLinkAxiConfig = _root_.nand.NandParams().axiConfig.copy(dataWidth = dma.portWidth,
    idWidth = _root_.nand.NandParams().axiConfig.idWidth + log2Up(nand.channels))
  /** Masters on DMA port 0's crossbar: its unit(s), the NAND link with nandDmaPort, the table-engine units' masters. */
  private def port0Masters = (if (dma.portPerUnit) 1 else units) + (if (nand.dmaPort) 1 else 0) +
    ((if (tableEngine.readPortPerUnit) 0 else 1) + (if (tableEngine.writePortPerUnit) 0 else 1)) * tableEngine.units // those not on a port of their own
  /** A table-engine unit's masters at the DMA port's width. */
  def teReadAxiConfig = _root_.table_engine.TableEngineUnit.readAxi(tableEngine.engine).copy(dataWidth = dma.portWidth)
  def teWriteAxiConfig = _root_.table_engine.TableEngineUnit.writeAxi(tableEngine.engine).copy(dataWidth = dma.portWidth)
  private def teIdWidth = if (tableEngine.units == 0) 0 else scala.math.max(teReadAxiConfig.idWidth, teWriteAxiConfig.idWidth)
  def ddrDmaAxiConfig = Axi4Config(addressWidth = 32, dataWidth = dma.portWidth,
    idWidth = scala.math.max(4, Seq(_root_.dma.DmaBus.axiConfigFor(compaction.ways).idWidth,
      if (nand.dmaPort) nandLinkAxiConfig.idWidth else 0, teIdWidth).max + log2Up(port0Masters)),
    useRegion = false, useLock = false, useQos = false, useCache = false, useProt = false)

  def uartConfig = UartCtrlMemoryMappedConfig(
    uartCtrlConfig = UartCtrlGenerics(dataWidthMax = 8, clockDividerWidth = 20,
      preSamplingSize = 1, samplingSize = 5, postSamplingSize = 2),
    initConfig = UartCtrlInitConfig(baudrate = uartBaud, dataLength = 7, parity = UartParityType.NONE,
      stop = UartStopType.ONE),
    txFifoDepth = 64,
    rxFifoDepth = 64
  )

  /** RV32IM with caches, modelled on VexRiscv's Briey/GenFullNoMmu configurations. */
  def cpuPlugins = ArrayBuffer[Plugin[VexRiscv]](
    new IBusCachedPlugin(
      resetVector = SocMap.ramBase,
      prediction = STATIC,
      config = InstructionCacheConfig(cacheSize = iCacheSize, bytePerLine = 32, wayCount = 1,
        addressWidth = 32, cpuDataWidth = 32, memDataWidth = 32, catchIllegalAccess = true,
        catchAccessFault = true, asyncTagMemory = false, twoCycleRam = true, twoCycleCache = true)
    ),
    new DBusCachedPlugin(
      config = new DataCacheConfig(cacheSize = dCacheSize, bytePerLine = 32, wayCount = 1,
        addressWidth = 32, cpuDataWidth = 32, memDataWidth = 32, catchAccessError = true,
        catchIllegal = true, catchUnaligned = true),
      memoryTranslatorPortConfig = null
    ),
    // 0xF000_0000.. is I/O: uncached, in order.
    new StaticMemoryTranslatorPlugin(ioRange = _(31 downto 28) === 0xF),
    new DecoderSimplePlugin(catchIllegalInstruction = true),
    new RegFilePlugin(regFileReadyKind = vexriscv.plugin.SYNC, zeroBoot = false),
    new IntAluPlugin,
    new SrcPlugin(separatedAddSub = false, executeInsertion = true),
    new FullBarrelShifterPlugin,
    new MulPlugin,
    new DivPlugin,
    new HazardSimplePlugin(bypassExecute = true, bypassMemory = true, bypassWriteBack = true,
      bypassWriteBackBuffer = true, pessimisticUseSrc = false, pessimisticWriteRegFile = false,
      pessimisticAddressMatch = false),
    new BranchPlugin(earlyBranch = false, catchAddressMisaligned = true),
    new CsrPlugin(CsrPluginConfig(
      catchIllegalAccess = true, mvendorid = null, marchid = null, mimpid = null, mhartid = 0,
      misaExtensionsInit = (1 << 8) | (1 << 12), // I, M
      misaAccess = CsrAccess.READ_ONLY, mtvecAccess = CsrAccess.READ_WRITE, mtvecInit = SocMap.ramBase,
      mepcAccess = CsrAccess.READ_WRITE, mscratchGen = true, mcauseAccess = CsrAccess.READ_ONLY,
      mbadaddrAccess = CsrAccess.READ_ONLY, mcycleAccess = CsrAccess.READ_WRITE,
      minstretAccess = CsrAccess.READ_WRITE, ucycleAccess = CsrAccess.READ_ONLY,
      uinstretAccess = CsrAccess.READ_ONLY, wfiGenAsWait = true, ecallGen = true, ebreakGen = true))
  )
}

object LsmcSocConfig {
  /** Peng et al.'s platform for the faithful Table III: one two-way unit, 32-bit streams. */
  def paper = LsmcSocConfig(units = 1, compaction = _root_.compaction.CompactionConfig(dataWidth = 32, ways = 2))
  /** The same one two-way unit with 128-bit streams (Table III, this project's width). */
  def tableIII128 = LsmcSocConfig(units = 1, compaction = _root_.compaction.CompactionConfig(dataWidth = 128, ways = 2))
  /** DMA DDR ports of one SoC at most (the SoC harness binds io_ddrDma .. io_ddrDma15). */
  val maxDmaPorts = 16
}

object LsmcSoc {
  /** The register stage between a NAND channel's upsizer and the NAND crossbar: a halfPipe on every
    * channel (valid, payload and ready all from registers), so no ready of the crossbars and DMA port 0
    * reaches a controller's DMA enables, and no response valid its page buffer, combinationally (the
    * whole-ECPIX-5 routes' critical paths ran from the command layer's DMA through the crossbar). Free in
    * bandwidth: at 256 bits a channel moves at most one beat per 8 of its 32-bit beats, a halfPipe one per
    * 2 cycles; one cycle of latency each way. */
  def nandLinkStage(a: Axi4): Axi4 = a.pipelined(aw = StreamPipe.HALF, w = StreamPipe.HALF, b = StreamPipe.HALF,
    ar = StreamPipe.HALF, r = StreamPipe.HALF)

  /** A full register slice on a master before its DMA port crossbar (LsmcSocConfig.dmaPortSlice): every
    * channel m2sPipe + s2mPipe (valid, payload and ready from registers, full throughput), one cycle each way. */
  def dmaPortSlice(a: Axi4): Axi4 = a.pipelined(aw = StreamPipe.FULL, w = StreamPipe.FULL, b = StreamPipe.FULL,
    ar = StreamPipe.FULL, r = StreamPipe.FULL)

  /** The register slice between a write decoder and its write arbiter inside a crossbar
    * (LsmcSocConfig.dma.arbiterSlice): AW and B through a halfPipe (one command and one response per burst),
    * W through an m2sPipe then an s2mPipe (full rate; the arbiter's ready reaches only the s2mPipe's one
    * valid flag, never the 256-bit data registers' load enable), so valid, payload and ready cross it from
    * registers only. One cycle of latency on each channel. */
  def arbiterSlice(a: Axi4WriteOnly): Axi4WriteOnly = {
    val o = cloneOf(a)
    o.aw << a.aw.halfPipe()
    o.w << a.w.m2sPipe().s2mPipe()
    a.b << o.b.halfPipe()
    o
  }

  /** A DMA port's crossbar; with `slice`, every write decoder reaches the port's write arbiter through
    * arbiterSlice (the crossbar's own decoder-to-arbiter hook, after its AW valid stage). */
  def dmaPortCrossbar(slice: Boolean): Axi4CrossbarFactory =
    if (!slice) Axi4CrossbarFactory()
    else new Axi4CrossbarFactory() {
      override def decoderToArbiterLink(bus: Axi4WriteOnly): Axi4WriteOnly = arbiterSlice(super.decoderToArbiterLink(bus))
    }
}

/** The SoC: VexRiscv RV32IM + AXI4 crossbar + on-chip RAM + two DDR ports + APB3 peripherals.
  * One clock `clk` (100 MHz nominal), synchronous active-high `reset`. */
class LsmcSoc(val cfg: LsmcSocConfig = LsmcSocConfig()) extends Component {
  import SocMap._

  val io = new Bundle {
    val uart    = master(Uart())
    val ddr     = master(Axi4(cfg.ddrCpuAxiConfig))
    val ddrDma  = master(Axi4(cfg.ddrDmaAxiConfig))
    // The other DMA DDR ports: io_ddrDma1 .. io_ddrDma<M P-1> of the compaction units (dmaPortPerUnit, P =
    // dmaReadPorts), then one per table-engine unit with tableEngine.readPortPerUnit (cfg.dmaPorts in all)
    val ddrDmaUnits = (cfg.dmaPorts > 1) generate Vec(master(Axi4(cfg.ddrDmaAxiConfig)), cfg.dmaPorts - 1)
    val simArg  = cfg.withSimCtrl generate (in UInt (32 bits))
    val simExit = cfg.withSimCtrl generate master(Flow(UInt(31 bits)))
    val nand    = master(_root_.nand.NandPins(cfg.nand.targets))
    // Pins of NAND channels 1..N-1: io_nand1 .. io_nand<N-1>
    val nandChannels = (cfg.nand.channels > 1) generate Vec(master(_root_.nand.NandPins(cfg.nand.targets)), cfg.nand.channels - 1)
  }

  // ---------------------------------------------------------------------------------------- memories
  // Its clock runs (common.SimClockGate, Verilator only) while a command is in the RAM: the burst
  // splitter's output valid (the crossbar's command register or a burst in progress) or a response
  // waiting; nothing else changes a register that is read later (idle, the splitter's beat counter and
  // the response stage's payload reload freely in the ungated design, but both are reloaded before use).
  // The CPU runs from its caches most of the time; the RAM's logic was ~5 % of the model's time.
  val ramClockEnable = Bool()
  val ram = common.SimClockGate(ramClockEnable)(Axi4SharedOnChipRam(dataWidth = 32, byteCount = cfg.onChipRamSize, idWidth = 4))
  ramClockEnable := ram.arw.valid.pull() || ram.stage1.valid.pull()

  // ------------------------------------------------------------------------------------- peripherals
  // The CPU-side interconnect (the AXI crossbar with its pipelining stages, the AXI -> APB bridge and the
  // APB decoder) runs on a clock that Verilator stops while nothing moves through it (`busActivity`
  // below): the CPU runs from its caches most of the time, and this logic was ~30 % of the model's time.
  val busClockEnable = Bool()
  val busClock = common.SimClockGate(busClockEnable)
  val apbBridge = busClock(Axi4SharedToApb3Bridge(addressWidth = 20, dataWidth = 32, idWidth = 4))
  // The UART runs on a clock that Verilator stops while no byte moves and its registers are not
  // accessed (SimUart: its time base rests then in every build, so a stopped clock shifts no phase);
  // `settle` more cycles take the one-cycle echoes (flow control, break and error flags).
  val uartClockEnable = Bool()
  val uartClock = common.SimClockGate(uartClockEnable)
  val uart      = uartClock(Apb3UartCtrl(cfg.uartConfig))
  val uartActivity = new ClockingArea(uartClock) {
    val now = !SimUart.restWhenIdle(uart) || uart.io.apb.PSEL(0)
    val settle = Reg(UInt(3 bits)) init (7)
    when(now) { settle := 7 } elsewhen (settle =/= 0) { settle := settle - 1 }
  }
  uartClockEnable := uartActivity.now || uartActivity.settle =/= 0
  val timer     = MachineTimer()
  val irqCtrl   = Apb3IrqCtrl(Irq.count)
  val simCtrl   = cfg.withSimCtrl generate Apb3SimCtrl()

  val irqLines = Bits(Irq.count bits)
  irqLines := 0
  irqLines(Irq.uart) := uart.io.interrupt
  irqCtrl.io.sources := irqLines

  // --------------------------------------------------------------------------------------------- CPU
  val core = new Area {
    val cpu = new VexRiscv(VexRiscvConfig(plugins = cfg.cpuPlugins))
    var iBus: Axi4ReadOnly = null
    var dBus: Axi4Shared   = null
    for (plugin <- cpu.plugins) plugin match {
      case p: IBusCachedPlugin => iBus = p.iBus.toAxi4ReadOnly()
      case p: DBusCachedPlugin => dBus = p.dBus.toAxi4Shared(true)
      case p: CsrPlugin =>
        p.externalInterrupt := irqCtrl.io.irq
        p.timerInterrupt    := timer.io.mTimeInterrupt
      case _ =>
    }
  }

  // ------------------------------------------------------------------------------------ CPU crossbar
  // The DDR ports' slave-driven signals reach the design through a register that exists only in
  // Verilator's gated build (common.SimInputStage: the harness drives them a cycle early), so the logic
  // they feed is no longer re-evaluated in every eval() as input-combinational logic.
  val ddrCpu = common.SimInputStage(io.ddr)
  val axiCrossbar = Axi4CrossbarFactory()
  axiCrossbar.addSlaves(
    ram.io.axi       -> SizeMapping(ramBase, cfg.onChipRamSize),
    ddrCpu           -> SizeMapping(ddrBase, cfg.ddrSize),
    apbBridge.io.axi -> SizeMapping(apbBase, apbSize)
  )
  // NAND controller (hw/ip/nand/rtl): its page DMA moves data between flash and DDR or on-chip RAM.
  // Its clock runs only while it has work (common.SimClockGate, Verilator only; see simActivity): idle, it
  // was a third of the model's time in every compaction workload.
  // One controller per channel, each behind its own gate: an idle channel costs no simulation time.
  val nandPins = if (io.nandChannels != null) io.nand +: io.nandChannels.toSeq else Seq(io.nand)
  for ((pins, c) <- nandPins.zipWithIndex if c > 0) pins.setName(s"io_nand$c")
  val nandCtrls = for ((pins, c) <- nandPins.zipWithIndex) yield new Area {
    val clockEnable = Bool()
    val ctrl = common.SimClockGate(clockEnable)(new _root_.nand.NandController(cfg.nand.params))
    clockEnable := ctrl.simActivity.enable.pull()
    if (cfg.withDocs && c == 0) ctrl.docs()
    pins <> ctrl.io.nand
    irqLines(Irq.nandOf(c)) := ctrl.io.irq
  }.setName(if (c == 0) "nand" else s"nand$c").ctrl

  axiCrossbar.addConnections(
    core.iBus        -> List(ram.io.axi, ddrCpu),
    core.dBus        -> List(ram.io.axi, ddrCpu, apbBridge.io.axi)
  )
  if (!cfg.nand.dmaPort) for (ctrl <- nandCtrls) axiCrossbar.addConnection(ctrl.io.axi, List(ram.io.axi, ddrCpu))
  // Register stages between crossbar and slaves for timing, as in Briey.
  axiCrossbar.addPipelining(apbBridge.io.axi)((crossbar, bridge) => {
    crossbar.sharedCmd.halfPipe() >> bridge.sharedCmd
    crossbar.writeData.halfPipe() >> bridge.writeData
    crossbar.writeRsp             << bridge.writeRsp
    crossbar.readRsp              << bridge.readRsp
  })
  axiCrossbar.addPipelining(ram.io.axi)((crossbar, ctrl) => {
    crossbar.sharedCmd.halfPipe() >> ctrl.sharedCmd
    crossbar.writeData >/-> ctrl.writeData
    crossbar.writeRsp << ctrl.writeRsp
    crossbar.readRsp  << ctrl.readRsp
  })
  axiCrossbar.addPipelining(core.dBus)((cpu, crossbar) => {
    cpu.sharedCmd >> crossbar.sharedCmd
    cpu.writeData >> crossbar.writeData
    cpu.writeRsp  << crossbar.writeRsp
    cpu.readRsp   <-< crossbar.readRsp // the D$ uses read responses unbuffered: cut the path
  })
  busClock(axiCrossbar.build())

  // ------------------------------------------------------------------------------------ APB decoding
  val apbSlaves = ArrayBuffer[(Apb3, SizeMapping)](
    uart.io.apb     -> SizeMapping(SocMap.uart, 4 KiB),
    timer.io.bus    -> SizeMapping(SocMap.timer, 4 KiB),
    irqCtrl.io.apb  -> SizeMapping(SocMap.irqCtrl, 4 KiB)
  )
  if (cfg.withSimCtrl) {
    apbSlaves += simCtrl.io.apb -> SizeMapping(SocMap.simCtrl, 4 KiB)
    simCtrl.io.arg := io.simArg
    io.simExit     := simCtrl.io.exit
  } else {
    apbSlaves += Apb3Absent().io.apb -> SizeMapping(SocMap.simCtrl, 4 KiB)
  }

  // ------------------------------------------------------------- compaction units (hw/ip/*)
  /** Unit u: a K-way compaction IP and its DMA (K readers, out and invalid writers); registers at
    * SocMap.Units.{dmaOf, compactionOf}(u), IP interrupt on Irq.cip(u). Unit 0 is the one-unit SoC's
    * IP (line 1, its DMA channels on lines 2..5); later units signal completion by their IP's line. */
  class CompactionUnit(u: Int) extends Area {
    // The unit (IP, its DMA, the register bridge) runs on a clock that Verilator stops while it is idle
    // (common.SimClockGate; synthesis sees `clk`). `clockEnable` is set below, from the unit's state.
    // THROUGHPUT_COUNTER's register alone has a gate of its own that also runs in COUNT_CONTROL mode 1,
    // where it counts every cycle (the Table III bracket around the CPU's merge): then one register and
    // its adder are evaluated, and the IP's register block and job control stop with the unit (they ran
    // for the counter before: ~8 % of the C merge's time), its datapath by its own gate (CompactionIp).
    val clockEnable = Bool()
    val clock = common.SimClockGate(clockEnable)
    val counterClockEnable = Bool()
    val counterClock = common.SimClockGate(counterClockEnable)
    val ip = clock(_root_.compaction.CompactionIp(cfg.compaction, withDocs = cfg.withDocs && u == 0,
      counterDomain = Some(counterClock)))
    val dma = clock(cfg.unitDma.build())
    // The unit's DDR master at the port's width: the DMA's 256-bit AXI, or an upsizer to 512 bits.
    val upsizer = (cfg.dma.portWidth != _root_.dma.DmaBus.dataWidth) generate
      clock(Axi4Upsizer(dma.io.axi.config, dma.io.axi.config.copy(dataWidth = cfg.dma.portWidth), 4))
    if (upsizer != null) upsizer.io.input << dma.io.axi
    val ddrMaster = if (upsizer != null) upsizer.io.output else dma.io.axi
    // Towards its port crossbar: through a full register slice with dmaPortSlice (off by default).
    val axi = if (cfg.dma.portSlice) clock(LsmcSoc.dmaPortSlice(ddrMaster)) else ddrMaster
    // The further DDR ports (the other reader groups), upsized likewise; their write channels are idle.
    val dmaReads = if (cfg.dma.readPorts > 1) dma.io.axiReads.toSeq else Seq.empty[Axi4ReadOnly]
    val readPorts = for (rp <- dmaReads) yield {
      if (upsizer == null) rp
      else {
        val up = clock(Axi4ReadOnlyUpsizer(rp.config, rp.config.copy(dataWidth = cfg.dma.portWidth), 4))
        up.io.input << rp
        up.io.output
      }
    }
    if (cfg.withDocs && u == 0) dma.docs()
    for (k <- 0 until cfg.compaction.ways) dma.io.keys(k) >> ip.io.keys(k)
    ip.io.out >> dma.io.out
    ip.io.invalid >> dma.io.invalid
    // The writers stop at `last`, or when the IP is done/stopped on error (empty or cut-short output).
    dma.io.flush := ip.regs.io.done.pull() || ip.regs.io.error.pull()
    // A job accepted by the IP arms the writers' flush even if DONE of the previous job never dropped.
    dma.io.ipStart := ip.regs.io.jobStart.pull()
    irqLines(Irq.cip(u)) := ip.io.irq
    if (u == 0) for (n <- 0 until Irq.dmaCount) irqLines(Irq.dma0 + n) := dma.io.irq(n)

    val bridge = clock(Apb3ToAxiLite4(Apb3Config(addressWidth = 12, dataWidth = 32), ip.io.ctrl.config))
    bridge.io.axi >> ip.io.ctrl

    /** The clock runs while anything can change a register of the unit: a job (IP CLEAR/RUN, or ERROR,
      * where it drains its inputs), the IP's measurement window, THROUGHPUT_COUNTER in mode 1 (counts
      * every cycle: the counter's clock only), a busy DMA channel (it waits for its own R/B responses before it ends), any AXI
      * valid on its DDR port, an APB access to its registers; and for `settle` cycles after all of that,
      * for the one-cycle echoes (IRQ output register, COUNT_CONTROL write flag, capacity checks). Every
      * term comes from registers of the SoC's clock (the gate samples it on the falling edge) or from
      * the harness's DDR pins, which it sets before the falling edge. tests/test_sim_clock_gate.py runs
      * the SoC gated and free-running (-DLSMC_NO_CLOCK_GATE) and finds the same cycles and data. */
    val activity = new Area {
      val job = ip.regs.io.busy.pull() || ip.regs.io.error.pull() || ip.control.window.pull()
      val counting = ip.regs.countMode.pull() === 1
      val channels = dma.channels.map(_.busy.pull()).reduce(_ || _)
      // Both sides of the slice (dmaPortSlice): a beat it holds shows as a valid on one of them.
      val bus = (Seq(dma.io.axi, ddrMaster, axi).distinct.map(a => a.ar.valid || a.aw.valid || a.w.valid || a.r.valid || a.b.valid) ++
        (dmaReads ++ readPorts).distinct.map(a => a.ar.valid || a.r.valid)).reduce(_ || _)
      val regs = dma.io.apb.PSEL(0) || bridge.io.apb.PSEL(0)
      val now = job || channels || bus || regs
      val settle = Reg(UInt(3 bits)) init (7)
      when(now) { settle := 7 } elsewhen (settle =/= 0) { settle := settle - 1 }
    }
    clockEnable := activity.now || activity.settle =/= 0
    counterClockEnable := clockEnable || activity.counting
    apbSlaves += dma.io.apb -> SizeMapping(SocMap.Units.dmaOf(u), 4 KiB)
    apbSlaves += bridge.io.apb -> SizeMapping(SocMap.Units.compactionOf(u), 4 KiB)
  }
  val units = (0 until cfg.units).map(u => new CompactionUnit(u).setName(if (u == 0) "compaction" else s"unit$u"))
  // Write grouping: any unit's urgent writer releases every unit's full bursts (registered: the group
  // signal spans the units, a cycle late costs nothing against a burst of 128 beats).
  val writeGroup = cfg.dma.writeGroup generate new Area {
    val go = RegNext(units.map(_.dma.io.writeUrgent).reduce(_ || _)) init (False)
    for (u <- units) u.dma.io.writeGroupGo := go
  }
  // ------------------------------------------------------------- table-engine units (hw/ip/table_engine)
  /** Table-engine unit u: the engine behind its register front end (registers at SocMap.TableEngines.baseOf(u),
    * interrupt Irq.teOf(u)); its read and write masters, upsized to the DMA port's width, on DMA port 0's crossbar,
    * or its read master (tableEngine.readPortPerUnit) and write master too (writePortPerUnit) on a DDR port of its own
    * (wired below, with the KB16 read ports).
    * Its clock runs (common.SimClockGate) while a job runs, an AXI valid is up on its masters or an APB access
    * reaches it, and `settle` cycles after (the interrupt's register, the W1P pulses): idle, it costs the
    * simulation nothing. An own read port's input stage runs on this clock too, so `read`'s valids (the port side
    * of the upsizer, the stage's side of the port) keep it running while a beat is on that port. */
  class TableEngineArea(u: Int) extends Area {
    val clockEnable = Bool()
    val clock = common.SimClockGate(clockEnable)
    val unit = clock(_root_.table_engine.TableEngineUnit(cfg.tableEngine.engine, withDocs = cfg.withDocs && u == 0))
    // the unit's id: [its front end or the engine (1 bit)] [the engine's master: run or spill] [the reader's own]
    private val engineCfg = cfg.tableEngine.engine
    val split = (cfg.tableEngine.readPortsPerUnit > 1) generate clock(common.Axi4ReadOnlyIdSplit(
      unit.io.axiRead.config, cfg.tableEngine.readPortsPerUnit, selLow = engineCfg.reader.axiConfig.idWidth,
      selWidth = log2Up(engineCfg.ways + 1)))
    private val unitReads = if (split == null) Seq(unit.io.axiRead) else { split.io.input << unit.io.axiRead; split.io.outputs.toSeq }
    val readUps = unitReads.map { r =>
      val up = clock(Axi4ReadOnlyUpsizer(r.config, cfg.teReadAxiConfig, 4))
      up.io.input << r
      up
    }
    val writeUp = clock(Axi4WriteOnlyUpsizer(unit.io.axiWrite.config, cfg.teWriteAxiConfig))
    writeUp.io.input << unit.io.axiWrite
    /** Its read masters at the port's width, one per port of its own (one when it has none). */
    val reads = readUps.map(_.io.output)
    val read = reads.head
    val write = writeUp.io.output
    irqLines(Irq.teOf(u)) := unit.io.irq
    val activity = new Area {
      private val r = (unitReads ++ reads :+ unit.io.axiRead).map(a => a.ar.valid || a.r.valid).reduce(_ || _)
      private val w = Seq(unit.io.axiWrite, write).map(a => a.aw.valid || a.w.valid || a.b.valid).reduce(_ || _)
      val now = unit.io.busy || r || w || unit.io.apb.PSEL(0)
      val settle = Reg(UInt(3 bits)) init (7)
      when(now) { settle := 7 } elsewhen (settle =/= 0) { settle := settle - 1 }
    }
    clockEnable := activity.now || activity.settle =/= 0
    // its port-0 masters' valids on the port side keep DMA port 0's crossbar and input stage running (the read
    // master's only while it is on port 0)
    val portBusy = (if (cfg.tableEngine.readPortPerUnit) False else read.ar.valid || read.r.valid) ||
      (if (cfg.tableEngine.writePortPerUnit) False else write.aw.valid || write.w.valid || write.b.valid)
    apbSlaves += unit.io.apb -> SizeMapping(SocMap.TableEngines.baseOf(u), SocMap.TableEngines.stride)
  }
  val tableEngines = (0 until cfg.tableEngine.units).map(u => new TableEngineArea(u).setName(s"te$u"))
  // Write grouping of the units (tableEngine.writeGroup, as the KB16 DMA's writeGroup above): each holds its full
  // write bursts until one of them is urgent, then all of them issue theirs.
  val teWriteGroup = cfg.tableEngine.writeGroup generate new Area {
    val go = RegNext(tableEngines.map(_.unit.io.writeUrgent).reduce(_ || _)) init (False)
    for (t <- tableEngines) t.unit.io.writeGroupGo := go
  }
  // Slots of absent table-engine units read 0 (ID too), only in a build that has the engine (the others keep their
  // APB decoder as it was).
  if (tableEngines.nonEmpty) for (u <- cfg.tableEngine.units until SocMap.TableEngines.max)
    apbSlaves += Apb3Absent().io.apb -> SizeMapping(SocMap.TableEngines.baseOf(u), SocMap.TableEngines.stride)
  val teWake: Option[Bool] = if (tableEngines.isEmpty) None
    else Some(tableEngines.map(t => t.clockEnable || t.portBusy).reduce(_ || _))

  // Slots of absent units read 0 (their ID too) and ignore writes: firmware probes them safely.
  for (u <- cfg.units until SocMap.Units.max; base <- Seq(SocMap.Units.dmaOf(u), SocMap.Units.compactionOf(u)))
    apbSlaves += Apb3Absent().io.apb -> SizeMapping(base, 4 KiB)
  for ((ctrl, c) <- nandCtrls.zipWithIndex)
    apbSlaves += ctrl.io.apb -> SizeMapping(SocMap.NandChannels.baseOf(c), SocMap.NandChannels.stride)
  for (c <- cfg.nand.channels until SocMap.NandChannels.max)
    apbSlaves += Apb3Absent().io.apb -> SizeMapping(SocMap.NandChannels.baseOf(c), SocMap.NandChannels.stride)

  // The DMAs have their own 256-bit path to the DDR controller (see docs/soc.md): a port per unit, or
  // one port arbitrated between the units by the crossbar, which also decodes: addresses outside DDR
  // get DECERR instead of aliasing into it.
  // With a port per unit, each unit's crossbar only decodes.
  val dmaPins = if (io.ddrDmaUnits != null) io.ddrDma +: io.ddrDmaUnits.toSeq else Seq(io.ddrDma)
  for ((port, n) <- dmaPins.zipWithIndex if n > 0) port.setName(s"io_ddrDma$n")
  // With a port per unit, the port's input stages run on the unit's clock: they are registers of the SoC
  // clock otherwise, and each cycle's new sample woke the unit's crossbar decoders (1.7 % of the model's
  // time). While the unit's clock is stopped no transaction is in flight on its port (a busy channel or
  // any valid keeps it running), so the stale sample it holds has no valid; the ready it may differ
  // in meets no valid either, and the stage reloads at the first edge the unit's clock runs again.
  // Port 0 carries the NAND channels' DMA too (nandDmaPort): its stage also runs while the NAND DMA path's
  // clock does (a controller's enable covers its DMA until the last response), or a NAND read's R beats
  // would wait for unit 0's clock that nothing starts (the storage flow's init timed out that way).
  val nandDmaWake = Bool()
  // A table-engine unit's own read port (after the KB16 ports) runs on the unit's clock likewise: the unit's
  // activity covers every beat of it (a running job, or any valid on its read master).
  val dmaPorts = for ((pins, n) <- dmaPins.zipWithIndex) yield
    if (n >= cfg.kb16DmaPorts) tableEngines((n - cfg.kb16DmaPorts) / cfg.tableEngine.readPortsPerUnit).clock(common.SimInputStage(pins))
    else if (cfg.dma.portPerUnit && n == 0 && teWake.nonEmpty)
      common.SimClockGate(units(0).clockEnable || nandDmaWake || teWake.get)(common.SimInputStage(pins))
    else if (cfg.dma.portPerUnit && n == 0 && cfg.nand.dmaPort) common.SimClockGate(units(0).clockEnable || nandDmaWake)(common.SimInputStage(pins))
    else if (cfg.dma.portPerUnit) units(n / cfg.dma.readPorts).clock(common.SimInputStage(pins))
    else common.SimInputStage(pins)
  // With P ports per unit (dmaReadPorts), port P u is unit u's main port, P u + g its read port g - 1: no
  // crossbar there (the harness answers DECERR outside DDR itself), the write channels tied off.
  // Then a port per table-engine unit (tableEngine.readPortPerUnit), wired the same way; with writePortPerUnit its
  // write channels carry the unit's writes (no crossbar either: the unit writes only its job's output buffer, and the
  // harness answers a write outside DDR with an error itself, which the unit reports as BAD_JOB).
  val kb16Ports = dmaPorts.take(cfg.kb16DmaPorts)
  val mainPorts = kb16Ports.zipWithIndex.filter(_._2 % cfg.dma.readPorts == 0).map(_._1)
  val readOnlyPorts = kb16Ports.zipWithIndex.filter(_._2 % cfg.dma.readPorts != 0).map { case (port, n) =>
    port -> units(n / cfg.dma.readPorts).readPorts(n % cfg.dma.readPorts - 1)
  } ++ dmaPorts.drop(cfg.kb16DmaPorts).zip(tableEngines.flatMap(_.reads))
  val teWritePorts = if (cfg.tableEngine.writePortPerUnit)
    dmaPorts.drop(cfg.kb16DmaPorts).grouped(cfg.tableEngine.readPortsPerUnit).map(_.head).toSeq.zip(tableEngines.map(_.write)) else Nil
  for ((port, rp) <- readOnlyPorts) {
    port.ar.arbitrationFrom(rp.ar)
    port.ar.addr := rp.ar.addr; port.ar.id := rp.ar.id.resized; port.ar.len := rp.ar.len
    port.ar.size := rp.ar.size; port.ar.burst := rp.ar.burst
    rp.r.arbitrationFrom(port.r)
    rp.r.data := port.r.data; rp.r.id := port.r.id.resized; rp.r.resp := port.r.resp; rp.r.last := port.r.last
    if (!teWritePorts.exists(_._1 eq port)) {
      port.aw.valid := False
      port.aw.payload.assignDontCare()
      port.w.valid := False
      port.w.payload.assignDontCare()
      port.b.ready := True
    }
  }
  for ((port, wp) <- teWritePorts) {
    port.aw.arbitrationFrom(wp.aw)
    port.aw.addr := wp.aw.addr; port.aw.id := wp.aw.id.resized; port.aw.len := wp.aw.len
    port.aw.size := wp.aw.size; port.aw.burst := wp.aw.burst
    port.w.arbitrationFrom(wp.w)
    port.w.data := wp.w.data; port.w.strb := wp.w.strb; port.w.last := wp.w.last
    wp.b.arbitrationFrom(port.b)
    wp.b.id := port.b.id.resized; wp.b.resp := port.b.resp
  }
  // The NAND channels' DMA path of its own (nandDmaPort): a channel's 32-bit master, upsized to the DMA
  // port's width, into a crossbar of the channels, whose link is one more master on DMA port 0. Only DDR
  // is mapped (the controller's DMA window, DMA_LO/HI, defaults to DDR; elsewhere answers DECERR).
  // Its clock runs while a channel may move (common.SimClockGate): a controller's own enable covers its
  // commands, whose DMA ends only when every response is in, so no beat is left inside an upsizer.
  val nandDma = cfg.nand.dmaPort generate new Area {
    val clockEnable = Bool()
    val clock = common.SimClockGate(clockEnable)
    val link = Axi4(cfg.nandLinkAxiConfig)
    val path = clock on new Area {
      val upsizers = for (ctrl <- nandCtrls) yield {
        val up = Axi4Upsizer(ctrl.io.axi.config, ctrl.io.axi.config.copy(dataWidth = cfg.dma.portWidth), 4)
        up.io.input << ctrl.io.axi
        up
      }
      val stages = for (up <- upsizers) yield LsmcSoc.nandLinkStage(up.io.output)
      val xbar = Axi4CrossbarFactory()
      xbar.addSlave(link, SizeMapping(ddrBase, cfg.ddrSize))
      for (st <- stages) xbar.addConnection(st, List(link))
      xbar.build()
      // Into DMA port 0's crossbar: through a full register slice with dmaPortSlice (off by default).
      val toPort = if (cfg.dma.portSlice) LsmcSoc.dmaPortSlice(link) else link
    }
    val toPort = path.toPort
    // Both sides of the slice: a beat it holds shows as a valid on one of them.
    val active = Seq(link, toPort).distinct.map(a => a.ar.valid || a.aw.valid || a.w.valid || a.r.valid || a.b.valid)
      .reduce(_ || _)
    clockEnable := nandCtrls.map(_.simActivity.enable.pull()).reduce(_ || _) || active
  }
  nandDmaWake := (if (nandDma != null) nandDma.clockEnable else False)
  val dmaCrossbars = for ((port, n) <- mainPorts.zipWithIndex) yield {
    val portUnits = if (cfg.dma.portPerUnit) Seq(units(n)) else units
    val withNand = n == 0 && nandDma != null
    // the table-engine units' masters that are not on ports of their own
    val withTe = n == 0 && tableEngines.nonEmpty && !(cfg.tableEngine.readPortPerUnit && cfg.tableEngine.writePortPerUnit)
    // the arbiter slice only where a write arbiter is: two writers or more
    val writers = portUnits.size + (if (withNand) 1 else 0) +
      (if (withTe && !cfg.tableEngine.writePortPerUnit) tableEngines.size else 0)
    val xbar = LsmcSoc.dmaPortCrossbar(cfg.dma.arbiterSlice && writers > 1)
    xbar.addSlave(port, SizeMapping(ddrBase, cfg.ddrSize))
    for (unit <- portUnits) xbar.addConnection(unit.axi, List(port))
    if (withNand) xbar.addConnection(nandDma.toPort, List(port))
    if (withTe) for (t <- tableEngines) {
      if (!cfg.tableEngine.readPortPerUnit) xbar.addConnection(t.read, List(port))
      if (!cfg.tableEngine.writePortPerUnit) xbar.addConnection(t.write, List(port))
    }
    // A unit's own crossbar is clocked with the unit (it moves only the unit's AXI beats, all of which
    // keep the unit's clock running), so its logic costs the simulation nothing while the unit is idle;
    // port 0's also runs while the NAND link or the port has a beat.
    if (cfg.dma.portPerUnit && withTe) {
      val busy = (if (withNand) nandDma.active else False) || teWake.get ||
        port.ar.valid || port.aw.valid || port.w.valid || port.r.valid || port.b.valid
      common.SimClockGate(units(n).clockEnable || busy)(xbar.build())
    } else if (cfg.dma.portPerUnit && withNand) {
      val busy = nandDma.active || port.ar.valid || port.aw.valid || port.w.valid || port.r.valid || port.b.valid
      common.SimClockGate(units(n).clockEnable || busy)(xbar.build())
    } else if (cfg.dma.portPerUnit) units(n).clock(xbar.build()) else xbar.build()
    xbar
  }

  val apbDecoder = busClock(Apb3Decoder(master = apbBridge.io.apb, slaves = apbSlaves.toSeq))

  /** The interconnect's clock runs while a valid is offered on any of its ports (a master's command or
    * write data, a slave's response, both sides of every register stage: the RAM's and the bridge's
    * ports are the stages' outputs, the D$ port the read response stage's) or an APB access is open;
    * then `settle` more cycles, in which the registers that reload while idle (the decoders' selections,
    * the bridge's command fields, the APB router's index, the forks' link enables) reach the values
    * they keep in the free-running design. Every stream stage changes state only on a valid, and
    * a transaction in flight (a decoder's pending count, the write route FIFOs) waits for a valid, so
    * nothing else changes a register here. Terms: registers of the SoC's clock, the gated blocks'
    * outputs, or the DDR port's input stages; all settled before the falling edge the gate samples. */
  val busActivity = new ClockingArea(busClock) {
    private def valid(a: Axi4) = a.ar.valid || a.aw.valid || a.w.valid || a.r.valid || a.b.valid
    private def valid(a: Axi4Shared) = a.arw.valid || a.w.valid || a.r.valid || a.b.valid
    val masters = (Seq(core.iBus.ar.valid, core.iBus.r.valid, valid(core.dBus)) ++ nandCtrls.map(c => valid(c.io.axi)))
      .reduce(_ || _)
    val slaves = valid(ram.io.axi) || valid(ddrCpu) || valid(apbBridge.io.axi) || apbBridge.io.apb.PSEL(0)
    val now = masters || slaves
    val settle = Reg(UInt(3 bits)) init (7)
    when(now) { settle := 7 } elsewhen (settle =/= 0) { settle := settle - 1 }
  }
  busClockEnable := busActivity.now || busActivity.settle =/= 0

  io.uart <> uart.io.uart
}
