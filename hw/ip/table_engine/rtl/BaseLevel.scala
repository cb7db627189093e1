package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of the base-level walker: `bytes` per beat, the longest internal key, the deeper levels a job may
  * name (`maxLevels`), their files in all (`maxRanges`) and the words of W bytes that hold the files'
  * (smallest, largest) user keys (`rangeWords`, each key from a word boundary). */
case class BaseLevelConfig(bytes: Int = 16, keyLimit: Int = 1032, maxLevels: Int = 8, maxRanges: Int = 1024,
                           rangeWords: Int = 8192, maxGrandparents: Int = 1024) {
  val entry = BlockReaderConfig(bytes, keyLimit)
  require(isPow2(maxRanges) && isPow2(rangeWords) && rangeWords <= 65536 && maxRanges <= 65536 &&
    isPow2(maxGrandparents) && maxGrandparents <= 65536 && maxLevels >= 1 && maxLevels <= 255)
  val levelBits = log2Up(maxLevels + 1)
  val rangeBits = log2Up(maxRanges)
  val wordBits = log2Up(rangeWords)
  val gpBits = log2Up(maxGrandparents)
}

/** What a job loads into the walker before its entries, one beat each (`last` on the job's final one):
  * `target` KEYS: word `addr` of the range-key RAM (`data`, W bytes); RANGE: file `addr` (levels' files one
  * level after the other, each level in key order) as `data` = smallest's word offset (bits 0-15), its
  * length in bytes (16-31), largest's word offset (32-47), its length (48-63); LEVEL: level `addr` (0 =
  * the shallowest deeper level) as `data` = its first file (bits 0-15), its file count (16-31); LEVELS:
  * `data` = the number of deeper levels (0: every key is at its base level); the grandparents (the level
  * below the output, for Compaction::ShouldStopBefore), in key order: GP: grandparent `addr` as `data` = its
  * largest internal key's word offset in the range-key RAM (bits 0-15), its length (16-31), the file's size
  * (32-63); GP_TAG: its largest key's 8-byte tag (`data` bits 0-63); GP_COUNT: `data` = how many; BOUND: a
  * sub-compaction part's user-key bound (`addr` 0: lo, 1: hi; the part holds the keys in (lo, hi], a bound not
  * loaded is open) as `data` = its word offset in the range-key RAM (bits 0-15), its length in bytes (16-31). */
object BaseLoadTarget {
  val Keys = 0
  val Range = 1
  val Level = 2
  val Levels = 3
  val Gp = 4
  val GpTag = 5
  val GpCount = 6
  val Bound = 7
}
case class BaseLoad(c: BaseLevelConfig) extends Bundle {
  val target = UInt(3 bits)
  val addr = UInt(16 bits)
  val data = Bits(scala.math.max(8 * c.bytes, 64) bits)
}

/** Compaction::IsBaseLevelForKey for every merged entry, as the model's BaseLevelCheck: per deeper level a
  * pointer to the first file whose largest user key is not below the keys seen (LevelDB's level_ptrs_),
  * moved forward only, so the walk over a job is linear in its entries plus its files. `input` is the
  * merged stream (every entry, dropped or not); per HEAD one bit leaves on `isBase`, after the entry's key:
  * the key is written into a key RAM as its KEY beats pass, then compared one word (W bytes) a clock with
  * the file at each level's pointer: above its largest, the pointer moves; else within [smallest, largest]
  * makes the key not base (the walk stops there, as the model returns). VALUE beats pass while it walks;
  * the next HEAD waits for the walk.
  *
  * A sub-compaction part (model/subcompaction.h) keeps only the user keys in its (lo, hi]. The check sits here,
  * once on the merged stream before the walk: a part holds every version of its user keys, so the drop rule sees
  * whole user keys and stays exact, and an entry outside the part must not move the walk's state either
  * (ShouldStopBefore counts grandparents once a key has been seen, and restarts per part as the model's does). An
  * entry outside leaves `inPart` low and touches nothing; the drop filter then discards it uncounted. The readers'
  * windows (TableCmd) overlap only in the blocks that straddle a split, so the few entries filtered here are those
  * of such blocks. The bounds are compared as the levels' keys are, one word a clock, only when loaded: a whole
  * job's walk and its clocks are unchanged. */
