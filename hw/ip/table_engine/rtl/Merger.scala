package table_engine

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._

/** Sizes of the merge stage: `bytes` per beat inside it (the merger, the drop filter), `ways` input runs (K), the
  * longest internal key; `portBytes` per beat on its entry streams in and out (0: `bytes`), half of `bytes` for a
  * stage twice the width of the units around it (doc/merge.md, "A wider stage"), with `inputFifo` beats of `bytes`
  * per input (a run's next entries, widened while the other runs win). */
case class MergeConfig(bytes: Int = 16, ways: Int = 4, keyLimit: Int = 1032, walker: Option[BaseLevelConfig] = None,
                       portBytes: Int = 0, inputFifo: Int = 16) {
  require(Seq(2, 4, 8).contains(ways), s"ways $ways: 2, 4 or 8")
  val entry = BlockReaderConfig(bytes, keyLimit)
  val portW = if (portBytes == 0) bytes else portBytes
  require(portW == bytes || 2 * portW == bytes, s"port width $portW bytes: the stage's $bytes or half of it")
  require(walker.forall(_.bytes == portW), "the walker takes the ports' width")
  val port = BlockReaderConfig(portW, keyLimit)
  val widened = portW != bytes
  val W = bytes
  val keyWords = entry.keyWords
  val wordBits = log2Up(keyWords)
  val runBits = log2Up(ways)
  val valueFifo = 8 // value beats ahead of the output: a key of up to 7 beats leaves while its run loads the next
}

/** The entry stream's END beat (kind 3, the code the block builder takes as FLUSH): one beat, `last`,
  * after a run's final entry; the merge's output ends with one after every run has ended. */
object MergeKind {
  val End = 3
}

/** A beat of the merged stream between the merger and the drop filter: the entry beat plus, meaningful
  * on HEAD, the internal key's 8-byte tag (little-endian: sequence << 8 | type) and whether its user key
  * equals the previous merged entry's (the merger knows it from its pairwise compares, so the drop
  * filter needs no key buffer of its own). */
case class MergeBeat(c: MergeConfig) extends Bundle {
  val entry = EntryBeat(c.entry)
  val tag = Bits(64 bits)
  val sameUser = Bool()
}

/** How a merge ended: `error` with the model's code (KEY_ORDER, KEY_TOO_LONG, BAD_BLOCK), the run and the
  * index of the entry in it (0 = the run's first), else the merged entries. */
case class MergeStatus(c: MergeConfig) extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val run = UInt(c.runBits bits)
  val entry = UInt(32 bits)
  val entries = UInt(32 bits)
}

/** K-way merge of runs in LevelDB's internal-key order (doc/merge.md). Each input's head key sits in its
  * own key RAM; a new head is compared, as its KEY beats arrive, with the K - 1 other heads and with the
  * key it replaces (the run's order check), W bytes a clock per comparator. The pairwise results are kept
  * in a K x K matrix, so only the reloaded head is compared: the winner is the head that is below every
  * other. Values pass from the winner's input through an 8-beat FIFO (never buffered whole), so the run's
  * next head loads while the value's last beats leave. */
