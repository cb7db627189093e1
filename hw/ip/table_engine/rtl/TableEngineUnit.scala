package table_engine

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.bus.regif._

/** The table engine's registers, declared once with regif on any bus (`busif`): the C header, JSON, Markdown and
  * HTML come from here (common.RegBlock, prefix TE_). `front` is the core they drive and read. */
class TableEngineRegs(busif: BusIf, c: TableEngineConfig, front: TableEngineFront) extends Area {
  val f = front.io
  val ID = busif.newReg(doc = "Identification: magic \"LSTE\"")
  val idMagic = ID.field(Bits(32 bits), AccessType.RO, TableEngineRegs.IdMagic, "magic 0x4C535445")(SymbolName("magic"))
  idMagic := B(TableEngineRegs.IdMagic, 32 bits)
  val CONFIG = busif.newReg(doc = "Generation parameters")
  val ways = CONFIG.field(UInt(8 bits), AccessType.RO, c.ways, "ways K: runs one job merges")
  ways := c.ways
  val bytes = CONFIG.field(UInt(8 bits), AccessType.RO, c.bytes, "bytes a beat W (both AXI ports)")
  bytes := c.bytes
  val version = CONFIG.field(UInt(16 bits), AccessType.RO, TableEngineRegs.Version, "register map and descriptor version")
  version := TableEngineRegs.Version
  val CTRL = busif.newReg(doc = "Job control (write 1, self-clearing)")
  val go = CTRL.field(Bool(), AccessType.W1P, 0, "GO: fetch the descriptor at DESC_ADDR and run its job (ignored while busy)")
  val softReset = CTRL.field(Bool(), AccessType.W1P, 0,
    "SOFT_RESET: clear STATUS, IRQ_STATUS and the cycle counters (ignored while busy: every job ends with a status)")
  val DESC_ADDR = busif.newReg(doc = "Bus address of the job descriptor (TE_DESC of te_job.h), a multiple of TE_DESC_ALIGN")
  val descAddr = DESC_ADDR.field(UInt(32 bits), AccessType.RW, 0, "address")
  val STATUS = busif.newReg(doc = "Job status")
  val busy = STATUS.field(Bool(), AccessType.RO, 0, "BUSY: a job is running")
  val done = STATUS.field(Bool(), AccessType.RO, 0, "DONE: the last job ended (with ERROR: on an error)")
  val error = STATUS.field(Bool(), AccessType.RO, 0, "ERROR: the last job stopped on an error (CODE, UNIT, RUN, ERR_*)")
  val code = STATUS.fieldAt(8, UInt(ErrorCodes.Width bits), AccessType.RO, 0, "CODE: the model's error code (model/error.h)")
  val unit = STATUS.fieldAt(16, UInt(3 bits), AccessType.RO, 0, "UNIT: which unit stopped the job")
  val run = STATUS.fieldAt(24, UInt(4 bits), AccessType.RO, 0, "RUN: the run of a reader or merge error, the run whose table list failed")
  val ERR_TABLE = busif.newReg(doc = "Reader: the table's index in its run; OUTPUT: the output table's number in the job; FRONT: which memory (WHERE)")
  val errTable = ERR_TABLE.field(UInt(32 bits), AccessType.RO, 0, "table")
  val ERR_OFFSET = busif.newReg(doc = "Reader: byte offset in the table; OUTPUT: the output table's bytes written; FRONT: byte offset in that memory")
  val errOffset = ERR_OFFSET.field(UInt(32 bits), AccessType.RO, 0, "offset")
  val ERR_ENTRY = busif.newReg(doc = "Merge: the entry's index in its run; writer: entries written before the one at fault")
  val errEntry = ERR_ENTRY.field(UInt(32 bits), AccessType.RO, 0, "entry")
  val ENTRIES_IN = busif.newReg(doc = "Entries the merge took in the last job")
  val entriesIn = ENTRIES_IN.field(UInt(32 bits), AccessType.RO, 0, "entries")
  val ENTRIES_OUT = busif.newReg(doc = "Entries kept (written) in the last job")
  val entriesOut = ENTRIES_OUT.field(UInt(32 bits), AccessType.RO, 0, "entries")
  val DROPPED = busif.newReg(doc = "Entries dropped by LevelDB's rules in the last job")
  val dropped = DROPPED.field(UInt(32 bits), AccessType.RO, 0, "entries")
  val TABLES_OUT = busif.newReg(doc = "Output tables of the last job (TE_OUT records written)")
  val tablesOut = TABLES_OUT.field(UInt(32 bits), AccessType.RO, 0, "tables")
  val BYTES_OUT = busif.newReg(doc = "Bytes of the output tables of the last job")
  val bytesOut = BYTES_OUT.field(UInt(32 bits), AccessType.RO, 0, "bytes")
  val CYCLES = busif.newReg(doc = "Clocks of the last job, GO to its status (descriptor fetch, load, tables, records)")
  val cycles = CYCLES.field(UInt(32 bits), AccessType.RO, 0, "cycles")
  val ENGINE_CYCLES = busif.newReg(doc = "Clocks of the last job in the engine: its job handshake to its status (the harness's `cycles`)")
  val engineCycles = ENGINE_CYCLES.field(UInt(32 bits), AccessType.RO, 0, "cycles")
  val IRQ_ENABLE = busif.newReg(doc = "Interrupt enable")
  val irqEnDone = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, "DONE")(SymbolName("done"))
  val irqEnError = IRQ_ENABLE.field(Bool(), AccessType.RW, 0, "ERROR")(SymbolName("error"))
  val IRQ_STATUS = busif.newReg(doc = "Interrupt status (write 1 to clear); irq = IRQ_STATUS & IRQ_ENABLE")
  val irqDone = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, "DONE: a job ended without error")(SymbolName("done"))
  val irqError = IRQ_STATUS.field(Bool(), AccessType.W1C, 0, "ERROR: a job stopped on an error")(SymbolName("error"))

  f.go := go
  f.softReset := softReset
  f.descAddr := descAddr
  val s = f.status
  busy := s.busy
  done := s.done
  error := s.error
  code := s.code
  unit := s.unit
  run := s.run
  errTable := s.table
  errOffset := s.offset
  errEntry := s.entry
  entriesIn := s.entriesIn
  entriesOut := s.entriesOut
  dropped := s.dropped
  tablesOut := s.tablesOut
  bytesOut := s.bytesOut
  cycles := s.cycles
  engineCycles := s.engineCycles
  // hardware events win over a software clear in the same clock (an event is never lost)
  when(softReset && !s.busy) {
    irqDone := False
    irqError := False
  }
  when(f.doneEvent) { irqDone := True }
  when(f.errorEvent) { irqError := True }
  val irq = RegNext((irqDone && irqEnDone) || (irqError && irqEnError)) init (False)

  def docs(): Unit = common.RegBlock("te_regs", "TE", "Table engine registers",
    "hw/ip/table_engine/rtl/TableEngineUnit.scala", constants = Seq("ID_MAGIC"), enums = TableEngineRegs.enums).emit(busif)
}

