package nand

import spinal.core._
import spinal.lib._

/** GF(2^m) arithmetic at generation time (tables of powers and logs of the primitive element a). */
case class Gf(m: Int, prim: Int) {
  val n: Int = (1 << m) - 1
  val exp: Array[Int] = new Array[Int](2 * n)
  val log: Array[Int] = new Array[Int](n + 1)
  locally {
    var x = 1
    for (i <- 0 until n) {
      exp(i) = x; exp(i + n) = x; log(x) = i
      x <<= 1
      if ((x >> m) != 0) x ^= prim
    }
    require(x == 1 && exp.take(n).toSet.size == n, s"0x${prim.toHexString} is not primitive for GF(2^$m)")
  }
  def mul(a: Int, b: Int): Int = if (a == 0 || b == 0) 0 else exp(log(a) + log(b))
  /** a^k for any integer k (negative too). */
  def pow(k: Int): Int = exp(((k % n) + n) % n)
}

/** Parameters of the binary BCH code over one sector, shortened from length 2^m - 1.
  *
  * Bit order (the same in the Python reference, lsmc.model.bch): the sector is fed MSB first,
  * byte 0 first; data bit q (q = 8 * byte + 7 - bit) is the coefficient of x^(r + dataBits - 1 - q),
  * check bit u (u = 8 * eccByte + 7 - bit, u < r) the coefficient of x^(r - 1 - u). The check bits are
  * the remainder of data(x) * x^r by g(x), stored XOR K with K = check(all FFh) XOR all ones, so an
  * erased sector (data and check bytes all FFh) is a valid codeword. Pad bits after r are stored as 1.
  *
  * @param t         bits corrected per sector
  * @param dataBytes sector size (data bytes per codeword)
  * @param chienPar  positions the Chien search tests per cycle */
