package compaction

import spinal.core._
import spinal.lib._

/** Encoder: canonical KB16 encoding (spec "Canonical encoding"), one output entry per clock.
  *
  * Stages 1a/1b compute min(8, common prefix) of each key with the previous key ahead of the entry
  * stage, so the per-clock recurrence of stage 2 is only the slot counter: s = 0 at a group start, else the
  * precomputed prefix; a key with len - s <= 8 is one real entry; otherwise a virtual entry (s, K[s:s+8])
  * then the real entry (8, K[8:]), preceded by a pad when the virtual would land in slot G-1.
  * A key is consumed with its real entry; an `endOnly` record (empty merged run) is consumed without
  * output and pulses `emptyDone`.
  */
case class Encoder() extends Component {
  val io = new Bundle {
    val input = slave Stream (KeyRecord())
    val group = in UInt (9 bits)
    val output = master Stream (EncodedEntry())
    val emptyDone = out Bool ()
  }

  case class PrefixedKey() extends Bundle {
    val rec = KeyRecord()
    val prefix = UInt(4 bits) // min(8, common prefix with the previous key)
    // Whether the key needs a virtual entry when it shares `prefix` bytes, so the entry stage only
    // selects (slot 0: len > 8, else this), keeping the subtract and compare off its slot -> ready loop.
    val virtualShared = Bool()   // len - prefix > 8
  }

  /** Stage 1a: which of bytes 0..7 equal the previous key's, and min(8, shorter length), registered;
    * stage 1b turns them into the prefix. Feed-forward (the previous key is the previous record's,
    * whatever happens later), so both stages keep one key per clock. */
  case class ComparedKey() extends Bundle {
    val rec = KeyRecord()
    val same = Bits(8 bits)          // byte j equals the previous key's byte j
    val shorterCapped = UInt(4 bits) // min(8, len, previous len)
  }

  val compareStage = new Area {
    val prevKey = Reg(Bits(64 bits)) init (0) // bytes 0..7: the prefix counts up to 8 only
    val prevLen = Reg(UInt(5 bits)) init (0)
    val k = io.input.payload.key(63 downto 0).subdivideIn(8 bits)
    val p = prevKey.subdivideIn(8 bits)
    val len = io.input.payload.len
    val shorter = Mux(prevLen < len, prevLen, len)
    val out = io.input.translateWith {
      val t = ComparedKey()
      t.rec := io.input.payload
      t.same := Vec((0 until 8).map(j => k(j) === p(j))).asBits
      t.shorterCapped := Mux(shorter > 8, U(8, 4 bits), shorter(3 downto 0))
      t
    }.m2sPipe()
    when(io.input.fire && !io.input.payload.endOnly) {
      prevKey := io.input.payload.key(63 downto 0)
      prevLen := len
    }
  }

  val prefixStage = new Area {
    val in = compareStage.out
    // Index of the first differing byte among bytes 0..7 (8 if none), capped by both lengths.
    var firstDiff = U(8, 4 bits)
    for (j <- 7 downto 0) firstDiff = Mux(!in.payload.same(j), U(j, 4 bits), firstDiff)
    val len = in.payload.rec.len
    val shorterCapped = in.payload.shorterCapped
    val prefix = Mux(firstDiff < shorterCapped, firstDiff, shorterCapped)
    val out = in.translateWith {
      val t = PrefixedKey()
      t.rec := in.payload.rec
      t.prefix := prefix
      t.virtualShared := len - prefix.resize(5) > 8
      t
    }
  }

  val entryStage = new Area {
    // Full register slice: the entry stage's ready (it depends on the slot) ends here instead of
    // running back through the prefix stage into the merged-key FIFO.
    val in = prefixStage.out.s2mPipe().m2sPipe()
    val r = in.payload.rec
    val slot = Reg(UInt(8 bits)) init (0)
    val realNext = Reg(Bool()) init (False) // the virtual entry is out, its real entry comes next
    // group - 1 as a register: the group holds still through a job (latched at START, and the datapath
    // is cleared for a cycle before the first key arrives).
    val groupLast = RegNext(io.group - 1)
    val slotLast = slot.resize(9) === groupLast
    val shared = Mux(slot === 0, U(0, 4 bits), in.payload.prefix)
    val needVirtual = Mux(slot === 0, r.len > 8, in.payload.virtualShared)
    // Only used when it is 0..8 (no virtual entry): 4-bit arithmetic is exact then.
    val rest = r.len(3 downto 0) - shared
    val emitPad = !realNext && needVirtual && slotLast
    val emitVirtual = !realNext && needVirtual && !slotLast
    val emitReal = realNext || !needVirtual
    val start = Mux(realNext, U(8, 4 bits), shared)
    // 4-bit arithmetic is exact here: len - 8 is 1..8 after a virtual entry, rest <= 8 otherwise.
    val unshared = Mux(realNext, r.len(3 downto 0) - 8, Mux(needVirtual, U(8, 4 bits), rest))
    val keyBytes = r.key.subdivideIn(8 bits)
    val stored = Vec.tabulate(8) { i =>
      val b = Bits(8 bits)
      b := 0
      for (st <- 0 to 8 if i + st < 16) when(start === st) { b := keyBytes(i + st) }
      b
    }
    val header = B(0, 22 bits) ## emitPad ## emitVirtual ## start ## unshared
    val entry = EncodedEntry()
    entry.data := stored.asBits ## Mux(emitReal, r.addr, B(0, 32 bits)) ## header
    when(emitPad)(entry.data := B(0x200, 128 bits))
    entry.last := emitReal && r.last
    entry.real := emitReal

    val out = Stream(EncodedEntry())
    out.valid := in.valid && !r.endOnly
    out.payload := entry
    in.ready := r.endOnly || (out.ready && emitReal)
    when(out.fire) {
      slot := Mux(slotLast, U(0, 8 bits), slot + 1)
      realNext := emitVirtual
    }
    io.emptyDone := in.fire && r.endOnly
    // Full slice: the output FIFO's full flag does not reach the slot counter's enable.
    io.output << out.s2mPipe().m2sPipe()
  }
}