object TableEngineRegs {
  val IdMagic = BigInt("4C535445", 16) // "LSTE"
  val Version = 0x0100
  def enums: Seq[common.RegEnum] = Seq(
    common.RegEnum("ERR", "STATUS.CODE", s"error codes (from ${ErrorCodes.Source})",
      ErrorCodes.names.zipWithIndex.map { case (n, v) => common.RegEnum.V(n, v) }),
    common.RegEnum("UNIT", "STATUS.UNIT", "the unit that stopped a job",
      TableEngineFront.unitNames.zipWithIndex.map { case (n, v) => common.RegEnum.V(n, v) }),
    common.RegEnum("WHERE", "ERR_TABLE", "with UNIT = FRONT: the memory the front end stopped in",
      FrontWhere.names.zipWithIndex.map { case (n, v) => common.RegEnum.V(n, v) }))
}

/** A table-engine unit: the engine (TableEngine), its register front end (TableEngineFront) and registers
  * (TableEngineRegs) on APB3, one AXI4 read and one AXI4 write master (the engine's and the front end's traffic
  * through spinal.lib's arbiters, the front end's id bit above the engine's) and a level interrupt. `active`: a job
  * runs or an AXI valid is up (the SoC stops the unit's clock otherwise). */
case class TableEngineUnit(c: TableEngineConfig = TableEngineConfig(), withDocs: Boolean = false) extends Component {
  val io = new Bundle {
    val apb = slave(Apb3(TableEngineUnit.apbConfig))
    val axiRead = master(Axi4ReadOnly(TableEngineUnit.readAxi(c)))
    val axiWrite = master(Axi4WriteOnly(TableEngineUnit.writeAxi(c)))
    val irq = out Bool ()
    val busy = out Bool ()
    val writeUrgent = c.writeGroup generate out(Bool()) // write grouping: TableEngineConfig.writeGroup
    val writeGroupGo = c.writeGroup generate in(Bool())
  }
  val engine = TableEngine(c)
  if (c.writeGroup) {
    io.writeUrgent := engine.io.writeUrgent
    engine.io.writeGroupGo := io.writeGroupGo
  }
  val front = TableEngineFront(c)
  engine.io.job << front.io.job
  engine.io.baseLoad << front.io.baseLoad
  for (k <- 0 until c.ways) engine.io.tables(k) << front.io.tables(k)
  front.io.outTables << engine.io.outTables
  front.io.engineStatus << engine.io.status

  val readArbiter = Axi4ReadOnlyArbiter(TableEngineUnit.readAxi(c), inputsCount = 2)
  readArbiter.io.inputs(0) << engine.io.axiRead
  readArbiter.io.inputs(1) << front.io.axiRead
  io.axiRead << readArbiter.io.output
  val writeArbiter = Axi4WriteOnlyArbiter(TableEngineUnit.writeAxi(c), inputsCount = 2, routeBufferSize = 4)
  writeArbiter.io.inputs(0) << engine.io.axiWrite
  writeArbiter.io.inputs(1) << front.io.axiWrite
  io.axiWrite << writeArbiter.io.output

  val busif = BusInterface(io.apb, SizeMapping(0, 4 KiB), regPre = "")
  val regs = new TableEngineRegs(busif, c, front)
  if (withDocs) regs.docs()
  io.irq := regs.irq
  io.busy := front.io.status.busy
}

