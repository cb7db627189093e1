package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of a block reader: `bytes` per stream beat (a power of two, >= 4), the longest internal key
  * (model/limits.h kMaxInternalKeyBytes), the largest block (kMaxBlockBytes). */
case class BlockReaderConfig(bytes: Int = 16, keyLimit: Int = 1032, maxBlock: Int = 4 << 20) {
  require(bytes >= 4 && isPow2(bytes), s"beat width $bytes bytes: a power of two >= 4")
  require(keyLimit >= 1024, s"key limit $keyLimit: at least 1 KiB")
  val countBits = log2Up(bytes + 1)
  val keyWords = (keyLimit + bytes - 1) / bytes
  val keyLenBits = log2Up(keyLimit + 1)
}

/** One block to read: its contents' size (the block handle's size, trailer excluded), the restart count
  * (the contents' last 4 bytes, which the front end fetches with the trailer before the block) and
  * whether to check the trailer's CRC (LevelDB's verify_checksums / paranoid_checks). */
case class BlockCmd() extends Bundle {
  val size = UInt(32 bits)
  val restarts = UInt(32 bits)
  val verify = Bool()
}

object EntryKind {
  val Head = 0
  val Key = 1
  val Value = 2
}

/** A beat of the entry stream. Each entry is one HEAD beat (`keyBytes`, `valueBytes`), then its key in
  * ceil(keyBytes / bytes) KEY beats, then its value in VALUE beats, key and value each from lane 0, the
  * final beat of each holding `count` bytes (every other beat is full); `last` (the Fragment's) marks the
  * entry's final beat. `data` is zero above `count`; `keyBytes` / `valueBytes` are meaningful on HEAD. */
case class EntryBeat(c: BlockReaderConfig) extends Bundle {
  val kind = UInt(2 bits)
  val data = Bits(8 * c.bytes bits)
  val count = UInt(c.countBits bits)
  val keyBytes = UInt(c.keyLenBits bits)
  val valueBytes = UInt(32 bits)
}

/** How a block ended: `error` with the model's code and the byte offset in the block (as the model's
  * EngineError with the block at offset 0), else the number of entries emitted. */
case class BlockStatus() extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val offset = UInt(32 bits)
  val entries = UInt(32 bits)
}

/** Reads one raw data block per command: its bytes + 5-byte trailer arrive on `input` (`count` bytes a
  * beat: all but the final beat full; `last` ends the block, early if the table is cut short); entries leave on `entries`, one `status` per block. A soft reset
  * returns the unit to idle from any state. See doc/rtl.md. */
case class BlockReader(c: BlockReaderConfig = BlockReaderConfig()) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (BlockCmd())
    val input = slave Stream (Fragment(ByteBeat(c.bytes)))
    val entries = master Stream (Fragment(EntryBeat(c)))
    val status = master Stream (BlockStatus())
    val softReset = in Bool()
    /** The current entry's offset in the block, valid with its HEAD beat (the table reader's key checks). */
    val entryOffset = out UInt (32 bits)
  }
  val soft = ClockDomain(clock = ClockDomain.current.readClockWire,
    reset = ClockDomain.current.readResetWire || io.softReset, config = ClockDomain.current.config)
  val core = soft(BlockReaderCore(c))
  core.io.cmd << io.cmd
  core.io.input << io.input
  io.entries << core.io.entries
  io.status << core.io.status
  io.entryOffset := core.io.entryOffset
}

