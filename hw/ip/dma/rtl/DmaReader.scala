package dma

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** DDR -> stream channel. Reads LEN bytes from ADDR with 256-bit INCR bursts (<= 16 beats, never
  * across a 4 KiB boundary) and delivers them as `w`-bit beats, little-endian, `last` on the final
  * beat; bytes of the final beat past LEN are zero.
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

  val len      = Reg(UInt(32 bits)) init 0
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

    val upTo16 = (beatsLeft >= DmaBus.maxBurst) ? U(DmaBus.maxBurst, 8 bits) | beatsLeft(7 downto 0)
    val burst  = umin(upTo16, beatsToPage(nextAddr))
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
  // Space was reserved before the request, so this is ready whenever data comes; never block R.
  io.axi.r.ready := fifo.io.push.ready || !busy || stopping || rspBad
  when(io.axi.r.fire && rspBad && busy) { axiErr := True; stopping := True }

  // ---------------- 256 -> w serializer ----------------
  val ser = new Area {
    val outLeft  = Reg(UInt(31 bits)) init 0 // w-bit beats still to deliver
    val sub      = Reg(UInt(log2Up(ratio) bits)) init 0
    val lastMask = Reg(Bits(w bits)) init 0  // byte mask of the final beat (bytes past LEN are zero)

    val pop   = fifo.io.pop
    val lanes = pop.payload.subdivideIn(ratio slices)
    val isLast = outLeft === 1
    val beat  = Stream(Fragment(Bits(w bits)))
    beat.valid    := pop.valid && busy && !stopping && outLeft =/= 0
    beat.fragment := lanes(sub) & (isLast ? lastMask | B(w bits, default -> True))
    beat.last     := isLast
    val wordDone = sub === ratio - 1 || isLast
    pop.ready := beat.fire && wordDone
    when(beat.fire) {
      outLeft := outLeft - 1
      sub := wordDone ? U(0, sub.getWidth bits) | sub + 1
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

  when(io.ctrl.start && !busy) {
    val len33 = io.ctrl.len.resize(33)
    len := io.ctrl.len
    bytes := 0
    axiErr := False
    stopping := False
    cmd.nextAddr  := io.ctrl.addr
    cmd.beatsLeft := ((len33 + (DmaBus.bytesPerBeat - 1)) >> 5).resized
    ser.outLeft   := ((len33 + (wBytes - 1)) >> log2Up(wBytes)).resized
    ser.sub       := 0
    val lenMod = io.ctrl.len(log2Up(wBytes) - 1 downto 0)
    for (i <- 0 until wBytes) {
      val keep = if (i == wBytes - 1) lenMod === 0 else lenMod === 0 || lenMod > i
      ser.lastMask(i * 8, 8 bits) := keep ? B"xFF" | B"x00"
    }
    when(io.ctrl.addr(4 downto 0) =/= 0) {
      done := False; aborted := False
      finishError(DmaBus.Err.MISALIGNED)
    } elsewhen (io.ctrl.len === 0) {
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
