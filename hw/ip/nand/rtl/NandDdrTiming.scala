package nand

import spinal.core._
import spinal.lib._

/** NV-DDR settings (cycles of the controller clock), from DDR_CFG; the other ONFI times reuse the SDR
  * timing registers with the NV-DDR meaning (hw/ip/nand/doc/nand.md). */
case class NandDdrCfg() extends Bundle {
  val enable = Bool()
  val ckDiv = UInt(4 bits) // CLK period in controller cycles (n >= 2)
  val tCAD, tWRCK, tDQSHZ, tCEH = UInt(8 bits)
  val slot = UInt(6 bits) // read capture: half-cycle offset of a DQS pair's first sample (training)
}

/** Pin values for the two halves of one controller cycle (the D1/D2 inputs of the output DDR flops).
  * DQS leaves through a DDR flop on the 90-degree clock, so its edges fall a quarter cycle after the
  * half-cycle boundaries of the other pins (the DQ eye is centred on them). Bit 0 = first half. */
case class NandDdrDrive(targets: Int) extends Bundle {
  val clk, cle, ale, wr, dqOe, dqs, dqsOe = Bits(2 bits)
  val dq = Vec(Bits(8 bits), 2)
  val ce_n = Vec(Bits(targets bits), 2)
}

/** The PHY's two DQ samples of one controller cycle: q1 at the rising clock edge, q2 at the falling one
  * (an IDDR on the controller clock behind a trained input delay; hw/ip/nand/doc/nand.md, "PHY and its simulation
  * model"). The layer picks each DQS pair's two bytes from this stream. */
case class NandDdrCapture() extends Bundle {
  val q1, q2 = Bits(8 bits)
}

/** NV-DDR time sequence layer (ONFI 2.x source-synchronous): runs CLK with a period of n controller
  * cycles and, per CLK period, one bus cycle (idle, command, address, data in, data out) decided a period
  * ahead; CLE/ALE/DQ/W/R#/CE# change at the falling CLK edge before the rising edge that latches them
  * (setup and hold = half a period). Data to the flash goes out on DQS (preamble 1.5 tCK+, first edge
  * ~1 tCK after the data clock, DQ centred between DQS edges, postamble 0.5 tCK); data from the flash
  * comes back as the PHY's DQ samples at both clock edges, two of them per DQS period picked by the
  * trained slot. Same micro-op stream as NandTimingLayer. n >= 1: at n = 1
  * (CLK = the controller clock, NV-DDR mode 5 at 100 MHz) two bytes move per controller cycle. */
class NandDdrTiming(p: NandParams) extends Component {
  val io = new Bundle {
    val uop = slave Stream (Uop(p))
    val dout = slave Stream (BytePair())
    val t = in(NandTimingRegs())
    val cfg = in(NandDdrCfg())
    val drive = out(NandDdrDrive(p.targets))
    val cap = slave Flow (NandDdrCapture()) // every cycle's two DQ samples (valid: the PHY delivers them)
    val pairSplit = out Bool() // the last non-array read burst had a pair with two different bytes
    val rx = master Flow (BytePair())
    val rxPending = out Bool()
    val rb_n = in Bits (p.targets bits)
    val idle = out Bool()
    val timeout = out Bool()
    val dataCycle = out Bool()
    val underrun = out Bool()
    val quiet = out Bool() // NV-DDR off and settled: no register changes at the next edge (SimClockGate)
  }
  import UopKind._
  val n = io.cfg.ckDiv
  val t = io.t

