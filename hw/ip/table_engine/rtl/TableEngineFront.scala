package table_engine

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Where the front end stopped a job (STATUS.UNIT = FRONT: ERR_TABLE says which memory, ERR_OFFSET the byte in it). */
object FrontWhere {
  val Desc = 0 // the descriptor (ERR_OFFSET: the byte of the field at fault)
  val Tables = 1 // run STATUS.RUN's table list (ERR_OFFSET: its record's byte)
  val Loads = 2 // the walker's load records (ERR_OFFSET: the record's byte)
  val Results = 3 // the result area (ERR_OFFSET: the record's byte that did not fit or was refused)
  val names = Seq("DESC", "TABLES", "LOADS", "RESULTS")
}

/** What the front end reports of a job: the engine's EngineStatus, or the front end's own error as unit FRONT (4),
  * with the job's clocks (from GO to the status, and the engine's from its job handshake to its status). */
case class FrontStatus() extends Bundle {
  val busy, done, error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val unit = UInt(3 bits)
  val run = UInt(4 bits)
  val table, offset, entry = UInt(32 bits)
  val entriesIn, entriesOut, dropped, tablesOut, bytesOut = UInt(32 bits)
  val cycles, engineCycles = UInt(32 bits)
}

object TableEngineFront {
  val UnitFront = 4 // STATUS.UNIT of the front end's own errors (EngineUnit's are 0..3)
  val unitNames = Seq("READER", "MERGE", "WRITER", "OUTPUT", "FRONT")
}

/** The register front end's core, bus-agnostic (its registers: TableEngineRegs; the unit: TableEngineUnit). After
  * `go` it reads the job descriptor at `descAddr` (hw/ip/table_engine/data/te_job.json, TE_DESC) over `axiRead`,
  * checks it, gives the engine its job, streams the walker's load records (TE_LOAD) into `baseLoad`, keeps each
  * run's next tables (TE_TABLE lists) in a small FIFO per run that the engine's feeders take from, writes one
  * TE_OUT record per output table into the result area over `axiWrite`, and ends with `status` and a one-clock
  * `doneEvent` or `errorEvent`. A descriptor it refuses never reaches the engine; an AXI error on its own reads
  * after the job started still lets the engine finish (the load ends, the run gets an empty table, which its reader
  * refuses), so every job ends with a status. `softReset` (while idle) clears the status and the clocks. */
