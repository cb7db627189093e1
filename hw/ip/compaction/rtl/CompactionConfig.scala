package compaction

import spinal.core._

/** Generation parameters of the compaction IP.
  *
  * @param dataWidth      bits per beat on key0/key1/out (32 or 128); an entry is always 128 bits inside.
  * @param inFifoDepth    decoded-key FIFO between each decoder and the comparer_merger.
  * @param keyFifoDepth   merged-key FIFO between the comparer_merger and the encoder.
  * @param invFifoDepth   invalid-address FIFO between the comparer_merger and `io.invalid`.
  * @param outFifoDepth   encoded-entry FIFO between the encoder and `io.out`.
  * @param ways           input runs K merged by one job (2, 4 or 8); K = 2 is the original two-way IP.
  */
case class CompactionConfig(
    dataWidth: Int = 128,
    ways: Int = 2,
    inFifoDepth: Int = 16,
    keyFifoDepth: Int = 16,
    invFifoDepth: Int = 16,
    outFifoDepth: Int = 16
) {
  require(dataWidth == 32 || dataWidth == 128, s"dataWidth must be 32 or 128, not $dataWidth")
  require(ways == 2 || ways == 4 || ways == 8, s"ways must be 2, 4 or 8, not $ways")
  Seq(inFifoDepth, keyFifoDepth, invFifoDepth, outFifoDepth).foreach(d => require(d >= 2, "FIFO depths must be >= 2"))
  def beatBytes: Int = dataWidth / 8
  def beatWords: Int = dataWidth / 32
  def beatsPerEntry: Int = 128 / dataWidth
  def levels: Int = log2Up(ways)       // comparer levels of the merge tree
  def inputBits: Int = log2Up(ways)    // ERR_INPUT width
}

object CompactionConfig {
  /** The IP alone, as its harness (hw/ip/compaction/dv), the host's in-process back end and the register maps
    * build it: (preset, folder under build/gen, config) for each stream width and K. The two-way IP keeps
    * its original folder names; the firmware compiles against the four-way map (it extends the two-way one). */
  val presets: Seq[(String, String, CompactionConfig)] =
    for (w <- Seq(128, 32); k <- Seq(2, 4, 8))
      yield (s"ip-w$w" + (if (k == 2) "" else s"-k$k"), s"compaction_w$w" + (if (k == 2) "" else s"_k$k"),
        CompactionConfig(dataWidth = w, ways = k))
}

/** STATUS.ERR_CODE values, read at elaboration from their one source, hw/ip/compaction/data/kb16_errors.json,
  * which the KB16 model (lsmc.model.kb16) and the firmware's KB16 library (kb16_errors.h) read too: the
  * codes are the KB16 format's as much as the IP's, and those two must work without a JVM. One entry with
  * several faults reports the lowest code. compaction_regs.h / .json carry them again as `CIP_ERR_*`. */
object ErrorCode {
  val File = "hw/ip/compaction/data/kb16_errors.json"
  /** (name, code, meaning) in code order. */
  lazy val all: Seq[(String, Int, String)] = {
    val text = try { val src = scala.io.Source.fromFile(File, "UTF-8"); try src.mkString finally src.close() }
      catch { case e: java.io.IOException => throw new IllegalArgumentException(s"$File: cannot read it ($e)") }
    val entry = """\{"name": "(\w+)", "code": (\d+), "meaning": "((?:[^"\\]|\\.)*)"""".r
    val codes = entry.findAllMatchIn(text).map(m => (m.group(1), m.group(2).toInt, m.group(3).replace("\\\"", "\""))).toSeq
    require(codes.nonEmpty && codes.map(_._2) == codes.indices && codes.size <= 16,
      s"$File: codes must be 0..n-1 in order, n <= 16 (ERR_CODE is compared on 4 bits)")
    codes
  }
  private def code(name: String): Int =
    all.find(_._1 == name).map(_._2).getOrElse(throw new IllegalArgumentException(s"$File: no error code $name"))
  val NONE = code("NONE")
  val RESERVED_BITS = code("RESERVED_BITS")
  val LEN_OVER_8 = code("LEN_OVER_8")
  val SHARED_OVER_PREV = code("SHARED_OVER_PREV")
  val GROUP_START_SHARED = code("GROUP_START_SHARED")
  val VIRTUAL_AT_END = code("VIRTUAL_AT_END")
  val BAD_PAD = code("BAD_PAD")
  val EMPTY_KEY = code("EMPTY_KEY")
  val NOT_INCREASING = code("NOT_INCREASING")
  val LENGTH = code("LENGTH")
  val FILL_NONZERO = code("FILL_NONZERO")
  val OUT_OVERFLOW = code("OUT_OVERFLOW")
  val INV_OVERFLOW = code("INV_OVERFLOW")
  val BAD_GROUP = code("BAD_GROUP")
  def regEnum = common.RegEnum("ERR", "STATUS.ERR_CODE", s"error codes (from $File)",
    all.map { case (n, v, m) => common.RegEnum.V(n, v, doc = m) })
}

