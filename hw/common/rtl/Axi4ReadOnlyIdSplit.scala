package common

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** One AXI4 read master over `ports` slaves, chosen by a field of the AR id: bits `selLow` up `selWidth` of
  * it, modulo `ports`. Read data of the ports merge back round-robin, beat by beat.
  *
  * Why it keeps AXI's ordering: every id goes to one port always (the id decides the port), and each port
  * answers an id in order, so each id's beats arrive in order; beats of different ids may interleave, which
  * AXI allows and an Axi4ReadOnlyArbiter above routes per beat. Select a field that holds a whole master of
  * that arbiter (its `chosen` bits, the id's top), so a master whose own ids expect one in-order stream keeps
  * it. Used for a table-engine unit's reads over several DDR ports (soc.SocTableEngineConfig.readPortsPerUnit). */
case class Axi4ReadOnlyIdSplit(config: Axi4Config, ports: Int, selLow: Int, selWidth: Int) extends Component {
  require(ports >= 2, "a split over one port is the port itself")
  require(selLow >= 0 && selWidth >= 1 && selLow + selWidth <= config.idWidth,
    s"the select field (bits $selLow + $selWidth) must lie inside the ${config.idWidth}-bit id")
  val io = new Bundle {
    val input = slave(Axi4ReadOnly(config))
    val outputs = Vec(master(Axi4ReadOnly(config)), ports)
  }
  private val field = io.input.ar.id(selLow, selWidth bits)
  val select = if (isPow2(ports)) field.resize(log2Up(ports)) else (field % ports).resize(log2Up(ports))
  val arDemux = StreamDemux(io.input.ar, select, ports)
  for ((out, ar) <- io.outputs.zip(arDemux)) out.ar << ar
  io.input.r << StreamArbiterFactory().roundRobin.noLock.on(io.outputs.map(_.r))
}

/** `common.GenerateAxi4ReadOnlyIdSplit [--ports 2|3|4] --out DIR`: the split of a table-engine unit's read master
  * (16-byte beats, the unit's 5-bit id: the engine's master in bits 1-3) over `ports` slaves, for its testbench
  * (hw/common/dv/axi_id_split_harness.cpp). */
object GenerateAxi4ReadOnlyIdSplit extends Generator("build/gen/axi_id_split", Gen.intOpt("ports", 2, Seq(2, 3, 4))) {
  val config = Axi4Config(addressWidth = 32, dataWidth = 128, idWidth = 5, useRegion = false, useLock = false,
    useQos = false, useCache = false, useProt = false)
  def top(a: Gen.Args) = Axi4ReadOnlyIdSplit(config, a.int("ports"), selLow = 1, selWidth = 3)
}
