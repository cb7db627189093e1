package table_engine

import spinal.core._
import spinal.lib._

/** `count` bytes of a stream beat, from lane 0 (byte 0 = bits 7..0). */
case class ByteBeat(bytes: Int) extends Bundle {
  val data = Bits(8 * bytes bits)
  val count = UInt(log2Up(bytes + 1) bits)
}

object Crc32c {
  /** Castagnoli's polynomial, bit-reflected (LevelDB's util/crc32c). */
  val Poly = BigInt("82f63b78", 16)
  /** LevelDB's crc32c.h: a stored CRC is the CRC rotated right by 15 plus this. */
  val MaskDelta = BigInt("a282ead8", 16)

  def mask(crc: UInt): UInt = crc.rotateRight(15) + U(MaskDelta, 32 bits)

  /** The register after `n` bytes, bit by bit, as XOR masks: (register bits, byte bits) that XOR into each of the
    * 32 result bits (byte i's bit b is bit 8i + b of the data). A byte goes into the reflected register's low 8
    * bits, then 8 steps shift it right, XORing Poly in where bit 0 was set; run here on sets of variables (a bit
    * is the XOR of the variables in its set) at elaboration time, the one place the rule is written. */
  def linear(n: Int): (Seq[BigInt], Seq[BigInt]) = {
    // variables 0..31: the register's bits; 32 + 8i + b: byte i's bit b
    var c: Seq[BigInt] = (0 until 32).map(BigInt(1) << _)
    for (i <- 0 until n) {
      c = c.zipWithIndex.map { case (v, j) => if (j < 8) v ^ (BigInt(1) << (32 + 8 * i + j)) else v }
      for (_ <- 0 until 8) {
        val low = c(0)
        c = (0 until 32).map(j => (if (j < 31) c(j + 1) else BigInt(0)) ^ (if (Poly.testBit(j)) low else BigInt(0)))
      }
    }
    val regMask = (BigInt(1) << 32) - 1
    (c.map(_ & regMask), c.map(_ >> 32))
  }

  /** A reduction XOR of `v`'s bits in `mask` (yosys makes a balanced tree of it). */
  def xorOf(v: Bits, mask: BigInt): Bool = (v & B(mask, v.getWidth bits)).xorR

  /** The register `state` after `n` zero bytes: M_n of linear(n), the register's part alone. */
  def advance(state: Bits, n: Int): Bits = {
    val m = linear(n)._1
    Cat((0 until 32).map(i => xorOf(state, m(i)))) // Cat: the first element is bit 0
  }
}

/** CRC32C of the bytes given since `clear`, `bytes` per clock: each beat's first `count` bytes are folded in
  * at once. The CRC register after k bytes is linear over GF(2) in the register and the bytes (Crc32c.linear):
  * register' = M_k(register) xor D(bytes). The bytes are right-aligned into the beat first: from a zero
  * register, leading zero bytes leave it zero, so one map D of the whole beat serves every count, and only the
  * register's maps M_0 .. M_bytes (XORs of up to 32 bits each) are chosen by `count`. Flat XOR trees, a
  * byte shifter and one mux instead of a chain of `bytes` byte steps (which routed at 30 MHz on the ECP5 at 16
  * bytes: hw/ip/table_engine/doc/table_engine_top.md). `crc` is the value LevelDB's crc32c::Value returns,
  * `masked` the form a block trailer stores. */
case class Crc32cUnit(bytes: Int) extends Component {
  val io = new Bundle {
    val clear = in Bool()
    val input = slave Flow (ByteBeat(bytes))
    val crc = out UInt (32 bits)
    val masked = out UInt (32 bits)
  }
  private val ones = B(BigInt("ffffffff", 16), 32 bits)
  val state = Reg(Bits(32 bits)) init (ones)
  private val dataMap = Crc32c.linear(bytes)._2
  val aligned = (io.input.data << ((U(bytes) - io.input.count.resize(log2Up(bytes + 1) + 1)) << 3)).resize(8 * bytes)
  val fromData = Cat((0 until 32).map(i => Crc32c.xorOf(aligned, dataMap(i)))) // Cat: the first element is bit 0
  val fromState = Vec((0 to bytes).map(k => Crc32c.advance(state, k)))
  val after = fromState(io.input.count.resize(log2Up(bytes + 1))) ^ fromData
  when(io.input.valid) { state := after }
  when(io.clear) { state := ones }
  io.crc := (~state).asUInt
  io.masked := Crc32c.mask(io.crc)
}