case class MergerCore(c: MergeConfig) extends Component {
  val io = new Bundle {
    val inputs = Vec(slave Stream (Fragment(EntryBeat(c.entry))), c.ways)
    val output = master Stream (Fragment(MergeBeat(c)))
    val status = master Stream (MergeStatus(c))
  }
  val K = c.ways
  val W = c.W
  val keyLenBits = c.entry.keyLenBits

  object S extends SpinalEnum {
    val Decide, LoadHead, LoadKey, Check, OutEnd, Status, Halt = newElement()
  }
  val state = RegInit(S.Decide)

  // ---- per input: the head (key in its RAM, lengths, tag), whether the run ended ----
  val keyMem = Seq.fill(K)(Mem(Bits(8 * W bits), c.keyWords))
  val headValid = Vec(RegInit(False), K)
  val ended = Vec(RegInit(False), K)
  val hasPrev = Vec(RegInit(False), K) // a key of this run has left (the order check's reference)
  val keyLen = Vec(Reg(UInt(keyLenBits bits)) init (0), K)
  val valueLen = Vec(Reg(UInt(32 bits)), K)
  val tag = Vec(Reg(Bits(64 bits)), K)
  val taken = Vec(RegInit(U(0, 32 bits)), K) // entries of the run loaded so far
  // lt(a)(b): a's head sorts before b's; eq: the same internal key; sameUser: the same user key
  val lt = Vec(Vec(Reg(Bool()), K), K)
  val eq = Vec(Vec(Reg(Bool()), K), K)
  val sameUser = Vec(Vec(Reg(Bool()), K), K)
  val sameAsLast = Vec(Reg(Bool()), K) // the head's user key equals the last output entry's

  val sel = Reg(UInt(c.runBits bits)) // the input loading (Load*) or winning (Out*)
  val word = Reg(UInt(c.wordBits + 1 bits))
  val loadLen = Reg(UInt(keyLenBits bits))
  val loadValue = Reg(UInt(32 bits))
  val loadTag = Reg(Bits(64 bits))
  val outCount = RegInit(U(0, 32 bits))
  val errCode = Reg(UInt(ErrorCodes.Width bits))
  val errRun = Reg(UInt(c.runBits bits))
  val errEntry = Reg(UInt(32 bits))
  val isError = RegInit(False)
  val orderBad = RegNext(False) init (False) // Check found the new head not after its run's previous key

  for (i <- 0 until K) io.inputs(i).ready := False
  def inReady(v: Bool): Unit = for (i <- 0 until K) when(sel === i) { io.inputs(i).ready := v }
  val in = io.inputs(sel)
  val beat = in.fragment

  // ---- comparators: the beat arriving (the new head of `sel`) against word `word` of every key RAM ----
  // (for RAM `sel` that is the run's previous key, read before the beat overwrites it). The RAMs are read
  // synchronously: the address is `word`'s next value, so the word is there when `word` gets it. A beat's
  // per-lane results (user byte differs, new byte below) are registered (`laneNe`, `laneLt`, `laneValid`);
  // the clock after folds them into `decided` / `newLess`, and `Check` folds the final beat's into the
  // verdict. The tags are compared whole in `Check` (64-bit numbers, larger sorts first).
  val wordNext = cloneOf(word)
  wordNext := word
  word := wordNext
  val rdAddr = word.resize(c.wordBits)
  val words = keyMem.map(_.readSync(wordNext.resize(c.wordBits)))
  val decided = Vec(Reg(Bool()), K) // a user-key byte differs (beats before the last registered lanes)
  val newLess = Vec(Reg(Bool()), K)
  val uMin = Vec(Reg(UInt(keyLenBits bits)), K) // the shorter user key's length, the new vs head m
  val sameLen = Vec(Reg(Bool()), K) // the user keys are the same length
  val newShorter = Vec(Reg(Bool()), K)
  val laneNe = Vec(Reg(Bits(W bits)), K)
  val laneLt = Vec(Reg(Bits(W bits)), K)
  val laneValid = RegNext(False) init (False)
  val keyBeat = state === S.LoadKey && in.valid
  when(keyBeat) { laneValid := True }
  val laneWord = word.resize(c.wordBits + 1)
  val lessHere = Vec(Bool(), K)
  for (m <- 0 until K) {
    val uWord = (uMin(m) >> log2Up(W)).resize(c.wordBits + 1)
    val uLane = uMin(m)(log2Up(W) - 1 downto 0)
    for (p <- 0 until W) {
      val a = beat.data(8 * p, 8 bits).asUInt
      val b = words(m)(8 * p, 8 bits).asUInt
      val user = laneWord < uWord || (laneWord === uWord && U(p, log2Up(W) bits) < uLane)
      when(keyBeat) {
        laneNe(m)(p) := user && a =/= b
        laneLt(m)(p) := a < b
      }
    }
    lessHere(m) := (OHMasking.first(laneNe(m)) & laneLt(m)).orR
    when(laneValid) {
      decided(m) := decided(m) || laneNe(m).orR
      when(!decided(m)) { newLess(m) := lessHere(m) }
    }
  }
  // The final verdicts (state Check): new < old(m), new == old(m), same user key.
  def verdict(m: Int): (Bool, Bool, Bool) = {
    val dNow = decided(m) || laneNe(m).orR
    val lNow = Mux(decided(m), newLess(m), lessHere(m))
    val tagGreater = loadTag.asUInt > tag(m).asUInt
    val less = Mux(dNow, lNow, Mux(!sameLen(m), newShorter(m), tagGreater))
    val equal = !dNow && sameLen(m) && loadTag === tag(m)
    (less, equal, !dNow && sameLen(m))
  }

  // The tag: the key's last 8 bytes, picked from the beats as they pass.
  val loadTagNow = Bits(64 bits)
  loadTagNow := loadTag
  for (t <- 0 until 8) {
    val q = (loadLen - 8 + t).resize(keyLenBits)
    when((q >> log2Up(W)) === word.resized) {
      loadTagNow(8 * t, 8 bits) := beat.data.subdivideIn(8 bits)(q(log2Up(W) - 1 downto 0))
    }
  }
  when(keyBeat) { loadTag := loadTagNow }

  def fail(code: String, run: UInt, entry: UInt): Unit = {
    isError := True
    errCode := ErrorCodes(code)
    errRun := run
    errEntry := entry
    state := S.Status
  }

  // ---- the winner and the model's same-key check (its Merger::Pick, which scans runs in index order) ----
  val needLoad = (0 until K).map(i => !headValid(i) && !ended(i))
  val anyLoad = needLoad.orR
  val firstLoad = OHToUInt(OHMasking.first(needLoad.asBits()))
  // The head below every other, and dup(b): the model's Pick, at run b, finds b's head equal to the smallest
  // head of runs 0..b-1. Of the registered matrix (`Decide`) and of the one the final KEY beat writes.
  case class Pick(win: UInt, dup: Bool, dupRun: UInt)
  def pick(hv: Int => Bool, ltF: (Int, Int) => Bool, eqF: (Int, Int) => Bool): Pick = {
    val winOh = Bits(K bits)
    for (w <- 0 until K)
      winOh(w) := hv(w) && (0 until K).filter(_ != w).map(m => !hv(m) || ltF(w, m)).andR
    val dupOh = Bits(K bits)
    for (b <- 0 until K) {
      dupOh(b) := hv(b) && (0 until b).map(a => hv(a) && eqF(a, b) &&
        (0 until b).filter(_ != a).map(r => !hv(r) || ltF(a, r)).andR).orR
    }
    Pick(OHToUInt(winOh), dupOh.orR, OHToUInt(OHMasking.first(dupOh)))
  }
  val now = pick(headValid(_), lt(_)(_), eq(_)(_))
  val winner = now.win
  // ---- output: the winner's entry leaves in three overlapping parts: its HEAD (with the final KEY beat of
  // the head that decided it, or in `Decide`), its key from the RAM
  // (`outKey`), its value through a small FIFO (`valuePull` fills it from the run while the key leaves,
  // `drain` empties it), so the run's next HEAD and KEY beats load while the value's last beats drain ----
  val outKey = RegInit(False)
  val valuePull = RegInit(False)
  val drain = RegInit(False)
  val valueFifo = StreamFifo(Fragment(ByteBeat(W)), c.valueFifo, latency = 1) // a beat pushed pops the next clock
  valueFifo.io.push.valid := False
  valueFifo.io.push.fragment.data := beat.data
  valueFifo.io.push.fragment.count := beat.count
  valueFifo.io.push.last := in.last
  valueFifo.io.pop.ready := False
  when(valuePull) {
    valueFifo.io.push.valid := in.valid
    inReady(valueFifo.io.push.ready)
    when(in.valid && valueFifo.io.push.ready && in.last) { valuePull := False }
  }
  val outBusy = outKey || drain // the last winner's entry is still leaving

  val outBeat = io.output.payload
  val outSel = Mux(outBusy, sel, winner) // the HEAD beat leaves when the winner is known
  io.output.valid := False
  outBeat.last := False
  outBeat.entry.kind := EntryKind.Head
  outBeat.entry.data := 0
  outBeat.entry.count := 0
  outBeat.entry.keyBytes := keyLen(outSel)
  outBeat.entry.valueBytes := valueLen(outSel)
  outBeat.tag := tag(outSel)
  outBeat.sameUser := sameAsLast(outSel)
  val outWords = ((keyLen(sel) + (W - 1)) >> log2Up(W)).resize(c.wordBits + 1)
  val finalKeyWord = word === outWords - 1
  val keyTail = keyLen(sel)(log2Up(W) - 1 downto 0)
  when(outKey) {
    io.output.valid := True
    outBeat.entry.kind := EntryKind.Key
    outBeat.entry.data := Vec(words)(sel)
    outBeat.entry.count := Mux(finalKeyWord && keyTail =/= 0, keyTail.resize(c.entry.countBits), U(W, c.entry.countBits bits))
    outBeat.last := finalKeyWord && valueLen(sel) === 0
    when(io.output.ready) {
      wordNext := word + 1
      when(finalKeyWord) { outKey := False }
    }
  } elsewhen (drain) {
    io.output.valid := valueFifo.io.pop.valid
    outBeat.entry.kind := EntryKind.Value
    outBeat.entry.data := valueFifo.io.pop.fragment.data
    outBeat.entry.count := valueFifo.io.pop.fragment.count
    outBeat.last := valueFifo.io.pop.last
    valueFifo.io.pop.ready := io.output.ready
    when(valueFifo.io.pop.fire && valueFifo.io.pop.last) { drain := False }
  }

  io.status.valid := state === S.Status && !outBusy
  io.status.error := isError
  io.status.code := errCode
  io.status.run := errRun
  io.status.entry := errEntry
  io.status.entries := outCount

  def emitHead(w: UInt, same: (Int, Int) => Bool, valueBytes: UInt): Unit = {
    for (x <- 0 until K) when(w === x) {
      for (m <- 0 until K if m != x) sameAsLast(m) := same(x, m)
      headValid(x) := False
      hasPrev(x) := True
    }
    outKey := True
    valuePull := valueBytes =/= 0
    drain := valueBytes =/= 0
    outCount := outCount + 1
    sel := w
    wordNext := 0
    state := S.LoadHead
  }

  switch(state) {
    is(S.LoadHead) { // the winner's run: once its value is in the FIFO and its key has left the RAM
      when(!valuePull && !outKey) {
        inReady(True)
        wordNext := 0 // the key's first word is read for LoadKey whether or not a HEAD comes (no key leaves now)
        when(in.valid) {
          when(beat.kind === MergeKind.End) {
            ended(sel) := True
            state := S.Decide
          } elsewhen (beat.kind =/= EntryKind.Head || beat.keyBytes < 8) {
            fail("BAD_BLOCK", sel, taken(sel)) // a key without its 8-byte tag (or a beat out of its frame)
          } elsewhen (beat.keyBytes > c.keyLimit) {
            fail("KEY_TOO_LONG", sel, taken(sel))
          } otherwise {
            loadLen := beat.keyBytes
            loadValue := beat.valueBytes
            state := S.LoadKey
            // the compare's lengths against every head (for `sel`, the run's previous key)
            val newUser = (beat.keyBytes - 8).resize(keyLenBits)
            for (m <- 0 until K) {
              val oldUser = (keyLen(m) - 8).resize(keyLenBits)
              uMin(m) := Mux(newUser < oldUser, newUser, oldUser)
              sameLen(m) := newUser === oldUser
              newShorter(m) := newUser < oldUser
              decided(m) := False
            }
          }
        }
      }
    }
    is(S.LoadKey) {
      inReady(True)
      when(in.valid) {
        for (i <- 0 until K) when(sel === i) { keyMem(i)(rdAddr) := beat.data }
        wordNext := word + 1
        when(word === ((loadLen + (W - 1)) >> log2Up(W)).resize(c.wordBits + 1) - 1) { state := S.Check }
      }
    }
    is(S.Check) { // the final beat's lanes are registered: the new head's row and the run's order check
      // The head is written whatever the order check says: its verdict is registered (`orderBad`) and
      // `Decide`, the next clock, stops the job before it picks (no head is read again after an error).
      for (i <- 0 until K) when(sel === i) {
        val (prevLess, prevEqual, prevSame) = verdict(i)
        for (m <- 0 until K if m != i) {
          val (less, equal, same) = verdict(m)
          lt(i)(m) := less
          lt(m)(i) := !less && !equal
          eq(i)(m) := equal
          eq(m)(i) := equal
          sameUser(i)(m) := same
          sameUser(m)(i) := same
        }
        sameAsLast(i) := hasPrev(i) && prevSame
        headValid(i) := True
        keyLen(i) := loadLen
        valueLen(i) := loadValue
        tag(i) := loadTag
        taken(i) := taken(i) + 1
        state := S.Decide
        // the run's order: its previous key must sort strictly before the new one
        orderBad := hasPrev(i) && (prevLess || prevEqual)
      }
    }
    is(S.Decide) {
      when(orderBad) { // the head `Check` just wrote (entry taken - 1 of its run) broke its run's order
        fail("KEY_ORDER", sel, taken(sel) - 1)
      } elsewhen (anyLoad) { // at the start: every run's first head, one after the other
        sel := firstLoad
        state := S.LoadHead
      } elsewhen (!headValid.orR) {
        when(!outBusy) { state := S.OutEnd }
      } elsewhen (now.dup) {
        fail("KEY_ORDER", now.dupRun, taken(now.dupRun) - 1)
      } elsewhen (!outBusy) {
        io.output.valid := True // the winner's HEAD beat
        when(io.output.ready) { emitHead(winner, sameUser(_)(_), valueLen(winner)) }
      }
    }
    is(S.OutEnd) {
      io.output.valid := True
      outBeat.entry.kind := MergeKind.End
      outBeat.last := True
      when(io.output.ready) { state := S.Status }
    }
    is(S.Status) {
      when(io.status.ready) { state := S.Halt }
    }
    is(S.Halt) {}
  }

}

