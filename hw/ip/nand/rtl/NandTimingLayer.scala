package nand

import spinal.core._
import spinal.lib._

/** Time sequence layer: executes one micro-operation at a time and drives every flash signal so
  * that each ONFI timing in `io.t` (cycles) holds. Each timing is a "cycles since event" counter
  * compared against its register; an edge is only scheduled when every constraint it closes is met,
  * so the same logic serves all timing modes. Counter convention: a counter reads v in the cycle
  * after it was cleared + v edges; an action decided now happens at the next edge, i.e. v + 1
  * cycles after the event. */
class NandTimingLayer(p: NandParams) extends Component {
  val io = new Bundle {
    val uop = slave Stream (Uop(p))
    val dout = slave Stream (Bits(8 bits))
    val t = in(NandTimingRegs())
    val drive = out(NandDrive(p.targets))
    val strobe = out Bool()
    val rb_n = in Bits (p.targets bits)
    val idle = out Bool()
    val timeout = out Bool()
    val dataCycle = out Bool()
    val quiet = out Bool() // no register changes at the next edge unless a micro-op arrives (SimClockGate)
  }
  import UopKind._

  private def ctr() = Reg(UInt(8 bits)) init (255)
  val sinceWeRise, sinceWeFall, sinceReRise, sinceReFall, sinceCle, sinceCe, sinceRb = ctr()
  val counters = List(sinceWeRise, sinceWeFall, sinceReRise, sinceReFall, sinceCle, sinceCe, sinceRb)
  for (c <- counters) when(c =/= 255) { c := c + 1 }
  private def ge(a: UInt, b: UInt): Bool = a.resize(11) >= b.resize(11)
  private val zero = U(0, 8 bits)
  // after(c, extra, need) = c + 1 + extra >= need, i.e. c >= need - 1 - extra: the limits are registered
  // per-mode constants (the timing registers change only between commands; these follow a cycle later),
  // so no configuration register reaches a decision through an adder.
  private def limit(need: UInt, extra: UInt = zero): UInt = {
    val d = need.resize(10).asSInt - extra.resize(10).asSInt - 1
    RegNext(Mux(d < 0, U(0, 8 bits), d.asUInt.resize(8)))
  }
  private def after(c: UInt, lim: UInt): Bool = c >= lim

  val readSinceWrite = Reg(Bool()) init (False)
  val readSinceRb = Reg(Bool()) init (True)
  val dq = Reg(Bits(8 bits)) init (0)
  val oe, cle, ale = Reg(Bool()) init (False)
  val we_n, re_n = Reg(Bool()) init (True)
  val ce_n = Reg(Bits(p.targets bits)) init (B(p.targets bits, default -> True))
  val strobe = RegInit(False)
  val timeout = RegInit(False)
  strobe := False
  timeout := False

  val busy = RegInit(False)
  val cur = Reg(Uop(p))
  val remaining = Reg(UInt(16 bits))
  val firstByte = Reg(Bool())
  val phase = Reg(UInt(2 bits)) init (0) // 0 decide, 1 WE# low, 2 RE# low
  val cnt = Reg(UInt(8 bits))
  val rbTimer = Reg(UInt(32 bits))

  io.uop.ready := !busy
  when(io.uop.fire) {
    busy := True
    cur := io.uop.payload
    remaining := io.uop.count
    firstByte := True
    phase := 0
    rbTimer := 0
  }
  io.dout.ready := False

  val t = io.t
  val isWrite = cur.kind === CMD || cur.kind === ADDR || cur.kind === DOUT
  val newCle = cur.kind === CMD
  val newAle = cur.kind === ADDR
  val newDq = Mux(cur.kind === DOUT, io.dout.payload, cur.value)
  val dataAvail = cur.kind =/= DOUT || io.dout.valid
  val counted = cur.kind === DOUT || cur.kind === DIN
  val limWH = limit(t.tWH)
  val limHOLD = limit(t.tHOLD)
  val limWC = limit(t.tWC)
  val limRHW = limit(t.tRHW)
  val limCS = limit(t.tCS, t.tWP)
  val limCLS = limit(t.tCLS, t.tWP)
  val clsAtOnce = RegNext(ge(t.tWP, t.tCLS))
  val limADL = limit(t.tADL, t.tWP)
  val limREH = limit(t.tREH)
  val limRC = limit(t.tRC)
  val limWHR = limit(t.tWHR)
  val limCCS = limit(t.tCCS)
  val ccsLonger = RegNext(t.tCCS > t.tWHR)
  val limRR = limit(t.tRR)
  val limCLR = limit(t.tCLR)
  val needWB = RegNext(t.tWB.resize(9) + 3)
  val needWP = RegNext(t.tWP)
  val needRP = RegNext(t.tRP)
  val rbLimit = RegNext(t.timeout)
  val holdOk = after(sinceWeRise, limWH)

