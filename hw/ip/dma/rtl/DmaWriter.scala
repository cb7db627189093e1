package dma

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Stream -> DDR channel. Packs `w`-bit beats (little-endian) into 256-bit words and writes them from
  * ADDR on with INCR bursts (<= 16 beats, never across a 4 KiB boundary); a partial final word gets
  * WSTRB for its filled lanes only.
  *
  * The channel ends when a beat with `last` was taken, or when `flush` (the IP is done or stopped on
  * error) is high while no beat is offered; then it waits for every B response. `flush` only counts
  * once it has been seen low since START: the IP's DONE of the previous job stays high until its next
  * START, and firmware starts the writers before the IP, so a level seen at START is stale. The IP's
  * START pulse (`ipStart`) also arms it: a START that fails at once (BAD_GROUP) goes DONE -> ERROR
  * with no low cycle in between.
  *
  * `maxBurst` (default 16 beats, 512 B): longer bursts (up to a 4 KiB page) keep the DDR bus in write
  * mode longer, with fewer read/write turnarounds when several units share it (docs/scaling.md).
  *
  * `groupLevel` > 0 (write grouping, several units on one DDR bus): a full burst waits until the FIFO
  * holds `groupLevel` words without an AW (`urgent`, which the SoC ORs over every writer) or until
  * `groupGo` says another writer is urgent; then every writer with a full burst issues it at once, so
  * the bus takes the units' write bursts in one write period instead of one turnaround pair each.
  * The end of the input (last or flush) still issues whatever is left at once.
  *
  * Hard bound: it never writes at or past ADDR+LEN. A beat that does not fit whole is accepted and
  * dropped (so the source never stalls), as is everything after it, and the channel ends with ERROR 2.
  *
  * The W channel is shared with the other writer through Axi4WriteOnlyArbiter, which routes W to the
  * channel whose AW won until its burst's last beat. An AW is therefore only issued when all the data
  * of the burst is already in the FIFO: a writer can never hold W while waiting for its source (the IP
  * may be waiting for the other writer to drain its other output).
  */
