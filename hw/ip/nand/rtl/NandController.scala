package nand

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.bus.regif._

/** ONFI NAND flash controller (Peng et al., "LSM-Tree Based Hardware System Design for Compaction Acceleration", Fig. 7): global registers (regif on APB3), command queue and
  * completion queue, command classification layer (+ page buffer, DMA, ECC), time sequence layer and
  * physical interface layer. Registers: hw/ip/nand/doc/nand.md and the generated nand_regs.h / .json / .html. */
class NandController(val p: NandParams = NandParams()) extends Component {
  val io = new Bundle {
    val apb = slave(Apb3(p.apbConfig))
    val axi = master(Axi4(p.axiConfig))
    val irq = out Bool()
    val nand = master(NandPins(p.targets))
  }
  val busif = BusInterface(io.apb, SizeMapping(0, 64 KiB), regPre = "NAND")

  // Register and field vals carry their C names (regif takes them from the Scala identifiers).
  // ---------------------------------------------------------------- identification and control
  val ID = busif.newReg(doc = "Identification")
  val MAGIC = ID.field(Bits(32 bits), AccessType.RO, NandController.IdMagic, doc = s"Magic 0x${NandController.IdMagic.toString(16).toUpperCase} (NAND in ASCII)")
  MAGIC := B(NandController.IdMagic, 32 bits)
  val VERSION = busif.newReg(doc = "Version and generation parameters")
  val IP_VERSION = VERSION.field(Bits(16 bits), AccessType.RO, 0x0200, doc = "IP version 0x0200 (BCH ECC)")
  val TARGETS = VERSION.field(Bits(8 bits), AccessType.RO, p.targets, doc = "Targets (CE#) on the channel")
  val MAX_SECTORS = VERSION.field(Bits(8 bits), AccessType.RO, p.maxSectors, doc = "Most ECC sectors per page")
  IP_VERSION := 0x0200; TARGETS := p.targets; MAX_SECTORS := p.maxSectors
  val CTRL = busif.newReg(doc = "Control")
  val SOFT_RESET = CTRL.field(Bool(), AccessType.W1P, 0, doc = "Write 1: abort everything, empty both queues, keep configuration")
  val WP_N = CTRL.field(Bool(), AccessType.RW, 1, doc = "Level of the WP# pin (0 protects the flash)")
  val STATUS = busif.newReg(doc = "Status")
  val BUSY = STATUS.field(Bool(), AccessType.RO, 0, doc = "A command is queued or executing")
  val COMP_VALID = STATUS.field(Bool(), AccessType.RO, 0, doc = "A completion is waiting in COMP_*")
  STATUS.reserved(6 bits)
  val CMD_FREE = STATUS.field(UInt(8 bits), AccessType.RO, 0, doc = "Free slots in the command queue")
  val COMP_COUNT = STATUS.field(UInt(8 bits), AccessType.RO, 0, doc = "Completions waiting")
  val RB = STATUS.field(Bits(8 bits), AccessType.RO, 0, doc = "R/B# pins (synchronised), bit per target")
  val IRQ_ENABLE = busif.newReg(doc = "Interrupt enable")
  val EN_DONE = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, doc = "A completion was queued")
  val EN_ERROR = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, doc = "A completion with an error was queued")
  val EN_OVERFLOW = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, doc = "CMD_PUSH while the command queue was full")
  val IRQ_STATUS = busif.newReg(doc = "Interrupt status (write 1 to clear); io.irq = IRQ_STATUS & IRQ_ENABLE non-zero")
  val DONE = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, doc = "A completion was queued")
  val ERROR = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, doc = "A completion with an error was queued")
  val OVERFLOW = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, doc = "Command queue overflow (command dropped)")
  val BUF_BYTES = busif.newReg(doc = "Page buffer size in bytes (largest page + spare transfer)")
  val BYTES = BUF_BYTES.field(UInt(32 bits), AccessType.RO, p.bufBytes, doc = "Bytes")
  BYTES := p.bufBytes
  val ECC_CFG = busif.newReg(doc = "ECC code (generation parameters): BCH over GF(2^13) per sector")
  val ECC_T = ECC_CFG.field(UInt(8 bits), AccessType.RO, p.bch.t, doc = "Bits corrected per sector (t)")
  val ECC_BYTES = ECC_CFG.field(UInt(8 bits), AccessType.RO, p.bch.eccBytes, doc = "Check bytes per sector in the spare area (from byte 8)")
  val SECTOR_BYTES = ECC_CFG.field(UInt(16 bits), AccessType.RO, p.bch.dataBytes, doc = "Data bytes per sector (codeword)")
  ECC_T := p.bch.t; ECC_BYTES := p.bch.eccBytes; SECTOR_BYTES := p.bch.dataBytes

  // ---------------------------------------------------------------- timing (cycles of the controller clock)
  val t = NandTimingRegs()
  // Reset values: ONFI mode 0 at 100 MHz (ceil(t / 10 ns)), see hw/ip/nand/doc/nand.md.
  val TIMING0 = busif.newRegAt(0x20, doc = "Timing 0 (cycles)")
  val T_WP = TIMING0.field(UInt(8 bits), AccessType.RW, 5, doc = "WE# low: max(tWP, tDS)")
  val T_WH = TIMING0.field(UInt(8 bits), AccessType.RW, 3, doc = "WE# high: max(tWH, tDH, tCLH, tALH)")
  val T_WC = TIMING0.field(UInt(8 bits), AccessType.RW, 10, doc = "WE# cycle tWC")
  val T_RP = TIMING0.field(UInt(8 bits), AccessType.RW, 5, doc = "RE# low tRP")
  val TIMING1 = busif.newReg(doc = "Timing 1 (cycles)")
  val T_REH = TIMING1.field(UInt(8 bits), AccessType.RW, 3, doc = "RE# high tREH")
  val T_RC = TIMING1.field(UInt(8 bits), AccessType.RW, 10, doc = "RE# cycle tRC")
  val T_CS = TIMING1.field(UInt(8 bits), AccessType.RW, 7, doc = "CE# low to WE# high tCS")
  val T_HOLD = TIMING1.field(UInt(8 bits), AccessType.RW, 2, doc = "WE# high to CE# change: max(tCH, tCLH, tALH)")
  val TIMING2 = busif.newReg(doc = "Timing 2 (cycles)")
  val T_CLS = TIMING2.field(UInt(8 bits), AccessType.RW, 5, doc = "CLE/ALE setup to WE# high: max(tCLS, tALS)")
  val T_CLR = TIMING2.field(UInt(8 bits), AccessType.RW, 3, doc = "CLE/ALE low (and DQ released) to RE# low: max(tCLR, tAR, tIR)")
  val T_WHR = TIMING2.field(UInt(8 bits), AccessType.RW, 12, doc = "WE# high to RE# low tWHR")
  val T_ADL = TIMING2.field(UInt(8 bits), AccessType.RW, 20, doc = "Last address WE# high to first data WE# high tADL")
  val TIMING3 = busif.newReg(doc = "Timing 3 (cycles)")
  val T_RHW = TIMING3.field(UInt(8 bits), AccessType.RW, 20, doc = "RE# high to WE# low: max(tRHW, tRHZ)")
  val T_RR = TIMING3.field(UInt(8 bits), AccessType.RW, 4, doc = "R/B# high to RE# low tRR")
  val T_WB = TIMING3.field(UInt(8 bits), AccessType.RW, 20, doc = "WE# high to R/B# low tWB (max)")
  val T_CCS = TIMING3.field(UInt(8 bits), AccessType.RW, 20, doc = "Change column setup tCCS")
  val SAMPLE = busif.newReg(doc = "Read sampling (PHY)")
  val DELAY = SAMPLE.field(UInt(4 bits), AccessType.RW, 5, doc = "Cycles from the RE# pin falling to the sample: ceil(tREA/Tclk)+1 plus board delay")
  val PAD_CYCLES = SAMPLE.field(UInt(2 bits), AccessType.RO, p.padInputCycles, doc = "Register stages of the board's pads ahead of DQ in (generation parameter, added to DELAY by the PHY): 0 direct pins, 1 behind the NV-DDR pad wrapper's IDDR")
  PAD_CYCLES := p.padInputCycles
  val RB_TIMEOUT = busif.newReg(doc = "R/B# timeout")
  val CYCLES = RB_TIMEOUT.field(UInt(32 bits), AccessType.RW, 1000000, doc = "Cycles a wait on R/B# may last before the command ends with TIMEOUT")
  val GEOMETRY = busif.newReg(doc = "Geometry used by ECC transfers")
  val PAGE_BYTES = GEOMETRY.field(UInt(16 bits), AccessType.RW, 2048, doc = "Main-area bytes per page (multiple of 512)")
  val SPARE_BYTES = GEOMETRY.field(UInt(16 bits), AccessType.RW, 64, doc = "Spare bytes per page")
  val DMA_LO = busif.newReg(doc = "DMA window low bound (inclusive)")
  val LO = DMA_LO.field(UInt(32 bits), AccessType.RW, BigInt("40000000", 16), doc = "Byte address")
  val DMA_HI = busif.newReg(doc = "DMA window high bound (exclusive)")
  val HI = DMA_HI.field(UInt(32 bits), AccessType.RW, BigInt("50000000", 16), doc = "Byte address")
  val DDR_CFG = busif.newRegAt(0x44, doc = "NV-DDR interface (switch after SET FEATURES 01h selected it; ONFI times in the TIMING registers: T_CS, T_WHR, T_ADL, T_RHW, T_RR, T_WB, T_CCS with their NV-DDR values)")
  val DDR_EN = DDR_CFG.field(Bool(), AccessType.RW, 0, doc = "1: the pins speak NV-DDR (WE# = CLK, RE# = W/R#, DQS)")
  DDR_CFG.reserved(3 bits)
  val CK_DIV = DDR_CFG.field(UInt(4 bits), AccessType.RW, 2, doc = "CLK period in controller cycles (1..15; at 100 MHz NV-DDR mode 0: 5, 1: 3, 2..4: 2, 5: 1 = two bytes per cycle)")
  val T_CAD = DDR_CFG.field(UInt(8 bits), AccessType.RW, 5, doc = "Command/address to command/address/data: tCAD")
  val T_WRCK = DDR_CFG.field(UInt(8 bits), AccessType.RW, 2, doc = "W/R# low to the first data output clock: tWRCK")
  val T_DQSHZ = DDR_CFG.field(UInt(8 bits), AccessType.RW, 2, doc = "W/R# high to the controller driving DQ: tDQSHZ")
  val DDR_CAPTURE = busif.newReg(doc = "NV-DDR read capture (PHY)")
  val TAP = DDR_CAPTURE.field(UInt(9 bits), AccessType.RW, 0, doc = "DQ input delay tap (DELAYF / IDELAYE3 on every DQ bit; the platform's line has fewer taps: ECP5 128), set by read-capture training")
  val SLOT = DDR_CAPTURE.field(UInt(6 bits), AccessType.RW, 0, doc = "Half-cycle offset of a DQS pair's first DQ sample after its data output clock, set by read-capture training")
  DDR_CAPTURE.reserved(1 bits)
  val TX_UNDERRUN = DDR_CAPTURE.field(Bool(), AccessType.RO, 0, doc = "Sticky: an NV-DDR data input burst ran out of bytes (a controller fault)")
  val PAIR_SPLIT = DDR_CAPTURE.field(Bool(), AccessType.RO, 0, doc = "The last non-array read (ID, parameter page, status, features: each byte on both DQS edges) had a pair of two different bytes: capture half a DQS period off or outside the eye (training)")
  val DDR_CFG2 = busif.newReg(doc = "NV-DDR interface, more times (cycles)")
  val T_CEH = DDR_CFG2.field(UInt(8 bits), AccessType.RW, 2, doc = "CE# high hold between two selections: tCEH")
  t.tWP := T_WP; t.tWH := T_WH; t.tWC := T_WC; t.tRP := T_RP; t.tREH := T_REH; t.tRC := T_RC; t.tCS := T_CS
  t.tHOLD := T_HOLD; t.tCLS := T_CLS; t.tCLR := T_CLR; t.tWHR := T_WHR; t.tADL := T_ADL; t.tRHW := T_RHW
  t.tRR := T_RR; t.tWB := T_WB; t.tCCS := T_CCS; t.sampleDelay := DELAY; t.timeout := CYCLES

  // ---------------------------------------------------------------- command descriptor
  val CMD_CTRL = busif.newRegAt(0x50, doc = "Command: opcode and flags")
  val OPCODE = CMD_CTRL.field(UInt(4 bits), AccessType.RW, 0, doc = NandOp.regEnum.summary)
  CMD_CTRL.reserved(4 bits)
  val TARGET = CMD_CTRL.field(UInt(1 bits), AccessType.RW, 0, doc = "Target (CE#)")
  val ECC = CMD_CTRL.field(Bool(), AccessType.RW, 0, doc = "ECC: whole page + spare on the bus, main area via DMA")
  val SPLIT = CMD_CTRL.field(Bool(), AccessType.RW, 0, doc = "PAGE_READ/PROGRAM/ERASE: complete after the confirm cycle, do not wait for R/B#")
  val DMA = CMD_CTRL.field(Bool(), AccessType.RW, 0, doc = "Move the data between DDR and the page buffer")
  val MPLANE = CMD_CTRL.field(Bool(), AccessType.RW, 0, doc = "Multi-plane: PAGE_READ / PROGRAM / ERASE of a plane before the last confirm with 32h / 11h / D1h and wait tDBSY; READ_DATA selects its row's plane register with 06h col row E0h (other opcodes: BAD_CMD)")
  CMD_CTRL.reserved(3 bits)
  val TAG = CMD_CTRL.field(Bits(16 bits), AccessType.RW, 0, doc = "Tag echoed in COMP_INFO")
  val CMD_ROW = busif.newReg(doc = "Command: row address (block * pages per block + page), or feature / ID address in [7:0]")
  val ROW = CMD_ROW.field(Bits(24 bits), AccessType.RW, 0, doc = "Row")
  val CMD_COL = busif.newReg(doc = "Command: column")
  val COL = CMD_COL.field(UInt(16 bits), AccessType.RW, 0, doc = "Column")
  val CMD_LEN = busif.newReg(doc = "Command: bytes on the flash bus (ignored with ECC)")
  val LEN = CMD_LEN.field(UInt(16 bits), AccessType.RW, 0, doc = "Length")
  val CMD_DMA = busif.newReg(doc = "Command: DDR byte address (4-byte aligned)")
  val ADDR = CMD_DMA.field(UInt(32 bits), AccessType.RW, 0, doc = "Address")
  val CMD_PARAM = busif.newReg(doc = "Command: SET_FEATURES P1..P4 (P1 in [7:0])")
  val PARAM = CMD_PARAM.field(Bits(32 bits), AccessType.RW, 0, doc = "Parameters")
  val CMD_PUSH = busif.newReg(doc = "Command push")
  val PUSH = CMD_PUSH.field(Bool(), AccessType.W1P, 0, doc = "Write 1: queue the descriptor held in CMD_*")

  // ---------------------------------------------------------------- completion
  val COMP_INFO = busif.newRegAt(0x70, doc = "Completion at the head of the queue: identity and result")
  val C_OPCODE = COMP_INFO.field(UInt(4 bits), AccessType.RO, 0, doc = "Opcode")
  val C_ERR = COMP_INFO.field(UInt(4 bits), AccessType.RO, 0, doc = NandErr.regEnum.summary)
  val C_TARGET = COMP_INFO.field(UInt(1 bits), AccessType.RO, 0, doc = "Target")
  val C_VALID = COMP_INFO.field(Bool(), AccessType.RO, 0, doc = "1: this completion is valid")
  COMP_INFO.reserved(6 bits)
  val C_TAG = COMP_INFO.field(Bits(16 bits), AccessType.RO, 0, doc = "Tag")
  val COMP_STATUS = busif.newReg(doc = "Completion: flash status and ECC report")
  val FLASH_STATUS = COMP_STATUS.field(Bits(8 bits), AccessType.RO, 0, doc = "Flash status byte (70h) or first data byte")
  val ECC_CORRECTED = COMP_STATUS.field(UInt(8 bits), AccessType.RO, 0, doc = "Bits corrected by ECC in the page")
  val ECC_CORR_MAP = COMP_STATUS.field(Bits(8 bits), AccessType.RO, 0, doc = "Sectors with a corrected bit")
  val ECC_UNC_MAP = COMP_STATUS.field(Bits(8 bits), AccessType.RO, 0, doc = "Sectors with an uncorrectable error")
  val COMP_DATA = busif.newReg(doc = "Completion: first four data bytes (ID, features, status)")
  val DATA = COMP_DATA.field(Bits(32 bits), AccessType.RO, 0, doc = "Data")
  val COMP_POP = busif.newReg(doc = "Completion pop")
  val POP = COMP_POP.field(Bool(), AccessType.W1P, 0, doc = "Write 1: drop the head completion")

  // ---------------------------------------------------------------- performance counters
  val PERF_CYCLES = busif.newRegAt(0x80, doc = "Cycles the time sequence layer spent in data-transfer micro-ops (write to clear)")
  val CYC = PERF_CYCLES.field(UInt(32 bits), AccessType.RW, 0, doc = "Cycles")
  val PERF_BYTES = busif.newReg(doc = "Bytes moved in data-transfer micro-ops (write to clear)")
  val BYT = PERF_BYTES.field(UInt(32 bits), AccessType.RW, 0, doc = "Bytes")
  val COMP_SECTORS = busif.newReg(doc = "Completion: ECC result per sector (sector s in bits 4s+3..4s)")
  val SECTOR_BITS = COMP_SECTORS.field(Bits(32 bits), AccessType.RO, 0, doc = "Bits corrected in each sector, 0xF = uncorrectable")
  val ECC_DEC = busif.newReg(doc = "ECC decoder (generation parameters)")
  val WORST_CYCLES = ECC_DEC.field(UInt(16 bits), AccessType.RO, p.bch.worstCycles, doc = "Worst-case decoder cycles per codeword (t errors)")
  val CHIEN_PAR = ECC_DEC.field(UInt(8 bits), AccessType.RO, p.bch.chienPar, doc = "Positions the Chien search tests per cycle")
  WORST_CYCLES := p.bch.worstCycles; CHIEN_PAR := p.bch.chienPar

  // ---------------------------------------------------------------- layers (soft reset restarts them)
  // A soft reset waits until no DMA is in flight: cutting an AXI burst would leave the interconnect
  // with beats nobody takes (or gives). A DMA always ends (bounded length, AXI errors are absorbed).
  val resetPending = RegInit(False) setWhen (SOFT_RESET)
  val dmaBusy = Bool()
  val doReset = resetPending && !dmaBusy
  when(doReset) { resetPending := False }
  val core = new ResetArea(doReset, cumulative = true) {
    val cmdFifo = StreamFifo(NandCmd(p), p.cmdDepth)
    val compFifo = StreamFifo(NandCompletion(p), p.compDepth)
    val cmdLayer = new NandCommandLayer(p)
    val timing = new NandTimingLayer(p)
    val phy = new NandPhy(p.targets, p.padInputCycles)
    val ddrTiming = new NandDdrTiming(p)
  }
  import core._
  // Act in the cycle of the APB write itself (not on the registered W1P pulse one cycle later), so a
  // STATUS / COMP_* read right after a push or pop already sees its effect.
  val pushNow = CMD_PUSH.hitDoWrite && busif.writeData(0)
  val popNow = COMP_POP.hitDoWrite && busif.writeData(0)
  cmdFifo.io.push.valid := pushNow
  val d = cmdFifo.io.push.payload
  d.opcode := OPCODE; d.target := TARGET; d.ecc := ECC; d.split := SPLIT; d.dma := DMA; d.mplane := MPLANE; d.tag := TAG
  d.row := ROW; d.col := COL; d.len := LEN; d.dmaAddr := ADDR; d.param := PARAM
  cmdFifo.io.pop >> cmdLayer.io.cmd
  cmdLayer.io.comp >> compFifo.io.push
  compFifo.io.pop.ready := popNow

  // SDR or NV-DDR time sequence layer, chosen by DDR_CFG.DDR_EN (switched only while both are idle).
  val ddrOn = DDR_EN
  val ddrCfg = NandDdrCfg()
  ddrCfg.enable := ddrOn; ddrCfg.ckDiv := CK_DIV; ddrCfg.tCAD := T_CAD; ddrCfg.tWRCK := T_WRCK; ddrCfg.tDQSHZ := T_DQSHZ; ddrCfg.tCEH := T_CEH; ddrCfg.slot := SLOT
  ddrTiming.io.cfg := ddrCfg
  ddrTiming.io.t := t
  ddrTiming.io.rb_n := phy.io.rb_n
  timing.io.uop.valid := cmdLayer.io.uop.valid && !ddrOn
  ddrTiming.io.uop.valid := cmdLayer.io.uop.valid && ddrOn
  timing.io.uop.payload := cmdLayer.io.uop.payload
  ddrTiming.io.uop.payload := cmdLayer.io.uop.payload
  cmdLayer.io.uop.ready := Mux(ddrOn, ddrTiming.io.uop.ready, timing.io.uop.ready)
  // The SDR layer takes one byte per beat: a two-byte beat goes out as byte 0, then byte 1.
  val sdrSecond = RegInit(False)
  val dout = cmdLayer.io.dout
  val sdrLast = !dout.two || sdrSecond
  // The SDR layer takes its bytes through a full register stage (ready and valid both from registers,
  // one byte per cycle, soft-reset with the layers): its DOUT decision's ready no longer runs into the
  // command layer's beat enables (on the ECP5: the decision -> ready -> the beat taken -> the check-byte
  // select, 11.48 ns with 9.49 of routing between the layers). A byte waits a cycle more; a DOUT's first
  // byte is ready long before tADL allows it, and one byte per WE# cycle (tWC >= 2 cycles) keeps flowing.
  val sdrIn = Stream(Bits(8 bits))
  val sdrPipe = new ResetArea(doReset, cumulative = true) { val out = sdrIn.s2mPipe().m2sPipe() }
  timing.io.dout << sdrPipe.out
  sdrIn.valid := dout.valid && !ddrOn
  ddrTiming.io.dout.valid := dout.valid && ddrOn
  sdrIn.payload := Mux(sdrSecond, dout.b1, dout.b0)
  ddrTiming.io.dout.payload := dout.payload
  dout.ready := Mux(ddrOn, ddrTiming.io.dout.ready, sdrIn.ready && sdrLast)
  when(sdrIn.fire) { sdrSecond := !sdrLast }
  when(doReset) { sdrSecond := False }
  val sdrRx = Flow(BytePair())
  sdrRx.valid := phy.io.rx.valid
  sdrRx.data := B(0, 8 bits) ## phy.io.rx.payload
  sdrRx.two := False
  cmdLayer.io.rx << Mux(ddrOn, ddrTiming.io.rx, sdrRx)
  cmdLayer.io.timingIdle := Mux(ddrOn, ddrTiming.io.idle, timing.io.idle)
  cmdLayer.io.rxPending := Mux(ddrOn, ddrTiming.io.rxPending, phy.io.busyLine)
  cmdLayer.io.timeout := Mux(ddrOn, ddrTiming.io.timeout, timing.io.timeout)
  TX_UNDERRUN := ddrTiming.io.underrun
  PAIR_SPLIT := ddrTiming.io.pairSplit
  cmdLayer.io.axi >> io.axi
  dmaBusy := cmdLayer.io.dmaBusy
  cmdLayer.io.pageBytes := PAGE_BYTES
  cmdLayer.io.spareBytes := SPARE_BYTES
  cmdLayer.io.dmaLo := LO
  cmdLayer.io.dmaHi := HI
  timing.io.t := t
  timing.io.rb_n := phy.io.rb_n
  phy.io.drive := timing.io.drive
  phy.io.strobe := timing.io.strobe
  phy.io.sampleDelay := t.sampleDelay
  phy.io.wp_n := WP_N
  // Pins: the SDR PHY's output flops, or the NV-DDR output DDR flops (D1 on the SDR pins, D2 on ddr_h2_*).
  val dd = RegNext(ddrTiming.io.drive)
  dd.clk.init(0); dd.cle.init(0); dd.ale.init(0); dd.wr.init(3); dd.dqOe.init(0); dd.dqs.init(0); dd.dqsOe.init(0)
  for (k <- 0 until 2) { dd.ce_n(k).init(B(p.targets bits, default -> True)); dd.dq(k).init(0) }
  val ddrPins = RegNext(ddrOn) init (False)
  val sp = phy.io.pins
  sp.dq_i := io.nand.dq_i; sp.rb_n := io.nand.rb_n
  sp.ddr_cap_valid := False; sp.ddr_cap_q1 := 0; sp.ddr_cap_q2 := 0
  io.nand.wp_n := sp.wp_n
  io.nand.ddr := ddrPins
  io.nand.dq_o := Mux(ddrPins, dd.dq(0), sp.dq_o)
  io.nand.dq_oe := Mux(ddrPins, dd.dqOe(0), sp.dq_oe)
  io.nand.cle := Mux(ddrPins, dd.cle(0), sp.cle)
  io.nand.ale := Mux(ddrPins, dd.ale(0), sp.ale)
  io.nand.we_n := Mux(ddrPins, dd.clk(0), sp.we_n)
  io.nand.re_n := Mux(ddrPins, dd.wr(0), sp.re_n)
  io.nand.ce_n := Mux(ddrPins, dd.ce_n(0), sp.ce_n)
  io.nand.ddr_h2_dq_o := Mux(ddrPins, dd.dq(1), sp.dq_o)
  io.nand.ddr_h2_dq_oe := Mux(ddrPins, dd.dqOe(1), sp.dq_oe)
  io.nand.ddr_h2_cle := Mux(ddrPins, dd.cle(1), sp.cle)
  io.nand.ddr_h2_ale := Mux(ddrPins, dd.ale(1), sp.ale)
  io.nand.ddr_h2_we_n := Mux(ddrPins, dd.clk(1), sp.we_n)
  io.nand.ddr_h2_re_n := Mux(ddrPins, dd.wr(1), sp.re_n)
  io.nand.ddr_h2_ce_n := Mux(ddrPins, dd.ce_n(1), sp.ce_n)
  io.nand.ddr_dqs_o := dd.dqs
  io.nand.ddr_dqs_oe := Mux(ddrPins, dd.dqsOe, B(0, 2 bits))
  io.nand.ddr_tap := TAP
  // The PHY's two DQ samples of every cycle (IDDR outputs, already on this clock); one register stage.
  val cap = RegNext(io.nand.ddr_cap_valid) init (False)
  ddrTiming.io.cap.valid := cap && ddrOn
  ddrTiming.io.cap.payload.q1 := RegNext(io.nand.ddr_cap_q1)
  ddrTiming.io.cap.payload.q2 := RegNext(io.nand.ddr_cap_q2)

  val head = compFifo.io.pop.payload
  C_OPCODE := head.opcode; C_ERR := head.err; C_TARGET := head.target; C_TAG := head.tag
  C_VALID := compFifo.io.pop.valid
  FLASH_STATUS := head.status; ECC_CORRECTED := head.eccCorrected; ECC_CORR_MAP := head.eccCorrMap; ECC_UNC_MAP := head.eccUncMap
  DATA := head.data
  SECTOR_BITS := head.eccSectors

  BUSY := cmdLayer.io.busy || cmdFifo.io.occupancy =/= 0 || resetPending
  COMP_VALID := compFifo.io.pop.valid
  CMD_FREE := cmdFifo.io.availability.resized
  COMP_COUNT := compFifo.io.occupancy.resized
  RB := phy.io.rb_n.resized

  when(compFifo.io.push.fire) {
    DONE := True
    when(compFifo.io.push.err =/= NandErr.OK) { ERROR := True }
  }
  when(pushNow && !cmdFifo.io.push.ready) { OVERFLOW := True }
  io.irq := (DONE && EN_DONE) || (ERROR && EN_ERROR) || (OVERFLOW && EN_OVERFLOW)

  when(Mux(ddrOn, ddrTiming.io.dataCycle, timing.io.dataCycle)) { CYC := CYC + 1 }
  // bytes this cycle: a beat to the flash (1 or 2) and one from it (1 or 2)
  val beatBytes = (b: BytePair) => Mux(b.two, U(2, 2 bits), U(1, 2 bits)).resize(32)
  when(dout.fire || cmdLayer.io.rx.valid) { // (else a write to clear takes effect)
    BYT := BYT + Mux(dout.fire, beatBytes(dout.payload), U(0, 32 bits)) +
      Mux(cmdLayer.io.rx.valid, beatBytes(cmdLayer.io.rx.payload), U(0, 32 bits))
  }

  /** Enable of a simulation clock gate around this controller (common.SimClockGate; LsmcSoc builds the
    * controller under it): high while a register of the controller may change at the next edge. The
    * controller moves only for a command (queued, executing, completing), a soft reset, an APB access
    * or an AXI response, or when a pin it samples changes (R/B#, the NV-DDR capture; DQ only matters
    * during a command, see NandPhy); with NV-DDR on
    * its CLK runs, so it never rests. Once all of that is over, every counter of the time sequence layers
    * saturated and the PHY's delay line empty, `settle` more cycles take the one-cycle echoes (register
    * read data, WP# and the NV-DDR output flops, IRQ status). Unused (and so removed) without the gate. */
  val simActivity = new Area {
    val capQuiet = cap === io.nand.ddr_cap_valid && ddrTiming.io.cap.payload.q1 === io.nand.ddr_cap_q1 &&
      ddrTiming.io.cap.payload.q2 === io.nand.ddr_cap_q2
    val axi = io.axi.ar.valid || io.axi.aw.valid || io.axi.w.valid || io.axi.r.valid || io.axi.b.valid
    // Three parts by what they read, so that Verilator evaluates each only where it must: `core` reads
    // registers of this controller only (evaluated on its own, gated, clock edges; sim/soc/soc.vlt keeps
    // it a variable), `bus` the SoC's bus (every cycle), `pins` the top-level inputs (every eval(), the
    // input-combinational region: it was 9 % of the SoC model's time with `core` inlined into it; the
    // PHY's output and delay-line terms, once in `pins`, were most of what was left there).
    val core = resetPending || cmdFifo.io.occupancy =/= 0 || cmdLayer.io.busy || !timing.io.quiet ||
      !ddrTiming.io.quiet || ddrPins =/= ddrOn || sdrSecond || sdrPipe.out.valid || !sdrIn.ready || !phy.io.regsQuiet
    val bus = io.apb.PSEL.orR || axi
    val pins = !phy.io.pinsQuiet || !capQuiet
    val now = core || bus || pins
    val settle = Reg(UInt(3 bits)) init (7)
    when(now) { settle := 7 } elsewhen (settle =/= 0) { settle := settle - 1 }
    val enable = now || settle =/= 0
  }

  /** nand_regs.h / .json / .md / .html into the SpinalConfig target directory. */
  def docs(): Unit = common.RegBlock("nand_regs", "NAND", "NAND controller registers",
    "hw/ip/nand/rtl/NandController.scala", constants = Seq("ID_MAGIC"),
    enums = Seq(NandOp.regEnum, NandErr.regEnum)).emit(busif)
}