  when(busy) {
    switch(phase) {
      is(0) {
        when(counted && remaining === 0) {
          busy := False
        } otherwise {
          switch(cur.kind) {
            is(CE_ON) {
              val sel = ~UIntToOh(cur.target, p.targets)
              when(after(sinceWeRise, limHOLD) && re_n) {
                when(ce_n =/= sel) { sinceCe := 0 }
                ce_n := sel
                busy := False
              }
            }
            is(CE_OFF) {
              when(after(sinceWeRise, limHOLD) && re_n) {
                ce_n.setAll(); cle := False; ale := False; oe := False
                busy := False
              }
            }
            is(CMD, ADDR, DOUT) {
              val changes = cle =/= newCle || ale =/= newAle || !oe
              val wcOk = after(sinceWeFall, limWC)
              val rhwOk = !readSinceWrite || after(sinceReRise, limRHW)
              val csOk = after(sinceCe, limCS)
              val clsOk = Mux(changes, clsAtOnce, after(sinceCle, limCLS))
              val adlOk = !(cur.kind === DOUT && firstByte) || after(sinceWeRise, limADL)
              when(holdOk && rhwOk && dataAvail) {
                when(wcOk && csOk && clsOk && adlOk) {
                  cle := newCle; ale := newAle; oe := True; dq := newDq
                  we_n := False
                  sinceWeFall := 0
                  when(changes) { sinceCle := 0 }
                  cnt := 1
                  phase := 1
                  io.dout.ready := cur.kind === DOUT
                } elsewhen (changes) { // latch type changes and tCLS/tALS > tWP: set the pins first
                  cle := newCle; ale := newAle; oe := True
                  sinceCle := 0
                }
              }
            }
            is(DIN) {
              when(cle || ale || oe) {
                when(holdOk) { cle := False; ale := False; oe := False; sinceCle := 0 }
              } otherwise {
                val ok = after(sinceReRise, limREH) && after(sinceReFall, limRC) &&
                  (readSinceWrite || after(sinceWeRise, Mux(cur.ccs && ccsLonger, limCCS, limWHR))) &&
                  (readSinceRb || after(sinceRb, limRR)) && after(sinceCle, limCLR)
                when(ok) {
                  re_n := False
                  sinceReFall := 0
                  strobe := True
                  readSinceWrite := True
                  readSinceRb := True
                  cnt := 1
                  phase := 2
                }
              }
            }
            is(WAIT_WB) {
              // +3: the PHY output flop and the two-flop R/B# synchroniser lag the WE# decision.
              when(ge(sinceWeRise, needWB)) { busy := False }
            }
            is(WAIT_RB) {
              rbTimer := rbTimer + 1
              when(io.rb_n(cur.target)) {
                sinceRb := 0
                readSinceRb := False
                busy := False
              } elsewhen (rbTimer >= rbLimit) {
                timeout := True
                busy := False
              }
            }
          }
        }
      }
      is(1) {
        cnt := cnt + 1
        when(ge(cnt, needWP)) {
          we_n := True
          sinceWeRise := 0
          readSinceWrite := False
          firstByte := False
          phase := 0
          remaining := remaining - 1
          when(!counted || remaining === 1) { busy := False }
        }
      }
      is(2) {
        cnt := cnt + 1
        when(ge(cnt, needRP)) {
          re_n := True
          sinceReRise := 0
          phase := 0
          remaining := remaining - 1
          when(remaining === 1) { busy := False }
        }
      }
    }
  }

  io.drive.dq := dq
  io.drive.oe := oe
  io.drive.cle := cle
  io.drive.ale := ale
  io.drive.we_n := we_n
  io.drive.re_n := re_n
  io.drive.ce_n := ce_n
  io.strobe := strobe
  io.idle := !busy
  // Idle, every counter saturated, the one-cycle pulses low: only io.uop can change a register now.
  io.quiet := !busy && !strobe && !timeout && counters.map(_ === 255).reduce(_ && _)
  io.timeout := timeout
  io.dataCycle := busy && counted
}