  private def ctr() = Reg(UInt(8 bits)) init (255)
  val sinceCA, sinceOut, sinceWrHigh, sinceWrLow, sinceCe, sinceCeHigh, sinceRb = ctr()
  val counters = List(sinceCA, sinceOut, sinceWrHigh, sinceWrLow, sinceCe, sinceCeHigh, sinceRb)
  for (c <- counters) when(c =/= 255) { c := c + 1 }
  // Configuration as registered per-mode constants (the registers change only between commands; these
  // follow a cycle later): no configuration register reaches a decision through arithmetic (on the ECP5
  // CK_DIV -> `c + n >= need` -> the sequencer's enables was the NAND DMA path's critical path).
  // ok(c, need) = c + n >= need, c counted at the decision and the edge n cycles later: c >= need - n.
  private def lessN(need: UInt): UInt = RegNext(Mux(need.resize(9) > n.resize(9), need - n.resize(8), U(0, 8 bits)))
  private def ok(c: UInt, lim: UInt): Bool = c >= lim
  private def atLeast(c: UInt, need: UInt): Bool = c.resize(10) >= need.resize(10)
  val limCAD = lessN(io.cfg.tCAD)
  val limADL = lessN(t.tADL)
  val limRHW = lessN(t.tRHW)
  val limWRCK = lessN(io.cfg.tWRCK)
  val limRR = lessN(t.tRR)
  val limWHR = lessN(t.tWHR)
  val limCCS = lessN(t.tCCS)
  val ccsLonger = RegNext(t.tCCS > t.tWHR)
  val needWB = RegNext(t.tWB.resize(9) + 3 + n.resize(9))
  val nLess1 = RegNext(n.resize(6) - 1) // the POST wait; also the last phase of a DQS period
  val needCS = RegNext(t.tCS)
  val needDQSHZ = RegNext(io.cfg.tDQSHZ)
  val needCEH = RegNext(io.cfg.tCEH)
  val rbLimit = RegNext(t.timeout)

  // One bus cycle per CLK period: what is on the pins from the falling edge on (latched at the next rise).
  case class BusCycle() extends Bundle {
    val cle, ale, wr, dqOe = Bool()
    val dq = Bits(8 bits)
    val ce_n = Bits(p.targets bits)
    val ca, dataOut = Bool() // this period's rise latches a command/address; is a data output cycle
  }
  def idleCycle(from: BusCycle): BusCycle = {
    val b = cloneOf(from)
    b.wr := from.wr; b.dqOe := from.dqOe; b.dq := from.dq; b.ce_n := from.ce_n
    b.cle := False; b.ale := False; b.ca := False; b.dataOut := False
    b
  }
  val resetCycle = BusCycle()
  resetCycle.cle := False; resetCycle.ale := False; resetCycle.wr := True; resetCycle.dqOe := False; resetCycle.dq := 0
  resetCycle.ce_n.setAll(); resetCycle.ca := False; resetCycle.dataOut := False
  val cur = Reg(BusCycle()) init (resetCycle)
  val nxt = Reg(BusCycle()) init (resetCycle)
  val hs = Reg(UInt(5 bits)) init (0) // half-slot of the current CLK period at the start of this cycle (even)
  val periodStart = hs === 0
  when(io.cfg.enable) { hs := Mux(hs + 2 >= (n << 1).resize(5), U(0, 5 bits), hs + 2) } otherwise { hs := 0 }

