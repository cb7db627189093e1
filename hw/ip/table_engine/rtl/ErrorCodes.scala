package table_engine

/** The engine's error codes, numbered as the C++ model's `enum class ErrorCode` (model/error.h, the one
  * source: read here at elaboration, so the RTL's STATUS code is the model's enum value). */
object ErrorCodes {
  val Source = "hw/ip/table_engine/model/error.h"
  lazy val names: Seq[String] = {
    val text = scala.io.Source.fromFile(Source, "UTF-8").mkString
    val body = "enum class ErrorCode \\{([^}]*)\\}".r.findFirstMatchIn(text)
      .getOrElse(sys.error(s"$Source: no `enum class ErrorCode { ... }`")).group(1)
    body.split(",").map(_.trim).filter(_.nonEmpty).map { k =>
      require(k.matches("k[A-Z][A-Za-z]*"), s"$Source: enumerator '$k' is not kCamelCase")
      k.drop(1).replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase // kBadCrc -> BAD_CRC
    }.toSeq
  }
  def apply(name: String): Int = {
    val i = names.indexOf(name)
    require(i >= 0, s"$Source has no error code $name (has ${names.mkString(", ")})")
    i
  }
  val Width = 4
}
