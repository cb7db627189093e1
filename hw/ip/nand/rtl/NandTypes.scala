package nand

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba3.apb.Apb3Config
import spinal.lib.bus.amba4.axi.Axi4Config

/** Generation parameters of the controller. `bufBytes` bounds one transfer (page + spare); `bch` is the
  * ECC code (t and sector size, see NandBch.scala). `padInputCycles`: register stages the board's pads
  * put ahead of `dq_i` (0: direct pins; lsmc/boards/nand_pads.py PAD_INPUT_CYCLES behind its IDDR); the PHY
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

/** Controller opcodes (CMD_CTRL.OPCODE): the one list. nand_regs.h (`NAND_OP_*`), nand_regs.json
  * (lsmc.sim.nandsim) and the opcode table of hw/ip/nand/doc/nand.md are rendered from it (common.RegEnum); each
  * opcode's micro-program is in NandCommandLayer. */
object NandOp {
  import common.RegEnum.V
  val all: Seq[V] = Seq(
    V("RESET", 0, doc = "CE, `FFh`, tWB, [SPLIT: end], wait R/B#"),
    V("READ_ID", 1, doc = "CE, `90h`, addr ROW[7:0] (00h/20h), LEN data bytes, [DMA out]", result = "COMP_DATA = bytes 0..3"),
    V("READ_PARAM", 2, doc = "CE, `ECh`, addr 00h, tWB, wait R/B#, LEN bytes, [DMA out]"),
    V("READ_STATUS", 3, doc = "CE, `70h`, 1 byte", result = "COMP_STATUS.FLASH_STATUS"),
    V("SET_FEATURES", 4, doc = "CE, `EFh`, addr ROW[7:0], tADL, P1..P4 from CMD_PARAM, tWB, wait R/B#"),
    V("GET_FEATURES", 5, doc = "CE, `EEh`, addr, tWB, wait R/B#, 4 bytes", result = "COMP_DATA = P1..P4"),
    V("PAGE_READ", 6, doc = "CE, `00h`, col x2, row x3, `30h`, tWB, [SPLIT: end], wait R/B#, tRR, data, ECC fix, [DMA out]", result = "ECC report"),
    V("CHANGE_COL", 7, doc = "CE, `05h`, col x2, `E0h`, tCCS, LEN bytes, [DMA out]"),
    V("PROGRAM", 8, doc = "[DMA in], CE, `80h`, col x2, row x3, tADL, data (+ECC bytes), `10h`, tWB, [SPLIT: end], wait R/B#, `70h`, status", result = "FAIL bit -> NAND_FAIL"),
    V("ERASE", 9, doc = "CE, `60h`, row x3, `D0h`, tWB, [SPLIT: end], wait R/B#, `70h`, status", result = "FAIL bit -> NAND_FAIL"),
    V("WAIT_STATUS", 10, doc = "CE, wait R/B#, `70h`, status", result = "ends a SPLIT program/erase"),
    V("READ_DATA", 11, doc = "CE, wait R/B#, `00h`, data, ECC fix, [DMA out]", result = "ends a SPLIT page read or cache read"),
    V("READ_CACHE", 12, note = "31h", doc = "CE, wait R/B#, `31h`, tWB, [SPLIT: end], wait R/B#, data, ECC fix, [DMA out]", result = "page of the last read to the cache register, array reads the next"),
    V("READ_CACHE_END", 13, note = "3Fh", doc = "as READ_CACHE with `3Fh` (no new array read)"),
    V("PROGRAM_CACHE", 14, note = "15h", doc = "as PROGRAM with `15h`: R/B# returns when the cache register is free, the array programs in the background", result = "FAILC (status bit 1: the page before) -> NAND_FAIL")
  )
  require(all.map(_.value) == all.indices, "opcodes are 0..count-1 (BAD_CMD is opcode >= count)")
  private def op(name: String): Int = all.find(_.name == name).get.value
  val RESET = op("RESET"); val READ_ID = op("READ_ID"); val READ_PARAM = op("READ_PARAM"); val READ_STATUS = op("READ_STATUS")
  val SET_FEATURES = op("SET_FEATURES"); val GET_FEATURES = op("GET_FEATURES"); val PAGE_READ = op("PAGE_READ")
  val CHANGE_COL = op("CHANGE_COL"); val PROGRAM = op("PROGRAM"); val ERASE = op("ERASE"); val WAIT_STATUS = op("WAIT_STATUS")
  val READ_DATA = op("READ_DATA"); val READ_CACHE = op("READ_CACHE"); val READ_CACHE_END = op("READ_CACHE_END")
  val PROGRAM_CACHE = op("PROGRAM_CACHE")
  val count = all.size
  val regEnum = common.RegEnum("OP", "CMD_CTRL.OPCODE", "controller opcodes", all)
}

/** Completion error codes (COMP_INFO.C_ERR): the one list, rendered like NandOp (`NAND_E_*`). */
object NandErr {
  import common.RegEnum.V
  val all: Seq[V] = Seq(
    V("OK", 0),
    V("TIMEOUT", 1, doc = "R/B# stayed low longer than `RB_TIMEOUT`"),
    V("NAND_FAIL", 2, doc = "status bit 0 after program/erase"),
    V("BAD_CMD", 3, doc = "unknown opcode, target, length over the buffer, raw PROGRAM length not a whole number of words, ECC with a column or a geometry the layer cannot do"),
    V("DMA_BOUNDS", 4, doc = "DDR range not inside `[DMA_LO, DMA_HI)` or not 4-byte aligned"),
    V("DMA_BUS", 5, doc = "AXI SLVERR/DECERR"),
    V("ECC_UNCORRECTABLE", 6, doc = "a sector has more bit errors than the code corrects (data is still delivered)")
  )
  private def err(name: String): Int = all.find(_.name == name).get.value
  val OK = err("OK"); val TIMEOUT = err("TIMEOUT"); val NAND_FAIL = err("NAND_FAIL"); val BAD_CMD = err("BAD_CMD")
  val DMA_BOUNDS = err("DMA_BOUNDS"); val DMA_BUS = err("DMA_BUS"); val ECC_UNCORRECTABLE = err("ECC_UNCORRECTABLE")
  val regEnum = common.RegEnum("E", "COMP_INFO.C_ERR", "completion errors", all)
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
