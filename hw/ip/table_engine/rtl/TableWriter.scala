package table_engine

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._

/** Sizes of a table writer: `bytes` per beat, the longest internal key, the data block builder's restart RAM
  * (it bounds the block_size a job may ask, `maxBlockSize`) and the index buffer (the index block of one table
  * waits there until the table's data blocks are out; its bytes with trailer, a power of two; what passes it goes
  * to the job's spill region in DDR and comes back, IndexSpillPort), `indexEntries` (the index builder's restart
  * RAM: index entries of one table, one restart each), the filter unit's,
  * and `zipBytes`: the block buffer of Snappy compression (a block waits there until its compressed size is known;
  * 0: no compressor, a job asking for Snappy is BAD_JOB), `zipLanes`: block buffers with their own compressor, taking
  * consecutive blocks (ZipLanes; the model's kZipLanes, model/limits.h, is what the simulation builds get). */
case class TableWriterConfig(bytes: Int = 16, keyLimit: Int = 1032, maxRestarts: Int = 2048, indexBytes: Int = 1 << 16,
                             filterBytes: Int = 1 << 16, filterKeys: Int = 4096, maxFilters: Int = 4096, hashWords: Int = 1,
                             zipBytes: Int = 1 << 16, zipLanes: Int = 1, bigBytes: Int = 4 << 20,
                             indexEntries: Int = 4096) {
  val data = BlockBuilderConfig(bytes, keyLimit, maxRestarts)
  /** The filter unit (bloom_bits_per_key > 0): see BloomConfig. */
  val bloom = BloomConfig(bytes, filterKeys, filterBytes, maxFilters, hashWords)
  val entry = data.entry
  require(isPow2(indexBytes) && indexBytes >= 1024, s"index buffer of $indexBytes bytes: a power of two >= 1024")
  /** Every index entry is a restart point (interval 1): a table's index entries are bounded by this RAM, not by
    * the index buffer, whose overflow spills. */
  val index = BlockBuilderConfig(bytes, keyLimit, indexEntries)
  val indexBeats = indexBytes / bytes
  /** A restart point's entry takes at least 15 bytes (3 varints, a whole key of >= 8, its restart offset) and
    * a block closes once it reaches block_size, so a block of up to this block_size never needs more than
    * `maxRestarts` restarts: LevelDB's flush rule alone closes every block. */
  val maxBlockSize = 15 * (maxRestarts - 2)
  /** A block handle (two varint32s) in whole beats. */
  val handleBytes = (10 + bytes - 1) / bytes * bytes
  // An index block within the index buffer goes through the block buffer whole (a spilled one may be big).
  require(zipBytes == 0 || zipBytes >= indexBytes, s"block buffer of $zipBytes bytes: at least the index buffer's $indexBytes")
  require(zipLanes >= 1 && zipLanes <= 16, s"$zipLanes compressor lanes: 1 to 16")
  /** With Snappy, a block past the block buffer streams out raw while its compressor counts its Snappy form (a
    * big block, BlockZip): up to this many contents bytes (the model's kMaxBlockBytes; more: OUTPUT_FULL). */
  require(bigBytes >= zipBytes && bigBytes < (1 << 28), s"big blocks of $bigBytes bytes: at least the block buffer")
}

/** The writer's entry stream is the block reader's framing plus control beats: kind 3, no data, `count`
  * saying which. CUT closes the output table before the next entry (Compaction::ShouldStopBefore, decided on
  * the merge side; ignored when the table is empty); END closes it and ends the job. */
object WriterControl {
  val Kind = 3
  val Cut = 0
  val End = 1
}

/** A job's options (LevelDB's Options::block_size, block_restart_interval, max_file_size, the bits per key of
  * NewBloomFilterPolicy: 0 no filter block, and `snappy`: Options::compression is kSnappyCompression). */
case class TableWriterCmd() extends Bundle {
  val blockSize = UInt(32 bits)
  val restartInterval = UInt(16 bits)
  val maxFileSize = UInt(32 bits)
  val bitsPerKey = UInt(10 bits)
  val snappy = Bool()
  /** The spill region's bytes (0: none; the index block must then fit the index buffer). */
  val spillBytes = UInt(32 bits)
}

/** The index block past the index buffer: its beats leave on `push` in order (all full but a table's final one;
  * beat n of the table's spill belongs at the spill region's start + n x bytes), `fetch` asks the table's spilled
  * beats back (their count, once the last of them has left: the engine answers after those writes are done) and
  * `data` brings them in order. The engine (TableEngine) keeps them in DDR; a harness may keep them anywhere. */
case class IndexSpillPort(bytes: Int) extends Bundle with IMasterSlave {
  val push = Stream(Bits(8 * bytes bits))
  val fetch = Stream(UInt(32 bits))
  val data = Stream(Bits(8 * bytes bits))
  override def asMaster(): Unit = {
    master(push, fetch)
    slave(data)
  }
}

/** One per output table (after its last byte and its two keys on `keys`): `size` (the file's bytes), its
  * entries, the lengths of its smallest and largest internal keys. One with `done` per job: `size` and
  * `entries` of the whole job; with `error` the job stopped: `code` (model/error.h) and in `entries` the
  * number of entries taken before the one at fault. */
case class TableWriterStatus(c: TableWriterConfig) extends Bundle {
  val done = Bool()
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val size = UInt(32 bits)
  val entries = UInt(32 bits)
  val smallestBytes = UInt(c.entry.keyLenBits bits)
  val largestBytes = UInt(c.entry.keyLenBits bits)
}

/** LevelDB's table layout constants known at elaboration. */
object TableFormat {
  val Magic = BigInt("db4775248b80fb57", 16)
  val FooterBytes = 48
  def crc32c(bytes: Seq[Int]): Long = {
    var c = 0xffffffffL
    for (b <- bytes) {
      c ^= b
      for (_ <- 0 until 8) c = if ((c & 1) != 0) (c >>> 1) ^ Crc32c.Poly.toLong else c >>> 1
    }
    c ^ 0xffffffffL
  }
  def mask(crc: Long): Long = (((crc >>> 15) | (crc << 17)) + Crc32c.MaskDelta.toLong) & 0xffffffffL
  /** The metaindex block of a table without a filter: an empty block (restart 0, count 1) and its raw-block
    * trailer. A filter block would add its one entry here (a later unit). */
  val Metaindex: Seq[Int] = {
    val withType = Seq(0, 0, 0, 0, 1, 0, 0, 0, 0)
    val m = mask(crc32c(withType))
    withType ++ (0 until 4).map(i => ((m >> (8 * i)) & 0xff).toInt)
  }
  val MetaindexSize = 8
  /** The metaindex entry's key of a table with a bloom filter block (TableBuilder::Finish). */
  val FilterKey: Seq[Int] = Bloom.PolicyName.map(_.toInt)
  def bits(bytes: Seq[Int], n: Int): Bits = B(bytes.zipWithIndex.map { case (b, i) => BigInt(b) << (8 * i) }.sum, 8 * n bits)
}

/** Writes LevelDB tables (TableBuilder, as the model's table_writer.cc) from a stream of sorted entries: data
  * blocks by a BlockBuilder closed by LevelDB's flush rule, the index block by a second one (restart interval 1)
  * into the index buffer, the filter block when asked, the metaindex block, the footer, every block but the filter
  * and metaindex through BlockZip when the job asks for Snappy; output tables closed
  * at max_file_size (DBImpl::DoCompactionWork's rule) and at CUT beats. `output`: each table's bytes, full beats
  * but the final one, `last` on it; `keys`: each table's smallest then largest internal key (`last` on each
  * key's final beat); `status`: see TableWriterStatus. `softReset` returns the unit to its reset state (after
  * an error it waits for it). See doc/table_writer.md. */
case class TableWriter(c: TableWriterConfig = TableWriterConfig()) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (TableWriterCmd())
    val entries = slave Stream (Fragment(EntryBeat(c.entry)))
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val keys = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (TableWriterStatus(c))
    val spill = master(IndexSpillPort(c.bytes))
    val softReset = in Bool()
  }
  val soft = ClockDomain(clock = ClockDomain.current.readClockWire,
    reset = ClockDomain.current.readResetWire || io.softReset, config = ClockDomain.current.config)
  val core = soft(TableWriterCore(c))
  // Filter-buffer words that may hold bits (all of them at power-up; those of a table stopped mid-way, kept across
  // the soft reset): cleared before the next job with a filter.
  soft.setSynchronousWith(ClockDomain.current) // one clock: the register below talks with the core
  val dirty = Reg(UInt(log2Up(c.bloom.words + 1) bits)) init (c.bloom.words)
  core.io.dirty := dirty
  when(core.io.dirtyNext.valid) { dirty := core.io.dirtyNext.payload }
  core.io.cmd << io.cmd
  core.io.entries << io.entries
  io.output << core.io.output
  io.keys << core.io.keys
  io.status << core.io.status
  io.spill <> core.io.spill
}

