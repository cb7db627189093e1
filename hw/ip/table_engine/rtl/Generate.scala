package table_engine

import common.{Gen, Generator}

/** `table_engine.Generate [--bytes 4|8|16|32] [--key-limit N] [--max-block N] --out DIR`: DIR/BlockReader.v,
  * the table engine's block read path (CRC32C check and raw data-block entry decoder). */
object Generate extends Generator("build/gen/table_engine_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-block", 4 << 20, min = 64)) {
  def top(a: Gen.Args) = BlockReader(BlockReaderConfig(a.int("bytes"), a.int("key-limit"), a.int("max-block")))
}

/** `table_engine.GenerateSnappy [--bytes 4|8|16|32] [--history N] --out DIR`: DIR/SnappyDecompressor.v, the
  * Snappy block decompressor with a history (and largest block) of N bytes. */
object GenerateSnappy extends Generator("build/gen/snappy_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("history", 1 << 16, Seq(1 << 16, 1 << 17, 1 << 18))) {
  def top(a: Gen.Args) = SnappyDecompressor(SnappyConfig(a.int("bytes"), a.int("history")))
}

/** `table_engine.GenerateBuilder [--bytes 4|8|16|32] [--key-limit N] [--max-restarts N] --out DIR`:
  * DIR/BlockBuilder.v, the table engine's data-block writer. */
object GenerateBuilder extends Generator("build/gen/table_engine_builder_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("key-limit", 1032, min = 1024),
      Gen.intOpt("max-restarts", 1024, min = 2)) {
  def top(a: Gen.Args) = BlockBuilder(BlockBuilderConfig(a.int("bytes"), a.int("key-limit"), a.int("max-restarts")))
}

/** `table_engine.GenerateSnappyCompressor [--bytes 4|8|16|32] [--max-block N] [--fragment N] [--min-hash-bits N]
  * [--max-hash-bits N] [--epoch-bits N] --out DIR`: DIR/SnappyCompressor.v, the Snappy block compressor (libsnappy's
  * fragment and hash-table sizes and the block limit from model/limits.h, given by lsmc.build.table_engine_snappy). */
object GenerateSnappyCompressor extends Generator("build/gen/snappy_compressor_w16",
      Gen.intOpt("bytes", 16, Seq(4, 8, 16, 32)), Gen.intOpt("max-block", 4 << 20, min = 1),
      Gen.intOpt("fragment", 1 << 16, Seq(1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16)),
      Gen.intOpt("min-hash-bits", 8, min = 1), Gen.intOpt("max-hash-bits", 14, min = 1),
      Gen.intOpt("epoch-bits", 8, min = 1)) {
  def top(a: Gen.Args) = SnappyCompressor(SnappyCompressorConfig(a.int("bytes"), a.int("max-block"), a.int("fragment"),
    a.int("min-hash-bits"), a.int("max-hash-bits"), a.int("epoch-bits")))
}
