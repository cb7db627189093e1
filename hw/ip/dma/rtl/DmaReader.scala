package dma

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** DDR -> stream channel. Reads LEN bytes from ADDR with 256-bit INCR bursts (<= 16 beats, never
  * across a 4 KiB boundary) and delivers them as `w`-bit beats, little-endian, `last` on the final
  * beat; bytes of the final beat past LEN are zero.
  *
  * Two segments (LEN2 != 0): LEN bytes from ADDR, then LEN2 bytes from ADDR2, as one stream (one `last`),
  * e.g. a sub-compaction's re-encoded head in scratch and the untouched tail of the run in place. The
  * bus side always reads whole aligned 256-bit words; the serializer starts a segment at the stream beat
  * its address falls on, so each address needs only the stream beat's alignment (w/8 bytes: one KB16
  * entry at w = 128), and LEN must be whole stream beats (the second segment starts a fresh beat). With
  * LEN2 = 0 the channel is the one-segment channel it always was (ADDR 32-byte aligned, any LEN).
  *
  * The R channel is shared with the other reader through Axi4ReadOnlyArbiter, which stalls the whole
  * channel when the addressed reader is not ready. So a burst is only requested when the data FIFO has
  * room for all of it (FIFO occupancy + beats in flight + burst <= depth): R is always accepted at once
  * and one slow consumer can never block the other reader (which would deadlock the merge).
  *
  * @param w         stream width in bits (32, 64 or 128)
  * @param fifoDepth data FIFO in 256-bit words; bounds the bytes in flight, hence the latency hidden:
  *                  at w = 128 the reader drains 0.5 word/cycle, so 64 words cover ~100 cycles.
  */
