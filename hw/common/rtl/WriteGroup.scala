package common

/** Write grouping, shared by the KB16 DMA's writers (dma.DmaWriter) and the table engine's write port
  * (table_engine.TableEngine): several units on one DDR bus hold their full write bursts until one of them is
  * urgent, so the bursts reach the bus in one write period instead of a read/write turnaround pair each. */
object WriteGroup {

  /** A writer is urgent once the beats it holds without an AW reach 3/4 of its FIFO: a quarter left for the
    * group's other bursts to drain before its producer stalls. */
  def urgentLevel(fifoBeats: Int): Int = fifoBeats - fifoBeats / 4
}
