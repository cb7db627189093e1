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

  /** Stage 1c (one register after the prefix): everything the entry stage would otherwise compute
    * from the prefix inside its slot loop: the 8 key bytes from byte `prefix` on (a 9-way byte
    * multiplexer), len - prefix, len > 8. The entry stage then only selects among registered
    * candidates with registered flags (slot 0, last slot, real entry next). */
  case class ShiftedKey() extends Bundle {
    val key = Bits(128 bits)
    val addr = Bits(32 bits)
    val last = Bool()
    val endOnly = Bool()
    val prefix = UInt(4 bits)
    val virtualShared = Bool()
    val atPrefix = Bits(64 bits)   // key bytes prefix .. prefix+7
    val lenOver8 = Bool()
    // 4-bit arithmetic is exact where each is used: len (<= 8 without a virtual entry), len - 8
    // (1..8 after a virtual entry), len - prefix (<= 8 without a virtual entry).
    val lenLow, lenMinus8, restPrefix = UInt(4 bits)
  }

  val shiftStage = new Area {
    val in = prefixStage.out.m2sPipe()
    val rec = in.payload.rec
    val keyBytes = rec.key.subdivideIn(8 bits)
    val out = in.translateWith {
      val t = ShiftedKey()
      t.key := rec.key
      t.addr := rec.addr
      t.last := rec.last
      t.endOnly := rec.endOnly
      val prefix = in.payload.prefix
      t.prefix := prefix
      t.virtualShared := in.payload.virtualShared
      t.atPrefix := Vec.tabulate(8) { i =>
        val b = Bits(8 bits)
        b := 0
        for (st <- 0 to 8) when(prefix === st) { b := keyBytes(i + st) }
        b
      }.asBits
      t.lenOver8 := rec.len > 8
      t.lenLow := rec.len(3 downto 0)
      t.lenMinus8 := rec.len(3 downto 0) - 8
      t.restPrefix := rec.len(3 downto 0) - prefix
      t
    }
  }

  /** An output entry before its final masking: stored bytes, address and header, and the flags. */
  case class EntryPlan() extends Bundle {
    val stored = Bits(64 bits)
    val addr = Bits(32 bits)
    val header = Bits(32 bits)
    val pad, real, last = Bool()
  }

  val entryStage = new Area {
    // Full register slice: the entry stage's ready (it depends on the slot) ends here instead of
    // running back through the earlier stages into the merged-key FIFO.
    val in = shiftStage.out.s2mPipe().m2sPipe()
    val r = in.payload
    val slot = Reg(UInt(8 bits)) init (0)
    // slot === 0 and slot === G-1 as registers, updated with the slot: no compare in the slot loop.
    val slotZero = Reg(Bool()) init (True)
    val slotLast = Reg(Bool()) init (False) // slot 0 is never the last (G >= 2)
    val realNext = Reg(Bool()) init (False) // the virtual entry is out, its real entry comes next
    // group - 1 as a register: the group holds still through a job (latched at START, and the datapath
    // is cleared for a cycle before the first key arrives).
    val groupLast = RegNext(io.group - 1)
    val needVirtual = Mux(slotZero, in.payload.lenOver8, in.payload.virtualShared)
    val emitPad = !realNext && needVirtual && slotLast
    val emitVirtual = !realNext && needVirtual && !slotLast
    val emitReal = realNext || !needVirtual
    val start = Mux(realNext, U(8, 4 bits), Mux(slotZero, U(0, 4 bits), in.payload.prefix))
    val rest = Mux(slotZero, r.lenLow, r.restPrefix)
    val unshared = Mux(realNext, r.lenMinus8, Mux(needVirtual, U(8, 4 bits), rest))
    val stored = Mux(realNext, r.key(127 downto 64), Mux(slotZero, r.key(63 downto 0), in.payload.atPrefix))
    // The entry leaves as its parts; the pad and real-entry masking of the 128 data bits happens after
    // the output slice (`format`), so the flags' fan-out onto every data bit is not in the slot loop.
    val plan = EntryPlan()
    plan.stored := stored
    plan.addr := r.addr
    plan.header := B(0, 22 bits) ## emitPad ## emitVirtual ## start ## unshared
    plan.pad := emitPad
    plan.real := emitReal
    plan.last := emitReal && r.last

    val out = Stream(EntryPlan())
    out.valid := in.valid && !r.endOnly
    out.payload := plan
    in.ready := r.endOnly || (out.ready && emitReal)
    when(out.fire) {
      slot := Mux(slotLast, U(0, 8 bits), slot + 1)
      slotZero := slotLast
      slotLast := !slotLast && (slot + 1).resize(9) === groupLast
      realNext := emitVirtual
    }
    io.emptyDone := in.fire && r.endOnly
    // Full slice: the output FIFO's full flag does not reach the slot counter's enable.
    val sliced = out.s2mPipe().m2sPipe()
    io.output << sliced.translateWith {
      val p = sliced.payload
      val e = EncodedEntry()
      e.data := p.stored ## Mux(p.real, p.addr, B(0, 32 bits)) ## p.header
      when(p.pad)(e.data := B(0x200, 128 bits))
      e.last := p.last
      e.real := p.real
      e
    }
  }
}
