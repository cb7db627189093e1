package nand

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.bus.regif._

/** ONFI NAND flash controller (seed 000 Fig. 7): global registers (regif on APB3), command queue and
  * completion queue, command classification layer (+ page buffer, DMA, ECC), time sequence layer and
  * physical interface layer. Registers: docs/nand.md and the generated nand_regs.h / NandRegs.html. */
class NandController(val p: NandParams = NandParams()) extends Component {
  val io = new Bundle {
    val apb = slave(Apb3(p.apbConfig))
    val axi = master(Axi4(p.axiConfig))
    val irq = out Bool()
    val nand = master(NandPins(p.targets))
  }
  val busif = BusInterface(io.apb, SizeMapping(0, 64 KiB), regPre = "NAND")

  // ---------------------------------------------------------------- identification and control
  val idReg = busif.newReg(doc = "Identification")
  val magic = idReg.field(Bits(32 bits), AccessType.RO, resetValue = 0, doc = "Magic 0x4E414E44 (\"NAND\")")
  magic := B(0x4E414E44L, 32 bits)
  val verReg = busif.newReg(doc = "Version and generation parameters")
  val version = verReg.field(Bits(16 bits), AccessType.RO, 0, doc = "IP version 0x0100")
  val nTargets = verReg.field(Bits(8 bits), AccessType.RO, 0, doc = "Targets (CE#) on the channel")
  val maxSect = verReg.field(Bits(8 bits), AccessType.RO, 0, doc = "Most ECC sectors per page")
  version := 0x0100; nTargets := p.targets; maxSect := p.maxSectors
  val ctrlReg = busif.newReg(doc = "Control")
  val softReset = ctrlReg.field(Bool(), AccessType.W1P, 0, doc = "Write 1: abort everything, empty both queues, keep configuration")
  val wpN = ctrlReg.field(Bool(), AccessType.RW, 1, doc = "Level of the WP# pin (0 protects the flash)")
  val statusReg = busif.newReg(doc = "Status")
  val stBusy = statusReg.field(Bool(), AccessType.RO, 0, doc = "A command is executing")
  val stCompValid = statusReg.field(Bool(), AccessType.RO, 0, doc = "A completion is waiting in COMP_*")
  statusReg.reserved(6 bits)
  val stCmdFree = statusReg.field(UInt(8 bits), AccessType.RO, 0, doc = "Free slots in the command queue")
  val stCompCount = statusReg.field(UInt(8 bits), AccessType.RO, 0, doc = "Completions waiting")
  val stRb = statusReg.field(Bits(8 bits), AccessType.RO, 0, doc = "R/B# pins (synchronised), bit per target")
  val irqEnReg = busif.newReg(doc = "Interrupt enable")
  val irqEnDone = irqEnReg.field(Bool(), AccessType.RW, 0, doc = "A completion was queued")
  val irqEnErr = irqEnReg.field(Bool(), AccessType.RW, 0, doc = "A completion with an error was queued")
  val irqEnOvf = irqEnReg.field(Bool(), AccessType.RW, 0, doc = "CMD_PUSH while the command queue was full")
  val irqStReg = busif.newReg(doc = "Interrupt status (write 1 to clear); io.irq = IRQ_STATUS & IRQ_ENABLE non-zero")
  val irqDone = irqStReg.field(Bool(), AccessType.W1C, 0, doc = "A completion was queued")
  val irqErr = irqStReg.field(Bool(), AccessType.W1C, 0, doc = "A completion with an error was queued")
  val irqOvf = irqStReg.field(Bool(), AccessType.W1C, 0, doc = "Command queue overflow (command dropped)")
  val bufReg = busif.newReg(doc = "Page buffer size in bytes (largest page + spare transfer)")
  val bufBytes = bufReg.field(UInt(32 bits), AccessType.RO, 0, doc = "Bytes")
  bufBytes := p.bufBytes