object NandController {
  /** ID.MAGIC: "NAND" in ASCII; exported as NAND_ID_MAGIC in nand_regs.h (RegBlock constants). */
  val IdMagic = BigInt("4E414E44", 16)
}

/** `runMain nand.Generate [--targets N] [--ecc-t T] [--ecc-sector BYTES] --out DIR`: NandController.v and
  * nand_regs.h / .json / .md / .html. */
object Generate extends common.Generator("build/gen/nand", common.Gen.intOpt("targets", 2, Seq(1, 2)),
    common.Gen.intOpt("ecc-t", BchParams().t, (4 to 14)), common.Gen.intOpt("ecc-sector", BchParams().dataBytes, Seq(512, 1024)),
    common.Gen.intOpt("pad-input-cycles", 0, Seq(0, 1, 2, 3))) {
  def top(a: common.Gen.Args) = {
    val ecc = BchParams(t = a.int("ecc-t"), dataBytes = a.int("ecc-sector"), m = if (a.int("ecc-sector") > 512) 14 else 13,
      prim = if (a.int("ecc-sector") > 512) 0x402B else 0x201B)
    val c = new NandController(NandParams(targets = a.int("targets"), bch = ecc, padInputCycles = a.int("pad-input-cycles")))
    c.docs()
    c
  }
}