case class BaseLevelWalker(c: BaseLevelConfig) extends Component {
  val io = new Bundle {
    val load = slave Stream (BaseLoad(c))
    val input = slave Stream (Fragment(EntryBeat(c.entry)))
    val tag = in Bits (64 bits) // with a HEAD beat: the entry's tag (sequence << 8 | type)
    val gpLimit = in UInt (64 bits) // 10 x max_file_size
    val bits = master Stream (WalkBits())
  }
  val W = c.bytes
  val keyMem = Mem(Bits(8 * W bits), c.entry.keyWords)
  val rangeMem = Mem(Bits(8 * W bits), c.rangeWords)
  val rangeDesc = Mem(Bits(64 bits), c.maxRanges)
  val levelStart = Vec(Reg(UInt(16 bits)), c.maxLevels)
  val levelCount = Vec(Reg(UInt(16 bits)), c.maxLevels)
  val levels = RegInit(U(0, c.levelBits bits))
  val ptr = Vec(RegInit(U(0, 16 bits)), c.maxLevels)
  val gpDesc = Mem(Bits(64 bits), c.maxGrandparents)
  val gpTag = Mem(Bits(64 bits), c.maxGrandparents)
  val gpCount = RegInit(U(0, 16 bits))
  val gpIdx = RegInit(U(0, 16 bits))
  val overlapped = RegInit(U(0, 64 bits))
  val seenKey = RegInit(False)
  val hasLo, hasHi = RegInit(False) // the part's bounds, loaded (the merge's soft reset clears them per job)
  val loOff, loLen, hiOff, hiLen = Reg(UInt(16 bits))

  // ---- the job's load ----
  io.load.ready := True
  when(io.load.fire) {
    val d = io.load.data
    switch(io.load.target) {
      is(BaseLoadTarget.Keys) { rangeMem.write(io.load.addr.resize(c.wordBits), d(8 * W - 1 downto 0)) }
      is(BaseLoadTarget.Range) { rangeDesc.write(io.load.addr.resize(c.rangeBits), d(63 downto 0)) }
      is(BaseLoadTarget.Level) {
        for (l <- 0 until c.maxLevels) when(io.load.addr === l) {
          levelStart(l) := d(15 downto 0).asUInt
          levelCount(l) := d(31 downto 16).asUInt
        }
      }
      is(BaseLoadTarget.Levels) { levels := d(c.levelBits - 1 downto 0).asUInt }
      is(BaseLoadTarget.Gp) { gpDesc.write(io.load.addr.resize(c.gpBits), d(63 downto 0)) }
      is(BaseLoadTarget.GpTag) { gpTag.write(io.load.addr.resize(c.gpBits), d(63 downto 0)) }
      is(BaseLoadTarget.GpCount) { gpCount := d(15 downto 0).asUInt }
      is(BaseLoadTarget.Bound) {
        when(io.load.addr(0)) {
          hasHi := True; hiOff := d(15 downto 0).asUInt; hiLen := d(31 downto 16).asUInt
        } otherwise {
          hasLo := True; loOff := d(15 downto 0).asUInt; loLen := d(31 downto 16).asUInt
        }
      }
    }
  }

  object P extends SpinalEnum {
    val Sel, Large, Small, GpSel, GpCmp, Lo, Hi = newElement()
  }
  val phase = RegInit(P.Sel)

  // ---- the merged stream: the key into the RAM ----
  val inEntry = RegInit(False)
  val keyWord = Reg(UInt(log2Up(c.entry.keyWords + 1) bits))
  val userLen = Reg(UInt(c.entry.keyLenBits bits))
  val walking = RegInit(False)
  val keyTag = Reg(Bits(64 bits))
  val out = Stream(WalkBits())
  io.bits << out.queue(4)
  out.valid := False
  out.payload.isBase := True
  out.payload.stop := False
  out.payload.inPart := True

  val b = io.input.payload
  val isHead = !inEntry && b.fragment.kind === EntryKind.Head
  io.input.ready := !(isHead && walking)
  when(io.input.fire) {
    inEntry := !b.last && !(!inEntry && b.fragment.kind === MergeKind.End)
    when(isHead) {
      keyWord := 0
      keyTag := io.tag
      userLen := (b.fragment.keyBytes - 8).resized // the merger refuses keys under the 8-byte tag
    } elsewhen (inEntry && b.fragment.kind === EntryKind.Key) {
      keyMem.write(keyWord.resized, b.fragment.data)
      keyWord := keyWord + 1
      // the key's final beat: a count below W, or the word that reaches the key's length
      when(((keyWord.resize(16) + 1) * W) >= (userLen.resize(16) + 8)) {
        walking := True
        phase := Mux(hasLo, P.Lo, Mux(hasHi, P.Hi, P.Sel)) // the part's bounds first (Sel after every walk)
      }
    }
  }

  // ---- the walk ----
  val lvl = Reg(UInt(c.levelBits bits)) init (0)
  val word = Reg(UInt(c.wordBits bits)) init (0)
  val desc = Reg(Bits(64 bits))
  val smallOff = desc(15 downto 0).asUInt
  val smallLen = desc(31 downto 16).asUInt
  val largeOff = desc(47 downto 32).asUInt
  val largeLen = desc(63 downto 48).asUInt
  val lvlSafe = lvl.resize(log2Up(c.maxLevels))

  // bytewise compare of the user key with a range key, one word a clock: lt / eq / gt once `decided`
  val gpOff = desc(15 downto 0).asUInt
  val gpUserLen = desc(31 downto 16).asUInt - 8 // the grandparent's largest key is an internal key
  val gpSize = desc(63 downto 32).asUInt
  val otherOff = Mux(phase === P.Large, largeOff, Mux(phase === P.Lo, loOff, Mux(phase === P.Hi, hiOff, smallOff)))
  val otherLen = Mux(phase === P.Large, largeLen, Mux(phase === P.GpCmp, gpUserLen,
    Mux(phase === P.Lo, loLen, Mux(phase === P.Hi, hiLen, smallLen))))
  // Every RAM is read synchronously, so each step that reads one first spends a clock with `primed` low
  // presenting the address; once primed, a compare reads the next word ahead (word + 1) whether or not this
  // one decides (a decision leaves the phase, and the next phase primes again): no compare result reaches
  // a RAM address.
  val primed = RegInit(False)
  val ahead = word.resize(16) + primed.asUInt.resize(16)
  val a = keyMem.readSync(ahead.resize(log2Up(c.entry.keyWords)))
  val o = rangeMem.readSync((otherOff + ahead).resize(c.wordBits))
  val rangeDescOut = rangeDesc.readSync((levelStart(lvlSafe) + ptr(lvlSafe)).resize(c.rangeBits))
  // the grandparent's index is known a clock ahead (GpCmp moves it to the next), so GpSel needs no priming
  val gpAddr = (gpIdx + (phase === P.GpCmp).asUInt.resize(16)).resize(c.gpBits)
  val gpDescOut = gpDesc.readSync(gpAddr)
  val gpTagOut = gpTag.readSync(gpAddr)
  val minLen = Mux(userLen.resize(16) < otherLen, userLen.resize(16), otherLen)
  val base = word.resize(16) * W
  val diff = Bits(W bits)
  for (i <- 0 until W) diff(i) := (base + i) < minLen && a(8 * i + 7 downto 8 * i) =/= o(8 * i + 7 downto 8 * i)
  val first = OHMasking.first(diff)
  val aByte = MuxOH(first, (0 until W).map(i => a(8 * i + 7 downto 8 * i).asUInt))
  val oByte = MuxOH(first, (0 until W).map(i => o(8 * i + 7 downto 8 * i).asUInt))
  val lastWord = (base + W) >= minLen
  val decided = diff.orR || lastWord
  val lt = Mux(diff.orR, aByte < oByte, userLen.resize(16) < otherLen)
  val eq = !diff.orR && userLen.resize(16) === otherLen

  val baseBit = Reg(Bool())
  val descTag = Reg(Bits(64 bits))
  // The entry's verdict leaves (if the queue takes it; otherwise the step that made it runs again).
  def emit(isBase: Bool): Unit = {
    val stop = overlapped > io.gpLimit
    out.valid := True
    out.payload.isBase := isBase
    out.payload.stop := stop
    when(out.ready) {
      seenKey := True
      primed := False
      when(stop) { overlapped := 0 }
      walking := False
      lvl := 0
      word := 0
      phase := P.Sel
    }
  }
  // An entry outside the part: its verdict leaves with nothing of the walk's state moved.
  def emitOutside(): Unit = {
    out.valid := True
    out.payload.inPart := False
    when(out.ready) {
      primed := False
      walking := False
      word := 0
      phase := P.Sel
    }
  }
  // The base walk's answer: straight out when no grandparent is left to pass, else its first compare.
  def finish(isBase: Bool): Unit = {
    baseBit := isBase
    primed := False
    when(gpIdx >= gpCount) { emit(isBase) } otherwise { phase := P.GpSel }
  }

  // One bound's compare, a word a clock: the key at or below the bound, or above it.
  def boundStep(atOrBelow: => Unit, above: => Unit): Unit = {
    primed := True
    when(primed) { word := word + 1 }
    when(primed && decided) {
      word := 0
      primed := False
      when(lt || eq) { atOrBelow } otherwise { above }
    }
  }

  when(walking) {
    switch(phase) {
      // The part's bounds: above lo (strictly), then at or below hi.
      is(P.Lo) { boundStep(atOrBelow = emitOutside(), above = phase := Mux(hasHi, P.Hi, P.Sel)) }
      is(P.Hi) { boundStep(atOrBelow = phase := P.Sel, above = emitOutside()) }
      is(P.Sel) {
        word := 0
        when(lvl >= levels) {
          finish(True)
        } elsewhen (ptr(lvlSafe) >= levelCount(lvlSafe)) {
          lvl := lvl + 1
        } elsewhen (!primed) {
          primed := True
        } otherwise {
          desc := rangeDescOut
          primed := False
          phase := P.Large
        }
      }
      is(P.Large) {
        primed := True
        when(primed) { word := word + 1 }
        when(primed && decided) {
          word := 0
          primed := False
          when(lt || eq) {
            phase := P.Small
          } otherwise { // past this file's largest key: LevelDB's level_ptrs_ moves on
            ptr(lvlSafe) := ptr(lvlSafe) + 1
            phase := P.Sel
          }
        }
      }
      is(P.Small) {
        primed := True
        when(primed) { word := word + 1 }
        when(primed && decided) {
          word := 0
          primed := False
          when(!lt) {
            finish(False) // within [smallest, largest]: a deeper level holds the key
          } otherwise {
            lvl := lvl + 1
            phase := P.Sel
          }
        }
      }
      // Compaction::ShouldStopBefore, as the model's GrandparentCheck: grandparents whose largest internal
      // key is below this key add their sizes (once a key has been seen); over the limit: stop before it.
      is(P.GpSel) {
        word := 0
        when(gpIdx >= gpCount) {
          emit(baseBit)
        } otherwise {
          desc := gpDescOut
          descTag := gpTagOut
          primed := False
          phase := P.GpCmp
        }
      }
      is(P.GpCmp) {
        primed := True
        when(primed) { word := word + 1 }
        when(primed && decided) {
          word := 0
          primed := False
          // internal key order: user key ascending, then the tag descending
          val after = Mux(eq, keyTag.asUInt < descTag.asUInt, !lt)
          when(after) {
            when(seenKey) { overlapped := overlapped + gpSize }
            gpIdx := gpIdx + 1
            phase := P.GpSel
          } otherwise { // not past it: the scan stops here for this key
            emit(baseBit)
          }
        }
      }
    }
  }
}

/** The walker's verdict on one merged entry: IsBaseLevelForKey, and ShouldStopBefore (close the output before
  * it). */
case class WalkBits() extends Bundle {
  val isBase = Bool()
  val stop = Bool()
  val inPart = Bool() // the user key lies in the sub-compaction part's (lo, hi] (always, without bounds)
}