/** LevelDB's drop rule (DBImpl::DoCompactionWork, as the model's compaction.cc has it) on the merged
  * stream: an entry whose previous entry of the same user key has a sequence <= `smallestSnapshot` is
  * dropped; a deletion with sequence <= `smallestSnapshot` is dropped when its key is at its base level.
  * `isBase` gives one bit per merged entry, in order (Compaction::IsBaseLevelForKey of the entry's user
  * key, doc/merge.md); an entry whose type is neither 0 nor 1 is kept and hides nothing. */
case class DropFilter(c: MergeConfig, cuts: Boolean = false) extends Component {
  val io = new Bundle {
    val input = slave Stream (Fragment(MergeBeat(c)))
    val isBase = slave Stream (Bool())
    val stop = cuts generate (in Bool()) // with isBase: Compaction::ShouldStopBefore of the entry
    val inPart = cuts generate (in Bool()) // with isBase: the entry lies in the sub-compaction part (BaseLevelWalker)
    val smallestSnapshot = in UInt (64 bits)
    val output = master Stream (Fragment(EntryBeat(c.entry)))
    val entriesIn, entriesOut, dropped = out UInt (32 bits)
    val ended = out Bool() // the END beat passed
    val inEntry = out Bool() // between an entry's HEAD and its last beat
  }
  val MaxSequence = (BigInt(1) << 56) - 1
  val hasCurrent = RegInit(False)
  val lastSequence = Reg(UInt(56 bits)) init (U(MaxSequence, 56 bits))
  val inEntry = RegInit(False)
  val dropping = Reg(Bool())
  val entriesIn, entriesOut = RegInit(U(0, 32 bits))
  val ended = RegInit(False)
  io.entriesIn := entriesIn
  io.entriesOut := entriesOut
  io.dropped := entriesIn - entriesOut
  io.ended := ended
  io.inEntry := inEntry

  val b = io.input.payload
  val isHead = !inEntry && b.entry.kind === EntryKind.Head
  val typ = b.tag(7 downto 0).asUInt
  val sequence = b.tag(63 downto 8).asUInt
  val newKey = !hasCurrent || !b.sameUser
  val newer = Mux(newKey, U(MaxSequence, 56 bits), lastSequence)
  val drop = typ <= U(1) && (newer.resize(64) <= io.smallestSnapshot ||
    (typ === 0 && sequence.resize(64) <= io.smallestSnapshot && io.isBase.payload))
  // An entry outside the sub-compaction part is discarded as if it had never been merged: not counted, no CUT,
  // the drop rule's state untouched (it is a whole user key apart from the part's, so the next kept entry starts
  // a new user key either way).
  val outside = if (cuts) isHead && !io.inPart else False
  val dropNow = Mux(inEntry, dropping, isHead && (drop || outside))

  io.output.payload.fragment := b.entry
  io.output.payload.last := b.last
  val needBase = isHead
  io.output.valid := io.input.valid && !dropNow && (!needBase || io.isBase.valid)
  io.input.ready := (dropNow || io.output.ready) && (!needBase || io.isBase.valid)
  io.isBase.ready := io.input.valid && isHead && (dropNow || io.output.ready)

  // With cuts (the table engine): a CUT control beat (kind 3, count 0) leaves before a HEAD whose stop bit is
  // set, dropped or not (LevelDB closes the output before looking at the key), and the END beat carries the
  // table writer's END code.
  val cutLeft = cuts generate new Area {
    val done = RegInit(False) // the CUT before this HEAD has left
    when(io.input.valid && isHead && io.isBase.valid && io.stop && io.inPart && !done) {
      io.output.valid := True
      io.output.payload.fragment.kind := WriterControl.Kind
      io.output.payload.fragment.count := WriterControl.Cut
      io.output.payload.last := True
      io.input.ready := False
      io.isBase.ready := False
      when(io.output.ready) { done := True }
    }
    when(io.input.fire && isHead) { done := False }
    when(!inEntry && b.entry.kind === MergeKind.End) { io.output.payload.fragment.count := WriterControl.End }
  }

  when(io.input.fire) {
    when(!inEntry && b.entry.kind === MergeKind.End) {
      ended := True
    } elsewhen (isHead) {
      dropping := drop || outside
      inEntry := !b.last
      when(!outside) {
        entriesIn := entriesIn + 1
        when(!drop) { entriesOut := entriesOut + 1 }
        when(typ > U(1)) {
          hasCurrent := False
          lastSequence := MaxSequence
        } otherwise {
          hasCurrent := True
          lastSequence := sequence
        }
      }
    } otherwise {
      inEntry := !b.last
    }
  }
}

