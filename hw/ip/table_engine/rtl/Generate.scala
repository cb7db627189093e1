package table_engine

import common.{Gen, Generator}

/** `table_engine.Generate [--bytes 4|8|16|32] [--key-limit N] [--max-block N] --out DIR`: DIR/BlockReader.v,
  * the table engine's block read path (CRC32C check and raw data-block entry decoder). */
object Generate extends Generator("build/gen/table_engine_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-block", 4 << 20, min = 64)) {
  def top(a: Gen.Args) = BlockReader(BlockReaderConfig(a.int("bytes"), a.int("key-limit"), a.int("max-block")))
}

/** `table_engine.GenerateBuilder [--bytes 4|8|16|32] [--key-limit N] [--max-restarts N] --out DIR`:
  * DIR/BlockBuilder.v, the table engine's data-block writer. */
object GenerateBuilder extends Generator("build/gen/table_engine_builder_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-restarts", 1024, min = 2)) {
  def top(a: Gen.Args) = BlockBuilder(BlockBuilderConfig(a.int("bytes"), a.int("key-limit"), a.int("max-restarts")))
}
