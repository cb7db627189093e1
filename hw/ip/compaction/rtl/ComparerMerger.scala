package compaction

import spinal.core._
import spinal.lib._

/** Comparer_merger: one node of the merge tree, a two-way merge of sorted key streams, one output key
  * per clock.
  *
  * `in0` carries the runs 0..n-1 under this node, `in1` the runs n..2n-1 (all older than in0's). Each
  * clock the node compares the two heads (lexicographic, unsigned, a proper prefix first) and takes the
  * smaller, or both when equal; the output record carries both address vectors side by side, so the
  * root knows every run holding the key (newest wins, the rest are invalid) without any choice here.
  *
  * Look-ahead: each side's head is a register `h<i>` filled only from its input stream, whose payload
  * (the register slice in front of the node) is the record behind the head. The order of the two heads
  * is a register (`gt`, `lt`), computed one clock ahead: each clock three comparators order the pairs
  * the heads can become at the next clock (in0's next against h1, h0 against in1's next, both nexts),
  * and the clock's own decision only selects among them (or keeps the order when neither head moves).
  * So the per-clock recurrence is a few gates on registered compare results, and the 133-bit compares
  * run from registers to a register. Cost: one clock of latency per tree level.
  *
  * End protocol (in and out): the final key has `last`, or, when a run's end was only known after its
  * final key (it ends on a pad), an `endOnly` record follows; an empty stream is one `endOnly` record.
  * A key leaves with `last` when both sides are known to end with it, else the node sends an
  * `endOnly` record once both sides have ended. The root's EndFixer turns this into "last on the
  * final key".
  */
case class ComparerMerger(n: Int) extends Component {
  val io = new Bundle {
    val in0 = slave Stream (MergeRecord(n))   // newer runs
    val in1 = slave Stream (MergeRecord(n))   // older runs
    val out = master Stream (MergeRecord(2 * n))
  }

  val done0, done1, finished = Reg(Bool()) init (False)
  val h0, h1 = Reg(MergeRecord(n))
  val h0Valid, h1Valid = Reg(Bool()) init (False)
  // Order of h0 against h1 (valid whenever both heads are): h0 > h1, h0 < h1; neither = equal.
  val gt, lt = Reg(Bool()) init (False)

  val go = io.out.ready && !finished
  val end0 = h0Valid && h0.endOnly
  val end1 = h1Valid && h1.endOnly
  val key0 = h0Valid && !h0.endOnly
  val key1 = h1Valid && !h1.endOnly
  val ended0 = done0 || end0
  val ended1 = done1 || end1

  val take0 = key0 && (ended1 || (key1 && !gt))
  val take1 = key1 && (ended0 || (key0 && !lt))
  // After this clock side i has no more keys.
  val fin0 = ended0 || (take0 && h0.last)
  val fin1 = ended1 || (take1 && h1.last)
  val emitKey = take0 || take1
  val emitEnd = !emitKey && fin0 && fin1

  // A head leaves when taken (or an end record consumed); the input's record moves into a free head.
  val pop0 = go && (take0 || end0)
  val pop1 = go && (take1 || end1)
  io.in0.ready := pop0 || !h0Valid
  io.in1.ready := pop1 || !h1Valid
  val shift0 = io.in0.fire
  val shift1 = io.in1.fire
  when(shift0)(h0 := io.in0.payload)
  when(shift1)(h1 := io.in1.payload)
  h0Valid := shift0 || (h0Valid && !pop0)
  h1Valid := shift1 || (h1Valid && !pop1)

  // The three candidate pairs, from registers only (h<i>, and the slices' payloads in<i>).
  def order(a: MergeRecord, b: MergeRecord): (Bool, Bool) =
    KeyOps.greaterLess(KeyOps.orderValue(a.key, a.len), KeyOps.orderValue(b.key, b.len))
  val (gtN0H1, ltN0H1) = order(io.in0.payload, h1)
  val (gtH0N1, ltH0N1) = order(h0, io.in1.payload)
  val (gtN0N1, ltN0N1) = order(io.in0.payload, io.in1.payload)
  when(shift0 && shift1) {
    gt := gtN0N1; lt := ltN0N1
  } elsewhen (shift0) {
    gt := gtN0H1; lt := ltN0H1
  } elsewhen (shift1) {
    gt := gtH0N1; lt := ltH0N1
  }

  val o = io.out.payload
  o.key := Mux(take0, h0.key, h1.key)
  o.len := Mux(take0, h0.len, h1.len)
  for (i <- 0 until n) {
    o.addrs(i) := h0.addrs(i)
    o.addrs(n + i) := h1.addrs(i)
  }
  o.present := (h1.present & B(n bits, default -> take1)) ## (h0.present & B(n bits, default -> take0))
  o.last := emitKey && fin0 && fin1
  o.endOnly := emitEnd
  io.out.valid := !finished && (emitKey || emitEnd)

  when(go) {
    done0 := fin0
    done1 := fin1
    when((emitKey || emitEnd) && fin0 && fin1)(finished := True)
  }
}

