package dma

import common.{Gen, Generator}

/** `dma.Generate --width 128|32 --out DIR`: DIR/CompactionDma.v and dma_regs.h / .json / .md / .html. */
object Generate extends Generator("build/gen/dma_w128", Gen.intOpt("width", 128, Seq(32, 128))) {
  def top(a: Gen.Args) = {
    val top = CompactionDma(a.int("width"))
    top.docs()
    top
  }
}
