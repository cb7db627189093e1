package nand

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Command classification layer: takes one queued descriptor at a time, checks it, and splits it
  * into a micro-program of steps: micro-operations for the timing layer (CE#, command/address/data
  * cycles, tWB and R/B# waits) and local steps (DMA between DDR and the page buffer, ECC correction,
  * split point for interleaving). It owns the page buffer, the DMA (AXI4 master) and the ECC engine,
  * and produces one completion record per command. */
class NandCommandLayer(p: NandParams) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (NandCmd(p))
    val comp = master Stream (NandCompletion(p))
    val uop = master Stream (Uop(p))
    val dout = master Stream (BytePair()) // page data two bytes per beat, feature bytes one
    val rx = slave Flow (BytePair())
    val timingIdle = in Bool()
    val rxPending = in Bool()
    val timeout = in Bool()
    val axi = master(Axi4(p.axiConfig))
    val pageBytes = in UInt (16 bits)
    val spareBytes = in UInt (16 bits)
    val dmaLo, dmaHi = in UInt (32 bits)
    val busy = out Bool()
    val dmaBusy = out Bool()
  }
  val wordBits = log2Up(p.bufWords)
  // Ping-pong page buffer: two banks of bufWords. The front end (flash transfers) fills bank `fb` while the
  // back end (ECC correction + DMA out of a page read) works on the other, so page n+1 crosses the flash
  // bus while page n is corrected and written to DDR.
  val buf = Mem(Bits(32 bits), 2 * p.bufWords)
  val bufAddrBits = log2Up(2 * p.bufWords)
  def ba(bank: Bool, a: UInt): UInt = (Mux(bank, U(p.bufWords, bufAddrBits bits), U(0, bufAddrBits bits)) + a.resize(bufAddrBits))
  val fb = RegInit(False) // bank of the front end
  val bb = RegInit(False) // bank of the back end's job

  // ------------------------------------------------------------------ descriptor and derived values
  // The configuration the layer reads (page geometry, DMA window) as registers a cycle behind the
  // controller's: it changes only between commands, and none of it reaches a decision through arithmetic
  // (on the ECP5, PAGE_BYTES -> `sectors * 13` -> the descriptor check -> `state` was the critical path).
  val bch = p.bch
  val secBits = log2Up(p.maxSectors)
  private def sectorsOf(pageBytes: UInt): UInt = (pageBytes >> p.sectorShift).resize(8)
  // spare bytes 8 .. eccSpareEnd-1 hold the check bytes
  private def eccSpareEndOf(pageBytes: UInt): UInt = (sectorsOf(pageBytes) * U(bch.eccBytes, 8 bits)).resize(17) + 8
  val pageBytes = RegNext(io.pageBytes)
  val dmaLo = RegNext(io.dmaLo)
  val dmaHi = RegNext(io.dmaHi)
  val fullBytes = RegNext(io.pageBytes.resize(17) + io.spareBytes.resize(17))
  val sectors = RegNext(sectorsOf(io.pageBytes))
  val eccSpareEnd = RegNext(eccSpareEndOf(io.pageBytes))
  // A page geometry ECC cannot use: not whole sectors, too many, or the check bytes beyond the spare area. Made from
  // the registers above, so two cycles behind the controller's (the product for eccSpareEnd in a clock of its own;
  // on the ECP5, PAGE_BYTES -> the multiplier -> the compare -> `geomBad` was the SoC's critical path): a
  // descriptor reaches the layer at least two APB writes after a geometry write (its CMD_PUSH, then the queue).
  val spareBytes = RegNext(io.spareBytes)
  val geomBad = RegNext(pageBytes(p.sectorShift - 1 downto 0) =/= 0 || pageBytes === 0 ||
    (pageBytes >> p.sectorShift) > p.maxSectors || spareBytes.resize(17) < eccSpareEnd)

  /** What a descriptor implies, registered with it at its fire (from the queue's output), so that the
    * check in CHECK and every transfer read registers, not the opcode decode and the byte arithmetic. */
  case class CmdFacts() extends Bundle {
    val isPageIn, isProgram, eccOn, usesDma, frontDma, bad, dmaLowBad = Bool()
    val nandBytes, dmaBytes = UInt(17 bits)
    val dmaEnd = UInt(34 bits)
  }
  def factsOf(c: NandCmd): CmdFacts = {
    val f = CmdFacts()
    def is(ops: Int*): Bool = ops.map(o => c.opcode === o).reduce(_ || _)
    f.isPageIn := is(NandOp.PAGE_READ, NandOp.READ_DATA, NandOp.READ_CACHE, NandOp.READ_CACHE_END)
    f.isProgram := is(NandOp.PROGRAM, NandOp.PROGRAM_CACHE)
    f.eccOn := c.ecc && (f.isPageIn || f.isProgram)
    f.nandBytes := Mux(f.eccOn, fullBytes, c.len.resize(17))
    f.dmaBytes := Mux(f.eccOn, pageBytes.resize(17), ((c.len.resize(17) + 3) & U(0x1FFFC, 17 bits)))
    // A multi-plane PAGE_READ (32h) moves no data: it ends after tDBSY like a split read.
    val mpRead = c.mplane && c.opcode === NandOp.PAGE_READ
    val splitRead = (c.split && is(NandOp.PAGE_READ, NandOp.READ_CACHE, NandOp.READ_CACHE_END)) || mpRead // ends before any data
    f.usesDma := c.dma && (f.isPageIn || f.isProgram || is(NandOp.READ_ID, NandOp.READ_PARAM, NandOp.CHANGE_COL)) && !splitRead
    // DMA users the front end runs itself (not page reads, which the back end finishes): they wait for the back end.
    f.frontDma := f.usesDma && !f.isPageIn
    // Descriptor checks: a bad command never touches the flash or the bus.
    f.bad := c.opcode >= NandOp.count || c.target.resize(4) >= p.targets || f.nandBytes > p.bufBytes ||
      (c.mplane && !is(mpPrograms.keys.toSeq: _*)) ||
      (f.isProgram && (f.nandBytes === 0 || f.nandBytes(1 downto 0) =/= 0)) ||
      (f.eccOn && (c.col =/= 0 || geomBad))
    // The DMA window check, its end compared in CHECK (one carry chain per cycle).
    f.dmaLowBad := c.dmaAddr(1 downto 0) =/= 0 || c.dmaAddr < dmaLo
    f.dmaEnd := c.dmaAddr.resize(34) + f.dmaBytes.resize(34)
    f
  }
  val cur = Reg(NandCmd(p))
  val facts = Reg(CmdFacts())
  val op = cur.opcode
  def isOp(ops: Int*): Bool = ops.map(o => op === o).reduce(_ || _)
  val isPageIn = facts.isPageIn
  val isProgram = facts.isProgram
  val eccOn = facts.eccOn
  val nandBytes = facts.nandBytes
  val dmaBytes = facts.dmaBytes
  val usesDma = facts.usesDma
  val frontDma = facts.frontDma

  // ------------------------------------------------------------------ micro-programs
  object StepKind extends SpinalEnum(binaryOneHot) { // one-hot: a step test is one register bit
    val CE_ON, CE_OFF, CMD, ADDR, DOUT, DIN, WAIT_WB, WAIT_RB, SYNC, DMA_IN, DMA_OUT, ECC_FIX, SPLIT_END, DONE = newElement()
  }
  case class St(kind: StepKind.E, v: () => Bits = () => B(0, 8 bits), c: () => UInt = () => U(0, 16 bits), ccs: Boolean = false)
  import StepKind._
  private def cmdB(x: Int) = St(CMD, () => B(x, 8 bits))
  private def adr(f: => Bits) = St(ADDR, () => f)
  private val col0 = adr(cur.col(7 downto 0).asBits)
  private val col1 = adr(cur.col(15 downto 8).asBits)
  private val row0 = adr(cur.row(7 downto 0))
  private val row1 = adr(cur.row(15 downto 8))
  private val row2 = adr(cur.row(23 downto 16))
  private def din(n: => UInt, ccs: Boolean = false) = St(DIN, c = () => n.resize(16), ccs = ccs)
  private val nBytes = () => nandBytes.resize(16)
  private val ce = St(CE_ON); private val ceOff = St(CE_OFF); private val sync = St(SYNC); private val done = St(DONE)
  private val wb = St(WAIT_WB); private val rb = St(WAIT_RB)
  private val statusTail = Seq(rb, sync, cmdB(0x70), din(U(1)), sync, ceOff, done)
  val programs: Map[Int, Seq[St]] = Map(
    // SPLIT: CE# released after tWB; WAIT_STATUS collects it. A target in NV-DDR returns to SDR mode 0 at
    // the end of the reset: CLK edges with CE# low past that would be SDR data cycles to it.
    NandOp.RESET -> Seq(ce, cmdB(0xFF), wb, St(SPLIT_END), rb, sync, ceOff, done),
    NandOp.READ_ID -> Seq(ce, cmdB(0x90), row0, din(cur.len), sync, ceOff, St(DMA_OUT), done),
    NandOp.READ_PARAM -> Seq(ce, cmdB(0xEC), adr(B(0, 8 bits)), wb, rb, sync, din(cur.len), sync, ceOff, St(DMA_OUT), done),
    NandOp.READ_STATUS -> Seq(ce, cmdB(0x70), din(U(1)), sync, ceOff, done),
    NandOp.SET_FEATURES -> Seq(ce, cmdB(0xEF), row0, St(DOUT, c = () => U(4, 16 bits)), wb, rb, sync, ceOff, done),
    NandOp.GET_FEATURES -> Seq(ce, cmdB(0xEE), row0, wb, rb, sync, din(U(4)), sync, ceOff, done),
    NandOp.PAGE_READ -> Seq(ce, cmdB(0x00), col0, col1, row0, row1, row2, cmdB(0x30), wb, St(SPLIT_END), rb, sync,
      St(DIN, c = nBytes), sync, ceOff, St(ECC_FIX), St(DMA_OUT), done),
    NandOp.READ_DATA -> Seq(ce, rb, sync, cmdB(0x00), St(DIN, c = nBytes), sync, ceOff, St(ECC_FIX), St(DMA_OUT), done),
    // Cache read (after a PAGE_READ, SPLIT or not): once R/B# is high, 31h moves the page the array read
    // last into the cache register (R/B# low for tRCBSY, or until the array is done) and starts reading
    // the next page; 3Fh moves the last one without a new read. SPLIT ends after tWB (the bus is free
    // during tRCBSY); READ_DATA (00h, output resumes at column 0) later takes the cache register out.
    NandOp.READ_CACHE -> Seq(ce, rb, sync, cmdB(0x31), wb, St(SPLIT_END), rb, sync, St(DIN, c = nBytes), sync, ceOff, St(ECC_FIX), St(DMA_OUT), done),
    NandOp.READ_CACHE_END -> Seq(ce, rb, sync, cmdB(0x3F), wb, St(SPLIT_END), rb, sync, St(DIN, c = nBytes), sync, ceOff, St(ECC_FIX), St(DMA_OUT), done),
    NandOp.CHANGE_COL -> Seq(ce, cmdB(0x05), col0, col1, cmdB(0xE0), St(DIN, c = nBytes, ccs = true), sync, ceOff, St(DMA_OUT), done),
    NandOp.PROGRAM -> (Seq(St(DMA_IN), ce, cmdB(0x80), col0, col1, row0, row1, row2, St(DOUT, c = nBytes), cmdB(0x10), wb,
      St(SPLIT_END)) ++ statusTail),
    // Cache program: 15h instead of 10h; R/B# returns when the cache register is free (tCBSY, or when the
    // previous cache program is done) while the array programs in the background. Its status carries
    // FAILC = the page handed over before; PROGRAM (10h) ends the sequence (FAIL = its page).
    NandOp.PROGRAM_CACHE -> (Seq(St(DMA_IN), ce, cmdB(0x80), col0, col1, row0, row1, row2, St(DOUT, c = nBytes), cmdB(0x15), wb,
      St(SPLIT_END)) ++ statusTail),
    NandOp.ERASE -> (Seq(ce, cmdB(0x60), row0, row1, row2, cmdB(0xD0), wb, St(SPLIT_END)) ++ statusTail),
    NandOp.WAIT_STATUS -> (Seq(ce) ++ statusTail)
  )
  // Multi-plane variants (CMD_CTRL.MPLANE), keyed opcode + 16: the planes before the last confirm with
  // 32h / 11h / D1h and the target is busy for tDBSY, after which the next plane's command may follow
  // (the last plane's plain PAGE_READ / PROGRAM / ERASE starts the array for all); READ_DATA picks the
  // page register of its row's plane with CHANGE READ COLUMN ENHANCED (06h, col, row, E0h, tCCS).
  val mpPrograms: Map[Int, Seq[St]] = Map(
    NandOp.PAGE_READ -> Seq(ce, cmdB(0x00), col0, col1, row0, row1, row2, cmdB(0x32), wb, rb, sync, ceOff, done),
    NandOp.PROGRAM -> Seq(St(DMA_IN), ce, cmdB(0x80), col0, col1, row0, row1, row2, St(DOUT, c = nBytes), cmdB(0x11), wb,
      rb, sync, ceOff, done),
    NandOp.ERASE -> Seq(ce, cmdB(0x60), row0, row1, row2, cmdB(0xD1), wb, rb, sync, ceOff, done),
    NandOp.READ_DATA -> Seq(ce, rb, sync, cmdB(0x06), col0, col1, row0, row1, row2, cmdB(0xE0), St(DIN, c = nBytes, ccs = true),
      sync, ceOff, St(ECC_FIX), St(DMA_OUT), done)
  )

  val step = Reg(UInt(5 bits)) init (0)
  // The step's decode (kind, value, count, flags) from registers: decoded every cycle for `step` and
  // `step + 1` into two registers, the one in use picked by whether the step moved in the last cycle
  // (`step` then is the old step + 1). The decode was the layer's critical path on the ECP5 (opcode and
  // step through the program tables into every step's enables, 11.97 ns); now a step test is a 2:1 mux
  // of register bits, no cycle added. `cur` changes only at a command's fire, followed by CHECK, which
  // reads no decode: by RUN both registers hold the new command's steps.
  case class StepDec() extends Bundle {
    val kind = StepKind()
    val v = Bits(8 bits)
    val c = UInt(16 bits)
    val ccs, uop, array = Bool()
    val uopKind = UopKind()
  }
  val uopOf = Map(CE_ON -> UopKind.CE_ON, CE_OFF -> UopKind.CE_OFF, CMD -> UopKind.CMD, ADDR -> UopKind.ADDR,
    DOUT -> UopKind.DOUT, DIN -> UopKind.DIN, WAIT_WB -> UopKind.WAIT_WB, WAIT_RB -> UopKind.WAIT_RB)
  def decode(at: UInt): StepDec = {
    val d = StepDec()
    d.kind := DONE; d.v := 0; d.c := 0; d.ccs := False; d.uop := False; d.uopKind.assignDontCare()
    switch((cur.mplane ## op).asUInt) {
      for ((o, prog) <- programs.toSeq ++ mpPrograms.toSeq.map { case (o, pr) => (o + 16, pr) }) is(o) {
        switch(at) {
          for ((s, i) <- prog.zipWithIndex) is(i) {
            d.kind := s.kind; d.v := s.v(); d.c := s.c(); d.ccs := Bool(s.ccs)
            for (k <- uopOf.get(s.kind)) { d.uop := True; d.uopKind := k }
          }
          default {}
        }
      }
      default {}
    }
    d.array := (d.kind === DOUT && isProgram) || (d.kind === DIN && (isPageIn || op === NandOp.CHANGE_COL))
    d
  }
  val decHere = RegNext(decode(step))
  val decAhead = RegNext(decode(step + 1))
  val stepMoves = False // next() this cycle
  val stepMoved = RegNext(stepMoves) init (False)
  val sd = Mux(stepMoved, decAhead, decHere)
  val sk = sd.kind
  val sv = sd.v
  val sc = sd.c
  val sccs = sd.ccs

  // ------------------------------------------------------------------ top-level state
  object State extends SpinalEnum { val IDLE, CHECK, RUN, ABORT, ABORT_WAIT, COMPLETE = newElement() }
  val state = RegInit(State.IDLE)
  val err = Reg(UInt(4 bits))
  val resultWord = Reg(Bits(32 bits))

  // Back end: a page read handed over at its ECC_FIX step (bank bb): correction, DMA out, completion.
  object BState extends SpinalEnum { val IDLE, FIX, COMP = newElement() }
  val bState = RegInit(BState.IDLE)
  val bCmd = Reg(NandCmd(p))
  val bErr = Reg(UInt(4 bits))
  val bResult = Reg(Bits(32 bits))
  val bArmed = RegInit(False)
  val eccCorrected = Reg(UInt(8 bits))
  val eccCorrMap, eccUncMap = Reg(Bits(8 bits))
  val eccSectors = Reg(Bits(32 bits))
  // A completion of the front end waits here while an older page is still in the back end (order kept).
  val hold = Reg(NandCompletion(p))
  val holdValid = RegInit(False)
  io.busy := state =/= State.IDLE || bState =/= BState.IDLE || holdValid

  io.cmd.ready := state === State.IDLE
  when(io.cmd.fire) {
    cur := io.cmd.payload
    facts := factsOf(io.cmd.payload)
    state := State.CHECK
    step := 0
    err := NandErr.OK
    resultWord := 0
  }

  val badCmd = facts.bad
  val badDma = usesDma && (facts.dmaLowBad || facts.dmaEnd > dmaHi.resize(34))

  // ------------------------------------------------------------------ micro-op issue
  io.uop.valid := False
  io.uop.value := sv
  io.uop.count := sc
  io.uop.target := cur.target
  io.uop.ccs := sccs
  io.uop.array := sd.array
  io.uop.kind := sd.uopKind
  val isUop = sd.uop

  // ------------------------------------------------------------------ transmit path (buffer -> DQ)
  val txActive = RegInit(False)
  val txFeat = RegInit(False)
  val txAddr = Reg(UInt(wordBits bits))
  val txWordsLeft = Reg(UInt(16 bits))
  val txIdx = Reg(UInt(17 bits))
  val featIdx = Reg(UInt(3 bits))
  val addrStream = Stream(UInt(bufAddrBits bits))
  addrStream.valid := txActive && !txFeat && txWordsLeft =/= 0
  addrStream.payload := ba(fb, txAddr)
  when(addrStream.fire) { txAddr := txAddr + 1; txWordsLeft := txWordsLeft - 1 }
  val txWords = buf.streamReadSync(addrStream)
  val txPairs = Stream(Bits(16 bits))
  StreamWidthAdapter(txWords, txPairs, LITTLE)

  // BCH encoder over the bytes actually sent: remainder by g(x) per sector, check bytes into the spare.
  // Two bytes per beat: a sector (a power of two >= 256 bytes) and the main area end on a pair boundary;
  // the check bytes of two sectors may share a pair (13 check bytes per sector at t = 8).
  val eccByteBits = log2Up(bch.eccBytes + 1)
  def eccByte(v: Bits, j: UInt): Bits = { // byte j of a check vector (byte 0 in the MSBs)
    val o = Bits(8 bits); o := 0xFF
    for (k <- 0 until bch.eccBytes) when(j === k) { o := v(bch.eccVecBits - 1 - 8 * k downto bch.eccVecBits - 8 - 8 * k) }
    o
  }
  def checkVec(rem: Bits): Bits = // remainder -> stored check vector (pad bits 1, K mask)
    (if (bch.eccVecBits > bch.r) rem ## B(bch.eccVecBits - bch.r bits, default -> True) else rem) ^ B(bch.kMask, bch.eccVecBits bits)
  /** The check-byte position after (sector, byte). */
  def codeNext(sec: UInt, byte: UInt): (UInt, UInt) = {
    val last = byte === bch.eccBytes - 1
    (Mux(last, sec + 1, sec), Mux(last, U(0, eccByteBits bits), byte + 1))
  }
  // Byte index idx is a check byte when pageBytes + 8 <= idx < pageBytes + eccSpareEnd (isCode(idx - pageBytes,
  // idx < pageBytes) as first written); idx + 1 is one when pageBytes + 7 <= idx < pageBytes + eccSpareEnd - 1.
  // The bounds are registers of the (static during a command) geometry: the transfer paths compare the
  // index with registers instead of subtracting the page size, adding 1 and comparing with a product
  // (the command layer's critical path on the ECP5 was rxIdx -> that chain -> the check-byte enables).
  val pageEnd = pageBytes.resize(17)
  val codeLo0 = RegNext(pageEnd + 8)
  val codeHi0 = RegNext(pageEnd + eccSpareEnd)
  val codeLo1 = RegNext(pageEnd + 7)
  val codeHi1 = RegNext(pageEnd + eccSpareEnd - 1)
  def isCode0(idx: UInt): Bool = idx >= codeLo0 && idx < codeHi0
  def isCode1(idx: UInt): Bool = idx >= codeLo1 && idx < codeHi1
  val encRem = Reg(Bits(bch.r bits))
  val encCodes = Vec(Reg(Bits(bch.eccVecBits bits)), p.maxSectors)
  val txSector = (txIdx >> p.sectorShift).resize(secBits)
  // The index after this cycle (getAheadValue: the D input; a DOUT start, a beat taken, or as it was): the
  // byte tests are registered from it, so a beat's data leaves from registers.
  val txIdxNext = txIdx.getAheadValue()
  val txInMain = RegNext(txIdxNext < pageBytes)
  val txIsCode0 = RegNext(isCode0(txIdxNext))
  val txIsCode1 = RegNext(isCode1(txIdxNext)) // byte 1 is a check byte only if byte 0 is one (region starts even)
  // The check bytes leave through an in-order byte queue. Once the main area is sent every sector's check
  // vector is final; a fetch stage then reads them two at a time (the 104-way selects, registered) into a
  // 4-byte queue that a beat pops 0, 1 or 2 bytes from. A beat's check bytes are the queue's head registers
  // and a beat taken only moves the queue: the check-byte position no longer runs through the selects into
  // the beat's data (the whole SoC's critical path at 561b9b3, seed 1: the position -> the select -> the
  // beat's two check bytes). Spare bytes 0..7 come first, four beats in which the queue fills; then two
  // bytes a beat go in and out, so a beat never waits for the queue (checked in simulation).
  val fetchSec = Reg(UInt(secBits bits))
  val fetchByte = Reg(UInt(eccByteBits bits))
  val fetchValid = RegInit(False)
  val fetched = Vec(Reg(Bits(8 bits)), 2)
  val codeQ = Vec(Reg(Bits(8 bits)), 4)
  val codeQn = RegInit(U(0, 3 bits))
  val txMoves = UInt(2 bits) // check bytes the beat taken this cycle pops
  txMoves := 0
  val codePush = fetchValid && codeQn <= 2 // room for two whatever this cycle pops: no ready on the push
  val codeKept = codeQn - txMoves.resize(3 bits)
  for (i <- 0 until 4) {
    val moved = Vec((0 until 3).map(m => if (i + m < 4) codeQ(i + m) else B(0xFF, 8 bits)))(txMoves)
    when(U(i, 3 bits) < codeKept) { codeQ(i) := moved }
      .elsewhen(U(i, 3 bits) === codeKept) { codeQ(i) := fetched(0) }
      .elsewhen(U(i, 3 bits) === codeKept + 1) { codeQ(i) := fetched(1) }
  }
  codeQn := codeKept + Mux(codePush, U(2, 3 bits), U(0, 3 bits))
  when(codePush || !fetchValid) {
    fetchValid := False
    when(eccOn && txActive && !txFeat && !txInMain) {
      val (sec1, byte1) = codeNext(fetchSec, fetchByte)
      fetched(0) := eccByte(encCodes(fetchSec), fetchByte)
      fetched(1) := eccByte(encCodes(sec1), byte1)
      val (sec2, byte2) = codeNext(sec1, byte1)
      fetchSec := sec2; fetchByte := byte2; fetchValid := True
    }
  }
  assert(!(io.dout.fire && eccOn && !txFeat && txIsCode0) || codeQn >= Mux(txIsCode1, U(2, 3 bits), U(1, 3 bits)),
    "NAND command layer: a check byte sent before the queue held it")
  val txOut = Bits(16 bits)
  txOut := txPairs.payload
  when(eccOn && !txInMain) {
    txOut(7 downto 0) := Mux(txIsCode0, codeQ(0), B(0xFF, 8 bits))
    txOut(15 downto 8) := Mux(txIsCode1, codeQ(1), B(0xFF, 8 bits))
  }
  val featByte = cur.param.subdivideIn(8 bits)(featIdx.resize(2))
  io.dout.valid := txActive && Mux(txFeat, featIdx < 4, txPairs.valid)
  io.dout.data := Mux(txFeat, B(0, 8 bits) ## featByte, txOut)
  io.dout.two := !txFeat
  txPairs.ready := txActive && !txFeat && io.dout.ready
  when(io.dout.fire) {
    when(txFeat) { featIdx := featIdx + 1 } otherwise {
      txIdx := txIdx + 2
      when(eccOn && txInMain) {
        val nr = bch.remStep(encRem, txPairs.payload(7 downto 0), txPairs.payload(15 downto 8))
        encRem := nr
        when(txIdx(p.sectorShift - 1 downto 1).andR) { encCodes(txSector) := checkVec(nr); encRem := 0 }
      }
      when(eccOn && txIsCode1) { txMoves := 2 }.elsewhen(eccOn && txIsCode0) { txMoves := 1 }
    }
  }

  // ------------------------------------------------------------------ receive path (DQ -> buffer)
  val rxArmed = RegInit(False)
  val rxIdx = Reg(UInt(17 bits))
  val decRem = Reg(Bits(bch.r bits))
  val decRems = Vec(Reg(Bits(bch.r bits)), p.maxSectors) // remainder of each sector's data
  val decStored = Vec(Reg(Bits(bch.eccVecBits bits)), p.maxSectors) // check bytes as read
  val rxCodeSec = Reg(UInt(secBits bits))
  val rxCodeByte = Reg(UInt(eccByteBits bits))
  // As on the transmit side, the byte tests and the check-byte slot (one-hot over sector x byte, for the
  // first and the second byte of a pair) registered from the values after this cycle: a received byte's
  // enables are a register and a gate (on the ECP5: rxIdx -> check-byte test -> rxCodeByte -> the
  // decStored enables was the path after the configuration's).
  val rxIdxNext = rxIdx.getAheadValue()
  val rxCodeSecNext = rxCodeSec.getAheadValue()
  val rxCodeByteNext = rxCodeByte.getAheadValue()
  val rxInMain = RegNext(rxIdxNext < pageBytes)
  val rxIsCode0 = RegNext(isCode0(rxIdxNext))
  val rxMayCode1 = RegNext(isCode1(rxIdxNext))
  val rxAt = RegNext(Vec((0 until 4).map(i => rxIdxNext === i)))
  val (rxCodeSec1, rxCodeByte1) = codeNext(rxCodeSec, rxCodeByte)
  private def slotOh(sec: UInt, byte: UInt): Bits =
    Vec((0 until p.maxSectors).flatMap(s => (0 until bch.eccBytes).map(k => sec === s && byte === k))).asBits // bit s * eccBytes + k
  val rxSlot0 = RegNext(slotOh(rxCodeSecNext, rxCodeByteNext))
  val rxSlot1 = RegNext({ val (s1, b1) = codeNext(rxCodeSecNext, rxCodeByteNext); slotOh(s1, b1) })

  // Buffer write port (one user at a time: receive, DMA in, ECC correction).
  val wrEn = Bool()
  val wrAddr = UInt(bufAddrBits bits)
  val wrData = Bits(32 bits)
  val wrMask = Bits(4 bits)
  wrEn := False; wrAddr.assignDontCare(); wrData.assignDontCare(); wrMask := B"1111"
  buf.write(wrAddr, wrData, wrEn, wrMask)

  // One byte (SDR, NV-DDR non-array data) at any index, or two (NV-DDR page data) at an even index.
  // Pairs are written a word at a time (the first pair of a word waits in rxLow), so at two bytes per
  // cycle the write port is free every other cycle for the back end's corrections; a lone first pair
  // at the end of a transfer is written at SYNC.
  val rxLow = Reg(Bits(16 bits))
  val rxLowValid = RegInit(False)
  val rxWrites = False // the receive path owns the buffer's write port this cycle
  when(io.rx.valid && rxArmed) {
    val two = io.rx.two
    val b0 = io.rx.b0
    val b1 = io.rx.b1
    val rxIsCode1 = two && rxMayCode1
    wrAddr := ba(fb, (rxIdx >> 2).resize(wordBits))
    when(two && !rxIdx(1)) {
      rxLow := io.rx.data; rxLowValid := True
    } otherwise {
      rxWrites := True
      wrEn := True
      wrData := Mux(two, io.rx.data ## rxLow, b0 #* 4)
      wrMask := Mux(two, Mux(rxLowValid, B"1111", B"1100"), UIntToOh(rxIdx(1 downto 0), 4).asBits)
      rxLowValid := False
    }
    for (i <- 0 until 4) {
      when(rxAt(i)) { resultWord(8 * i + 7 downto 8 * i) := b0 }
      if (i > 0) when(two && rxAt(i - 1)) { resultWord(8 * i + 7 downto 8 * i) := b1 }
    }
    rxIdx := rxIdx + Mux(two, U(2, 2 bits), U(1, 2 bits)).resize(17)
    when(eccOn && rxInMain) {
      // Both widths straight from decRem (one XOR matrix deep), `two` only selects.
      val nr = Mux(two, bch.remStep(decRem, b0, b1), bch.remStep(decRem, b0))
      decRem := nr
      val sectorEnd = Mux(two, rxIdx(p.sectorShift - 1 downto 1).andR, rxIdx(p.sectorShift - 1 downto 0).andR)
      when(sectorEnd) { decRems((rxIdx >> p.sectorShift).resize(secBits)) := nr; decRem := 0 }
    }
    when(eccOn && rxIsCode0) {
      for (s <- 0 until p.maxSectors; k <- 0 until bch.eccBytes) {
        val field = decStored(s)(bch.eccVecBits - 1 - 8 * k downto bch.eccVecBits - 8 - 8 * k)
        when(rxSlot0(s * bch.eccBytes + k)) { field := b0 }
        when(rxIsCode1 && rxSlot1(s * bch.eccBytes + k)) { field := b1 }
      }
      when(rxIsCode1) { val (s2, b2) = codeNext(rxCodeSec1, rxCodeByte1); rxCodeSec := s2; rxCodeByte := b2 }
        .otherwise { rxCodeSec := rxCodeSec1; rxCodeByte := rxCodeByte1 }
    }
  }

  // ------------------------------------------------------------------ ECC correction (after DIN)
  // One sector at a time: the decoder gets the remainder of the received codeword (data remainder XOR
  // the unmasked check bits) and returns the error positions; data bits are flipped in the buffer
  // (read, modify, write), check-bit errors only count.
  // Clock stopped while the decoder is idle and not asked (Verilator only, common.SimClockGate): its
  // GF arithmetic would otherwise cost the SoC model most of its cycles/s.
  val decBusy = Bool()
  val dec = common.SimClockGate(decBusy)(new BchDecoder(bch))
  decBusy := dec.io.start.valid || !dec.io.idle
  val fixActive = RegInit(False)
  val fixSec = Reg(UInt(secBits + 1 bits))
  val fixPhase = Reg(UInt(3 bits))
  val fixWord = Reg(UInt(wordBits bits))
  val fixBit = Reg(UInt(5 bits))
  val fixRead = False
  val fixData = buf.readSync(ba(bb, fixWord), fixRead)
  val fixDone = RegInit(False)
  val fs = fixSec.resize(secBits)
  // The received remainders and check bytes of the page in the back end (copied at the hand-over: the
  // receive path is already collecting the next page's).
  val bRems = Vec(Reg(Bits(bch.r bits)), p.maxSectors)
  val bStored = Vec(Reg(Bits(bch.eccVecBits bits)), p.maxSectors)
  dec.io.start.valid := False
  dec.io.start.payload := bRems(fs) ^ (bStored(fs) ^ B(bch.kMask, bch.eccVecBits bits))(bch.eccVecBits - 1 downto bch.eccVecBits - bch.r)
  dec.io.fix.ready := False
  // data bit q = r + dataBits - 1 - position; byte q/8 of the sector, bit 7 - q%8
  val fixQ = (U(bch.r + bch.dataBits - 1, dec.posBits + 1 bits) - dec.io.fix.payload.resize(dec.posBits + 1)).resize(dec.posBits)
  val fixByte = (fs.resize(wordBits + 2) << p.sectorShift).resize(wordBits + 2) + (fixQ >> 3).resize(wordBits + 2)
  when(fixActive) {
    switch(fixPhase) {
      is(0) {
        when(fixSec >= sectors.resize(secBits + 1)) { fixActive := False; fixDone := True }
          .otherwise { dec.io.start.valid := True; fixPhase := 1 }
      }
      is(1) {
        when(dec.io.fix.valid) {
          when(dec.io.fix.payload >= bch.r) {
            fixWord := (fixByte >> 2).resize(wordBits)
            fixBit := (fixByte(1 downto 0) ## ~fixQ(2 downto 0)).asUInt
            fixPhase := 2
          } otherwise { dec.io.fix.ready := True }
        }
        when(dec.io.done) {
          for (i <- 0 until p.maxSectors) when(fs === i) {
            eccSectors(4 * i + 3 downto 4 * i) := Mux(dec.io.uncorrectable, B(0xF, 4 bits), dec.io.count.resize(4).asBits)
          }
          when(dec.io.uncorrectable) { eccUncMap(fs) := True } elsewhen (dec.io.count =/= 0) {
            eccCorrected := eccCorrected + dec.io.count.resize(8); eccCorrMap(fs) := True
          }
          fixSec := fixSec + 1
          fixPhase := 0
        }
      }
      is(2) { fixRead := True; fixPhase := 3 }
      is(3) { fixPhase := 4 }
      is(4) { // the receive path of the next page owns the write port when it writes
        when(!rxWrites) {
          wrEn := True
          wrAddr := ba(bb, fixWord)
          wrData := fixData ^ (B(1, 32 bits) |<< fixBit)
          dec.io.fix.ready := True
          fixPhase := 1
        }
      }
      default { fixPhase := 0 }
    }
  }

  // ------------------------------------------------------------------ DMA (AXI4 master, 32-bit)
  val dmaActive = RegInit(False)
  val dmaToBuf = Reg(Bool())
  val dmaAddr = Reg(UInt(32 bits))
  val dmaWordsLeft = Reg(UInt(16 bits))
  val dmaPtr = Reg(UInt(wordBits bits))
  val dmaPhase = Reg(UInt(2 bits))
  val dmaBeats = Reg(UInt(5 bits))
  val dmaIssued = Reg(UInt(5 bits))
  val dmaSent = Reg(UInt(5 bits))
  val dmaErr = Reg(Bool())
  val dmaDone = RegInit(False)
  val dmaBank = Reg(Bool())
  // Write bursts do not wait for their response: the next AW goes out after the last W beat and the B
  // responses are counted (at most maxWriteBursts outstanding); the DMA ends when all have arrived.
  val maxWriteBursts = 4
  val bPending = RegInit(U(0, 3 bits))
  // A page read's DMA out runs beside its correction: a burst goes out once every word in it lies in a
  // sector the decoder has finished (dmaGated), so a page with errors costs max(decode, DMA), not the sum.
  val dmaGated = RegInit(False)
  // The burst's AR/AW comes from registers (dmaReq, dmaAddr, dmaLen): phase 0 decides and loads them, phase 2
  // holds them until the ready. No path from the crossbar's ready reaches the address arithmetic, and the
  // arbiter's valid does not depend on it (the whole-SoC route's critical path ran through it, 78.8 MHz).
  val dmaReq = RegInit(False)
  val dmaLen = Reg(UInt(4 bits))
  // The next burst is sized a phase ahead so phase 0's decision starts from registers: phase 1 (the
  // burst's beats, address and count stable) computes the next address and count, phase 3 takes them
  // and sizes the burst (beatsNext, up to the 64-byte boundary) and its end in the buffer (burstEnd).
  val addrNext = Reg(UInt(32 bits))
  val leftNext = Reg(UInt(16 bits))
  val beatsNext = Reg(UInt(5 bits))
  val burstEnd = Reg(UInt(wordBits + 1 bits))
  io.dmaBusy := dmaActive
  val toBoundary = U(16, 5 bits) - addrNext(5 downto 2).resize(5)
  val nextBeats = Mux(leftNext < toBoundary, leftNext.resize(5), toBoundary)
  val axi = io.axi
  axi.ar.valid := dmaReq && dmaToBuf
  axi.ar.addr := dmaAddr
  axi.ar.id := 0
  axi.ar.len := dmaLen.resize(8)
  axi.ar.size := U(2, 3 bits)
  axi.ar.setBurstINCR()
  axi.ar.cache := B"0011"
  axi.ar.prot := B"010"
  axi.aw.valid := dmaReq && !dmaToBuf
  axi.aw.addr := dmaAddr
  axi.aw.id := 0
  axi.aw.len := dmaLen.resize(8)
  axi.aw.size := U(2, 3 bits)
  axi.aw.setBurstINCR()
  axi.aw.cache := B"0011"
  axi.aw.prot := B"010"
  axi.r.ready := False
  axi.b.ready := bPending =/= 0
  when(axi.b.fire && !axi.b.isOKAY()) { dmaErr := True }
  bPending := bPending + U(axi.aw.fire).resize(3) - U(axi.b.fire).resize(3)
  val dmaAddrStream = Stream(UInt(bufAddrBits bits))
  dmaAddrStream.valid := dmaActive && !dmaToBuf && dmaPhase === 1 && dmaIssued =/= dmaBeats
  dmaAddrStream.payload := ba(dmaBank, dmaPtr)
  when(dmaAddrStream.fire) { dmaPtr := dmaPtr + 1; dmaIssued := dmaIssued + 1 }
  val dmaWords = buf.streamReadSync(dmaAddrStream)
  axi.w.valid := dmaWords.valid
  axi.w.data := dmaWords.payload
  axi.w.strb := B"1111"
  axi.w.last := dmaSent === dmaBeats - 1
  dmaWords.ready := axi.w.ready
  when(dmaActive) {
    switch(dmaPhase) {
      is(0) {
        when(dmaWordsLeft === 0 || dmaErr) {
          when(bPending === 0) { dmaActive := False; dmaDone := True }
        } elsewhen ((dmaToBuf || bPending < maxWriteBursts) && (!dmaGated || fixDone ||
            burstEnd <= (fixSec.resize(wordBits + 1) << (p.sectorShift - 2)).resize(wordBits + 1))) {
          dmaReq := True; dmaBeats := beatsNext; dmaLen := (beatsNext - 1).resize(4); dmaPhase := 2
        }
      }
      is(2) {
        when(Mux(dmaToBuf, axi.ar.ready, axi.aw.ready)) {
          dmaReq := False; dmaIssued := 0; dmaSent := 0; dmaPhase := 1
        }
      }
      is(1) {
        addrNext := dmaAddr + (dmaBeats.resize(32) |<< 2)
        leftNext := dmaWordsLeft - dmaBeats.resize(16)
        when(dmaToBuf) {
          axi.r.ready := True
          when(axi.r.valid) {
            wrEn := True; wrAddr := ba(dmaBank, dmaPtr); wrData := axi.r.data
            dmaPtr := dmaPtr + 1
            when(!axi.r.isOKAY()) { dmaErr := True }
            when(axi.r.last) { dmaPhase := 3 }
          }
        } otherwise {
          when(axi.w.fire) {
            dmaSent := dmaSent + 1
            when(axi.w.last) { dmaPhase := 3 }
          }
        }
      }
      is(3) {
        dmaAddr := addrNext; dmaWordsLeft := leftNext
        beatsNext := nextBeats; burstEnd := dmaPtr.resize(wordBits + 1) + nextBeats.resize(wordBits + 1)
        dmaPhase := 0
      }
    }
  }

  // ------------------------------------------------------------------ step sequencer
  // A timeout pulse can arrive while the sequencer waits; remember it until the next command.
  val timeoutSeen = RegInit(False)
  when(io.timeout) { timeoutSeen := True }
  when(io.cmd.fire) { timeoutSeen := False }
  val stepArmed = RegInit(False) // local step started, waiting for its completion
  def next(): Unit = { step := step + 1; stepArmed := False; stepMoves := True }
  def startDma(toBuf: Bool, addr: UInt, bytes: UInt, bank: Bool, gated: Bool = False): Unit = {
    dmaActive := True; dmaDone := False; dmaErr := False; dmaGated := gated
    dmaToBuf := toBuf; dmaPtr := 0; dmaPhase := 3; dmaBank := bank // phase 3 sizes the first burst
    addrNext := addr; leftNext := (bytes >> 2).resize(16)
  }
  val backIdle = bState === BState.IDLE
  switch(state) {
    is(State.CHECK) {
      when(badCmd) { err := NandErr.BAD_CMD; state := State.COMPLETE }
        .elsewhen(badDma) { err := NandErr.DMA_BOUNDS; state := State.COMPLETE }
        .elsewhen(!frontDma || backIdle) { state := State.RUN } // the DMA is the back end's until it is done
    }
    is(State.RUN) {
      when(isUop) {
        io.uop.valid := True
        when(io.uop.ready) {
          next()
          when(sk === DOUT) {
            txActive := True; txFeat := op === NandOp.SET_FEATURES; txAddr := 0; featIdx := 0
            txWordsLeft := (sc >> 2).resize(16); txIdx := 0; encRem := 0
            fetchSec := 0; fetchByte := 0; fetchValid := False; codeQn := 0
          }
          when(sk === DIN) { rxArmed := True; rxIdx := 0; decRem := 0; rxCodeSec := 0; rxCodeByte := 0; rxLowValid := False }
        }
      }
      switch(sk) {
        is(SYNC) {
          when(io.timingIdle && !io.rxPending && rxLowValid) { // the last pair of the transfer
            rxWrites := True
            wrEn := True; wrAddr := ba(fb, (rxIdx >> 2).resize(wordBits)); wrData := rxLow ## rxLow; wrMask := B"0011"
            rxLowValid := False
          }
          when(io.timingIdle && !io.rxPending) {
            rxArmed := False
            txActive := False
            when(io.timeout || timeoutSeen) { err := NandErr.TIMEOUT; state := State.ABORT } otherwise { next() }
          }
        }
        is(DMA_IN, DMA_OUT) { // commands other than page reads (those end at ECC_FIX)
          when(!usesDma) { next() }
            .elsewhen(!stepArmed) { stepArmed := True; startDma(sk === DMA_IN, cur.dmaAddr, dmaBytes, fb) }
            .elsewhen(dmaDone) {
              when(dmaErr) { err := NandErr.DMA_BUS; state := State.ABORT } otherwise { next() }
            }
        }
        is(ECC_FIX) { // page in: hand it to the back end (correction, DMA out, completion) and go on
          when(backIdle && !holdValid) {
            bCmd := cur; bErr := err; bResult := resultWord
            bRems := decRems; bStored := decStored
            bb := fb; fb := !fb
            eccCorrected := 0; eccCorrMap := 0; eccUncMap := 0; eccSectors := 0
            bArmed := False
            bState := BState.FIX
            state := State.IDLE
          }
        }
        is(SPLIT_END) {
          when(cur.split) { state := State.ABORT } otherwise { next() }
        }
        is(DONE) {
          // FAIL (bit 0), or FAILC (bit 1): the page a cache program handed over before failed
          when((isProgram || isOp(NandOp.ERASE, NandOp.WAIT_STATUS)) && resultWord(1 downto 0) =/= 0) { err := NandErr.NAND_FAIL }
          state := State.COMPLETE
        }
        default {}
      }
    }
    is(State.ABORT) { // release the target (also the normal end of a split command)
      io.uop.valid := True
      io.uop.kind := UopKind.CE_OFF
      when(io.uop.ready) { state := State.ABORT_WAIT }
    }
    is(State.ABORT_WAIT) {
      when(io.timingIdle && !io.rxPending) { rxArmed := False; txActive := False; state := State.COMPLETE }
    }
    is(State.COMPLETE) {
      when(!holdValid) {
        holdValid := True
        hold.opcode := op; hold.err := err; hold.target := cur.target; hold.tag := cur.tag
        hold.status := resultWord(7 downto 0); hold.data := resultWord
        hold.eccCorrected := 0; hold.eccCorrMap := 0; hold.eccUncMap := 0; hold.eccSectors := 0
        state := State.IDLE
      }
    }
    default {}
  }

  // ------------------------------------------------------------------ back end
  val bEcc = bCmd.ecc
  val bDmaBytes = Mux(bEcc, pageBytes.resize(17), ((bCmd.len.resize(17) + 3) & U(0x1FFFC, 17 bits)))
  switch(bState) {
    is(BState.FIX) { // correction and DMA out together (the DMA trails the decoder sector by sector)
      when(!bArmed) {
        bArmed := True
        when(bEcc) { fixActive := True; fixDone := False; fixSec := 0; fixPhase := 0 }
        when(bCmd.dma) { startDma(False, bCmd.dmaAddr, bDmaBytes, bb, gated = bEcc) }
      } elsewhen ((!bEcc || fixDone) && (!bCmd.dma || dmaDone)) {
        when(bEcc && eccUncMap =/= 0) { bErr := NandErr.ECC_UNCORRECTABLE }
        when(bCmd.dma && dmaErr) { bErr := NandErr.DMA_BUS }
        bState := BState.COMP
      }
    }
    is(BState.COMP) { when(io.comp.ready) { bState := BState.IDLE } }
    default {}
  }

  // Completions in command order: the back end's page is older than anything held.
  val backComp = NandCompletion(p)
  backComp.opcode := bCmd.opcode; backComp.err := bErr; backComp.target := bCmd.target; backComp.tag := bCmd.tag
  backComp.status := bResult(7 downto 0); backComp.data := bResult
  backComp.eccCorrected := eccCorrected; backComp.eccCorrMap := eccCorrMap; backComp.eccUncMap := eccUncMap
  backComp.eccSectors := eccSectors
  io.comp.valid := bState === BState.COMP || (holdValid && backIdle)
  io.comp.payload := Mux(bState === BState.COMP, backComp, hold)
  when(io.comp.fire && bState =/= BState.COMP) { holdValid := False }
}