  // ---------------------------------------------------------------- timing (cycles of the controller clock)
  val t = NandTimingRegs()
  // Reset values: ONFI mode 0 at 100 MHz (ceil(t / 10 ns)), see docs/nand.md.
  val tim0 = busif.newRegAt(0x20, doc = "Timing 0 (cycles)")
  t.tWP := tim0.field(UInt(8 bits), AccessType.RW, 5, doc = "WE# low: max(tWP, tDS)")
  t.tWH := tim0.field(UInt(8 bits), AccessType.RW, 3, doc = "WE# high: max(tWH, tDH, tCLH, tALH)")
  t.tWC := tim0.field(UInt(8 bits), AccessType.RW, 10, doc = "WE# cycle tWC")
  t.tRP := tim0.field(UInt(8 bits), AccessType.RW, 5, doc = "RE# low tRP")
  val tim1 = busif.newReg(doc = "Timing 1 (cycles)")
  t.tREH := tim1.field(UInt(8 bits), AccessType.RW, 3, doc = "RE# high tREH")
  t.tRC := tim1.field(UInt(8 bits), AccessType.RW, 10, doc = "RE# cycle tRC")
  t.tCS := tim1.field(UInt(8 bits), AccessType.RW, 7, doc = "CE# low to WE# high tCS")
  t.tHOLD := tim1.field(UInt(8 bits), AccessType.RW, 2, doc = "WE# high to CE# change: max(tCH, tCLH, tALH)")
  val tim2 = busif.newReg(doc = "Timing 2 (cycles)")
  t.tCLS := tim2.field(UInt(8 bits), AccessType.RW, 5, doc = "CLE/ALE setup to WE# high: max(tCLS, tALS)")
  t.tCLR := tim2.field(UInt(8 bits), AccessType.RW, 3, doc = "CLE/ALE low (and DQ released) to RE# low: max(tCLR, tAR, tIR)")
  t.tWHR := tim2.field(UInt(8 bits), AccessType.RW, 12, doc = "WE# high to RE# low tWHR")
  t.tADL := tim2.field(UInt(8 bits), AccessType.RW, 20, doc = "Last address WE# high to first data WE# high tADL")
  val tim3 = busif.newReg(doc = "Timing 3 (cycles)")
  t.tRHW := tim3.field(UInt(8 bits), AccessType.RW, 20, doc = "RE# high to WE# low: max(tRHW, tRHZ)")
  t.tRR := tim3.field(UInt(8 bits), AccessType.RW, 4, doc = "R/B# high to RE# low tRR")
  t.tWB := tim3.field(UInt(8 bits), AccessType.RW, 20, doc = "WE# high to R/B# low tWB (max)")
  t.tCCS := tim3.field(UInt(8 bits), AccessType.RW, 50, doc = "Change column setup tCCS")
  val sampleReg = busif.newReg(doc = "Read sampling")
  t.sampleDelay := sampleReg.field(UInt(4 bits), AccessType.RW, 6, doc = "Cycles from the RE# pin falling to the sample (ceil(tREA/Tclk)+1)")
  val toReg = busif.newReg(doc = "R/B# timeout")
  t.timeout := toReg.field(UInt(32 bits), AccessType.RW, 1000000, doc = "Cycles a WAIT on R/B# may last before the command fails with TIMEOUT")
  val geoReg = busif.newReg(doc = "Geometry used by ECC transfers")
  val pageBytes = geoReg.field(UInt(16 bits), AccessType.RW, 2048, doc = "Main-area bytes per page (multiple of 512)")
  val spareBytes = geoReg.field(UInt(16 bits), AccessType.RW, 64, doc = "Spare bytes per page")
  val dmaLoReg = busif.newReg(doc = "DMA window low bound (inclusive)")
  val dmaLo = dmaLoReg.field(UInt(32 bits), AccessType.RW, BigInt("40000000", 16), doc = "Byte address")
  val dmaHiReg = busif.newReg(doc = "DMA window high bound (exclusive)")
  val dmaHi = dmaHiReg.field(UInt(32 bits), AccessType.RW, BigInt("50000000", 16), doc = "Byte address")

