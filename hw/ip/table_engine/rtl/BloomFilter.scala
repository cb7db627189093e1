package table_engine

import spinal.core._
import spinal.lib._

/** Sizes of the table writer's filter unit: `bytes` per beat; `hashSlots` key hashes waiting for their filter
  * (the hash FIFO: one open filter may hold at most this many keys); `filterBytes` the filter buffer (all the
  * filters of one table wait there until its data blocks are out); `maxFilters` the filter offsets one table
  * may have (one per 2 KiB of data: tables up to 2 KiB x maxFilters); `hashWords` the 4-byte hash steps a
  * clock; `divStages` the remainder pipeline's steps a clock (32 / divStages clocks of latency). */
case class BloomConfig(bytes: Int = 16, hashSlots: Int = 4096, filterBytes: Int = 1 << 16, maxFilters: Int = 4096,
                       hashWords: Int = 1, divStages: Int = 2) {
  require(isPow2(filterBytes) && filterBytes >= 64, s"filter buffer of $filterBytes bytes: a power of two >= 64")
  require(isPow2(maxFilters) && maxFilters >= 2, s"$maxFilters filters: a power of two >= 2")
  require(isPow2(hashSlots) && hashSlots >= 4, s"$hashSlots hash slots: a power of two >= 4")
  require(hashWords >= 1 && hashWords <= bytes / 4, s"$hashWords hash steps a clock: 1 to ${bytes / 4}")
  require(32 % divStages == 0, s"$divStages remainder steps a clock: a divisor of 32")
  val words = filterBytes / bytes
  /** The longest bit array: the whole buffer. */
  val bitLimit = 8 * filterBytes
  val bitBits = log2Up(bitLimit + 1)
  val keyBits = log2Up(hashSlots + 1)
}

/** LevelDB's bloom filter (util/bloom.cc, util/hash.cc) as constants and combinational steps. */
object Bloom {
  val Seed = BigInt("bc9f1d34", 16)
  val M = BigInt("c6a4a793", 16)
  /** The model's filter_block.h, the one source of the format's constants (read at elaboration). */
  val Source = "hw/ip/table_engine/model/filter_block.h"
  private lazy val header = scala.io.Source.fromFile(Source, "UTF-8").mkString
  private def constant(pattern: String, what: String): String =
    pattern.r.findFirstMatchIn(header).getOrElse(sys.error(s"$Source: no $what")).group(1)
  /** kFilterBaseLg (LevelDB's table/filter_block.cc): a filter per 2 KiB of data-block offsets. */
  lazy val BaseLg: Int = constant("""constexpr int kFilterBaseLg = (\d+);""", "kFilterBaseLg").toInt
  /** The metaindex key of the filter block: "filter." and the policy's name. */
  lazy val PolicyName: String = "filter." + constant("""kBloomPolicyName = "([^"]+)";""", "kBloomPolicyName")
  /** BloomFilterPolicy's probe count: bits_per_key x 0.69 (a double, rounded down), kept in 1..30. */
  def probes(bitsPerKey: Int): Int = scala.math.max(1, scala.math.min(30, (bitsPerKey * 0.69).toInt))
  /** Past this bits_per_key the probe count is 30. */
  val ProbesCap = (1 until 64).find(b => probes(b) == 30).get

  private def mulM(h: UInt): UInt = (h * U(M, 32 bits)).resize(32)
  /** One step of Hash(): `n` (0..4) bytes of `word` (little-endian); 4 a whole word, 1..3 the tail, 0 none. */
  def step(h: UInt, word: Bits, n: UInt): UInt = {
    val tail = Bits(32 bits)
    for (i <- 0 until 4) tail(8 * i, 8 bits) := Mux(U(i) < n, word(8 * i, 8 bits), B(0, 8 bits))
    val m = mulM(h + tail.asUInt)
    Mux(n === 0, h, Mux(n === 4, m ^ (m |>> 16), m ^ (m |>> 24)))
  }
}

/** A KEY beat's user-key bytes for the hasher: `count` of them (0 for a user key of no bytes), `init` the hash's
  * start (seed ^ length x m) on the key's first beat, `last` on the beat with its final byte. */
case class HashBeat(bytes: Int) extends Bundle {
  val data = Bits(8 * bytes bits)
  val count = UInt(log2Up(bytes + 1) bits)
  val hashInit = UInt(32 bits)
  val keyStart = Bool()
}

/** LevelDB's Hash(key, n, 0xbc9f1d34) of each key's beats, `c.hashWords` 4-byte steps a clock; one hash out per
  * key. */