/** One 16-byte entry as it leaves the input width converter, with the port's `last` checks. */
case class DecoderInput() extends Bundle {
  val data = Bits(128 bits)   // byte 0 of the entry in bits 7..0
  val truncated = Bool()      // `last` came before the entry was complete (rest of the entry stuffed with 0)
  val lastBad = Bool()        // `last` on an entry's final beat disagrees with the declared length
}

/** A decoded key travelling decoder -> comparer_merger -> encoder.
  * `endOnly` records carry no key: they mark the end of a run (decoder) or an empty merged run (merger). */
case class KeyRecord() extends Bundle {
  val key = Bits(128 bits)    // key byte j in bits 8j+7..8j, zero past `len`
  val len = UInt(5 bits)      // 1..16
  val addr = Bits(32 bits)
  val last = Bool()           // final key of its run
  val endOnly = Bool()
}

/** Error report of a decoder (one pulse, then the decoder halts). */
case class DecoderError() extends Bundle {
  val code = UInt(4 bits)
  val index = UInt(32 bits)
}

/** One encoded output entry. */
case class EncodedEntry() extends Bundle {
  val data = Bits(128 bits)
  val last = Bool()           // final entry of the merged run
  val real = Bool()           // a real key's entry (counted in OUT_KEYS)
}

/** A key inside the merge tree: the value addresses of the `n` runs under one tree node, run order
  * (newest first); `present(i)` says run i holds the key. The newest present run wins, the others'
  * addresses are the invalid ones. Same end protocol as KeyRecord (`last` on the final key, or a
  * trailing `endOnly` record when the end was only known after the final key). */
case class MergeRecord(n: Int) extends Bundle {
  val key = Bits(128 bits)
  val len = UInt(5 bits)
  val addrs = Vec(Bits(32 bits), n)
  val present = Bits(n bits)
  val last = Bool()
  val endOnly = Bool()
}

object KeyOps {
  /** Lexicographic order of zero-filled keys as one unsigned number: byte 0 most significant, the
    * length as tie-breaker, so a proper prefix sorts first ("ab" < "ab\0"). */
  def orderValue(key: Bits, len: UInt): UInt = (Cat(key.subdivideIn(8 bits).reverse) ## len).asUInt

  /** Bits of each chunk of a split order compare: one carry chain per chunk instead of one 133-bit
    * chain (on the ECP5 a 67-cell chain alone took 11.5 ns with its routing). */
  val chunkBits = 34

  /** (greater, equal) of `a` against `b` per chunk, most significant chunk first. */
  def chunkCompare(a: UInt, b: UInt): Seq[(Bool, Bool)] = {
    require(a.getWidth == b.getWidth)
    val w = a.getWidth
    (w - 1 to 0 by -chunkBits).map { hi =>
      val lo = (hi - chunkBits + 1) max 0
      (a(hi downto lo) > b(hi downto lo), a(hi downto lo) === b(hi downto lo))
    }
  }

  /** a > b from the per-chunk results of chunkCompare (most significant first). */
  def chunksGreater(c: Seq[(Bool, Bool)]): Bool =
    c.foldRight(False) { case ((gt, eq), lower) => gt || (eq && lower) }

  /** (a > b, a < b) from one carry chain per chunk and direction, no equality trees: in the combine
    * "not less in this chunk" stands for "equal" (where the chunk is greater the result is decided
    * already), so each result is a two-level function of the chains' outputs. */
  def greaterLess(a: UInt, b: UInt): (Bool, Bool) = {
    require(a.getWidth == b.getWidth)
    val chunks = (a.getWidth - 1 to 0 by -chunkBits).map { hi =>
      val lo = (hi - chunkBits + 1) max 0
      (a(hi downto lo) > b(hi downto lo), a(hi downto lo) < b(hi downto lo))
    }
    def fold(c: Seq[(Bool, Bool)]): Bool = c.foldRight(False) { case ((gt, lt), lower) => gt || (!lt && lower) }
    (fold(chunks), fold(chunks.map(_.swap)))
  }
}
