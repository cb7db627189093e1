package compaction

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._

/** Top of the compaction IP (docs/architecture.md, "Compaction IP"; hw/ip/compaction/doc/compaction-ip.md).
  *
  * key0/key1 -> input port (length and `last` checks, error-state discard) -> width converter to
  * 128-bit entries -> Decoder -> FIFO -> ComparerMerger -> FIFO -> Encoder -> FIFO -> width converter
  * -> capacity gate -> out; ComparerMerger -> FIFO -> capacity gate -> invalid.
  *
  * Every datapath register sits in a clock domain whose synchronous reset is the IP reset OR a
  * one-cycle clear pulse issued at START and at SOFT_RESET: each job begins from an empty pipeline,
  * and a soft reset empties every FIFO and stage at once. Registers and job control stay in the
  * main domain.
  *
  * `counterDomain`: THROUGHPUT_COUNTER's clock domain (CompactionRegs), the IP's own by default.
  */
case class CompactionIp(cfg: CompactionConfig = CompactionConfig(), withDocs: Boolean = false,
                        counterDomain: Option[ClockDomain] = None) extends Component {
  val W = cfg.dataWidth
  val R = cfg.beatsPerEntry
  val K = cfg.ways
  val io = new Bundle {
    val ctrl = slave(AxiLite4(AxiLite4Config(addressWidth = 12, dataWidth = 32)))
    val keys = Vec(slave Stream (Fragment(Bits(W bits))), K)   // key0 newest .. key<K-1> oldest
    val out = master Stream (Fragment(Bits(W bits)))   // merged run
    val invalid = master Stream (Fragment(Bits(32 bits)))
    val irq = spinal.core.out(Bool())
    def key0: Stream[Fragment[Bits]] = keys(0) // the two-way names, for existing instantiations
    def key1: Stream[Fragment[Bits]] = keys(1)
  }
  // Port names io_key0 .. io_key<K-1> (as the two-way IP always had), not io_keys_0.
  io.keys.zipWithIndex.foreach { case (k, i) => k.setName(s"io_key$i") }
  def key(i: Int): Stream[Fragment[Bits]] = io.keys(i)

  val regs = CompactionRegs(cfg, withDocs, counterDomain)
  regs.io.ctrl <> io.ctrl
  io.irq := regs.io.irq

  object State extends SpinalEnum {
    val IDLE, CLEAR, RUN, DONE, ERROR = newElement()
  }

  val control = new Area {
    val state = Reg(State()) init (State.IDLE)
    // Job configuration, latched at START so register writes during a job cannot disturb it.
    val group = Reg(UInt(9 bits)) init (16)
    val inBytes = Vec.fill(K)(Reg(UInt(32 bits)) init (0))
    val outCapacity, invCapacity = Reg(UInt(32 bits)) init (0)
    val errCode = Reg(UInt(4 bits)) init (0)
    val errInput = Reg(UInt(cfg.inputBits bits)) init (0)
    val errIndex = Reg(UInt(32 bits)) init (0)
    val clearPipe = Reg(Bool()) init (False) // datapath reset during the next cycle
    val window = Reg(Bool()) init (False)

    val running = state === State.RUN
    val draining = state === State.ERROR
    val startReq = regs.io.start && (state === State.IDLE || state === State.DONE)
    val groupOk = regs.io.group >= 2 && regs.io.group <= 256
    val allEmpty = regs.io.inBytes.map(_ < 16).reduce(_ && _)
  }

  // Same clock as the main domain (so no clock crossing), reset = IP reset OR the clear pulse. In
  // Verilator the clock stops outside a job (common.SimClockGate; synthesis sees the main clock): in
  // IDLE and DONE nothing leaves the datapath (its ports, output gates and counts all need RUN, or ERROR
  // for the drain), and the next job enters through CLEAR, whose reset empties it. So the registers
  // and counters of the main domain (THROUGHPUT_COUNTER in mode 1 counts every cycle) no longer keep
  // the whole datapath evaluated.
  val dpActive = control.state === State.CLEAR || control.state === State.RUN || control.state === State.ERROR ||
    control.clearPipe
  val dpClockDomain = common.SimClockGate(dpActive).copy(
    reset = ClockDomain.current.isResetActive || control.clearPipe,
    config = ClockDomain.current.config.copy(resetKind = SYNC, resetActiveLevel = HIGH)
  )

  val datapath = new ClockingArea(dpClockDomain) {
    import control.{running, draining}

    /** Input port: consumes at most the declared complete entries, checks `last` against the declared
      * length, discards in the error state, and widens beats to 128-bit entries (pass-through at 128).
      * A register slice (skid buffer) follows the gate, so `key.ready` is a function of registers only. */
    class InputPort(key: Stream[Fragment[Bits]], bytes: UInt) extends Area {
      val consumed = Reg(UInt(33 bits)) init (0)
      val complete = (bytes(31 downto 4) ## B(0, 4 bits)).asUInt.resize(33)
      // `open` (consumed < complete) is a register computed a cycle ahead for both outcomes of this
      // cycle's beat, so the 33-bit compare never reaches the handshake (and the throughput window
      // it opens). No reset: in the CLEAR cycle (this domain's reset) it is set for consumed = 0.
      val open = Reg(Bool())
      val accepted = Bool()
      open := Mux(control.clearPipe, complete =/= 0,
        Mux(accepted, consumed + cfg.beatBytes < complete, consumed < complete))
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

      accepted := beat.fire && !stuffing
      when(beat.fire) {
        if (R > 1) beatInEntry := beatInEntry + 1
        when(!stuffing) { consumed := consumed + cfg.beatBytes }
        when(!stuffing && truncates)(stuffing := True)
        when(stuffing && entryEnd)(stuffing := False)
      }
      val words = Mux(accepted, U(cfg.beatWords, 3 bits), U(0, 3 bits))

      val entryBits = Stream(Bits(R * (W + 2) bits))
      StreamWidthAdapter(beat.s2mPipe().m2sPipe(), entryBits) // first beat in the low bits (little-endian entry)
      val entry = entryBits.translateWith {
        val d = DecoderInput()
        val slices = entryBits.payload.subdivideIn(R slices)
        d.data := Cat(slices.map(_(W + 1 downto 2)))
        d.truncated := slices.map(_(1)).orR
        d.lastBad := slices.map(_(0)).orR
        d
      }
    }

    val ports = (0 until K).map(i => new InputPort(key(i), control.inBytes(i)).setName(s"port$i"))
    def port0 = ports(0)
    def port1 = ports(1)

    val decoders = (0 until K).map(i => Decoder().setName(s"decoder$i"))
    val keyFifos = (0 until K).map(i => StreamFifo(KeyRecord(), cfg.inFifoDepth).setName(s"keyFifo$i"))
    for (i <- 0 until K) {
      val dec = decoders(i)
      dec.io.input << ports(i).entry
      dec.io.entries := control.inBytes(i)(31 downto 4)
      dec.io.remainder := control.inBytes(i)(3 downto 0) =/= 0
      dec.io.group := control.group
      keyFifos(i).io.push << dec.io.output
    }

    /** The merge tree: log2(K) levels of comparer_mergers; level l merges pairs of 2^l-run streams.
      * Each node's output passes a full register slice (s2mPipe + m2sPipe): no ready or valid path
      * spans two levels, and the slice keeps one record per clock. */
    // A slice after each key FIFO too: the first level's compare decides its ready, which must not
    // reach the FIFO's read pointer and RAM address in the same clock.
    var level: Seq[Stream[MergeRecord]] = keyFifos.map { f =>
      val head = f.io.pop.s2mPipe().m2sPipe()
      head.translateWith {
        val r = MergeRecord(1)
        r.key := head.payload.key
        r.len := head.payload.len
        r.addrs(0) := head.payload.addr
        r.present(0) := !head.payload.endOnly
        r.last := head.payload.last
        r.endOnly := head.payload.endOnly
        r
      }
    }
    val mergers = scala.collection.mutable.ArrayBuffer[ComparerMerger]()
    for (l <- 0 until cfg.levels) {
      val n = 1 << l
      level = level.grouped(2).map { pair =>
        val m = ComparerMerger(n).setName(s"merger_l${l}_${mergers.size}")
        mergers += m
        m.io.in0 << pair(0)
        m.io.in1 << pair(1)
        m.io.out.s2mPipe().m2sPipe()
      }.toSeq
    }
    val root = EndFixer(K)
    root.io.input << level.head

    /** Split: the newest present run's address stays with the key, the other present runs' addresses
      * (and the end of the merge) go to the invalid serializer. The split is computed from the
      * EndFixer's output and passes a full register slice before the two FIFOs: the FIFOs' readies
      * and `needInv` (which depends on the payload) meet in registers, not in the EndFixer's hold
      * register and the root merger's head enables (the critical path on the ECP5 before; +1 clock
      * of latency per job, one record per clock stays). */
    val mergedFifo = StreamFifo(KeyRecord(), cfg.keyFifoDepth)
    val invListFifo = StreamFifo(InvList(K), cfg.invFifoDepth)
    val split = new Area {
      val toSplit = root.io.output.translateWith {
        val r = root.io.output.payload
        val winner = OHMasking.first(r.present)
        val o = SplitRecord(K)
        o.rec.key := r.key
        o.rec.len := r.len
        o.rec.addr := MuxOH(winner, r.addrs)
        o.rec.last := r.last
        o.rec.endOnly := r.endOnly
        o.inv.addrs := r.addrs
        o.inv.mask := r.present & ~winner
        o.inv.last := r.last || r.endOnly
        o.needInv := o.inv.mask =/= 0 || o.inv.last
        o
      }
      val sliced = toSplit.s2mPipe().m2sPipe()
      val needInv = sliced.payload.needInv
      val keysReady = mergedFifo.io.push.ready
      val invReady = invListFifo.io.push.ready || !needInv
      sliced.ready := keysReady && invReady
      mergedFifo.io.push.valid := sliced.valid && invReady
      mergedFifo.io.push.payload := sliced.payload.rec
      invListFifo.io.push.valid := sliced.valid && keysReady && needInv
      invListFifo.io.push.payload := sliced.payload.inv
    }
    val invSerializer = InvSerializer(K)
    invSerializer.io.input << invListFifo.io.pop

    val encoder = Encoder()
    encoder.io.input << mergedFifo.io.pop
    encoder.io.group := control.group

    val outFifo = StreamFifo(EncodedEntry(), cfg.outFifoDepth)
    outFifo.io.push << encoder.io.output

    /** Output gate: a beat is offered only if it fits the capacity. `fits` is a register computed one
      * cycle ahead (bytes after this cycle's transfer + one beat <= capacity), and a register slice
      * sits before the gate, so `io.out.ready` ends in registers and `valid` leaves from registers. */
    class OutGate(src: Stream[Fragment[Bits]], dst: Stream[Fragment[Bits]], beatBytes: Int, capacity: UInt) extends Area {
      val slice = src.s2mPipe().m2sPipe()
      val bytes = Reg(UInt(33 bits)) init (0)
      val nextBytes = bytes + Mux(dst.fire, U(beatBytes, 33 bits), U(0, 33 bits))
      // Both outcomes computed from registers, `dst.fire` (the consumer's ready) only selects.
      val fitsIdle = bytes + beatBytes <= capacity.resize(33)
      val fitsFire = bytes + 2 * beatBytes <= capacity.resize(33)
      val fits = RegNext(Mux(dst.fire, fitsFire, fitsIdle)) init (False)
      // A beat already offered when an error stops the IP stays offered until taken (a stream never
      // withdraws `valid`); it fitted the capacity. Nothing new is offered after the error.
      val pending = RegNext(dst.valid && !dst.ready) init (False)
      val open = (running && fits) || (draining && pending)
      dst.valid := slice.valid && open
      dst.payload := slice.payload
      slice.ready := dst.ready && open
      val overflow = running && slice.valid && !fits
      bytes := nextBytes
    }

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
      // The real-key flag rides along through the gate's slice.
      val frag = beat.translateWith {
        val f = Fragment(Bits(W + 1 bits))
        f.fragment := beat.payload(W + 1 downto 2) ## beat.payload(0)
        f.last := beat.payload(1)
        f
      }
      val gated = Stream(Fragment(Bits(W + 1 bits)))
      val gate = new OutGate(frag, gated, cfg.beatBytes, control.outCapacity)
      io.out.valid := gated.valid
      io.out.fragment := gated.fragment(W downto 1)
      io.out.last := gated.last
      gated.ready := io.out.ready
      val overflow = gate.overflow
      val overflowIndex = gate.bytes(32 downto 4).resize(32)
      val words = Mux(io.out.fire, U(cfg.beatWords, 3 bits), U(0, 3 bits))
      val realKey = io.out.fire && gated.fragment(0)
      val finished = Reg(Bool()) init (False)
      when((io.out.fire && io.out.last) || encoder.io.emptyDone)(finished := True)
    }

    val invFifo = StreamFifo(Fragment(Bits(32 bits)), cfg.invFifoDepth)
    invFifo.io.push << invSerializer.io.output

    val invPort = new Area {
      val gate = new OutGate(invFifo.io.pop, io.invalid, 4, control.invCapacity)
      val overflow = gate.overflow
      val overflowIndex = gate.bytes(32 downto 2).resize(32)
      val finished = Reg(Bool()) init (False)
      when((io.invalid.fire && io.invalid.last) || invSerializer.io.invEmpty)(finished := True)
    }

    val done = running && outPort.finished && invPort.finished
  }

  // Job control state machine (main domain).
  val fsm = new Area {
    import control._
    val dp = datapath
    val doneEvent = False
    val errorEvent = False
    val firstBeat = running && dp.ports.map(_.accepted).reduce(_ || _)

    def fail(code: UInt, input: UInt, index: UInt): Unit = {
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
        // First detected wins; on a tie the lowest input, then the output capacities.
        val decErr = dp.decoders.map(_.io.error.valid)
        val firstInput = UInt(cfg.inputBits bits)
        firstInput := 0
        for (i <- K - 1 downto 0) when(decErr(i))(firstInput := i) // the lowest input is assigned last
        when(decErr.reduce(_ || _)) {
          fail(Vec(dp.decoders.map(_.io.error.code))(firstInput), firstInput,
            Vec(dp.decoders.map(_.io.error.index))(firstInput))
        } elsewhen (dp.outPort.overflow) {
          fail(U(ErrorCode.OUT_OVERFLOW, 4 bits), U(0, cfg.inputBits bits), dp.outPort.overflowIndex)
        } elsewhen (dp.invPort.overflow) {
          fail(U(ErrorCode.INV_OVERFLOW, 4 bits), U(0, cfg.inputBits bits), dp.invPort.overflowIndex)
        } elsewhen (dp.done) {
          state := State.DONE
          doneEvent := True
        }
      }
    }
    when(startReq) {
      group := regs.io.group.resize(9)
      for (i <- 0 until K) inBytes(i) := regs.io.inBytes(i)
      outCapacity := regs.io.outCapacity
      invCapacity := regs.io.invCapacity
      errCode := 0
      errInput := 0
      errIndex := 0
      when(groupOk) {
        state := State.CLEAR
        clearPipe := True
        window := allEmpty
      } otherwise {
        fail(U(ErrorCode.BAD_GROUP, 4 bits), U(0, cfg.inputBits bits), U(0, 32 bits))
      }
    }
    when(firstBeat)(window := True)
    when(doneEvent || errorEvent)(window := False)
    when(regs.io.softReset) {
      state := State.IDLE
      errCode := 0
      errInput := 0
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
  for (i <- 0 until K) regs.io.keyWords(i) := datapath.ports(i).words
  regs.io.outKey := datapath.outPort.realKey
}

object CompactionIp {
  /** `CompactionIp(dataWidth)` with the default FIFO depths. */
  def apply(dataWidth: Int): CompactionIp = CompactionIp(CompactionConfig(dataWidth = dataWidth))
}
