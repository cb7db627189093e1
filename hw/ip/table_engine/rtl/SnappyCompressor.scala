package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of a Snappy compressor: `bytes` per stream beat (a power of two, >= 4), the largest block it takes
  * and libsnappy's fragment and hash-table sizes (model/limits.h: kMaxBlockBytes, kSnappyFragmentBytes,
  * kSnappyMinHashBits, kSnappyMaxHashBits; the generator is given them). `epochBits`: each hash-table entry
  * carries the number of the fragment that wrote it, so a new fragment's table is empty without clearing it;
  * the whole table is cleared only after reset and once every 2^epochBits fragments. */
case class SnappyCompressorConfig(bytes: Int = 16, maxBlockBytes: Int = 4 << 20, fragmentBytes: Int = 1 << 16,
                                  minHashBits: Int = 8, maxHashBits: Int = 14, epochBits: Int = 8) {
  require(bytes >= 4 && isPow2(bytes), s"beat width $bytes bytes: a power of two >= 4")
  require(isPow2(fragmentBytes) && fragmentBytes <= (1 << 16) && fragmentBytes >= 16 * bytes,
    s"fragment of $fragmentBytes bytes: a power of two <= 64 KiB (16-bit positions)")
  require(minHashBits >= 1 && minHashBits <= maxHashBits && maxHashBits <= 16, "hash bits")
  // The preamble (a varint32 of the length) leaves as one chunk of at most 4 bytes.
  require(maxBlockBytes >= 1 && maxBlockBytes < (1 << 28), s"largest block $maxBlockBytes: below 2^28")
  require(epochBits >= 1 && epochBits <= 16, "epoch bits")
  val laneBits = log2Up(bytes)
  val countBits = log2Up(bytes + 1)
  val posBits = log2Up(fragmentBytes) + 2 // fragment positions, and up to a beat past its end
  val rows = fragmentBytes / bytes
  val rowBits = log2Up(rows)
  val lenBits = log2Up(maxBlockBytes + 1)
  val tableEntries = 1 << maxHashBits
}

/** After a block's last output beat: `bytes` of the compressed block, and `saves`: compressed is below
  * raw - raw/8 (LevelDB's TableBuilder::WriteBlock keeps the compressed form only then). */
case class SnappyCompressorStatus() extends Bundle {
  val bytes = UInt(32 bits)
  val saves = Bool()
}

/** Compresses one block (LevelDB's block contents, up to `maxBlockBytes`) per `length` into the bytes
  * libsnappy 1.1.9 writes for it (model/snappy_codec.cc's Compress: the same choices, so the same bytes).
  * `length` first; then `input` carries exactly ceil(length / W) beats, full but the final (its `count` and
  * `last` are not examined: the length frames the block; none for an empty block); `output` the compressed
  * bytes, every beat full but the final, which carries `last`; then one `status`. See doc/rtl.md. */