/** The entry stream from W (`n.bytes`) to 2W bytes a beat: a KEY or VALUE beat is joined with the next one of its
  * key or value (the first in the low lanes) unless it is the final one; HEAD and END beats pass alone. The key's
  * final beat is known from the HEAD's length, the value's from `last`. No register on the way (a FIFO follows). */
case class EntryWiden(n: BlockReaderConfig) extends Component {
  val wide = n.copy(bytes = 2 * n.bytes)
  val io = new Bundle {
    val input = slave Stream (Fragment(EntryBeat(n)))
    val output = master Stream (Fragment(EntryBeat(wide)))
  }
  val N = n.bytes
  val keyLeft = Reg(UInt(n.keyLenBits bits)) // the key's bytes not yet passed
  val half = RegInit(False) // `low` holds the first half of the wide beat
  val low = Reg(Bits(8 * N bits))
  val b = io.input.fragment
  val isKey = b.kind === EntryKind.Key
  val part = isKey || b.kind === EntryKind.Value
  val hold = part && !half && !(io.input.last || (isKey && keyLeft <= N))
  io.output.valid := io.input.valid && !hold
  io.input.ready := hold || io.output.ready
  io.output.last := io.input.last
  io.output.fragment.kind := b.kind
  io.output.fragment.keyBytes := b.keyBytes
  io.output.fragment.valueBytes := b.valueBytes
  io.output.fragment.data := Mux(half, b.data ## low, B(0, 8 * N bits) ## b.data)
  io.output.fragment.count := Mux(half, b.count.resize(wide.countBits) + N, b.count.resize(wide.countBits))
  when(io.input.fire) {
    half := hold
    when(hold) { low := b.data }
    when(b.kind === EntryKind.Head) { keyLeft := b.keyBytes }
    when(isKey) { keyLeft := keyLeft - N }
  }
}

/** The entry stream from 2W to W (`n.bytes`) bytes a beat: a KEY or VALUE beat of more than W bytes leaves as two
  * (its low lanes first); every other beat (HEAD, END, the writer's control beats) as it is, its low lanes. */
case class EntryNarrow(n: BlockReaderConfig) extends Component {
  val wide = n.copy(bytes = 2 * n.bytes)
  val io = new Bundle {
    val input = slave Stream (Fragment(EntryBeat(wide)))
    val output = master Stream (Fragment(EntryBeat(n)))
  }
  val N = n.bytes
  val second = RegInit(False) // the split beat's high half is next
  val b = io.input.fragment
  val split = (b.kind === EntryKind.Key || b.kind === EntryKind.Value) && b.count > N
  io.output.valid := io.input.valid
  io.input.ready := io.output.ready && (!split || second)
  io.output.last := io.input.last && (!split || second)
  io.output.fragment.kind := b.kind
  io.output.fragment.keyBytes := b.keyBytes
  io.output.fragment.valueBytes := b.valueBytes
  io.output.fragment.data := Mux(second, b.data(16 * N - 1 downto 8 * N), b.data(8 * N - 1 downto 0))
  io.output.fragment.count := Mux(second, (b.count - N).resize(n.countBits),
    Mux(split, U(N, n.countBits bits), b.count.resize(n.countBits)))
  when(io.output.fire && split) { second := !second }
}

/** Merge and drop status: the merger's verdict with the drop filter's counters. */
case class MergeDropStatus(c: MergeConfig) extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val run = UInt(c.runBits bits)
  val entry = UInt(32 bits)
  val entriesIn, entriesOut, dropped = UInt(32 bits)
}

