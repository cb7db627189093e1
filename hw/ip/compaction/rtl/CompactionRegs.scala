package compaction

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.bus.regif._

/** The register block of the compaction IP, declared once with regif on AXI4-Lite
  * (docs/architecture.md, "Registers"). It owns every software-visible register: configuration,
  * the six Table I registers of the paper, status/error capture views, interrupt enable/status and the
  * job counters. The job control itself (state machine) lives in CompactionIp and reports events here.
  *
  * @param withDocs write compaction_regs.h / .json / .md / .html (common.RegBlock) into the
  *                 SpinalConfig target directory during elaboration.
  * @param counterDomain clock domain of THROUGHPUT_COUNTER's register (default: the block's own). The
  *                 simulated SoC gives it a clock that keeps running in COUNT_CONTROL mode 1 while the
  *                 rest of the IP's clock is stopped (a register and an adder, not the register block).
  */
case class CompactionRegs(cfg: CompactionConfig, withDocs: Boolean = false,
                          counterDomain: Option[ClockDomain] = None) extends Component {
  val io = new Bundle {
    val ctrl = slave(AxiLite4(AxiLite4Config(addressWidth = 12, dataWidth = 32)))

    // to the job control
    val start = out Bool ()        // CTRL.START written (one-cycle pulse)
    val softReset = out Bool ()    // CTRL.SOFT_RESET written (one-cycle pulse)
    val group = out UInt (32 bits)
    val inBytes = out Vec (UInt(32 bits), cfg.ways)
    val outCapacity, invCapacity = out UInt (32 bits)
    val irq = out Bool ()

    // from the job control
    val busy, done, error = in Bool ()
    val errCode = in UInt (4 bits)
    val errInput = in UInt (cfg.inputBits bits)
    val errIndex = in UInt (32 bits)
    val jobStart = in Bool ()      // a job starts: clears HW_CYCLES and OUT_KEYS
    val doneEvent, errorEvent = in Bool ()
    val window = in Bool ()        // hardware measurement window (first input beat .. done/error)
    val outWords = in UInt (3 bits)
    val invAddr = in Bool ()
    val keyWords = in Vec (UInt(3 bits), cfg.ways)
    val outKey = in Bool ()
  }

  val busif = AxiLite4BusInterface(io.ctrl, SizeMapping(0, 4 KiB))

  // Table I of the paper (offsets 0x00..0x14). A bus write wins over a count in the same cycle.
  val ENCODER_DATA_OUT_CNT = busif.newReg(doc = "32-bit words leaving `out` (4 per entry, virtual and pad entries included)")
  val outCnt = ENCODER_DATA_OUT_CNT.field(UInt(32 bits), AccessType.RW, 0, "word count")
  val INVALID_ADDR_OUT_CNT = busif.newReg(doc = "Invalid (superseded) addresses leaving `invalid`")
  val invCnt = INVALID_ADDR_OUT_CNT.field(UInt(32 bits), AccessType.RW, 0, "address count")
  val KEY0_ENTRY_IN_CNT = busif.newReg(doc = "32-bit words accepted on `key0` (words discarded in the error state not counted)")
  val key0Cnt = KEY0_ENTRY_IN_CNT.field(UInt(32 bits), AccessType.RW, 0, "word count")
  val KEY1_ENTRY_IN_CNT = busif.newReg(doc = "32-bit words accepted on `key1` (words discarded in the error state not counted)")
  val key1Cnt = KEY1_ENTRY_IN_CNT.field(UInt(32 bits), AccessType.RW, 0, "word count")
  val COUNT_CONTROL = busif.newReg(doc = "Throughput counter mode. 0: stop and hold; 1: clear THROUGHPUT_COUNTER and count every cycle; 2: clear, then count the hardware window of each job (first input beat accepted, or START if both runs are empty, to done/error)")
  val countMode = COUNT_CONTROL.field(UInt(32 bits), AccessType.RW, 0, "mode")
  val THROUGHPUT_COUNTER = busif.newReg(doc = "Clock cycles counted under COUNT_CONTROL")
  val throughput = counterDomain.getOrElse(ClockDomain.current)(Reg(UInt(32 bits)) init (0))
  THROUGHPUT_COUNTER.parasiteField(throughput, AccessType.RW, 0, "cycles")

  // Project registers (0x18..0x4C).
  val ID = busif.newReg(doc = "Identification: magic \"LSMC\"")
  val idValue = ID.field(Bits(32 bits), AccessType.RO, BigInt("4C534D43", 16), "magic 0x4C534D43")
  idValue := B(BigInt("4C534D43", 16), 32 bits)
  val VERSION = busif.newReg(doc = "IP version and stream width")
  val version = VERSION.field(UInt(16 bits), AccessType.RO, 0x0100, "IP version 0x0100")(SymbolName("ip"))
  version := 0x0100
  val width = VERSION.field(UInt(16 bits), AccessType.RO, cfg.dataWidth, "dataWidth in bits")
  width := cfg.dataWidth
  val CTRL = busif.newReg(doc = "Job control (write 1, self-clearing)")
  val start = CTRL.field(Bool(), AccessType.W1P, 0, "START: begin a job with the configuration registers (ignored while busy or in the error state)")
  val softReset = CTRL.field(Bool(), AccessType.W1P, 0, "SOFT_RESET: empty every FIFO and pipeline stage, clear STATUS, ERR_INDEX, IRQ_STATUS and HW_CYCLES")
  val GROUP = busif.newReg(doc = "Group size G of the KB16 runs")
  val group = GROUP.field(UInt(32 bits), AccessType.RW, 16, "G, 2..256 (else START ends in error BAD_GROUP)")
  val STATUS = busif.newReg(doc = "Job status")
  val busy = STATUS.field(Bool(), AccessType.RO, 0, "BUSY: a job is running")
  val done = STATUS.field(Bool(), AccessType.RO, 0, "DONE: the last job completed")
  val error = STATUS.field(Bool(), AccessType.RO, 0, "ERROR: the IP stopped on an error; only a soft reset leaves this state")
  val errCode = STATUS.fieldAt(8, UInt(8 bits), AccessType.RO, 0, "ERR_CODE (docs/architecture.md, error codes)")
  val errInput = STATUS.fieldAt(16, UInt(cfg.inputBits bits), AccessType.RO, 0,
    if (cfg.ways == 2) "ERR_INPUT: input (0 key0, 1 key1) of a decoding error"
    else s"ERR_INPUT: input (0 key0 .. ${cfg.ways - 1} key${cfg.ways - 1}) of a decoding error")
  busy := io.busy
  done := io.done
  error := io.error
  errCode := io.errCode.resized
  errInput := io.errInput
  val ERR_INDEX = busif.newReg(doc = "Entry index (0-based) of the offender in its input, output entry index for OUT_OVERFLOW, address index for INV_OVERFLOW")
  val errIndex = ERR_INDEX.field(UInt(32 bits), AccessType.RO, 0, "index")
  errIndex := io.errIndex
  val IRQ_ENABLE = busif.newReg(doc = "Interrupt enable")
  val irqEnDone = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, "DONE")(SymbolName("done"))
  val irqEnError = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, "ERROR")(SymbolName("error"))
  val IRQ_STATUS = busif.newReg(doc = "Interrupt status (write 1 to clear); irq = IRQ_STATUS & IRQ_ENABLE")
  val irqDone = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, "DONE: a job completed")(SymbolName("done"))
  val irqError = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, "ERROR: a job stopped on an error")(SymbolName("error"))
  val IN0_BYTES = busif.newReg(doc = "Byte length of run 0 (key0, newer)")
  val in0Bytes = IN0_BYTES.field(UInt(32 bits), AccessType.RW, 0, "bytes")
  val IN1_BYTES = busif.newReg(doc = "Byte length of run 1 (key1, older)")
  val in1Bytes = IN1_BYTES.field(UInt(32 bits), AccessType.RW, 0, "bytes")
  val OUT_CAPACITY = busif.newReg(doc = "Bytes `out` may carry in a job (else error OUT_OVERFLOW)")
  val outCapacity = OUT_CAPACITY.field(UInt(32 bits), AccessType.RW, BigInt("FFFFFFFF", 16), "bytes")
  val INV_CAPACITY = busif.newReg(doc = "Bytes `invalid` may carry in a job (else error INV_OVERFLOW)")
  val invCapacity = INV_CAPACITY.field(UInt(32 bits), AccessType.RW, BigInt("FFFFFFFF", 16), "bytes")
  val HW_CYCLES = busif.newReg(doc = "Cycles of the hardware window of the last job (first input beat accepted .. done/error), cleared at START")
  val hwCyclesOut = HW_CYCLES.field(UInt(32 bits), AccessType.RO, 0, "cycles")
  val OUT_KEYS = busif.newReg(doc = "Real keys (non-virtual, non-pad entries) output in this job, cleared at START")
  val outKeysOut = OUT_KEYS.field(UInt(32 bits), AccessType.RO, 0, "keys")

  // More than two inputs (0x50..): WAYS, then per input k >= 2 its byte length and word counter.
  // The two-way IP has none of these, so its map is unchanged.
  val extraInputs = (cfg.ways > 2) generate new Area {
    val WAYS = busif.newReg(doc = "Input runs K of this IP (generation parameter)")
    val ways = WAYS.field(UInt(32 bits), AccessType.RO, cfg.ways, "K")
    ways := cfg.ways
    val regs = (2 until cfg.ways).map { k =>
      val bytesReg = busif.newReg(doc = s"Byte length of run $k (key$k)")(SymbolName(s"IN${k}_BYTES"))
      val bytesField = bytesReg.field(UInt(32 bits), AccessType.RW, 0, "bytes")(SymbolName("bytes"))
      val cntReg = busif.newReg(doc = s"32-bit words accepted on `key$k` (words discarded in the error state not counted)")(
        SymbolName(s"KEY${k}_ENTRY_IN_CNT"))
      val cnt = cntReg.field(UInt(32 bits), AccessType.RW, 0, "word count")(SymbolName("cnt"))
      (bytesReg, bytesField, cntReg, cnt)
    }
  }

  // Hardware updates. Statements after the regif write logic take priority, so counts are
  // guarded with !hitDoWrite (software writes win) while interrupt events win over a W1C.
  when(!ENCODER_DATA_OUT_CNT.hitDoWrite)(outCnt := outCnt + io.outWords)
  when(!INVALID_ADDR_OUT_CNT.hitDoWrite)(invCnt := invCnt + U(io.invAddr))
  when(!KEY0_ENTRY_IN_CNT.hitDoWrite)(key0Cnt := key0Cnt + io.keyWords(0))
  when(!KEY1_ENTRY_IN_CNT.hitDoWrite)(key1Cnt := key1Cnt + io.keyWords(1))
  if (cfg.ways > 2) for (((_, _, cntReg, cnt), i) <- extraInputs.regs.zipWithIndex)
    when(!cntReg.hitDoWrite)(cnt := cnt + io.keyWords(i + 2))

  val modeWritten = RegNext(COUNT_CONTROL.hitDoWrite) init (False)
  val counting = (countMode === 1) || (countMode === 2 && io.window)
  when(modeWritten && (countMode === 1 || countMode === 2)) {
    throughput := 0 // modes 1 and 2 start from zero
  } elsewhen (counting && !THROUGHPUT_COUNTER.hitDoWrite) {
    throughput := throughput + 1
  }

  val hwCycles = Reg(UInt(32 bits)) init (0)
  val outKeys = Reg(UInt(32 bits)) init (0)
  when(io.window)(hwCycles := hwCycles + 1)
  when(io.outKey)(outKeys := outKeys + 1)
  when(io.jobStart || softReset)(hwCycles := 0)
  when(io.jobStart)(outKeys := 0)
  hwCyclesOut := hwCycles
  outKeysOut := outKeys

  when(io.doneEvent)(irqDone := True)
  when(io.errorEvent)(irqError := True)
  when(softReset) {
    irqDone := False
    irqError := False
  }
  io.irq := RegNext((irqDone && irqEnDone) || (irqError && irqEnError)) init (False)

  io.start := start
  io.softReset := softReset
  io.group := group
  io.inBytes(0) := in0Bytes
  io.inBytes(1) := in1Bytes
  if (cfg.ways > 2) for (((_, f, _, _), i) <- extraInputs.regs.zipWithIndex) io.inBytes(i + 2) := f
  io.outCapacity := outCapacity
  io.invCapacity := invCapacity

  if (withDocs) common.RegBlock("compaction_regs", "CIP", "Compaction IP registers",
    "hw/ip/compaction/rtl/CompactionRegs.scala", enums = Seq(ErrorCode.regEnum)).emit(busif)
}
