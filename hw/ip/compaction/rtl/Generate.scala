package compaction

import spinal.core._

/** Verilog generator: `compaction.Generate --width 128|32 [--ways 2|4|8] --out DIR` writes DIR/CompactionIp.v
  * (top `CompactionIp`, clock `clk`, synchronous active-high `reset`) and the regif outputs
  * compaction_regs.h / .html / .md. */
object Generate {
  def usage(msg: String): Nothing = {
    System.err.println(s"error: $msg\nusage: compaction.Generate --width 32|128 [--ways 2|4|8] --out DIR")
    sys.exit(2)
  }

  def spinalConfig(outDir: String) = SpinalConfig(
    targetDirectory = outDir,
    defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH),
    oneFilePerComponent = false
  )

  def main(args: Array[String]): Unit = {
    var width = 128
    var ways = 2
    var out: Option[String] = None
    var rest = args.toList
    while (rest.nonEmpty) rest match {
      case "--width" :: w :: tail =>
        width = w.toIntOption.getOrElse(usage(s"--width expects a number, got '$w'"))
        rest = tail
      case "--ways" :: k :: tail =>
        ways = k.toIntOption.getOrElse(usage(s"--ways expects a number, got '$k'"))
        rest = tail
      case "--out" :: d :: tail => out = Some(d); rest = tail
      case other :: _ => usage(s"unknown or incomplete argument '$other'")
      case Nil =>
    }
    if (width != 32 && width != 128) usage(s"--width must be 32 or 128, not $width")
    if (ways != 2 && ways != 4 && ways != 8) usage(s"--ways must be 2, 4 or 8, not $ways")
    val dir = out.getOrElse(usage("--out DIR is required"))
    new java.io.File(dir).mkdirs()
    spinalConfig(dir).generateVerilog(CompactionIp(CompactionConfig(dataWidth = width, ways = ways), withDocs = true))
  }
}
