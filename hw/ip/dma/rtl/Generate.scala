package dma

import common.{Gen, Generator}

/** `dma.Generate [--preset NAME] [--width 128|32] [--readers 2|4] [--write-burst BEATS] [--write-group] --out DIR`:
  * DIR/CompactionDma.v and dma_regs.h / .json / .md / .html. Options given with a preset override its values. */
object Generate extends Generator("build/gen/dma_w128",
  Gen.choiceOpt("preset", DmaConfig.presets.map(_._1), "PRESET"),
  Gen.intOpt("width", 128, Seq(32, 128)),
  Gen.intOpt("readers", 2, Seq(2, 4)),
  Gen.intOpt("write-burst", DmaBus.maxBurst, what = "BEATS", min = 1),
  Gen.flagOpt("write-group", "write grouping: io_writeUrgent out, io_writeGroupGo in (CompactionDma writeGroup)")) {
  private val overridable = Seq("width", "readers", "write-burst", "write-group")
  def config(a: Gen.Args): DmaConfig = {
    val base = DmaConfig.presets.find(_._1 == a.str("preset")).map(_._3).getOrElse(DmaConfig())
    def int(name: String, preset: Int) = if (a.given(name)) a.int(name) else preset
    base.copy(dataWidth = int("width", base.dataWidth), readers = int("readers", base.readers),
      writeBurst = int("write-burst", base.writeBurst), writeGroup = base.writeGroup || a.flag("write-group"))
  }
  def top(a: Gen.Args) = {
    val top = config(a).build()
    top.docs()
    top
  }
  /** manifest.json beside the Verilog: the preset (if any) and every parameter. */
  override def after(a: Gen.Args, report: spinal.core.SpinalReport[spinal.core.Component]) = {
    val w = new java.io.PrintWriter(new java.io.File(a.out, "manifest.json"), "UTF-8")
    try w.write(common.Json.render(scala.collection.immutable.ListMap("preset" -> a.str("preset"),
      "overridden" -> overridable.filter(a.given), "config" -> config(a))) + "\n") finally w.close()
  }
}