/** The merge and drop stage: K runs in (the block readers' entry streams, each ended by an END beat), the
  * kept entries out in internal-key order and an END beat, then one status. A soft reset returns it to
  * idle from any state. */
case class MergeDrop(c: MergeConfig = MergeConfig()) extends Component {
  val io = new Bundle {
    val inputs = Vec(slave Stream (Fragment(EntryBeat(c.port))), c.ways)
    val isBase = c.walker.isEmpty generate slave(Stream(Bool()))
    val baseLoad = c.walker.map(w => slave(Stream(BaseLoad(w))))
    val smallestSnapshot = in UInt (64 bits)
    val gpLimit = c.walker.map(_ => in UInt (64 bits)) // 10 x max_file_size: ShouldStopBefore's limit
    val output = master Stream (Fragment(EntryBeat(c.port)))
    val status = master Stream (MergeDropStatus(c))
    val softReset = in Bool()
  }
  val soft = ClockDomain(clock = ClockDomain.current.readClockWire,
    reset = ClockDomain.current.readResetWire || io.softReset, config = ClockDomain.current.config)
  val area = soft(new Area {
    val merger = MergerCore(c)
    val drop = DropFilter(c, cuts = c.walker.isDefined)
    // A stage wider than its ports: each run's beats joined in pairs into a FIFO that fills while other runs win
    // (the readers run in parallel), so the winner's entry comes at the stage's width.
    for (i <- 0 until c.ways) {
      if (c.widened) {
        val widen = EntryWiden(c.port)
        widen.io.input << io.inputs(i)
        merger.io.inputs(i) << widen.io.output.queue(c.inputFifo)
      } else merger.io.inputs(i) << io.inputs(i)
    }
    // A register slice both ways between the select and the drop decision (the drop's 64-bit compares
    // and its ready never share a clock with the winner's pick).
    val merged = merger.io.output.s2mPipe().m2sPipe()
    c.walker match {
      case None =>
        drop.io.input << merged
        drop.io.isBase << io.isBase
      case Some(wc) =>
        // The walker sees every merged entry's key; the drop filter's copy waits in a FIFO that holds a
        // HEAD and a whole key, so the bit of an entry is always made before its HEAD is due.
        val walker = BaseLevelWalker(wc)
        walker.io.load << io.baseLoad.get
        val (toWalker, toDrop) = StreamFork2(merged)
        if (c.widened) {
          // The walker (at the ports' width) needs each entry's HEAD and key, not its value: the VALUE beats are
          // left out (`last` then on the key's final beat) and the key's beats split in two.
          val keyLeft = Reg(UInt(c.entry.keyLenBits bits)) // the key's bytes not yet passed
          val kind = toWalker.fragment.entry.kind
          val keys = toWalker.throwWhen(kind === EntryKind.Value)
          when(keys.fire) {
            when(kind === EntryKind.Head) { keyLeft := toWalker.fragment.entry.keyBytes }
            when(kind === EntryKind.Key) { keyLeft := keyLeft - c.W }
          }
          val narrow = EntryNarrow(c.port)
          narrow.io.input.translateFrom(keys)((w, m) => {
            w.fragment := m.fragment.entry
            w.last := m.last || (kind === EntryKind.Key && keyLeft <= c.W)
          })
          walker.io.input << narrow.io.output
        } else {
          walker.io.input.translateFrom(toWalker)((w, m) => { w.fragment := m.fragment.entry; w.last := m.last })
        }
        walker.io.tag := toWalker.fragment.tag // with a HEAD, which no narrowing holds back
        drop.io.input << toDrop.queue(c.keyWords + 4)
        drop.io.isBase.translateFrom(walker.io.bits)(_ := _.isBase)
        drop.io.stop := walker.io.bits.stop
        drop.io.inPart := walker.io.bits.inPart
        walker.io.gpLimit := io.gpLimit.get
    }
    drop.io.smallestSnapshot := io.smallestSnapshot
    if (c.widened) {
      val narrow = EntryNarrow(c.port) // the kept entries at the ports' width (the split holds the drop's beat)
      narrow.io.input << drop.io.output
      io.output << narrow.io.output
    } else io.output << drop.io.output
    val st = merger.io.status
    // the status waits for the drop filter to finish what the merger sent (never mid-entry)
    val ready = st.error && !drop.io.inEntry && !merged.valid && !drop.io.input.valid || drop.io.ended
    io.status.valid := st.valid && ready
    st.ready := io.status.ready && ready
    io.status.error := st.error
    io.status.code := st.code
    io.status.run := st.run
    io.status.entry := st.entry
    io.status.entriesIn := drop.io.entriesIn
    io.status.entriesOut := drop.io.entriesOut
    io.status.dropped := drop.io.dropped
  })
}

/** `table_engine.GenerateMerge [--bytes 4|8|16|32] [--ways 2|4|8] [--key-limit N] [--merge-bytes M] --out DIR`:
  * DIR/MergeDrop.v, the table engine's merge and drop stage; its ports `--bytes` wide, inside M (0: the same;
  * twice `--bytes`: the wider stage). */
object GenerateMerge extends Generator("build/gen/table_engine_merge_w16_k4",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("ways", 4, Seq(2, 4, 8)),
      Gen.intOpt("key-limit", 1032, min = 1024), Gen.intOpt("merge-bytes", 0, Seq(0, 8, 16, 32, 64))) {
  def top(a: Gen.Args) = {
    val m = a.int("merge-bytes")
    if (m != 0 && m != a.int("bytes") && m != 2 * a.int("bytes")) {
      System.err.println(s"$prog: error: --merge-bytes $m: the ports' ${a.int("bytes")} or twice that")
      sys.exit(2)
    }
    val inside = if (m == 0) a.int("bytes") else m
    MergeDrop(MergeConfig(inside, a.int("ways"), a.int("key-limit"), portBytes = a.int("bytes")))
  }
}
