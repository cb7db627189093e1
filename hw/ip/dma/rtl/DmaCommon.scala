package dma

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** Facts shared by every DMA channel: the DDR side is AXI4 with 256-bit data and 32-bit addresses. */
object DmaBus {
  val dataWidth    = 256
  val bytesPerBeat = dataWidth / 8 // 32: also the required ADDR alignment
  val maxBurst     = 16            // beats per INCR burst
  val beatsPerPage = 4096 / bytesPerBeat // a burst never crosses a 4 KiB boundary

  /** Config of the single master port of [[CompactionDma]]: the top id bit selects the channel pair
    * member (added by spinal.lib's arbiters), the channel itself always uses id 0 so that AXI keeps its
    * responses in order. */
  def axiConfig: Axi4Config = Axi4Config(
    addressWidth = 32, dataWidth = dataWidth, idWidth = 2,
    useRegion = false, useLock = false, useQos = false, useCache = true, useProt = true)

  /** Master port of a DMA with `readers` DDR -> key channels: one more id bit per doubling of readers
    * (the read arbiter's select); two readers give [[axiConfig]]. */
  def axiConfigFor(readers: Int): Axi4Config = axiConfig.copy(idWidth = 1 + log2Up(readers))

  /** Config seen by one channel (behind a 2-input arbiter). */
  def channelAxiConfig: Axi4Config = Axi4ReadOnlyArbiter.getInputConfig(axiConfig, 2)

  object Err {
    val AXI        = 1 // an AXI response was SLVERR/DECERR
    val OVERFLOW   = 2 // the stream carried more than LEN bytes
    val MISALIGNED = 3 // ADDR not 32-byte aligned, or with two segments an address or the first length not
                       // a multiple of the stream beat (found at START, no bus access)
  }
}

/** Control/status of one channel, as seen from the register file (master side). */
case class DmaChannelIo() extends Bundle with IMasterSlave {
  val start, abort = Bool()           // one-cycle pulses
  val addr, len    = UInt(32 bits)    // sampled at START
  val addr2, len2  = UInt(32 bits)    // readers: a second segment read after the first (len2 = 0: none)
  val busy, done, error, aborted = Bool()
  val code         = Bits(8 bits)
  val bytes        = UInt(32 bits)
  val doneEvent, errorEvent = Bool() // one-cycle pulses when the transfer ends

  override def asMaster(): Unit = {
    out(start, abort, addr, len, addr2, len2)
    in(busy, done, error, aborted, code, bytes, doneEvent, errorEvent)
  }
}

/** Status bits and end-of-transfer events common to readers and writers. */
class DmaChannelState(io: DmaChannelIo) extends Area {
  val busy    = RegInit(False)
  val done    = RegInit(False)
  val error   = RegInit(False)
  val aborted = RegInit(False)
  val code    = Reg(Bits(8 bits)) init 0
  val doneEvent, errorEvent = Bool()
  doneEvent  := False
  errorEvent := False

  def begin(): Unit = { busy := True; done := False; error := False; aborted := False; code := 0 }
  def finishOk(): Unit = { busy := False; done := True; doneEvent := True }
  def finishError(c: Bits): Unit = { busy := False; error := True; code := c; errorEvent := True }
  def finishError(c: Int): Unit = finishError(B(c, 8 bits))
  def finishAbort(): Unit = { busy := False; aborted := True }

  io.busy := busy
  io.done := done
  io.error := error
  io.aborted := aborted
  io.code := code
  io.doneEvent := doneEvent
  io.errorEvent := errorEvent

  /** Beats until the next 4 KiB boundary from a 32-byte aligned address (1..128). */
  def beatsToPage(addr: UInt): UInt = U(DmaBus.beatsPerPage, 8 bits) - addr(11 downto 5).resize(8)

  /** min(a, b) on unsigned values of equal width. */
  def umin(a: UInt, b: UInt): UInt = (a < b) ? a | b
}