  // ------------------------------------------------------------------ data to the flash: DQS burst engine
  // Beats of one or two bytes queue in `fifo`; `stage` holds the next bytes (up to 6) so that the two
  // half-slots of a cycle can each take one (n = 1) without waiting for the FIFO's next head.
  val fifo = StreamFifo(BytePair(), 16)
  fifo.io.push << io.dout
  val stageBytes = 6
  val stage = Vec(Reg(Bits(8 bits)), stageBytes)
  val stCnt = Reg(UInt(3 bits)) init (0)
  val queued = Reg(UInt(7 bits)) init (0) // bytes in fifo + stage
  object BState extends SpinalEnum { val OFF, PRE, RUN, POST = newElement() }
  val bState = RegInit(BState.OFF)
  val bWait = Reg(UInt(6 bits))
  val bPhase = Reg(UInt(4 bits))
  val bIdx = Reg(UInt(16 bits))
  val bTotal = Reg(UInt(16 bits))
  val bDouble = Reg(Bool())
  val bDq = Reg(Bits(8 bits)) init (0)
  val bDqs = RegInit(False)
  val underrun = RegInit(False)
  io.underrun := underrun
  val half = RegNext(n >> 1) // (a configuration constant, registered like the limits above)
  // Advance the engine by one half-slot: returns (dqsOe, dqs, dq driven) for that half.
  case class BOut() extends Bundle { val oe, dqs = Bool(); val dq = Bits(8 bits) }
  def bStep(st: BState.C, wait: UInt, ph: UInt, idx: UInt, dq: Bits, dqs: Bool, taken: UInt):
      (BState.C, UInt, UInt, UInt, Bits, Bool, UInt, BOut) = {
    val nSt = cloneOf(st); nSt := st
    val nWait = cloneOf(wait); nWait := wait
    val nPh = cloneOf(ph); nPh := ph
    val nIdx = cloneOf(idx); nIdx := idx
    val nDq = cloneOf(dq); nDq := dq
    val nDqs = cloneOf(dqs); nDqs := dqs
    val take = UInt(2 bits); take := taken
    switch(st) {
      is(BState.PRE) {
        nDqs := False
        when(wait === 0) { nSt := BState.RUN; nPh := 0; nIdx := 0 } otherwise { nWait := wait - 1 }
      }
      is(BState.RUN) {
        when(idx === bTotal) { nSt := BState.POST; nWait := nLess1 }
      }
      is(BState.POST) {
        when(wait === 0) { nSt := BState.OFF } otherwise { nWait := wait - 1 }
      }
      default {}
    }
    // RUN half-slot: the byte changes at phase 0, DQS toggles at phase n/2 (+ the quarter of the 90-degree flop).
    val running = st === BState.RUN && idx =/= bTotal || (st === BState.PRE && wait === 0)
    val rPh = Mux(st === BState.RUN, ph, U(0, 4 bits))
    val rIdx = Mux(st === BState.RUN, idx, U(0, 16 bits))
    when(running) {
      when(rPh === 0) {
        when(!bDouble || !rIdx(0)) {
          take := taken + 1
          nDq := Vec(stage.take(4))(taken) // taken < 2 here: the half-slots of one cycle
        }
      }
      when(rPh === half.resize(4)) { nDqs := !rIdx(0) }
      when(rPh === nLess1.resize(4)) { nPh := 0; nIdx := rIdx + 1 } otherwise { nPh := rPh + 1; nIdx := rIdx }
    }
    val o = BOut()
    o.oe := nSt =/= BState.OFF || st =/= BState.OFF
    o.dqs := nDqs
    o.dq := nDq
    (nSt, nWait, nPh, nIdx, nDq, nDqs, take, o)
  }
  // A burst starts in the half-slot of the decision (first half of a CLK period): DQS low from there
  // (preamble 4n-1 halves), first DQ byte at half 4n-1-n/2, its DQS edge n/2 halves later.
  val bStart = False
  val bStartWait = RegNext(((n.resize(6) << 2) - 1 - half.resize(6)).resize(6))
  // Timing (ECP5): the two half-slots run on registers only; the sequencer's bStart picks between them and
  // a second pair started from PRE (also registers and config only) at the end, instead of feeding the
  // chain's inputs. A burst starts only with the engine OFF (a DOUT ends only once it is OFF again), where
  // both pairs take no byte: `take2` comes from the running pair alone, off the sequencer's path.
  val (r1, rw1, rp1, ri1, rd1, rq1, rTake1, ro1) = bStep(bState, bWait, bPhase, bIdx, bDq, bDqs, U(0, 2 bits))
  val (r2, rw2, rp2, ri2, rd2, rq2, take2, ro2) = bStep(r1, rw1, rp1, ri1, rd1, rq1, rTake1)
  val (n1, nw1, np1, ni1, nd1, nq1, nTake1, no1) = bStep(BState.PRE(), bStartWait, U(0, 4 bits), U(0, 16 bits),
    bDq, False, U(0, 2 bits))
  val (n2, nw2, np2, ni2, nd2, nq2, _, no2) = bStep(n1, nw1, np1, ni1, nd1, nq1, nTake1)
  val o1 = Mux(bStart, no1, ro1)
  val o2 = Mux(bStart, no2, ro2)
  bState := Mux(bStart, n2, r2); bWait := Mux(bStart, nw2, rw2); bPhase := Mux(bStart, np2, rp2)
  bIdx := Mux(bStart, ni2, ri2); bDq := Mux(bStart, nd2, rd2); bDqs := Mux(bStart, nq2, rq2)
  // Stage bookkeeping: drop the bytes taken, append the FIFO head when it fits.
  when(take2.resize(3) > stCnt) { underrun := True }
  val taken = Mux(take2.resize(3) > stCnt, stCnt, take2.resize(3))
  val left = stCnt - taken
  val headBytes = Mux(fifo.io.pop.two, U(2, 3 bits), U(1, 3 bits))
  // The head moves in when it fits beside the bytes held at the start of the cycle, not those left after
  // this cycle's takes: the FIFO's pop is then off the half-slot chain. Two more stage bytes (6, was 4
  // counted after the takes, which take at most 2) keep the stage at least as full as before in every
  // cycle, so the pins see the same bytes at the same time and no new underrun can occur.
  fifo.io.pop.ready := stCnt.resize(4) + headBytes <= stageBytes
  val nextStage = Vec(Bits(8 bits), stageBytes)
  for (i <- 0 until stageBytes) {
    nextStage(i) := stage(i)
    for (k <- 1 to 2 if i + k < stageBytes) when(taken === k) { nextStage(i) := stage(i + k) }
    when(fifo.io.pop.fire && left === i) { nextStage(i) := fifo.io.pop.b0 }
    if (i > 0) when(fifo.io.pop.fire && fifo.io.pop.two && left === i - 1) { nextStage(i) := fifo.io.pop.b1 }
  }
  stage := nextStage
  stCnt := left + Mux(fifo.io.pop.fire, headBytes, U(0, 3 bits))
  queued := queued + Mux(io.dout.fire, Mux(io.dout.two, U(2, 7 bits), U(1, 7 bits)), U(0, 7 bits)) - taken.resize(7)