case class BloomHasher(c: BloomConfig) extends Component {
  val io = new Bundle {
    val input = slave Stream (Fragment(HashBeat(c.bytes)))
    val hash = master Stream (UInt(32 bits))
  }
  val S = c.hashWords
  val nWords = c.bytes / 4
  val h = Reg(UInt(32 bits))
  val pos = Reg(UInt(log2Up(nWords + 1) bits)) init (0) // the beat's next word
  val beat = io.input.fragment
  val start = Mux(pos === 0 && beat.keyStart, beat.hashInit, h)
  val words = beat.data.subdivideIn(32 bits)
  var acc = start
  for (s <- 0 until S) {
    val at = pos.resize(log2Up(2 * nWords + 1)) + s
    val left = (beat.count.resize(8) - (at << 2).resize(8)).asSInt
    val n = UInt(3 bits)
    n := Mux(left <= 0, U(0, 3 bits), Mux(left >= 4, U(4, 3 bits), left.asUInt.resize(3)))
    val word = Bits(32 bits)
    word := 0
    for (i <- 0 until nWords) when(at === i) { word := words(i) }
    acc = Bloom.step(acc, word, n)
  }
  val beatWords = (beat.count +^ 3) >> 2
  val beatDone = pos + S >= beatWords
  io.hash.valid := io.input.valid && beatDone && io.input.last
  io.hash.payload := acc
  io.input.ready := beatDone && (!io.input.last || io.hash.ready)
  when(io.input.valid) {
    when(!beatDone) {
      h := acc
      pos := pos + S
    } elsewhen (io.input.ready) {
      h := acc
      pos := 0
    }
  }
}

/** One filter to write (FilterBlockBuilder::GenerateFilter, then empty filters up to `target`): the next `keys`
  * hashes into a bit array of `bytes` bytes at `base` of the filter buffer, then the probe count byte; its
  * offset and those of the empty filters after it into the offset RAM, until `target` filters are written.
  * With `keys` 0 only the offsets. */
case class FilterCmd(c: BloomConfig) extends Bundle {
  val keys = UInt(c.keyBits bits)
  val bytes = UInt(c.bitBits bits)
  val base = UInt(log2Up(c.filterBytes + 1) bits)
  val first = UInt(32 bits) // the filter's number in the table
  val target = UInt(32 bits)
}

/** The filter generator: per command, k probes a hash (h, then h + delta, delta = h rotated right by 17), each
  * probe's h mod bits through a remainder pipeline, the bit set in the filter buffer by a read-modify-write one
  * probe a clock. The buffer is read out (and cleared, for the next table) through `drain*` when idle. */