/** Root of the tree: holds the newest key one step, so the final key carries `last` even when the end
  * was only known from a later `endOnly` record; an empty merge gives one `endOnly` record. */
case class EndFixer(n: Int) extends Component {
  val io = new Bundle {
    val input = slave Stream (MergeRecord(n))
    val output = master Stream (MergeRecord(n))
  }
  val held = Reg(MergeRecord(n))
  val heldValid = Reg(Bool()) init (False)
  val in = io.input.payload

  io.output.valid := False
  io.output.payload := held
  io.input.ready := False
  when(heldValid && held.last) {
    io.output.valid := True
    when(io.output.ready)(heldValid := False)
  } elsewhen (io.input.valid) {
    when(in.endOnly) {
      io.output.valid := True
      when(heldValid) { io.output.payload.last := True } otherwise { io.output.payload := in }
      io.input.ready := io.output.ready
      when(io.output.ready)(heldValid := False)
    } otherwise {
      io.output.valid := heldValid
      io.input.ready := io.output.ready || !heldValid
      when(io.input.ready) {
        held := in
        heldValid := True
      }
    }
  }
}

/** Invalid addresses of one key (the runs holding it, minus the newest), or the end of the merge. */
case class InvList(n: Int) extends Bundle {
  val addrs = Vec(Bits(32 bits), n)
  val mask = Bits(n bits)
  val last = Bool() // the merge's final record: flag the final address `last`
}

/** A root record split for the two FIFOs: the key with the newest run's address, the other runs'
  * addresses, and whether the invalid FIFO gets an entry (mask nonzero or the merge's end). */
case class SplitRecord(n: Int) extends Bundle {
  val rec = KeyRecord()
  val inv = InvList(n)
  val needInv = Bool()
}

/** Serializes the invalid addresses of each key, oldest run last, one address per clock. Holds one
  * address so the final one carries `last`; `invEmpty` pulses when the merge had none at all. */
case class InvSerializer(n: Int) extends Component {
  val io = new Bundle {
    val input = slave Stream (InvList(n))
    val output = master Stream (Fragment(Bits(32 bits)))
    val invEmpty = out Bool ()
  }
  val held = Reg(Bits(32 bits))
  val heldValid = Reg(Bool()) init (False)
  val taken = Reg(Bits(n bits)) init (0) // addresses of the head already sent
  val head = io.input.payload
  val rem = head.mask & ~taken
  val lowest = OHMasking.first(rem)
  val restEmpty = (rem & ~lowest) === 0

  io.output.valid := False
  io.output.fragment := held
  io.output.last := False
  io.input.ready := False
  io.invEmpty := False
  when(io.input.valid) {
    when(rem =/= 0) {
      io.output.valid := heldValid
      when(!heldValid || io.output.ready) {
        held := MuxOH(lowest, head.addrs)
        heldValid := True
        taken := taken | lowest
        when(restEmpty && !head.last) {
          io.input.ready := True
          taken := 0
        }
      }
    } elsewhen (head.last) {
      io.output.valid := heldValid
      io.output.last := True
      when(!heldValid || io.output.ready) {
        io.input.ready := True
        taken := 0
        heldValid := False
        io.invEmpty := !heldValid
      }
    } otherwise {
      io.input.ready := True
      taken := 0
    }
  }
}
