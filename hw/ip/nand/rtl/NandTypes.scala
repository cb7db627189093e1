package nand

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb.Apb3Config
import spinal.lib.bus.amba4.axi.Axi4Config

/** Generation parameters of the controller. `bufBytes` bounds one transfer (page + spare); `bch` is the
  * ECC code (t and sector size, see NandBch.scala). `padInputCycles`: register stages the board's pads
  * put ahead of `dq_i` (0: direct pins; boards/nand_pads.py PAD_INPUT_CYCLES behind its IDDR); the PHY
  * moves the SDR sample point that many cycles later, so SAMPLE.DELAY keeps its meaning on every board. */
case class NandParams(targets: Int = 2, bufBytes: Int = 4352, cmdDepth: Int = 8, compDepth: Int = 8, maxSectors: Int = 8,
                      bch: BchParams = BchParams(), padInputCycles: Int = 0) {
  require(padInputCycles >= 0 && padInputCycles <= 3, "padInputCycles: 0..3 (SAMPLE.PAD_CYCLES is 2 bits)")
  require(targets >= 1 && targets <= 2, "the command descriptor has one target bit")
  require(bufBytes % 4 == 0)
  require(isPow2(bch.dataBytes) && bch.dataBytes >= 256, "ECC sector size must be a power of two >= 256")
  require(bch.t <= 14 && maxSectors <= 8 && maxSectors * bch.t <= 255, "corrected-bit counts must fit COMP_STATUS / COMP_SECTORS")
  def sectorShift: Int = log2Up(bch.dataBytes)
  def bufWords: Int = bufBytes / 4
  def targetBits: Int = 1
  val axiConfig = Axi4Config(addressWidth = 32, dataWidth = 32, idWidth = 1,
    useRegion = false, useLock = false, useQos = false, useCache = true, useProt = true)
  val apbConfig = Apb3Config(addressWidth = 16, dataWidth = 32)
}

/** Flash pins at the controller boundary; the tri-state DQ is split into o/oe/i here. In NV-DDR (`ddr`
  * high) WE# is CLK and RE# is W/R#, and the pins are the D1 (first half-cycle) inputs of the output DDR
  * flops; `ddr_h2` holds the D2 (second half) values, `ddr_dqs*` the DQS flop on the 90-degree clock, and
  * the read capture (IDELAY + IDDR on DQS + clock crossing) delivers DQS pairs on `ddr_cap_*`. With the
  * simulation PHY those primitives are the harness's behavioural pad model (hw/ip/nand/dv/ddr_pad.h). */
case class NandPins(targets: Int) extends Bundle with IMasterSlave {
  val dq_o = Bits(8 bits)
  val dq_oe = Bool()
  val dq_i = Bits(8 bits)
  val cle, ale, we_n, re_n, wp_n = Bool()
  val ce_n = Bits(targets bits)
  val rb_n = Bits(targets bits)
  val ddr = Bool()
  val ddr_h2_dq_o = Bits(8 bits)
  val ddr_h2_dq_oe, ddr_h2_cle, ddr_h2_ale, ddr_h2_we_n, ddr_h2_re_n = Bool()
  val ddr_h2_ce_n = Bits(targets bits)
  val ddr_dqs_o, ddr_dqs_oe = Bits(2 bits)
  val ddr_tap = UInt(9 bits)
  val ddr_cap_valid = Bool()
  val ddr_cap_q1, ddr_cap_q2 = Bits(8 bits)
  override def asMaster(): Unit = {
    out(dq_o, dq_oe, cle, ale, we_n, re_n, wp_n, ce_n, ddr, ddr_h2_dq_o, ddr_h2_dq_oe, ddr_h2_cle, ddr_h2_ale, ddr_h2_we_n,
      ddr_h2_re_n, ddr_h2_ce_n, ddr_dqs_o, ddr_dqs_oe, ddr_tap)
    in(dq_i, rb_n, ddr_cap_valid, ddr_cap_q1, ddr_cap_q2)
  }
}

