package table_engine

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Sizes of the whole engine: `bytes` per beat (also both AXI ports' data width), `ways` runs merged (K), the
  * key and block limits, the data blocks one input table may have, and the write side: its FIFO and the beats of
  * one write burst (`writeBurst`: 16 in the engine's own builds; the SoC's several units write 4 KiB bursts, so the
  * DDR bus turns between reads and writes less often, SocTableEngineConfig.writeBurst). `writeGroup`: the SoC's units
  * hold full write bursts until one of them is urgent, so their bursts reach the DDR bus together (`writeUrgent` out,
  * `writeGroupGo` in: the SoC's registered OR of every unit's `writeUrgent`; CompactionDma's writeGroup for KB16). */
case class TableEngineConfig(bytes: Int = 16, ways: Int = 4, keyLimit: Int = 1032, maxBlock: Int = 4 << 20,
                             maxBlocks: Int = 1024, writeFifoBeats: Int = 64, walkerLevels: Int = 8,
                             walkerFiles: Int = 1024, walkerKeyWords: Int = 8192, grandparents: Int = 1024,
                             snappyBytes: Int = 1 << 16, indexBytes: Int = 1 << 16, filterBytes: Int = 1 << 16,
                             filterKeys: Int = 4096, maxFilters: Int = 4096, zipLanes: Int = 5,
                             zipBytes: Int = 1 << 16, mergeBytes: Int = 0, writeBurst: Int = 16,
                             writeGroup: Boolean = false, indexEntries: Int = 4096) {
  // A burst never crosses 4 KiB (AXI) and the FIFO holds two, so a full FIFO always has a burst to issue.
  require(writeBurst >= 1 && writeBurst <= 256 && writeBurst * bytes <= 4096,
    s"writeBurst $writeBurst: 1..256 beats and at most 4 KiB")
  require(writeFifoBeats >= 2 * writeBurst, s"writeFifoBeats $writeFifoBeats: at least two bursts of $writeBurst")
  // snappyBytes: each reader's largest decompressed Snappy block (its history and two block buffers);
  // indexBytes, filterBytes, filterKeys, maxFilters: the writer's index and filter buffers (TableWriterConfig);
  // indexEntries: the index entries of one output table (the index builder's restart RAM; more: OUTPUT_FULL);
  // zipLanes: the writer's compressor lanes (ZipLanes), the model's kZipLanes (limits.h; tests/test_facts.py);
  // mergeBytes: the merge stage's beat inside (0: `bytes`; 2 x `bytes`: the wider stage, doc/merge.md).
  val reader = TableReaderConfig(bytes, keyLimit, maxBlock, maxBlocks, snappyBytes = snappyBytes)
  val walker = BaseLevelConfig(bytes, keyLimit, walkerLevels, walkerFiles, walkerKeyWords, grandparents)
  val merge = MergeConfig(if (mergeBytes == 0) bytes else mergeBytes, ways, keyLimit, Some(walker), portBytes = bytes)
  val writer = TableWriterConfig(bytes, keyLimit, indexBytes = indexBytes, filterBytes = filterBytes,
    filterKeys = filterKeys, maxFilters = maxFilters, zipLanes = zipLanes, zipBytes = zipBytes,
    bigBytes = scala.math.max(maxBlock, zipBytes), indexEntries = indexEntries)
  val entry = merge.port
  val runBits = log2Up(ways)
  /** One read port for the K table readers and the index spill's read-back (an arbiter adds the master's number
    * to the AXI id). */
  val readAxi = reader.axiConfig.copy(idWidth = reader.axiConfig.idWidth + log2Up(ways + 1))
  /** The index spill's bursts: up to this many beats (never across 4 KiB), its write FIFO and read-back FIFO. */
  val spillBurst = 16
  val spillFifoBeats = 2 * spillBurst
  val writeAxi = Axi4Config(addressWidth = 32, dataWidth = 8 * bytes, idWidth = 1, useRegion = false,
    useLock = false, useQos = false, useCache = false, useProt = false)
}

/** A job's options: how many runs (1..K; run 0 the newest), whether block CRCs are checked, LevelDB's
  * smallest_snapshot, block_size, block_restart_interval, max_file_size, the output buffer (its first
  * byte, a multiple of the beat width, and its capacity in bytes), `snappy` (Options::compression is
  * kSnappyCompression: the output blocks compressed by LevelDB's rule) and `bloomBitsPerKey` (NewBloomFilterPolicy's
  * bits per key; 0: no filter block). */
case class EngineJob() extends Bundle {
  val runs = UInt(4 bits)
  val verify = Bool()
  val smallestSnapshot = UInt(64 bits)
  val blockSize = UInt(32 bits)
  val restartInterval = UInt(16 bits)
  val maxFileSize = UInt(32 bits)
  val outBase = UInt(32 bits)
  val outBytes = UInt(32 bits)
  val snappy = Bool()
  val bloomBitsPerKey = UInt(8 bits)
  /** The index spill region (a multiple of the beat width; `spillBytes` 0: none): a table's index block past the
    * writer's index buffer waits there until the table's end (TableWriter's IndexSpillPort). */
  val spillBase = UInt(32 bits)
  val spillBytes = UInt(32 bits)
}

/** One input table of a run: its address and size in bytes, the window of its data blocks read (index entries
  * `firstBlock` up to `endBlock`, exclusive; 0, 0: the whole table; TableCmd); `last` on the run's final table. */
case class EngineTable() extends Bundle {
  val base = UInt(32 bits)
  val size = UInt(32 bits)
  val firstBlock = UInt(32 bits)
  val endBlock = UInt(32 bits)
  val last = Bool()
}

/** One output table as written: its first byte's address and size, its entries, and where its smallest and
  * largest internal keys were written (each from a beat boundary right behind the table) with their lengths. */
case class EngineOutTable(c: TableEngineConfig) extends Bundle {
  val addr = UInt(32 bits)
  val size = UInt(32 bits)
  val entries = UInt(32 bits)
  val smallestAddr = UInt(32 bits)
  val largestAddr = UInt(32 bits)
  val smallestBytes = UInt(c.entry.keyLenBits bits)
  val largestBytes = UInt(c.entry.keyLenBits bits)
}

/** Which unit stopped a job. */
object EngineUnit {
  val Reader = 0 // `run`, `table` (its index in the run), `offset` in the table
  val Merge = 1 // `run`, `entry` (its index in the run); KEY_ORDER and the merge's own limits
  val Writer = 2 // `entry`: entries written before the one at fault (BAD_JOB: options the writer refuses)
  val Output = 3 // OUTPUT_FULL: `table` (output table number in the job), `offset` (its bytes written); BAD_JOB: a write answered with an error
}

/** One per job: `error` with the model's code (model/error.h) and where (EngineUnit), else the counters. */
case class EngineStatus(c: TableEngineConfig) extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val unit = UInt(2 bits)
  val run = UInt(4 bits)
  val table = UInt(32 bits)
  val offset = UInt(32 bits)
  val entry = UInt(32 bits)
  val entriesIn, entriesOut, dropped = UInt(32 bits)
  val tablesOut = UInt(32 bits)
  val bytesOut = UInt(32 bits) // the output tables' bytes
}

/** The table engine for raw (uncompressed) tables: K TableReaders (one per run, its tables one after the
  * other) -> MergeDrop (K-way merge, LevelDB's drop rule, the base-level walker) -> TableWriter -> a
  * sequential AXI4 writer into the job's output buffer. A job: `job`, then its deeper levels on `baseLoad`
  * (ended by `last`), then each run's tables on `tables(run)`; the output tables leave one record each on
  * `outTables`, then one `status`. See doc/table_engine_top.md. */
case class TableEngine(c: TableEngineConfig = TableEngineConfig()) extends Component {
  val io = new Bundle {
    val job = slave Stream (EngineJob())
    val baseLoad = slave Stream (Fragment(BaseLoad(c.walker)))
    val tables = Vec(slave Stream (EngineTable()), c.ways)
    val axiRead = master(Axi4ReadOnly(c.readAxi))
    val axiWrite = master(Axi4WriteOnly(c.writeAxi))
    val outTables = master Stream (EngineOutTable(c))
    val status = master Stream (EngineStatus(c))
    val writeUrgent = c.writeGroup generate out(Bool())
    val writeGroupGo = c.writeGroup generate in(Bool())
  }
  val W = c.bytes
  val K = c.ways
  def code(name: String): UInt = U(ErrorCodes(name), ErrorCodes.Width bits)

  val readers = Seq.fill(K)(TableReader(c.reader))
  val arbiter = Axi4ReadOnlyArbiter(c.readAxi, inputsCount = K + 1) // the last: the index spill's read-back
  for ((in, r) <- arbiter.io.inputs.zip(readers)) in << r.io.axi
  io.axiRead << arbiter.io.output
  val merge = MergeDrop(c.merge)
  val writer = TableWriter(c.writer)
  merge.soft.setSynchronousWith(ClockDomain.current) // their soft-reset domains run on this clock
  writer.soft.setSynchronousWith(ClockDomain.current)

  // ---- the job ----
  object J extends SpinalEnum {
    val Idle, Reset, Load, Start, Run, Drain, Report = newElement()
  }
  val state = RegInit(J.Idle)
  val job = Reg(EngineJob())
  val err = RegInit(False)
  val st = Reg(EngineStatus(c))
  val writerDone = Reg(Bool())
  val mergeDone = Reg(Bool())
  def fail(unit: Int, name: String, run: UInt = U(0), table: UInt = U(0), offset: UInt = U(0),
           entry: UInt = U(0)): Unit = when(!err) {
    err := True
    st.error := True
    st.code := code(name)
    st.unit := unit
    st.run := run.resized
    st.table := table.resized
    st.offset := offset.resized
    st.entry := entry.resized
  }
  def failCode(unit: Int, cd: UInt, run: UInt, table: UInt, offset: UInt, entry: UInt): Unit = when(!err) {
    err := True
    st.error := True
    st.code := cd
    st.unit := unit
    st.run := run.resized
    st.table := table.resized
    st.offset := offset.resized
    st.entry := entry.resized
  }

  val softReset = state === J.Reset
  merge.io.softReset := softReset
  writer.io.softReset := softReset
  merge.io.smallestSnapshot := job.smallestSnapshot
  merge.io.gpLimit.get := (job.maxFileSize * U(10, 4 bits)).resize(64)

  io.job.ready := state === J.Idle
  io.baseLoad.ready := False
  merge.io.baseLoad.get.valid := False
  merge.io.baseLoad.get.payload := io.baseLoad.fragment
  writer.io.cmd.valid := False
  writer.io.cmd.blockSize := job.blockSize
  writer.io.cmd.restartInterval := job.restartInterval
  writer.io.cmd.maxFileSize := job.maxFileSize
  writer.io.cmd.bitsPerKey := job.bloomBitsPerKey.resized
  writer.io.cmd.snappy := job.snappy
  writer.io.cmd.spillBytes := job.spillBytes
  io.status.valid := state === J.Report
  io.status.payload := st

  // ---- per run: its tables through its reader, then an END beat ----
  object F extends SpinalEnum {
    val Idle, Next, Read, End, Done = newElement()
  }
  val feeders = for (i <- 0 until K) yield new Area {
    val fs = RegInit(F.Idle)
    val tableIdx = Reg(UInt(32 bits))
    val lastOfRun = Reg(Bool())
    val r = readers(i)
    val in = merge.io.inputs(i)
    val t = io.tables(i)
    r.io.cmd.valid := False
    r.io.cmd.base := t.base
    r.io.cmd.size := t.size
    r.io.cmd.verify := job.verify
    r.io.cmd.firstBlock := t.firstBlock
    r.io.cmd.endBlock := t.endBlock
    t.ready := False
    in.valid := False
    in.payload := r.io.entries.payload
    r.io.entries.ready := False
    r.io.status.ready := False
    switch(fs) {
      is(F.Next) {
        when(err) {
          fs := F.Done
        } elsewhen (U(i, 4 bits) >= job.runs) {
          fs := F.End // a way without a run: its END beat alone
        } otherwise {
          r.io.cmd.valid := t.valid
          t.ready := r.io.cmd.ready
          when(t.fire) {
            lastOfRun := t.last
            fs := F.Read
          }
        }
      }
      is(F.Read) {
        // after an error the reader's entries are taken and dropped until its status: the table ends cleanly
        in.valid := r.io.entries.valid && !err
        r.io.entries.ready := in.ready || err
        r.io.status.ready := True
        when(r.io.status.fire) {
          when(r.io.status.error) {
            failCode(EngineUnit.Reader, r.io.status.code, U(i), tableIdx, r.io.status.offset, U(0))
            fs := F.Done
          } otherwise {
            tableIdx := tableIdx + 1
            fs := Mux(lastOfRun, F.End, F.Next)
          }
        }
      }
      is(F.End) {
        in.valid := !err
        in.payload.fragment.kind := MergeKind.End
        in.payload.last := True
        when(in.ready || err) { fs := F.Done }
      }
    }
    when(state === J.Start && writer.io.cmd.ready) { // once, as the writer takes the job (it may first clear its filter buffer)
      fs := F.Next
      tableIdx := 0
    }
    val done = fs === F.Done || fs === F.Idle
  }

  // ---- merge -> writer: the kept entries with the writer's CUT and END control beats ----
  writer.io.entries << merge.io.output
  merge.io.status.ready := state === J.Run || state === J.Drain
  when(merge.io.status.fire) {
    mergeDone := True
    st.entriesIn := merge.io.status.entriesIn
    st.entriesOut := merge.io.status.entriesOut
    st.dropped := merge.io.status.dropped
    when(merge.io.status.error) {
      failCode(EngineUnit.Merge, merge.io.status.code, merge.io.status.run.resize(32), U(0), U(0),
        merge.io.status.entry)
    }
  }

  // ---- the writer's tables and keys into one sequence of beats for the write port ----
  object O extends SpinalEnum {
    val Bytes, Smallest, Largest, Info = newElement()
  }
  val seq = RegInit(O.Bytes)
  val ptr = Reg(UInt(33 bits)) // next beat's address
  val outEnd = Reg(UInt(33 bits))
  val tableAddr = Reg(UInt(32 bits))
  val smallestAddr = Reg(UInt(32 bits))
  val largestAddr = Reg(UInt(32 bits))
  val toWrite = Stream(Bits(8 * W bits))
  toWrite.valid := False
  toWrite.payload := writer.io.output.fragment.data
  writer.io.output.ready := False
  writer.io.keys.ready := False
  writer.io.status.ready := False
  io.outTables.valid := False
  io.outTables.addr := tableAddr
  io.outTables.size := writer.io.status.size
  io.outTables.entries := writer.io.status.entries
  io.outTables.smallestAddr := smallestAddr
  io.outTables.largestAddr := largestAddr
  io.outTables.smallestBytes := writer.io.status.smallestBytes
  io.outTables.largestBytes := writer.io.status.largestBytes
  val full = ptr + W > outEnd
  val active = state === J.Run && !err
  def beat(src: Stream[Fragment[ByteBeat]], next: SpinalEnumElement[O.type], onLast: => Unit): Unit = {
    when(src.valid) {
      when(full) {
        fail(EngineUnit.Output, "OUTPUT_FULL", table = st.tablesOut, offset = (ptr - tableAddr).resize(32))
      } otherwise {
        toWrite.valid := True
        toWrite.payload := src.fragment.data
        src.ready := toWrite.ready
        when(toWrite.ready) {
          ptr := ptr + W
          when(src.last) {
            onLast
            seq := next
          }
        }
      }
    }
  }
  when(active) {
    switch(seq) {
      is(O.Bytes) {
        when(writer.io.output.valid) {
          beat(writer.io.output, O.Smallest, { smallestAddr := (ptr + W).resized })
        } elsewhen (writer.io.status.valid) { // no table open: the job's end or an error
          writer.io.status.ready := True
          when(writer.io.status.error) {
            failCode(EngineUnit.Writer, writer.io.status.code, U(0), U(0), U(0), writer.io.status.entries)
          } otherwise { writerDone := True }
        }
      }
      is(O.Smallest) { beat(writer.io.keys, O.Largest, { largestAddr := (ptr + W).resized }) }
      is(O.Largest) { beat(writer.io.keys, O.Info, {}) }
      is(O.Info) {
        io.outTables.valid := writer.io.status.valid
        writer.io.status.ready := io.outTables.ready
        when(writer.io.status.fire) {
          tableAddr := ptr.resized
          st.tablesOut := st.tablesOut + 1
          st.bytesOut := st.bytesOut + writer.io.status.size
          seq := O.Bytes
        }
      }
    }
  }

  // ---- the write port: INCR bursts of up to c.writeBurst beats, never across 4 KiB, asked once their beats wait ----
  val wfifo = StreamFifo(Bits(8 * W bits), c.writeFifoBeats)
  wfifo.io.push << toWrite
  // The writer's spilled index beats share the port: bursts of their own to the spill region, issued only when no
  // output burst is ready (without a spill the port works as before, clock for clock).
  val sfifo = StreamFifo(Bits(8 * W bits), c.spillFifoBeats)
  sfifo.io.push << writer.io.spill.push
  val sAvail = Reg(UInt(log2Up(c.spillFifoBeats + 1) bits)) init (0)
  val sPtr = Reg(UInt(32 bits))
  val awSpill = Reg(Bool()) init (False)
  /** Beats of a burst from `ptr`: up to `most`, never across a burst edge (Bursts, TableReader.scala). */
  def burstFrom(ptr: UInt, most: Int): UInt = Bursts.from(ptr, most, W)
  val sBurstMax = burstFrom(sPtr, c.spillBurst)
  val avail = Reg(UInt(log2Up(c.writeFifoBeats + 1) bits)) init (0) // beats buffered, not yet in a burst
  val awPtr = Reg(UInt(32 bits))
  val awValid = RegInit(False)
  val awLen = Reg(UInt(8 bits))
  val wLens = StreamFifo(UInt(9 bits), 16) // a burst's beats - 1, and (bit 8) whether it is the spill's
  val outstanding = Reg(UInt(6 bits)) init (0)
  val burstMax = burstFrom(awPtr, c.writeBurst)
  val flush = state === J.Drain
  // Write grouping (c.writeGroup): a full burst waits until this unit's unsent beats reach 3/4 of the FIFO (urgent)
  // or another unit is urgent, so the units' bursts reach the DDR bus in one write period, not a read/write
  // turnaround pair each. Nothing waits on a held burst but the job's end, which flushes: the spill's read-back waits
  // only for bursts already issued, and a full FIFO is urgent.
  val release = if (c.writeGroup) {
    val urgent = RegNext(avail >= common.WriteGroup.urgentLevel(c.writeFifoBeats)) init (False)
    io.writeUrgent := urgent
    urgent || io.writeGroupGo
  } else True
  val issue = !awValid && wLens.io.push.ready && outstanding < 31 &&
    ((avail >= burstMax && release) || (flush && avail =/= 0))
  val issueBeats = Mux(avail >= burstMax, burstMax, avail.resize(13))
  val sFlush = writer.io.spill.fetch.valid || flush // the table's last spilled beat is in (or the job drains)
  val sIssue = !issue && !awValid && wLens.io.push.ready && outstanding < 31 &&
    (sAvail >= sBurstMax || (sFlush && sAvail =/= 0))
  val sIssueBeats = Mux(sAvail >= sBurstMax, sBurstMax, sAvail.resize(13))
  wLens.io.push.valid := False
  wLens.io.push.payload := U(0, 1 bits) @@ (issueBeats - 1).resize(8)
  when(issue) {
    awValid := True
    awSpill := False
    awLen := (issueBeats - 1).resized
    wLens.io.push.valid := True
  }
  when(sIssue) {
    awValid := True
    awSpill := True
    awLen := (sIssueBeats - 1).resized
    wLens.io.push.valid := True
    wLens.io.push.payload := U(1, 1 bits) @@ (sIssueBeats - 1).resize(8)
  }
  avail := (avail + U(toWrite.fire) - Mux(issue, issueBeats, U(0, 13 bits))).resized
  sAvail := (sAvail + U(sfifo.io.push.fire) - Mux(sIssue, sIssueBeats, U(0, 13 bits))).resized
  io.axiWrite.aw.valid := awValid
  io.axiWrite.aw.addr := Mux(awSpill, sPtr, awPtr)
  io.axiWrite.aw.id := U(0)
  io.axiWrite.aw.len := awLen
  io.axiWrite.aw.size := U(log2Up(W), 3 bits)
  io.axiWrite.aw.setBurstINCR()
  when(io.axiWrite.aw.fire) {
    awValid := False
    when(awSpill) {
      sPtr := sPtr + ((awLen.resize(32) + 1) << log2Up(W)).resized
    } otherwise {
      awPtr := awPtr + ((awLen.resize(32) + 1) << log2Up(W)).resized
    }
  }
  val wCount = Reg(UInt(8 bits)) init (0)
  val wSpill = wLens.io.pop.payload(8)
  io.axiWrite.w.valid := Mux(wSpill, sfifo.io.pop.valid, wfifo.io.pop.valid) && wLens.io.pop.valid
  io.axiWrite.w.data := Mux(wSpill, sfifo.io.pop.payload, wfifo.io.pop.payload)
  io.axiWrite.w.strb := B((1 << W) - 1, W bits)
  io.axiWrite.w.last := wCount === wLens.io.pop.payload(7 downto 0)
  wfifo.io.pop.ready := io.axiWrite.w.ready && wLens.io.pop.valid && !wSpill
  sfifo.io.pop.ready := io.axiWrite.w.ready && wLens.io.pop.valid && wSpill
  wLens.io.pop.ready := io.axiWrite.w.fire && io.axiWrite.w.last
  when(io.axiWrite.w.fire) { wCount := Mux(io.axiWrite.w.last, U(0, 8 bits), wCount + 1) }
  io.axiWrite.b.ready := True
  outstanding := outstanding + U(io.axiWrite.aw.fire).resize(6) - U(io.axiWrite.b.fire).resize(6)
  when(io.axiWrite.b.fire && io.axiWrite.b.resp =/= 0) { fail(EngineUnit.Output, "BAD_JOB") }
  val writeIdle = avail === 0 && !awValid && !wLens.io.pop.valid && !wfifo.io.pop.valid && outstanding === 0 &&
    sAvail === 0 && !sfifo.io.pop.valid

  // ---- the spill's read-back: on the writer's fetch, once its spilled beats are written (every write answered),
  // INCR bursts from the region's start into a FIFO with room for them ----
  val spillBase = job.spillBase(31 downto log2Up(W)) @@ U(0, log2Up(W) bits)
  val rd = arbiter.io.inputs(K)
  val rfifo = StreamFifo(Bits(8 * W bits), c.spillFifoBeats)
  rfifo.io.flush := False
  val rLeft = Reg(UInt(32 bits)) init (0) // beats still to ask
  val rPtr = Reg(UInt(32 bits))
  val rInflight = Reg(UInt(log2Up(c.spillFifoBeats + 1) bits)) init (0) // asked, not yet in the FIFO
  val arValid = RegInit(False)
  val arLen = Reg(UInt(8 bits))
  val rBurst = burstFrom(rPtr, c.spillBurst)
  val rBeats = Mux(rLeft < rBurst, rLeft.resize(13), rBurst)
  val spillWritten = sAvail === 0 && !sfifo.io.pop.valid && !awValid && !wLens.io.pop.valid && outstanding === 0
  writer.io.spill.fetch.ready := active && rLeft === 0 && rInflight === 0 && !arValid && spillWritten
  when(writer.io.spill.fetch.fire) {
    rLeft := writer.io.spill.fetch.payload
    rPtr := spillBase
    sPtr := spillBase // the next table's spill starts the region again
  }
  val rIssue = !arValid && rLeft =/= 0 && !err &&
    rfifo.io.occupancy.resize(8) + rInflight.resize(8) + rBeats.resize(8) <= c.spillFifoBeats
  when(rIssue) {
    arValid := True
    arLen := (rBeats - 1).resized
    rLeft := rLeft - rBeats.resize(32)
  }
  rInflight := (rInflight + Mux(rIssue, rBeats, U(0, 13 bits)) - U(rd.r.fire).resize(13)).resized
  rd.ar.valid := arValid
  rd.ar.addr := rPtr
  rd.ar.id := 0
  rd.ar.len := arLen
  rd.ar.size := U(log2Up(W), 3 bits)
  rd.ar.setBurstINCR()
  when(rd.ar.fire) {
    arValid := False
    rPtr := rPtr + ((arLen.resize(32) + 1) << log2Up(W)).resized
  }
  rd.r.ready := True // the FIFO has room for every beat asked
  rfifo.io.push.valid := rd.r.valid && !err
  rfifo.io.push.payload := rd.r.data
  when(rd.r.fire && rd.r.resp =/= 0) { fail(EngineUnit.Output, "BAD_JOB") }
  writer.io.spill.data << rfifo.io.pop
  val spillIdle = !arValid && rInflight === 0

  // ---- the job's steps ----
  switch(state) {
    is(J.Idle) {
      when(io.job.fire) {
        job := io.job.payload
        state := J.Reset
      }
    }
    is(J.Reset) {
      err := False
      st.error := False
      st.code := 0
      st.unit := 0
      st.run := 0
      st.table := 0
      st.offset := 0
      st.entry := 0
      st.entriesIn := 0
      st.entriesOut := 0
      st.dropped := 0
      st.tablesOut := 0
      st.bytesOut := 0
      writerDone := False
      mergeDone := False
      seq := O.Bytes
      val base = job.outBase(31 downto log2Up(W)) @@ U(0, log2Up(W) bits)
      ptr := base.resized
      tableAddr := base
      awPtr := base
      sPtr := spillBase
      rLeft := 0
      rfifo.io.flush := True // beats of a job stopped mid-read
      outEnd := job.outBase.resize(33) + job.outBytes
      state := J.Load
    }
    is(J.Load) {
      merge.io.baseLoad.get.valid := io.baseLoad.valid
      io.baseLoad.ready := merge.io.baseLoad.get.ready
      when(io.baseLoad.fire && io.baseLoad.last) { state := J.Start }
    }
    is(J.Start) {
      writer.io.cmd.valid := True
      when(writer.io.cmd.ready) { state := J.Run }
    }
    is(J.Run) {
      when(err || (writerDone && mergeDone)) { state := J.Drain }
    }
    is(J.Drain) {
      when(feeders.map(_.done).reduce(_ && _) && writeIdle && spillIdle) { state := J.Report }
    }
    is(J.Report) {
      when(io.status.ready) { state := J.Idle }
    }
  }
}

/** `table_engine.GenerateTableEngine [--bytes 4|8|16|32] [--ways 2|4|8] [--key-limit N] [--max-block N]
  * [--max-blocks N] [--walker-levels N] [--walker-files N] [--walker-key-words N] [--grandparents N] [--zip-lanes N]
  * [--zip-bytes N] [--merge-bytes M] --out DIR`: DIR/TableEngine.v, the whole engine for raw tables
  * (doc/table_engine_top.md); the walker's capacities (deeper levels, their files, words of range keys, grandparents;
  * powers of two but the levels); the merge stage M bytes wide inside (0: `--bytes`; twice `--bytes`: the wider
  * stage, doc/merge.md). */
object GenerateTableEngine extends Generator("build/gen/table_engine_top_w16_k4",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("ways", 4, Seq(2, 4, 8)),
      Gen.intOpt("key-limit", 1032, min = 1024), Gen.intOpt("max-block", 4 << 20, min = 64),
      Gen.intOpt("max-blocks", 1024, Seq(256, 1024, 4096, 16384)), Gen.intOpt("walker-levels", 8, min = 1),
      Gen.intOpt("walker-files", 1024, (4 to 16).map(1 << _)), Gen.intOpt("walker-key-words", 8192, (6 to 16).map(1 << _)),
      Gen.intOpt("grandparents", 1024, (4 to 16).map(1 << _)), Gen.intOpt("zip-lanes", TableEngineConfig().zipLanes, min = 1),
      Gen.intOpt("zip-bytes", 1 << 16, min = 1024), Gen.intOpt("merge-bytes", 0, Seq(0, 8, 16, 32, 64))) {
  def top(a: Gen.Args) = {
    val m = a.int("merge-bytes")
    if (m != 0 && m != a.int("bytes") && m != 2 * a.int("bytes")) {
      System.err.println(s"$prog: error: --merge-bytes $m: the beat's ${a.int("bytes")} or twice that")
      sys.exit(2)
    }
    TableEngine(TableEngineConfig(a.int("bytes"), a.int("ways"), a.int("key-limit"),
      a.int("max-block"), a.int("max-blocks"), walkerLevels = a.int("walker-levels"),
      walkerFiles = a.int("walker-files"), walkerKeyWords = a.int("walker-key-words"),
      grandparents = a.int("grandparents"), zipLanes = a.int("zip-lanes"), zipBytes = a.int("zip-bytes"),
      mergeBytes = m))
  }
}
