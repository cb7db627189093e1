// Mill 0.11 build of the project's hardware (SpinalHDL 1.14.2, Scala 2.13.14).
// Every module is a SpinalHDL module; generators are `main` objects run with `runMain`.
import mill._, scalalib._

val spinalVersion = "1.14.2"

trait SpinalModule extends ScalaModule {
  def scalaVersion = "2.13.14"
  def ivyDeps = Agg(
    ivy"com.github.spinalhdl::spinalhdl-core:$spinalVersion",
    ivy"com.github.spinalhdl::spinalhdl-lib:$spinalVersion"
  )
  def scalacPluginIvyDeps = Agg(ivy"com.github.spinalhdl::spinalhdl-idsl-plugin:$spinalVersion")
  def scalacOptions = Seq("-deprecation", "-feature", "-language:reflectiveCalls", "-language:postfixOps", "-language:implicitConversions")
  // SpinalSim tests (optional per module) live next to the RTL in `dv/`.
  // Generators run for half a minute: the JIT's first tier only (C1) elaborates the tables-m2 SoC in the same wall
  // time for a third less CPU (34 against 51 s), which the other tests on a 2-core machine get back. Mill's own
  // JVM takes the same option from .mill-jvm-opts (a fresh clone's compile: 147 against 231 s of CPU). At the first
  // tier only, the JVM reserves 48 MiB of code cache instead of its 240 (JDK 17), and a fresh clone's compile once
  // filled it ("Out of space in CodeCache for method handle intrinsic", a VirtualMachineError): both ask for 240.
  def forkArgs = Seq("-Xss16m", "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m")
}

/** What every generator shares: one SpinalConfig, one argument parser, the regif renderers. */
object common extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "common"
  def sources = T.sources(millSourcePath / "rtl")
}

/** The SoC's memory map alone (SocMap, soc.MemoryMap): exported without building the CPU. */
object socmap extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "soc" / "map"
  def sources = T.sources(millSourcePath)
  def moduleDeps = Seq(common)
}

/** Compaction IP: decoder, comparer_merger, encoder, FIFOs, width converters, regif registers. */
object compaction extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "ip" / "compaction"
  def sources = T.sources(millSourcePath / "rtl")
  def moduleDeps = Seq(common)
}

/** Table engine: CRC32C, block reader, Snappy decompressor, block builder; error codes from its C++ model. */
object table_engine extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "ip" / "table_engine"
  def sources = T.sources(millSourcePath / "rtl")
  def moduleDeps = Seq(common)
}

/** Stream <-> AXI4 DMA channels between DDR and the IPs. */
object dma extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "ip" / "dma"
  def sources = T.sources(millSourcePath / "rtl")
  def moduleDeps = Seq(common)
}

/** Three-layer ONFI NAND flash controller. */
object nand extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "ip" / "nand"
  def sources = T.sources(millSourcePath / "rtl")
  def moduleDeps = Seq(common)
}

/** VexRiscv, built from the Scala source that PyPI's pythondata-cpu-vexriscv carries (never committed
  * here). `scripts/setup` installs the wheel; this task copies the source out of it and applies the
  * mechanical edits SpinalHDL 1.14 / Scala 2.13 need (see lsmc/build/vexriscv_src.py). */
object vexriscv extends SpinalModule {
  def millSourcePath = os.pwd / "build" / "vexriscv"
  def sources = T.sources()
  // The patch script is an input: editing it (or its wheel pin) regenerates the sources.
  def vexSrcScript = T.source(os.pwd / "lsmc" / "build" / "vexriscv_src.py")
  def generatedSources = T {
    vexSrcScript()
    val dest = T.dest
    os.proc("python3", os.pwd / "lsmc" / "build" / "vexriscv_src.py", dest).call(cwd = os.pwd, stdout = os.Inherit)
    Seq(PathRef(dest))
  }
  def scalacOptions = Seq("-language:reflectiveCalls", "-language:postfixOps", "-language:implicitConversions", "-nowarn")
}

/** The SoC: VexRiscv + AXI4 bus + DDR port + DMA + UART + timer + IRQ + compaction IP (+ NAND). */
object soc extends SpinalModule {
  def millSourcePath = os.pwd / "hw" / "soc"
  def sources = T.sources(millSourcePath / "rtl")
  def moduleDeps = Seq(common, socmap, compaction, dma, nand, table_engine, vexriscv)
}