/** The table writer inside TableWriter's soft-reset clock domain. */
case class TableWriterCore(c: TableWriterConfig) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (TableWriterCmd())
    val entries = slave Stream (Fragment(EntryBeat(c.entry)))
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val keys = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (TableWriterStatus(c))
    val spill = master(IndexSpillPort(c.bytes))
    val dirty = in UInt (log2Up(c.bloom.words + 1) bits)
    val dirtyNext = master Flow (UInt(log2Up(c.bloom.words + 1) bits))
  }
  val W = c.bytes
  val KW = c.entry.keyWords
  val KB = c.entry.keyLenBits
  def min(a: UInt, b: UInt): UInt = Mux(a < b, a, b)
  def lanes(x: Bits): Vec[Bits] = x.subdivideIn(8 bits)
  /** Beat `idx` (W bytes) of `all`. */
  def pick(all: Bits, idx: UInt): Bits = {
    val words = all.subdivideIn(8 * W bits)
    if (words.size == 1) words(0) else words(idx.resize(log2Up(words.size)))
  }

  // ---- the two block builders; the index block waits in the index buffer until the table's end ----
  val data = BlockBuilder(c.data)
  val index = BlockBuilder(c.index)
  val indexBuffer = StreamFifo(Fragment(ByteBeat(W)), c.indexBeats)
  index.io.restartInterval := 1
  // The index block's first indexBeats beats stay in the buffer, the rest spill (nothing leaves the buffer before
  // the table's end, so `onChip` counting pushes is its fill); read back the buffer's beats first, then the spill's.
  val spillCap = Reg(UInt(32 bits)) init (0) // the job's spill region in bytes, whole beats
  val onChip = Reg(UInt(log2Up(c.indexBeats + 1) bits)) init (0) // beats pushed into the buffer this table
  val chipOut = Reg(UInt(log2Up(c.indexBeats + 1) bits)) init (0) // beats popped from it
  val spilled = Reg(UInt(32 bits)) init (0) // beats pushed to the spill this table
  val spillBack = Reg(UInt(32 bits)) init (0) // beats come back
  val tailCount = Reg(UInt(log2Up(W + 1) bits)) init (0) // bytes of the spill's final beat
  val spillEnded, fetched = RegInit(False) // the block's last beat spilled; its fetch asked
  val toChip = onChip =/= c.indexBeats
  indexBuffer.io.push.valid := index.io.output.valid && toChip
  indexBuffer.io.push.payload := index.io.output.payload
  io.spill.push.valid := index.io.output.valid && !toChip
  io.spill.push.payload := index.io.output.data
  index.io.output.ready := Mux(toChip, indexBuffer.io.push.ready, io.spill.push.ready)
  when(indexBuffer.io.push.fire) { onChip := onChip + 1 }
  when(io.spill.push.fire) {
    spilled := spilled + 1
    when(index.io.output.last) { spillEnded := True; tailCount := index.io.output.count }
  }
  io.spill.fetch.valid := spillEnded && !fetched
  io.spill.fetch.payload := spilled
  when(io.spill.fetch.fire) { fetched := True }
  /** The index block as it comes back: the buffer's beats, then (once all of them are out) the spill's. */
  val idxPop = Stream(Fragment(ByteBeat(W)))
  val fromSpill = chipOut === c.indexBeats
  val spillLast = spillBack + 1 === spilled
  idxPop.valid := Mux(fromSpill, io.spill.data.valid, indexBuffer.io.pop.valid)
  idxPop.data := Mux(fromSpill, io.spill.data.payload, indexBuffer.io.pop.data)
  idxPop.count := Mux(fromSpill, Mux(spillLast, tailCount, U(W, log2Up(W + 1) bits)), indexBuffer.io.pop.count)
  idxPop.last := Mux(fromSpill, spillLast, indexBuffer.io.pop.last)
  idxPop.ready := False
  indexBuffer.io.pop.ready := !fromSpill && idxPop.ready
  io.spill.data.ready := fromSpill && idxPop.ready
  when(indexBuffer.io.pop.fire) { chipOut := chipOut + 1 }
  when(io.spill.data.fire) { spillBack := spillBack + 1 }
  /** The index block's bytes (entries, restarts, count, trailer) the buffer and the spill hold together. */
  val indexCap = U(c.indexBytes, 32 bits) + spillCap
  val idxCount = Reg(UInt(32 bits)) init (0) // index entries sent to the builder this table
  val idxSized = RegInit(False) // with Snappy: the index block's last entry left HandleFill, its size is known
  /** The index entries as the writer issues them: straight to the index builder without Snappy; with Snappy
    * through `idxQ` and HandleFill, which gives each its data block's handle once the lanes have its size. */
  val idxIn = cloneOf(index.io.entries)
  data.io.status.ready := True // the writer knows each block's size from its estimate at the FLUSH
  index.io.status.ready := False

  // ---- output packer: beats of 0..W bytes from the blocks, the metaindex and the footer into full beats ----
  val Cap = 2 * W
  val buf = Reg(Bits(8 * Cap bits)) init (0)
  val fill = Reg(UInt(log2Up(Cap + 1) bits)) init (0)
  val closing = RegInit(False) // the table's final bytes are in: drain, `last` on the final beat
  val pk = new Bundle {
    val valid = Bool()
    val data = Bits(8 * W bits)
    val count = UInt(log2Up(W + 1) bits)
    val fin = Bool()
  }
  io.output.valid := fill >= W || (closing && fill =/= 0)
  io.output.data := buf(0, 8 * W bits)
  io.output.count := Mux(fill >= W, U(W), fill).resized
  io.output.last := closing && fill <= W
  val popped = Mux(io.output.fire, io.output.count.resize(fill.getWidth), U(0, fill.getWidth bits))
  val keptFill = fill - popped
  val kept = buf >> (popped << 3)
  val pkReady = keptFill <= W && !closing
  val pkFire = pk.valid && pkReady
  val pkMasked = Bits(8 * W bits)
  for (i <- 0 until W) pkMasked(8 * i, 8 bits) := Mux(U(i) < pk.count, pk.data(8 * i, 8 bits), B(0, 8 bits))
  buf := kept.resized
  fill := keptFill
  when(pkFire) {
    buf := (kept.resize(8 * Cap) | (pkMasked.resize(8 * Cap) << (keptFill << 3)).resize(8 * Cap))
    fill := keptFill + pk.count
    when(pk.fin) { closing := True }
  }
  when(io.output.fire && io.output.last) { closing := False }
  val packerEmpty = fill === 0 && !closing
  val fcrc = Crc32cUnit(W) // the filter block's trailer (its contents and type byte)
  fcrc.io.clear := False
  fcrc.io.input.valid := False
  fcrc.io.input.data := pkMasked
  fcrc.io.input.count := pk.count
  // By default the data blocks flow out (through the lanes with Snappy); the table's end overrides with filter,
  // metaindex, index and footer (the lanes idle then).
  val snappy = RegInit(False) // the job's compression
  pk.valid := data.io.output.valid
  pk.data := data.io.output.data
  pk.count := data.io.output.count
  pk.fin := False
  data.io.output.ready := pkReady
  val metaBlock = RegInit(False) // the metaindex block is in the data builder: BlockZip keeps it raw
  val zip = (c.zipBytes > 0) generate new Area {
    val unit = ZipLanes(c)
    unit.io.input.valid := False
    unit.io.input.payload := data.io.output.payload
    unit.io.compress := !metaBlock
    unit.io.bigLen.valid := snappy && !metaBlock && data.io.ahead.valid
    unit.io.bigLen.payload := data.io.ahead.payload

    unit.io.result.ready := False
    unit.io.output.ready := False
    when(snappy) {
      unit.io.input.valid := data.io.output.valid
      data.io.output.ready := unit.io.input.ready
      pk.valid := unit.io.output.valid
      pk.data := unit.io.output.data
      pk.count := unit.io.output.count
      unit.io.output.ready := pkReady
    }
  }
  /** BlockZip has no block (always so without Snappy). */
  val zipIdle = if (c.zipBytes > 0) !snappy || zip.unit.io.idle else True

  // ---- job options ----
  val blockSize = Reg(UInt(32 bits))
  val interval = Reg(UInt(16 bits)) init (1)
  val maxFileSize = Reg(UInt(32 bits))
  data.io.restartInterval := interval

  // ---- the filter unit: user keys hashed as their KEY beats pass, the hashes wait in the hash FIFO until their
  // filter is written into the filter buffer (FilterBlockBuilder::StartBlock at each data block's offset) ----
  val BC = c.bloom
  val bitsPerKey = Reg(UInt(10 bits)) init (0)
  val probes = Reg(UInt(5 bits))
  val filterOn = bitsPerKey =/= 0
  val keyQ = StreamFifo(Fragment(HashBeat(W)), 32)
  val hasher = BloomHasher(BC)
  hasher.io.input << keyQ.io.pop
  val hashQ = StreamFifo(UInt(32 bits), BC.hashSlots)
  hashQ.io.push << hasher.io.hash
  val gen = FilterGen(BC)
  val fcmdQ = StreamFifo(FilterCmd(BC), 4)
  gen.io.cmd << fcmdQ.io.pop
  gen.io.hashes << hashQ.io.pop
  gen.io.probes := probes
  keyQ.io.push.valid := False
  keyQ.io.push.payload.assignDontCare()
  fcmdQ.io.push.valid := False
  fcmdQ.io.push.payload.assignDontCare()
  io.dirtyNext.valid := False
  io.dirtyNext.payload := 0
  val openKeys = Reg(UInt(BC.keyBits bits)) init (0) // keys since the last filter was issued
  val openBits = Reg(UInt(32 bits)) init (0) // openKeys x bits_per_key
  val issued = Reg(UInt(32 bits)) init (0) // filters issued in this table
  val fUsed = Reg(UInt(32 bits)) init (0) // filter buffer bytes issued in this table
  val fw = Reg(UInt(32 bits)) init (0) // filter buffer word (clean, read-out)
  val fo = Reg(UInt(32 bits)) init (0) // filter offset read out
  val filterOff = Reg(UInt(32 bits))
  val filterSize = Reg(UInt(32 bits))
  val metaSize = Reg(UInt(32 bits))
  gen.io.bufAddr := fw.resized
  gen.io.clear := False
  gen.io.clearAddr := fw.resized
  gen.io.offAddr := fo.resized
  val fBytes = ((Mux(openBits < 64, U(64, 32 bits), openBits) + 7) >> 3).resize(32) // the open filter's bit array
  /** Issue the open filter and empty ones up to `target` (the generator writes them while entries go on). */
  def issueFilter(target: UInt): Unit = {
    fcmdQ.io.push.valid := True
    fcmdQ.io.push.keys := openKeys
    fcmdQ.io.push.bytes := fBytes.resized
    fcmdQ.io.push.base := fUsed.resized
    fcmdQ.io.push.first := issued
    fcmdQ.io.push.target := target
    issued := target
    openKeys := 0
    openBits := 0
    val end = Mux(openKeys === 0, fUsed, fUsed + fBytes + 1)
    fUsed := end
    io.dirtyNext.valid := True
    io.dirtyNext.payload := ((end + W - 1) >> log2Up(W)).resized
  }
  /** The filter block would pass the filter buffer or its offset RAM: OUTPUT_FULL. */
  def filterOver(target: UInt): Bool = target > BC.maxFilters || (openKeys =/= 0 && fUsed + fBytes + 1 > BC.filterBytes)

  // ---- keys: the entry's and the previous one (two banks swapped per entry), and the table's first ----
  val keyMem = Mem(Bits(8 * W bits), 2 * KW)
  val firstMem = Mem(Bits(8 * W bits), KW)
  val bank = RegInit(False) // the bank the current key goes to; the last key is in !bank after an entry
  def keyAddr(b: Bool, word: UInt): UInt =
    (b.asUInt.resize(log2Up(2 * KW)) * KW + word.resize(log2Up(2 * KW))).resize(log2Up(2 * KW))
  val curLen = Reg(UInt(KB bits))
  val valueLen = Reg(UInt(32 bits))
  val prevLen = Reg(UInt(KB bits)) init (0) // the last entry's key (in !bank)
  val firstLen = Reg(UInt(KB bits)) init (0)
  val keyBeat = Reg(UInt(log2Up(KW + 1) bits))
  // The first user-key byte where the key differs from the previous one (ShortestSeparator's index i) ...
  val sepFound = Reg(Bool())
  val sepPos = Reg(UInt(KB bits))
  val sepPrev = Reg(UInt(8 bits))
  val sepNew = Reg(UInt(8 bits))
  // ... and its first user-key byte other than 0xff (ShortSuccessor's), for the key and for the last key.
  val succFound = Reg(Bool())
  val succPos = Reg(UInt(KB bits))
  val lastSuccFound = Reg(Bool())
  val lastSuccPos = Reg(UInt(KB bits))

  // ---- table and job state ----
  val fileOffset = Reg(UInt(32 bits)) init (0) // the table's bytes so far (TableBuilder::FileSize once blocks are out)
  val tableEntries = Reg(UInt(32 bits)) init (0)
  val blockEntries = Reg(UInt(32 bits)) init (0)
  val jobEntries = Reg(UInt(32 bits)) init (0)
  val jobBytes = Reg(UInt(32 bits)) init (0)
  val pendingIndex = RegInit(False) // a data block whose index entry waits for the next key (or the end)
  val pendOff = Reg(UInt(32 bits))
  val pendSize = Reg(UInt(32 bits))
  val indexUsed = Reg(UInt(32 bits)) init (0) // the index block's entries and restarts so far
  val endOfTable = RegInit(False) // the index entry being written is the table's last (short successor)
  val endOfJob = RegInit(False)
  val metaOff = Reg(UInt(32 bits))
  val indexOff = Reg(UInt(32 bits))
  val indexSize = Reg(UInt(32 bits))
  val errCode = Reg(UInt(ErrorCodes.Width bits))
  val k = Reg(UInt(log2Up(KW + 64) bits)) // beat of a constant, footer or key being sent
  // A data block's FLUSH crosses into a later 2 KiB filter base: the open filter goes out. (With Snappy the
  // block's end is known once the lanes have given every size: the same test then, from the file's bytes.)
  val flushEnd = Mux(snappy, fileOffset, fileOffset + data.io.estimate + 5)
  val crossIdx = (flushEnd >> Bloom.BaseLg).resize(32)
  val cross = filterOn && crossIdx > issued
  val flushOk = !cross || fcmdQ.io.push.ready
  val flushOver = cross && filterOver(crossIdx)
  val zipThenClose = Reg(Bool()) // after the compressed block: the table's end (else the file-size check)
  // With Snappy: data blocks flushed into the lanes whose stored size is not yet taken, their raw sizes with
  // trailers (the most they add to the file), and the sizes taken (offset, size) until their index entries.
  val zipBlocks = Reg(UInt(log2Up(c.zipLanes + 4) + 1 bits)) init (0)
  val zipRaw = Reg(UInt(32 bits)) init (0)
  val zipFlush = Bool()
  zipFlush := False
  val handleQ = StreamFifo(HandleSlot(), c.zipLanes + 2)
  val idxOver = Bool() // HandleFill: an index entry would pass the index buffer

  // ---- the index entry being written: the key in idxBank shortened at `cut` (or whole), the pending handle ----
  val idxBank = Reg(Bool())
  val shorten = Reg(Bool())
  val cut = Reg(UInt(KB bits))
  val sepLen = Reg(UInt(KB bits))
  val handle = Bits(8 * c.handleBytes bits)
  val handleLen = UInt(4 bits)
  val fh = Bits(8 * c.handleBytes bits) // the filter block's handle (the metaindex entry's value)
  val fhLen = UInt(4 bits)

  object S extends SpinalEnum {
    val Cmd, Clean, Idle, Key, Value, Check, IdxSep, IdxHead, IdxKey, IdxVal, CloseFlush, CloseWait, Meta, CloseIdx,
        IdxFlush, IdxOut, IdxStatus, Footer, KeysFirst, KeysLast, Status, Done, Error, Halt,
        FClose, FWait, FBuf, FOff, FTail, FCrc, MetaHead, MetaKey, MetaVal, MetaFlush, MetaWait,
        Zip, ZipFilter, IdxZip, IdxZStatus, IdxZWait = newElement()
  }
  val state = RegInit(S.Cmd)

  val beat = io.entries.fragment
  io.cmd.ready := False
  io.entries.ready := False
  data.io.entries.valid := False
  data.io.entries.payload := io.entries.payload
  idxIn.valid := False
  idxIn.fragment.kind := EntryKind.Head
  idxIn.fragment.data := 0
  idxIn.fragment.count := 0
  idxIn.fragment.keyBytes := 0
  idxIn.fragment.valueBytes := 0
  idxIn.last := False
  io.keys.valid := False
  io.keys.data := 0
  io.keys.count := 0
  io.keys.last := False
  io.status.valid := False
  io.status.done := False
  io.status.error := False
  io.status.code := 0
  io.status.size := fileOffset
  io.status.entries := tableEntries
  io.status.smallestBytes := firstLen
  io.status.largestBytes := prevLen

  def fail(code: String): Unit = {
    errCode := ErrorCodes(code)
    state := S.Error
  }

  /** The entry's last beat went into the data block: the key becomes the previous one. `succ*` hold the
    * key's short-successor scan including the final beat. */
  def entryDone(succF: Bool, succP: UInt): Unit = {
    bank := !bank
    prevLen := curLen
    lastSuccFound := succF
    lastSuccPos := succP
    tableEntries := tableEntries + 1
    blockEntries := blockEntries + 1
    jobEntries := jobEntries + 1
    when(pendingIndex) {
      idxBank := !bank // the key before this entry (the swap above takes effect at the edge): the separator's start
      sepLen := prevLen
      state := S.IdxSep
    } otherwise { state := S.Check }
  }

  /** FLUSH the data block (the builder is idle): its handle becomes the pending index entry. With Snappy the block
    * goes to the lanes and its index entry takes the handle later (HandleFill); state Zip decides whether the
    * writer must wait for the sizes (the file-size cut, the filter's StartBlock in ZipFilter). */
  def flushData(): Unit = {
    data.io.entries.valid := True
    data.io.entries.fragment.kind := BuilderKind.Flush
    data.io.entries.last := True
    blockEntries := 0
    when(snappy) {
      pendingIndex := True
      zipFlush := True
    } otherwise {
      pendOff := fileOffset
      pendSize := data.io.estimate
      pendingIndex := True
      fileOffset := fileOffset + data.io.estimate + 5
      when(cross) { issueFilter(crossIdx) }
    }
  }

  /** Between entries: a HEAD starts the next entry, CUT / END close the table. */
  def takeBeat(): Unit = {
    when(io.entries.valid) {
      when(beat.kind === EntryKind.Head) {
        when(beat.keyBytes > c.keyLimit) { fail("KEY_TOO_LONG") }
          .elsewhen(beat.keyBytes < 8) { fail("BAD_JOB") } // not an internal key (user key + 8-byte tag)
          .elsewhen(filterOn && openKeys === BC.hashSlots) { fail("OUTPUT_FULL") } // one filter's keys past the hash FIFO
          .otherwise {
            data.io.entries.valid := True
            io.entries.ready := data.io.entries.ready
            when(data.io.entries.ready) {
              openKeys := openKeys + 1
              openBits := openBits + bitsPerKey
              curLen := beat.keyBytes
              valueLen := beat.valueBytes
              keyBeat := 0
              sepFound := False
              succFound := False
              when(tableEntries === 0) { firstLen := beat.keyBytes }
              state := S.Key
            }
          }
      } elsewhen (beat.kind === WriterControl.Kind) {
        io.entries.ready := True
        val end = beat.count === WriterControl.End
        endOfJob := end
        when(tableEntries =/= 0) { state := S.CloseFlush } elsewhen (end) { state := S.Done }
      } otherwise { fail("BAD_JOB") } // a KEY or VALUE beat outside an entry
    }
  }

  switch(state) {
    is(S.Cmd) {
      val clean = io.cmd.bitsPerKey =/= 0 && io.dirty =/= 0
      io.cmd.ready := !clean
      when(io.cmd.valid && clean) { fw := 0; state := S.Clean }
      when(io.cmd.fire) {
        blockSize := io.cmd.blockSize
        interval := io.cmd.restartInterval
        maxFileSize := io.cmd.maxFileSize
        bitsPerKey := io.cmd.bitsPerKey
        snappy := io.cmd.snappy
        spillCap := io.cmd.spillBytes(31 downto log2Up(W)) @@ U(0, log2Up(W) bits)
        val rom = Vec((0 until Bloom.ProbesCap).map(b => U(Bloom.probes(b), 5 bits)))
        probes := Mux(io.cmd.bitsPerKey >= Bloom.ProbesCap, U(30, 5 bits), rom(io.cmd.bitsPerKey.resize(log2Up(Bloom.ProbesCap))))
        jobEntries := 0
        jobBytes := 0
        state := S.Idle
        when(io.cmd.blockSize > c.maxBlockSize || io.cmd.restartInterval === 0 || (if (c.zipBytes > 0) False else io.cmd.snappy)) {
          fail("BAD_JOB")
        }
      }
    }
    is(S.Clean) { // bits left by a table stopped mid-way (soft reset) cleared before the next job
      gen.io.clear := True
      fw := fw + 1
      when(fw + 1 >= io.dirty) { io.dirtyNext.valid := True; state := S.Cmd }
    }
    is(S.Idle) { takeBeat() }
    is(S.Key) {
      val base = (keyBeat * W).resize(KB + 1)
      // The user key's bytes (the 8-byte tag excluded) to the hasher; a user key of no bytes as one empty beat.
      val userLen = (curLen - 8).resize(KB + 1)
      val toHash = filterOn && (base < userLen || keyBeat === 0)
      val hashReady = !toHash || keyQ.io.push.ready
      data.io.entries.valid := io.entries.valid && hashReady
      io.entries.ready := data.io.entries.ready && hashReady
      keyQ.io.push.valid := io.entries.valid && data.io.entries.ready && toHash
      keyQ.io.push.data := beat.data
      keyQ.io.push.count := Mux(base >= userLen, U(0), min(U(W, KB + 1 bits), userLen - base)).resized
      keyQ.io.push.hashInit := U(Bloom.Seed, 32 bits) ^ (userLen * U(Bloom.M, 32 bits)).resize(32)
      keyQ.io.push.fragment.keyStart := keyBeat === 0
      keyQ.io.push.last := base + W >= userLen
      val prevWord = lanes(keyMem.readAsync(keyAddr(!bank, keyBeat.resized)))
      val word = lanes(beat.data)
      val n = min(prevLen, curLen) - 8 // both keys' user parts (pendingIndex: the previous key is >= 8 bytes)
      val diff = Bits(W bits)
      val notFF = Bits(W bits)
      for (i <- 0 until W) {
        diff(i) := base + i < n && word(i) =/= prevWord(i)
        notFF(i) := base + i < curLen - 8 && word(i) =/= B"xFF"
      }
      val diffAt = OHToUInt(OHMasking.first(diff))
      val succAt = OHToUInt(OHMasking.first(notFF))
      val succF = succFound || notFF.orR
      val succP = Mux(succFound, succPos, (base + succAt).resize(KB))
      val finalBeat = base + W >= curLen
      when(io.entries.fire) {
        keyMem(keyAddr(bank, keyBeat.resized)) := beat.data
        when(tableEntries === 0) { firstMem(keyBeat.resized) := beat.data }
        keyBeat := keyBeat + 1
        when(!sepFound && diff.orR) {
          sepFound := True
          sepPos := (base + diffAt).resized
          sepPrev := prevWord(diffAt).asUInt
          sepNew := word(diffAt).asUInt
        }
        succFound := succF
        succPos := succP
        when(finalBeat) {
          when(valueLen === 0) { entryDone(succF, succP) } otherwise { state := S.Value }
        }
      }
    }
    is(S.Value) {
      data.io.entries.valid := io.entries.valid
      io.entries.ready := data.io.entries.ready
      when(io.entries.fire && io.entries.last) { entryDone(succFound, succPos) }
    }
    is(S.Check) {
      // The entry is in the block (the builder idle): LevelDB's flush rule, then DoCompactionWork's file size.
      when(data.io.idle) {
        val flushed = fileOffset + data.io.estimate + 5
        when(data.io.estimate >= blockSize) {
          when(snappy) {
            flushData()
            zipThenClose := False
            state := S.Zip
          } elsewhen (flushOver) { fail("OUTPUT_FULL") } elsewhen (flushOk) {
            flushData()
            when(flushed >= maxFileSize) { endOfJob := False; state := S.CloseFlush } otherwise { state := S.Idle }
          }
        } elsewhen (fileOffset >= maxFileSize) {
          endOfJob := False
          state := S.CloseFlush
        } otherwise {
          state := S.Idle
          takeBeat()
        }
      }
    }
    is(S.IdxSep) {
      // ShortestSeparator(previous key, this key) on the user keys, as the model's internal_key.cc.
      shorten := sepFound && sepPrev =/= 0xff && (sepPrev +^ 1) < sepNew && sepPos + 1 < sepLen - 8
      cut := sepPos
      endOfTable := False
      state := S.IdxHead
    }
    is(S.IdxHead) {
      val keyLen = Mux(shorten, (cut + 9).resize(KB), sepLen)
      val entryBytes = keyLen.resize(32) + Mux(keyLen < 128, U(1, 32 bits), U(2, 32 bits)) + 2 + handleLen + 4
      when(!snappy && (indexUsed + entryBytes + 4 + 5 > indexCap || idxCount === c.index.maxRestarts)) {
        fail("OUTPUT_FULL") // the index block would pass the buffer and spill, or the restart RAM (Snappy: HandleFill)
      } otherwise {
        idxIn.valid := True
        idxIn.fragment.kind := EntryKind.Head
        idxIn.fragment.keyBytes := keyLen
        idxIn.fragment.valueBytes := handleLen.resized
        when(idxIn.ready) {
          when(!snappy) { indexUsed := indexUsed + entryBytes }
          sepLen := keyLen
          k := 0
          state := S.IdxKey
        }
      }
    }
    is(S.IdxKey) {
      val word = lanes(keyMem.readAsync(keyAddr(idxBank, k.resized)))
      val base = (k * W).resize(KB + 1)
      for (i <- 0 until W) {
        val p = base + i
        val b = Bits(8 bits)
        b := word(i)
        when(shorten) {
          when(p === cut) { b := (word(i).asUInt + 1).asBits } // the user key's last byte, one up
            .elsewhen(p === cut + 1) { b := B"x01" } // then kMaxSequenceNumber's seek tag, little-endian
            .elsewhen(p > cut + 1) { b := B"xFF" }
        }
        idxIn.fragment.data(8 * i, 8 bits) := Mux(p < sepLen, b, B(0, 8 bits))
      }
      idxIn.valid := True
      idxIn.fragment.kind := EntryKind.Key
      idxIn.fragment.count := min(U(W, KB + 1 bits), sepLen - base).resized
      when(idxIn.ready) {
        k := k + 1
        when(base + W >= sepLen) { k := 0; state := S.IdxVal }
      }
    }
    is(S.IdxVal) {
      val base = (k * W).resize(6)
      // With Snappy one VALUE beat stands for the handle HandleFill puts in its place.
      val lastBeat = snappy || base + W >= handleLen
      idxIn.valid := True
      idxIn.fragment.kind := EntryKind.Value
      idxIn.fragment.data := pick(handle, k)
      idxIn.fragment.count := min(U(W, 6 bits), handleLen - base).resized
      idxIn.last := lastBeat
      when(idxIn.ready) {
        k := k + 1
        when(lastBeat) {
          pendingIndex := False
          state := Mux(endOfTable, S.IdxFlush, S.Check)
        }
      }
    }
    is(S.CloseFlush) { // TableBuilder::Finish: the last data block ...
      when(blockEntries === 0) { state := S.CloseWait }
        .elsewhen(data.io.idle) {
          when(snappy) { flushData(); zipThenClose := True; state := S.Zip } elsewhen (flushOver) {
            fail("OUTPUT_FULL")
          } elsewhen (flushOk) { flushData(); state := S.CloseWait }
        }
    }
    is(S.CloseWait) { // ... out of the data builder (and BlockZip)
      when(data.io.idle && zipIdle) {
        metaOff := fileOffset
        k := 0
        state := Mux(filterOn, S.FClose, S.Meta)
      }
    }
    is(S.FClose) { // TableBuilder::Finish: the filter of the last blocks' keys (FilterBlockBuilder::Finish)
      when(openKeys === 0) { state := S.FWait } elsewhen (filterOver(issued + 1)) { fail("OUTPUT_FULL") } elsewhen (
          fcmdQ.io.push.ready) {
        issueFilter(issued + 1)
        state := S.FWait
      }
    }
    is(S.FWait) { // every filter written: the filter block from the buffer (cleared as it leaves)
      gen.io.bufAddr := 0
      fw := 0
      fo := 0
      fcrc.io.clear := True
      when(gen.io.idle && fcmdQ.io.occupancy === 0) { filterOff := fileOffset; state := S.FBuf }
    }
    is(S.FBuf) {
      fcrc.io.input.valid := pkFire
      pk.valid := True
      pk.data := gen.io.bufData
      pk.count := Mux(fUsed - (fw << log2Up(W)) >= W, U(W), (fUsed - (fw << log2Up(W))).resize(log2Up(W + 1))).resized
      data.io.output.ready := False
      gen.io.bufAddr := Mux(pkFire, fw + 1, fw).resized
      gen.io.clear := pkFire
      when(pkFire) {
        fw := fw + 1
        when(((fw + 1) << log2Up(W)) >= fUsed) { state := S.FOff }
      }
    }
    is(S.FOff) { // the filters' offsets
      fcrc.io.input.valid := pkFire
      pk.valid := True
      pk.data := gen.io.offData.asBits.resized
      pk.count := 4
      data.io.output.ready := False
      gen.io.offAddr := Mux(pkFire, fo + 1, fo).resized
      when(pkFire) {
        fo := fo + 1
        when(fo + 1 === issued) { k := 0; state := S.FTail }
      }
    }
    is(S.FTail) { // the offset array's offset, kFilterBaseLg; the trailer's type byte (raw)
      fcrc.io.input.valid := pkFire
      val n = (6 + W - 1) / W
      pk.valid := True
      pk.data := pick((B(0, 8 bits) ## B(Bloom.BaseLg, 8 bits) ## fUsed.asBits).resize(8 * n * W), k)
      pk.count := min(U(W, 8 bits), U(6, 8 bits) - (k * W).resize(8)).resized
      data.io.output.ready := False
      when(pkFire) {
        k := k + 1
        when(k === n - 1) { state := S.FCrc }
      }
    }
    is(S.FCrc) {
      pk.valid := True
      pk.data := fcrc.io.masked.asBits.resized
      pk.count := 4
      data.io.output.ready := False
      when(pkFire) {
        val size = (fUsed + (issued << 2).resize(32) + 5).resize(32)
        filterSize := size
        fileOffset := fileOffset + size + 5
        io.dirtyNext.valid := True // the buffer is clean again
        state := S.MetaHead
      }
    }
    is(S.MetaHead) { // the metaindex block with its one entry, by the (idle) data block builder
      metaBlock := True
      data.io.entries.valid := True
      data.io.entries.fragment.kind := EntryKind.Head
      data.io.entries.fragment.keyBytes := TableFormat.FilterKey.size
      data.io.entries.fragment.valueBytes := fhLen.resized
      data.io.entries.last := False
      when(data.io.entries.ready) { k := 0; state := S.MetaKey }
    }
    is(S.MetaKey) {
      val n = (TableFormat.FilterKey.size + W - 1) / W
      data.io.entries.valid := True
      data.io.entries.fragment.kind := EntryKind.Key
      data.io.entries.fragment.data := pick(TableFormat.bits(TableFormat.FilterKey, n * W), k)
      data.io.entries.fragment.count := min(U(W, 8 bits), U(TableFormat.FilterKey.size, 8 bits) - (k * W).resize(8)).resized
      data.io.entries.last := False
      when(data.io.entries.ready) {
        k := k + 1
        when(k === n - 1) { k := 0; state := S.MetaVal }
      }
    }
    is(S.MetaVal) {
      val base = (k * W).resize(6)
      data.io.entries.valid := True
      data.io.entries.fragment.kind := EntryKind.Value
      data.io.entries.fragment.data := pick(fh, k)
      data.io.entries.fragment.count := min(U(W, 6 bits), fhLen.resize(6) - base).resized
      data.io.entries.last := base + W >= fhLen
      when(data.io.entries.ready && base + W >= fhLen) { state := S.MetaFlush }
      when(data.io.entries.ready) { k := k + 1 }
    }
    is(S.MetaFlush) {
      data.io.entries.valid := True
      data.io.entries.fragment.kind := BuilderKind.Flush
      data.io.entries.last := True
      when(data.io.entries.ready) {
        metaOff := fileOffset
        metaSize := data.io.estimate
        fileOffset := fileOffset + data.io.estimate + 5
        state := S.MetaWait
      }
    }
    is(S.MetaWait) { // with Snappy through BlockZip, raw: its size is the estimate (it never saves 1/8: see the doc)
      if (c.zipBytes > 0) zip.unit.io.result.ready := True
      when(data.io.idle && zipIdle) { metaBlock := False; state := S.CloseIdx }
    }
    is(S.Meta) { // the metaindex block (empty: no filter policy)
      val bytes = TableFormat.Metaindex
      val n = (bytes.size + W - 1) / W
      pk.valid := True
      pk.data := pick(TableFormat.bits(bytes, n * W), k)
      pk.count := min(U(W, 8 bits), U(bytes.size, 8 bits) - (k * W).resize(8)).resized
      data.io.output.ready := False
      when(pkFire) {
        k := k + 1
        when(k === n - 1) { fileOffset := fileOffset + bytes.size; metaSize := TableFormat.MetaindexSize; state := S.CloseIdx }
      }
    }
    is(S.CloseIdx) { // the last index entry: ShortSuccessor of the last key
      when(pendingIndex) {
        idxBank := !bank
        sepLen := prevLen
        shorten := lastSuccFound && lastSuccPos + 1 < prevLen - 8
        cut := lastSuccPos
        endOfTable := True
        state := S.IdxHead
      } otherwise { state := S.IdxFlush }
    }
    is(S.IdxFlush) {
      idxIn.valid := True
      idxIn.fragment.kind := BuilderKind.Flush
      idxIn.last := True
      when(idxIn.ready) { indexOff := fileOffset; state := Mux(snappy, S.IdxZip, S.IdxOut) }
    }
    is(S.IdxOut) { // the index block from the index buffer (and the spill)
      pk.valid := idxPop.valid
      pk.data := idxPop.data
      pk.count := idxPop.count
      data.io.output.ready := False
      idxPop.ready := pkReady
      when(idxPop.fire && idxPop.last) { state := S.IdxStatus }
    }
    is(S.IdxStatus) {
      index.io.status.ready := True
      when(index.io.status.fire) {
        indexSize := index.io.status.size
        fileOffset := fileOffset + index.io.status.size + 5
        k := 0
        state := S.Footer
      }
    }
    is(S.Zip) { // the data block is in the lanes (the flush clock's counts are in): go on unless its size decides
      // The file grows by at most the blocks' raw sizes, so below max_file_size with them the table stays open
      // (DoCompactionWork's check is false whatever the sizes); else, and for the filter's StartBlock (its
      // offset), the lanes' sizes first.
      val known = zipBlocks === 0
      when(filterOn) { when(known) { state := S.ZipFilter } } elsewhen (zipThenClose) { state := S.CloseWait } elsewhen (
          fileOffset +^ zipRaw >= maxFileSize) { when(known) { state := S.ZipFilter } } otherwise { state := S.Idle }
    }
    is(S.ZipFilter) { // FilterBlockBuilder::StartBlock at the next block's offset, then as after a raw FLUSH
      when(flushOver) { fail("OUTPUT_FULL") } elsewhen (flushOk) {
        when(cross) { issueFilter(crossIdx) }
        when(zipThenClose) { state := S.CloseWait } elsewhen (fileOffset >= maxFileSize) {
          endOfJob := False
          state := S.CloseFlush
        } otherwise { state := S.Idle }
      }
    }
    is(S.IdxZip) { // the index block from the index buffer (and the spill) through BlockZip
      if (c.zipBytes > 0) {
        // A big index block's size must reach the lane before the lane's buffer fills (as a big data block's comes
        // with its last entry): past half the index buffer the beats wait for it; a smaller block never waits.
        val go = idxSized || chipOut < c.indexBeats / 2
        zip.unit.io.input.valid := idxPop.valid && go
        zip.unit.io.input.payload := idxPop.payload
        idxPop.ready := zip.unit.io.input.ready && go
        data.io.output.ready := False
        zip.unit.io.result.ready := True
        when(zip.unit.io.result.valid && zip.unit.io.refused) {
          fail("OUTPUT_FULL") // a big index block whose Snappy form LevelDB would keep (as a big data block's)
        } elsewhen (zip.unit.io.result.valid) {
          indexSize := zip.unit.io.result.payload
          fileOffset := fileOffset + zip.unit.io.result.payload + 5
          state := S.IdxZStatus
        }
      }
    }
    is(S.IdxZStatus) {
      index.io.status.ready := True
      when(index.io.status.fire) { state := S.IdxZWait }
    }
    is(S.IdxZWait) { when(zipIdle) { k := 0; state := S.Footer } }
    is(S.Footer) { // two block handles, zero padding to 40 bytes, the magic number
      def cat(parts: Seq[(Bits, UInt)]): Bits = {
        var acc = B(0, 320 bits)
        var at = U(0, 6 bits)
        for ((b, len) <- parts) {
          acc = acc | (b.resize(320) << (at << 3)).resize(320)
          at = at + len.resize(6)
        }
        acc
      }
      val handles = cat(Seq(Varint.encode(metaOff), Varint.encode(metaSize),
        Varint.encode(indexOff), Varint.encode(indexSize)))
      val n = (TableFormat.FooterBytes + W - 1) / W
      val footer = (B(TableFormat.Magic, 64 bits) ## handles).resize(8 * n * W)
      pk.valid := True
      pk.data := pick(footer, k)
      pk.count := min(U(W, 8 bits), U(TableFormat.FooterBytes, 8 bits) - (k * W).resize(8)).resized
      pk.fin := k === n - 1
      data.io.output.ready := False
      when(pkFire) {
        k := k + 1
        when(k === n - 1) { fileOffset := fileOffset + TableFormat.FooterBytes; k := 0; state := S.KeysFirst }
      }
    }
    is(S.KeysFirst) {
      val base = (k * W).resize(KB + 1)
      io.keys.valid := True
      io.keys.data := firstMem.readAsync(k.resized)
      io.keys.count := min(U(W, KB + 1 bits), firstLen - base).resized
      io.keys.last := base + W >= firstLen
      when(io.keys.fire) {
        k := k + 1
        when(io.keys.last) { k := 0; state := S.KeysLast }
      }
    }
    is(S.KeysLast) {
      val base = (k * W).resize(KB + 1)
      io.keys.valid := True
      io.keys.data := keyMem.readAsync(keyAddr(!bank, k.resized))
      io.keys.count := min(U(W, KB + 1 bits), prevLen - base).resized
      io.keys.last := base + W >= prevLen
      when(io.keys.fire) {
        k := k + 1
        when(io.keys.last) { state := S.Status }
      }
    }
    is(S.Status) { // after the table's last beat
      io.status.valid := packerEmpty
      when(io.status.fire) {
        jobBytes := jobBytes + fileOffset
        fileOffset := 0
        tableEntries := 0
        indexUsed := 0
        idxCount := 0
        idxSized := False
        onChip := 0
        chipOut := 0
        spilled := 0
        spillBack := 0
        spillEnded := False
        fetched := False
        issued := 0
        fUsed := 0
        openKeys := 0
        openBits := 0
        state := Mux(endOfJob, S.Done, S.Idle)
      }
    }
    is(S.Done) {
      io.status.valid := True
      io.status.done := True
      io.status.size := jobBytes
      io.status.entries := jobEntries
      when(io.status.fire) { state := S.Cmd }
    }
    is(S.Error) {
      io.status.valid := True
      io.status.done := True
      io.status.error := True
      io.status.code := errCode
      io.status.size := jobBytes
      io.status.entries := jobEntries
      when(io.status.fire) { state := S.Halt }
    }
    is(S.Halt) {} // until softReset
  }

  // ---- with Snappy: the lanes' sizes taken in block order (the file's offsets), each data block's handle kept
  // for its index entry ----
  val taken = Bool()
  taken := False
  handleQ.io.push.valid := False
  handleQ.io.push.payload.off := fileOffset
  handleQ.io.push.payload.size := 0
  if (c.zipBytes > 0) {
    val r = zip.unit.io.result
    when(snappy && zipBlocks =/= 0 && r.valid && zip.unit.io.refused && state =/= S.Error && state =/= S.Halt) {
      fail("OUTPUT_FULL") // a big block whose Snappy form LevelDB would keep (or past bigBytes): see BlockZip
    }
    when(snappy && zipBlocks =/= 0 && !zip.unit.io.refused) {
      r.ready := handleQ.io.push.ready
      handleQ.io.push.valid := r.valid
      handleQ.io.push.payload.size := r.payload
      when(r.fire) {
        taken := True
        fileOffset := fileOffset + r.payload + 5
      }
    }
  }
  val takenRaw = if (c.zipBytes > 0) zip.unit.io.rawSize + 5 else U(0, 32 bits)
  zipBlocks := zipBlocks + zipFlush.asUInt - taken.asUInt
  zipRaw := zipRaw + Mux(zipFlush, data.io.estimate + 5, U(0, 32 bits)) - Mux(taken, takenRaw, U(0, 32 bits))

  val handles = HandleFill(c, index.io.entries.payload)
  handles.io.handles << handleQ.io.pop
  handles.io.indexUsed := indexUsed
  handles.io.capacity := indexCap
  handles.io.entriesFull := idxCount === c.index.maxRestarts
  idxOver := snappy && handles.io.over
  /** The index entries toward the builder: the writer's own (without Snappy) or HandleFill's. They reach the builder
    * through a register slice both ways (s2mPipe, m2sPipe): the writer's control and HandleFill's queue then end at
    * a register, not in the builder's HEAD decode and packer in the same clock. The writer never waits on the index
    * builder but through `idxPop` and its status, so the slice only delays the index block. The counts below are of
    * entries sent: an entry in the slice is already the builder's (its restart RAM, its bytes). */
  val idxEntries = cloneOf(index.io.entries)
  index.io.entries << idxEntries.s2mPipe().m2sPipe()
  when(idxEntries.fire && idxEntries.fragment.kind === EntryKind.Head) { idxCount := idxCount + 1 }
  val idxFlushIn = snappy && idxEntries.fire && idxEntries.fragment.kind === BuilderKind.Flush
  when(idxFlushIn) { idxSized := True }
  // The index block's size once its FLUSH leaves HandleFill (every entry in): a spilled one may pass the block buffer.
  if (c.zipBytes > 0) when(idxFlushIn) {
    zip.unit.io.bigLen.valid := True
    zip.unit.io.bigLen.payload := indexUsed + 4
  }
  when(handles.io.used.valid) { indexUsed := handles.io.used.payload }
  handles.io.input.valid := snappy && idxIn.valid
  handles.io.input.payload := idxIn.payload
  idxIn.ready := Mux(snappy, handles.io.input.ready, idxEntries.ready)
  idxEntries.valid := Mux(snappy, handles.io.output.valid, idxIn.valid)
  idxEntries.payload := Mux(snappy, handles.io.output.payload, idxIn.payload)
  handles.io.output.ready := snappy && idxEntries.ready
  when(idxOver && state =/= S.Error && state =/= S.Halt) { fail("OUTPUT_FULL") }

  // The pending data block's handle as the index entry's value: offset and size as varints (BlockHandle::EncodeTo).
  val hOff = Varint.encode(pendOff)
  val hSize = Varint.encode(pendSize)
  handle := (hOff._1.resize(8 * c.handleBytes) | (hSize._1.resize(8 * c.handleBytes) << (hOff._2 << 3)).resize(8 * c.handleBytes))
  handleLen := (hOff._2 +^ hSize._2).resized
  val fOff = Varint.encode(filterOff)
  val fSize = Varint.encode(filterSize)
  fh := (fOff._1.resize(8 * c.handleBytes) | (fSize._1.resize(8 * c.handleBytes) << (fOff._2 << 3)).resize(8 * c.handleBytes))
  fhLen := (fOff._2 +^ fSize._2).resized
}

/** `table_engine.GenerateTableWriter [--bytes 4|8|16|32] [--key-limit N] [--max-restarts N] [--index-bytes N]
  * [--filter-bytes N] [--filter-keys N] [--max-filters N] [--hash-words N] [--zip-bytes N] [--zip-lanes N] [--max-block N]
  * [--index-entries N] --out DIR`: DIR/TableWriter.v,
  * the table engine's table writer (data blocks, index, filter, metaindex, footer; Snappy unless --zip-bytes 0). */
object GenerateTableWriter extends Generator("build/gen/table_engine_writer_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-restarts", 2048, min = 4), Gen.intOpt("index-bytes", 1 << 16, min = 1024),
      Gen.intOpt("filter-bytes", 1 << 16, min = 64), Gen.intOpt("filter-keys", 4096, min = 4),
      Gen.intOpt("max-filters", 4096, min = 2), Gen.intOpt("hash-words", 1, Seq(1, 2, 4, 8)),
      Gen.intOpt("zip-bytes", 1 << 16, min = 0), Gen.intOpt("zip-lanes", 1, min = 1),
      Gen.intOpt("max-block", 4 << 20, min = 1 << 16), Gen.intOpt("index-entries", 4096, (2 to 16).map(1 << _))) {
  def top(a: Gen.Args) = TableWriter(TableWriterConfig(a.int("bytes"), a.int("key-limit"), a.int("max-restarts"),
    a.int("index-bytes"), a.int("filter-bytes"), a.int("filter-keys"), a.int("max-filters"), a.int("hash-words"),
    a.int("zip-bytes"), a.int("zip-lanes"), a.int("max-block"), a.int("index-entries")))
}

/** TableBuilder::WriteBlock with compression on: a block as a BlockBuilder writes it (contents, type byte 0, masked
  * CRC32C; full beats but the final one, `last` on it) into the block buffer; once it is in, its contents through
  * the SnappyCompressor (`compress` high with the last beat; else the block stays raw) into the Snappy buffer;
  * `result` gives the stored contents' size (the block handle's), then `output` the stored bytes: the Snappy form
  * with type 1 and the masked CRC32C of it and the type, when it is below raw - raw/8 (LevelDB's rule), else the
  * block as it came. The Snappy buffer needs only raw - raw/8 of the largest block: a longer form is never kept,
  * so its tail is dropped. One block at a time: the next block's beats wait until this one has left.
  *
  * A **big block** (`bigLen`, the builder's size of the block once its last entry's value is in, says its contents
  * and trailer pass the buffer): the block buffer becomes a ring. Its beats leave raw as they come (`output`, before
  * `result`), and the compressor reads the same ring behind them to count the Snappy form; the ring holds the
  * input back while either reader is a whole buffer behind. `result` then gives the raw size, with `refused` high
  * when the Snappy form would save 1/8 (LevelDB would store that form, which is not kept here: the writer's
  * OUTPUT_FULL) or the block passes `bigBytes`. */
case class BlockZip(c: TableWriterConfig) extends Component {
  val W = c.bytes
  val bufBytes = c.zipBytes
  require(isPow2(bufBytes) && bufBytes >= 1024 && bufBytes >= 16 * W, s"block buffer of $bufBytes bytes: a power of two >= 1024")
  val rawWords = bufBytes / W
  val compWords = (bufBytes - bufBytes / 8 + W - 1) / W
  val io = ZipIo(W)
  val lg = log2Up(W)
  def words(bytes: UInt): UInt = ((bytes + (W - 1)) >> lg).resize(32)
  def tail(bytes: UInt): UInt = (((bytes - 1) & U(W - 1, 32 bits)) + 1).resize(log2Up(W + 1))

  val compressor = SnappyCompressor(SnappyCompressorConfig(bytes = W, maxBlockBytes = c.bigBytes))
  val raw = Mem(Bits(8 * W bits), rawWords)
  val comp = Mem(Bits(8 * W bits), compWords)
  val crc = Crc32cUnit(W) // the Snappy form's and its type byte's

  object S extends SpinalEnum {
    val Fill, Len, Feed, Zip, Type, Result, Emit, Trailer, Big = newElement()
  }
  val state = RegInit(S.Fill)
  val wa = Reg(UInt(32 bits)) init (0) // block buffer words written (a big block: ring words)
  val total = Reg(UInt(32 bits)) init (0) // block bytes in, its trailer included
  val size = total - 5 // its contents
  val saved = RegInit(False) // the Snappy form is kept
  val cBytes = Reg(UInt(32 bits)) init (0)
  val cw = Reg(UInt(32 bits)) init (0) // Snappy words out of the compressor
  val k = Reg(UInt(2 bits)) init (0)
  io.idle := state === S.Fill && total === 0

  // ---- a big block: raw out of the ring (`oa`) while the compressor counts its Snappy form (`fa`) ----
  val big = RegInit(False)
  val bigSize = Reg(UInt(32 bits)) init (0) // its contents
  val lenGiven, statusSeen, refused, resultGiven, outDone = RegInit(False)
  val oa, fa = Reg(UInt(32 bits)) init (0)
  val bigWords = words(bigSize + 5)
  val feedWords = words(bigSize)
  val feedDone = fa === feedWords
  val ringFree = wa - oa < rawWords && (feedDone || wa - fa < rawWords)
  // The size may come while this lane still holds an earlier block (the builder's first value beat can pass
  // into its packer before the lane takes the block): kept until the lane is free.
  val pend = RegInit(False)
  val pendSize = Reg(UInt(32 bits)) init (0)
  when(io.bigLen.valid && io.bigLen.payload + 5 > bufBytes) { // one clock per entry, one such entry per block
    pend := True
    pendSize := io.bigLen.payload
  }
  when(state === S.Fill && pend) {
    pend := False
    big := True
    bigSize := pendSize
    when(pendSize > c.bigBytes) { // past the compressor: refused without a try
      statusSeen := True
      refused := True
      lenGiven := True
      fa := words(pendSize)
    }
  }
  val outCmd = Stream(UInt(log2Up(rawWords) bits))
  outCmd.valid := big && oa < wa && oa < bigWords
  outCmd.payload := oa.resized
  when(outCmd.fire) { oa := oa + 1 }
  val outLast = oa + 1 === bigWords
  val outRsp = raw.streamReadSync(outCmd, outLast ## Mux(outLast, tail(bigSize + 5), U(W, log2Up(W + 1) bits)))
  val feedCmd = Stream(UInt(log2Up(rawWords) bits))
  feedCmd.valid := big && lenGiven && !feedDone && fa < wa
  feedCmd.payload := fa.resized
  when(feedCmd.fire) { fa := fa + 1 }
  val feedLast = fa + 1 === feedWords
  val feedRsp = raw.streamReadSync(feedCmd, feedLast ## Mux(feedLast, tail(bigSize), U(W, log2Up(W + 1) bits)))
  val feedCount = feedRsp.linked.asUInt.resize(log2Up(W + 1))
  val feedMasked = Bits(8 * W bits)
  for (i <- 0 until W) feedMasked(8 * i, 8 bits) := Mux(U(i) < feedCount, feedRsp.value(8 * i, 8 bits), B(0, 8 bits))
  when(big && compressor.io.length.fire) { lenGiven := True }
  when(big && compressor.io.status.fire) {
    statusSeen := True
    refused := compressor.io.status.saves
  }

  // ---- in: the builder's beats into the block buffer ----
  io.input.ready := state === S.Fill && (!big || ringFree)
  raw.write(wa.resized, io.input.fragment.data, io.input.fire)
  when(io.input.fire) {
    wa := wa + 1
    total := total + io.input.fragment.count
    when(io.input.last) { state := Mux(big, S.Big, Mux(io.compress, S.Len, S.Result)) }
  }

  // ---- the compressor's output into the Snappy buffer (its tail past the buffer can never be kept) ----
  compressor.io.output.ready := True
  comp.write(cw.resized, compressor.io.output.fragment.data, compressor.io.output.fire && cw < compWords)
  when(compressor.io.output.fire) { cw := cw + 1 }
  crc.io.clear := False
  crc.io.input.valid := compressor.io.output.fire
  crc.io.input.data := compressor.io.output.fragment.data
  crc.io.input.count := compressor.io.output.fragment.count
  compressor.io.length.valid := state === S.Len || (big && !lenGiven)
  compressor.io.length.payload := Mux(big, bigSize, size).resized
  compressor.io.status.ready := state === S.Zip || big

  // ---- reads: the block buffer to the compressor, then the stored form out (one request a clock, a synchronous
  // read held while its beat waits) ----
  val ra = Reg(UInt(32 bits)) init (0)
  val nWords = Reg(UInt(32 bits)) init (0)
  val lastCount = Reg(UInt(log2Up(W + 1) bits)) init (0)
  val rsp = new Area {
    val valid = RegInit(False)
    val last = Reg(Bool()) init (False)
    val count = Reg(UInt(log2Up(W + 1) bits)) init (0)
    val ready = Bool()
  }
  rsp.ready := False
  val reading = state === S.Feed || state === S.Emit
  val issue = reading && ra < nWords && (!rsp.valid || rsp.ready)
  val rawQ = raw.readSync(ra.resized, issue)
  val compQ = comp.readSync(ra.resized, issue)
  when(!rsp.valid || rsp.ready) {
    rsp.valid := issue
    rsp.last := ra + 1 === nWords
    rsp.count := Mux(ra + 1 === nWords, lastCount, U(W, lastCount.getWidth bits))
  }
  when(issue) { ra := ra + 1 }
  val masked = Bits(8 * W bits) // the contents' bytes only (the trailer's shares their last word)
  for (i <- 0 until W) masked(8 * i, 8 bits) := Mux(U(i) < rsp.count, rawQ(8 * i, 8 bits), B(0, 8 bits))
  compressor.io.input.valid := state === S.Feed && rsp.valid
  compressor.io.input.fragment.data := masked
  compressor.io.input.fragment.count := rsp.count
  compressor.io.input.last := rsp.last
  feedRsp.ready := False
  when(big) {
    compressor.io.input.valid := feedRsp.valid
    compressor.io.input.fragment.data := feedMasked
    compressor.io.input.fragment.count := feedCount
    compressor.io.input.last := feedRsp.linked.msb
    feedRsp.ready := compressor.io.input.ready
  }

  val trailer = (crc.io.masked.asBits ## B"x01").resize(64) // type 1 (kSnappyCompression), the masked CRC
  io.output.valid := False
  io.output.fragment.data := Mux(saved, compQ, rawQ)
  io.output.fragment.count := rsp.count
  io.output.last := False
  io.result.valid := state === S.Result || (big && statusSeen && !resultGiven)
  io.result.payload := Mux(big, bigSize, Mux(saved, cBytes, size))
  io.rawSize := Mux(big, bigSize, size)
  io.refused := big && refused
  outRsp.ready := False
  when(big) {
    io.output.valid := outRsp.valid
    io.output.fragment.data := outRsp.value
    io.output.fragment.count := outRsp.linked.asUInt.resize(log2Up(W + 1))
    io.output.last := outRsp.linked.msb
    outRsp.ready := io.output.ready
    when(io.output.fire && outRsp.linked.msb) { outDone := True }
    when(io.result.fire) { resultGiven := True }
  }

  def done(): Unit = {
    wa := 0
    total := 0
    saved := False
    big := False
    lenGiven := False
    statusSeen := False
    refused := False
    resultGiven := False
    outDone := False
    oa := 0
    fa := 0
    state := S.Fill
  }
  switch(state) {
    is(S.Len) {
      when(compressor.io.length.ready) {
        ra := 0
        nWords := words(size)
        lastCount := tail(size)
        cw := 0
        crc.io.clear := True
        state := S.Feed
      }
    }
    is(S.Feed) {
      rsp.ready := compressor.io.input.ready
      when(rsp.valid && rsp.ready && rsp.last) { state := S.Zip }
    }
    is(S.Zip) {
      when(compressor.io.status.fire) {
        saved := compressor.io.status.saves
        cBytes := compressor.io.status.bytes
        state := S.Type
      }
    }
    is(S.Type) { // the type byte into the CRC
      crc.io.input.valid := True
      crc.io.input.data := B(1, 8 * W bits)
      crc.io.input.count := 1
      state := S.Result
    }
    is(S.Result) {
      when(io.result.ready) {
        ra := 0
        nWords := Mux(saved, words(cBytes), words(total))
        lastCount := Mux(saved, tail(cBytes), tail(total))
        state := S.Emit
      }
    }
    is(S.Emit) {
      io.output.valid := rsp.valid
      io.output.last := rsp.last && !saved
      rsp.ready := io.output.ready
      when(io.output.fire && rsp.last) {
        k := 0
        when(saved) { state := S.Trailer } otherwise { done() }
      }
    }
    is(S.Big) { // the big block's last beat in: done once it has left and its size was taken
      when(outDone && resultGiven) { done() }
    }
    is(S.Trailer) {
      val n = (5 + W - 1) / W
      val beats = trailer.resize(8 * n * W).subdivideIn(8 * W bits)
      io.output.valid := True
      io.output.fragment.data := (if (n == 1) beats(0) else beats(k.resized))
      io.output.fragment.count := Mux(k === n - 1, U(5 - (n - 1) * W, log2Up(W + 1) bits), U(W, log2Up(W + 1) bits))
      io.output.last := k === n - 1
      when(io.output.ready) {
        k := k + 1
        when(k === n - 1) { done() }
      }
    }
  }
}

/** BlockZip's interface, which ZipLanes keeps: a block's bytes in (`compress` with its last beat for the Snappy
  * try), the stored contents' size on `result`, then the stored bytes on `output`. */
case class ZipIo(W: Int) extends Bundle {
  val input = slave Stream (Fragment(ByteBeat(W)))
  val compress = in Bool()
  val result = master Stream (UInt(32 bits))
  val output = master Stream (Fragment(ByteBeat(W)))
  /** No block in: the writer may drive the packer itself. */
  val idle = out Bool()
  /** With `result`: the block's raw contents' size. */
  val rawSize = out UInt (32 bits)
  /** With `result`: a big block the writer must refuse (OUTPUT_FULL; see BlockZip). */
  val refused = out Bool()
  /** The data builder's size of the block once the entry's value is in (BlockBuilder's `ahead`, one clock): the
    * block going to the lane that takes the next input block is big when it passes the buffer. */
  val bigLen = slave Flow (UInt(32 bits))
}

/** `lanes` BlockZips (their own block buffer and compressor each) taking consecutive blocks in turn, so a block
  * compresses while the next ones come in: blocks go to the lanes in order, their results and stored bytes leave
  * in the same order (BlockZip's interface; a lane's result before its bytes). One lane is BlockZip itself. */
case class ZipLanes(c: TableWriterConfig) extends Component {
  val W = c.bytes
  val io = ZipIo(W)
  val lanes = Seq.fill(c.zipLanes)(BlockZip(c))
  val n = c.zipLanes
  /** The lanes taking the next input block, giving the next result, the next stored bytes. */
  def pointer(): UInt = Reg(UInt(log2Up(n max 2) bits)) init (0)
  def next(p: UInt): UInt = Mux(p === n - 1, U(0, p.getWidth bits), p + 1)
  val inAt, resAt, outAt = pointer()
  for ((l, i) <- lanes.zipWithIndex) {
    l.io.input.valid := io.input.valid && inAt === i
    l.io.input.payload := io.input.payload
    l.io.compress := io.compress
    l.io.bigLen.valid := io.bigLen.valid && inAt === i
    l.io.bigLen.payload := io.bigLen.payload
    l.io.result.ready := io.result.ready && resAt === i
    l.io.output.ready := io.output.ready && outAt === i
  }
  def at[T <: Data](p: UInt, f: BlockZip => T): T = if (n == 1) f(lanes.head) else Vec(lanes.map(f))(p.resized)
  io.input.ready := at(inAt, _.io.input.ready)
  io.result.valid := at(resAt, _.io.result.valid)
  io.result.payload := at(resAt, _.io.result.payload)
  io.rawSize := at(resAt, _.io.rawSize)
  io.refused := at(resAt, _.io.refused)
  io.output.valid := at(outAt, _.io.output.valid)
  io.output.payload := at(outAt, _.io.output.payload)
  io.idle := lanes.map(_.io.idle).reduce(_ && _)
  if (n > 1) {
    when(io.input.fire && io.input.last) { inAt := next(inAt) }
    when(io.result.fire) { resAt := next(resAt) }
    when(io.output.fire && io.output.last) { outAt := next(outAt) }
  }
}

/** A data block's place in the file: its offset and stored size (the block handle). */
case class HandleSlot() extends Bundle {
  val off = UInt(32 bits)
  val size = UInt(32 bits)
}

/** With Snappy, the writer issues an index entry before its data block's stored size is known: the entries wait
  * here (a FIFO of beats) and each leaves for the index builder with the next handle from `handles` (the lanes'
  * sizes in block order): its HEAD's value length and its one VALUE beat replaced by the handle's varints.
  * `over`: the entry at the head, with its handle, would pass `capacity` (the index buffer and the spill) or the
  * restart RAM is full (`entriesFull`): the writer's OUTPUT_FULL; the entry stays; `used`: the index block's bytes
  * after an entry left. */
case class HandleFill(c: TableWriterConfig, beat: Fragment[EntryBeat]) extends Component {
  val W = c.bytes
  val io = new Bundle {
    val input = slave Stream (cloneOf(beat))
    val handles = slave Stream (HandleSlot())
    val output = master Stream (cloneOf(beat))
    val indexUsed = in UInt (32 bits)
    val capacity = in UInt (32 bits)
    val entriesFull = in Bool()
    val used = master Flow (UInt(32 bits))
    val over = out Bool()
  }
  val q = StreamFifo(cloneOf(beat), 64)
  q.io.push << io.input
  val head = q.io.pop
  val h = io.handles
  val hOff = Varint.encode(h.off)
  val hSize = Varint.encode(h.size)
  val hBits = (hOff._1.resize(8 * c.handleBytes) | (hSize._1.resize(8 * c.handleBytes) << (hOff._2 << 3)).resize(8 * c.handleBytes))
  val hLen = (hOff._2 +^ hSize._2).resize(4)
  val handleBeats = c.handleBytes / W
  val vk = Reg(UInt(log2Up(handleBeats + 1) bits)) init (0) // the handle's beat being sent
  val isHead = head.fragment.kind === EntryKind.Head
  val isValue = head.fragment.kind === EntryKind.Value
  val needs = isHead || isValue
  val keyLen = head.fragment.keyBytes.resize(32)
  val entryBytes = keyLen + Mux(keyLen < 128, U(1, 32 bits), U(2, 32 bits)) + 2 + hLen + 4
  val over = isHead && (io.indexUsed + entryBytes + 4 + 5 > io.capacity || io.entriesFull)
  val go = head.valid && (!needs || h.valid) && !over
  val base = (vk * W).resize(6)
  val lastValue = base + W >= hLen
  io.over := head.valid && needs && h.valid && over
  io.output.valid := go
  io.output.payload := head.payload
  when(isHead) { io.output.fragment.valueBytes := hLen.resized }
  when(isValue) {
    io.output.fragment.data := (if (handleBeats == 1) hBits else hBits.subdivideIn(8 * W bits)(vk.resized)).resized
    io.output.fragment.count := Mux(lastValue, (hLen - base).resize(log2Up(W + 1)), U(W, log2Up(W + 1) bits)).resized
    io.output.last := lastValue
  }
  head.ready := io.output.fire && (!isValue || lastValue)
  h.ready := io.output.fire && isValue && lastValue
  when(io.output.fire && isValue) { vk := Mux(lastValue, U(0, vk.getWidth bits), vk + 1) }
  io.used.valid := io.output.fire && isHead
  io.used.payload := io.indexUsed + entryBytes
}