  // ------------------------------------------------------------------ data from the flash: captured pairs
  val outDouble = Reg(Bool())
  val outTotal = Reg(UInt(16 bits)) // bytes the command layer wants
  val outPairs = Reg(UInt(16 bits)) init (0) // DQS periods requested from the flash and not yet captured
  val capIdx = Reg(UInt(17 bits)) // index of the next captured byte (edge count)
  // The next pair's tests (is q1 wanted, is q2 a second byte) registered from the values after this cycle
  // (getAheadValue: the D inputs; a DIN start, a pair taken, or as they were): a captured pair's validity is a
  // register and a gate, not a 16-bit compare (on the ECP5: capIdx -> that compare -> the receive enables).
  val outDoubleNext = outDouble.getAheadValue()
  val outTotalNext = outTotal.getAheadValue()
  val capIdxNext = capIdx.getAheadValue()
  val wantQ1 = RegNext(Mux(outDoubleNext, (capIdxNext >> 1).resize(16) < outTotalNext,
    capIdxNext.resize(16) < outTotalNext))
  val wantQ2 = RegNext(!outDoubleNext && (capIdxNext + 1).resize(16) < outTotalNext)
  val keepIdx = Reg(UInt(16 bits)) // bytes delivered
  // The PHY samples DQ at both clock edges of every cycle; the pair the flash sends for the data output
  // period latched at a period start (capIssued) is the sample `slot` half-cycles after the next cycle's
  // rising-edge sample (its DQS rising-edge byte) and the one n half-cycles later (falling-edge byte).
  // Marks of the samples to take, one bit per half-cycle, shift two per cycle; bits 0/1 = this cycle.
  val markW = 64 + 16
  val firstMark, secondMark = Reg(Bits(markW bits)) init (0)
  val capIssued = False
  firstMark := (firstMark |>> 2) | Mux(capIssued, UIntToOh(io.cfg.slot.resize(7 bits), markW), B(0, markW bits))
  val slotN = RegNext(io.cfg.slot.resize(7 bits) + n.resize(7 bits))
  secondMark := (secondMark |>> 2) | Mux(capIssued, UIntToOh(slotN, markW), B(0, markW bits))
  when(!io.cfg.enable) { firstMark := 0; secondMark := 0 }
  val held = Reg(Bits(8 bits)) // the first byte of a pair whose second byte comes in a later cycle
  when(firstMark(1)) { held := io.cap.q2 } elsewhen (firstMark(0)) { held := io.cap.q1 }
  val pairDue = secondMark(0) || secondMark(1)
  val pairValid = pairDue && io.cap.valid
  val pq1 = Mux(firstMark(0) && secondMark(1), io.cap.q1, held)
  val pq2 = Mux(secondMark(0), io.cap.q1, io.cap.q2)
  // Non-array data comes doubled (the same byte on both DQS edges): a pair that differs was taken half a
  // DQS period off (or outside the eye), which the doubled bytes would otherwise hide. Per data burst.
  val pairSplit = RegInit(False)
  io.pairSplit := pairSplit
  io.rx.valid := False
  io.rx.data := pq2 ## pq1
  io.rx.two := False
  when(pairValid) {
    // q1 is byte capIdx; with doubled (non-array) data q2 repeats it, else it is byte capIdx + 1
    io.rx.valid := wantQ1
    io.rx.two := wantQ2
    capIdx := capIdx + 2
    when(outDouble && wantQ1 && pq1 =/= pq2) { pairSplit := True }
  }
  val outPairsNext = outPairs + U(capIssued).resize(16) - U(pairDue && outPairs =/= 0).resize(16)
  outPairs := outPairsNext
  val outPairsAny = RegNext(outPairsNext =/= 0) init (False) // outPairs =/= 0 from a register
  io.rxPending := outPairsAny || nxt.dataOut // a data output period decided but not latched yet