  // ---------------------------------------------------------------- command descriptor
  val cmdCtrl = busif.newRegAt(0x50, doc = "Command: opcode and flags")
  val cOp = cmdCtrl.field(UInt(4 bits), AccessType.RW, 0, doc = "0 RESET, 1 READ_ID, 2 READ_PARAM, 3 READ_STATUS, 4 SET_FEATURES, 5 GET_FEATURES, 6 PAGE_READ, 7 CHANGE_COL, 8 PROGRAM, 9 ERASE, 10 WAIT_STATUS, 11 READ_DATA")
  cmdCtrl.reserved(4 bits)
  val cTarget = cmdCtrl.field(UInt(1 bits), AccessType.RW, 0, doc = "Target (CE#)")
  val cEcc = cmdCtrl.field(Bool(), AccessType.RW, 0, doc = "ECC: whole page + spare on the bus, main area via DMA")
  val cSplit = cmdCtrl.field(Bool(), AccessType.RW, 0, doc = "PAGE_READ/PROGRAM/ERASE: complete after the confirm cycle, do not wait for R/B#")
  val cDma = cmdCtrl.field(Bool(), AccessType.RW, 0, doc = "Move the data between DDR and the page buffer")
  cmdCtrl.reserved(4 bits)
  val cTag = cmdCtrl.field(Bits(16 bits), AccessType.RW, 0, doc = "Tag echoed in COMP_INFO")
  val cRow = busif.newReg(doc = "Command: row address (block * pages + page), or feature / ID address in [7:0]").field(Bits(24 bits), AccessType.RW, 0, doc = "Row")
  val cCol = busif.newReg(doc = "Command: column").field(UInt(16 bits), AccessType.RW, 0, doc = "Column")
  val cLen = busif.newReg(doc = "Command: bytes on the flash bus (ignored with ECC)").field(UInt(16 bits), AccessType.RW, 0, doc = "Length")
  val cDmaAddr = busif.newReg(doc = "Command: DDR byte address (4-byte aligned)").field(UInt(32 bits), AccessType.RW, 0, doc = "Address")
  val cParam = busif.newReg(doc = "Command: SET_FEATURES P1..P4 (P1 in [7:0])").field(Bits(32 bits), AccessType.RW, 0, doc = "Parameters")
  val pushReg = busif.newReg(doc = "Command push")
  val cPush = pushReg.field(Bool(), AccessType.W1P, 0, doc = "Write 1: queue the descriptor held in CMD_*")

  // ---------------------------------------------------------------- completion
  val compInfo = busif.newRegAt(0x70, doc = "Completion at the head of the queue: identity and result")
  val ciOp = compInfo.field(UInt(4 bits), AccessType.RO, 0, doc = "Opcode")
  val ciErr = compInfo.field(UInt(4 bits), AccessType.RO, 0, doc = "0 OK, 1 TIMEOUT, 2 NAND_FAIL, 3 BAD_CMD, 4 DMA_BOUNDS, 5 DMA_BUS, 6 ECC_UNCORRECTABLE")
  val ciTarget = compInfo.field(UInt(1 bits), AccessType.RO, 0, doc = "Target")
  val ciValid = compInfo.field(Bool(), AccessType.RO, 0, doc = "1: this completion is valid")
  compInfo.reserved(6 bits)
  val ciTag = compInfo.field(Bits(16 bits), AccessType.RO, 0, doc = "Tag")
  val compStat = busif.newReg(doc = "Completion: flash status and ECC report")
  val csStatus = compStat.field(Bits(8 bits), AccessType.RO, 0, doc = "Flash status byte (70h) or first data byte")
  val csCorr = compStat.field(UInt(8 bits), AccessType.RO, 0, doc = "Bits corrected by ECC in the page")
  val csCorrMap = compStat.field(Bits(8 bits), AccessType.RO, 0, doc = "Sectors with a corrected bit")
  val csUncMap = compStat.field(Bits(8 bits), AccessType.RO, 0, doc = "Sectors with an uncorrectable error")
  val csData = busif.newReg(doc = "Completion: first four data bytes (ID, features, status)").field(Bits(32 bits), AccessType.RO, 0, doc = "Data")
  val popReg = busif.newReg(doc = "Completion pop")
  val cPop = popReg.field(Bool(), AccessType.W1P, 0, doc = "Write 1: drop the head completion")