case class DmaWriter(w: Int, fifoDepth: Int = 32, maxBurst: Int = DmaBus.maxBurst, groupLevel: Int = 0)
    extends Component {
  require(w == 32 || w == 64 || w == 128, s"unsupported stream width $w")
  require(maxBurst >= 1 && maxBurst <= DmaBus.beatsPerPage, s"maxBurst $maxBurst: 1..${DmaBus.beatsPerPage} beats")
  require(fifoDepth >= maxBurst)
  // urgent must imply a full burst (maxBurst words) and be reachable (a full FIFO is urgent)
  require(groupLevel == 0 || (groupLevel >= maxBurst && groupLevel <= fifoDepth),
    s"groupLevel $groupLevel: 0 (no grouping) or $maxBurst..$fifoDepth words")
  val axiConfig = DmaBus.channelAxiConfig
  val ratio  = DmaBus.dataWidth / w
  val wBytes = w / 8

  val io = new Bundle {
    val ctrl  = slave(DmaChannelIo())
    val axi   = master(Axi4WriteOnly(axiConfig))
    val in    = slave(Stream(Fragment(Bits(w bits))))
    val flush = spinal.core.in(Bool())
    val ipStart = spinal.core.in(Bool()) // the IP accepted a START: any flush level after it is current
    // write grouping (groupLevel > 0): this writer must issue now / some writer of the SoC must
    val urgent  = (groupLevel > 0) generate spinal.core.out(Bool())
    val groupGo = (groupLevel > 0) generate spinal.core.in(Bool())
  }

  val st = new DmaChannelState(io.ctrl)
  import st._

  val len       = Reg(UInt(32 bits)) init 0
  val room      = Reg(UInt(32 bits)) init 0 // bytes that may still be written
  val bytes     = Reg(UInt(32 bits)) init 0 // bytes accepted for writing
  val inputDone = RegInit(False)            // last beat taken or flushed: no more words
  val overflow  = RegInit(False)
  val axiErr    = RegInit(False)
  val stopping  = RegInit(False)            // abort: finish the bursts already issued, then stop
  val armed     = RegInit(False)            // flush was low since START: a high flush is current
  when(busy && (!io.flush || io.ipStart)) { armed := True }
  val flush = io.flush && armed
  io.ctrl.bytes := bytes

  case class Word() extends Bundle {
    val data = Bits(DmaBus.dataWidth bits)
    val strb = Bits(DmaBus.bytesPerBeat bits)
  }
  val fifo = StreamFifo(Word(), fifoDepth)

  // Register slice on the input port: io.in.ready comes from registers only, so the packer's ready
  // logic (which looks at the beat's `last`) never reaches back into the IP combinationally. The slice
  // takes beats only while the channel runs and not past a `last` (as the packer without a slice did),
  // and is emptied when the channel ends, so no beat of one transfer is left for the next.
  val lastIn = RegInit(False)
  when(io.in.fire && io.in.last) { lastIn := True }
  when(!busy) { lastIn := False }
  val in = io.in.continueWhen(busy && !stopping && !lastIn).s2mPipe(!busy).m2sPipe(flush = !busy)

  // ---------------- w -> 256 packer ----------------
  val pack = new Area {
    val lanes = Vec(Reg(Bits(w bits)), ratio)
    val sub   = Reg(UInt(log2Up(ratio) bits)) init 0

    // room >= one beat and room >= two beats, as registers: the compares of `room` are made a beat ahead
    // (for room and for room - wBytes, the fire picking one), so no carry chain of `room` lies between
    // a beat's arrival and its ready (the SoC's critical path at 272ffb4: room -> subtract -> ready -> room)
    val fits      = RegInit(False)
    val fitsTwo   = RegInit(False)
    val accepting = busy && !inputDone && !stopping
    val drop      = !fits || axiErr
    // close the word when full, at `last`, or when the next beat could not fit anyway (room - wBytes < wBytes)
    val endWord   = sub === ratio - 1 || in.last || !fitsTwo
    val pushBeat  = accepting && in.valid && !drop && endWord
    val pushFlush = accepting && !in.valid && flush && sub =/= 0 && !axiErr

    for (i <- 0 until ratio) {
      fifo.io.push.data(i * w, w bits) := (sub === i && in.valid) ? in.fragment | lanes(i)
      // on a beat lanes 0..sub are filled, on a flush lanes 0..sub-1
      val filled =
        if (i == 0) True                                     // a flush push has sub > 0
        else if (i == ratio - 1) !pushFlush && sub === i
        else Mux(pushFlush, U(i) < sub, U(i) <= sub)
      fifo.io.push.strb(i * wBytes, wBytes bits) := filled ? B(wBytes bits, default -> True) | B(0, wBytes bits)
    }
    fifo.io.push.valid := pushBeat || pushFlush

    in.ready := accepting && (drop || !endWord || fifo.io.push.ready)
    when(in.fire) {
      when(drop) {
        when(!fits) { overflow := True }
      } otherwise {
        lanes(sub) := in.fragment
        sub   := endWord ? U(0, sub.getWidth bits) | sub + 1
        room  := room - wBytes
        fits    := fitsTwo
        fitsTwo := room >= 3 * wBytes
        bytes := bytes + wBytes
      }
      when(in.last) { inputDone := True }
    }
    when(accepting && !in.valid && flush && (sub === 0 || axiErr || fifo.io.push.ready)) {
      inputDone := True
      sub := 0
    }
  }

  // ---------------- write requests ----------------
  val lenFifo = StreamFifo(UInt(8 bits), 8) // AXI len of each issued burst, for WLAST

  val cmd = new Area {
    val nextAddr    = Reg(UInt(32 bits)) init 0
    val avail       = Reg(UInt(log2Up(fifoDepth + 1) + 1 bits)) init 0 // words in FIFO without an AW yet
    val outstanding = Reg(UInt(6 bits)) init 0                          // bursts waiting for B
    val awValid     = RegInit(False)
    val awAddr      = Reg(UInt(32 bits)) init 0
    val awLen       = Reg(UInt(8 bits)) init 0

    // A full burst from nextAddr (up to maxBurst, not past a page) as a register, a clock behind nextAddr:
    // nextAddr moves only at an issue, and AW's valid holds the next issue back two clocks; a start loads
    // it for the channel's address. So the page compare is not between nextAddr and the issue.
    val full    = Reg(UInt(8 bits)) init 0
    full := umin(U(maxBurst, 8 bits), beatsToPage(nextAddr))
    val enough  = avail >= full.resize(avail.getWidth)
    val burst   = enough ? full | avail.resize(8)
    val release = if (groupLevel > 0) {
      val urgent = avail >= U(groupLevel, avail.getWidth bits)
      io.urgent := busy && urgent
      urgent || io.groupGo
    } else True
    val issue   = busy && !stopping && !axiErr && !awValid && avail =/= 0 && ((enough && release) || inputDone) &&
                  lenFifo.io.push.ready && outstanding =/= outstanding.maxValue

    lenFifo.io.push.valid   := issue
    lenFifo.io.push.payload := (burst - 1).resized
    when(issue) {
      awValid  := True
      awAddr   := nextAddr
      awLen    := (burst - 1).resized
      nextAddr := nextAddr + (burst.resize(32) |<< 5)
    }
    when(io.axi.aw.fire) { awValid := False }
    avail := avail + (fifo.io.push.fire ? U(1, avail.getWidth bits) | U(0, avail.getWidth bits)) -
             (issue ? burst.resize(avail.getWidth) | U(0, avail.getWidth bits))
    outstanding := outstanding + (issue ? U(1, 6 bits) | U(0, 6 bits)) - (io.axi.b.fire ? U(1, 6 bits) | U(0, 6 bits))

    io.axi.aw.valid := awValid
    io.axi.aw.addr  := awAddr
    io.axi.aw.id    := 0
    io.axi.aw.len   := awLen
    io.axi.aw.size  := U(log2Up(DmaBus.bytesPerBeat), 3 bits)
    io.axi.aw.setBurstINCR()
    io.axi.aw.setCache(B"0011")
    io.axi.aw.setProt(B"000")
  }

  // ---------------- write data / responses ----------------
  val data = new Area {
    val beat  = Reg(UInt(8 bits)) init 0
    val wLast = beat === lenFifo.io.pop.payload
    io.axi.w.valid := fifo.io.pop.valid && lenFifo.io.pop.valid
    io.axi.w.data  := fifo.io.pop.data
    io.axi.w.strb  := fifo.io.pop.strb
    io.axi.w.last  := wLast
    fifo.io.pop.ready    := io.axi.w.ready && lenFifo.io.pop.valid
    lenFifo.io.pop.ready := io.axi.w.fire && wLast
    when(io.axi.w.fire) { beat := wLast ? U(0, 8 bits) | beat + 1 }

    io.axi.b.ready := True
    when(io.axi.b.fire && !io.axi.b.isOKAY() && busy) { axiErr := True }
  }

  fifo.io.flush    := !busy
  lenFifo.io.flush := !busy

  // ---------------- control ----------------
  val busIdle = !cmd.awValid && !lenFifo.io.pop.valid && cmd.outstanding === 0

  when(io.ctrl.start && !busy) {
    len := io.ctrl.len
    room := io.ctrl.len
    pack.fits    := io.ctrl.len >= wBytes
    pack.fitsTwo := io.ctrl.len >= 2 * wBytes
    bytes := 0
    inputDone := False
    overflow := False
    axiErr := False
    stopping := False
    armed := False
    pack.sub := 0
    cmd.nextAddr := io.ctrl.addr
    cmd.full := umin(U(maxBurst, 8 bits), beatsToPage(io.ctrl.addr))
    cmd.avail := 0
    data.beat := 0
    when(io.ctrl.addr(4 downto 0) =/= 0) {
      done := False; aborted := False
      finishError(DmaBus.Err.MISALIGNED)
    } otherwise {
      begin()
    }
  }

  when(busy) {
    when(stopping) {
      when(busIdle) { stopping := False; finishAbort() }
    } elsewhen (inputDone && busIdle && (cmd.avail === 0 || axiErr)) {
      when(axiErr) {
        finishError(DmaBus.Err.AXI)
      } elsewhen (overflow) {
        finishError(DmaBus.Err.OVERFLOW)
      } otherwise {
        finishOk()
      }
    } elsewhen (io.ctrl.abort) {
      stopping := True
    }
  }
}
