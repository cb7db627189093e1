package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of a block builder: `bytes` per beat (as the reader's), the longest internal key (the previous-key
  * RAM, model/limits.h kMaxInternalKeyBytes) and the restart offsets one block may hold (the restart RAM;
  * a block that would need more is closed before the entry, see doc/rtl.md). */
case class BlockBuilderConfig(bytes: Int = 16, keyLimit: Int = 1032, maxRestarts: Int = 1024) {
  val entry = BlockReaderConfig(bytes, keyLimit)
  require(maxRestarts >= 2 && isPow2(maxRestarts), s"restart RAM of $maxRestarts: a power of two >= 2")
  /** Bytes one push into the output packer may carry: a beat, or the entry's three varints (15 bytes). */
  val push = scala.math.max(bytes, 16)
}

/** A push into the block builder's output packer: `count` bytes from lane 0 (the rest zeroed on the way in); `fin` the block's
  * last (its CRC), `typeByte` the trailer's type byte (both kept out of the CRC). */
case class PackerPush(bytes: Int) extends Bundle {
  val data = Bits(8 * bytes bits)
  val count = UInt(log2Up(bytes + 1) bits)
  val fin = Bool()
  val typeByte = Bool()
}

/** The entry stream's fourth kind: a FLUSH beat (no data) closes the block being built. */
object BuilderKind {
  val Flush = 3
}

/** One block written: its contents' size (the block handle's size, the 5-byte trailer excluded), its entries,
  * and whether an entry was dropped because its key exceeded the key limit (KEY_TOO_LONG). */
case class BlockBuilderStatus() extends Bundle {
  val size = UInt(32 bits)
  val entries = UInt(32 bits)
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
}

/** Writes LevelDB data blocks (block_builder.cc, BlockBuilder::Add / Finish) from the block reader's entry
  * framing: per entry the shared prefix with the previous key (none at a restart point, every
  * `restartInterval` entries), the three varints, the key's non-shared bytes, the value; on a FLUSH beat the
  * restart array, its count and the trailer (type 0, masked CRC32C). `output`: the block's bytes from
  * lane 0, full beats but the final one, `last` on it; one `status` per block. See doc/rtl.md. */
