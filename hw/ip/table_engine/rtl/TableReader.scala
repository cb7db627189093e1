package table_engine

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Sizes of the table front end: the block reader's (`bytes` per beat, also the AXI data width; key and
  * block limits), the data blocks one table may have (`maxBlocks`, the handle RAM), the read side
  * (`fifoBeats` of read data buffered, INCR bursts of at most `maxBurst` beats) and the largest decompressed
  * Snappy block (`snappyBytes`: the decompressor's history and the block buffer the block reader reads it from). */
case class TableReaderConfig(bytes: Int = 16, keyLimit: Int = 1032, maxBlock: Int = 4 << 20,
                             maxBlocks: Int = 1024, fifoBeats: Int = 64, maxBurst: Int = 16,
                             snappyBytes: Int = 1 << 16) {
  val reader = BlockReaderConfig(bytes, keyLimit, maxBlock)
  val snappy = SnappyConfig(bytes, snappyBytes)
  require(isPow2(maxBlocks) && maxBlocks >= 2, s"maxBlocks $maxBlocks: a power of two >= 2")
  require(fifoBeats >= 2 * maxBurst && maxBurst >= 1 && maxBurst <= 256 / bytes * 16)
  def axiConfig = Axi4Config(addressWidth = 32, dataWidth = 8 * bytes, idWidth = 1, useRegion = false,
    useLock = false, useQos = false, useCache = false, useProt = false)
}

/** One table: where it starts in memory, its length in bytes (the file's size), whether block CRCs
  * are checked (LevelDB's verify_checksums / paranoid_checks), and the window of data blocks read: index entries
  * `firstBlock` up to `endBlock` (exclusive; 0: to the index's end). A sub-compaction part reads only its window
  * (model/subcompaction.h); a whole job gives 0, 0. A window past the index, or `firstBlock` above its end, is
  * BAD_JOB at the index block. */
case class TableCmd() extends Bundle {
  val base = UInt(32 bits)
  val size = UInt(32 bits)
  val verify = Bool()
  val firstBlock = UInt(32 bits)
  val endBlock = UInt(32 bits)
}

/** How a table ended: `error` with the model's code and the byte offset in the table, as the model's
  * TableReader throws it; `entries` the entries that the model delivers before its end or error (the
  * first `entries` of the entry stream; entries of the failing block beyond them are to be dropped);
  * `blocks` the data blocks read whole. */
case class TableStatus() extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val offset = UInt(32 bits)
  val entries = UInt(32 bits)
  val blocks = UInt(32 bits)
}

/** The engine's INCR bursts, read and write alike: they end on multiples of the longest burst's bytes (a power of two,
  * at most 4 KiB: AXI's rule too), so once a range's first burst has reached one, every burst covers whole words of a
  * wider memory port: a 256-byte burst at a 16-byte offset spans five 64-byte DDR words instead of four (the SoC's
  * upsized ports, doc/table_reader.md "Burst edges"). */
object Bursts {
  /** The largest power of two of at most `most` beats of `bytes` and 4 KiB. */
  def edgeBytes(most: Int, bytes: Int): Int = Integer.highestOneBit(most * bytes) min 4096
  /** Beats of a burst from `ptr` (a multiple of `bytes`): up to `most`, never across a multiple of edgeBytes. */
  def from(ptr: UInt, most: Int, bytes: Int): UInt = {
    val edge = edgeBytes(most, bytes)
    val toEdge = ((U(edge, 13 bits) - ptr(log2Up(edge) - 1 downto 0).resize(13)) >> log2Up(bytes)).resize(13)
    Mux(toEdge < most, toEdge, U(most, 13 bits))
  }
}

/** A read of `len` (>= 1) bytes at `addr`. */
case class FetchCmd() extends Bundle {
  val addr = UInt(32 bits)
  val len = UInt(32 bits)
}

/** Reads byte ranges from memory over AXI4 and hands them out from lane 0: each range as `count`-byte
  * beats, every beat full but the final one, which carries `last`. Ranges leave in the order asked.
  * Bursts are INCR from the bus-aligned address below the range, never across 4 KiB, and only asked
  * when the read FIFO has room for all of their beats (so R is always taken at once); ranges queue up
  * behind each other, so the next block's bytes are on their way while this one's are consumed.
  * A range that starts where the one before it ended, inside that range's last bus beat, takes the rest of
  * that beat instead of reading it again: consecutive blocks read one after the other cost the bus what one
  * range over all of them would (no DDR word read twice at each block's edge). The beat is kept in the read
  * FIFO after its range; the next range drops it unless it continues there. `clearError` (a new table) also
  * forgets where the last range ended.
  * `idle`: nothing asked, in flight or buffered but such a kept beat. `axiError`: sticky, an R beat came back
  * with an error. */
