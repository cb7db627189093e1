package dma

import spinal.core._
import spinal.lib.bus.regif._

/** Generates CompactionDma.v, dma_regs.h (prefix DMA_) and register docs (HTML, JSON).
  * Usage: dma.Generate --width 128 --out build/gen/dma_w128 */
object Generate {
  def usage(msg: String): Nothing = {
    System.err.println(s"dma.Generate: $msg\nusage: dma.Generate --width 32|128 --out DIR")
    sys.exit(2)
  }

  def main(args: Array[String]): Unit = {
    var width = 128
    var outDir = "build/gen/dma_w128"
    val it = args.iterator
    while (it.hasNext) it.next() match {
      case "--width" if it.hasNext =>
        val v = it.next()
        width = v.toIntOption.getOrElse(usage(s"bad width '$v'"))
      case "--out" if it.hasNext => outDir = it.next()
      case other => usage(s"unknown or incomplete argument '$other'")
    }
    if (width != 32 && width != 128) usage(s"width must be 32 or 128, not $width")
    new java.io.File(outDir).mkdirs()

    SpinalConfig(
      targetDirectory = outDir,
      defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH),
      oneFilePerComponent = false
    ).generateVerilog {
      val top = CompactionDma(width)
      top.busif.accept(DocCHeader("dma_regs", "DMA"))
      top.busif.accept(DocHtml("dma_regs"))
      top.busif.accept(DocJson("dma_regs"))
      top
    }
  }
}