case class BlockReaderCore(c: BlockReaderConfig) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (BlockCmd())
    val input = slave Stream (Fragment(ByteBeat(c.bytes)))
    val entries = master Stream (Fragment(EntryBeat(c)))
    val status = master Stream (BlockStatus())
    val entryOffset = UInt(32 bits).asOutput()
  }
  val W = c.bytes
  val Cap = 3 * W // the byte window: a full beat refills it while it holds <= 2W bytes
  val capBits = log2Up(Cap + 1)
  def min(a: UInt, b: UInt): UInt = Mux(a < b, a, b)

  object S extends SpinalEnum {
    val Idle, Hdr, KeyWrite, KeyRead, Value, Drain, Status = newElement()
  }
  val state = RegInit(S.Idle)

  // ---- the block as received: position, trailer bytes, CRC ----
  val size = Reg(UInt(32 bits))
  val total = Reg(UInt(33 bits)) // size + trailer
  val verify = Reg(Bool())
  val received = Reg(UInt(33 bits))
  val running = RegInit(False) // a command taken, its status not yet
  val ended = RegInit(False) // the block's `last` beat taken
  val truncated = Reg(Bool())
  val tail = Reg(Bits(40 bits)) // the 5 bytes received last (the trailer once all arrived)

  // ---- the byte window: bytes [pos, pos + avail) of the block, from lane 0 ----
  val window = Reg(Bits(8 * Cap bits)) init (0)
  val avail = Reg(UInt(capBits bits)) init (0)
  val take = UInt(capBits bits) // bytes the decoder consumes this clock (up to 15 for three varints)
  take := 0
  def head(i: Int): Bits = window(8 * i, 8 bits)

  val toGo = total - received
  val beatBytes = Mux(toGo < io.input.count, toGo.resize(c.countBits), io.input.count) // past the block: ignored
  val crcTo = (size.resize(33) + 1) // the CRC covers contents and type byte
  val crcLeft = Mux(crcTo > received, crcTo - received, U(0, 33 bits))
  val crcBytes = Mux(crcLeft < W, crcLeft.resize(c.countBits), U(W, c.countBits bits))
  val draining = state === S.Drain
  io.input.ready := running && !ended && (draining || avail <= 2 * W)

  val crc = Crc32cUnit(W)
  crc.io.clear := io.cmd.fire
  crc.io.input.valid := io.input.fire
  crc.io.input.data := io.input.data
  crc.io.input.count := crcBytes

  val beatMasked = Bits(8 * W bits)
  for (i <- 0 until W) beatMasked(8 * i, 8 bits) := Mux(U(i) < beatBytes, io.input.data(8 * i, 8 bits), B(0, 8 bits))
  val kept = (window >> (take << 3)).resize(8 * Cap)
  val keptAvail = avail - take
  val pushed = (beatMasked.resize(8 * Cap) << (keptAvail << 3)).resize(8 * Cap)
  window := kept
  avail := keptAvail
  when(io.input.fire) {
    window := kept | pushed
    avail := keptAvail + beatBytes
    received := received + beatBytes
    tail := ((beatMasked ## tail) >> (beatBytes << 3)).resize(40)
    when(io.input.last) {
      ended := True
      truncated := received + beatBytes < total
    }
  }
  when(draining) { // what the decoder no longer reads is only counted and checked
    window := 0
    avail := 0
  }

  // ---- decoder state ----
  val pos = Reg(UInt(32 bits)) // block offset of window byte 0
  pos := pos + take
  // The entries' end (the block's size less its restart array) minus pos: the entry bytes not yet consumed, a
  // register that moves with pos, so the header's checks and the varints' limits start from a register, not
  // from a 32-bit subtract.
  val left = Reg(UInt(32 bits))
  left := left - take
  val varIdx = Reg(UInt(2 bits))
  val shared, nonShared, valueLen = Reg(UInt(32 bits))
  val entryPos = Reg(UInt(32 bits))
  io.entryOffset := entryPos
  val keyLen = Reg(UInt(c.keyLenBits bits))
  val entryCount = Reg(UInt(32 bits))
  val tooBig = Reg(Bool())
  val pend = Reg(Bool())
  val pendCode = Reg(UInt(ErrorCodes.Width bits))
  val pendOffset = Reg(UInt(32 bits))
  def fail(name: String, at: UInt): Unit = {
    pend := True
    pendCode := U(ErrorCodes(name), ErrorCodes.Width bits)
    pendOffset := at
    state := S.Drain
  }

  io.cmd.ready := state === S.Idle
  when(io.cmd.fire) {
    val cmd = io.cmd.payload
    size := cmd.size
    total := cmd.size.resize(33) + 5
    verify := cmd.verify
    received := 0
    running := True
    ended := False
    truncated := False
    window := 0
    avail := 0
    pos := 0
    varIdx := 0
    keyLen := 0
    entryCount := 0
    pend := False
    tooBig := cmd.size > c.maxBlock
    // LevelDB's Block constructor: room for the count, at least one restart, the array inside the block.
    val arrayBytes = (cmd.restarts.resize(34) << 2) + 4
    left := cmd.size - arrayBytes.resize(32)
    state := S.Hdr
    when(cmd.size > c.maxBlock) {
      state := S.Drain
    } elsewhen (cmd.size < 4) {
      fail("BAD_BLOCK", U(0, 32 bits))
    } elsewhen (cmd.restarts === 0 || cmd.restarts > ((cmd.size - 4) >> 2)) {
      fail("BAD_BLOCK", cmd.size - 4)
    } elsewhen (arrayBytes === cmd.size.resize(34)) {
      state := S.Drain // no entries
    }
  }

  // ---- entry output ----
  val out = io.entries
  val ob = out.fragment
  out.valid := False
  out.payload.assignFromBits(B(0, out.payload.getBitsWidth bits))

  // ---- key RAM: the current key, word-aligned from byte 0 ----
  // Two banks, even and odd words: a clock's new key bytes (up to W from any lane) cross at most one
  // word boundary, so both words are written together.
  val keyAddrBits = log2Up(c.keyWords)
  val bankWords = (c.keyWords + 1) / 2
  val bankAddrBits = log2Up(bankWords) max 1
  val banks = Seq.fill(2)(Mem(Bits(8 * W bits), bankWords))
  val wEnable = False
  val wAddr = UInt(keyAddrBits bits).assignDontCare() // the first word written
  val wData = Bits(8 * W bits).assignDontCare() // rotated: lane (wp + j) mod W holds new byte j
  val wMaskLo = Bits(W bits).assignDontCare() // lanes of word wAddr
  val wMaskHi = Bits(W bits).assignDontCare() // lanes of word wAddr + 1
  val wNext = wAddr +^ 1
  for (b <- 0 until 2) {
    val lo = wAddr(0) === Bool(b == 1) // word wAddr lives in this bank
    val mask = Mux(lo, wMaskLo, wMaskHi)
    val addr = Mux(lo, (wAddr >> 1).resize(bankAddrBits), (wNext >> 1).resize(bankAddrBits))
    banks(b).write(addr, wData, wEnable && mask.orR, mask)
  }
  val rdCmd = Stream(UInt(keyAddrBits bits))
  rdCmd.valid := False
  val rdIssued = Reg(UInt(keyAddrBits + 1 bits))
  rdCmd.payload := rdIssued.resize(keyAddrBits)
  // One word read a clock; the response holds (the RAMs' read enables stay low) until taken.
  val rspValid = RegInit(False)
  val rspIdx = Reg(UInt(keyAddrBits bits))
  val rspReady = False
  rdCmd.ready := !rspValid || rspReady
  val rdWords = banks.map(_.readSync((rdCmd.payload >> 1).resize(bankAddrBits), rdCmd.fire))
  when(rdCmd.fire) {
    rspValid := True
    rspIdx := rdCmd.payload
  } elsewhen (rspReady) { rspValid := False }
  val rspValue = Mux(rspIdx(0), rdWords(1), rdWords(0))
  val keyWordsNow = ((keyLen +^ (W - 1)) >> log2Up(W)).resize(keyAddrBits + 1)

  def entryDone(): Unit = {
    entryCount := entryCount + 1
    varIdx := 0
    state := Mux(left === take.resize(32), S.Drain, S.Hdr)
  }

  // ---- varint at the window's head: up to 5 bytes, none past the entries' end ----
  // `left` saturated at the window's reach: a varint never looks past the window, so its limits are compares of
  // a few bits instead of a 32-bit carry chain per byte (the block reader's critical path on the ECP5).
  val leftNear = Mux(left(31 downto capBits).orR, U((1 << capBits) - 1, capBits bits), left(capBits - 1 downto 0))
  val limit5 = Mux(leftNear < 5, leftNear.resize(3), U(5, 3 bits))
  val stops = Vec((0 until 5).map(i => !head(i)(7) && U(i) < limit5))
  val stopAt = OHToUInt(OHMasking.first(stops.asBits))
  val found = stops.orR
  val partial = (0 until 5).scanLeft(U(0, 35 bits))((acc, i) => acc | (head(i)(6 downto 0).asUInt.resize(35) << (7 * i)).resize(35)).drop(1)
  val varValue = Vec(partial)(stopAt)
  val overflow = stopAt === 4 && head(4)(6 downto 4) =/= 0 // more than 32 bits (ParseVarint32)

  // Fast path: all three varints of an entry in one clock when they are complete in the window and well
  // formed; anything else (a long varint not yet arrived, an error) takes the path above, one a clock.
  case class Varint(ok: Bool, len: UInt, value: UInt)
  def varintAt(offset: UInt, maxOffset: Int): Varint = {
    val bytes = (0 until 5).map { i =>
      val options = (0 to maxOffset).map(o => if (o + i < Cap) head(o + i) else B(0x80, 8 bits))
      Vec(options)(offset.resize(log2Up(maxOffset + 1)))
    }
    val limit = Mux(avail < leftNear, avail, leftNear) // bytes both present and before the end
    val stop = Vec((0 until 5).map(i => !bytes(i)(7) && offset.resize(capBits + 1) + i < limit.resize(capBits + 1)))
    val at = OHToUInt(OHMasking.first(stop.asBits))
    val sums = (0 until 5).scanLeft(U(0, 35 bits))((acc, i) =>
      acc | (bytes(i)(6 downto 0).asUInt.resize(35) << (7 * i)).resize(35)).drop(1)
    Varint(stop.orR && !(at === 4 && bytes(4)(6 downto 4) =/= 0), (at +^ 1).resize(3), Vec(sums)(at).resize(32))
  }
  // `fastBase`: where the header starts in the window (0 in Hdr; behind the value's final beat in Value).
  val fastBase = UInt(c.countBits bits)
  fastBase := 0
  val fast1 = varintAt(fastBase, W)
  val fast2 = varintAt(fastBase +^ fast1.len, W + 5)
  val fast3 = varintAt(fastBase +^ fast1.len +^ fast2.len, W + 10)
  val fastOk = varIdx === 0 && fast1.ok && fast2.ok && fast3.ok

  val headSent = Reg(Bool())
  val checked = Reg(Bool()) // the entry's header passed its checks (KeyWrite's first clock)
  val wp = Reg(UInt(c.keyLenBits bits))
  val nsLeft = Reg(UInt(c.keyLenBits bits))
  val vLeft = Reg(UInt(32 bits))

  switch(state) {
    is(S.Hdr) {
      when(varIdx === 0) { entryPos := pos }
      when(fastOk) {
        shared := fast1.value
        nonShared := fast2.value
        valueLen := fast3.value
        take := (fast1.len +^ fast2.len +^ fast3.len).resized
        checked := False
        state := S.KeyWrite
      } elsewhen (avail >= limit5) {
        when(!found || overflow) {
          fail("BAD_VARINT", pos)
        } otherwise {
          val v = varValue.resize(32)
          switch(varIdx) {
            is(0) { shared := v }
            is(1) { nonShared := v }
            default { valueLen := v }
          }
          take := (stopAt +^ 1).resized
          varIdx := varIdx + 1
          when(varIdx === 2) {
            checked := False
            state := S.KeyWrite
          }
        }
      } elsewhen (ended) { state := S.Drain } // bytes that never come: TRUNCATED
    }
    is(S.KeyWrite) {
      // First clock: BlockReader::Next's checks, in its order, on the header just decoded (keyLen is still
      // the previous key's). Then the HEAD beat leaves while the key's new bytes go from the window into
      // the RAM behind the shared ones; the cur* values are the registers' or, on the first clock, the
      // header's.
      val first = !checked
      val keyTotal = shared +^ nonShared
      val checkFail = False
      when(first) {
        when(shared > keyLen.resize(32)) {
          fail("BAD_BLOCK", entryPos); checkFail := True
        } elsewhen (nonShared > left || valueLen > left - nonShared) {
          fail("BAD_BLOCK", entryPos); checkFail := True
        } elsewhen (keyTotal > c.keyLimit) {
          fail("KEY_TOO_LONG", entryPos); checkFail := True
        }
      }
      val curKeyLen = Mux(first, keyTotal.resize(c.keyLenBits), keyLen)
      val curWp = Mux(first, shared.resize(c.keyLenBits), wp)
      val curNs = Mux(first, nonShared.resize(c.keyLenBits), nsLeft)
      val curV = Mux(first, valueLen, vLeft)
      val curHeadSent = !first && headSent
      val lane = curWp(log2Up(W) - 1 downto 0)
      val n = min(min(U(W, c.keyLenBits bits), curNs), avail.resize(c.keyLenBits)).resize(c.countBits)
      // The key bytes leave the window whether or not the header passed its checks: on a failure the block is
      // drained anyway (the window emptied, the error's offset the entry's), so the checks need not reach the
      // window's shifter in the same clock.
      take := n.resized
      when(!checkFail) {
        checked := True
        keyLen := curKeyLen
        vLeft := curV
        out.valid := !curHeadSent
        ob.kind := U(EntryKind.Head, 2 bits)
        ob.keyBytes := curKeyLen
        ob.valueBytes := curV
        out.last := curKeyLen === 0 && curV === 0
        val headDone = curHeadSent || out.ready
        headSent := headDone
        wAddr := (curWp >> log2Up(W)).resized
        wData := window(0, 8 * W bits).rotateLeft(lane << 3)
        for (i <- 0 until W) {
          wMaskLo(i) := U(i) >= lane && U(i) < lane +^ n
          wMaskHi(i) := U(i + W) < lane +^ n
        }
        wEnable := n =/= 0
        wp := curWp + n
        nsLeft := curNs - n
        when(curNs === n && headDone) {
          // The key's first word read now, unless this clock writes it (the read would see the old word).
          rdCmd.payload := 0
          rdCmd.valid := curKeyLen =/= 0 && !(wEnable && wAddr === 0)
          rdIssued := Mux(rdCmd.fire, U(1), U(0)).resized
          when(curKeyLen =/= 0) { state := S.KeyRead }
            .elsewhen(curV =/= 0) { state := S.Value }
            .otherwise { entryDone() }
        } elsewhen (curNs =/= 0 && avail === 0 && ended) { state := S.Drain }
      }
    }
    is(S.KeyRead) { // the key, word by word from the RAM
      rdCmd.valid := rdIssued < keyWordsNow
      when(rdCmd.fire) { rdIssued := rdIssued + 1 }
      val idx = rspIdx
      val isLast = idx.resize(keyAddrBits + 1) === keyWordsNow - 1
      val bytesBefore = (idx.resize(c.keyLenBits) << log2Up(W)).resize(c.keyLenBits)
      val rest = keyLen - bytesBefore
      out.valid := rspValid
      rspReady := out.ready
      ob.kind := U(EntryKind.Key, 2 bits)
      ob.count := Mux(rest < W, rest.resize(c.countBits), U(W, c.countBits bits))
      for (i <- 0 until W) ob.data(8 * i, 8 bits) := Mux(U(i) < rest, rspValue(8 * i, 8 bits), B(0, 8 bits))
      out.last := isLast && vLeft === 0
      when(rspValid && out.ready && isLast) {
        when(vLeft =/= 0) { state := S.Value } otherwise { entryDone() }
      }
    }
    is(S.Value) { // the value straight from the window
      // vLeft < W and vLeft <= W as the high bits' OR (W a power of two), not 32-bit compares
      val underW = vLeft(31 downto log2Up(W)) === 0
      val atMostW = underW || vLeft === W
      val n = Mux(underW, vLeft.resize(c.countBits), U(W, c.countBits bits))
      // this state's own valid, not out.valid (one net for every state: KeyWrite's header checks drive it too,
      // and through it the timing tools saw those checks reach `take` and the window's shifter)
      val beatValid = avail >= n
      out.valid := beatValid
      ob.kind := U(EntryKind.Value, 2 bits)
      ob.count := n
      for (i <- 0 until W) ob.data(8 * i, 8 bits) := Mux(U(i) < n, head(i), B(0, 8 bits))
      out.last := atMostW
      fastBase := n
      when(beatValid && out.ready) {
        take := n.resized
        vLeft := vLeft - n
        when(atMostW) {
          entryDone()
          when(fastOk) { // the next entry's header, right behind the value, decoded in the same clock
            shared := fast1.value
            nonShared := fast2.value
            valueLen := fast3.value
            take := (n +^ fast1.len +^ fast2.len +^ fast3.len).resized
            entryPos := pos + n
            checked := False
            state := S.KeyWrite
          }
        }
      } elsewhen (avail < n && ended) { state := S.Drain }
    }
    is(S.Drain) { // the rest of the block through the CRC, then the verdict
      take := 0
      when(ended) { state := S.Status }
    }
  }

  // ---- verdict: ReadBlock's order (truncation, size, CRC, type), then the first decode error ----
  val storedCrc = tail(8, 32 bits).asUInt
  val blockType = tail(0, 8 bits)
  io.status.valid := state === S.Status
  io.status.entries := entryCount
  io.status.error := True
  io.status.code := pendCode
  io.status.offset := pendOffset
  when(truncated) {
    io.status.code := U(ErrorCodes("TRUNCATED"), ErrorCodes.Width bits); io.status.offset := U(0, 32 bits)
  } elsewhen (tooBig) {
    io.status.code := U(ErrorCodes("BAD_BLOCK"), ErrorCodes.Width bits); io.status.offset := U(0, 32 bits)
  } elsewhen (verify && crc.io.masked =/= storedCrc) {
    io.status.code := U(ErrorCodes("BAD_CRC"), ErrorCodes.Width bits); io.status.offset := U(0, 32 bits)
  } elsewhen (blockType =/= 0) { // Snappy (1) is the next stage's; anything else LevelDB refuses too
    io.status.code := U(ErrorCodes("BAD_BLOCK"), ErrorCodes.Width bits); io.status.offset := size
  } elsewhen (!pend) {
    io.status.error := False; io.status.code := U(0, ErrorCodes.Width bits); io.status.offset := U(0, 32 bits)
  }
  when(io.status.fire) {
    running := False
    state := S.Idle
  }
}
