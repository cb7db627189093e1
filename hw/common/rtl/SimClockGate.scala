package common

import spinal.core._

/** Clock gate that exists only for Verilator (`ifdef VERILATOR`); synthesis sees `gclk = clk`, and so
  * does a Verilator build with `-DLSMC_NO_CLOCK_GATE` (to check both behave alike).
  *
  * Why: Verilator evaluates every combinational expression of a clock domain on every edge of its
  * clock, whether its inputs changed or not. A block with wide arithmetic that is idle most of the time
  * (the BCH decoder: syndromes, Berlekamp-Massey, 32-wide Chien search) then costs the whole SoC model
  * most of its speed. Behind this gate its logic is evaluated only on the cycles it has work.
  *
  * Contract for the gated block: while `en` is low, no register of the block may change (it is idle and
  * no input asks for work), so the gated and the free-running design behave identically, which is what
  * makes the FPGA build (ungated) and the simulation (gated) the same design. `en` is sampled on the
  * falling edge (a glitch-free gate: the latched enable is stable while the clock is high), so it must
  * be valid half a cycle before the edge it enables: any combination of registers of the same clock
  * domain is. The domain's reset is added to `en`. */
class SimClockGate extends BlackBox {
  setDefinitionName("LsmcSimClockGate")
  val io = new Bundle {
    val clk = in Bool()
    val en = in Bool()
    val gclk = out Bool()
  }
  noIoPrefix()
  setInlineVerilog(
    """module LsmcSimClockGate (
      |  input  wire clk,
      |  input  wire en,
      |  output wire gclk
      |);
      |`ifdef VERILATOR
      |`ifndef LSMC_NO_CLOCK_GATE
      |  reg enLow = 1'b1;
      |  always @(negedge clk) enLow <= en;
      |  assign gclk = clk & enLow;
      |`else
      |  assign gclk = clk;
      |`endif
      |`else
      |  assign gclk = clk;
      |`endif
      |endmodule
      |""".stripMargin)
}

object SimClockGate {
  /** false: no gate is instantiated at all (board builds: `soc.Generate --no-sim-ctrl` elaborates the
    * SoC under `SimClockGate.Enabled(false) on {...}`), so their Verilog has one plain clock. */
  object Enabled extends ScopeProperty[Boolean] {
    override def default: Boolean = true
  }

  /** The current clock domain with its clock stopped (in Verilator) while `en` is low; build the gated
    * block inside it: `val dec = SimClockGate(busy)(new BchDecoder(p))`. */
  def apply(en: Bool): ClockDomain = {
    val cd = ClockDomain.current
    if (!Enabled.get) return cd
    val gate = new SimClockGate
    gate.io.clk := cd.readClockWire
    gate.io.en := en || (if (cd.hasResetSignal) cd.isResetActive else False)
    val gated = cd.copy(clock = gate.io.gclk)
    // Spinal's synchronous relation is not transitive: a gate inside a gated block, or two sibling gates,
    // must be declared synchronous with every domain derived from the same root clock.
    val root = rootOf.getOrElse(cd.clock, cd.clock)
    rootOf(gate.io.gclk) = root
    val family = derived.getOrElseUpdate(root, scala.collection.mutable.ArrayBuffer(cd))
    for (other <- family) gated.setSynchronousWith(other)
    family += gated
    gated
  }

  // gated clock -> the clock it derives from, root clock -> every domain on it (this elaboration's Bools)
  private val rootOf = scala.collection.mutable.WeakHashMap[Bool, Bool]()
  private val derived = scala.collection.mutable.WeakHashMap[Bool, scala.collection.mutable.ArrayBuffer[ClockDomain]]()
}
