package dma

import common.{Gen, Generator}

/** `dma.Generate --width 128|32 [--readers 2|4] [--write-burst BEATS] [--write-group] --out DIR`: DIR/CompactionDma.v
  * and dma_regs.h / .json / .md / .html. */
object Generate extends Generator("build/gen/dma_w128", Gen.intOpt("width", 128, Seq(32, 128)),
  Gen.intOpt("readers", 2, Seq(2, 4)),
  Gen.intOpt("write-burst", DmaBus.maxBurst, what = "BEATS", min = 1),
  Gen.flagOpt("write-group", "write grouping: io_writeUrgent out, io_writeGroupGo in (CompactionDma writeGroup)")) {
  def top(a: Gen.Args) = {
    val top = CompactionDma(a.int("width"), a.int("readers"), writeBurst = a.int("write-burst"),
      writeGroup = a.flag("write-group"))
    top.docs()
    top
  }
}
