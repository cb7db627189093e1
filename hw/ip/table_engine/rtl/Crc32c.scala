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

  /** One byte into the reflected CRC register, bit by bit (a linear XOR network once flattened). */
  def stepByte(state: Bits, byte: Bits): Bits = {
    var c = state ^ byte.resize(32)
    for (_ <- 0 until 8) c = (c |>> 1) ^ Mux(c(0), B(Poly, 32 bits), B(0, 32 bits))
    c
  }

  def mask(crc: UInt): UInt = crc.rotateRight(15) + U(MaskDelta, 32 bits)
}

/** CRC32C of the bytes given since `clear`, `bytes` per clock: each beat's first `count` bytes are
  * folded in by an unrolled chain of byte steps and the step after `count` bytes is kept. `crc` is the
  * value LevelDB's crc32c::Value returns, `masked` the form a block trailer stores. */
case class Crc32cUnit(bytes: Int) extends Component {
  val io = new Bundle {
    val clear = in Bool()
    val input = slave Flow (ByteBeat(bytes))
    val crc = out UInt (32 bits)
    val masked = out UInt (32 bits)
  }
  private val ones = B(BigInt("ffffffff", 16), 32 bits)
  val state = Reg(Bits(32 bits)) init (ones)
  val steps = (0 until bytes).scanLeft(state)((s, i) => Crc32c.stepByte(s, io.input.data(8 * i, 8 bits)))
  val after = Vec(steps.map(_.asUInt))
  when(io.input.valid) { state := after(io.input.count.resize(log2Up(bytes + 1))).asBits }
  when(io.clear) { state := ones }
  io.crc := (~state).asUInt
  io.masked := Crc32c.mask(io.crc)
}
