package dma

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.misc.SizeMapping
import spinal.lib.bus.regif._

/** The DMA channels of the compaction IP behind one 256-bit AXI4 master:
  * channel 0 DDR -> key0, 1 DDR -> key1 (through Axi4ReadOnlyArbiter), 2 out -> DDR,
  * 3 invalid -> DDR (through Axi4WriteOnlyArbiter); with more than two readers (a K-way IP), channel
  * 4 + j reads DDR -> key(2 + j). Registers (regif on APB3): channel n < 4 at 0x40*n (array CH), the
  * extra readers at 0x200 + 0x40*j (array XCH), so the two-way map stays bit for bit. They are
  * described in docs/architecture.md and hw/ip/dma/doc/dma.md.
  *
  * @param dataWidth width of the key/out streams (the IP's dataWidth); `invalid` is always 32 bits.
  * @param readers   DDR -> key channels: the IP's ways K (2 or 4; ALL_STATUS has 8 bits per field).
  * @param writeBurst beats per write burst of both writers (16: 512 B; the multi-unit SoC uses longer
  *                  ones, see DmaWriter); their FIFOs hold two bursts.
  * @param readPorts DDR ports the readers use: 1, every channel on `axi`; P > 1 (a divisor of K): readers
  *                  split into P groups of K/P, group 0 with the writers on `axi`, group g on `axiReads(g-1)`,
  *                  a read-only DDR port of its own (its own read buffer at the controller: P times the reads
  *                  in flight, docs/scaling.md); P = K gives every reader its own port. The registers do not change.
  * @param writeGroup the writers hold full bursts until one of the SoC's writers is urgent (DmaWriter
  *                  groupLevel: 3/4 of the FIFO): `writeUrgent` out, `writeGroup` in (the SoC's OR of every
  *                  unit's `writeUrgent`, registered), so the units' write bursts reach the DDR bus together.
  */
