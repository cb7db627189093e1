package common

import spinal.lib.bus.regif._

/** One description of a regif register block, rendered the same way for every block of the project
  * (compaction IP, DMA, NAND controller): a C header, JSON (what Python reads), Markdown (what docs/
  * embeds between generated-content markers) and regif's own HTML.
  *
  * Naming, one style everywhere: `<PREFIX>_<REGISTER>` is the byte offset of a register,
  * `<PREFIX>_<REGISTER>_<FIELD>_SHIFT` / `_MASK` locate a field (not written for a field that fills
  * the whole register). Register and field names are the Scala names in UPPER_SNAKE case
  * (`softReset` -> `SOFT_RESET`).
  *
  * @param name   file stem (`compaction_regs` -> compaction_regs.h/.json/.md/.html)
  * @param prefix C prefix (`CIP`)
  * @param arrays register arrays: for "CH", registers CH0_X, CH1_X, ... must repeat one layout at a
  *               constant stride; the header then also names the layout once (`DMA_CH_X`,
  *               `DMA_CH_STRIDE`, `DMA_CH_COUNT`) so drivers index channels instead of naming them.
  * @param constants fields (`<REGISTER>_<FIELD>`) whose reset value the header also names as a constant,
  *               `<PREFIX>_<REGISTER>_<FIELD>` (e.g. `NAND_ID_MAGIC`): a read-only value software compares
  *               with, taken from the field's one definition instead of being restated in C.
  * @param enums  named values of a field (opcodes, error codes): the header names each one
  *               `<PREFIX>_<ENUM>_<NAME>` and lists them all as an X-macro `<PREFIX>_<ENUM>_LIST(X)`
  *               (`X(NAME, value)`, for name tables), the JSON carries them for Python and docs/.
  */
case class RegBlock(name: String, prefix: String, title: String, source: String, arrays: Seq[String] = Nil,
                    constants: Seq[String] = Nil, enums: Seq[RegEnum] = Nil) {
  def emit(bi: BusIf): Unit = Seq(RegCHeader(this), RegJson(this), RegMarkdown(this), DocHtml(name)).foreach(bi.accept)
}

/** The named values of a register field, e.g. the NAND controller's opcodes (CMD_CTRL.OPCODE): `name`
  * is the C infix (`OP` -> `NAND_OP_RESET`), `field` the `<REGISTER>.<FIELD>` they are written to or read from. */
case class RegEnum(name: String, field: String, doc: String, values: Seq[RegEnum.V]) {
  require(values.map(_.value).distinct.size == values.size && values.map(_.name).distinct.size == values.size,
    s"enum $name: names and values must be unique")
  /** "<value> <NAME>, ..." (each value's note in parentheses): the field's doc text. */
  def summary: String = values.map(v => s"${v.value} ${v.name}" + (if (v.note.isEmpty) "" else s" (${v.note})")).mkString(", ")
}
object RegEnum {
  /** One value: `note` is a short remark kept in the field doc, `doc` what it does, `result` what it
    * gives back (both for docs/ tables). */
  case class V(name: String, value: Int, note: String = "", doc: String = "", result: String = "")
}

object RegBlock {
  /** `softReset` -> `SOFT_RESET`, `in0Bytes` -> `IN0_BYTES`; names already in upper case stay. */
  def cName(s: String): String =
    if (s.exists(_.isLower)) s.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase else s.toUpperCase

  case class F(name: String, lsb: Int, width: Int, access: String, reset: BigInt, doc: String) {
    def mask: BigInt = ((BigInt(1) << width) - 1) << lsb
  }
  case class R(name: String, offset: BigInt, doc: String, fields: Seq[F])
  case class A(name: String, count: Int, base: BigInt, stride: BigInt, regs: Seq[R]) // regs: relative to base

  /** The block's registers in address order, names normalised, reserved fields dropped. */
  def regs(bi: BusIf): Seq[R] = {
    val pre = Option(bi.regPre).filter(_.nonEmpty).map(_.toUpperCase + "_")
    bi.slices.sortBy(_.getAddr()).map { r =>
      val n0 = r.getName().toUpperCase
      val n = pre.filter(n0.startsWith).fold(n0)(p => n0.stripPrefix(p))
      R(cName(n), r.getAddr(), r.getDoc(), r.getFields().filter(_.getAccessType() != AccessType.NA).map { f =>
        F(cName(f.getName()), f.getSection().min, f.getWidth(), f.getAccessType().toString, f.getResetValue(), f.getDoc())
      })
    }
  }