  // ------------------------------------------------------------------ micro-op sequencer (one decision per period)
  val busy = RegInit(False)
  val u = Reg(Uop(p))
  val periodsLeft = Reg(UInt(16 bits))
  val started = Reg(Bool())
  val rbTimer = Reg(UInt(32 bits))
  val readSinceRb = RegInit(True)
  val outSinceCA = RegInit(False)
  val timeout = RegInit(False)
  timeout := False
  io.uop.ready := !busy && io.cfg.enable
  when(io.uop.fire) { busy := True; u := io.uop.payload; started := False; rbTimer := 0 }

  val wrLow = !nxt.wr
  val burstIdle = bState === BState.OFF
  // Data periods the flash needs for u.count bytes: two bytes per period, non-array bytes doubled.
  val dataBytes = Mux(u.array, u.count, u.count |<< 1)
  val dataPeriods = ((dataBytes.resize(17) + 1) >> 1).resize(16)

  val next = idleCycle(nxt) // the bus cycle decided below (idle unless a micro-op takes the period)
  val curIdle = !nxt.cle && !nxt.ale // (at a period start) the cycle latched now is idle
  // The rise of this period start latches nxt: count from it already in this cycle's decision.
  val caNow = Mux(nxt.ca, U(0, 8 bits), sinceCA)
  val outNow = Mux(nxt.dataOut, U(0, 8 bits), sinceOut)
  // W/R# moves at the falling edge before the rise now latching nxt: count from that rise too (else the
  // counter would still hold the previous change for one period).
  val wrLowNow = Mux(cur.wr && !nxt.wr, U(0, 8 bits), sinceWrLow)
  val wrHighNow = Mux(!cur.wr && nxt.wr, U(0, 8 bits), sinceWrHigh)
  val outSinceCANow = Mux(nxt.ca, False, nxt.dataOut || outSinceCA)
  when(io.cfg.enable && periodStart) {
    cur := nxt
    when(nxt.ca) { sinceCA := 0; outSinceCA := False }
    when(nxt.dataOut) { sinceOut := 0; outSinceCA := True; capIssued := True }
    when(cur.wr =/= nxt.wr) { when(nxt.wr) { sinceWrHigh := 0 } otherwise { sinceWrLow := 0 } }
    when(cur.ce_n =/= nxt.ce_n) { when(nxt.ce_n.andR) { sinceCeHigh := 0 } otherwise { sinceCe := 0 } }
    nxt := next
    when(busy) {
      switch(u.kind) {
        is(CE_ON) { // CE# changes at the falling edge: from one period start to the next is at least tCEH then
          when(atLeast(sinceCeHigh, needCEH)) { next.ce_n := ~UIntToOh(u.target, p.targets); busy := False }
        }
        is(CE_OFF) { next.ce_n.setAll(); next.dqOe := False; busy := False }
        is(CMD, ADDR) {
          when(wrLow) { when(curIdle) { next.wr := True } } // W/R# moves in idle cycles; the flash releases DQ/DQS tDQSHZ after it rises
            .elsewhen(burstIdle && ok(caNow, limCAD) && (!outSinceCANow || ok(outNow, limRHW)) &&
              atLeast(sinceCe, needCS) && atLeast(wrHighNow, needDQSHZ)) {
              next.cle := u.kind === CMD; next.ale := u.kind === ADDR; next.dq := u.value; next.dqOe := True; next.ca := True
              busy := False
            }
        }
        is(DOUT) {
          when(!started) {
            when(ok(caNow, limADL) && ok(caNow, limCAD) && (queued >= 24 || queued >= u.count)) {
              started := True; periodsLeft := dataPeriods - 1
              bStart := True; bTotal := dataBytes; bDouble := !u.array
              next.cle := True; next.ale := True; next.dqOe := True
            }
          } elsewhen (periodsLeft =/= 0) {
            periodsLeft := periodsLeft - 1
            next.cle := True; next.ale := True; next.dqOe := True
          } elsewhen (burstIdle) { busy := False }
        }
        is(DIN) {
          when(!started) {
            when(!wrLow) { when(burstIdle && curIdle) { next.wr := False; next.dqOe := False } }
              .elsewhen(ok(wrLowNow, limWRCK) &&
                (outSinceCANow || ok(caNow, Mux(u.ccs && ccsLonger, limCCS, limWHR))) &&
                (readSinceRb || ok(sinceRb, limRR))) {
                started := True; periodsLeft := dataPeriods - 1
                outDouble := !u.array; outTotal := u.count; capIdx := 0; readSinceRb := True; pairSplit := False
                next.cle := True; next.ale := True; next.dataOut := True
                when(dataPeriods === 1) { busy := False }
              }
          } elsewhen (periodsLeft =/= 0) {
            periodsLeft := periodsLeft - 1
            next.cle := True; next.ale := True; next.dataOut := True
            when(periodsLeft === 1) { busy := False }
          } otherwise { busy := False }
        }
        is(WAIT_WB) { when(atLeast(caNow, needWB)) { busy := False } }
        is(WAIT_RB) {} // below, every cycle
      }
    }
  }
  when(busy && u.kind === WAIT_RB) {
    rbTimer := rbTimer + 1
    when(io.rb_n(u.target)) { sinceRb := 0; readSinceRb := False; busy := False }
      .elsewhen(rbTimer >= rbLimit) { timeout := True; busy := False }
  }
  when(!io.cfg.enable) { cur := resetCycle; nxt := resetCycle }