case class FilterGen(c: BloomConfig) extends Component {
  val io = new Bundle {
    val cmd = slave Stream (FilterCmd(c))
    val hashes = slave Stream (UInt(32 bits))
    val probes = in UInt (5 bits)
    val idle = out Bool()
    /** Read-out: the buffer word at `bufAddr` (and offset `offAddr`) the clock after; `clear` writes zero at
      * `clearAddr`. Only while idle. */
    val bufAddr = in UInt (log2Up(c.words) bits)
    val bufData = out Bits (8 * c.bytes bits)
    val clear = in Bool()
    val clearAddr = in UInt (log2Up(c.words) bits)
    val offAddr = in UInt (log2Up(c.maxFilters) bits)
    val offData = out UInt (32 bits)
  }
  val W = c.bytes
  val LaneBits = log2Up(8 * W)
  val buffer = Mem(Bits(8 * W bits), c.words) // zero but where the writer's `dirty` says (cleared before use)
  val offsets = Mem(UInt(32 bits), c.maxFilters)

  // ---- remainder pipeline: probe value mod bits, restoring division, divStages steps a stage ----
  val bits = Reg(UInt(c.bitBits bits)) // the filter's bit count (constant while probes are in flight)
  val baseBit = Reg(UInt(log2Up(8 * c.filterBytes + 1) bits))
  case class DivStage() extends Bundle {
    val valid = Bool()
    val num = UInt(32 bits) // the dividend's bits not yet taken, top first
    val rem = UInt(c.bitBits bits)
  }
  val issue = DivStage()
  issue.valid := False
  issue.num := 0
  issue.rem := 0
  val nStages = 32 / c.divStages
  val stages = (0 until nStages).scanLeft(issue) { (in, _) =>
    var num = in.num
    var rem = in.rem
    for (_ <- 0 until c.divStages) {
      val shifted = (rem ## num.msb).asUInt.resize(c.bitBits + 1)
      val fits = shifted >= bits
      rem = Mux(fits, shifted - bits, shifted).resize(c.bitBits)
      num = num |<< 1
    }
    val r = Reg(DivStage())
    r.valid init (False)
    r.valid := in.valid
    r.num := num
    r.rem := rem
    r
  }
  val res = stages.last

  // ---- read-modify-write: OR a mask into a buffer word; the previous write forwarded ----
  val side = new Bundle { // the probe-count byte, after the probes
    val valid = Bool()
    val addr = UInt(log2Up(c.words) bits)
    val mask = Bits(8 * W bits)
  }
  side.valid := False
  side.addr := 0
  side.mask := 0
  val pos = baseBit + res.rem
  val probeAddr = (pos >> LaneBits).resize(log2Up(c.words))
  val probeMask = (B(1, 8 * W bits) |<< pos(LaneBits - 1 downto 0)).resize(8 * W)
  val rmwIn = res.valid || side.valid
  val rdAddr = Mux(res.valid, probeAddr, Mux(side.valid, side.addr, io.bufAddr))
  val rdWord = buffer.readSync(rdAddr)
  io.bufData := rdWord
  val rmwValid = RegNext(rmwIn) init (False)
  val rmwAddr = RegNext(Mux(res.valid, probeAddr, side.addr))
  val rmwMask = RegNext(Mux(res.valid, probeMask, side.mask))
  val lastValid = RegInit(False)
  val lastAddr = Reg(UInt(log2Up(c.words) bits))
  val lastWord = Reg(Bits(8 * W bits))
  val merged = Mux(lastValid && lastAddr === rmwAddr, lastWord, rdWord) | rmwMask
  lastValid := rmwValid
  when(rmwValid) {
    lastAddr := rmwAddr
    lastWord := merged
  }
  buffer.write(Mux(io.clear, io.clearAddr, rmwAddr), Mux(io.clear, B(0, 8 * W bits), merged), io.clear || rmwValid)
  io.offData := offsets.readSync(io.offAddr)

  // ---- per command: the probes, the count byte, the offsets ----
  object S extends SpinalEnum { val Idle, Probe, Drain, Count, Offsets = newElement() }
  val state = RegInit(S.Idle)
  val cmd = Reg(FilterCmd(c))
  val written = Reg(UInt(32 bits)) // the next filter's number
  val offValue = Reg(UInt(32 bits)) // its offset
  val toLoad = Reg(UInt(c.keyBits bits))
  val have = RegInit(False) // a hash being probed
  val h = Reg(UInt(32 bits))
  val delta = Reg(UInt(32 bits))
  val j = Reg(UInt(5 bits))
  val inFlight = stages.drop(1).map(_.valid).reduce(_ || _) || rmwValid
  io.cmd.ready := False
  io.hashes.ready := False
  io.idle := state === S.Idle && !io.cmd.valid && !inFlight
  val offWrite = Bool()
  offWrite := False
  offsets.write(written.resize(log2Up(c.maxFilters)), offValue, offWrite)

  switch(state) {
    is(S.Idle) {
      when(io.cmd.valid) {
        cmd := io.cmd.payload
        io.cmd.ready := True
        written := io.cmd.first
        offValue := io.cmd.base.resized
        bits := (io.cmd.bytes << 3).resized
        baseBit := (io.cmd.base << 3).resized
        toLoad := io.cmd.keys
        have := False
        state := Mux(io.cmd.keys === 0, S.Offsets, S.Probe)
      }
    }
    is(S.Probe) {
      val lastProbe = have && j === io.probes - 1
      when(have) {
        issue.valid := True
        issue.num := h
        h := h + delta
        j := j + 1
        when(lastProbe) { have := False }
      }
      when((!have || lastProbe) && toLoad =/= 0) {
        io.hashes.ready := True
        when(io.hashes.valid) {
          h := io.hashes.payload
          delta := io.hashes.payload.rotateRight(17)
          j := 0
          have := True
          toLoad := toLoad - 1
        }
      }
      when((!have || lastProbe) && toLoad === 0) { state := S.Drain }
    }
    is(S.Drain) { // the probes through the pipeline and written
      when(!inFlight) { state := S.Count }
    }
    is(S.Count) { // the probe count after the bit array; this filter's offset
      val at = (cmd.base + cmd.bytes.resized).resize(32)
      side.valid := True
      side.addr := (at >> log2Up(W)).resized
      side.mask := (io.probes.resize(8).asBits.resize(8 * W) |<< (at(log2Up(W) - 1 downto 0) << 3)).resize(8 * W)
      offWrite := True
      written := written + 1
      offValue := at + 1
      state := S.Offsets
    }
    is(S.Offsets) { // empty filters up to the target
      when(written < cmd.target) {
        offWrite := True
        written := written + 1
      } otherwise { state := S.Idle }
    }
  }
}