  // ---------------------------------------------------------------- performance counters
  val perfCyc = busif.newRegAt(0x80, doc = "Cycles the time sequence layer spent in data-transfer micro-ops (write to clear)")
  val perfCycles = perfCyc.field(UInt(32 bits), AccessType.RW, 0, doc = "Cycles")
  val perfByt = busif.newReg(doc = "Bytes moved in data-transfer micro-ops (write to clear)")
  val perfBytes = perfByt.field(UInt(32 bits), AccessType.RW, 0, doc = "Bytes")

  // ---------------------------------------------------------------- layers (soft reset restarts them)
  val core = new ResetArea(softReset, cumulative = true) {
    val cmdFifo = StreamFifo(NandCmd(p), p.cmdDepth)
    val compFifo = StreamFifo(NandCompletion(p), p.compDepth)
    val cmdLayer = new NandCommandLayer(p)
    val timing = new NandTimingLayer(p)
    val phy = new NandPhy(p.targets)
  }
  import core._
  cmdFifo.io.push.valid := cPush
  val d = cmdFifo.io.push.payload
  d.opcode := cOp; d.target := cTarget; d.ecc := cEcc; d.split := cSplit; d.dma := cDma; d.tag := cTag
  d.row := cRow; d.col := cCol; d.len := cLen; d.dmaAddr := cDmaAddr; d.param := cParam
  cmdFifo.io.pop >> cmdLayer.io.cmd
  cmdLayer.io.comp >> compFifo.io.push
  compFifo.io.pop.ready := cPop

  cmdLayer.io.uop >> timing.io.uop
  cmdLayer.io.dout >> timing.io.dout
  cmdLayer.io.rx << phy.io.rx
  cmdLayer.io.timingIdle := timing.io.idle
  cmdLayer.io.rxPending := phy.io.busyLine
  cmdLayer.io.timeout := timing.io.timeout
  cmdLayer.io.axi >> io.axi
  cmdLayer.io.pageBytes := pageBytes
  cmdLayer.io.spareBytes := spareBytes
  cmdLayer.io.dmaLo := dmaLo
  cmdLayer.io.dmaHi := dmaHi
  timing.io.t := t
  timing.io.rb_n := phy.io.rb_n
  phy.io.drive := timing.io.drive
  phy.io.strobe := timing.io.strobe
  phy.io.sampleDelay := t.sampleDelay
  phy.io.wp_n := wpN
  io.nand <> phy.io.pins

  val head = compFifo.io.pop.payload
  ciOp := head.opcode; ciErr := head.err; ciTarget := head.target; ciTag := head.tag
  ciValid := compFifo.io.pop.valid
  csStatus := head.status; csCorr := head.eccCorrected; csCorrMap := head.eccCorrMap; csUncMap := head.eccUncMap
  csData := head.data

  stBusy := cmdLayer.io.busy || cmdFifo.io.occupancy =/= 0
  stCompValid := compFifo.io.pop.valid
  stCmdFree := cmdFifo.io.availability.resized
  stCompCount := compFifo.io.occupancy.resized
  stRb := phy.io.rb_n.resized

  when(compFifo.io.push.fire) {
    irqDone := True
    when(compFifo.io.push.err =/= NandErr.OK) { irqErr := True }
  }
  when(cPush && !cmdFifo.io.push.ready) { irqOvf := True }
  io.irq := (irqDone && irqEnDone) || (irqErr && irqEnErr) || (irqOvf && irqEnOvf)

  when(timing.io.dataCycle) { perfCycles := perfCycles + 1 }
  when(cmdLayer.io.dout.fire || phy.io.rx.valid) { perfBytes := perfBytes + 1 }

  def docs(): Unit = { // written into the SpinalConfig target directory
    busif.accept(CHeaderGenerator("nand_regs", "NAND"))
    busif.accept(HtmlGenerator("NandRegs", "NAND controller registers"))
    busif.accept(JsonGenerator("NandRegs"))
  }
}

/** `runMain nand.Generate --out DIR`: NandController.v, nand_regs.h, NandRegs.html/.json. */
object Generate {
  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("build/gen/nand")
    val targets = args.sliding(2).collectFirst { case Array("--targets", n) => n.toInt }.getOrElse(2)
    new java.io.File(out).mkdirs()
    SpinalConfig(targetDirectory = out, defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC))
      .generateVerilog {
        val c = new NandController(NandParams(targets = targets))
        c.docs()
        c
      }
  }
}