  // ------------------------------------------------------------------ pins of the two halves of this cycle
  // In the first cycle of a period the registers still hold the previous period: the bus cycle now
  // latched is nxt, the one after it is this cycle's decision.
  val curNow = Mux(io.cfg.enable && periodStart, nxt, cur)
  val nxtNow = Mux(io.cfg.enable && periodStart, next, nxt)
  for (k <- 0 until 2) {
    val h = hs + k
    val second = h >= n // from the falling CLK edge on, the next bus cycle is on the pins
    val b = Mux(second, nxtNow, curNow)
    io.drive.clk(k) := io.cfg.enable && !second
    io.drive.cle(k) := b.cle
    io.drive.ale(k) := b.ale
    io.drive.wr(k) := b.wr
    io.drive.ce_n(k) := b.ce_n
    val bo = if (k == 0) o1 else o2
    io.drive.dqOe(k) := b.dqOe || bo.oe
    io.drive.dq(k) := Mux(bState =/= BState.OFF || bo.oe, bo.dq, b.dq)
    io.drive.dqs(k) := bo.dqs
    io.drive.dqsOe(k) := bo.oe
  }
  io.idle := !busy
  // With NV-DDR on, CLK runs and the half-slot counter turns every cycle: never quiet. Off, the layer
  // settles to the reset bus cycle, saturated counters, no burst and an empty FIFO: nothing can move
  // (no micro-op is accepted, no data or capture comes in while disabled).
  io.quiet := !io.cfg.enable && !busy && !timeout && hs === 0 && cur === resetCycle && nxt === resetCycle &&
    bState === BState.OFF && fifo.io.occupancy === 0 && stCnt === 0 && outPairs === 0 &&
    firstMark === 0 && secondMark === 0 &&
    counters.map(_ === 255).reduce(_ && _)
  io.timeout := timeout
  io.dataCycle := cur.dataOut || bState === BState.RUN
}