  /** Fold register array `arr` (registers `arr<n>_X`); fails generation when the copies differ. */
  def array(regs: Seq[R], arr: String, block: String): A = {
    val re = s"^$arr(\\d+)_(.+)$$".r
    val byIndex = regs.flatMap(r => r.name match {
      case re(i, rest) => Some((i.toInt, r.copy(name = rest)))
      case _ => None
    }).groupBy(_._1).view.mapValues(_.map(_._2)).toMap
    def fail(msg: String): Nothing = throw new IllegalArgumentException(s"$block: register array $arr: $msg")
    if (byIndex.isEmpty) fail("no register matches")
    val count = byIndex.keys.max + 1
    if (byIndex.keySet != (0 until count).toSet) fail(s"indices ${byIndex.keys.toSeq.sorted.mkString(",")} are not 0..${count - 1}")
    val base = byIndex(0).map(_.offset).min
    def rel(i: Int) = { val b = byIndex(i).map(_.offset).min; (b, byIndex(i).map(r => r.copy(offset = r.offset - b, doc = ""))) }
    val stride = if (count > 1) rel(1)._1 - base else BigInt(0)
    for (i <- 0 until count) {
      val (b, rs) = rel(i)
      if (b != base + stride * i) fail(s"instance $i at 0x${b.toString(16)}, not base + $i * stride")
      if (rs != rel(0)._2) fail(s"instance $i differs from instance 0")
    }
    A(arr, count, base, stride, byIndex(0).map(r => r.copy(offset = r.offset - base)))
  }

  def hex(v: BigInt, digits: Int = 1): String = s"0x%0${digits}X".format(v.bigInteger)
}

/** C header: offsets relative to the block's base address (see the class comment of RegBlock). */
case class RegCHeader(blk: RegBlock) extends BusIfDoc {
  import RegBlock._
  override val name = blk.name
  override val suffix = "h"

  private def defs(p: String, r: R, dataWidth: Int): Seq[(String, String, String)] =
    (s"${p}_${r.name}", hex(r.offset, 3), r.doc.replace("\n", " ")) +: r.fields.filter(_.width < dataWidth).flatMap { f =>
      Seq((s"${p}_${r.name}_${f.name}_SHIFT", f.lsb.toString, ""),
          (s"${p}_${r.name}_${f.name}_MASK", hex(f.mask, 8), s"${f.access}, ${f.width} bit${if (f.width > 1) "s" else ""}: ${f.doc.replace("\n", " ")}"))
    }

  def body(): String = {
    val p = blk.prefix
    val rs = regs(bi)
    // Registers of an array: their offsets only; the fields are named once for the array below.
    val inArray = blk.arrays.map(an => s"^$an\\d+_".r)
    val lines0 = rs.flatMap { r =>
      if (inArray.exists(_.findFirstIn(r.name).nonEmpty)) defs(p, r.copy(fields = Nil), bi.busDataWidth) else defs(p, r, bi.busDataWidth)
    } ++ blk.arrays.flatMap { an =>
      val a = array(rs, an, blk.name)
      Seq((s"${p}_${an}_COUNT", a.count.toString, s"instances of $an"),
          (s"${p}_${an}_STRIDE", hex(a.stride, 3), s"bytes between $an instances"),
          (s"${p}_${an}(n)", s"(${hex(a.base, 3)} + (n) * ${hex(a.stride, 3)})", s"base of instance n; its registers below are relative to it")) ++
        a.regs.flatMap(r => defs(s"${p}_$an", r.copy(doc = ""), bi.busDataWidth))
    }
    val consts = blk.constants.map { c =>
      val f = rs.flatMap(r => r.fields.filter(f => s"${r.name}_${f.name}" == c)).headOption.getOrElse(
        throw new IllegalArgumentException(s"${blk.name}: constant $c names no register field"))
      (s"${p}_$c", hex(f.reset, 8) + "u", s"reset value of ${c}: ${f.doc.replace("\n", " ")}")
    }
    val lines = lines0 ++ consts
    val guard = s"LSMC_${blk.name.toUpperCase}_H"
    def render(ls: Seq[(String, String, String)]): String = {
      val w = ls.map(_._1.length).max + 1
      ls.map { case (n, v, c) =>
        val d = s"#define %-${w}s %s".format(n, v)
        if (c.isEmpty) d else s"$d /* ${c.replace("*/", "* /")} */"
      }.mkString("\n")
    }
    // Enums after the registers, aligned on their own (the register part reads as before they existed).
    val enumText = blk.enums.map { e =>
      val n = s"${p}_${e.name}"
      s"/* ${e.field}: ${e.doc.replace("*/", "* /")} */\n" + render(e.values.map(v => (s"${n}_${v.name}", v.value.toString, v.doc)) ++
        Seq((s"${n}_COUNT", e.values.size.toString, "")) ++
        Seq((s"${n}_LIST(X)", e.values.map(v => s"X(${v.name}, ${v.value})").mkString(" "), "")))
    }.map("\n" + _ + "\n").mkString
    s"""/* ${blk.title}: generated by common.RegBlock from ${blk.source}. Do not edit.
       | * Offsets are bytes from the block's base address (see lsmc_soc.h). */
       |#ifndef $guard
       |#define $guard
       |
       |${render(lines)}
       |$enumText
       |#endif /* $guard */
       |""".stripMargin
  }
}