case class BlockBuilder(c: BlockBuilderConfig = BlockBuilderConfig()) extends Component {
  val io = new Bundle {
    val entries = slave Stream (Fragment(EntryBeat(c.entry)))
    val restartInterval = in UInt (16 bits)
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (BlockBuilderStatus())
    /** Between entries: the previous entry is in the block, a HEAD or FLUSH beat is taken next. */
    val idle = out Bool()
    /** LevelDB's BlockBuilder::CurrentSizeEstimate (contents + restart array + count), exact when `idle`:
      * the table writer's flush rule compares it with block_size. */
    val estimate = out UInt (32 bits)
    /** One clock as the entry's value starts: the block's contents size once the value is in (exact when the
      * block closes after this entry, as a block past the table writer's block buffer always does). */
    val ahead = master Flow (UInt(32 bits))
  }
  val W = c.bytes
  val P = c.push
  val Cap = P + W
  val KW = c.entry.keyWords
  def min(a: UInt, b: UInt): UInt = Mux(a < b, a, b)

  // ---- output packer: pushes of 0..P bytes in, W-byte beats out ----
  val buf = Reg(Bits(8 * Cap bits)) init (0)
  val fill = Reg(UInt(log2Up(Cap + 1) bits)) init (0)
  val closing = RegInit(False) // the block's final bytes are in: drain, `last` on the final beat
  val push = Stream(PackerPush(P)) // what the state machine pushes, `data` not yet masked to `count`
  push.valid := False
  push.data := 0
  push.count := 0
  push.fin := False
  push.typeByte := False
  io.output.valid := fill >= W || (closing && fill =/= 0)
  io.output.data := buf(0, 8 * W bits)
  io.output.count := Mux(fill >= W, U(W), fill).resized
  io.output.last := closing && fill <= W
  val popped = Mux(io.output.fire, io.output.count.resize(fill.getWidth), U(0, fill.getWidth bits))
  val keptFill = fill - popped
  // The bytes above `fill` are zero (a push is masked to its count, a pop shifts zeros in) and a beat leaves full
  // but the block's last, which empties the packer: so a pop is a shift by one whole beat (the last one then
  // leaves zeros), a 2:1 choice, not a shifter by any byte count.
  val kept = Mux(io.output.fire, (buf >> (8 * W)).resize(8 * Cap), buf)
  val pushMasked = Bits(8 * P bits)
  for (i <- 0 until P) pushMasked(8 * i, 8 bits) := Mux(U(i) < push.count, push.data(8 * i, 8 bits), B(0, 8 bits))
  // A push goes through a register slice both ways before the packer shifts it in at its fill: `pend` (m2sPipe)
  // ends the path from the key compare through the header at a register, not behind the packer's shifter, and the
  // slice's skid (s2mPipe) makes the builder's ready a register, not the packer's fill through `io.entries.ready`
  // into every state's enable. A push a clock still passes; a block's bytes and its status leave a clock later.
  val pend = push.translateWith {
    val masked = cloneOf(push.payload)
    masked := push.payload
    masked.data.allowOverride := pushMasked
    masked
  }.s2mPipe().m2sPipe()
  pend.ready := keptFill <= W && !closing
  val take = pend.fire
  val pushReady = push.ready
  val pushFire = push.fire
  // The block's final push went in and has not reached the packer yet (in the skid or `pend`).
  val finInFlight = RegInit(False) setWhen (pushFire && push.fin) clearWhen (take && pend.fin)
  buf := kept.resized
  fill := keptFill
  when(take) {
    buf := (kept.resize(8 * Cap) | (pend.data.resize(8 * Cap) << (keptFill << 3)).resize(8 * Cap))
    fill := keptFill + pend.count
    when(pend.fin) { closing := True }
  }
  when(io.output.fire && io.output.last) { closing := False }

  // The CRC folds a push as the packer takes it from `pend`, so its XOR network starts at a register, not on the
  // path from the key compare through the header. The type byte is kept out of it and folded in at the trailer
  // (one zero byte on the state: a shallow XOR network). The restart count is folded before S.Crc's push reads the
  // state: that push is taken only with the skid empty, so the type byte has reached `pend`, which it enters only
  // as the count ahead of it leaves for the packer.
  val crc = Crc32cUnit(P)
  crc.io.input.valid := take && !pend.fin && !pend.typeByte
  crc.io.input.data := pend.data
  crc.io.input.count := pend.count
  crc.io.clear := False
  val trailerCrc = Crc32c.mask(~Crc32c.advance((~crc.io.crc).asBits, 1).asUInt)

  // ---- block state ----
  object S extends SpinalEnum {
    val Idle, Key, Hdr, KeyOut, Value, Drop, Restarts, Count, Type, Crc, Status = newElement()
  }
  val state = RegInit(S.Idle)
  val offset = Reg(UInt(32 bits)) init (0) // contents bytes pushed so far
  when(pushFire && !push.fin) { offset := offset + push.count }
  val restartCount = Reg(UInt(log2Up(c.maxRestarts + 1) bits)) init (1) // restart 0 at offset 0
  val sinceRestart = Reg(UInt(16 bits)) init (0)
  val entryCount = Reg(UInt(32 bits)) init (0)
  val tooLong = RegInit(False)
  val size = Reg(UInt(32 bits))
  val restartMem = Mem(UInt(32 bits), c.maxRestarts)
  // The restart array leaves in order, so each offset is read a clock ahead through a synchronous port (block
  // RAM, not LUT RAM with a select of maxRestarts ways): the word for `ri` is on the port in every clock of S.Restarts
  // but the first, whose restart 0 is the constant 0. A restart is written only in Idle, clocks before it is read.
  val riNext = UInt(log2Up(c.maxRestarts + 1) bits)
  val restartWord = restartMem.readSync(riNext.resized)

  // ---- keys: two banks, the entry's key and the previous one, swapped per entry ----
  val keyMem = Mem(Bits(8 * W bits), 2 * KW)
  val bank = RegInit(False) // the bank the current key goes to
  val prevLen = Reg(UInt(c.entry.keyLenBits bits)) init (0)
  val keyLen = Reg(UInt(c.entry.keyLenBits bits))
  val valueLen = Reg(UInt(32 bits))
  // The value length's varint, made as the HEAD beat is taken (the header's third field, not on its path).
  val valueVarint = Reg(Bits(40 bits))
  val valueVarintLen = Reg(UInt(3 bits))
  // The previous key's bytes still to compare from the current key beat on: min(previous, current key length)
  // less the beats compared, at least 0.
  val cmpLeft = Reg(UInt(c.entry.keyLenBits bits))
  // cmpLeft's lanes as a register: lane i compares while i < cmpLeft, set with cmpLeft from its next value.
  val laneOn = Reg(Bits(W bits))
  def setCmpLeft(v: UInt): Unit = {
    cmpLeft := v.resized
    laneOn := Cat((0 until W).map(i => v > i)) // Cat: the first element is bit 0
  }
  val keyLeft = Reg(UInt(c.entry.keyLenBits bits)) // the key's bytes from the current KEY beat on
  val keyBeat = Reg(UInt(log2Up(KW + 1) bits))
  val shared = Reg(UInt(c.entry.keyLenBits bits))
  val matching = Reg(Bool())
  val rdPos = Reg(UInt(c.entry.keyLenBits bits))
  val ri = Reg(UInt(log2Up(c.maxRestarts + 1) bits))
  io.idle := state === S.Idle
  io.estimate := offset + (restartCount << 2).resize(32) + 4
  val wasValue = RegNext(state === S.Value) init (False)
  io.ahead.valid := state === S.Value && !wasValue
  io.ahead.payload := io.estimate + valueLen
  def keyAddr(b: Bool, word: UInt): UInt = (b.asUInt.resize(log2Up(2 * KW)) * KW + word.resize(log2Up(2 * KW))).resize(log2Up(2 * KW))
  // The previous key's word for the key beat being compared, read a clock ahead (a registered read, so the RAM's
  // read is not on the path from the compare through the header into the packer): in Idle word 0, in Key the word
  // after the beat's. Where the beat is not taken the word read is the next one, so the current word is held.
  // The key being written is in the other bank, so a read never sees a write of the same clock.
  val prevAhead = keyMem.readSync(keyAddr(!bank, Mux(state === S.Key, keyBeat + 1, U(0)).resized))
  val prevHeld = Reg(Bits(8 * W bits))
  val prevFresh = RegNext(io.entries.fire) init (False) // the word read last clock is the beat's
  val prevWord = Mux(prevFresh, prevAhead, prevHeld)
  prevHeld := prevWord

  val beat = io.entries.fragment
  io.entries.ready := False
  io.status.valid := state === S.Status && !finInFlight && !closing // after the block's last beat left
  io.status.size := size
  io.status.entries := entryCount
  io.status.error := tooLong
  io.status.code := Mux(tooLong, U(ErrorCodes("KEY_TOO_LONG"), ErrorCodes.Width bits), U(0, ErrorCodes.Width bits))

  // LevelDB requires an interval >= 1 (BlockBuilder asserts it); 0 is taken as 1, never a restart at offset 0 twice.
  val interval = Mux(io.restartInterval === 0, U(1, 16 bits), io.restartInterval)
  val isRestart = sinceRestart >= interval
  val full = isRestart && restartCount === c.maxRestarts

  /** The entry's three varints (shared, non-shared, value length) as one push of up to 15 bytes. */
  def header(sh: UInt, nonShared: UInt): (Bits, UInt) = {
    val v1 = Varint.encode(sh.resize(32))
    val v2 = Varint.encode(nonShared.resize(32))
    val v3 = (valueVarint, valueVarintLen)
    val bytes = (v1._1.resize(8 * P) | (v2._1.resize(8 * P) << (v1._2 << 3)).resize(8 * P) |
      (v3._1.resize(8 * P) << ((v1._2 +^ v2._2) << 3)).resize(8 * P))
    (bytes, (v1._2 +^ v2._2 +^ v3._2).resize(log2Up(P + 1)))
  }
  /** After the header: the non-shared key bytes, else the value, else the next entry. */
  def afterHeader(sh: UInt): Unit = {
    rdPos := sh
    when(keyLen =/= sh) { state := S.KeyOut }
      .elsewhen(valueLen =/= 0) { state := S.Value }
      .otherwise { entryDone() }
  }

  def entryDone(): Unit = {
    bank := !bank
    prevLen := keyLen
    entryCount := entryCount + 1
    state := S.Idle
  }

  riNext := Mux(state === S.Restarts && pushFire, ri + 1, ri)

  switch(state) {
    is(S.Idle) {
      // A HEAD beat waits while the restart RAM is full: the block closes first and the entry opens the next.
      io.entries.ready := beat.kind === BuilderKind.Flush || (beat.kind === EntryKind.Head && !full)
      when(io.entries.valid && beat.kind === EntryKind.Head && full) { state := S.Restarts; ri := 0 }
      when(io.entries.fire) {
        when(beat.kind === BuilderKind.Flush) {
          state := S.Restarts
          ri := 0
        } otherwise {
          keyLen := beat.keyBytes
          valueLen := beat.valueBytes
          val vv = Varint.encode(beat.valueBytes)
          valueVarint := vv._1
          valueVarintLen := vv._2
          setCmpLeft(min(prevLen, beat.keyBytes))
          keyLeft := beat.keyBytes
          keyBeat := 0
          shared := 0
          matching := !isRestart
          when(isRestart) {
            restartMem(restartCount.resized) := offset
            restartCount := restartCount + 1
            sinceRestart := 1
          } otherwise { sinceRestart := sinceRestart + 1 }
          when(beat.keyBytes > c.keyLimit) {
            tooLong := True
            sinceRestart := sinceRestart // the dropped entry counts for nothing
            when(isRestart) { restartCount := restartCount }
            state := Mux(io.entries.last, S.Idle, S.Drop)
          } elsewhen (beat.keyBytes === 0) {
            state := S.Hdr
          } otherwise { state := S.Key }
        }
      }
    }
    is(S.Drop) {
      io.entries.ready := True
      when(io.entries.fire && io.entries.last) { state := S.Idle }
    }
    is(S.Key) {
      io.entries.ready := True
      val lanes = Vec(Bool(), W)
      for (i <- 0 until W) lanes(i) := laneOn(i) && beat.data(8 * i, 8 bits) === prevWord(8 * i, 8 bits)
      val run = Vec((0 to W).map(n => (0 until n).map(lanes(_)).foldLeft(True)(_ && _))) // first n lanes equal
      val matched = UInt(log2Up(W + 1) bits)
      matched := 0
      for (n <- 1 to W) when(run(n)) { matched := n }
      // The key's final beat also pushes the header: the shared length is known once its lanes compared.
      val finalBeat = keyLeft <= W
      // While `matching`, every beat before this one matched whole: shared = keyBeat * W and keyLeft = keyLen - shared,
      // so the shared length is keyBeat and the lane count side by side (no adder) and the non-shared one keyLeft less it.
      val beatBase = (keyBeat.resize(c.entry.keyLenBits) << log2Up(W)).resize(c.entry.keyLenBits)
      val sharedMatch = Mux(run(W), ((keyBeat + 1).resize(c.entry.keyLenBits) << log2Up(W)).resize(c.entry.keyLenBits),
        beatBase | matched.resize(log2Up(W)).resize(c.entry.keyLenBits))
      val sharedNow = Mux(matching, sharedMatch, shared)
      val hdr = header(sharedNow, Mux(matching, keyLeft - matched, keyLen - shared))
      when(finalBeat) {
        io.entries.ready := pushReady
        push.valid := io.entries.valid
        push.data := hdr._1
        push.count := hdr._2
      }
      when(io.entries.fire) {
        keyMem(keyAddr(bank, keyBeat.resized)) := beat.data
        keyBeat := keyBeat + 1
        setCmpLeft(Mux(cmpLeft > W, cmpLeft - W, U(0)))
        keyLeft := keyLeft - W // not below 0: the final beat ends the key
        when(matching) {
          shared := sharedNow
          when(matched =/= W) { matching := False }
        }
        when(finalBeat) { afterHeader(sharedNow) }
      }
    }
    is(S.Hdr) { // an empty key: the header alone
      val hdr = header(shared, keyLen - shared)
      push.valid := True
      push.data := hdr._1
      push.count := hdr._2
      when(pushFire) { afterHeader(shared) }
    }
    is(S.KeyOut) {
      val lane = rdPos(log2Up(W) - 1 downto 0)
      val word = keyMem.readAsync(keyAddr(bank, (rdPos >> log2Up(W)).resized))
      val n = min((W - lane.resize(log2Up(W) + 1)).resize(c.entry.keyLenBits), keyLen - rdPos)
      push.valid := True
      push.data := (word >> (lane << 3)).resized
      push.count := n.resized
      when(pushFire) {
        rdPos := rdPos + n
        when(rdPos + n === keyLen) {
          when(valueLen =/= 0) { state := S.Value } otherwise { entryDone() }
        }
      }
    }
    is(S.Value) {
      push.valid := io.entries.valid
      push.data := beat.data.resized
      push.count := beat.count.resized
      io.entries.ready := pushReady
      when(io.entries.fire && io.entries.last) { entryDone() }
    }
    is(S.Restarts) {
      push.valid := True
      push.data := Mux(ri === 0, U(0, 32 bits), restartWord).asBits.resized
      push.count := 4
      when(pushFire) {
        ri := ri + 1
        when(ri + 1 === restartCount) { state := S.Count }
      }
    }
    is(S.Count) {
      push.valid := True
      push.data := restartCount.resize(32).asBits.resized
      push.count := 4
      when(pushFire) { state := S.Type; size := offset + 4 }
    }
    is(S.Type) {
      push.valid := True
      push.data := 0 // kNoCompression
      push.count := 1
      push.typeByte := True
      when(pushFire) { state := S.Crc }
    }
    is(S.Crc) { // the restart count, pushed at least a clock before the type byte, is in the CRC's state by now
      push.valid := True
      push.data := trailerCrc.asBits.resized
      push.count := 4
      push.fin := True
      when(pushFire) { state := S.Status }
    }
    is(S.Status) {
      when(io.status.fire) {
        crc.io.clear := True
        offset := 0
        restartCount := 1
        sinceRestart := 0
        entryCount := 0
        prevLen := 0
        tooLong := False
        state := S.Idle
      }
    }
  }
}

/** LevelDB's varint32 (util/coding.cc EncodeVarint32): 7 bits a byte, low first, the top bit set on every
  * byte but the last. */
object Varint {
  def encode(value: UInt): (Bits, UInt) = {
    val v = value.resize(35 bits)
    val bytes = Bits(40 bits)
    for (i <- 0 until 5) {
      val more = if (i < 4) v(34 downto 7 * (i + 1)).orR else False
      bytes(8 * i, 8 bits) := more ## v(7 * i, 7 bits).asBits
    }
    val len = UInt(3 bits)
    len := 1
    for (i <- 1 until 5) when(v(34 downto 7 * i).orR) { len := i + 1 }
    val masked = Bits(40 bits)
    for (i <- 0 until 5) masked(8 * i, 8 bits) := Mux(U(i) < len, bytes(8 * i, 8 bits), B(0, 8 bits))
    (masked, len)
  }
}
