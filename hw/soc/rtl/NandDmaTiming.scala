package soc

import common.{Gen, Generator}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.misc.SizeMapping

/** The NAND DMA path of LsmcSoc alone, for an out-of-context timing check on the ECP5 (docs/boards.md,
  * *Open ECP5 flow*): one NAND controller, its upsizer, the crossbar-side stage (`LsmcSoc.nandLinkStage`;
  * left out with `stage = false`), the NAND crossbar and DMA port 0's crossbar beside a second master (the
  * compaction unit's AXI, from pins), both masters through the DMA port slice before it
  * (`LsmcSoc.dmaPortSlice`, off in the board builds; left out with `slice = false`), the register slice between
  * each write decoder and the port's write arbiter as the boards have it (`LsmcSoc.arbiterSlice`; left out with
  * `arbiterSlice = false`), then a full register slice at the port as the boards have
  * (lsmc/boards/litex_soc.py `_axi_register_slice`). Out of context the pins are not timed, so the slice puts
  * every path between the port and the controller inside the design. */
class NandDmaTiming(stage: Boolean, slice: Boolean = true, arbiterSlice: Boolean = true) extends Component {
  val cfg = LsmcSocConfig.tableIII128.copy(nand = SocNandConfig(channels = 1))
  val p = _root_.nand.NandParams(targets = cfg.nand.targets)
  val io = new Bundle {
    val apb = slave(Apb3(p.apbConfig))
    val irq = out Bool()
    val nand = master(_root_.nand.NandPins(p.targets))
    val unit = slave(Axi4(_root_.dma.DmaBus.axiConfigFor(cfg.compaction.ways)))
    val port = master(Axi4(cfg.ddrDmaAxiConfig))
  }
  val ctrl = new _root_.nand.NandController(p)
  ctrl.io.apb <> io.apb
  io.irq := ctrl.io.irq
  ctrl.io.nand <> io.nand
  val up = Axi4Upsizer(ctrl.io.axi.config, ctrl.io.axi.config.copy(dataWidth = cfg.dma.portWidth), 4)
  up.io.input << ctrl.io.axi
  val link = Axi4(cfg.nandLinkAxiConfig)
  val nandXbar = Axi4CrossbarFactory()
  nandXbar.addSlave(link, SizeMapping(SocMap.ddrBase, cfg.ddrSize))
  nandXbar.addConnection(if (stage) LsmcSoc.nandLinkStage(up.io.output) else up.io.output, List(link))
  nandXbar.build()
  val port = Axi4(cfg.ddrDmaAxiConfig)
  val portXbar = LsmcSoc.dmaPortCrossbar(arbiterSlice)
  portXbar.addSlave(port, SizeMapping(SocMap.ddrBase, cfg.ddrSize))
  private def sliced(a: Axi4) = if (slice) LsmcSoc.dmaPortSlice(a) else a
  portXbar.addConnection(sliced(io.unit), List(port))
  portXbar.addConnection(sliced(link), List(port))
  portXbar.build()
  io.port << port.pipelined(aw = StreamPipe.FULL, w = StreamPipe.FULL, b = StreamPipe.FULL,
    ar = StreamPipe.FULL, r = StreamPipe.FULL)
}

/** `soc.NandDmaTiming [--out DIR] [--no-stage] [--no-slice] [--no-arbiter-slice]`: DIR/NandDmaTiming.v (default build/gen/nand_dma_timing). */
object NandDmaTiming extends Generator("build/gen/nand_dma_timing",
  Gen.flagOpt("no-stage", "without LsmcSoc's stage between the upsizer and the NAND crossbar (the path before it)"),
  Gen.flagOpt("no-slice", "without the DMA port slice before DMA port 0's crossbar (LsmcSoc.dmaPortSlice; the board builds' way)"),
  Gen.flagOpt("no-arbiter-slice", "without the slice between the write decoders and DMA port 0's write arbiter (LsmcSoc.arbiterSlice; the path before it)")) {
  def top(a: Gen.Args) = new NandDmaTiming(!a.flag("no-stage"), !a.flag("no-slice"), !a.flag("no-arbiter-slice"))
    .setDefinitionName("NandDmaTiming")
}