case class TableFetch(c: TableReaderConfig) extends Component {
  val W = c.bytes
  val lw = log2Up(W)
  val io = new Bundle {
    val cmd = slave Stream (FetchCmd())
    val axi = master(Axi4ReadOnly(c.axiConfig))
    val output = master Stream (Fragment(ByteBeat(W)))
    val idle = out Bool()
    val axiError = out Bool()
    val clearError = in Bool()
  }
  def beatsOf(cmd: FetchCmd): UInt = ((cmd.addr(lw - 1 downto 0).resize(33) + cmd.len + (W - 1)) >> lw).resize(30)

  val fifo = StreamFifo(Bits(8 * W bits), c.fifoBeats)
  // Ranges whose bursts are asked, for the data side; `cont`: it continues in the previous range's kept beat.
  case class Pending() extends Bundle {
    val range = FetchCmd()
    val cont = Bool()
  }
  val pending = StreamFifo(Pending(), 4)

  // ---- read requests ----
  val arBusy = RegInit(False)
  val arAddr = Reg(UInt(32 bits))
  val arLeft = Reg(UInt(30 bits)) // beats of the current range not yet asked
  val inFlight = Reg(UInt(log2Up(c.fifoBeats + 1) + 1 bits)) init (0)
  val arValid = RegInit(False)
  val arReqAddr = Reg(UInt(32 bits))
  val arReqLen = Reg(UInt(8 bits))

  // Where the last range asked ended, when that was inside a bus beat (the data side keeps that beat).
  val endValid = RegInit(False)
  val endAddr = Reg(UInt(32 bits))
  val cont = endValid && io.cmd.addr === endAddr
  io.cmd.ready := !arBusy && pending.io.push.ready
  pending.io.push.valid := io.cmd.valid && !arBusy
  pending.io.push.range := io.cmd.payload
  pending.io.push.cont := cont
  when(io.cmd.fire) {
    val beats = beatsOf(io.cmd.payload)
    val end = io.cmd.addr + io.cmd.len
    endValid := end(lw - 1 downto 0) =/= 0
    endAddr := end
    arBusy := !cont || beats =/= 1
    // A continuing range's first beat is the kept one: its bursts start at the beat after it.
    arAddr := (io.cmd.addr(31 downto lw) + U(cont).resize(32 - lw)) @@ U(0, lw bits)
    arLeft := beats - U(cont).resized
  }
  val toEdge = Bursts.from(arAddr, c.maxBurst, W) // at most maxBurst beats, never across an edge
  val burst = Mux(arLeft < toEdge, arLeft.resize(13), toEdge)
  val room = (fifo.io.occupancy.resize(inFlight.getWidth) + inFlight + burst.resize(inFlight.getWidth)) <= c.fifoBeats
  val issue = arBusy && !arValid && room
  when(issue) {
    arValid := True
    arReqAddr := arAddr
    arReqLen := (burst - 1).resized
    arAddr := arAddr + (burst.resize(32) << lw).resize(32)
    arLeft := arLeft - burst.resized
    when(arLeft === burst.resized) { arBusy := False }
  }
  when(io.axi.ar.fire) { arValid := False }
  io.axi.ar.valid := arValid
  io.axi.ar.addr := arReqAddr
  io.axi.ar.id := 0
  io.axi.ar.len := arReqLen
  io.axi.ar.size := U(lw, 3 bits)
  io.axi.ar.setBurstINCR()
  inFlight := inFlight + Mux(issue, burst.resize(inFlight.getWidth), U(0)) - Mux(io.axi.r.fire, U(1), U(0))

  fifo.io.push.valid := io.axi.r.valid
  fifo.io.push.payload := io.axi.r.data
  io.axi.r.ready := fifo.io.push.ready // always: room was reserved
  val axiErr = RegInit(False)
  when(io.axi.r.fire && io.axi.r.resp =/= 0) { axiErr := True }
  when(io.clearError) { axiErr := False; endValid := False }
  io.axiError := axiErr

  // ---- data: the range's bytes from lane 0 through a 2W-byte window ----
  val active = RegInit(False)
  val left = Reg(UInt(32 bits)) // bytes still to hand out
  val need = Reg(UInt(32 bits)) // bytes still to arrive
  val skip = Reg(UInt(lw bits)) // bytes below the range in the next beat
  val win = Reg(Bits(16 * W bits)) init (0)
  val have = Reg(UInt(lw + 2 bits)) init (0)
  val n = Mux(left < W, left.resize(lw + 1), U(W, lw + 1 bits))
  io.output.valid := active && have >= n
  io.output.fragment.data := win(0, 8 * W bits)
  io.output.fragment.count := n
  io.output.last := left === n.resize(32)
  val outTaken = Mux(io.output.fire, n, U(0, lw + 1 bits))
  val haveAfter = have - outTaken
  val winAfter = (win >> (outTaken << 3)).resize(16 * W)
  // The head beat after a range that ended inside it (`kept`): taken by a continuing range, else dropped first.
  val kept = RegInit(False)
  val dropKept = RegInit(False)
  val avail = (U(W, lw + 1 bits) - skip).resize(lw + 1)
  val partial = need < avail // the range ends inside this beat: the rest of it stays for the next range
  val take = fifo.io.pop.valid && active && !dropKept && need =/= 0 && haveAfter <= W
  // Kept unless the next range is already queued and does not continue here (then it goes now, not a clock later).
  val keep = partial && !(pending.io.pop.valid && !pending.io.pop.cont)
  fifo.io.pop.ready := (take && !keep) || dropKept
  when(dropKept && fifo.io.pop.valid) { dropKept := False; kept := False }
  val got = Mux(partial, need.resize(lw + 1), avail)
  val shifted = (fifo.io.pop.payload >> (skip << 3)).resize(8 * W)
  val masked = Bits(8 * W bits)
  for (i <- 0 until W) masked(8 * i, 8 bits) := Mux(U(i) < got, shifted(8 * i, 8 bits), B(0, 8 bits))
  win := winAfter
  have := haveAfter
  when(take) {
    win := winAfter | (masked.resize(16 * W) << (haveAfter << 3)).resize(16 * W)
    have := haveAfter + got
    need := need - got
    skip := Mux(keep, (skip + got).resize(lw), U(0, lw bits))
    kept := keep
  }
  when(io.output.fire) {
    left := left - n
    when(io.output.last) { active := False }
  }
  // The next range starts as this one's last beat leaves (the window is empty then: all its bytes came).
  pending.io.pop.ready := !active || (io.output.fire && io.output.last)
  when(pending.io.pop.fire) {
    active := True
    left := pending.io.pop.range.len
    need := pending.io.pop.range.len
    skip := pending.io.pop.range.addr(lw - 1 downto 0) // a continuing range: where the kept beat's taken bytes end
    when(kept && !pending.io.pop.cont) { dropKept := True }
  }
  val onlyKept = fifo.io.occupancy === 0 || (kept && !dropKept && fifo.io.occupancy === 1)
  io.idle := !arBusy && !arValid && !pending.io.pop.valid && !active && inFlight === 0 && onlyKept && !io.cmd.valid
}

/** The table front end: reads a LevelDB table from memory as LevelDB's Table::Open and two-level
  * iterator do (footer, index block, data blocks in index order) and feeds its BlockReader with each
  * data block; the entries leave on `entries` (BlockReader's framing), one `status` per table.
  * See doc/table_reader.md. */