case class SnappyCompressor(c: SnappyCompressorConfig = SnappyCompressorConfig()) extends Component {
  val io = new Bundle {
    val length = slave Stream (UInt(c.lenBits bits))
    val input = slave Stream (Fragment(ByteBeat(c.bytes)))
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (SnappyCompressorStatus())
  }
  val W = c.bytes
  val P = c.posBits
  def min(a: UInt, b: UInt): UInt = Mux(a < b, a, b)

  object S extends SpinalEnum {
    val Clear, Idle, Preamble, NextFragment, Load, Start, Scan, LitTag, LitData, Extend, Copy, FragmentEnd,
        Finish, Status = newElement()
  }
  val state = RegInit(S.Clear)

  // ---- block and fragment ----
  val rawLength = Reg(UInt(c.lenBits bits)) init (0)
  val left = Reg(UInt(c.lenBits bits)) init (0) // bytes of the block after the current fragment
  val fragLen = Reg(UInt(P bits)) init (0)
  val limit = Reg(UInt(P bits)) init (0) // fragLen - 15: lookups stop there (libsnappy's input margin)
  val mask = Reg(UInt(c.maxHashBits bits)) init (0) // the fragment's table size - 1
  val epoch = Reg(UInt(c.epochBits bits)) init (0)
  val clearAfter = RegInit(False) // the clear was for a fragment (not the reset): load it next
  val clearAddr = Reg(UInt(c.maxHashBits bits)) init (0)
  val loadRow = Reg(UInt(c.rowBits + 1 bits)) init (0)

  // ---- the element being built ----
  val ls = Reg(UInt(P bits)) init (0) // the pending literal's start
  val litPos = Reg(UInt(P bits)) init (0)
  val litLeft = Reg(UInt(P bits)) init (0)
  val litThenMatch = Reg(Bool()) init (False) // a match follows the literal (else the fragment's end)
  val mPos = Reg(UInt(P bits)) init (0) // the match: at mPos, from mCand, mLen bytes
  val mCand = Reg(UInt(P bits)) init (0)
  val mLen = Reg(UInt(P bits)) init (0)
  val copyLeft = Reg(UInt(P bits)) init (0)

  // ---- the fragment's bytes: W byte-wide banks (bank b holds positions = b mod W), so any W consecutive
  // bytes are one row in each bank; two ports (block RAM's two): A loads, reads the scanned position, the
  // literals and the match's bytes; B reads the candidates ----
  val banks = Seq.fill(W)(Mem(Bits(8 bits), c.rows))
  class ReadPort extends Area {
    val pos = UInt(P bits)
    val en = Bool()
    pos := 0
    en := False
    val lane = pos(c.laneBits - 1 downto 0)
    val row = pos(P - 1 downto c.laneBits)
    def rowFor(b: Int): UInt = (row + Mux(U(b, c.laneBits bits) < lane, U(1), U(0))).resize(c.rowBits)
    val laneQ = RegNextWhen(lane, en) init (0)
  }
  val a = new ReadPort
  val b = new ReadPort
  val loadWrite = io.input.fire
  val aRaw = Vec(banks.zipWithIndex.map { case (m, k) =>
    m.readWriteSync(Mux(loadWrite, loadRow.resize(c.rowBits), a.rowFor(k)), io.input.fragment.data(8 * k, 8 bits),
      a.en || loadWrite, loadWrite)
  })
  val bRaw = Vec(banks.zipWithIndex.map { case (m, k) => m.readSync(b.rowFor(k), b.en) })
  def rotate(raw: Vec[Bits], lane: UInt): Vec[Bits] =
    Vec((0 until W).map(j => raw((lane + U(j, c.laneBits bits)).resize(c.laneBits))))
  val aData = rotate(aRaw, a.laneQ) // the W bytes from the position read the clock before
  val bData = rotate(bRaw, b.laneQ)

  // ---- the hash table: positions, each tagged with the fragment (epoch) that wrote it ----
  val table = Mem(Bits(16 + c.epochBits bits), c.tableEntries)
  val tWrite = Bool()
  val tWriteAddr = UInt(c.maxHashBits bits)
  val tWriteData = Bits(16 + c.epochBits bits)
  tWrite := False
  tWriteAddr := clearAddr
  tWriteData := 0
  table.write(tWriteAddr, tWriteData, tWrite)
  def hashOf(bytes: Vec[Bits]): UInt = {
    val v = (bytes(3) ## bytes(2) ## bytes(1) ## bytes(0)).asUInt
    val p = (v * U(0x1e35a7bdL, 32 bits)).resize(32)
    p(31 downto 32 - c.maxHashBits) & mask
  }

  // ---- emission: chunks of 0..W bytes (tag bytes, or a literal's bytes read from port A) ----
  val eIssue = Bool()
  val eHist = Bool()
  val eCount = UInt(c.countBits bits)
  val eData = Bits(8 * W bits)
  val eLast = Bool()
  eIssue := False
  eHist := False
  eCount := 0
  eData := 0
  eLast := False
  val e2 = new Area {
    val valid = RegInit(False)
    val hist = Reg(Bool()) init (False)
    val count = Reg(UInt(c.countBits bits)) init (0)
    val data = Reg(Bits(8 * W bits)) init (0)
    val last = Reg(Bool()) init (False)
  }
  val packIn = Stream(Fragment(ByteBeat(W)))
  val advance = !e2.valid || packIn.ready
  // A literal chunk waits in stage 2 on port A's held output: nothing else may read port A meanwhile.
  val histBusy = e2.valid && e2.hist
  when(advance) {
    e2.valid := eIssue
    e2.hist := eHist
    e2.count := eCount
    e2.data := eData
    e2.last := eLast
  }
  val chunkRaw = Mux(e2.hist, aData.asBits, e2.data)
  val chunk = Bits(8 * W bits)
  for (i <- 0 until W) chunk(8 * i, 8 bits) := Mux(U(i) < e2.count, chunkRaw(8 * i, 8 bits), B(0, 8 bits))
  packIn.valid := e2.valid
  packIn.fragment.data := chunk
  packIn.fragment.count := e2.count
  packIn.last := e2.last

  // ---- the scanner: lookups, one a clock, in libsnappy's order; the table is written when a lookup
  // commits (stage 3), so lookups issued after a match are dropped without trace ----
  object Op extends SpinalEnum { val Write, Lookup, End = newElement() }
  val scan = new Area {
    val active = RegInit(False)
    val q = Reg(UInt(P bits)) init (0) // the next lookup's position
    val skip = Reg(UInt(P + 1 bits)) init (32) // the step is skip / 32; skip grows by each step
    val pre = Reg(UInt(2 bits)) init (0) // after a copy: 2 = enter ip - 1, 1 = look up ip, then the loop
  }
  case class Stage() extends Bundle {
    val valid = Bool()
    val op = Op()
    val pos = UInt(P bits)
    val h = UInt(c.maxHashBits bits)
    val v = Bits(32 bits)
    val cand = UInt(16 bits)
  }
  def stageReg(): Stage = {
    val s = Reg(Stage())
    s.valid init (False)
    s
  }
  val s1, s2, s3 = stageReg()
  val committed = new Area { // the table write of the clock before (maybe not yet visible to a read)
    val valid = RegInit(False)
    val h = Reg(UInt(c.maxHashBits bits)) init (0)
    val pos = Reg(UInt(16 bits)) init (0)
  }
  committed.valid := False
  val flush = Bool()
  flush := False
  val scanning = state === S.Scan

  // Stage 0: the next op; port A reads its 4 bytes.
  val s0 = Stage()
  s0.assignDontCare()
  s0.valid := False
  val step = (scan.skip >> 5).resize(P)
  when(scanning && scan.active) {
    s0.valid := True
    s0.h := 0
    s0.v := 0
    s0.cand := 0
    when(scan.pre === 2) {
      s0.op := Op.Write
      s0.pos := scan.q - 1
      scan.pre := 1
    } elsewhen (scan.pre === 1) {
      s0.op := Op.Lookup
      s0.pos := scan.q
      scan.pre := 0
      scan.q := scan.q + 1
      scan.skip := 32
    } otherwise {
      s0.pos := scan.q
      when(scan.q + step > limit) {
        s0.op := Op.End
        scan.active := False
      } otherwise {
        s0.op := Op.Lookup
        scan.q := scan.q + step
        scan.skip := scan.skip + step
      }
    }
    a.pos := s0.pos
    a.en := True
  }
  // Stage 1: hash of the 4 bytes; the table read.
  val s1Hash = hashOf(aData)
  val tRead = table.readSync(s1Hash, scanning)
  // Stage 2: the candidate (the youngest older write to the same entry, else the table's, 0 if another
  // fragment wrote it); port B reads its 4 bytes.
  val tEntryPos = Mux(tRead(16, c.epochBits bits).asUInt === epoch, tRead(15 downto 0).asUInt, U(0, 16 bits))
  val s2Cand = UInt(16 bits)
  s2Cand := tEntryPos
  when(committed.valid && committed.h === s2.h) { s2Cand := committed.pos }
  when(s3.valid && s3.op =/= Op.End && s3.h === s2.h) { s2Cand := s3.pos.resize(16) }
  when(scanning && s2.valid) {
    b.pos := s2Cand.resize(P)
    b.en := True
  }
  // Stage 3: compare; commit the table write.
  val s3Match = s3.op === Op.Lookup && bData(0) ## bData(1) ## bData(2) ## bData(3) === s3.v
  when(scanning && s3.valid && s3.op =/= Op.End) {
    tWrite := True
    tWriteAddr := s3.h
    tWriteData := epoch.asBits ## s3.pos.resize(16).asBits
    committed.valid := True
    committed.h := s3.h
    committed.pos := s3.pos.resize(16)
  }
  when(scanning) {
    def follow(to: Stage, from: Stage): Unit = {
      to.valid := from.valid
      to.op := from.op
      to.pos := from.pos
    }
    follow(s1, s0)
    follow(s2, s1)
    s2.h := s1Hash
    s2.v := aData(0) ## aData(1) ## aData(2) ## aData(3)
    follow(s3, s2)
    s3.h := s2.h
    s3.v := s2.v
    s3.cand := s2Cand
    when(s3.valid && s3.op === Op.End) {
      flush := True
      litPos := ls
      litLeft := fragLen - ls
      litThenMatch := False
      state := S.LitTag
    } elsewhen (s3.valid && s3Match) {
      flush := True
      mPos := s3.pos
      mCand := s3.cand.resize(P)
      mLen := 4
      litPos := ls
      litLeft := s3.pos - ls
      litThenMatch := True
      state := Mux(s3.pos === ls, S.Extend, S.LitTag)
    }
  }
  when(flush) {
    s1.valid := False
    s2.valid := False
    s3.valid := False
    scan.active := False
  }

  // ---- match extension: W bytes a clock from both ports, the read of the next W issued while the last
  // are compared ----
  val ext = new Area {
    val inflight = RegInit(False)
    val off = Reg(UInt(P bits)) init (0) // offset from the match's start of the bytes being compared
    val lanesEqual = (0 until W).map(j => aData(j) === bData(j) && (mPos + off + j < fragLen))
    val run = CountOne(Vec(lanesEqual.scanLeft(True)(_ && _).tail)) // leading equal lanes
  }

  // ---- the controller ----
  io.length.ready := False
  io.input.ready := False
  val outBytes = Reg(UInt(32 bits)) init (0)
  when(packIn.fire) { outBytes := outBytes + packIn.fragment.count }
  val lastOut = RegInit(False)

  switch(state) {
    is(S.Clear) { // every table entry to position 0 of epoch 0
      tWrite := True
      tWriteAddr := clearAddr
      tWriteData := 0
      clearAddr := clearAddr + 1
      when(clearAddr.andR) { state := Mux(clearAfter, S.Load, S.Idle) }
    }
    is(S.Idle) {
      io.length.ready := True
      when(io.length.valid) {
        rawLength := io.length.payload
        left := io.length.payload
        outBytes := 0
        state := S.Preamble
      }
    }
    is(S.Preamble) { // the length as a varint32 (at most 4 bytes below 2^28)
      val n = rawLength.resize(28)
      val groups = (0 until 4).map(i => n(7 * i, 7 bits))
      val more = (0 until 3).map(i => n >= (U(1) << (7 * (i + 1))))
      for (i <- 0 until 4) {
        val cont = if (i < 3) more(i) else False
        eData(8 * i, 8 bits) := cont.asBits ## groups(i).asBits
      }
      eCount := Mux(more(2), U(4), Mux(more(1), U(3), Mux(more(0), U(2), U(1)))).resized
      when(advance) {
        eIssue := True
        state := S.NextFragment
      }
    }
    is(S.NextFragment) {
      when(left === 0) { state := S.Finish } otherwise {
        val len = min(left, U(c.fragmentBytes, c.lenBits bits))
        fragLen := len.resized
        left := left - len
        loadRow := 0
        epoch := epoch + 1
        // libsnappy's table size: the next power of two >= the fragment, within [2^min, 2^max] entries
        val sizes = (c.minHashBits to c.maxHashBits).map(k => U((1 << k) - 1, c.maxHashBits bits))
        val fits = (c.minHashBits until c.maxHashBits).map(k => len <= (1 << k))
        mask := sizes.last
        for ((f, m) <- fits.zip(sizes).reverse) when(f) { mask := m }
        when(epoch.andR) { // wrapped: entries of this epoch number are old
          clearAfter := True
          state := S.Clear
        } otherwise { state := S.Load }
      }
    }
    is(S.Load) {
      io.input.ready := True
      when(io.input.valid) {
        loadRow := loadRow + 1
        when(((loadRow + 1) << c.laneBits).resize(P + 1) >= fragLen) { state := S.Start }
      }
    }
    is(S.Start) {
      clearAfter := False
      ls := 0
      when(fragLen < 15) {
        litPos := 0
        litLeft := fragLen
        litThenMatch := False
        state := S.LitTag
      } otherwise {
        limit := fragLen - 15
        scan.q := 1
        scan.skip := 32
        scan.pre := 0
        scan.active := True
        state := S.Scan
      }
    }
    is(S.LitTag) {
      val v = (litLeft - 1).resize(16)
      when(v < 60) {
        eData(7 downto 0) := (v.resize(6) ## B"00")
        eCount := 1
      } elsewhen (v < 256) {
        eData(15 downto 0) := v(7 downto 0).asBits ## B(60 << 2, 8 bits)
        eCount := 2
      } otherwise {
        eData(23 downto 0) := v.asBits ## B(61 << 2, 8 bits)
        eCount := 3
      }
      when(litLeft === 0) { state := S.FragmentEnd } elsewhen (advance) {
        eIssue := True
        state := S.LitData
      }
    }
    is(S.LitData) {
      val n = min(litLeft, U(W, P bits))
      a.pos := litPos
      a.en := advance
      eHist := True
      eCount := n.resized
      when(advance) {
        eIssue := True
        litPos := litPos + n
        litLeft := litLeft - n
        when(litLeft === n) { state := Mux(litThenMatch, S.Extend, S.FragmentEnd) }
      }
    }
    is(S.Extend) { // the model's `while (ip + len < n && in[cand + len] == in[ip + len]) len++`
      when(!histBusy) {
        val next = Mux(ext.inflight, ext.off + W, mLen)
        val go = !ext.inflight || ext.run === W
        when(go) {
          a.pos := mPos + next
          a.en := True
          b.pos := mCand + next
          b.en := True
          ext.off := next
          ext.inflight := True
        }
        when(ext.inflight) {
          mLen := ext.off + ext.run
          when(ext.run =/= W) {
            ext.inflight := False
            copyLeft := ext.off + ext.run
            state := S.Copy
          }
        }
      }
    }
    is(S.Copy) { // copies of 64 bytes while >= 68 are left, one of 60 if 65..67, then the rest (4..64)
      val offset = (mPos - mCand).resize(16)
      val n = UInt(7 bits)
      n := copyLeft.resized
      when(copyLeft >= 68) { n := 64 } elsewhen (copyLeft > 64) { n := 60 }
      when(n <= 11 && offset < 2048) {
        eData(15 downto 0) := offset(7 downto 0).asBits ## offset(10 downto 8).asBits ## (n - 4).resize(3).asBits ## B"01"
        eCount := 2
      } otherwise {
        eData(23 downto 0) := offset.asBits ## (n - 1).resize(6).asBits ## B"10"
        eCount := 3
      }
      when(advance) {
        eIssue := True
        copyLeft := copyLeft - n
        when(copyLeft === n) {
          val ip = mPos + mLen
          when(ip >= limit) { // the model's `if (ip >= ip_limit) goto remainder`
            litPos := ip
            litLeft := fragLen - ip
            litThenMatch := False
            state := S.LitTag
          } otherwise { // enter ip - 1, look up ip, and on a miss scan on from ip + 1
            ls := ip
            scan.q := ip
            scan.pre := 2
            scan.active := True
            state := S.Scan
          }
        }
      }
    }
    is(S.FragmentEnd) {
      when(!histBusy) { state := S.NextFragment }
    }
    is(S.Finish) { // a 0-byte chunk carries `last` to the packer
      eLast := True
      when(advance) {
        eIssue := True
        state := S.Status
      }
    }
  }

  // ---- packer: chunks of 0..W bytes into full beats; a beat leaves once more bytes (or the end) follow,
  // so the final beat, which carries `last`, is never empty ----
  val pack = new Area {
    val buf = Reg(Bits(16 * W bits)) init (0)
    val fill = Reg(UInt(log2Up(2 * W + 1) bits)) init (0)
    val lastPending = RegInit(False)
    io.output.valid := fill > W || (lastPending && fill =/= 0)
    io.output.fragment.data := buf(0, 8 * W bits)
    io.output.fragment.count := min(fill, U(W, fill.getWidth bits)).resized
    io.output.last := lastPending && fill <= W
    packIn.ready := !lastPending && (fill <= W || io.output.ready)
    val out = Mux(io.output.fire, min(fill, U(W, fill.getWidth bits)), U(0, fill.getWidth bits))
    val rest = (buf >> (out << 3)).resize(16 * W)
    val restFill = fill - out
    buf := rest
    fill := restFill
    when(packIn.fire) {
      buf := rest | (packIn.fragment.data.resize(16 * W) << (restFill << 3)).resize(16 * W)
      fill := restFill + packIn.fragment.count
      when(packIn.last) { lastPending := True }
    }
    when(io.output.fire && io.output.last) {
      lastPending := False
      lastOut := True
    }
  }

  io.status.valid := state === S.Status && lastOut
  io.status.bytes := outBytes
  io.status.saves := outBytes < (rawLength - (rawLength >> 3)).resize(32)
  when(io.status.fire) {
    lastOut := False
    state := S.Idle
  }
}