/** Every ONFI timing the sequencer enforces, in controller clock cycles (firmware derives them from
  * the active timing mode, see hw/ip/nand/doc/nand.md). */
case class NandTimingRegs() extends Bundle {
  val tWP, tWH, tWC, tRP, tREH, tRC, tCS, tHOLD, tCLS, tCLR, tWHR, tADL, tRHW, tRR, tWB, tCCS = UInt(8 bits)
  val sampleDelay = UInt(4 bits)
  val timeout = UInt(32 bits)
}

object UopKind extends SpinalEnum {
  val CE_ON, CE_OFF, CMD, ADDR, DOUT, DIN, WAIT_WB, WAIT_RB = newElement()
}

/** One micro-operation from the command layer to the timing layer. */
case class Uop(p: NandParams) extends Bundle {
  val kind = UopKind()
  val value = Bits(8 bits)
  val count = UInt(16 bits)
  val target = UInt(p.targetBits bits)
  val ccs = Bool() // first read cycle of this DIN follows a CHANGE READ COLUMN (tCCS instead of tWHR)
  val array = Bool() // page data (NV-DDR: a byte per DQS edge); else ID/parameter/status/feature bytes (each on both edges)
}

/** Up to two bytes between the command layer and a time sequence layer (byte 0 in [7:0]): NV-DDR at
  * CLK = the controller clock (modes 3..5 at CK_DIV 1) moves two bytes per cycle. `two` = byte 1 valid. */
case class BytePair() extends Bundle {
  val data = Bits(16 bits)
  val two = Bool()
  def b0: Bits = data(7 downto 0)
  def b1: Bits = data(15 downto 8)
}

/** Pin values driven by the timing layer, registered again in the PHY. */
case class NandDrive(targets: Int) extends Bundle {
  val dq = Bits(8 bits)
  val oe, cle, ale, we_n, re_n = Bool()
  val ce_n = Bits(targets bits)
}

/** Controller opcodes (CMD_CTRL.OPCODE) and completion error codes (COMP_INFO.ERR). */
object NandOp {
  val RESET = 0; val READ_ID = 1; val READ_PARAM = 2; val READ_STATUS = 3; val SET_FEATURES = 4
  val GET_FEATURES = 5; val PAGE_READ = 6; val CHANGE_COL = 7; val PROGRAM = 8; val ERASE = 9
  val WAIT_STATUS = 10; val READ_DATA = 11; val READ_CACHE = 12; val READ_CACHE_END = 13; val PROGRAM_CACHE = 14
  val count = 15
}
object NandErr {
  val OK = 0; val TIMEOUT = 1; val NAND_FAIL = 2; val BAD_CMD = 3; val DMA_BOUNDS = 4; val DMA_BUS = 5; val ECC_UNCORRECTABLE = 6
}

/** Descriptor the CPU queues through the CMD_* registers. */
case class NandCmd(p: NandParams) extends Bundle {
  val opcode = UInt(4 bits)
  val target = UInt(p.targetBits bits)
  val ecc, split, dma = Bool()
  val mplane = Bool() // first planes of a multi-plane operation (32h / 11h / D1h), or READ_DATA by 06h-E0h
  val tag = Bits(16 bits)
  val row = Bits(24 bits)
  val col = UInt(16 bits)
  val len = UInt(16 bits)
  val dmaAddr = UInt(32 bits)
  val param = Bits(32 bits)
}

case class NandCompletion(p: NandParams) extends Bundle {
  val opcode = UInt(4 bits)
  val err = UInt(4 bits)
  val target = UInt(p.targetBits bits)
  val tag = Bits(16 bits)
  val status = Bits(8 bits)
  val eccCorrected = UInt(8 bits)
  val eccCorrMap = Bits(8 bits)
  val eccUncMap = Bits(8 bits)
  val eccSectors = Bits(32 bits) // nibble per sector: corrected bits, 0xF = uncorrectable
  val data = Bits(32 bits)
}
