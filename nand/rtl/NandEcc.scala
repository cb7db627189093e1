package nand

import spinal.core._

/** Extended Hamming (SEC-DED) code over one 512-byte sector, 15 bits stored in 2 spare bytes.
  *
  * Data bit b of byte i of the sector has position pos = 8193 + 8*i + b (8193..12288): no position is
  * a power of two, so a single flipped check bit (syndrome 2^k) can never be mistaken for a data bit.
  * C (14 bits) is the XOR of the positions of the data bits that are 1, P the parity of data and C.
  * The stored word is {0, P, C} XOR K with K = {0, P, C}(all FFh) XOR FFFFh, so an erased sector
  * (data and code all FFh) decodes as clean. Decode: syndrome = C' XOR C(read), parity mismatch:
  *  - syndrome 0, parity ok: clean;  parity bad and syndrome 0 / 2^k: a check bit flipped (1 corrected)
  *  - parity bad and syndrome in 8193..12288: data bit syndrome-8193 flipped (corrected in the buffer)
  *  - anything else: uncorrectable (2 or more errors). */
object NandEcc {
  val sectorBytes = 512
  val posBase = 8193

  private def swC(data: Seq[Int]): Int = {
    var c = 0
    for ((byte, i) <- data.zipWithIndex; b <- 0 until 8 if ((byte >> b) & 1) == 1) c ^= posBase + 8 * i + b
    c
  }
  private def parity(x: Int): Int = Integer.bitCount(x) & 1
  /** Software model (also used to build K). */
  def word(data: Seq[Int]): Int = {
    val c = swC(data)
    val pd = data.map(parity).foldLeft(0)(_ ^ _)
    ((pd ^ parity(c)) << 14) | c
  }
  val K: Int = word(Seq.fill(sectorBytes)(0xFF)) ^ 0xFFFF

  /** Running C and data parity after one more byte at index `idx` (0..511) of the sector. */
  def step(c: Bits, pd: Bool, byte: Bits, idx: UInt): (Bits, Bool) = {
    val base = U(posBase, 14 bits) + (idx.resize(14) |<< 3)
    var x = c
    for (b <- 0 until 8) x = x ^ Mux(byte(b), (base + b).asBits, B(0, 14 bits))
    (x, pd ^ byte.xorR)
  }
  /** Word to store (before the K mask is applied) from the final running C and data parity. */
  def finish(c: Bits, pd: Bool): Bits = (B"0" ## (pd ^ c.xorR) ## c) ^ B(K, 16 bits)
}
