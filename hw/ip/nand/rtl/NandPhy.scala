package nand

import spinal.core._
import spinal.lib._

/** Physical interface layer: output flops for every pin (one register stage, as in the IOB),
  * input synchronisers for DQ and R/B#, and the programmable read-sample point. The timing layer
  * pulses `strobe` in the cycle its RE# register falls; the byte on DQ is taken `sampleDelay` cycles
  * after the RE# pin fell, from the second synchroniser stage (so delay = ceil(tREA / Tclk) + 1 for a
  * board without extra pad delay; firmware may tune it). `padInputCycles` register stages ahead of
  * `dq_i` on the board (the pad wrapper's IDDR) are added here, so the sample point stays where
  * SAMPLE.DELAY puts it. Single clock domain: at 100 MHz every ONFI
  * mode fits in whole cycles (hw/ip/nand/doc/nand.md), so no second PHY clock is needed. */
class NandPhy(targets: Int, padInputCycles: Int = 0) extends Component {
  val io = new Bundle {
    val drive = in(NandDrive(targets))
    val wp_n = in Bool()
    val strobe = in Bool()
    val sampleDelay = in UInt(4 bits)
    val rx = master Flow (Bits(8 bits))
    val rb_n = out Bits (targets bits)
    val busyLine = out Bool() // a sample is still travelling through the delay line
    val pins = master(NandPins(targets))
    // Both high: no register but the DQ synchroniser changes at the next edge unless io.drive / wp_n /
    // strobe do (SimClockGate). Split by what they read, the PHY's registers or the input pins.
    val regsQuiet = out Bool()
    val pinsQuiet = out Bool()
  }
  val outReg = RegNext(io.drive) init {
    val d = NandDrive(targets)
    d.dq := 0; d.oe := False; d.cle := False; d.ale := False; d.we_n := True; d.re_n := True
    d.ce_n.setAll()
    d
  }
  io.pins.dq_o := outReg.dq
  io.pins.dq_oe := outReg.oe
  io.pins.cle := outReg.cle
  io.pins.ale := outReg.ale
  io.pins.we_n := outReg.we_n
  io.pins.re_n := outReg.re_n
  io.pins.ce_n := outReg.ce_n
  io.pins.wp_n := RegNext(io.wp_n) init (False)
  // NV-DDR pins: driven by the controller from NandDdrTiming's output flops (see NandController).
  io.pins.ddr := False
  io.pins.ddr_h2_dq_o := outReg.dq; io.pins.ddr_h2_dq_oe := outReg.oe; io.pins.ddr_h2_cle := outReg.cle
  io.pins.ddr_h2_ale := outReg.ale; io.pins.ddr_h2_we_n := outReg.we_n; io.pins.ddr_h2_re_n := outReg.re_n
  io.pins.ddr_h2_ce_n := outReg.ce_n
  io.pins.ddr_dqs_o := 0; io.pins.ddr_dqs_oe := 0; io.pins.ddr_tap := 0

  // Asynchronous inputs: two-flop synchronisers from the library.
  val dqSync = BufferCC(io.pins.dq_i, bufferDepth = Some(2))
  io.rb_n := BufferCC(io.pins.rb_n, init = B(0, targets bits), bufferDepth = Some(2))
  /** Both stages of a two-flop synchroniser equal its input, so another edge changes neither. The first
    * stage is inside BufferCC: a copy of it (same input, clock and reset value) stands in for it here. */
  private def settled(in: Bits, out: Bits, init: Bits): Bool = {
    val first = RegNext(in) init (init)
    first === in && out === first
  }

  // strobe is high in the cycle before the RE# pin falls, so line(0) is set at the edge the pin falls
  // and line(k) k cycles later.
  val line = Reg(Bits(16 + padInputCycles bits)) init (0)
  val lineNext = (line |<< 1) | io.strobe.asBits.resized
  line := lineNext
  // line =/= 0, registered from its next value: busyLine (the command layer's SYNC test) is one gate deep.
  val lineAny = RegNext(lineNext.orR) init (False)
  // The tap of the next cycle registered (SAMPLE.DELAY changes only between commands): the sample's
  // valid is a register, not a 16:1 multiplexer on a configuration register.
  val tap = RegNext(lineNext(io.sampleDelay.resize(log2Up(16 + padInputCycles)) + padInputCycles)) init (False)
  io.rx.valid := tap
  io.rx.payload := dqSync
  io.busyLine := lineAny || io.strobe
  // DQ is left out: an undriven bus changes at random (the SoC harness drives junk), and its synchroniser
  // is read only through the delay line, at least sampleDelay + 1 clocked cycles after a strobe, which
  // needs a command: long after a stopped clock restarted, both stages hold the pin's last two values.
  io.regsQuiet := !io.busyLine && outReg.asBits === io.drive.asBits && io.pins.wp_n === io.wp_n
  io.pinsQuiet := settled(io.pins.rb_n, io.rb_n, B(0, targets bits))
}