case class CompactionDma(dataWidth: Int, readers: Int = 2, writeBurst: Int = DmaBus.maxBurst,
                         readPorts: Int = 1, writeGroup: Boolean = false) extends Component {
  require(dataWidth == 32 || dataWidth == 128, s"dataWidth must be 32 or 128, not $dataWidth")
  require(readers == 2 || readers == 4, s"readers must be 2 or 4, not $readers")
  require(readPorts >= 1 && readPorts <= readers && readers % readPorts == 0,
    s"readPorts must divide the readers ($readers), not $readPorts")
  val channelCount = readers + 2
  val axiConfig = DmaBus.axiConfigFor(readers)

  val io = new Bundle {
    val apb     = slave(Apb3(Apb3Config(addressWidth = 12, dataWidth = 32)))
    val axi     = master(Axi4(axiConfig))
    val axiReads = (readPorts > 1) generate Vec(master(Axi4ReadOnly(axiConfig)), readPorts - 1)
    val keys    = Vec(master(Stream(Fragment(Bits(dataWidth bits)))), readers)
    def key0: Stream[Fragment[Bits]] = keys(0)
    def key1: Stream[Fragment[Bits]] = keys(1)
    val out     = slave(Stream(Fragment(Bits(dataWidth bits))))
    val invalid = slave(Stream(Fragment(Bits(32 bits))))
    val flush   = in Bool() // from the IP: done or stopped on error
    val ipStart = in Bool() default (False) // optional: one-cycle pulse when the IP accepts a START
    val irq     = spinal.core.out(Bits(channelCount bits))
    val writeUrgent = writeGroup generate spinal.core.out(Bool())
    val writeGroupGo = writeGroup generate spinal.core.in(Bool())
  }

  // Port names io_key0 .. io_key<K-1>, as the two-way DMA always had (not io_keys_0).
  io.keys.zipWithIndex.foreach { case (k, i) => k.setName(s"io_key$i") }

  val readerUnits = Seq.fill(readers)(DmaReader(dataWidth))
  val reader0 = readerUnits(0)
  val reader1 = readerUnits(1)
  val writerFifo = scala.math.max(32, 2 * writeBurst)
  val groupLevel = if (writeGroup) common.WriteGroup.urgentLevel(writerFifo) else 0
  val writerOut = DmaWriter(dataWidth, writerFifo, writeBurst, groupLevel)
  val writerInv = DmaWriter(32, writerFifo, writeBurst, groupLevel)
  if (writeGroup) {
    io.writeUrgent := writerOut.io.urgent || writerInv.io.urgent
    writerOut.io.groupGo := io.writeGroupGo
    writerInv.io.groupGo := io.writeGroupGo
  }

  for ((k, r) <- io.keys.zip(readerUnits)) k << r.io.out
  writerOut.io.in << io.out
  writerInv.io.in << io.invalid
  writerOut.io.flush := io.flush
  writerInv.io.flush := io.flush
  writerOut.io.ipStart := io.ipStart
  writerInv.io.ipStart := io.ipStart

  // ---------------- DDR side ----------------
  if (readPorts == 1) {
    val readArbiter = Axi4ReadOnlyArbiter(axiConfig, inputsCount = readers)
    for ((in, r) <- readArbiter.io.inputs.zip(readerUnits)) in << r.io.axi
    io.axi.ar << readArbiter.io.output.ar
    readArbiter.io.output.r << io.axi.r
  } else {
    // P groups of readers, each behind a 2-input arbiter (a group of one leaves an input idle: the ids
    // keep the arbiter's width, one master config for every port).
    val groups = readerUnits.grouped(readers / readPorts).toSeq
    val ports = (io.axi.ar, io.axi.r) +: io.axiReads.map(p => (p.ar, p.r))
    for ((group, (ar, r)) <- groups.zip(ports)) {
      val arb = Axi4ReadOnlyArbiter(DmaBus.axiConfig, inputsCount = 2)
      for ((in, i) <- arb.io.inputs.zipWithIndex) {
        if (i < group.size) in << group(i).io.axi
        else {
          in.ar.valid := False
          in.ar.payload.assignDontCare()
          in.r.ready := True
        }
      }
      val (oar, or) = (arb.io.output.ar, arb.io.output.r)
      ar.arbitrationFrom(oar)
      ar.addr := oar.addr; ar.id := oar.id.resized; ar.len := oar.len; ar.size := oar.size
      ar.burst := oar.burst; ar.cache := oar.cache; ar.prot := oar.prot
      or.arbitrationFrom(r)
      or.data := r.data; or.id := r.id.resized; or.resp := r.resp; or.last := r.last
    }
  }

  // routeBufferSize: AWs that may wait for their W; each writer holds its burst data already.
  // Two writers need one id bit; a master port with more (K > 2 readers) carries them zero-extended.
  val writeArbiter = Axi4WriteOnlyArbiter(DmaBus.axiConfig, inputsCount = 2, routeBufferSize = 4)
  writeArbiter.io.inputs(0) << writerOut.io.axi
  writeArbiter.io.inputs(1) << writerInv.io.axi
  if (axiConfig.idWidth == DmaBus.axiConfig.idWidth) {
    io.axi.aw << writeArbiter.io.output.aw
    writeArbiter.io.output.b << io.axi.b
  } else {
    val aw = writeArbiter.io.output.aw
    io.axi.aw.arbitrationFrom(aw)
    io.axi.aw.addr := aw.addr
    io.axi.aw.id := aw.id.resized
    io.axi.aw.len := aw.len
    io.axi.aw.size := aw.size
    io.axi.aw.burst := aw.burst
    io.axi.aw.cache := aw.cache
    io.axi.aw.prot := aw.prot
    val b = writeArbiter.io.output.b
    b.arbitrationFrom(io.axi.b)
    b.id := io.axi.b.id.resized
    b.resp := io.axi.b.resp
  }
  io.axi.w << writeArbiter.io.output.w

  // ---------------- registers ----------------
  val busif = BusInterface(io.apb, SizeMapping(0, 4096), regPre = "")
  /** dma_regs.h / .json / .md / .html into the SpinalConfig target directory (channels as array CH). */
  def docs(): Unit = common.RegBlock("dma_regs", "DMA", "Compaction DMA registers",
    "hw/ip/dma/rtl/CompactionDma.scala", arrays = if (readers > 2) Seq("CH", "XCH") else Seq("CH")).emit(busif)
  val channels = Seq(reader0.io.ctrl, reader1.io.ctrl, writerOut.io.ctrl, writerInv.io.ctrl) ++
    readerUnits.drop(2).map(_.io.ctrl)
  val what = Seq("DDR -> key0", "DDR -> key1", "out -> DDR", "invalid -> DDR") ++
    (2 until readers).map(k => s"DDR -> key$k")
  // The two-way map keeps 4-bit fields; with extra readers every field is one byte.
  val maskBits = if (channelCount == 4) 4 else 8

  // Channel-wide registers: start several channels with one write and see them all in one read, so
  // the firmware's bracket around a job (the paper's Fig 9) holds a handful of bus accesses only.
  val rGlobalCtrl = busif.newRegAt(0x100, "All channels: start those whose bit is set (self-clearing)")(SymbolName("START_MASK"))
  val globalStart = rGlobalCtrl.field(Bits(maskBits bits), AccessType.W1I, 0, "bit n starts channel n (ignored while busy)")(SymbolName("start"))
  val rGlobalStatus = busif.newRegAt(0x104, "All channels: busy, done and error bits")(SymbolName("ALL_STATUS"))
  val allBusy = rGlobalStatus.field(Bits(maskBits bits), AccessType.RO, 0, "bit n: channel n busy")(SymbolName("busy"))
  val allDone = rGlobalStatus.fieldAt(8, Bits(maskBits bits), AccessType.RO, 0, "bit n: channel n done")(SymbolName("done"))
  val allError = rGlobalStatus.fieldAt(16, Bits(maskBits bits), AccessType.RO, 0, "bit n: channel n ended with an error")(SymbolName("error"))
  allBusy := Vec(channels.map(_.busy)).asBits.resized
  allDone := Vec(channels.map(_.done)).asBits.resized
  allError := Vec(channels.map(_.error)).asBits.resized

  val regs = for ((ch, n) <- channels.zipWithIndex) yield new Area {
    val base = if (n < 4) 0x40 * n else 0x200 + 0x40 * (n - 4)
    val tag = if (n < 4) s"CH$n" else s"XCH${n - 4}"
    def name(s: String) = SymbolName(s)
    val rAddr = busif.newRegAt(base + 0x00, s"Channel $n (${what(n)}): DDR byte address, 32-byte aligned")(name(s"${tag}_ADDR"))
    val addr = rAddr.field(UInt(32 bits), AccessType.RW, 0, "byte address")(name("addr"))
    val rLen = busif.newRegAt(base + 0x04, s"Channel $n: bytes to read (reader) or buffer size that may be written (writer)")(name(s"${tag}_LEN"))
    val len = rLen.field(UInt(32 bits), AccessType.RW, 0, "byte length")(name("len"))
    val rCtrl = busif.newRegAt(base + 0x08, s"Channel $n: control, self-clearing")(name(s"${tag}_CTRL"))
    val start = rCtrl.field(Bool(), AccessType.W1I, 0, "start a transfer (ignored while busy)")(name("start"))
    val abort = rCtrl.field(Bool(), AccessType.W1I, 0, "abort: finish bursts already on the bus, then stop")(name("abort"))
    val rStatus = busif.newRegAt(base + 0x0C, s"Channel $n: status")(name(s"${tag}_STATUS"))
    val busy = rStatus.field(Bool(), AccessType.RO, 0, "transfer in progress")(name("busy"))
    val done = rStatus.field(Bool(), AccessType.RO, 0, "last transfer completed")(name("done"))
    val error = rStatus.field(Bool(), AccessType.RO, 0, "last transfer ended with an error")(name("error"))
    val aborted = rStatus.field(Bool(), AccessType.RO, 0, "last transfer was aborted")(name("aborted"))
    val errCode = rStatus.fieldAt(8, Bits(8 bits), AccessType.RO, 0, "1 AXI response error, 2 overflow (stream carried more than LEN), 3 misaligned ADDR (two segments: ADDR, ADDR2 or LEN not a multiple of the stream beat)")(name("err_code"))
    val rBytes = busif.newRegAt(base + 0x10, s"Channel $n: bytes moved in the current/last transfer")(name(s"${tag}_BYTES"))
    val bytes = rBytes.field(UInt(32 bits), AccessType.RO, 0, "bytes")(name("bytes"))
    val rIrqEn = busif.newRegAt(base + 0x14, s"Channel $n: interrupt enable")(name(s"${tag}_IRQ_ENABLE"))
    val enDone = rIrqEn.field(Bool(), AccessType.RW, 0, "interrupt on done")(name("done"))
    val enError = rIrqEn.field(Bool(), AccessType.RW, 0, "interrupt on error")(name("error"))
    val rIrqSt = busif.newRegAt(base + 0x18, s"Channel $n: interrupt status, write 1 to clear")(name(s"${tag}_IRQ_STATUS"))
    val stDone = rIrqSt.field(Bool(), AccessType.W1C, 0, "transfer done")(name("done"))
    val stError = rIrqSt.field(Bool(), AccessType.W1C, 0, "transfer ended with an error")(name("error"))
    // A second segment (readers; every channel has the registers so that the array keeps one layout)
    val rAddr2 = busif.newRegAt(base + 0x1C, s"Channel $n: second segment's DDR byte address (readers only: read after the first segment, in the same stream)")(name(s"${tag}_ADDR2"))
    val addr2 = rAddr2.field(UInt(32 bits), AccessType.RW, 0, "byte address (a multiple of the stream beat, w/8 bytes)")(name("addr2"))
    val rLen2 = busif.newRegAt(base + 0x20, s"Channel $n: second segment's bytes (readers only; 0: one segment, as before; else ADDR, ADDR2 and LEN multiples of the stream beat)")(name(s"${tag}_LEN2"))
    val len2 = rLen2.field(UInt(32 bits), AccessType.RW, 0, "byte length")(name("len2"))

    // hardware events win over a simultaneous software clear (an event is never lost)
    when(ch.doneEvent) { stDone := True }
    when(ch.errorEvent) { stError := True }

    ch.start := start || globalStart(n)
    ch.abort := abort
    ch.addr := addr
    ch.len := len
    ch.addr2 := addr2
    ch.len2 := len2
    busy := ch.busy
    done := ch.done
    error := ch.error
    aborted := ch.aborted
    errCode := ch.code
    bytes := ch.bytes
    io.irq(n) := (stDone && enDone) || (stError && enError)
  }
  // unique RTL names per channel (the register field names stay short for the C header)
  for ((r, n) <- regs.zipWithIndex) r.setName(s"ch$n")
}
