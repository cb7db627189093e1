// NAND fault schedule of the SoC harness (docs/storage.md): every fault kind of the ONFI model
// (hw/ip/nand/model), given as lines of a file (--nand-faults FILE) or one line per --nand-fault option,
// checked strictly (a bad line is named with file:line and refused before the simulation starts).
//
//   bit-flips T MAX          every page read on T flips a random number of bits in [0, MAX] (page + spare)
//   bad T B                  factory bad block (marker 00h in pages 0 and 1; program/erase fail)
//   grown-bad T B            block B fails every program and erase from the start (no marker)
//   weak-block T B N         N erases of B succeed, the next fails and B grows bad
//   weak-page T B P N        N programs of page P of block B succeed, later ones fail (page torn)
//   grave-page T B P N       N clean reads of that page, later reads flip 1 % of its bits
//   fail T program|erase BLOCKS K       the K-th program/erase on T inside BLOCKS fails (program: torn)
//   power-cut T program|erase BLOCKS K  the K-th program/erase on T inside BLOCKS loses power midway
//   stuck-busy T [CYCLE]     T holds R/B# low from its first busy period after CYCLE on
//
// T is a target number or * (every target) of channel 0, or C.T / C.* of channel C (the SoC's NAND
// channels); BLOCKS is B, B-B or *; K counts from 1 over the whole run (across power cuts). Operations
// are counted only when they would otherwise succeed.
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "onfi_model.h"

namespace nandf {

enum class Kind { BitFlips, Bad, GrownBad, WeakBlock, WeakPage, GravePage, Fail, PowerCut, StuckBusy };

struct Fault {
  Kind kind;
  std::string where, text;  // "file:line" / "--nand-fault", and the line itself
  int channel = 0;          // NAND channel
  int target = -1;          // -1 = every target
  uint32_t block = 0, page = 0, n = 0, blo = 0, bhi = UINT32_MAX;
  bool erase = false;
  uint64_t cycle = 0;
  uint64_t seen = 0, injected = 0;  // matching operations so far; faults injected
};

class Schedule {
 public:
  std::vector<Fault> faults;
  uint64_t cuts = 0;          // power cuts injected
  uint64_t byTarget[4][8] = {};  // failures and cuts injected through the hook, per channel and target
  int cutChannel = 0, cutTarget = -1;  // channel and target of the cut just injected (the harness's message)
  uint32_t cutRow = 0;
  bool cutErase = false;

  void addLine(const std::string& line, const std::string& where, uint32_t channels, uint32_t targets, uint32_t blocks,
               uint32_t pagesPerBlock) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    if (w.empty() || w[0][0] == '#') return;
    Fault f;
    f.where = where;
    f.text = line;
    const std::string& k = w[0];
    auto bad = [&](const std::string& why) { simc::die("%s: %s (line '%s')", where.c_str(), why.c_str(), line.c_str()); };
    auto need = [&](size_t lo, size_t hi, const char* usage) {
      if (w.size() < lo || w.size() > hi) bad(std::string("expected '") + usage + "'");
    };
    auto num = [&](size_t i, const char* what, uint64_t max) {
      return (uint32_t)simc::toUnsigned(w[i], where + ": " + k + " " + what, max);
    };
    auto target = [&]() {  // T, *, C.T or C.*
      std::string t = w[1];
      size_t dot = t.find('.');
      if (dot != std::string::npos) {
        f.channel = (int)simc::toUnsigned(t.substr(0, dot), where + ": " + k + " channel", channels - 1);
        t = t.substr(dot + 1);
      }
      if (t == "*") return -1;
      return (int)simc::toUnsigned(t, where + ": " + k + " target", targets - 1);
    };
    auto block = [&](size_t i) { return num(i, "block", blocks - 1); };
    auto opKind = [&](size_t i) {
      if (w[i] != "program" && w[i] != "erase") bad("operation must be 'program' or 'erase', not '" + w[i] + "'");
      return w[i] == "erase";
    };
    auto range = [&](size_t i) {
      if (w[i] == "*") return;
      size_t d = w[i].find('-');
      f.blo = (uint32_t)simc::toUnsigned(w[i].substr(0, d), where + ": " + k + " blocks", blocks - 1);
      f.bhi = d == std::string::npos ? f.blo : (uint32_t)simc::toUnsigned(w[i].substr(d + 1), where + ": " + k + " blocks", blocks - 1);
      if (f.bhi < f.blo) bad("block range " + w[i] + " is empty");
    };
    if (k == "bit-flips") {
      need(3, 3, "bit-flips T MAX");
      f.kind = Kind::BitFlips; f.target = target(); f.n = num(2, "MAX", 4096);
    } else if (k == "bad" || k == "grown-bad") {
      need(3, 3, "bad|grown-bad T BLOCK");
      f.kind = k == "bad" ? Kind::Bad : Kind::GrownBad; f.target = target(); f.block = block(2);
    } else if (k == "weak-block") {
      need(4, 4, "weak-block T BLOCK N");
      f.kind = Kind::WeakBlock; f.target = target(); f.block = block(2); f.n = num(3, "N", 1u << 30);
    } else if (k == "weak-page" || k == "grave-page") {
      need(5, 5, "weak-page|grave-page T BLOCK PAGE N");
      f.kind = k == "weak-page" ? Kind::WeakPage : Kind::GravePage; f.target = target(); f.block = block(2);
      f.page = num(3, "page", pagesPerBlock - 1); f.n = num(4, "N", 1u << 30);
    } else if (k == "fail" || k == "power-cut") {
      need(5, 5, "fail|power-cut T program|erase BLOCKS K");
      f.kind = k == "fail" ? Kind::Fail : Kind::PowerCut; f.target = target(); f.erase = opKind(2); range(3);
      f.n = num(4, "K", 1u << 30);
      if (f.n == 0) bad("K counts from 1");
    } else if (k == "stuck-busy") {
      need(2, 3, "stuck-busy T [CYCLE]");
      f.kind = Kind::StuckBusy; f.target = target();
      if (w.size() == 3) f.cycle = simc::toUnsigned(w[2], where + ": stuck-busy cycle", UINT64_MAX);
    } else {
      bad("unknown fault '" + k + "' (bit-flips, bad, grown-bad, weak-block, weak-page, grave-page, fail, power-cut, stuck-busy)");
    }
    faults.push_back(f);
  }

