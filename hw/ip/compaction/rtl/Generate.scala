package compaction

import common.{Gen, Generator}

/** `compaction.Generate [--preset NAME] [--width 128|32] [--ways 2|4|8] --out DIR`: DIR/CompactionIp.v (top
  * `CompactionIp`, K = `ways` inputs) and the register block compaction_regs.h / .json / .md / .html.
  * Options given with a preset override its values. */
object Generate extends Generator("build/gen/compaction_w128",
      Gen.choiceOpt("preset", CompactionConfig.presets.map(_._1), "PRESET"),
      Gen.intOpt("width", 128, Seq(32, 128)), Gen.intOpt("ways", 2, Seq(2, 4, 8))) {
  private val overridable = Seq("width", "ways")
  def config(a: Gen.Args): CompactionConfig = {
    val base = CompactionConfig.presets.find(_._1 == a.str("preset")).map(_._3).getOrElse(CompactionConfig())
    def int(name: String, preset: Int) = if (a.given(name)) a.int(name) else preset
    base.copy(dataWidth = int("width", base.dataWidth), ways = int("ways", base.ways))
  }
  def top(a: Gen.Args) = CompactionIp(config(a), withDocs = true)
  /** manifest.json beside the Verilog: the preset (if any) and every parameter. */
  override def after(a: Gen.Args, report: spinal.core.SpinalReport[spinal.core.Component]) = {
    val w = new java.io.PrintWriter(new java.io.File(a.out, "manifest.json"), "UTF-8")
    try w.write(common.Json.render(scala.collection.immutable.ListMap("preset" -> a.str("preset"),
      "overridden" -> overridable.filter(a.given), "config" -> config(a))) + "\n") finally w.close()
  }
}
