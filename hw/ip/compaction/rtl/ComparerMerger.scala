package compaction

import spinal.core._
import spinal.lib._

/** Comparer_merger: two-way merge of decoded key streams, one output key per clock.
  *
  * Each clock it compares the two heads (lexicographic, unsigned, a proper prefix first) and takes the
  * smaller, or both when equal: then input 0's address (newer run) survives and input 1's address goes
  * to `inv`. It holds its newest output key and invalid address for one step, so it can flag the final
  * ones `last` even when a run's end is only known from a later end token. An empty merged run gives a
  * single `endOnly` record on `keys`; no invalid address at all gives an `invEmpty` pulse.
  * Both outputs feed FIFOs whose ready is registered, so the merge decision is the only logic between
  * the input FIFOs and the output FIFOs.
  */
case class ComparerMerger() extends Component {
  val io = new Bundle {
    val in0 = slave Stream (KeyRecord())   // newer run
    val in1 = slave Stream (KeyRecord())   // older run
    val keys = master Stream (KeyRecord())
    val inv = master Stream (Fragment(Bits(32 bits)))
    val invEmpty = out Bool ()
  }

  val done0, done1, finished = Reg(Bool()) init (False)
  val heldKey = Reg(KeyRecord())
  val heldKeyValid = Reg(Bool()) init (False)
  val heldInv = Reg(Bits(32 bits))
  val heldInvValid = Reg(Bool()) init (False)

  val go = io.keys.ready && io.inv.ready && !finished
  val h0 = io.in0.payload
  val h1 = io.in1.payload
  val end0 = io.in0.valid && h0.endOnly
  val end1 = io.in1.valid && h1.endOnly
  val key0 = io.in0.valid && !h0.endOnly
  val key1 = io.in1.valid && !h1.endOnly

  val v0 = KeyOps.orderValue(h0.key, h0.len)
  val v1 = KeyOps.orderValue(h1.key, h1.len)
  val less = v0 < v1
  val equal = v0 === v1
  val take0 = key0 && (done1 || (key1 && (less || equal)))
  val take1 = key1 && (done0 || (key0 && !less))
  val takeBoth = take0 && take1

  io.in0.ready := go && (take0 || end0)
  io.in1.ready := go && (take1 || end1)
  when(go && ((take0 && h0.last) || end0))(done0 := True)
  when(go && ((take1 && h1.last) || end1))(done1 := True)

  val chosen = KeyRecord()
  chosen.key := Mux(take0, h0.key, h1.key)
  chosen.len := Mux(take0, h0.len, h1.len)
  chosen.addr := Mux(take0, h0.addr, h1.addr)
  chosen.last := False
  chosen.endOnly := False

  // Key output: push the held key when a newer one replaces it; at the end flag the held one `last`.
  val finishing = go && done0 && done1
  io.keys.valid := False
  io.keys.payload := heldKey
  when(go && (take0 || take1)) {
    io.keys.valid := heldKeyValid
    heldKey := chosen
    heldKeyValid := True
  }
  when(finishing) {
    io.keys.valid := True
    io.keys.payload.last := True
    io.keys.payload.endOnly := !heldKeyValid
    heldKeyValid := False
    finished := True
  }

  // Invalid output: same one-step hold.
  io.inv.valid := False
  io.inv.fragment := heldInv
  io.inv.last := False
  when(go && takeBoth) {
    io.inv.valid := heldInvValid
    heldInv := h1.addr
    heldInvValid := True
  }
  when(finishing && heldInvValid) {
    io.inv.valid := True
    io.inv.last := True
    heldInvValid := False
  }
  io.invEmpty := finishing && !heldInvValid
}