  void addFile(const std::string& path, uint32_t channels, uint32_t targets, uint32_t blocks, uint32_t pagesPerBlock) {
    std::ifstream in(path);
    if (!in) simc::die("--nand-faults: cannot read %s", path.c_str());
    std::string line;
    for (int n = 1; std::getline(in, line); n++)
      addLine(line, path + ":" + std::to_string(n), channels, targets, blocks, pagesPerBlock);
  }

  static bool on(const Fault& f, size_t ch, size_t t) { return (size_t)f.channel == ch && (f.target < 0 || (size_t)f.target == t); }

  // The static faults go into each target's configuration before the model is built.
  void configure(size_t ch, size_t t, onfi::Config& c, uint32_t pagesPerBlock) const {
    for (const Fault& f : faults) {
      if (!on(f, ch, t)) continue;
      if (f.kind == Kind::BitFlips) c.bit_flips_max = (int)f.n;
      if (f.kind == Kind::Bad) c.bad_blocks.push_back(f.block);
      if (f.kind == Kind::GravePage) c.read_limit[f.block * pagesPerBlock + f.page] = (int)f.n;
    }
  }

  // After the models exist: grown bad blocks, and the hook that weak blocks/pages, failures and power
  // cuts go through (counted here, so every injection is known by its line).
  template <typename Models>
  void attach(Models& models, size_t ch, uint32_t pagesPerBlock) {
    for (size_t t = 0; t < models.size(); t++) {
      for (const Fault& f : faults)
        if (on(f, ch, t) && f.kind == Kind::GrownBad) models[t]->grow_bad(f.block);
      onfi::NandModel* m = models[t].get();
      models[t]->cfg.op_fault = [this, ch, t, m, pagesPerBlock](bool erase, uint32_t row) {
        return onOp(ch, t, m, erase, row, pagesPerBlock);
      };
    }
  }

  int onOp(size_t ch, size_t t, onfi::NandModel* m, bool erase, uint32_t row, uint32_t pagesPerBlock) {
    uint32_t blk = row / pagesPerBlock;
    int result = 0;
    for (Fault& f : faults) {
      if (!on(f, ch, t) || result) continue;
      if (f.kind == Kind::WeakBlock && erase && blk == f.block && ++f.seen > f.n) {
        m->grow_bad(blk);  // a worn-out block stays bad
        result = 1;
      } else if (f.kind == Kind::WeakPage && !erase && row == f.block * pagesPerBlock + f.page && ++f.seen > f.n) {
        result = 1;
      } else if ((f.kind == Kind::Fail || f.kind == Kind::PowerCut) && erase == f.erase && blk >= f.blo &&
                 blk <= f.bhi && ++f.seen == f.n) {
        result = f.kind == Kind::Fail ? 1 : 2;
      }
      if (result) f.injected++;
    }
    if (result && ch < 4 && t < 8) byTarget[ch][t]++;
    if (result == 2) { cuts++; cutChannel = (int)ch; cutTarget = (int)t; cutRow = row; cutErase = erase; }
    return result;
  }

  static const char* name(Kind k) {
    static const char* n[] = {"bit-flips", "bad", "grown-bad", "weak-block", "weak-page", "grave-page", "fail", "power-cut", "stuck-busy"};
    return n[(int)k];
  }

  // One line per fault at the end of the run: what it was and how often it struck.
  void report(FILE* out) const {
    for (const Fault& f : faults) {
      bool counted = f.kind == Kind::WeakBlock || f.kind == Kind::WeakPage || f.kind == Kind::Fail || f.kind == Kind::PowerCut;
      if (counted) fprintf(out, "sim: fault %s (%s): injected %llu\n", f.where.c_str(), f.text.c_str(), (unsigned long long)f.injected);
      else fprintf(out, "sim: fault %s (%s): armed\n", f.where.c_str(), f.text.c_str());
    }
  }
};

}  // namespace nandf
