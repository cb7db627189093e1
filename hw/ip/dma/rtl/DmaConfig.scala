package dma

/** Generation parameters of one compaction unit's DMA (CompactionDma documents each). In the SoC the
  * width and readers follow the unit's IP (LsmcSocConfig.unitDma); `dma.Generate` takes them alone. */
case class DmaConfig(
    dataWidth: Int = 128,
    readers: Int = 2,
    writeBurst: Int = DmaBus.maxBurst,
    readPorts: Int = 1,
    writeGroup: Boolean = false
) {
  def build(): CompactionDma = CompactionDma(dataWidth, readers, writeBurst = writeBurst, readPorts = readPorts,
    writeGroup = writeGroup)
}

object DmaConfig {
  /** The standalone DMA builds (folder under build/gen -> config): the register map's (two readers) and the
    * firmware's (four readers: its map extends the two-reader one, the firmware drives either). */
  val presets: Seq[(String, String, DmaConfig)] = Seq(
    ("dma-w128", "dma_w128", DmaConfig()),
    ("dma-w128-r4", "dma_w128_r4", DmaConfig(readers = 4)))
}