case class TableEngineFront(c: TableEngineConfig, tableFifo: Int = 4) extends Component {
  require(c.bytes == 16, "TE_LOAD records carry 16-byte beats: the front end is built for W = 16")
  val io = new Bundle {
    val go = in Bool ()
    val softReset = in Bool ()
    val descAddr = in UInt (32 bits)
    val status = out(FrontStatus())
    val doneEvent, errorEvent = out Bool ()
    val job = master Stream (EngineJob())
    val baseLoad = master Stream (Fragment(BaseLoad(c.walker)))
    val tables = Vec(master Stream (EngineTable()), c.ways)
    val outTables = slave Stream (EngineOutTable(c))
    val engineStatus = slave Stream (EngineStatus(c))
    val axiRead = master(Axi4ReadOnly(c.readAxi))
    val axiWrite = master(Axi4WriteOnly(c.writeAxi))
  }
  val W = c.bytes
  val K = c.ways
  val beatShift = log2Up(W)
  def code(name: String): UInt = U(ErrorCodes(name), ErrorCodes.Width bits)
  def const(name: String): BigInt = TeJob.constant(name)

  // ---- the descriptor ----
  val descWords = TeJob.words("TE_DESC")
  require(descWords * 4 % W == 0 && descWords * 4 <= const("TE_DESC_ALIGN"), "TE_DESC fits its alignment in beats")
  val desc = Vec(Reg(Bits(32 bits)), descWords)
  def idx(f: String): Int = TeJob.word("TE_DESC", f)
  def field(f: String, i: Int = 0): UInt = desc(idx(f) + i).asUInt
  def perRun(f: String, r: UInt): UInt = Vec((0 until K).map(k => field(f, k)))(r.resize(log2Up(K)))
  val runs = field("runs")
  val flags = field("flags")
  def flagBit(n: String): Bool = flags(TeJob.flag(n))

  object S extends SpinalEnum {
    val Idle, DescAr, DescR, Check, Job, LoadAr, LoadR, Tables, Done = newElement()
  }
  val state = RegInit(S.Idle)

  // ---- status ----
  val done = RegInit(False)
  val error = RegInit(False)
  val fErr = RegInit(False) // the front end's own error, which wins over the engine's (it may cause it)
  val fCode = Reg(UInt(ErrorCodes.Width bits)) init (0)
  val fWhere = Reg(UInt(32 bits)) init (0)
  val fRun = Reg(UInt(4 bits)) init (0)
  val fOffset = Reg(UInt(32 bits)) init (0)
  def frontFail(name: String, where: Int, offset: UInt, run: UInt = U(0)): Unit = when(!fErr) {
    fErr := True
    fCode := code(name)
    fWhere := where
    fRun := run.resized
    fOffset := offset.resized
  }
  val eSt = Reg(EngineStatus(c)) init (EngineStatus(c).getZero)
  val eDone = Reg(Bool()) init (False)
  val cycles = Reg(UInt(32 bits)) init (0)
  val engineCycles = Reg(UInt(32 bits)) init (0)
  val engineOn = RegInit(False)
  when(state =/= S.Idle) { cycles := cycles + 1 }
  when(engineOn) { engineCycles := engineCycles + 1 }

  io.status.busy := state =/= S.Idle
  io.status.done := done
  io.status.error := error
  io.status.code := Mux(fErr, fCode, eSt.code)
  io.status.unit := Mux(fErr, U(TableEngineFront.UnitFront, 3 bits), eSt.unit.resize(3))
  io.status.run := Mux(fErr, fRun, eSt.run)
  io.status.table := Mux(fErr, fWhere, eSt.table)
  io.status.offset := Mux(fErr, fOffset, eSt.offset)
  io.status.entry := Mux(fErr, U(0, 32 bits), eSt.entry)
  io.status.entriesIn := eSt.entriesIn
  io.status.entriesOut := eSt.entriesOut
  io.status.dropped := eSt.dropped
  io.status.tablesOut := eSt.tablesOut
  io.status.bytesOut := eSt.bytesOut
  io.status.cycles := cycles
  io.status.engineCycles := engineCycles
  io.doneEvent := False
  io.errorEvent := False

  // ---- the read port (one burst at a time: the descriptor, then the load, then table records) ----
  val ar = io.axiRead.ar
  val r = io.axiRead.r
  ar.valid := False
  ar.addr := 0
  ar.id := 0
  ar.len := 0
  ar.size := U(beatShift, 3 bits)
  ar.setBurstINCR()
  r.ready := False
  def beatsToBoundary(a: UInt): UInt = ((U(4096, 13 bits) - a(11 downto 0)) >> beatShift).resize(13)

  // ---- the job's options ----
  io.job.valid := state === S.Job
  io.job.runs := runs.resized
  io.job.verify := flagBit("VERIFY")
  io.job.smallestSnapshot := field("snapshot_hi") @@ field("snapshot_lo")
  io.job.blockSize := field("block_size")
  io.job.restartInterval := field("restart_interval").resized
  io.job.maxFileSize := field("max_file_size")
  io.job.outBase := field("out_base")
  io.job.outBytes := field("out_bytes")
  io.job.snappy := flagBit("SNAPPY")
  io.job.bloomBitsPerKey := field("bloom_bits_per_key").resized
  io.job.spillBase := field("spill_base")
  io.job.spillBytes := field("spill_bytes")

  // ---- descriptor fetch and checks ----
  val beat = Reg(UInt(log2Up(descWords * 4 / W + 1) bits))
  val readErr = Reg(Bool())
  val checkWord = UInt(log2Up(descWords) bits)
  val checkBad = Bool()
  checkWord := 0
  checkBad := False
  // The first failing field (in word order) names the error: the checks are listed in that order and the
  // first assignment in program order must win, so they are applied last to first.
  val known = (1 << TeJob.flag("VERIFY")) | (1 << TeJob.flag("SNAPPY"))
  val runMask = Vec((0 until K).map(k => U(k) < runs))
  val checks: Seq[(Bool, Int)] = Seq(
    (desc(idx("magic")) =/= B(const("TE_MAGIC"), 32 bits), idx("magic")),
    (field("version") =/= U(const("TE_VERSION"), 32 bits), idx("version")),
    (runs === 0 || runs > K, idx("runs")),
    ((flags & ~U(known, 32 bits)) =/= 0, idx("flags")),
    (field("restart_interval") === 0 || field("restart_interval") > 0xffff, idx("restart_interval")),
    (field("max_file_size") === 0, idx("max_file_size")),
    (field("bloom_bits_per_key") > io.job.bloomBitsPerKey.maxValue, idx("bloom_bits_per_key")),
    (field("out_base")(beatShift - 1 downto 0) =/= 0, idx("out_base")),
    (field("result_addr")(log2Up(const("TE_OUT_ALIGN").toInt) - 1 downto 0) =/= 0, idx("result_addr")),
    (field("loads_addr")(log2Up(const("TE_LOAD_ALIGN").toInt) - 1 downto 0) =/= 0, idx("loads_addr")),
    (field("loads_count") === 0, idx("loads_count"))) ++
    (0 until K).map(k => (runMask(k) && field("tables_addr", k)(log2Up(const("TE_TABLE_ALIGN").toInt) - 1 downto 0) =/= 0,
      idx("tables_addr") + k)) ++
    (0 until K).map(k => (runMask(k) && field("tables_count", k) === 0, idx("tables_count") + k)) ++ Seq(
    // the engine spills in whole beats and never wraps its pointer: the region is beat-aligned and below 2^32
    (field("spill_bytes") =/= 0 && field("spill_base")(beatShift - 1 downto 0) =/= 0, idx("spill_base")),
    ((field("spill_base").resize(33) + field("spill_bytes").resize(33)).msb, idx("spill_bytes")))
  for ((bad, w) <- checks.reverse) when(bad) {
    checkBad := True
    checkWord := w
  }

  // ---- walker load ----
  val lAddr = Reg(UInt(32 bits))
  val lLeft = Reg(UInt(33 bits)) // beats not yet asked
  val lRec = Reg(UInt(32 bits)) // record of the next data beat
  val lHead = Reg(Bool()) // the next beat is a record's first (target, addr)
  val lTarget = Reg(UInt(3 bits))
  val lAt = Reg(UInt(16 bits))
  val lBurst = Reg(UInt(13 bits))
  val lSpoil = fErr || (r.valid && r.resp =/= 0) // after an error: harmless beats (LEVELS = 0) to the load's end
  io.baseLoad.valid := state === S.LoadR && r.valid && !lHead
  io.baseLoad.target := Mux(lSpoil, U(BaseLoadTarget.Levels, 3 bits), lTarget)
  io.baseLoad.addr := Mux(lSpoil, U(0, 16 bits), lAt)
  io.baseLoad.data := Mux(lSpoil, B(0, io.baseLoad.data.getWidth bits), r.data.resized)
  io.baseLoad.last := lRec === field("loads_count") - 1

  // ---- table lists: each run's next tables in a FIFO its feeder takes from ----
  val fifos = Seq.fill(K)(StreamFifo(EngineTable(), tableFifo))
  for (k <- 0 until K) {
    io.tables(k) << fifos(k).io.pop
    fifos(k).io.flush := state === S.Idle
    fifos(k).io.push.valid := False
    fifos(k).io.push.payload.assignDontCare()
  }
  val tIdx = Vec(Reg(UInt(32 bits)), K)
  val rr = Reg(UInt(log2Up(K) bits)) init (0)
  val tWait = RegInit(False)
  val tRun = Reg(UInt(log2Up(K) bits))
  val tAddr = perRun("tables_addr", rr) + (tIdx(rr) << 4).resize(32) // a TE_TABLE record: one beat
  val eligible = Vec((0 until K).map(k => runMask(k) && tIdx(k) < field("tables_count", k) &&
    fifos(k).io.occupancy < tableFifo))

  // ---- result records ----
  object R extends SpinalEnum {
    val Idle, Aw, W0, W1, B = newElement()
  }
  val rs = RegInit(R.Idle)
  val rec = Reg(EngineOutTable(c))
  val recN = Reg(UInt(32 bits))
  val recBytes = U(8 * 4, 6 bits) // TE_OUT: 8 words
  require(TeJob.words("TE_OUT") == 8 && TeJob.word("TE_OUT", "addr") == 0 && TeJob.word("TE_OUT", "size") == 1 &&
    TeJob.word("TE_OUT", "entries") == 2 && TeJob.word("TE_OUT", "smallest_addr") == 3 &&
    TeJob.word("TE_OUT", "smallest_len") == 4 && TeJob.word("TE_OUT", "largest_addr") == 5 &&
    TeJob.word("TE_OUT", "largest_len") == 6, s"${TeJob.File}: TE_OUT is written as two beats in this word order")
  require(TeJob.words("TE_TABLE") * 4 == W && TeJob.word("TE_TABLE", "size") == 1 &&
    TeJob.word("TE_TABLE", "first_block") == 2 && TeJob.word("TE_TABLE", "end_block") == 3 &&
    const("TE_TABLE_ALIGN") == W && TeJob.words("TE_LOAD") * 4 == 2 * W &&
    TeJob.word("TE_LOAD", "addr") == 1 && TeJob.word("TE_LOAD", "data") * 4 == W,
    s"${TeJob.File}: TE_TABLE is a beat of (base, size, first_block, end_block), TE_LOAD a beat of (target, addr) and a beat of data")
  val recAt = (field("result_addr") + (recN << 5).resize(32))
  val recFits = ((recN.resize(38) + 1) << 5) <= field("result_bytes").resize(38)
  io.outTables.ready := rs === R.Idle
  val aw = io.axiWrite.aw
  aw.valid := rs === R.Aw
  aw.addr := recAt
  aw.id := 0
  aw.len := 1
  aw.size := U(beatShift, 3 bits)
  aw.setBurstINCR()
  io.axiWrite.w.valid := rs === R.W0 || rs === R.W1
  io.axiWrite.w.data := Mux(rs === R.W0,
    rec.smallestAddr ## rec.entries ## rec.size ## rec.addr,
    B(0, 32 bits) ## rec.largestBytes.resize(32) ## rec.largestAddr ## rec.smallestBytes.resize(32))
  io.axiWrite.w.strb := B((1 << W) - 1, W bits)
  io.axiWrite.w.last := rs === R.W1
  io.axiWrite.b.ready := rs === R.B
  switch(rs) {
    is(R.Idle) {
      when(io.outTables.fire) {
        when(recFits) {
          rec := io.outTables.payload
          rs := R.Aw
        } otherwise {
          frontFail("OUTPUT_FULL", FrontWhere.Results, (recN << 5).resize(32))
          recN := recN + 1
        }
      }
    }
    is(R.Aw) { when(aw.ready) { rs := R.W0 } }
    is(R.W0) { when(io.axiWrite.w.ready) { rs := R.W1 } }
    is(R.W1) { when(io.axiWrite.w.ready) { rs := R.B } }
    is(R.B) {
      when(io.axiWrite.b.valid) {
        when(io.axiWrite.b.resp =/= 0) { frontFail("BAD_JOB", FrontWhere.Results, (recN << 5).resize(32)) }
        recN := recN + 1
        rs := R.Idle
      }
    }
  }

  // ---- the engine's status: after its records (it sends every record before it) ----
  io.engineStatus.ready := state === S.Tables && rs === R.Idle && !eDone
  when(io.engineStatus.fire) {
    eSt := io.engineStatus.payload
    eDone := True
    engineOn := False
  }

  // ---- the job's steps ----
  switch(state) {
    is(S.Idle) {
      when(io.softReset) {
        done := False
        error := False
        fErr := False
        eSt.error := False
        cycles := 0
        engineCycles := 0
      }
      when(io.go) {
        done := False
        error := False
        fErr := False
        eDone := False
        eSt.error := False
        eSt.code := 0
        eSt.unit := 0
        eSt.run := 0
        eSt.table := 0
        eSt.offset := 0
        eSt.entry := 0
        eSt.entriesIn := 0
        eSt.entriesOut := 0
        eSt.dropped := 0
        eSt.tablesOut := 0
        eSt.bytesOut := 0
        cycles := 0
        engineCycles := 0
        beat := 0
        readErr := False
        recN := 0
        rr := 0
        for (k <- 0 until K) tIdx(k) := 0
        for (w <- 0 until descWords) desc(w) := B(0, 32 bits)
        when(io.descAddr(log2Up(const("TE_DESC_ALIGN").toInt) - 1 downto 0) =/= 0) {
          frontFail("BAD_JOB", FrontWhere.Desc, U(0))
          state := S.Done
        } otherwise { state := S.DescAr }
      }
    }
    is(S.DescAr) {
      ar.valid := True
      ar.addr := io.descAddr
      ar.len := descWords * 4 / W - 1
      when(ar.ready) { state := S.DescR }
    }
    is(S.DescR) {
      r.ready := True
      when(r.valid) {
        for (b <- 0 until descWords * 4 / W; k <- 0 until W / 4) when(beat === b) {
          desc(b * W / 4 + k) := r.data(32 * k + 31 downto 32 * k)
        }
        beat := beat + 1
        when(r.resp =/= 0) { readErr := True }
        when(r.last) { state := S.Check }
      }
    }
    is(S.Check) {
      when(readErr) {
        frontFail("BAD_JOB", FrontWhere.Desc, U(0))
        state := S.Done
      } elsewhen (checkBad) {
        frontFail("BAD_JOB", FrontWhere.Desc, (checkWord << 2).resize(32))
        state := S.Done
      } otherwise {
        state := S.Job
      }
    }
    is(S.Job) {
      when(io.job.ready) {
        engineOn := True
        lAddr := field("loads_addr")
        lLeft := (field("loads_count") << 1).resized
        lRec := 0
        lHead := True
        state := S.LoadAr
      }
    }
    is(S.LoadAr) {
      val toB = beatsToBoundary(lAddr)
      val n = Mux(lLeft < 16, lLeft.resize(13), U(16, 13 bits))
      val burst = Mux(toB < n, toB, n)
      ar.valid := True
      ar.addr := lAddr
      ar.len := (burst - 1).resized
      when(ar.ready) {
        lAddr := lAddr + (burst << beatShift).resize(32)
        lLeft := lLeft - burst
        lBurst := burst
        state := S.LoadR
      }
    }
    is(S.LoadR) {
      r.ready := lHead || io.baseLoad.ready
      when(r.fire) {
        when(r.resp =/= 0) { frontFail("BAD_JOB", FrontWhere.Loads, (lRec << 5).resize(32)) }
        when(lHead) {
          lTarget := r.data(2 downto 0).asUInt
          lAt := r.data(32 + 15 downto 32).asUInt
        } otherwise { lRec := lRec + 1 }
        lHead := !lHead
        when(r.last) { state := Mux(lLeft === 0, S.Tables, S.LoadAr) }
      }
    }
    is(S.Tables) {
      when(!tWait) {
        when(eligible(rr)) {
          ar.valid := True
          ar.addr := tAddr(31 downto beatShift) @@ U(0, beatShift bits)
          when(ar.ready) {
            tWait := True
            tRun := rr
            rr := rr + 1
          }
        } otherwise { rr := rr + 1 }
      } otherwise {
        r.ready := True
        when(r.valid) {
          tWait := False
          val words = r.data.subdivideIn(32 bits)
          val count = perRun("tables_count", tRun)
          val bad = r.resp =/= 0
          for (k <- 0 until K) when(tRun === k) {
            val p = fifos(k).io.push
            p.valid := True
            p.base := Mux(bad, U(0, 32 bits), words(0).asUInt)
            p.size := Mux(bad, U(0, 32 bits), words(1).asUInt)
            p.firstBlock := Mux(bad, U(0, 32 bits), words(2).asUInt)
            p.endBlock := Mux(bad, U(0, 32 bits), words(3).asUInt)
            p.last := bad || tIdx(k) === count - 1
            tIdx(k) := Mux(bad, count, tIdx(k) + 1)
          }
          when(bad) { frontFail("BAD_JOB", FrontWhere.Tables, (tIdx(tRun) << 4).resize(32), tRun) }
        }
      }
      when(eDone && !tWait && rs === R.Idle) { state := S.Done }
    }
    is(S.Done) {
      done := True
      val bad = fErr || eSt.error
      error := bad
      io.doneEvent := !bad
      io.errorEvent := bad
      state := S.Idle
    }
  }
}