case class DmaReader(w: Int, fifoDepth: Int = 64) extends Component {
  require(w == 32 || w == 64 || w == 128, s"unsupported stream width $w")
  require(fifoDepth >= 2 * DmaBus.maxBurst && fifoDepth <= 128)
  val axiConfig = DmaBus.channelAxiConfig
  val ratio  = DmaBus.dataWidth / w
  val wBytes = w / 8

  val io = new Bundle {
    val ctrl = slave(DmaChannelIo())
    val axi  = master(Axi4ReadOnly(axiConfig))
    val out  = master(Stream(Fragment(Bits(w bits))))
  }

  val st = new DmaChannelState(io.ctrl)
  import st._

  val len      = Reg(UInt(32 bits)) init 0 // bytes of both segments
  val bytes    = Reg(UInt(32 bits)) init 0
  val stopping = RegInit(False) // abort or AXI error: no new bursts, data dropped, wait for the bus
  val axiErr   = RegInit(False)
  io.ctrl.bytes := bytes

  val fifo = StreamFifo(Bits(DmaBus.dataWidth bits), fifoDepth)

  // ---------------- read requests ----------------
  val cmd = new Area {
    val nextAddr  = Reg(UInt(32 bits)) init 0
    val beatsLeft = Reg(UInt(28 bits)) init 0   // 256-bit beats not yet requested
    val inFlight  = Reg(UInt(9 bits)) init 0    // beats requested and not yet received
    val arValid   = RegInit(False)
    val arAddr    = Reg(UInt(32 bits)) init 0
    val arLen     = Reg(UInt(8 bits)) init 0
    val pend      = RegInit(False)             // the second segment is still to be requested
    val pendAddr  = Reg(UInt(32 bits)) init 0
    val pendWords = Reg(UInt(28 bits)) init 0

    /** The next burst's beats from a segment's next word and its words left: up to maxBurst, not past a page. */
    def burstFor(addr: UInt, left: UInt): UInt =
      umin((left >= DmaBus.maxBurst) ? U(DmaBus.maxBurst, 8 bits) | left(7 downto 0), beatsToPage(addr))
    // burstFor(nextAddr, beatsLeft) as a register, a clock behind them: after an issue they change, and
    // AR's valid holds the next issue back at least two clocks, by when it has caught up; a start and
    // the switch to the second segment load it with the value for their own addresses. So the compares
    // are never between the registers and the issue (the whole SoC's critical path at 4d50bf5, seed 2).
    val burst     = Reg(UInt(8 bits)) init 0
    val pendBurst = Reg(UInt(8 bits)) init 0 // burstFor(pendAddr, pendWords), set at the start
    burst := burstFor(nextAddr, beatsLeft)
    val room   = (fifo.io.occupancy.resize(9) + inFlight + burst.resize(9)) <= fifoDepth
    val issue  = busy && !stopping && !arValid && beatsLeft =/= 0 && room

    when(issue) {
      arValid   := True
      arAddr    := nextAddr
      arLen     := (burst - 1).resized
      nextAddr  := nextAddr + (burst.resize(32) |<< 5)
      beatsLeft := beatsLeft - burst.resized
    }
    when(io.axi.ar.fire) { arValid := False }
    // The first segment fully requested: the second one's words follow (one idle cycle between them).
    when(busy && !stopping && beatsLeft === 0 && pend) {
      nextAddr  := pendAddr
      beatsLeft := pendWords
      burst     := pendBurst
      pend      := False
    }

    io.axi.ar.valid := arValid
    io.axi.ar.addr  := arAddr
    io.axi.ar.id    := 0
    io.axi.ar.len   := arLen
    io.axi.ar.size  := U(log2Up(DmaBus.bytesPerBeat), 3 bits)
    io.axi.ar.setBurstINCR()
    io.axi.ar.setCache(B"0011") // normal, bufferable, modifiable
    io.axi.ar.setProt(B"000")

    val rFire = io.axi.r.fire
    inFlight := inFlight + (issue ? burst.resize(9) | U(0, 9 bits)) - (rFire ? U(1, 9 bits) | U(0, 9 bits))
  }

  // ---------------- read data ----------------
  val rspBad = io.axi.r.valid && !io.axi.r.isOKAY()
  fifo.io.push.valid   := io.axi.r.valid && busy && !stopping && !rspBad
  fifo.io.push.payload := io.axi.r.data
  // Space was reserved before the request (`room`), so the FIFO takes every beat that comes: R is
  // always ready, and its ready depends on nothing (on the board it went from R's valid and response
  // through this check back into the DDR port's register slice, the whole SoC's critical path at
  // 4d50bf5, seed 1). A beat after an abort or an error, or a bad response, is dropped.
  io.axi.r.ready := True
  assert(!fifo.io.push.valid || fifo.io.push.ready, "DMA reader: a read beat without the room reserved for it")
  when(io.axi.r.fire && rspBad && busy) { axiErr := True; stopping := True }

  // ---------------- 256 -> w serializer ----------------
  val ser = new Area {
    val outLeft  = Reg(UInt(31 bits)) init 0 // w-bit beats still to deliver
    val sub      = Reg(UInt(log2Up(ratio) bits)) init 0
    val lastMask = Reg(Bits(w bits)) init 0  // byte mask of the final beat (bytes past LEN are zero)
    val pend      = RegInit(False)            // the second segment follows this one
    val pendBeats = Reg(UInt(31 bits)) init 0
    val pendSub   = Reg(UInt(log2Up(ratio) bits)) init 0 // its first beat's lane in its first word

    // outLeft === 1, === 2 and =/= 0 as registers moving with outLeft (a beat takes one off, the second
    // segment loads pendBeats, a start its own count), so no compare of the 31-bit count lies between a
    // beat and the FIFO's pop (the whole SoC's critical path at 561b9b3, seed 2: outLeft -> segEnd ->
    // pop.ready -> the FIFO's read pointer)
    val one  = RegInit(False)
    val two  = RegInit(False)
    val any  = RegInit(False)
    def counts(n: UInt): Unit = { one := n === 1; two := n === 2; any := n =/= 0 }

    val pop   = fifo.io.pop
    val lanes = pop.payload.subdivideIn(ratio slices)
    val segEnd = one
    val isLast = segEnd && !pend
    val beat  = Stream(Fragment(Bits(w bits)))
    beat.valid    := pop.valid && busy && !stopping && any
    beat.fragment := lanes(sub) & (isLast ? lastMask | B(w bits, default -> True))
    beat.last     := isLast
    val wordDone = sub === ratio - 1 || segEnd
    pop.ready := beat.fire && wordDone
    when(beat.fire) {
      when(segEnd && pend) {
        outLeft := pendBeats
        counts(pendBeats)
        sub     := pendSub
        pend    := False
      } otherwise {
        outLeft := outLeft - 1
        one := two
        two := outLeft === 3
        any := !one
        sub := wordDone ? U(0, sub.getWidth bits) | sub + 1
      }
    }
    val pipeFlush = Bool()
    // Full register slice (s2m then m2s): valid and payload of io.out leave registers, and io.out.ready
    // ends in registers. The m2s stage is last so `valid` is a plain register (no inverted flag that
    // could read as valid before the first reset edge).
    io.out << beat.s2mPipe(pipeFlush).m2sPipe(flush = pipeFlush)
  }

  fifo.io.flush  := stopping || !busy
  ser.pipeFlush  := stopping || !busy

  // ---------------- control ----------------
  when(io.out.fire) { bytes := io.out.last ? len | bytes + wBytes }

  val lw      = log2Up(wBytes)
  val two     = io.ctrl.len2 =/= 0
  val onlyB   = two && io.ctrl.len === 0  // an empty first segment: the second one alone
  val aAddr   = onlyB ? io.ctrl.addr2 | io.ctrl.addr
  val aLen    = onlyB ? io.ctrl.len2 | io.ctrl.len
  val lastLen = two ? io.ctrl.len2 | io.ctrl.len
  // words to read from a segment's aligned start: its offset in the first word plus its bytes
  def words(addr: UInt, n: UInt): UInt =
    ((addr(4 downto 0).resize(34) + n.resize(34) + (DmaBus.bytesPerBeat - 1)) >> 5).resize(28)
  // each segment's aligned start and its words: the first segment read (A) and the pending second (B)
  val aStart  = aAddr(31 downto 5) @@ U(0, 5 bits)
  val aWords  = words(aAddr, aLen)
  val bStart  = io.ctrl.addr2(31 downto 5) @@ U(0, 5 bits)
  val bWords  = words(io.ctrl.addr2, io.ctrl.len2)
  // A start's segments (aligned starts and word counts) from the control registers, a clock behind them: the
  // registers are written over APB, a SETUP clock before every ACCESS, so none changes in the clock before a start
  // and these hold the start's values then (a simulation check stops the run otherwise). Each first burst size is
  // made from these, so the segment select and the 34-bit word count are a clock before the burst compare and the
  // page limit, not in the clock of `burst` (the whole SoC's critical path at 84edce0, seed 2, and at 0329f78,
  // seed 1: `len2` -> the segment select -> the word count -> the burst compare).
  val aStartHeld     = RegNext(aStart) init (0)
  val aWordsHeld     = RegNext(aWords) init (0)
  val bStartHeld     = RegNext(bStart) init (0)
  val bWordsHeld     = RegNext(bWords) init (0)
  val startBurst     = cmd.burstFor(aStartHeld, aWordsHeld)
  val startPendBurst = cmd.burstFor(bStartHeld, bWordsHeld)

  when(io.ctrl.start && !busy) {
    assert(aStartHeld === aStart && aWordsHeld === aWords && bStartHeld === bStart && bWordsHeld === bWords,
      "DMA reader: a start in the clock after its control registers changed")
    len := io.ctrl.len + io.ctrl.len2
    bytes := 0
    axiErr := False
    stopping := False
    cmd.nextAddr  := aStartHeld
    cmd.beatsLeft := aWordsHeld
    cmd.pend      := two && !onlyB
    cmd.pendAddr  := bStartHeld
    cmd.pendWords := bWordsHeld
    cmd.burst     := startBurst
    cmd.pendBurst := startPendBurst
    val firstBeats = ((aLen.resize(33) + (wBytes - 1)) >> lw).resize(31)
    ser.outLeft   := firstBeats
    ser.counts(firstBeats)
    ser.sub       := aAddr(4 downto lw)
    ser.pend      := two && !onlyB
    ser.pendBeats := ((io.ctrl.len2.resize(33) + (wBytes - 1)) >> lw).resized
    ser.pendSub   := io.ctrl.addr2(4 downto lw)
    val lenMod = lastLen(lw - 1 downto 0)
    for (i <- 0 until wBytes) {
      val keep = if (i == wBytes - 1) lenMod === 0 else lenMod === 0 || lenMod > i
      ser.lastMask(i * 8, 8 bits) := keep ? B"xFF" | B"x00"
    }
    val misaligned = two ? (io.ctrl.addr(lw - 1 downto 0) =/= 0 || io.ctrl.addr2(lw - 1 downto 0) =/= 0 ||
                            io.ctrl.len(lw - 1 downto 0) =/= 0) | (io.ctrl.addr(4 downto 0) =/= 0)
    when(misaligned) {
      done := False; aborted := False
      finishError(DmaBus.Err.MISALIGNED)
    } elsewhen (!two && io.ctrl.len === 0) {
      error := False; aborted := False; code := 0
      finishOk()
    } otherwise {
      begin()
    }
  }

  when(busy) {
    when(io.out.fire && io.out.last) {
      finishOk()
    } elsewhen (stopping) {
      when(cmd.inFlight === 0 && !cmd.arValid) {
        stopping := False
        when(axiErr) { finishError(DmaBus.Err.AXI) } otherwise { finishAbort() }
      }
    } elsewhen (io.ctrl.abort) {
      stopping := True
    }
  }
}