case class TableReader(c: TableReaderConfig = TableReaderConfig()) extends Component {
  val W = c.bytes
  val lw = log2Up(W)
  val io = new Bundle {
    val cmd = slave Stream (TableCmd())
    val axi = master(Axi4ReadOnly(c.axiConfig))
    val entries = master Stream (Fragment(EntryBeat(c.reader)))
    val status = master Stream (TableStatus())
  }
  def code(name: String): UInt = U(ErrorCodes(name), ErrorCodes.Width bits)
  val FooterBytes = 48
  val Magic = BigInt("db4775248b80fb57", 16)

  val fetch = TableFetch(c)
  io.axi << fetch.io.axi
  fetch.io.clearError := False
  val reader = BlockReader(c.reader)
  reader.io.softReset := False
  reader.soft.setSynchronousWith(ClockDomain.current) // its soft-reset domain runs on this clock
  // Snappy blocks: their stored bytes through the decompressor into the block buffer, then into the reader.
  val dec = SnappyDecompressor(c.snappy)
  dec.soft.setSynchronousWith(ClockDomain.current)
  dec.io.softReset := False
  // Two block buffers (one RAM, the top address bit picks): the decompressor fills one while the block reader
  // reads the other.
  val rowBits = log2Up(c.snappy.rows)
  val blockBuf = Mem(Bits(8 * W bits), 2 * c.snappy.rows)
  /** A walk over buffer `half`'s rows as W-byte beats of `total` bytes, full but the last (an empty walk: one beat
    * of count 0), while `go`: `en` and `addr` drive the buffer's read port, whose row comes a clock later and is
    * held while the beat (`valid`, `at` its first byte) waits to be `taken`; `restart` starts over. The front
    * stage's ReDec and the reader stage's feed each walk a buffer; they share the one read port. */
  class BufferWalk(half: Bool, total: UInt, go: Bool, taken: Bool, restart: Bool) extends Area {
    val pos = Reg(UInt(33 bits)) // the next beat's first byte
    val at = Reg(UInt(33 bits))
    val valid = RegInit(False)
    val want = go && (pos < total || pos === 0)
    val advance = !valid || taken
    val en = want && advance
    val addr = (half ## (pos >> lw).resize(rowBits)).asUInt
    when(advance) {
      valid := want
      at := pos
      when(want) { pos := pos + W }
    }
    when(restart) { pos := 0; valid := False }
    val left = total - at
    val count = Mux(left < W, left.resize(lw + 1), U(W, lw + 1 bits))
    val last = left <= W
  }
  val snCrc = Crc32cUnit(W) // the stored (compressed) bytes + type: what the trailer's CRC covers
  snCrc.io.clear := False

  // ---- the job ----
  val base = Reg(UInt(32 bits))
  val n = Reg(UInt(32 bits)) // the table's size
  val verify = Reg(Bool())
  val firstBlock, endBlock = Reg(UInt(32 bits)) // the command's window
  val winEnd = Reg(UInt(log2Up(c.maxBlocks) + 1 bits)) // the window's end, once the index is read
  val errValid = Reg(Bool())
  val errCode = Reg(UInt(ErrorCodes.Width bits))
  val errOffset = Reg(UInt(32 bits))
  val entriesOk = Reg(UInt(32 bits)) // entries of the stream the model delivers too
  val blocksOk = Reg(UInt(32 bits))

  object M extends SpinalEnum {
    val Idle, FooterReq, FooterRecv, FooterCheck, FooterParse, Run, Flush, Status = newElement()
  }
  val main = RegInit(M.Idle)
  def failWith(c: UInt, at: UInt): Unit = {
    errValid := True
    errCode := c
    errOffset := at.resized
    main := M.Flush
  }
  def fail(name: String, at: UInt): Unit = failWith(code(name), at)

  // ---- a byte buffer (the footer; an index entry's first 20 value bytes) filled beat by beat ----
  val buf = Vec(Reg(Bits(8 bits)), FooterBytes)
  val bufBeat = Reg(UInt(log2Up(FooterBytes / 4 + 1) + 1 bits))
  val bufWrite = False
  val bufData = Bits(8 * W bits).assignDontCare()
  val bufCount = UInt(lw + 1 bits).assignDontCare()
  when(bufWrite) {
    for (j <- 0 until FooterBytes)
      when(bufBeat === j / W && U(j % W) < bufCount) { buf(j) := bufData(8 * (j % W), 8 bits) }
    when(bufBeat =/= bufBeat.maxValue) { bufBeat := bufBeat + 1 } // long values: only the first bytes matter
  }

  // ---- the footer's varint64s from the buffer, a byte a clock, as the model's ParseVarint64 (10 bytes at most) ----
  val parse = new Area {
    val start = False
    val startLimit = UInt(6 bits).assignDontCare()
    val startCount = UInt(3 bits).assignDontCare()
    val busy = RegInit(False)
    val failed = Reg(Bool())
    val pos, limit, varStart = Reg(UInt(6 bits))
    val leftVars = Reg(UInt(3 bits))
    val shift = Reg(UInt(4 bits))
    val acc = Reg(UInt(64 bits))
    val res0, res1 = Reg(UInt(64 bits)) // the last two values parsed
    when(start) {
      busy := True
      failed := False
      pos := 0
      varStart := 0
      limit := startLimit
      leftVars := startCount
      shift := 0
      acc := 0
    }
    when(busy && !start) {
      when(shift === 10 || pos >= limit) {
        busy := False
        failed := True
      } otherwise {
        val b = buf(pos)
        val bits7 = b(6 downto 0).asUInt.resize(64)
        val value = acc | Vec((0 until 10).map(i => (bits7 << (7 * i)).resize(64)))(shift)
        pos := pos + 1
        when(b(7)) {
          acc := value
          shift := shift + 1
        } otherwise {
          res1 := value
          res0 := res1
          leftVars := leftVars - 1
          acc := 0
          shift := 0
          varStart := pos + 1
          when(leftVars === 1) { busy := False }
        }
      }
    }
  }

  // ---- a block handle against the table: ReadBlock's first checks ----
  class HandleCheck(off: UInt, size: UInt) {
    val nn = n.resize(64)
    val truncated = off > nn || size > nn - off || U(5, 64 bits) > nn - off - size
    val truncAt = Mux(off < nn, off, nn).resize(32)
    val tooBig = size > c.maxBlock
  }

  // ---- handles of the data blocks (the index block's values), in index order ----
  val handles = Mem(Bits(64 bits), c.maxBlocks)
  val handleCount = Reg(UInt(log2Up(c.maxBlocks) + 1 bits))
  val idxStop = Reg(Bool()) // a handle was bad (or the RAM full): the index's remaining entries are dropped
  val idxErrCode = Reg(UInt(ErrorCodes.Width bits))
  val idxErrOffset = Reg(UInt(32 bits))
  val deferred = Reg(Bool()) // the index's error, reported after the data blocks before it
  val defCode = Reg(UInt(ErrorCodes.Width bits))
  val defOffset = Reg(UInt(32 bits))

  // ---- the block in the reader (consumer side) ----
  val blkOff = Reg(UInt(32 bits))
  val blkSize = Reg(UInt(32 bits))
  val blkIndex = Reg(Bool())
  val entriesEnd = Reg(UInt(36 bits))
  val startBad = Reg(Bool())
  val sent = Reg(UInt(33 bits))
  val r0 = Vec(Reg(Bits(8 bits)), 4) // the first restart point, caught as the block streams past
  val dropping = Reg(Bool())
  val tagErr = Reg(Bool())
  val tagOffset = Reg(UInt(32 bits))
  val blkEntries = Reg(UInt(32 bits))
  // The block came out of the decompressor: the model's errors inside it name the block's offset
  // (BlockReader::Where for a decompressed block), not the byte's.
  val snappy = RegInit(False)
  def where(o: UInt): UInt = Mux(snappy, blkOff, blkOff + o.resize(32))
  val buffered = RegInit(False) // the block's bytes come from a block buffer (a Snappy block, or a raw one read whole)

  // ---- index entries: values parsed into handles ----
  // A handle's two varint64s from the buffer in one clock (ParseVarint64 within the value's first 20 bytes).
  case class Varint64(ok: Bool, len: UInt, value: UInt)
  def varint64At(start: UInt, limit: UInt): Varint64 = {
    val bytes = (0 until 10).map(i => Vec((0 to 10).map(o => buf(o + i)))(start))
    val stop = Vec((0 until 10).map(i => !bytes(i)(7) && (start.resize(6) + i) < limit.resize(6)))
    val at = OHToUInt(OHMasking.first(stop.asBits))
    val sums = (0 until 10).scanLeft(U(0, 64 bits))((acc, i) =>
      acc | (bytes(i)(6 downto 0).asUInt.resize(64) << (7 * i)).resize(64)).drop(1)
    Varint64(stop.orR, (at +^ 1).resize(4), Vec(sums)(at))
  }
  val coll = new Area {
    object C extends SpinalEnum { val Take, Check = newElement() }
    val state = RegInit(C.Take)
    val vlen = Reg(UInt(32 bits))
    val vlimit = Reg(UInt(5 bits))
    val eOff = Reg(UInt(32 bits))
    val idle = state === C.Take
    val e = reader.io.entries
    val ef = e.fragment
    val inIndex = blkIndex
    when(inIndex && state === C.Take && e.valid) {
      when(ef.kind === U(EntryKind.Head, 2 bits)) {
        vlen := ef.valueBytes
        eOff := reader.io.entryOffset
        bufBeat := 0
      }
      when(ef.kind === U(EntryKind.Value, 2 bits)) {
        bufWrite := True
        bufData := ef.data
        bufCount := ef.count
      }
      when(e.last && !idxStop) {
        val vl = Mux(ef.kind === U(EntryKind.Head, 2 bits), ef.valueBytes, vlen)
        vlimit := Mux(vl < 20, vl.resize(5), U(20, 5 bits))
        state := C.Check
      }
    }
    val off = varint64At(U(0, 4 bits), vlimit)
    val size = varint64At(off.len, vlimit)
    val failed = !off.ok || !size.ok
    val hc = new HandleCheck(off.value, size.value)
    when(state === C.Check) {
      state := C.Take
      val at = where(eOff)
      def stop(name: String, where: UInt): Unit = {
        idxStop := True; idxErrCode := code(name); idxErrOffset := where.resized
      }
      when(failed) { stop("BAD_VARINT", at) }
        .elsewhen(hc.truncated) { stop("TRUNCATED", hc.truncAt) }
        .elsewhen(hc.tooBig) { stop("BAD_BLOCK", off.value) }
        .elsewhen(handleCount === c.maxBlocks) { stop("BAD_JOB", at) } // more data blocks than the handle RAM
        .otherwise { handleCount := handleCount + 1 }
    }
    handles.write(handleCount.resize(log2Up(c.maxBlocks)), size.value(31 downto 0).asBits ## off.value(31 downto 0).asBits,
      state === C.Check && !failed && !hc.truncated && !hc.tooBig && handleCount =/= c.maxBlocks)
  }

  // ---- issue side: each block's restart count, then its bytes, asked ahead of the consumer ----
  case class BlockDesc() extends Bundle {
    val off = UInt(32 bits)
    val size = UInt(32 bits)
    val index = Bool()
    val onePass = Bool() // read once, into a block buffer, instead of its tail first
  }
  val descs = StreamFifo(BlockDesc(), 2)
  descs.io.flush := False
  val fetchCmd = Stream(FetchCmd())
  fetchCmd.valid := False
  fetchCmd.payload.assignDontCare()
  val iss = new Area {
    object I extends SpinalEnum { val Off, Read, Latch, Desc, Tail, Data = newElement() }
    val state = RegInit(I.Off)
    val next = Reg(UInt(log2Up(c.maxBlocks) + 1 bits))
    val isIndex = Reg(Bool())
    val predSnappy = Reg(Bool()) // the type of the table's last block the front stage saw (the index's first)
    val hOff, hSize = Reg(UInt(32 bits))
    // A data block expected raw (the table's last block seen was) that fits a block buffer with its trailer is
    // read in one pass: no tail read, and consecutive blocks are one run of bursts (the fetch keeps the beat
    // they share). A wrong guess costs a decompression out of the buffer (the front stage's ReDec). The
    // window's first block keeps its tail read: streamed into the block reader, it is decoded as it comes
    // (the merge waits for every run's first entry), not once it is whole.
    val onePass = Reg(Bool())
    val rd = handles.readSync(next.resize(log2Up(c.maxBlocks)), state === I.Read)
    descs.io.push.valid := False
    descs.io.push.payload.off := hOff
    descs.io.push.payload.size := hSize
    descs.io.push.payload.index := isIndex
    descs.io.push.payload.onePass := onePass
    val running = main === M.Run
    switch(state) {
      is(I.Read) { when(next === winEnd) { state := I.Off } otherwise { state := I.Latch } }
      is(I.Latch) {
        hOff := rd(31 downto 0).asUInt
        hSize := rd(63 downto 32).asUInt
        onePass := !predSnappy && rd(63 downto 32).asUInt < c.snappyBytes - 4 && next =/= firstBlock.resized
        next := next + 1
        state := I.Desc
      }
      is(I.Desc) {
        descs.io.push.valid := running
        when(descs.io.push.fire) { state := Mux(onePass, I.Data, I.Tail) }
      }
      is(I.Tail) { // the contents' last (up to) 4 bytes and the type byte: the restart count and the route
        val t = Mux(hSize >= 4, U(4, 32 bits), hSize)
        fetchCmd.valid := running
        fetchCmd.addr := base + hOff + hSize - t
        fetchCmd.len := t + 1
        when(fetchCmd.ready && running) { state := I.Data }
      }
      is(I.Data) {
        fetchCmd.valid := running
        fetchCmd.addr := base + hOff
        fetchCmd.len := hSize + 5
        when(fetchCmd.ready && running) { state := Mux(isIndex, I.Off, I.Read) }
      }
    }
    when(main =/= M.Run) { state := I.Off }
  }

  // ---- front stage: a block's descriptor, its tail, its route; a Snappy block decompressed into a block buffer
  // (ahead of the reader stage, which may still read the other buffer); each block handed on as a record ----
  val front = new Area {
    object F extends SpinalEnum { val Idle, Tail, SnapIn, SnapWait, Hold, RawWait, RawIn, RawCheck, ReDec = newElement() }
    val state = RegInit(F.Idle)
    val off, size = Reg(UInt(32 bits))
    val index = Reg(Bool())
    val out = fetch.io.output
    val beatBytes = out.fragment.data.subdivideIn(8 bits)
    // The tail read: the contents' last (up to) 4 bytes, then the type byte; one beat (two at W = 4, the
    // first kept in tailBuf).
    val tailHigh = Reg(Bool())
    val tailBuf = Vec(Reg(Bits(8 bits)), W min 4)
    val tailBytes = Vec((0 until 5).map { j =>
      if (W >= 8) beatBytes(j) else if (j < W) Mux(tailHigh, tailBuf(j), beatBytes(j)) else beatBytes(j - W)
    })
    val tailLen = Mux(size >= 4, U(4, 3 bits), size(2 downto 0))
    val tailSnappy = tailBytes(tailLen) === B(1, 8 bits)
    val tailEnd = state === F.Tail && out.valid && out.last
    val tailCount = (tailBytes(3) ## tailBytes(2) ## tailBytes(1) ## tailBytes(0)).asUInt
    when(state === F.Tail && out.valid && !out.last) {
      for (j <- 0 until (W min 4)) tailBuf(j) := beatBytes(j)
      tailHigh := True
    }
    when(tailEnd) { iss.predSnappy := tailSnappy }
    val sent = Reg(UInt(33 bits))
    val wrRow = Reg(UInt(rowBits bits))
    val wrHalf = Reg(Bool()) // the block buffer written (the record's)
    val startStored = False // a block's stored bytes begin: through the CRC, counted from 0
    descs.io.pop.ready := state === F.Idle && main === M.Run
    when(descs.io.pop.fire) {
      off := descs.io.pop.off
      size := descs.io.pop.size
      index := descs.io.pop.index
      tailHigh := False
      state := Mux(descs.io.pop.onePass, F.RawIn, F.Tail)
      startStored := descs.io.pop.onePass
    }

    // The record handed to the reader stage: a raw block straight from its tail beat (its bytes follow on the
    // fetch stream), or a buffered one (a Snappy block decompressed, a raw block read whole) or its verdict
    // (BAD_CRC, BAD_SNAPPY, an unknown type).
    val buf = RegInit(False) // the block buffer the next block fills
    val holdErr, holdSnappy, holdBuf = Reg(Bool())
    val holdCode = Reg(UInt(ErrorCodes.Width bits))
    val holdOffset, holdSize, holdRestarts = Reg(UInt(32 bits))
    val recValid = (tailEnd && !tailSnappy) || state === F.Hold
    val recBuffered = state === F.Hold
    val recSnappy = recBuffered && holdSnappy
    val recErr = recBuffered && holdErr
    val recSize = Mux(recBuffered, holdSize, size)
    val recRestarts = Mux(recBuffered, holdRestarts, Mux(size >= 4, tailCount, U(0, 32 bits)))
    val recTaken = Bool()
    val rawDone = Bool() // the reader stage took the raw block's last byte
    when(recTaken) { state := Mux(recBuffered, F.Idle, F.RawWait) }
    when(recTaken && recBuffered) { buf := !holdBuf } // the record's buffer is read now: the next block fills the other
    when(state === F.RawWait && rawDone) { state := F.Idle }

    // A block's size + 5 stored bytes through the CRC (contents and type), the bytes around its end caught as they
    // pass: trail(0..3) the contents' last 4 (a raw block's restart count), trail(4) the type, trail(5..8) the
    // stored CRC. A Snappy block's contents go into the decompressor, whose output fills block buffer `wrHalf`;
    // a raw block read in one pass goes into it as it is.
    val snFed = Reg(Bool()) // the contents' final beat went into the decompressor
    val snDone = Reg(Bool()) // its status taken (before the input ended only on an error)
    val snErr = Reg(Bool())
    val snCode = Reg(UInt(ErrorCodes.Width bits))
    val snOffset, snBytes = Reg(UInt(32 bits))
    val trail = Vec(Reg(Bits(8 bits)), 9)
    val storedCrc = (trail(8) ## trail(7) ## trail(6) ## trail(5)).asUInt
    val last4 = Vec(Reg(Bits(8 bits)), 4) // the decompressed block's last 4 bytes: its restart count
    when(tailEnd && tailSnappy) { startStored := True; state := F.SnapIn }
    when(startStored) {
      sent := 0
      snFed := False
      snDone := False
      wrRow := 0
      wrHalf := buf
      snCrc.io.clear := True
    }
    val k = out.fragment.count
    val contentsLeft = size.resize(33) - sent // while the contents are fed: sent <= size
    val crcLeft = Mux(size.resize(33) + 1 > sent, size.resize(33) + 1 - sent, U(0, 33 bits))
    val fromBuf = state === F.ReDec // the decompressor's input: the fetch, or (ReDec) the block buffer
    val bufBeat = Fragment(ByteBeat(W))
    val bufBeatValid = Bool()
    val decFetch = state === F.SnapIn && out.valid && !snFed && !snDone
    dec.io.input.valid := decFetch || (fromBuf && bufBeatValid && !snFed && !snDone)
    dec.io.input.data := Mux(fromBuf, bufBeat.data, out.fragment.data)
    dec.io.input.count := Mux(fromBuf, bufBeat.count, Mux(contentsLeft < k, contentsLeft.resize(k.getWidth), k))
    dec.io.input.last := Mux(fromBuf, bufBeat.last, contentsLeft <= k)
    val snBeat = state === F.SnapIn && out.valid && (snFed || snDone || dec.io.input.ready)
    val rawBeat = state === F.RawIn && out.valid
    val storedBeat = snBeat || rawBeat
    snCrc.io.input.valid := storedBeat
    snCrc.io.input.data := out.fragment.data
    snCrc.io.input.count := Mux(crcLeft < k, crcLeft.resize(k.getWidth), k)
    when(dec.io.input.fire && dec.io.input.last) { snFed := True }
    when(storedBeat) {
      sent := sent + k
      for (j <- 0 until 9) {
        val at = size.resize(34) + j // the byte's offset + 4
        val from = sent.resize(34) + 4
        val d = at - from
        when(at >= from && d < W) { trail(j) := beatBytes(d(lw - 1 downto 0)) }
      }
      when(out.last) { state := Mux(rawBeat, F.RawCheck, F.SnapWait) }
    }
    dec.io.output.ready := True
    val wrAt = (wrHalf ## wrRow).asUInt
    val bufWr = dec.io.output.fire || rawBeat
    blockBuf.write(wrAt, Mux(rawBeat, out.fragment.data, dec.io.output.data), bufWr)
    when(bufWr) { wrRow := wrRow + 1 }
    val outSeq = last4 ++ dec.io.output.data.subdivideIn(8 bits)
    when(dec.io.output.fire) {
      for (j <- 0 until 4) last4(j) := Vec((0 to W).map(n => outSeq(n + j)))(dec.io.output.count)
    }
    dec.io.status.ready := True
    when(dec.io.status.fire) {
      snDone := True
      snErr := dec.io.status.error
      snCode := dec.io.status.code
      snOffset := dec.io.status.offset
      snBytes := dec.io.status.bytes
    }
    val crcBad = verify && snCrc.io.masked =/= storedCrc
    // ReadBlock's order: the CRC over the stored bytes, then the decompressor's verdict (offsets in the
    // stored block); the decompressed contents then go to the block reader as a raw block.
    when(state === F.SnapWait && snDone) {
      holdErr := crcBad || snErr
      holdCode := Mux(crcBad, code("BAD_CRC"), snCode)
      holdOffset := Mux(crcBad, off, off + snOffset)
      holdSize := snBytes
      holdRestarts := Mux(snBytes >= 4, (last4(3) ## last4(2) ## last4(1) ## last4(0)).asUInt, U(0, 32 bits))
      holdSnappy := True
      holdBuf := wrHalf
      dec.io.softReset := snErr // it halts on an error until reset
      state := F.Hold
    }
    // A raw block read whole: ReadBlock's CRC, then its type: raw goes on as it is; Snappy (the guess was wrong) is
    // decompressed out of this buffer into the other one, once the reader stage is no longer reading that (ReDec);
    // any other type is BAD_BLOCK at the type byte.
    val rawType = trail(4)
    val readerOnBuf = Bool() // the reader stage reads a block buffer
    when(state === F.RawCheck) {
      iss.predSnappy := rawType === B(1, 8 bits)
      holdErr := True
      holdSnappy := False
      holdBuf := wrHalf
      holdSize := size
      holdRestarts := Mux(size >= 4, (trail(3) ## trail(2) ## trail(1) ## trail(0)).asUInt, U(0, 32 bits))
      state := F.Hold
      when(crcBad) { holdCode := code("BAD_CRC"); holdOffset := off }
        .elsewhen(rawType === 0) { holdErr := False }
        .elsewhen(rawType === 1) { holdErr := False; state := F.ReDec }
        .otherwise { holdCode := code("BAD_BLOCK"); holdOffset := off + size }
    }
    // ReDec: the stored contents out of buffer `buf` (the bytes of the stored block's first `size`) into the
    // decompressor, its output into the other buffer, then SnapWait as for a block decompressed from the fetch.
    val rdStart = state === F.RawCheck && !crcBad && rawType === 1
    // The other buffer is free once the reader stage has left it.
    val walk = new BufferWalk(buf, size.resize(33), fromBuf && !readerOnBuf && !snFed && !snDone,
      dec.io.input.fire, rdStart)
    val rdRow = Bits(8 * W bits) // the read port's data (the port is the reader stage's)
    when(rdStart) {
      wrRow := 0
      wrHalf := !buf
    }
    bufBeatValid := walk.valid
    bufBeat.data := rdRow
    bufBeat.count := walk.count
    bufBeat.last := walk.last
    when(fromBuf && (snFed || snDone)) { state := F.SnapWait; walk.valid := False }
    // A table that stops (an error) drains: a Snappy block in flight finishes its stored bytes (or, out of the
    // buffer, its contents), the rest is dropped.
    when(main =/= M.Run && (state === F.Tail || state === F.Hold || state === F.RawWait || state === F.RawIn ||
      state === F.RawCheck)) { state := F.Idle }
    val idle = state === F.Idle
  }

  // ---- reader stage: a record into the block reader (command, then its bytes from the fetch stream or the
  // block buffer), its status ----
  val con = new Area {
    object K extends SpinalEnum { val Idle, Stream, Wait = newElement() }
    val state = RegInit(K.Idle)
    val rBuf = Reg(Bool())
    val take = state === K.Idle && main === M.Run && front.recValid
    // The command goes out in the clock the record is taken (a raw block's restart count as its tail arrives).
    reader.io.cmd.valid := take && !front.recErr
    reader.io.cmd.size := front.recSize
    reader.io.cmd.restarts := front.recRestarts
    reader.io.cmd.verify := verify && !front.recBuffered // a buffered block's CRC was checked as it was stored
    front.recTaken := take && (front.recErr || reader.io.cmd.ready)
    when(front.recTaken) {
      blkOff := front.off
      blkSize := front.recSize
      blkIndex := front.index
      snappy := front.recSnappy
      buffered := front.recBuffered
      rBuf := front.holdBuf
      when(front.recErr) { failWith(front.holdCode, front.holdOffset) }
    }
    val rs = front.recRestarts
    when(reader.io.cmd.fire) {
      entriesEnd := front.recSize.resize(36) - ((rs.resize(36) << 2) + 4).resize(36)
      startBad := front.recSize < 4 || rs === 0 || rs > ((front.recSize - 4) >> 2)
      sent := 0
      dropping := False
      tagErr := False
      blkEntries := 0
      for (j <- 0 until 4) r0(j) := 0
      state := K.Stream
    }

    // The block buffer read out as the block reader's input: the block's D bytes (decompressed, or raw as
    // stored), then 5 zero bytes (type 0, raw; the reader's CRC check is off), full beats but the last.
    val streamBeat = Bool()
    front.readerOnBuf := state === K.Stream && buffered
    val feed = new BufferWalk(rBuf, blkSize.resize(33) + 5, front.readerOnBuf, streamBeat && buffered, front.recTaken)
    // The buffer's one read port: this stage's, or the front stage's while it decompresses out of a buffer
    // (never both: the front waits until this stage has left the buffers).
    val fw = front.walk
    val rd = blockBuf.readSync(Mux(fw.en, fw.addr, feed.addr), feed.en || fw.en)
    front.rdRow := rd
    val feedBeat = Fragment(ByteBeat(W))
    feedBeat.count := feed.count
    feedBeat.last := feed.last
    for (i <- 0 until W) feedBeat.data(8 * i, 8 bits) := Mux(feed.at + i < blkSize.resize(33), rd(8 * i, 8 bits), B(0, 8 bits))

    val out = fetch.io.output
    val inValid = Mux(buffered, feed.valid, out.valid)
    val inBeat = Mux(buffered, feedBeat, out.payload)
    reader.io.input.valid := state === K.Stream && inValid
    reader.io.input.payload := inBeat
    streamBeat := state === K.Stream && inValid && reader.io.input.ready
    front.rawDone := streamBeat && !buffered && inBeat.last
    when(streamBeat) {
      sent := sent + inBeat.fragment.count
      for (j <- 0 until 4) {
        val at = entriesEnd + j
        val d = (at - sent.resize(36)).resize(36)
        when(at >= sent.resize(36) && d < W) { r0(j) := inBeat.fragment.data.subdivideIn(8 bits)(d(lw - 1 downto 0)) }
      }
      when(inBeat.last) { state := K.Wait }
    }

    // The verdict in the model's order: ReadBlock (truncation, size, CRC, type), Block's restart checks,
    // the first restart point, then the entries' errors in entry order.
    val st = reader.io.status
    st.ready := state === K.Wait && coll.idle && main === M.Run
    val early = st.error && (st.code === code("BAD_CRC") || st.code === code("TRUNCATED") ||
      (st.code === code("BAD_BLOCK") && st.offset === blkSize) || startBad)
    val r0Bad = r0.asBits =/= 0
    when(st.fire) {
      state := K.Idle
      when(early) { failWith(st.code, where(st.offset)) }
        .elsewhen(r0Bad) { fail("BAD_BLOCK", where(entriesEnd)) }
        .elsewhen(blkIndex) {
          when(idxStop) { deferred := True; defCode := idxErrCode; defOffset := idxErrOffset }
            .elsewhen(st.error) { deferred := True; defCode := st.code; defOffset := where(st.offset) }
          // the data blocks: the window's, from its first handle on (a whole table: 0 .. handleCount)
          // (an index that stopped early keeps the window within the handles it gave, then reports its error)
          val end = Mux(endBlock === 0, handleCount.resize(32), endBlock)
          val within = Mux(end > handleCount.resize(32), handleCount.resize(32), end)
          winEnd := within.resized
          iss.next := firstBlock.resized
          iss.isIndex := False
          when(!idxStop && !st.error && (end > handleCount.resize(32) || firstBlock > end)) {
            fail("BAD_JOB", blkOff) // a window the index does not have: named at the index block
          } elsewhen (firstBlock >= within) {
            main := M.Flush
          } otherwise { iss.state := iss.I.Read }
        }
        .otherwise {
          entriesOk := entriesOk + blkEntries
          when(tagErr) { fail("BAD_BLOCK", tagOffset) }
            .elsewhen(st.error) { failWith(st.code, where(st.offset)) }
            .otherwise {
              blocksOk := blocksOk + 1
              when(blocksOk + 1 + firstBlock === winEnd.resize(32)) { main := M.Flush }
            }
        }
    }
  }
  // A table that ended (every data block read) reports the index's deferred error, if any.
  when(main === M.Flush && !errValid && deferred) {
    errValid := True; errCode := defCode; errOffset := defOffset
  }

  // ---- data entries out: a key without its 8-byte tag is the model's BAD_BLOCK at the entry ----
  val e = reader.io.entries
  val dataPhase = !blkIndex
  val shortKey = e.fragment.kind === U(EntryKind.Head, 2 bits) && e.fragment.keyBytes < 8
  val dropNow = dropping || shortKey
  io.entries.valid := e.valid && dataPhase && !dropNow
  io.entries.payload := e.payload
  e.ready := Mux(dataPhase, dropNow || io.entries.ready, coll.state === coll.C.Take)
  when(e.fire && dataPhase) {
    when(!dropping && shortKey) {
      dropping := True
      tagErr := True
      tagOffset := where(reader.io.entryOffset)
    }
    when(!dropNow && e.fragment.kind === U(EntryKind.Head, 2 bits)) { blkEntries := blkEntries + 1 }
  }

  // ---- the main sequence ----
  fetch.io.cmd << fetchCmd
  io.cmd.ready := main === M.Idle
  io.status.valid := main === M.Status
  // A read the memory answered with an error (SLVERR/DECERR) makes the table's bytes untrustworthy: BAD_JOB
  // at offset 0 stands above any verdict drawn from them.
  val axiBad = fetch.io.axiError
  io.status.error := errValid || axiBad
  io.status.code := Mux(axiBad, code("BAD_JOB"), Mux(errValid, errCode, U(0, ErrorCodes.Width bits)))
  io.status.offset := Mux(errValid && !axiBad, errOffset, U(0, 32 bits))
  io.status.entries := entriesOk
  io.status.blocks := blocksOk
  val footerAt = n - FooterBytes
  val ih = new HandleCheck(parse.res0, parse.res1)
  switch(main) {
    is(M.Idle) {
      when(io.cmd.fire) {
        base := io.cmd.base
        n := io.cmd.size
        verify := io.cmd.verify
        firstBlock := io.cmd.firstBlock
        endBlock := io.cmd.endBlock
        errValid := False
        deferred := False
        entriesOk := 0
        blocksOk := 0
        handleCount := 0
        idxStop := False
        blkIndex := True
        fetch.io.clearError := True
        dec.io.softReset := True
        main := M.FooterReq
        when(io.cmd.size < FooterBytes) {
          errValid := True; errCode := code("TRUNCATED"); errOffset := io.cmd.size; main := M.Flush
        }
      }
    }
    is(M.FooterReq) {
      fetchCmd.valid := True
      fetchCmd.addr := base + footerAt
      fetchCmd.len := FooterBytes
      bufBeat := 0
      when(fetchCmd.ready) { main := M.FooterRecv }
    }
    is(M.FooterRecv) {
      when(fetch.io.output.valid) {
        bufWrite := True
        bufData := fetch.io.output.fragment.data
        bufCount := fetch.io.output.fragment.count
        when(fetch.io.output.last) { main := M.FooterCheck }
      }
    }
    is(M.FooterCheck) {
      when(buf.slice(40, 48).reverse.reduce(_ ## _) =/= B(Magic, 64 bits)) { fail("BAD_MAGIC", n - 8) } otherwise {
        parse.start := True
        parse.startLimit := 40
        parse.startCount := 4
        main := M.FooterParse
      }
    }
    is(M.FooterParse) {
      when(!parse.busy && !parse.start) {
        when(parse.failed) { fail("BAD_VARINT", footerAt + parse.varStart) }
          .elsewhen(ih.truncated) { fail("TRUNCATED", ih.truncAt) }
          .elsewhen(ih.tooBig) { fail("BAD_BLOCK", parse.res0) }
          .otherwise {
            iss.hOff := parse.res0.resized
            iss.hSize := parse.res1.resized
            iss.isIndex := True
            iss.onePass := False
            iss.state := iss.I.Desc
            main := M.Run
          }
      }
    }
    is(M.Flush) { // everything asked is read and dropped; the reader is idle between blocks
      descs.io.flush := True
      when(fetch.io.idle && con.state === con.K.Idle && front.idle) { main := M.Status }
    }
    is(M.Status) {
      when(io.status.fire) { main := M.Idle }
    }
  }
  // The fetch output: the footer, a restart count, a block's bytes, or (flushing) dropped.
  fetch.io.output.ready := (main === M.FooterRecv) || (main === M.Flush && front.state =/= front.F.SnapIn) ||
    (front.state === front.F.Tail && (!fetch.io.output.last || front.tailSnappy || front.recTaken)) ||
    (con.state === con.K.Stream && !buffered && reader.io.input.ready) || front.snBeat || front.rawBeat
}

/** `table_engine.GenerateTableReader [--bytes 4|8|16|32] [--key-limit N] [--max-block N] [--max-blocks N]
  * [--snappy-bytes 16384..262144] --out DIR`: DIR/TableReader.v, the table front end with its block reader and Snappy
  * decompressor (doc/table_reader.md). */
object GenerateTableReader extends Generator("build/gen/table_reader_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-block", 4 << 20, min = 64), Gen.intOpt("max-blocks", 1024, Seq(256, 1024, 4096, 16384)),
      Gen.intOpt("snappy-bytes", 1 << 16, (14 to 18).map(1 << _))) {
  def top(a: Gen.Args) = TableReader(TableReaderConfig(a.int("bytes"), a.int("key-limit"), a.int("max-block"),
    a.int("max-blocks"), snappyBytes = a.int("snappy-bytes")))
}
