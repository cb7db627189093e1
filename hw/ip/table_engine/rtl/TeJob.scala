package table_engine

/** The job descriptor's word layouts, constants and flag bits, read at elaboration from their one source,
  * hw/ip/table_engine/data/te_job.json (lsmc.build.facts renders the same file for C and Python). The file holds
  * one layout word a line (`["name", "doc"],`, `["name[N]", "doc"],`); tests/test_facts.py checks that this line
  * reading and a JSON parser see the same words. */
object TeJob {
  val File = "hw/ip/table_engine/data/te_job.json"
  private lazy val lines: Seq[String] = {
    val src = try scala.io.Source.fromFile(File, "UTF-8")
    catch { case e: java.io.IOException => throw new IllegalArgumentException(s"$File: cannot read it ($e)") }
    try src.getLines().toList finally src.close()
  }

  /** Layout name -> its fields (name, first word, words) and its size in words. */
  lazy val layouts: Map[String, (Seq[(String, Int, Int)], Int)] = {
    val start = """^\s*"(TE_[A-Z_]+)": \{"words": \[\s*$""".r
    val word = """^\s*\["([a-z_0-9]+)(?:\[(\d+)\])?",.*$""".r
    val size = """^\s*"size": (\d+)\}.*$""".r
    val out = scala.collection.mutable.LinkedHashMap[String, (Seq[(String, Int, Int)], Int)]()
    var cur: Option[String] = None
    var fields = Seq.empty[(String, Int, Int)]
    def close(sz: Option[Int]): Unit = for (n <- cur) {
      val used = fields.map(_._3).sum
      out(n) = (fields, sz.getOrElse(used))
      require(sz.forall(_ >= used), s"$File: layout $n: size ${sz.get} below its $used words")
      cur = None
    }
    for (l <- lines) l match {
      case start(n) => close(None); cur = Some(n); fields = Nil
      case word(n, k) if cur.nonEmpty =>
        fields :+= ((n, fields.map(_._3).sum, Option(k).map(_.toInt).getOrElse(1)))
      case size(s) if cur.nonEmpty => close(Some(s.toInt))
      case _ if cur.nonEmpty && l.trim.startsWith("]}") => close(None)
      case _ =>
    }
    close(None)
    require(out.nonEmpty, s"$File: no layouts")
    out.toMap
  }

  /** First word of `field` in `layout`. */
  def word(layout: String, field: String): Int = {
    val (fs, _) = layouts.getOrElse(layout, throw new IllegalArgumentException(s"$File: no layout $layout"))
    fs.find(_._1 == field).map(_._2).getOrElse(throw new IllegalArgumentException(s"$File: $layout has no $field"))
  }
  def words(layout: String): Int = layouts.getOrElse(layout,
    throw new IllegalArgumentException(s"$File: no layout $layout"))._2

  /** Constant name -> value (an ASCII constant as the little-endian word its text is in memory). */
  lazy val constants: Map[String, BigInt] = {
    val ascii = """^\s*"(TE_[A-Z_]+)": \{"ascii": "(.{4})".*$""".r
    val value = """^\s*"(TE_[A-Z_]+)": \{"value": (\d+).*$""".r
    lines.collect {
      case ascii(n, s) => n -> s.getBytes("US-ASCII").zipWithIndex.map { case (b, i) => BigInt(b & 0xff) << (8 * i) }.sum
      case value(n, v) => n -> BigInt(v)
    }.toMap
  }
  def constant(name: String): BigInt =
    constants.getOrElse(name, throw new IllegalArgumentException(s"$File: no constant $name"))

  /** Flag name (TE_F_<NAME>) -> its bit. */
  lazy val flags: Map[String, Int] = {
    val flag = """^\s*"([A-Z_]+)": \[(\d+), ".*$""".r
    lines.collect { case flag(n, b) => n -> b.toInt }.toMap
  }
  def flag(name: String): Int = flags.getOrElse(name, throw new IllegalArgumentException(s"$File: no flag TE_F_$name"))
}