object TableEngineUnit {
  val apbConfig = Apb3Config(addressWidth = 12, dataWidth = 32)
  def readAxi(c: TableEngineConfig): Axi4Config = c.readAxi.copy(idWidth = c.readAxi.idWidth + 1)
  def writeAxi(c: TableEngineConfig): Axi4Config = c.writeAxi.copy(idWidth = c.writeAxi.idWidth + 1)
}

/** `table_engine.GenerateTableEngineUnit [the options of GenerateTableEngine] --out DIR`: DIR/TableEngineUnit.v (the
  * engine with its register front end on APB3, doc/table_engine_soc.md) and te_regs.h / .json / .md / .html. */
object GenerateTableEngineUnit extends Generator("build/gen/table_engine_unit_w16_k4",
      Gen.intOpt("bytes", 16, Seq(16)), Gen.intOpt("ways", 4, Seq(2, 4, 8)),
      Gen.intOpt("key-limit", 1032, min = 1024), Gen.intOpt("max-block", 4 << 20, min = 64),
      Gen.intOpt("max-blocks", 1024, Seq(256, 1024, 4096, 16384)), Gen.intOpt("walker-levels", 8, min = 1),
      Gen.intOpt("walker-files", 1024, (4 to 16).map(1 << _)), Gen.intOpt("walker-key-words", 8192, (6 to 16).map(1 << _)),
      Gen.intOpt("grandparents", 1024, (4 to 16).map(1 << _))) {
  def top(a: Gen.Args) = TableEngineUnit(TableEngineConfig(a.int("bytes"), a.int("ways"), a.int("key-limit"),
    a.int("max-block"), a.int("max-blocks"), walkerLevels = a.int("walker-levels"),
    walkerFiles = a.int("walker-files"), walkerKeyWords = a.int("walker-key-words"),
    grandparents = a.int("grandparents")), withDocs = true)
}
