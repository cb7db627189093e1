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

/** Named builds of the whole engine (`TableEngine`), beside the simulation builds' defaults (`TableEngineConfig()`,
  * what `lsmc.build.table_engine_top` generates with the model's limits). (name, folder under build/gen, what,
  * config). */
object TableEnginePresets {
  /** `ecp5`: the engine sized for the block RAM of the ECPIX-5's ECP5-85 (208 DP16KD of 18 Kbit, about 468 KiB; the
    * simulation builds' 64 KiB Snappy buffers and 128 KiB walker need 2.5 times that): 173 DP16KD. Its logic does
    * not fit the device (187 % of its LUT4s: doc/table_engine_top.md, Synthesis). Two ways; each
    * reader takes Snappy blocks of up to 32 KiB decompressed (LevelDB's 4 KiB block_size with entries up to
    * 28 KiB; a larger one is BAD_SNAPPY at the block, as in the simulation builds past 64 KiB) and tables of up
    * to 1024 data blocks; the walker 256 files, 256 grandparents and 2,048 words (32 KiB) of their keys; the
    * writer an index block of up to 32 KiB and 2,048 entries (a 2 MiB table of 4 KiB blocks needs about 18 KiB
    * and 512; more is OUTPUT_FULL: an entry takes at least 17 bytes, so the buffer binds first unless the
    * index spills), the filter unit at a token size (the engine's jobs ask no filter block) and one compressor lane
    * (a lane is about 232 KiB of block RAM: more do not fit). */
  val all: Seq[(String, String, String, TableEngineConfig)] = Seq(
    ("ecp5", "table_engine_ecp5", "the engine on the ECPIX-5's ECP5-85: 2 ways, 32 KiB Snappy blocks, a smaller walker",
      TableEngineConfig(bytes = 16, ways = 2, keyLimit = 1032, maxBlock = 4 << 20, maxBlocks = 1024,
        walkerLevels = 8, walkerFiles = 256, walkerKeyWords = 2048, grandparents = 256, snappyBytes = 32 << 10,
        indexBytes = 32 << 10, filterBytes = 1 << 10, filterKeys = 64, maxFilters = 64, zipLanes = 1,
        indexEntries = 2048)))
  /** The parts a named build can be generated as: the whole engine, or one unit alone (GenerateTableEnginePreset). */
  val units: Seq[String] = Seq("engine", "reader", "writer")
  def apply(name: String): TableEngineConfig = all.find(_._1 == name).map(_._4)
    .getOrElse(sys.error(s"no table-engine preset $name (${all.map(_._1).mkString(", ")})"))
}

/** `table_engine.GenerateTableEnginePreset --preset NAME [--unit engine|reader|writer] --out DIR`: DIR/TableEngine.v of
  * a named build (TableEnginePresets), or of one of its units alone with that build's parameters (`reader`: one table
  * reader, TableReader.v; `writer`: the table writer, TableWriter.v; so a unit's Fmax and size on a device are those
  * of the engine's own unit), and manifest.json beside it (the preset, the unit and every parameter). */
object GenerateTableEnginePreset extends Generator("build/gen/table_engine_ecp5",
      Gen.choiceOpt("preset", TableEnginePresets.all.map(_._1), "PRESET"),
      Gen.choiceOpt("unit", TableEnginePresets.units, "UNIT")) {
  def config(a: Gen.Args): TableEngineConfig = {
    if (!a.given("preset")) {
      System.err.println(s"$prog: error: --preset is required (${TableEnginePresets.all.map(_._1).mkString(", ")})")
      sys.exit(2)
    }
    TableEnginePresets(a.str("preset"))
  }
  def unit(a: Gen.Args): String = if (a.given("unit")) a.str("unit") else "engine"
  def top(a: Gen.Args) = unit(a) match {
    case "reader" => TableReader(config(a).reader)
    case "writer" => TableWriter(config(a).writer)
    case _ => TableEngine(config(a))
  }
  override def after(a: Gen.Args, report: spinal.core.SpinalReport[spinal.core.Component]) = {
    val w = new java.io.PrintWriter(new java.io.File(a.out, "manifest.json"), "UTF-8")
    try w.write(common.Json.render(scala.collection.immutable.ListMap("preset" -> a.str("preset"),
      "unit" -> unit(a), "config" -> config(a))) + "\n") finally w.close()
  }
}