/** JSON: {block, prefix, title, source, data_width, registers: [{name, offset, doc, fields: [{name,
  * lsb, width, access, reset, doc}]}], arrays: [{name, count, base, stride, registers}]}. */
case class RegJson(blk: RegBlock) extends BusIfDoc {
  import RegBlock._
  override val name = blk.name
  override val suffix = "json"

  private def s(v: String): String = "\"" + v.flatMap {
    case '"' => "\\\""
    case '\\' => "\\\\"
    case '\n' => "\\n"
    case c if c < ' ' => "\\u%04x".format(c.toInt)
    case c => c.toString
  } + "\""

  private def reg(r: R, ind: String): String = {
    val fs = r.fields.map(f => s"""$ind    {"name": ${s(f.name)}, "lsb": ${f.lsb}, "width": ${f.width}, "access": ${s(f.access)}, "reset": ${f.reset}, "doc": ${s(f.doc)}}""")
    s"""$ind{"name": ${s(r.name)}, "offset": ${r.offset}, "doc": ${s(r.doc)}, "fields": [\n${fs.mkString(",\n")}\n$ind  ]}"""
  }

  def body(): String = {
    val rs = regs(bi)
    val arrs = blk.arrays.map(array(rs, _, blk.name)).map { a =>
      s"""    {"name": ${s(a.name)}, "count": ${a.count}, "base": ${a.base}, "stride": ${a.stride}, "registers": [\n${a.regs.map(reg(_, "      ")).mkString(",\n")}\n    ]}"""
    }
    val enums = blk.enums.map { e =>
      val vs = e.values.map(v => s"""      {"name": ${s(v.name)}, "value": ${v.value}, "note": ${s(v.note)}, "doc": ${s(v.doc)}, "result": ${s(v.result)}}""")
      s"""    {"name": ${s(e.name)}, "field": ${s(e.field)}, "doc": ${s(e.doc)}, "values": [\n${vs.mkString(",\n")}\n    ]}"""
    }
    s"""{
       |  "block": ${s(blk.name.stripSuffix("_regs"))},
       |  "prefix": ${s(blk.prefix)},
       |  "title": ${s(blk.title)},
       |  "source": ${s(blk.source)},
       |  "data_width": ${bi.busDataWidth},
       |  "registers": [
       |${rs.map(reg(_, "    ")).mkString(",\n")}
       |  ],
       |  "arrays": [${if (arrs.isEmpty) "" else arrs.mkString("\n", ",\n", "\n  ")}],
       |  "enums": [${if (enums.isEmpty) "" else enums.mkString("\n", ",\n", "\n  ")}]
       |}
       |""".stripMargin
  }
}

/** Markdown: one table row per field. The table alone (after the first blank line) is what docs/
  * pages embed between `<!-- BEGIN GENERATED: regs <block> -->` and `<!-- END GENERATED -->`. */
case class RegMarkdown(blk: RegBlock) extends BusIfDoc {
  import RegBlock._
  override val name = blk.name
  override val suffix = "md"

  private def esc(v: String): String = v.replace("|", "\\|").replace("\n", " ")

  def body(): String = {
    val rows = regs(bi).flatMap { r =>
      val fs = if (r.fields.isEmpty) Seq(None) else r.fields.map(Some(_))
      fs.zipWithIndex.map { case (fo, i) =>
        val head = if (i == 0) s"| ${hex(r.offset, 2)} | ${r.name} | ${esc(r.doc)} |" else "| | | |"
        fo.fold(s"$head | | | | | |") { f =>
          val bits = if (f.width == 1) s"${f.lsb}" else s"${f.lsb + f.width - 1}:${f.lsb}"
          s"$head $bits | ${f.name} | ${f.access} | ${hex(f.reset)} | ${esc(f.doc)} |"
        }
      }
    }
    // Rows are joined after stripMargin: they start with '|' themselves.
    s"""# ${blk.title}
       |
       || offset | register | description | bits | field | access | reset | field description |
       ||---|---|---|---|---|---|---|---|
       |""".stripMargin + rows.mkString("", "\n", "\n") +
      s"\nGenerated from `${blk.source}` (prefix `${blk.prefix}_` in `${blk.name}.h`).\n"
  }
}
