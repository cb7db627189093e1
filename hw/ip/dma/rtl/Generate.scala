package dma

import common.{Gen, Generator}

/** `dma.Generate --width 128|32 [--readers 2|4] --out DIR`: DIR/CompactionDma.v and dma_regs.h / .json / .md / .html. */
object Generate extends Generator("build/gen/dma_w128", Gen.intOpt("width", 128, Seq(32, 128)),
  Gen.intOpt("readers", 2, Seq(2, 4))) {
  def top(a: Gen.Args) = {
    val top = CompactionDma(a.int("width"), a.int("readers"))
    top.docs()
    top
  }
}
