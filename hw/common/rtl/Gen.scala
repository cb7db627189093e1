package common

import spinal.core._

/** What every generator of the project shares: one SpinalConfig and one argument parser, so a
  * `Generate` main is a few lines (as VexRiscv's demos are). Each generator writes into `--out DIR`. */
object Gen {

  /** The project's SpinalConfig: one clock `clk`, synchronous active-high `reset`, one Verilog file. */
  def config(outDir: String, clockHz: Option[BigInt] = None): SpinalConfig = {
    val base = SpinalConfig(
      targetDirectory = outDir,
      defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH),
      oneFilePerComponent = false
    )
    clockHz.fold(base)(hz => base.copy(defaultClockDomainFrequency = FixedFrequency(HertzNumber(BigDecimal(hz)))))
  }

  /** One command-line option. `flag` options take no value; the others take exactly one, checked
    * by `check` (None: accepted; Some(reason): refused). */
  case class Opt(name: String, help: String, default: Option[String] = None, flag: Boolean = false,
                 check: String => Option[String] = _ => None) {
    def usage: String = if (flag) s"[--$name]" else default.fold(s"--$name ${help.takeWhile(_ != ':')}")(_ => s"[--$name ${help.takeWhile(_ != ':')}]")
  }

  /** An integer option restricted to `allowed` (empty: any value >= `min`). */
  def intOpt(name: String, default: Int, allowed: Seq[Int] = Nil, what: String = "N", min: Int = 0): Opt =
    Opt(name, if (allowed.nonEmpty) allowed.mkString("|") else what, Some(default.toString), check = v =>
      (if (v.matches("-?[0-9]{1,9}")) v.toIntOption else None) match { // ASCII digits only (toInt takes any script's)
        case None => Some(s"--$name expects a number, got '$v'")
        case Some(n) if allowed.nonEmpty && !allowed.contains(n) => Some(s"--$name must be one of ${allowed.mkString(", ")}, not $n")
        case Some(n) if n < min => Some(s"--$name must be at least $min, got $n")
        case _ => None
      })

  def flagOpt(name: String, help: String): Opt = Opt(name, help, flag = true)

  /** A string option restricted to `allowed` (a preset name, say), with no default: absent unless given. */
  def choiceOpt(name: String, allowed: Seq[String], what: String = "NAME"): Opt =
    Opt(name, what, Some(""), check = v =>
      if (allowed.contains(v)) None else Some(s"--$name: unknown $what '$v' (one of ${allowed.mkString(", ")})"))

  /** Parsed options: `int`, `str` and `flag` by option name (without the dashes); `given` says whether
    * the command line named it (a preset's value stands unless an option is given). */
  final class Args(values: Map[String, String], flags: Set[String], named: Set[String] = Set.empty) {
    def str(name: String): String = values(name)
    def int(name: String): Int = values(name).toInt
    def flag(name: String): Boolean = flags(name)
    def given(name: String): Boolean = named(name)
    def out: String = values("out")
  }

  /** Parse `args` against `opts` (plus `--out DIR`, default `defaultOut`); on a bad argument print
    * the usage line and then the reason (the last line, as argparse does) to stderr and exit with
    * status 2, before anything is elaborated or written. */
  def parse(prog: String, args: Array[String], defaultOut: String, opts: Seq[Opt]): Args = {
    val all = Opt("out", "DIR: output folder", Some(defaultOut)) +: opts
    def fail(msg: String): Nothing = {
      System.err.println(s"usage: $prog ${all.map(_.usage).mkString(" ")}\n$prog: error: $msg")
      sys.exit(2)
    }
    val byName = all.map(o => s"--${o.name}" -> o).toMap
    var values = all.flatMap(o => o.default.map(o.name -> _)).toMap
    var flags = Set.empty[String]
    var named = Set.empty[String]
    var rest = args.toList
    while (rest.nonEmpty) rest match {
      case key :: tail if byName.get(key).exists(_.flag) => flags += byName(key).name; named += byName(key).name; rest = tail
      case key :: v :: tail if byName.contains(key) && !v.startsWith("--") =>
        val o = byName(key)
        o.check(v).foreach(fail)
        if (v.isEmpty) fail(s"$key needs a value")
        values += o.name -> v
        named += o.name
        rest = tail
      case key :: _ if byName.contains(key) => fail(s"$key needs a value")
      case other :: _ => fail(s"unknown argument '$other'")
      case Nil =>
    }
    for (o <- all if !o.flag && !values.contains(o.name)) fail(s"--${o.name} is required")
    new Args(values, flags, named)
  }
}

/** JSON of generation parameters, for the manifests beside the generated Verilog: a case class becomes
  * an object of its fields in declaration order (so a parameter added to a config class appears in every
  * manifest without a line here), a Seq an array, a Map an object. */
object Json {
  def quote(s: String): String = "\"" + s.flatMap {
    case '"' => "\\\""
    case '\\' => "\\\\"
    case c if c < ' ' => f"\\u${c.toInt}%04x"
    case c => c.toString
  } + "\""

  def render(v: Any, indent: String = ""): String = {
    val in = indent + "  "
    def obj(kv: Seq[(String, Any)]) =
      if (kv.isEmpty) "{}" else kv.map { case (k, x) => s"$in${quote(k)}: ${render(x, in)}" }.mkString("{\n", ",\n", s"\n$indent}")
    v match {
      case null | None => "null"
      case Some(x) => render(x, indent)
      case s: String => quote(s)
      case b: Boolean => b.toString
      case n: Int => n.toString
      case n: Long => n.toString
      case n: BigInt => n.toString
      case m: scala.collection.Map[_, _] => obj(m.toSeq.map { case (k, x) => (k.toString, x) })
      case s: Iterable[_] => if (s.isEmpty) "[]" else s.map(render(_, in)).mkString("[", ", ", "]")
      case p: Product => obj(p.productElementNames.toSeq.zip(p.productIterator.toSeq))
      case other => throw new IllegalArgumentException(s"Json.render: no JSON form for ${other.getClass.getName}")
    }
  }
}

/** A generator main: name the options, build the top component, optionally write more files.
  * {{{ object Generate extends common.Generator("build/gen/x", Gen.intOpt("width", 128, Seq(32, 128))) {
  *       def top(a: Gen.Args) = MyIp(a.int("width")) } }}} */
abstract class Generator(defaultOut: String, opts: Gen.Opt*) {
  def prog: String = getClass.getName.stripSuffix("$")
  def top(a: Gen.Args): Component
  def clockHz(a: Gen.Args): Option[BigInt] = None
  /** Called after the Verilog is written (e.g. to export the memory map next to it). */
  def after(a: Gen.Args, report: SpinalReport[Component]): Unit = ()

  def main(args: Array[String]): Unit = {
    val a = Gen.parse(prog, args, defaultOut, opts)
    new java.io.File(a.out).mkdirs()
    val report = Gen.config(a.out, clockHz(a)).generateVerilog(top(a))
    after(a, report)
  }
}
