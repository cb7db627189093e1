package compaction

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._

/** Top of the compaction IP (docs/architecture.md, "Compaction IP"; docs/compaction-ip.md).
  *
  * key0/key1 -> input port (length and `last` checks, error-state discard) -> width converter to
  * 128-bit entries -> Decoder -> FIFO -> ComparerMerger -> FIFO -> Encoder -> FIFO -> width converter
  * -> capacity gate -> out; ComparerMerger -> FIFO -> capacity gate -> invalid.
  *
  * Every datapath register sits in a clock domain whose synchronous reset is the IP reset OR a
  * one-cycle clear pulse issued at START and at SOFT_RESET: each job begins from an empty pipeline,
  * and a soft reset empties every FIFO and stage at once. Registers and job control stay in the
  * main domain.
  */
case class CompactionIp(cfg: CompactionConfig = CompactionConfig(), withDocs: Boolean = false) extends Component {
  val W = cfg.dataWidth
  val R = cfg.beatsPerEntry
  val io = new Bundle {
    val ctrl = slave(AxiLite4(AxiLite4Config(addressWidth = 12, dataWidth = 32)))
    val key0 = slave Stream (Fragment(Bits(W bits)))   // newer run
    val key1 = slave Stream (Fragment(Bits(W bits)))   // older run
    val out = master Stream (Fragment(Bits(W bits)))   // merged run
    val invalid = master Stream (Fragment(Bits(32 bits)))
    val irq = spinal.core.out(Bool())
  }

  val regs = CompactionRegs(cfg, withDocs)
  regs.io.ctrl <> io.ctrl
  io.irq := regs.io.irq

  object State extends SpinalEnum {
    val IDLE, CLEAR, RUN, DONE, ERROR = newElement()
  }

  val control = new Area {
    val state = Reg(State()) init (State.IDLE)
    // Job configuration, latched at START so register writes during a job cannot disturb it.
    val group = Reg(UInt(9 bits)) init (16)
    val in0Bytes, in1Bytes = Reg(UInt(32 bits)) init (0)
    val outCapacity, invCapacity = Reg(UInt(32 bits)) init (0)
    val errCode = Reg(UInt(4 bits)) init (0)
    val errInput = Reg(Bool()) init (False)
    val errIndex = Reg(UInt(32 bits)) init (0)
    val clearPipe = Reg(Bool()) init (False) // datapath reset during the next cycle
    val window = Reg(Bool()) init (False)

    val running = state === State.RUN
    val draining = state === State.ERROR
    val startReq = regs.io.start && (state === State.IDLE || state === State.DONE)
    val groupOk = regs.io.group >= 2 && regs.io.group <= 256
    val bothEmpty = regs.io.in0Bytes < 16 && regs.io.in1Bytes < 16
  }

  // Same clock as the main domain (so no clock crossing), reset = IP reset OR the clear pulse.
  val dpClockDomain = ClockDomain.current.copy(
    reset = ClockDomain.current.isResetActive || control.clearPipe,
    config = ClockDomain.current.config.copy(resetKind = SYNC, resetActiveLevel = HIGH)
  )

  val datapath = new ClockingArea(dpClockDomain) {
    import control.{running, draining}

    /** Input port: consumes at most the declared complete entries, checks `last` against the declared
      * length, discards in the error state, and widens beats to 128-bit entries (pass-through at 128). */
    class InputPort(key: Stream[Fragment[Bits]], bytes: UInt) extends Area {
      val consumed = Reg(UInt(33 bits)) init (0)
      val complete = (bytes(31 downto 4) ## B(0, 4 bits)).asUInt.resize(33)
      val open = consumed < complete
      val expectLast = consumed + cfg.beatBytes >= bytes.resize(33)
      val beatInEntry = (R > 1) generate (Reg(UInt(log2Up(R) bits)) init (0))
      val entryEnd = if (R == 1) True else beatInEntry === R - 1
      // An early `last` inside an entry: the producer sends nothing more, so the port completes the
      // entry itself with zero beats flagged `truncated` (the decoder then reports LENGTH, no hang).
      val stuffing = Reg(Bool()) init (False)
      val truncates = key.last && !entryEnd

      val beat = Stream(Bits(W + 2 bits))
      beat.valid := running && (stuffing || (key.valid && open))
      beat.payload := Mux(stuffing, B(0, W bits) ## True ## False,
        key.fragment ## truncates ## (entryEnd && (key.last =/= expectLast)))
      key.ready := draining || (running && open && !stuffing && beat.ready)

      val accepted = beat.fire && !stuffing
      when(beat.fire) {
        if (R > 1) beatInEntry := beatInEntry + 1
        when(!stuffing) { consumed := consumed + cfg.beatBytes }
        when(!stuffing && truncates)(stuffing := True)
        when(stuffing && entryEnd)(stuffing := False)
      }
      val words = Mux(accepted, U(cfg.beatWords, 3 bits), U(0, 3 bits))

      val entryBits = Stream(Bits(R * (W + 2) bits))
      StreamWidthAdapter(beat, entryBits) // first beat in the low bits (little-endian entry)
      val entry = entryBits.translateWith {
        val d = DecoderInput()
        val slices = entryBits.payload.subdivideIn(R slices)
        d.data := Cat(slices.map(_(W + 1 downto 2)))
        d.truncated := slices.map(_(1)).orR
        d.lastBad := slices.map(_(0)).orR
        d
      }
    }

    val port0 = new InputPort(io.key0, control.in0Bytes)
    val port1 = new InputPort(io.key1, control.in1Bytes)

    val decoder0, decoder1 = Decoder()
    for ((dec, port, bytes) <- Seq((decoder0, port0, control.in0Bytes), (decoder1, port1, control.in1Bytes))) {
      dec.io.input << port.entry
      dec.io.entries := bytes(31 downto 4)
      dec.io.remainder := bytes(3 downto 0) =/= 0
      dec.io.group := control.group
    }
    val keyFifo0 = StreamFifo(KeyRecord(), cfg.inFifoDepth)
    val keyFifo1 = StreamFifo(KeyRecord(), cfg.inFifoDepth)
    keyFifo0.io.push << decoder0.io.output
    keyFifo1.io.push << decoder1.io.output

    val merger = ComparerMerger()
    merger.io.in0 << keyFifo0.io.pop
    merger.io.in1 << keyFifo1.io.pop

    val mergedFifo = StreamFifo(KeyRecord(), cfg.keyFifoDepth)
    mergedFifo.io.push << merger.io.keys
    val encoder = Encoder()
    encoder.io.input << mergedFifo.io.pop
    encoder.io.group := control.group

    val outFifo = StreamFifo(EncodedEntry(), cfg.outFifoDepth)
    outFifo.io.push << encoder.io.output

    /** Output side: narrow entries to beats (each beat carries its own `last`/real-key flags), then
      * the capacity gate: a beat that would pass OUT_CAPACITY is never offered. */
    val outPort = new Area {
      val entryBits = outFifo.io.pop.translateWith {
        val e = outFifo.io.pop.payload
        Cat((0 until R).map { i =>
          val isFinal = Bool(i == R - 1)
          e.data(i * W, W bits) ## (e.last && isFinal) ## (e.real && isFinal)
        })
      }
      val beat = Stream(Bits(W + 2 bits))
      StreamWidthAdapter(entryBits, beat)
      val bytes = Reg(UInt(33 bits)) init (0)
      val fits = bytes + cfg.beatBytes <= control.outCapacity.resize(33)
      // A beat already offered when an error stops the IP stays offered until taken (a stream never
      // withdraws `valid`); it fitted the capacity. Nothing new is offered after the error.
      val pending = RegNext(io.out.valid && !io.out.ready) init (False)
      val open = (running && fits) || (draining && pending)
      io.out.valid := beat.valid && open
      io.out.fragment := beat.payload(W + 1 downto 2)
      io.out.last := beat.payload(1)
      beat.ready := io.out.ready && open
      val overflow = running && beat.valid && !fits
      val overflowIndex = bytes(32 downto 4).resize(32)
      when(io.out.fire)(bytes := bytes + cfg.beatBytes)
      val words = Mux(io.out.fire, U(cfg.beatWords, 3 bits), U(0, 3 bits))
      val realKey = io.out.fire && beat.payload(0)
      val finished = Reg(Bool()) init (False)
      when((io.out.fire && io.out.last) || encoder.io.emptyDone)(finished := True)
    }

    val invFifo = StreamFifo(Fragment(Bits(32 bits)), cfg.invFifoDepth)
    invFifo.io.push << merger.io.inv

    val invPort = new Area {
      val bytes = Reg(UInt(33 bits)) init (0)
      val fits = bytes + 4 <= control.invCapacity.resize(33)
      val pending = RegNext(io.invalid.valid && !io.invalid.ready) init (False)
      val open = (running && fits) || (draining && pending)
      io.invalid.valid := invFifo.io.pop.valid && open
      io.invalid.payload := invFifo.io.pop.payload
      invFifo.io.pop.ready := io.invalid.ready && open
      val overflow = running && invFifo.io.pop.valid && !fits
      val overflowIndex = bytes(32 downto 2).resize(32)
      when(io.invalid.fire)(bytes := bytes + 4)
      val finished = Reg(Bool()) init (False)
      when((io.invalid.fire && io.invalid.last) || merger.io.invEmpty)(finished := True)
    }

    val done = running && outPort.finished && invPort.finished
  }

  // Job control state machine (main domain).
  val fsm = new Area {
    import control._
    val dp = datapath
    val doneEvent = False
    val errorEvent = False
    val firstBeat = running && (dp.port0.accepted || dp.port1.accepted)

    def fail(code: UInt, input: Bool, index: UInt): Unit = {
      state := State.ERROR
      errCode := code
      errInput := input
      errIndex := index
      errorEvent := True
    }

    clearPipe := False
    switch(state) {
      is(State.CLEAR) { state := State.RUN }
      is(State.RUN) {
        // First detected wins; on a tie input 0, then input 1, then the output capacities.
        when(dp.decoder0.io.error.valid) {
          fail(dp.decoder0.io.error.code, False, dp.decoder0.io.error.index)
        } elsewhen (dp.decoder1.io.error.valid) {
          fail(dp.decoder1.io.error.code, True, dp.decoder1.io.error.index)
        } elsewhen (dp.outPort.overflow) {
          fail(U(ErrorCode.OUT_OVERFLOW, 4 bits), False, dp.outPort.overflowIndex)
        } elsewhen (dp.invPort.overflow) {
          fail(U(ErrorCode.INV_OVERFLOW, 4 bits), False, dp.invPort.overflowIndex)
        } elsewhen (dp.done) {
          state := State.DONE
          doneEvent := True
        }
      }
    }
    when(startReq) {
      group := regs.io.group.resize(9)
      in0Bytes := regs.io.in0Bytes
      in1Bytes := regs.io.in1Bytes
      outCapacity := regs.io.outCapacity
      invCapacity := regs.io.invCapacity
      errCode := 0
      errInput := False
      errIndex := 0
      when(groupOk) {
        state := State.CLEAR
        clearPipe := True
        window := bothEmpty
      } otherwise {
        fail(U(ErrorCode.BAD_GROUP, 4 bits), False, U(0, 32 bits))
      }
    }
    when(firstBeat)(window := True)
    when(doneEvent || errorEvent)(window := False)
    when(regs.io.softReset) {
      state := State.IDLE
      errCode := 0
      errInput := False
      errIndex := 0
      clearPipe := True
      window := False
    }
  }

  regs.io.busy := control.state === State.CLEAR || control.state === State.RUN
  regs.io.done := control.state === State.DONE
  regs.io.error := control.state === State.ERROR
  regs.io.errCode := control.errCode
  regs.io.errInput := control.errInput
  regs.io.errIndex := control.errIndex
  regs.io.jobStart := control.startReq
  regs.io.doneEvent := fsm.doneEvent
  regs.io.errorEvent := fsm.errorEvent
  regs.io.window := control.window || fsm.firstBeat
  regs.io.outWords := datapath.outPort.words
  regs.io.invAddr := io.invalid.fire
  regs.io.key0Words := datapath.port0.words
  regs.io.key1Words := datapath.port1.words
  regs.io.outKey := datapath.outPort.realKey
}

object CompactionIp {
  /** `CompactionIp(dataWidth)` with the default FIFO depths. */
  def apply(dataWidth: Int): CompactionIp = CompactionIp(CompactionConfig(dataWidth = dataWidth))
}
