package compaction

import spinal.core._
import spinal.lib._

/** Decoder: checks and decodes one 16-byte KB16 entry per clock into real keys.
  *
  * Stage A (combinational on the incoming entry, state updated when it is taken): header checks
  * (codes 1..7; code 5 also when a virtual or pad entry follows a virtual entry), prefix expansion against the previous decoded key (real or virtual), slot in the
  * group, entry index. Stage B0 (one register later) compares the key with the previous real key in
  * chunks; stage B (one more): strictly-increasing verdict from the chunks (code 8), `last` checks (9), fill check (10), the LENGTH error of a run whose byte length
  * is not a multiple of 16 (reported after its complete entries, index = len/16), forwarding.
  *
  * Output: real keys, the final one flagged `last`; an `endOnly` record when the run ends without a
  * real key in its final entry (a pad) or is empty. After the first error the decoder reports nothing
  * more and forwards nothing (the top enters its error state).
  */
case class Decoder() extends Component {
  val io = new Bundle {
    val input = slave Stream (DecoderInput())
    val entries = in UInt (28 bits)  // complete entries of the run (declared bytes / 16)
    val remainder = in Bool ()        // declared bytes not a multiple of 16
    val group = in UInt (9 bits)      // G, 2..256 (checked by the top)
    val output = master Stream (KeyRecord())
    val error = master Flow (DecoderError())
  }

  case class StageRecord() extends Bundle {
    val key = Bits(128 bits)
    val len = UInt(5 bits)
    val addr = Bits(32 bits)
    val index = UInt(32 bits)
    val isReal = Bool()
    val isFinal = Bool()     // final entry of the run (or the end token of an empty run)
    val endOnly = Bool()     // end token of an empty run
    val code = UInt(4 bits)  // lowest of codes 1..7, or 0
    val truncated = Bool()
    val lastBad = Bool()
    val fill = Bool()
  }

  val nChunks = (133 + KeyOps.chunkBits - 1) / KeyOps.chunkBits
  case class OrderedRecord() extends Bundle {
    val rec = StageRecord()
    val hasPrev = Bool()
    val gt = Bits(nChunks bits)  // per chunk, most significant first: key > previous real key
    val eq = Bits(nChunks bits)
  }

  val stageA = new Area {
    val index = Reg(UInt(32 bits)) init (0)
    val slot = Reg(UInt(8 bits)) init (0)
    val prevKey = Reg(Bits(64 bits)) init (0) // shared <= 8: only bytes 0..7 are ever reused
    val prevLen = Reg(UInt(5 bits)) init (0) // the previous key of the first entry is the empty key
    val endSent = Reg(Bool()) init (False)
    val afterVir = Reg(Bool()) init (False) // the previous entry was virtual: this one must be real
    val injectEnd = io.entries === 0 && !endSent

    val d = io.input.payload.data
    val header = d(31 downto 0)
    val addr = d(63 downto 32)
    val stored = d(127 downto 64).subdivideIn(8 bits)
    val unshared = header(3 downto 0).asUInt
    val shared = header(7 downto 4).asUInt
    val vir = header(8)
    val pad = header(9)
    // group - 1 and entries - 1 as registers: both inputs hold still through a job (latched at START,
    // and the datapath is cleared for a cycle before the first entry), so the subtracts leave the path.
    val groupLast = RegNext(io.group - 1)
    val finalIndex = RegNext(io.entries.resize(32) - 1)
    val slotLast = slot.resize(9) === groupLast
    val isFinal = index === finalIndex
    val newLen = (shared +^ unshared).resize(5)

    // Decoded key byte j: previous key below `shared`, then the stored bytes, then zero. Stored byte
    // i = j - shared lands at j when i < unshared (i.e. j < shared + unshared): each candidate's select
    // is a function of the two 4-bit header fields alone and the byte an AND-OR of the candidates, so
    // no adder or compare carry chain (newLen) sits between the entry and the key (the IP's former
    // critical path on the ECP5, 6.91 ns).
    val prevBytes = prevKey.subdivideIn(8 bits)
    val unsharedAbove = Vec.tabulate(8)(i => unshared > i) // thermometer: stored byte i is in the key
    val keyBytes = Vec.tabulate(16) { j =>
      val candidates = for (k <- 0 to 8 if j - k >= 0 && j - k < 8)
        yield stored(j - k) & B(8 bits, default -> (shared === k && unsharedAbove(j - k)))
      val fromStored = candidates.reduceBalancedTree(_ | _)
      if (j < 8) Mux(U(j, 4 bits) < shared, prevBytes(j), fromStored) else fromStored
    }
    val newKey = keyBytes.asBits

    val c1 = header(31 downto 10) =/= 0
    val c2 = shared > 8 || unshared > 8
    val c3 = shared > prevLen
    val c4 = slot === 0 && shared =/= 0
    val c5 = (vir && (slotLast || isFinal)) || (afterVir && (vir || pad))
    val c6 = pad && (header =/= B(0x200, 32 bits) || addr =/= 0 || d(127 downto 64) =/= 0 || !slotLast)
    val c7 = !pad && !vir && newLen === 0
    val code = UInt(4 bits)
    code := 0
    // Later assignments win: the lowest code has the last word.
    when(c7)(code := ErrorCode.EMPTY_KEY)
    when(c6)(code := ErrorCode.BAD_PAD)
    when(c5)(code := ErrorCode.VIRTUAL_AT_END)
    when(c4)(code := ErrorCode.GROUP_START_SHARED)
    when(c3)(code := ErrorCode.SHARED_OVER_PREV)
    when(c2)(code := ErrorCode.LEN_OVER_8)
    when(c1)(code := ErrorCode.RESERVED_BITS)
    val fillBytes = (0 until 8).map(k => U(k, 4 bits) >= unshared && stored(k) =/= 0).orR
    val fill = !pad && (fillBytes || (vir && addr =/= 0))

    val out = Stream(StageRecord())
    out.valid := io.input.valid || injectEnd
    io.input.ready := out.ready && !injectEnd
    val r = out.payload
    r.key := newKey
    r.len := newLen
    r.addr := addr
    r.index := index
    r.isReal := !vir && !pad
    r.isFinal := isFinal
    r.endOnly := False
    r.code := code
    r.truncated := io.input.payload.truncated
    r.lastBad := io.input.payload.lastBad
    r.fill := fill
    when(injectEnd) {
      r.isReal := False
      r.isFinal := True
      r.endOnly := True
      r.code := 0
      r.truncated := False
      r.lastBad := False
      r.fill := False
    }

    when(out.fire) {
      when(injectEnd) {
        endSent := True
      } otherwise {
        index := index + 1
        slot := Mux(slotLast, U(0, 8 bits), slot + 1)
        afterVir := vir
        when(!pad) { // a pad does not change the previous key
          prevKey := newKey(63 downto 0)
          prevLen := newLen
        }
      }
    }
  }

  /** Stage B0: the strictly-increasing check against the previous real key, as per-chunk (greater,
    * equal) pairs; stage B combines them a clock later. Feed-forward, so one entry per clock stays. */
  val stageB0 = new Area {
    // Full slice: stage A's ready (and its state's enables) come from a register, not from the FIFO.
    val in = stageA.out.s2mPipe().m2sPipe()
    val prevReal = Reg(Bits(128 bits)) init (0)
    val prevRealLen = Reg(UInt(5 bits)) init (0)
    val hasPrevReal = Reg(Bool()) init (False)
    val chunks = KeyOps.chunkCompare(KeyOps.orderValue(in.payload.key, in.payload.len),
      KeyOps.orderValue(prevReal, prevRealLen))
    // Not gated by the entry's verdict (a bad entry halts the decoder, so what is kept then does not
    // matter): keeps the compare off the enable of these 133 flip-flops.
    when(in.fire && in.payload.isReal) {
      prevReal := in.payload.key
      prevRealLen := in.payload.len
      hasPrevReal := True
    }
    val out = in.translateWith {
      val t = OrderedRecord()
      t.rec := in.payload
      t.hasPrev := hasPrevReal
      t.gt := Vec(chunks.map(_._1)).asBits
      t.eq := Vec(chunks.map(_._2)).asBits
      t
    }
  }

  val stageB = new Area {
    val in = stageB0.out.m2sPipe()
    val r = in.payload.rec
    val halted = Reg(Bool()) init (False)

    val greater = KeyOps.chunksGreater(in.payload.gt.asBools.zip(in.payload.eq.asBools).toSeq)
    val notIncreasing = r.isReal && in.payload.hasPrev && !greater
    val code = UInt(4 bits)
    code := 0
    when(r.fill)(code := ErrorCode.FILL_NONZERO)
    when(r.lastBad)(code := ErrorCode.LENGTH)
    when(notIncreasing)(code := ErrorCode.NOT_INCREASING)
    when(r.code =/= 0)(code := r.code)
    // A truncated entry's content is not there: LENGTH whatever its stuffed bytes look like.
    when(r.truncated)(code := ErrorCode.LENGTH)
    val entryBad = code =/= 0
    val tailLength = !entryBad && r.isFinal && io.remainder

    // The report leaves through a register: the 133-bit order compare ends here, not in the job
    // control's state and error registers (the decoder halts in the same clock either way).
    val error = Flow(DecoderError())
    error.valid := in.fire && !halted && (entryBad || tailLength)
    error.code := Mux(entryBad, code, U(ErrorCode.LENGTH, 4 bits))
    error.index := Mux(entryBad || r.endOnly, r.index, r.index + 1)
    when(error.valid)(halted := True)
    io.error << error.stage()

    // Forward real keys; a final entry that is not a key (pad, empty run) becomes an end token.
    val forward = !halted && !entryBad && (r.isReal || (r.isFinal && !io.remainder))
    val rec = KeyRecord()
    rec.key := r.key
    rec.len := r.len
    rec.addr := r.addr
    rec.last := r.isFinal && !io.remainder
    rec.endOnly := !r.isReal
    // Records that are not forwarded still wait for the output register: this keeps the key compare
    // off the ready path back to the input port (ready only depends on registered state).
    val out = Stream(KeyRecord())
    out.valid := in.valid && forward
    out.payload := rec
    in.ready := out.ready
    // Full slice: the key FIFO's full flag (a pointer compare) ends here instead of running back
    // through stages B, B0 and A to the input port.
    io.output << out.s2mPipe().m2sPipe()
  }
}
