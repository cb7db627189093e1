package compaction

import common.{Gen, Generator}

/** `compaction.Generate --width 128|32 [--ways 2|4|8] --out DIR`: DIR/CompactionIp.v (top
  * `CompactionIp`, K = `ways` inputs) and the register block compaction_regs.h / .json / .md / .html. */
object Generate extends Generator("build/gen/compaction_w128", Gen.intOpt("width", 128, Seq(32, 128)),
      Gen.intOpt("ways", 2, Seq(2, 4, 8))) {
  def top(a: Gen.Args) =
    CompactionIp(CompactionConfig(dataWidth = a.int("width"), ways = a.int("ways")), withDocs = true)
}
