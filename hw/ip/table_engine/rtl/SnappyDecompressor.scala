package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of a Snappy decompressor: `bytes` per stream beat (a power of two, >= 4) and the history buffer,
  * which is also the largest decompressed block it takes (copies may reach back to the block's start, so
  * the whole block is history): a power of two of at least 4 KiB (64 KiB in the simulation builds; a raw length
  * over it is BAD_SNAPPY, and copies never reach past it, since they cannot reach before the block's start). */
case class SnappyConfig(bytes: Int = 16, historyBytes: Int = 1 << 16) {
  require(bytes >= 4 && isPow2(bytes), s"beat width $bytes bytes: a power of two >= 4")
  require(historyBytes >= (1 << 12) && isPow2(historyBytes), s"history $historyBytes bytes: a power of two >= 4 KiB")
  val countBits = log2Up(bytes + 1)
  val laneBits = log2Up(bytes)
  val posBits = log2Up(historyBytes) + 1 // 0 .. historyBytes
  val rows = historyBytes / bytes
}

/** How a block ended: `error` with the model's code (BAD_SNAPPY) and the byte offset in the compressed
  * block (as model/snappy_codec's error_pos), else `bytes` decompressed. */
case class SnappyStatus() extends Bundle {
  val error = Bool()
  val code = UInt(ErrorCodes.Width bits)
  val offset = UInt(32 bits)
  val bytes = UInt(32 bits)
}

/** Decompresses one Snappy block (LevelDB's block type 1 contents) per `input` fragment (any byte count
  * per beat from lane 0; `last` ends the block) into `output` fragments (every beat full but the final,
  * which carries `last`; an empty block is one beat of 0 bytes), then one `status`. On an error the unit
  * reports it on `status` and halts, its output unfinished, until `softReset`. See doc/rtl.md. */
case class SnappyDecompressor(c: SnappyConfig = SnappyConfig()) extends Component {
  val io = new Bundle {
    val input = slave Stream (Fragment(ByteBeat(c.bytes)))
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (SnappyStatus())
    val softReset = in Bool()
  }
  val soft = ClockDomain(clock = ClockDomain.current.readClockWire,
    reset = ClockDomain.current.readResetWire || io.softReset, config = ClockDomain.current.config)
  val core = soft(SnappyDecompressorCore(c))
  core.io.input << io.input
  io.output << core.io.output
  io.status << core.io.status
}

case class SnappyDecompressorCore(c: SnappyConfig) extends Component {
  val io = new Bundle {
    val input = slave Stream (Fragment(ByteBeat(c.bytes)))
    val output = master Stream (Fragment(ByteBeat(c.bytes)))
    val status = master Stream (SnappyStatus())
  }
  val W = c.bytes
  val Cap = 3 * W // the byte window: a full beat refills it while it holds <= 2W bytes; >= 5 (longest header)
  val capBits = log2Up(Cap + 1)
  def min(a: UInt, b: UInt): UInt = Mux(a < b, a, b)

  object S extends SpinalEnum {
    val Length, Tag, Literal, Copy, Finish, Status, Error, Halt = newElement()
  }
  val state = RegInit(S.Length)

  // ---- the input window: bytes [pos, pos + avail) of the compressed block, from lane 0 ----
  val window = Reg(Bits(8 * Cap bits)) init (0)
  val avail = Reg(UInt(capBits bits)) init (0)
  val ended = RegInit(False) // the block's `last` beat taken
  val pos = Reg(UInt(32 bits)) init (0)
  val take = UInt(capBits bits)
  take := 0
  def head(i: Int): UInt = window(8 * i, 8 bits).asUInt

  val active = state === S.Length || state === S.Tag || state === S.Literal || state === S.Copy
  io.input.ready := active && !ended && avail <= 2 * W
  val beatMasked = Bits(8 * W bits)
  for (i <- 0 until W) beatMasked(8 * i, 8 bits) := Mux(U(i) < io.input.count, io.input.data(8 * i, 8 bits), B(0, 8 bits))
  val kept = (window >> (take << 3)).resize(8 * Cap)
  val keptAvail = avail - take
  window := kept
  avail := keptAvail
  pos := pos + take
  when(io.input.fire) {
    window := kept | (beatMasked.resize(8 * Cap) << (keptAvail << 3)).resize(8 * Cap)
    avail := keptAvail + io.input.count
    when(io.input.last) { ended := True }
  }

  // ---- element decoder ----
  val want = Reg(UInt(c.posBits bits)) // the preamble's raw length (checked <= historyBytes)
  val made = Reg(UInt(c.posBits bits)) init (0) // bytes issued to the output so far
  val room = want - made
  val elemPos = Reg(UInt(32 bits))
  val left = Reg(UInt(33 bits)) // bytes left of the current literal or copy
  val offset = Reg(UInt(c.posBits bits))
  val errAt = Reg(UInt(32 bits))
  def fail(at: UInt): Unit = { errAt := at.resized; state := S.Error }

  // What goes to the history/output stage this clock.
  val issue = Bool()
  val issueCount = UInt(c.countBits bits)
  val issueCopy = Bool()
  val issueLast = Bool()
  val issueData = Bits(8 * W bits) // a literal chunk's bytes
  val issueOffset = UInt(c.posBits bits) // a copy chunk's offset
  issue := False
  issueCount := 0
  issueCopy := False
  issueLast := False
  issueData := window(0, 8 * W bits)
  issueOffset := offset

  // ---- stage 2: one chunk (a literal's bytes or a copy's history read) written to history and packed ----
  val s2 = new Area {
    val valid = RegInit(False)
    val copy = Reg(Bool())
    val last = Reg(Bool())
    val count = Reg(UInt(c.countBits bits))
    val at = Reg(UInt(c.posBits bits)) // output position of its first byte
    val literal = Reg(Bits(8 * W bits))
    val src = Reg(UInt(c.posBits bits)) // a copy's source position
    val period = Reg(UInt(c.laneBits bits)) // a copy's offset when below W (a repeating pattern), else 0
  }
  val packIn = Stream(Fragment(ByteBeat(W)))
  val advance = !s2.valid || packIn.ready

  // A copy reads the history one clock before it is written: the chunk in stage 2 is written at that same
  // edge, so its bytes come from `prev` (the chunk written last) instead. Offsets below W repeat a pattern
  // of `offset` bytes (lanes j mod offset). So a copy chunk is always W bytes (or what is left).
  val prev = new Area {
    val at = Reg(UInt(c.posBits bits)) init (0)
    val count = Reg(UInt(c.countBits bits)) init (0)
    val data = Reg(Bits(8 * W bits))
  }

  switch(state) {
    is(S.Length) { // the raw length: a varint of at most 5 bytes (model: ParseVarint32, then <= the limit)
      val ends = (0 until 5).map(i => U(i) < avail && !head(i)(7))
      val value = (0 until 5).map(i => (head(i)(6 downto 0).resize(35) << (7 * i)).resize(35)).reduce(_ | _)
      val widths = (0 until 5).map(i => (0 until 5).map(k => if (k <= i) (BigInt(0x7f) << (7 * k)) else BigInt(0)).sum)
      val endIdx = OHToUInt(OHMasking.first(Vec(ends).asBits))
      val masked = value & Vec(widths.map(w => U(w, 35 bits)))(endIdx)
      when(ends.orR) {
        when(masked > c.historyBytes) { fail(U(0)) } otherwise {
          want := masked.resized
          take := (endIdx + 1).resized
          state := S.Tag
        }
      } elsewhen (avail >= 5 || ended) { fail(U(0)) }
    }
    is(S.Tag) {
      val tag = head(0)
      val kind = tag(1 downto 0)
      val l6 = tag(7 downto 2)
      val litExtra = Mux(l6 >= 60, (l6 - 59).resize(3), U(0, 3 bits))
      val hdr = UInt(3 bits)
      hdr := kind.mux(0 -> (litExtra + 1), 1 -> U(2, 3 bits), 2 -> U(3, 3 bits), 3 -> U(5, 3 bits))
      val b = (1 to 4).map(i => head(i).resize(33))
      val litLen = UInt(33 bits)
      litLen := l6.resize(33) + 1
      for (n <- 1 to 4) when(l6 === 59 + n) {
        litLen := (0 until n).map(i => (b(i) << (8 * i)).resize(33)).reduce(_ | _) + 1
      }
      val copyLen = kind.mux(1 -> (tag(4 downto 2).resize(33) + 4), default -> (l6.resize(33) + 1))
      def le(n: Int): UInt = (0 until n).map(i => (b(i) << (8 * i)).resize(32)).reduce(_ | _)
      val off32 = kind.mux(1 -> ((tag(7 downto 5).resize(32) << 8).resize(32) | b(0).resize(32)),
        2 -> le(2), default -> le(4))
      when(avail === 0) {
        when(ended) { // the stream's end: the output must have the declared length
          when(made === want) { state := S.Finish } otherwise { fail(pos) }
        }
      } elsewhen (avail < hdr) {
        when(ended) { fail(pos) }
      } otherwise {
        elemPos := pos
        take := hdr.resized
        // The element's first chunk leaves in the header's clock when it can (the bytes behind the header
        // for a literal; a copy whose source is readable).
        when(kind === 0) {
          val n = min(min((avail - hdr).resize(33), U(W, 33 bits)), litLen)
          when(litLen > room) { fail(pos) } elsewhen (n =/= 0 && advance) {
            issue := True
            issueCount := n.resized
            issueData := (window >> (hdr << 3)).resize(8 * W)
            take := (hdr + n).resized
            left := litLen - n
            state := Mux(litLen === n, S.Tag, S.Literal)
          } otherwise {
            left := litLen
            state := S.Literal
          }
        } otherwise {
          issueOffset := off32.resized
          val n = min(U(W, 33 bits), copyLen)
          when(off32 === 0 || off32 > made) { fail(pos) } elsewhen (copyLen > room) { fail(pos) } otherwise {
            offset := off32.resized
            left := copyLen
            state := S.Copy
            when(advance) {
              issue := True
              issueCopy := True
              issueCount := n.resized
              left := copyLen - n
              when(copyLen === n) { state := S.Tag }
            }
          }
        }
      }
    }
    is(S.Literal) { // up to W bytes a clock, as far as the window holds them
      val n = min(min(avail.resize(33), U(W, 33 bits)), left)
      when(avail === 0 && ended) { fail(elemPos) } elsewhen (n =/= 0 && advance) {
        issue := True
        issueCount := n.resized
        take := n.resized
        left := left - n
        when(left === n) { state := S.Tag }
      }
    }
    is(S.Copy) {
      val n = min(U(W, 33 bits), left)
      when(advance) {
        issue := True
        issueCopy := True
        issueCount := n.resized
        left := left - n
        when(left === n) { state := S.Tag }
      }
    }
    is(S.Finish) { // a 0-byte chunk carries `last` through stage 2 to the packer
      when(advance) {
        issue := True
        issueLast := True
        state := S.Status
      }
    }
  }
  when(issue) { made := made + issueCount }

  // ---- the history: W byte-wide banks (bank b holds positions = b mod W), so any W consecutive bytes are
  // one row in each bank; reads are synchronous (block RAM) ----
  val banks = Seq.fill(W)(Mem(Bits(8 bits), c.rows))
  val src = made - issueOffset
  val srcLane = src(c.laneBits - 1 downto 0)
  val srcRow = src(c.posBits - 1 downto c.laneBits)
  val readData = Vec(banks.zipWithIndex.map { case (m, b) =>
    val row = (srcRow + Mux(U(b, c.laneBits bits) < srcLane, U(1), U(0))).resize(log2Up(c.rows))
    m.readSync(row, advance)
  })

  when(advance) {
    s2.valid := issue
    s2.copy := issueCopy
    s2.last := issueLast
    s2.count := issueCount
    s2.at := made
    s2.literal := issueData
    s2.src := src
    s2.period := Mux(issueOffset < W, issueOffset.resize(c.laneBits), U(0, c.laneBits bits))
  }
  val copied = Vec((0 until W).map { j =>
    val lane = Vec((0 until W).map(d => U(if (d == 0) j else j % d, c.laneBits bits)))(s2.period)
    val p = s2.src + lane.resize(c.posBits)
    val fromPrev = p >= prev.at && (p - prev.at) < prev.count
    Mux(fromPrev, prev.data.subdivideIn(8 bits)((p - prev.at).resize(c.laneBits)),
      readData(s2.src(c.laneBits - 1 downto 0) + lane))
  })
  val chunkRaw = Mux(s2.copy, copied.asBits, s2.literal)
  val chunk = Bits(8 * W bits) // lanes above the count zeroed: the packer ORs chunks together
  for (i <- 0 until W) chunk(8 * i, 8 bits) := Mux(U(i) < s2.count, chunkRaw(8 * i, 8 bits), B(0, 8 bits))
  packIn.valid := s2.valid
  packIn.data := chunk
  packIn.count := s2.count
  packIn.last := s2.last
  val atLane = s2.at(c.laneBits - 1 downto 0)
  val atRow = s2.at(c.posBits - 1 downto c.laneBits)
  when(packIn.fire) {
    prev.at := s2.at
    prev.count := s2.count
    prev.data := chunk
  }
  for ((m, b) <- banks.zipWithIndex) {
    val k = U(b, c.laneBits bits) - atLane // the chunk's lane this bank takes
    val row = (atRow + Mux(U(b, c.laneBits bits) < atLane, U(1), U(0))).resize(log2Up(c.rows))
    m.write(row, chunk(8 * k, 8 bits), enable = packIn.fire && k.resize(c.countBits) < s2.count)
  }

  // ---- packer: chunks of 0..W bytes into full beats ----
  val pack = new Area {
    val buf = Reg(Bits(16 * W bits)) init (0)
    val fill = Reg(UInt(log2Up(2 * W + 1) bits)) init (0)
    val lastPending = RegInit(False)
    io.output.valid := fill >= W || lastPending
    io.output.data := buf(0, 8 * W bits)
    io.output.count := min(fill, U(W, fill.getWidth bits)).resized
    io.output.last := lastPending && fill <= W
    packIn.ready := !lastPending && (fill < W || io.output.ready)
    val out = Mux(io.output.fire, min(fill, U(W, fill.getWidth bits)), U(0, fill.getWidth bits))
    val rest = (buf >> (out << 3)).resize(16 * W)
    val restFill = fill - out
    buf := rest
    fill := restFill
    when(packIn.fire) {
      buf := rest | (packIn.data.resize(16 * W) << (restFill << 3)).resize(16 * W)
      fill := restFill + packIn.count
      when(packIn.last) { lastPending := True }
    }
    when(io.output.fire && io.output.last) { lastPending := False }
  }

  // ---- status ----
  val lastOut = RegInit(False) // the final output beat has left
  when(io.output.fire && io.output.last) { lastOut := True }
  io.status.valid := (state === S.Status && lastOut) || state === S.Error
  io.status.error := state === S.Error
  io.status.code := U(ErrorCodes("BAD_SNAPPY"), ErrorCodes.Width bits)
  io.status.offset := errAt
  io.status.bytes := made.resized
  when(io.status.fire) {
    when(state === S.Error) { state := S.Halt } otherwise { // ready for the next block
      state := S.Length
      lastOut := False
      ended := False
      pos := 0
      made := 0
    }
  }
}
