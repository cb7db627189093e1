// One command-line parser for every Verilator harness (sim/*/): options are declared once with the
// variable they fill; every number is parsed strictly (ASCII decimal, or 0x hex) and checked against
// the range of the variable it is stored in, file inputs are checked at start-up (missing, empty,
// directory) and so are output paths (a run never ends by finding out it cannot write its result).
// Every refusal is one line on stderr naming the option, and exit status 2.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace simc {

// "PROG: error: ..." on stderr, exit status 2. PROG defaults to "sim" (set it with setProgram).
[[noreturn]] void die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void setProgram(const char* name);
const char* program();

// Strict unsigned number: decimal digits, or 0x/0X followed by hex digits; no sign, no blanks, no
// '_'; at most `max`. Returns false (and sets *why) instead of dying, so command interpreters can
// answer with an error line and go on.
bool parseUnsigned(const std::string& s, uint64_t max, uint64_t* out, std::string* why);
// Same with an optional leading '-' and the range [min, max].
bool parseSigned(const std::string& s, int64_t min, int64_t max, int64_t* out, std::string* why);
// Die with "WHAT: ..." when the text is not a number that fits.
uint64_t toUnsigned(const std::string& s, const std::string& what, uint64_t max);
int64_t toSigned(const std::string& s, const std::string& what, int64_t min, int64_t max);
// Probability in [0, hi) or [0, hi] (closedHi).
double toProbability(const std::string& s, const std::string& what, double hi = 1.0, bool closedHi = true);

// Input files: must exist, be a regular file (or a FIFO/character device, e.g. /dev/stdin), be
// readable and, unless allowEmpty, not empty. Output files: not a directory, and the folder they go
// into exists and is writable (an existing file must be writable too). Both die naming `what`.
void checkInputFile(const std::string& path, const std::string& what, bool allowEmpty = false);
void checkOutputFile(const std::string& path, const std::string& what);
std::vector<uint8_t> readFile(const std::string& path, const std::string& what);
// Write through a temporary file in the same folder renamed on success: a failed write leaves the
// previous file untouched and no partial one.
void writeFileAtomic(const std::string& path, const uint8_t* data, size_t len, const std::string& what);

// Text with \n \r \t \\ escapes (for --uart-in and --uart-prompt).
std::string unescape(const std::string& s);

class Args {
 public:
  Args(std::string synopsis, std::string epilogue = "");

  void flag(const std::string& name, bool* target, const std::string& help);
  // Unsigned or signed integer of any width: the range defaults to the type's; `meta` names the value.
  template <typename T>
  void number(const std::string& name, T* target, const std::string& help, const std::string& meta = "N",
              T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
    static_assert(std::is_integral<T>::value, "integer option");
    add(name, meta, help, false, [=](const std::string& opt, const std::string& v) {
      if (std::is_signed<T>::value)
        *target = (T)toSigned(v, opt, (int64_t)lo, (int64_t)hi);
      else {
        uint64_t x = toUnsigned(v, opt, (uint64_t)hi);
        if (x < (uint64_t)lo) die("%s: %s is below the minimum %llu", opt.c_str(), v.c_str(), (unsigned long long)lo);
        *target = (T)x;
      }
    });
  }
  // A probability P: 0 <= P <= 1, or with `belowOne` 0 <= P < 1 (a stall probability: 1 would stall for ever).
  void probability(const std::string& name, double* target, const std::string& help, bool belowOne = false) {
    add(name, "P", help, false,
        [=](const std::string& opt, const std::string& v) { *target = toProbability(v, opt, 1.0, !belowOne); });
  }
  void text(const std::string& name, std::string* target, const std::string& help, const std::string& meta = "TEXT");
  void input(const std::string& name, std::string* target, const std::string& help, const std::string& meta = "FILE");
  void output(const std::string& name, std::string* target, const std::string& help, const std::string& meta = "FILE");
  // Anything else: `fn(option, value)`; repeatable options are allowed more than once.
  void custom(const std::string& name, const std::string& meta, const std::string& help,
              std::function<void(const std::string&, const std::string&)> fn, bool repeatable = false);
  // Positional arguments (in order); `required` of them must be present.
  void positional(const std::string& meta, std::string* target, const std::string& help, bool required = true);
  // Arguments starting with '+' are Verilator's (+verilator+...): skipped, not refused.
  void parse(int argc, char** argv);
  void usage(FILE* f) const;
  bool given(const std::string& name) const;

 private:
  struct Opt {
    std::string name, meta, help;
    bool isFlag = false, repeatable = false, seen = false;
    std::function<void(const std::string&, const std::string&)> fn;
  };
  struct Pos {
    std::string meta, help;
    std::string* target;
    bool required;
  };
  void add(const std::string& name, const std::string& meta, const std::string& help, bool isFlag,
           std::function<void(const std::string&, const std::string&)> fn, bool repeatable = false);
  std::string synopsis_, epilogue_;
  std::vector<Opt> opts_;
  std::vector<Pos> pos_;
};

}  // namespace simc
