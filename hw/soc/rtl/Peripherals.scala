package soc

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.com.uart._

/** Simulation control block (0xF000_F000). Offset 0 SIM_EXIT: writing `(code << 1) | 1` latches
  * `exit.valid` and the code, which the Verilator harness polls every cycle to end the run. Offset 4
  * SIM_ARG: read-only word driven by the harness (`--arg N`) so one firmware can run several scenarios.
  * Offset 8 SIM_ID: reads 0x53494D43 ("SIMC").
  * Board builds leave the block out (reads return 0 through the decoder's default). */
case class Apb3SimCtrl() extends Component {
  val io = new Bundle {
    val apb  = slave(Apb3(Apb3Config(addressWidth = 12, dataWidth = 32, useSlaveError = false)))
    val arg  = in UInt (32 bits)
    val exit = master(Flow(UInt(31 bits)))
  }
  val bus = Apb3SlaveFactory(io.apb)
  // Sticky, so the harness sees it whatever its polling phase and a second write cannot change the code.
  val exitValid = RegInit(False)
  val exitCode  = Reg(UInt(31 bits)) init 0
  import SocMap.Regs.{offset, simCtrl}
  bus.onWrite(offset(simCtrl, "EXIT")) {
    when(!exitValid && io.apb.PWDATA(0)) {
      exitValid := True
      exitCode  := io.apb.PWDATA(31 downto 1).asUInt
    }
  }
  bus.read(exitValid ## exitCode, offset(simCtrl, "EXIT")) // read back: bit31 exited, [30:0] code (handy for debugging)
  bus.read(io.arg, offset(simCtrl, "ARG"))
  bus.read(B(SocMap.simIdMagic, 32 bits), offset(simCtrl, "ID")) // "SIMC": lets firmware tell simulation from a board
  io.exit.valid   := exitValid
  io.exit.payload := exitCode
}

/** Stand-in for the simulation control block on boards: reads 0 and ignores writes, so firmware can
  * probe SIM_ID/SIM_ARG without an access fault (docs/architecture.md: "absent (reads 0)"). */
case class Apb3Absent() extends Component {
  val io = new Bundle {
    val apb = slave(Apb3(Apb3Config(addressWidth = 12, dataWidth = 32, useSlaveError = false)))
  }
  io.apb.PREADY := True
  io.apb.PRDATA := 0
}

/** Level interrupt controller (0xF000_2000). Every source is a level that its own block holds until
  * firmware clears it there (UART FIFO level, IP/DMA IRQ_STATUS & IRQ_ENABLE), so no latching is needed
  * here: PENDING (0x0, RO) shows the raw lines, ENABLE (0x4, RW, reset 0) masks them, and the machine
  * external interrupt is `(PENDING & ENABLE) != 0`. */
case class Apb3IrqCtrl(width: Int) extends Component {
  val io = new Bundle {
    val apb     = slave(Apb3(Apb3Config(addressWidth = 12, dataWidth = 32, useSlaveError = false)))
    val sources = in Bits (width bits)
    val irq     = out Bool ()
  }
  val bus     = Apb3SlaveFactory(io.apb)
  val pending = RegNext(io.sources) init 0 // registered: keeps the IRQ path out of the sources' logic
  val enable  = bus.createReadAndWrite(Bits(width bits), SocMap.Regs.offset(SocMap.Regs.irqCtrl, "ENABLE")) init 0
  bus.read(pending, SocMap.Regs.offset(SocMap.Regs.irqCtrl, "PENDING"))
  io.irq := RegNext((pending & enable).orR) init False
}

/** APB3 slave → AXI4-Lite master, one access at a time (APB itself never has two in flight).
  * Used for the compaction IP, whose register block is AXI4-Lite (Peng et al., "LSM-Tree Based Hardware System Design for Compaction Acceleration", II.B). AW and W are issued
  * together but may be accepted in either order; PREADY rises with the B or R response, and an error
  * response becomes PSLVERR. */
case class Apb3ToAxiLite4(apbConfig: Apb3Config, axiConfig: AxiLite4Config) extends Component {
  require(apbConfig.dataWidth == axiConfig.dataWidth)
  val io = new Bundle {
    val apb = slave(Apb3(apbConfig))
    val axi = master(AxiLite4(axiConfig))
  }
  val access = io.apb.PSEL(0) && io.apb.PENABLE
  val write  = io.apb.PWRITE
  // Which request channels of the current access have already handshaken.
  val awDone, wDone, arDone = RegInit(False)

  io.axi.aw.valid        := access && write && !awDone
  io.axi.aw.payload.addr := io.apb.PADDR.resized
  io.axi.aw.payload.prot := B"010" // data, non-secure, unprivileged
  io.axi.w.valid         := access && write && !wDone
  io.axi.w.payload.data  := io.apb.PWDATA
  io.axi.w.payload.strb  := B((1 << (axiConfig.dataWidth / 8)) - 1, axiConfig.dataWidth / 8 bits)
  io.axi.ar.valid        := access && !write && !arDone
  io.axi.ar.payload.addr := io.apb.PADDR.resized
  io.axi.ar.payload.prot := B"010"
  io.axi.b.ready         := True
  io.axi.r.ready         := True

  when(io.axi.aw.fire) { awDone := True }
  when(io.axi.w.fire) { wDone := True }
  when(io.axi.ar.fire) { arDone := True }
  val finished = io.axi.b.fire || io.axi.r.fire
  when(finished) { awDone := False; wDone := False; arDone := False }

  io.apb.PREADY := finished
  io.apb.PRDATA := io.axi.r.payload.data
  if (apbConfig.useSlaveError)
    io.apb.PSLVERROR := Mux(io.axi.b.fire, io.axi.b.payload.resp, io.axi.r.payload.resp) =/= AxiLite4.resp.OKAY
}

/** The SoC's UART (SpinalHDL's Apb3UartCtrl) with a time base that rests while no byte moves, so that a
  * simulation clock gate can stop the whole UART then (LsmcSoc) and the gated and free-running designs
  * still behave alike. The library's baud divider and the transmitter's bit timer count on every cycle
  * whatever the line does, so a stopped clock would shift their phase; here, in every build (boards
  * too), the divider is held at 0 and the transmitter's bit timer at 0 while the transmitter is idle
  * with nothing queued and the receiver is idle on a line that has been high through its synchroniser
  * and all its samples. A frame then starts from the same state every time: the first start bit goes
  * out a bit time after the byte is queued (not 0 to 1 bit times, as with the free-running divider), and
  * the receiver's sampling starts at the start bit's edge. The registers still moving while idle (the
  * receiver's bit timer and counter, both parities, the transmitter's bit counter) are reloaded when a
  * frame starts, before they are read. */
object SimUart {
  private def field[T](obj: AnyRef, name: String): T = obj.getClass.getMethod(name).invoke(obj).asInstanceOf[T]

  /** Rework `uart` as above; returns (in the caller's component) "idle": nothing in the UART changes
    * at the next edge unless its APB port is accessed. */
  def restWhenIdle(uart: Apb3UartCtrl): Bool = {
    val ctrl = uart.uartCtrl
    val (tx, rx) = (ctrl.tx, ctrl.rx)
    val txWrite = field[Stream[Bits]](tx.io, "write")
    val txState = field[SpinalEnumCraft[UartCtrlTxState.type]](field[Area](tx, "stateMachine"), "state")
    tx.rework {
      val timer = field[Counter](field[Area](tx, "clockDivider"), "counter")
      when(txState === UartCtrlTxState.IDLE && !txWrite.valid)(timer.clear())
    }
    val sampler = field[Area](rx, "sampler")
    val rxState = field[SpinalEnumCraft[UartCtrlRxState.type]](field[Area](rx, "stateMachine"), "state")
    // the line's synchroniser: a BufferCC component inside the receiver (its last stage is `synchronizer`)
    val sync = rx.children.collectFirst { case b: BufferCC[_] => b }
      .getOrElse(SpinalError("SimUart: no BufferCC in the UART receiver (SpinalHDL's UartCtrlRx changed)"))
    val idle = ctrl.rework {
      val lineHigh = ctrl.io.uart.rxd && sync.buffers.map(_.asInstanceOf[Bool].pull()).reduce(_ && _) &&
        field[Bool](sampler, "synchronizer").pull() &&
        field[Vec[Bool]](sampler, "samples").pull().asBits.andR && field[Bool](sampler, "value").pull()
      val idle = txState.pull() === UartCtrlTxState.IDLE && !txWrite.valid &&
        rxState.pull() === UartCtrlRxState.IDLE && lineHigh
      when(idle)(field[UInt](field[Area](ctrl, "clockDivider"), "counter") := 0)
      out(CombInit(idle)).setName("simIdle")
    }
    idle.pull()
  }
}