case class BchParams(t: Int = 8, dataBytes: Int = 512, m: Int = 13, prim: Int = 0x201B, chienPar: Int = 32) {
  val gf: Gf = Gf(m, prim)
  val dataBits: Int = 8 * dataBytes
  /** Generator polynomial: product of the distinct minimal polynomials of a^1, a^3, ..., a^(2t-1);
    * bit i = coefficient of x^i. */
  val gen: BigInt = {
    val seen = scala.collection.mutable.Set[Int]()
    var g = BigInt(1)
    for (i <- 1 until 2 * t by 2 if !seen.contains(i % gf.n)) {
      // minimal polynomial over the cyclotomic coset of i: prod (x + a^j), coefficients in GF(2^m)
      var coset = List[Int](); var j = i % gf.n
      while (!coset.contains(j)) { coset ::= j; j = (2 * j) % gf.n }
      seen ++= coset
      var poly = Array(1) // coefficients, index = degree
      for (e <- coset) {
        val root = gf.pow(e)
        val next = new Array[Int](poly.length + 1)
        for (d <- poly.indices) { next(d + 1) ^= poly(d); next(d) ^= gf.mul(poly(d), root) }
        poly = next
      }
      require(poly.forall(c => c == 0 || c == 1), "minimal polynomial not binary")
      val mp = poly.zipWithIndex.foldLeft(BigInt(0)) { case (acc, (c, d)) => if (c == 1) acc.setBit(d) else acc }
      g = clmul(g, mp)
    }
    g
  }
  private def clmul(a: BigInt, b: BigInt): BigInt =
    (0 until b.bitLength).foldLeft(BigInt(0))((acc, i) => if (b.testBit(i)) acc ^ (a << i) else acc)
  /** Check bits per sector (degree of g) and the bytes that hold them in the spare area. */
  val r: Int = gen.bitLength - 1
  val eccBytes: Int = (r + 7) / 8
  val codeBits: Int = dataBits + r
  require(codeBits <= gf.n, s"sector of $dataBytes bytes + $r check bits does not fit GF(2^$m)")
  val chienCycles: Int = (codeBits + chienPar - 1) / chienPar
  /** Cycles of the Chien search: LOAD (the locator into the term registers), one per chunk of
    * `chienPar` positions, and DRAIN (the last chunk through the pipeline's zero-test, count and record
    * stages). */
  val chienTotalCycles: Int = 1 + chienCycles + 3
  /** Worst-case cycles per codeword of the decoder with the command layer's buffer fixer: start 2,
    * Berlekamp-Massey 3 per iteration over 2t, Chien search (chienTotalCycles), check 1, t data-bit
    * corrections of 4 cycles (read, wait, write, next), done 2. The one source of ECC_DEC.WORST_CYCLES. */
  val worstCycles: Int = 2 + 6 * t + chienTotalCycles + 1 + 4 * t + 2

  /** Remainder of the bits (MSB first) by g, continuing from `rem`. */
  def remSw(rem: BigInt, bytes: Seq[Int]): BigInt = {
    val low = gen.clearBit(r); var x = rem
    for (byte <- bytes; b <- 7 to 0 by -1) {
      val fb = ((byte >> b) & 1) ^ (if (x.testBit(r - 1)) 1 else 0)
      x = (x << 1).clearBit(r)
      if (fb == 1) x ^= low
    }
    x
  }
  /** Stored check bytes K-masked: K = check(all FFh) XOR ones, as a (8 * eccBytes)-bit vector, byte 0 in the MSBs. */
  val eccVecBits: Int = 8 * eccBytes
  val kMask: BigInt = (remSw(0, Seq.fill(dataBytes)(0xFF)) << (eccVecBits - r)) ^ ((BigInt(1) << eccVecBits) - 1)

  // ----------------------------------------------------------------- hardware building blocks
  // Every GF(2) function here is linear (or bilinear for `mul`): each output bit is the XOR of a
  // constant selection of the input bits, computed at elaboration and written as one `^(in & mask)`,
  // so the logic depth after synthesis is log(inputs), not the length of the unrolled LFSR or multiply
  // loop (timing, docs/boards.md), and the Verilog stays one line per output bit (a tree of named
  // 2-input XORs made the SoC's Verilog 7 MB and its Verilator build minutes longer).
  /** Division step: the remainder after 8 more message bits per byte (bytes in order, each MSB first),
    * one XOR matrix over all of them: two bytes per clock cost one matrix's depth, not two in series. */
  def remStep(rem: Bits, bytes: Bits*): Bits = {
    // Symbolic LFSR: bit i of the state as the set of inputs it XORs (0..r-1 rem, r + 8n + b bit b of
    // byte n).
    val low = gen.clearBit(r)
    def xor(a: Set[Int], b: Set[Int]): Set[Int] = (a diff b) union (b diff a)
    var x: IndexedSeq[Set[Int]] = (0 until r).map(i => Set(i))
    for (n <- bytes.indices; b <- 7 to 0 by -1) {
      val fb = xor(x(r - 1), Set(r + 8 * n + b))
      x = (0 until r).map(i => xor(if (i == 0) Set.empty[Int] else x(i - 1), if (low.testBit(i)) fb else Set.empty[Int]))
    }
    xorMatrix(r, bytes.reverse.reduce(_ ## _) ## rem, i => x(i).toSeq)
  }
  /** sum_k a_k * c_k for constants c_k (one XOR matrix over all the a_k's bits). */
  def constMulSum(terms: Seq[(Bits, Int)]): Bits = {
    val in = terms.map(_._1).reverse.reduce(_ ## _) // term n's bit k is bit n * m + k
    xorMatrix(m, in, i => terms.zipWithIndex.flatMap { case ((_, c), n) =>
      (0 until m).filter(k => ((gf.mul(c, 1 << k) >> i) & 1) == 1).map(n * m + _) })
  }
  /** a * c for a constant c (XOR matrix). */
  def constMul(a: Bits, c: Int): Bits = constMulSum(Seq(a -> c))
  /** a * b, both variable: sum over k of (a * x^k) AND b_k, each a * x^k straight from a. */
  def mul(a: Bits, b: Bits): Bits =
    (0 until m).map(k => constMul(a, 1 << k) & B(m bits, default -> b(k))).reduceBalancedTree(_ ^ _)
  /** Syndrome S_j = s(a^j) of a remainder s (r bits). */
  def syndrome(s: Bits, j: Int): Bits =
    xorMatrix(m, s, i => (0 until r).filter(k => ((gf.pow(j * k) >> i) & 1) == 1))
  /** Bits whose bit i is the XOR of the bits `deps(i)` of `in`. */
  def xorMatrix(width: Int, in: Bits, deps: Int => Seq[Int]): Bits = {
    val o = Bits(width bits)
    for (i <- 0 until width) {
      val mask = deps(i).foldLeft(BigInt(0))((acc, j) => acc.setBit(j))
      o(i) := (if (mask == 0) False else (in & B(mask, in.getWidth bits)).xorR)
    }
    o
  }
}

/** BCH decoder for one codeword at a time: syndromes from the remainder of the received word by g(x),
  * inversionless Berlekamp-Massey (2t iterations of 3 cycles), Chien search testing `chienPar`
  * positions per cycle. Error positions (polynomial degrees, see BchParams) come out one per accepted
  * beat of `fix` once the search has confirmed the locator (as many roots in the shortened code as its
  * degree, at most t); then `done` pulses with the result. A zero remainder is done in 2 cycles.
  *
  * Timing (the SoC clock at 100 MHz on an ECP5): the discrepancy reads the syndromes from a window
  * register shifted once per iteration (win(i) = S_(iter+1-i)) instead of a mux indexed by iter - i,
  * and its t + 1 products are registered before their sum (BM_D, BM_S), so no cycle holds more than one
  * GF multiply; the Chien search is a 4-stage pipeline (evaluate chienPar positions; test each sum for
  * zero; prefix-count the hits; record each hit in its slot of `found`), so no stage carries a
  * chienPar-long ripple of hit counts or both the wide XOR and its zero test. LOAD puts the locator
  * into the term registers, DRAIN lets the last chunk through (chienTotalCycles). */
class BchDecoder(b: BchParams) extends Component {
  import b.{m, t}
  val posBits = log2Up(b.codeBits)
  val io = new Bundle {
    val start = slave Flow (Bits(b.r bits)) // remainder of the received codeword (data and check bits)
    val fix = master Stream (UInt(posBits bits))
    val done = out Bool()
    val uncorrectable = out Bool()
    val count = out UInt (log2Up(t + 1) bits)
    val idle = out Bool()
  }
  object S extends SpinalEnum { val IDLE, SYN, BM_D, BM_S, BM_U, LOAD, CHIEN, DRAIN, CHECK, FIX, DONE = newElement() }
  val state = RegInit(S.IDLE)
  io.idle := state === S.IDLE
  val rem = Reg(Bits(b.r bits))
  val synQ = Vec(Reg(Bits(m bits)), 2 * t - 1) // S_(iter+2) .. S_2t, shifted once per BM iteration
  val win = Vec(Reg(Bits(m bits)), t + 1) // win(i) = S_(iter+1-i), 0 for iter+1-i < 1
  val lam = Vec(Reg(Bits(m bits)), t + 1)
  val bb = Vec(Reg(Bits(m bits)), t + 1)
  val gamma = Reg(Bits(m bits))
  val delta = Reg(Bits(m bits))
  val prodD = Vec(Reg(Bits(m bits)), t + 1) // lam_i * S_(iter+1-i), summed into delta a cycle later
  val L = Reg(UInt(log2Up(2 * t + 2) bits))
  val iter = Reg(UInt(log2Up(2 * t + 1) bits))
  val chienPos = Reg(UInt(posBits + 1 bits))
  val lastChunk = Reg(Bool())
  val terms = Vec(Reg(Bits(m bits)), t + 1)
  val found = Vec(Reg(UInt(posBits bits)), t)
  val nFound = Reg(UInt(log2Up(b.codeBits + 1) bits))
  val fixIdx = Reg(UInt(log2Up(t + 1) bits))
  val unc = Reg(Bool())

  io.fix.valid := False
  io.fix.payload := found(fixIdx.resize(log2Up(t)))
  io.done := state === S.DONE
  io.uncorrectable := unc
  io.count := Mux(unc, U(0), nFound.resize(log2Up(t + 1)))

  val lamDeg = UInt(log2Up(t + 1) bits)
  lamDeg := 0
  for (i <- 1 to t) when(lam(i) =/= 0) { lamDeg := i }

  // ---------------------------------------------------------------- Chien search pipeline
  // Stage 0 (state CHIEN): sums of positions chienPos + i, i < chienPar: sum_k terms(k) * a^(-i*k), with
  // terms(k) = lam_k * a^(-k * chienPos). Stage 1: a hit where the sum is 0 (positions past the
  // shortened code only in the last chunk).
  val tailValid = b.codeBits - (b.chienCycles - 1) * b.chienPar // positions of the last chunk inside the code
  val v0 = RegNext(state === S.CHIEN) init (False)
  val sums0 = Vec(Reg(Bits(m bits)), b.chienPar)
  val pos0 = Reg(UInt(posBits + 1 bits))
  val last0 = Reg(Bool())
  val v1 = RegNext(v0) init (False)
  val hits1 = Reg(Bits(b.chienPar bits))
  val pos1 = RegNext(pos0)
  for (i <- 0 until b.chienPar) hits1(i) := sums0(i) === 0 && (if (i < tailValid) True else !last0)
  // Stage 2: inclusive prefix counts of the hits (Sklansky tree, log2(chienPar) adder levels).
  val cntBits = log2Up(b.chienPar + 1)
  val v2 = RegNext(v1) init (False)
  val hits2 = RegNext(hits1)
  val pos2 = RegNext(pos1)
  val incl2 = Vec(Reg(UInt(cntBits bits)), b.chienPar)
  locally {
    var p: IndexedSeq[UInt] = (0 until b.chienPar).map(i => hits1(i).asUInt.resize(cntBits))
    var d = 1
    while (d < b.chienPar) {
      val q = p
      p = (0 until b.chienPar).map(i => if ((i / d) % 2 == 1) q(i) + q((i / d) * d - 1) else q(i))
      d *= 2
    }
    for (i <- 0 until b.chienPar) incl2(i) := p(i)
  }
  // Stage 3: the hit whose inclusive count is s + 1 - nFound goes to slot s (slots beyond t are
  // dropped; nFound still counts them, which makes CHECK reject the locator).
  when(v2) {
    for (s <- 0 until t) {
      val want = U(s + 1, nFound.getWidth + 1 bits) - nFound.resize(nFound.getWidth + 1)
      val wantOk = want(want.high downto cntBits) === 0 // nFound <= s + 1
      val sel = (0 until b.chienPar).map(i => hits2(i) && wantOk && want(cntBits - 1 downto 0) === incl2(i))
      val idxBits = log2Up(b.chienPar) max 1
      val idx = sel.zipWithIndex.map { case (e, i) => Mux(e, U(i, idxBits bits), U(0, idxBits bits)) }.reduceBalancedTree(_ | _)
      val pos = if (isPow2(b.chienPar)) (pos2 | idx.resize(pos2.getWidth)) else pos2 + idx
      when(sel.reduceBalancedTree(_ || _)) { found(s) := pos.resize(posBits) }
    }
    nFound := nFound + incl2(b.chienPar - 1).resize(nFound.getWidth)
  }

  switch(state) {
    is(S.IDLE) {
      when(io.start.valid) { rem := io.start.payload; state := S.SYN }
    }
    is(S.SYN) {
      win(0) := b.syndrome(rem, 1)
      for (i <- 1 to t) win(i) := 0
      for (j <- 0 until 2 * t - 1) synQ(j) := b.syndrome(rem, j + 2)
      for (i <- 0 to t) { lam(i) := B(if (i == 0) 1 else 0, m bits); bb(i) := B(if (i == 0) 1 else 0, m bits) }
      gamma := B(1, m bits); L := 0; iter := 0; unc := False; nFound := 0; fixIdx := 0
      state := Mux(rem === 0, S.DONE, S.BM_D)
    }
    is(S.BM_D) { // discrepancy of iteration `iter`: sum lam_i * S_(iter+1-i), the products first
      for (i <- 0 to t) prodD(i) := b.mul(lam(i), win(i))
      state := S.BM_S
    }
    is(S.BM_S) {
      delta := prodD.reduceBalancedTree(_ ^ _)
      state := S.BM_U
    }
    is(S.BM_U) { // lam' = gamma * lam + delta * x * B
      for (i <- 0 to t) lam(i) := b.mul(gamma, lam(i)) ^ (if (i == 0) B(0, m bits) else b.mul(delta, bb(i - 1)))
      when(delta =/= 0 && (L << 1) <= iter.resize(L.getWidth + 1)) {
        for (i <- 0 to t) bb(i) := lam(i)
        L := (iter.resize(L.getWidth) + 1 - L)
        gamma := delta
      } otherwise {
        bb(0) := 0
        for (i <- 1 to t) bb(i) := bb(i - 1)
      }
      win(0) := synQ(0)
      for (i <- 1 to t) win(i) := win(i - 1)
      for (j <- 0 until 2 * t - 2) synQ(j) := synQ(j + 1)
      synQ(2 * t - 2) := 0
      iter := iter + 1
      state := Mux(iter === 2 * t - 1, S.LOAD, S.BM_D)
    }
    is(S.LOAD) {
      for (k <- 0 to t) terms(k) := lam(k)
      chienPos := 0
      lastChunk := Bool(b.chienCycles == 1)
      state := S.CHIEN
    }
    is(S.CHIEN) {
      for (i <- 0 until b.chienPar) sums0(i) := b.constMulSum((0 to t).map(k => terms(k) -> b.gf.pow(-i * k)))
      pos0 := chienPos
      last0 := lastChunk
      for (k <- 0 to t) terms(k) := b.constMul(terms(k), b.gf.pow(-b.chienPar * k))
      chienPos := chienPos + b.chienPar
      lastChunk := (if (b.chienCycles >= 2) chienPos === (b.chienCycles - 2) * b.chienPar else False)
      when(lastChunk) { state := S.DRAIN }
    }
    is(S.DRAIN) { // v0, v1: the last chunk in stages 1 and 2; then stage 3 records it
      when(!v0 && !v1) { state := S.CHECK }
    }
    is(S.CHECK) {
      val ok = L <= t && nFound === L.resize(nFound.getWidth) && lam(0) =/= 0 && lamDeg.resize(L.getWidth) === L
      unc := !ok
      state := Mux(ok, S.FIX, S.DONE)
    }
    is(S.FIX) {
      io.fix.valid := fixIdx.resize(nFound.getWidth) < nFound
      when(fixIdx.resize(nFound.getWidth) >= nFound) { state := S.DONE }
      when(io.fix.fire) { fixIdx := fixIdx + 1 }
    }
    is(S.DONE) { state := S.IDLE }
  }
}
