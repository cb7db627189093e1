// See args.h.
#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace simc {

static const char* g_program = "sim";
void setProgram(const char* name) { g_program = name; }
const char* program() { return g_program; }

void die(const char* fmt, ...) {
  fflush(stdout);
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: error: ", g_program);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

bool parseUnsigned(const std::string& s, uint64_t max, uint64_t* out, std::string* why) {
  size_t i = 0;
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  if (i == s.size()) {
    *why = s.empty() ? "empty value, expected a number" : "bad number '" + s + "'";
    return false;
  }
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else {
      *why = "bad number '" + s + "' (decimal digits, or 0x and hex digits)";
      return false;
    }
    if (v > (UINT64_MAX - d) / base) {
      *why = "'" + s + "' does not fit in 64 bits";
      return false;
    }
    v = v * base + d;
  }
  if (v > max) {
    char b[64];
    snprintf(b, sizeof b, "%llu (0x%llx)", (unsigned long long)max, (unsigned long long)max);
    *why = "'" + s + "' is larger than the maximum " + b;
    return false;
  }
  *out = v;
  return true;
}

bool parseSigned(const std::string& s, int64_t min, int64_t max, int64_t* out, std::string* why) {
  bool neg = !s.empty() && s[0] == '-';
  uint64_t mag;
  // The magnitude of INT64_MIN is INT64_MAX + 1.
  if (!parseUnsigned(neg ? s.substr(1) : s, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &mag, why)) {
    if (neg && why->find("bad number") != std::string::npos) *why = "bad number '" + s + "'";
    return false;
  }
  int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  if (v < min || v > max) {
    *why = "'" + s + "' is outside " + std::to_string(min) + ".." + std::to_string(max);
    return false;
  }
  *out = v;
  return true;
}

uint64_t toUnsigned(const std::string& s, const std::string& what, uint64_t max) {
  uint64_t v;
  std::string why;
  if (!parseUnsigned(s, max, &v, &why)) die("%s: %s", what.c_str(), why.c_str());
  return v;
}

int64_t toSigned(const std::string& s, const std::string& what, int64_t min, int64_t max) {
  int64_t v;
  std::string why;
  if (!parseSigned(s, min, max, &v, &why)) die("%s: %s", what.c_str(), why.c_str());
  return v;
}

double toProbability(const std::string& s, const std::string& what, double hi, bool closedHi) {
  char* end = nullptr;
  errno = 0;
  double v = s.empty() || isspace((unsigned char)s[0]) ? NAN : strtod(s.c_str(), &end);
  bool ok = !std::isnan(v) && end && !*end && !errno && v >= 0 && (closedHi ? v <= hi : v < hi);
  if (!ok) die("%s: bad probability '%s' (0 <= P %s %g)", what.c_str(), s.c_str(), closedHi ? "<=" : "<", hi);
  return v;
}

void checkInputFile(const std::string& path, const std::string& what, bool allowEmpty) {
  struct stat st;
  if (path.empty()) die("%s: empty file name", what.c_str());
  if (stat(path.c_str(), &st) != 0) die("%s: cannot read %s: %s", what.c_str(), path.c_str(), strerror(errno));
  if (S_ISDIR(st.st_mode)) die("%s: %s is a directory, not a file", what.c_str(), path.c_str());
  if (access(path.c_str(), R_OK) != 0) die("%s: cannot read %s: %s", what.c_str(), path.c_str(), strerror(errno));
  if (S_ISREG(st.st_mode) && st.st_size == 0 && !allowEmpty) die("%s: %s is empty", what.c_str(), path.c_str());
}

void checkOutputFile(const std::string& path, const std::string& what) {
  if (path.empty()) die("%s: empty file name", what.c_str());
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) die("%s: %s is a directory, not a file", what.c_str(), path.c_str());
    if (access(path.c_str(), W_OK) != 0) die("%s: cannot write %s: %s", what.c_str(), path.c_str(), strerror(errno));
    if (!S_ISREG(st.st_mode)) return;  // /dev/null, a FIFO, a terminal: writable is all we can know
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) die("%s: cannot write %s: folder %s: %s", what.c_str(), path.c_str(), dir.c_str(), strerror(errno));
  if (!S_ISDIR(st.st_mode)) die("%s: cannot write %s: %s is not a folder", what.c_str(), path.c_str(), dir.c_str());
  if (access(dir.c_str(), W_OK) != 0) die("%s: cannot write %s: folder %s: %s", what.c_str(), path.c_str(), dir.c_str(), strerror(errno));
}

std::vector<uint8_t> readFile(const std::string& path, const std::string& what) {
  checkInputFile(path, what, true);
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) die("%s: cannot read %s: %s", what.c_str(), path.c_str(), strerror(errno));
  std::vector<uint8_t> out;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) out.reserve((size_t)st.st_size);
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  bool bad = ferror(f);
  fclose(f);
  if (bad) die("%s: cannot read %s: %s", what.c_str(), path.c_str(), strerror(errno));
  return out;
}

void writeFileAtomic(const std::string& path, const uint8_t* data, size_t len, const std::string& what) {
  struct stat st;
  // Devices and FIFOs (/dev/null, /dev/full, a pipe) are written in place: no rename is possible.
  bool special = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
  std::string tmp = special ? path : path + ".tmp" + std::to_string(getpid());
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) die("%s: cannot write %s: %s", what.c_str(), path.c_str(), strerror(errno));
  bool ok = (len == 0 || fwrite(data, 1, len, f) == len);
  ok = (fflush(f) == 0) && ok;
  int err = errno;
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    if (!special) unlink(tmp.c_str());
    die("%s: cannot write %s: %s", what.c_str(), path.c_str(), strerror(err ? err : EIO));
  }
  if (!special && rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    unlink(tmp.c_str());
    die("%s: cannot write %s: %s", what.c_str(), path.c_str(), strerror(err));
  }
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out.push_back(c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

Args::Args(std::string synopsis, std::string epilogue) : synopsis_(std::move(synopsis)), epilogue_(std::move(epilogue)) {}

void Args::add(const std::string& name, const std::string& meta, const std::string& help, bool isFlag,
               std::function<void(const std::string&, const std::string&)> fn, bool repeatable) {
  Opt o;
  o.name = name;
  o.meta = meta;
  o.help = help;
  o.isFlag = isFlag;
  o.repeatable = repeatable;
  o.fn = std::move(fn);
  opts_.push_back(std::move(o));
}

void Args::flag(const std::string& name, bool* target, const std::string& help) {
  add(name, "", help, true, [target](const std::string&, const std::string&) { *target = true; });
}

void Args::text(const std::string& name, std::string* target, const std::string& help, const std::string& meta) {
  add(name, meta, help, false, [target](const std::string&, const std::string& v) { *target = v; });
}

void Args::input(const std::string& name, std::string* target, const std::string& help, const std::string& meta) {
  add(name, meta, help, false, [target](const std::string& opt, const std::string& v) {
    checkInputFile(v, opt);
    *target = v;
  });
}

void Args::output(const std::string& name, std::string* target, const std::string& help, const std::string& meta) {
  add(name, meta, help, false, [target](const std::string& opt, const std::string& v) {
    checkOutputFile(v, opt);
    *target = v;
  });
}

void Args::custom(const std::string& name, const std::string& meta, const std::string& help,
                  std::function<void(const std::string&, const std::string&)> fn, bool repeatable) {
  add(name, meta, help, meta.empty(), std::move(fn), repeatable);
}

void Args::positional(const std::string& meta, std::string* target, const std::string& help, bool required) {
  pos_.push_back({meta, help, target, required});
}

bool Args::given(const std::string& name) const {
  for (auto& o : opts_)
    if (o.name == name) return o.seen;
  return false;
}

void Args::usage(FILE* f) const {
  fprintf(f, "usage: %s\n", synopsis_.c_str());
  for (auto& p : pos_) fprintf(f, "  %-24s %s\n", p.meta.c_str(), p.help.c_str());
  for (auto& o : opts_) {
    std::string left = o.name + (o.meta.empty() ? "" : " " + o.meta);
    if (left.size() > 24) fprintf(f, "  %s\n  %-24s %s\n", left.c_str(), "", o.help.c_str());
    else fprintf(f, "  %-24s %s\n", left.c_str(), o.help.c_str());
  }
  fprintf(f, "  %-24s %s\n", "--help", "this text");
  fprintf(f, "Numbers: decimal or 0x hex, checked against the width they are stored in.\n");
  if (!epilogue_.empty()) fprintf(f, "%s\n", epilogue_.c_str());
}

void Args::parse(int argc, char** argv) {
  size_t npos = 0;
  bool onlyPositional = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (!onlyPositional && (a == "--help" || a == "-h")) {
      usage(stdout);
      exit(0);
    }
    if (!onlyPositional && a == "--") {
      onlyPositional = true;
      continue;
    }
    if (!onlyPositional && a.size() > 1 && a[0] == '+') continue;  // +verilator+... runtime options
    if (!onlyPositional && a.size() > 1 && a[0] == '-') {
      std::string name = a, value;
      bool inlineValue = false;
      size_t eq = a.find('=');
      if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        inlineValue = true;
      }
      Opt* opt = nullptr;
      for (auto& o : opts_)
        if (o.name == name) opt = &o;
      if (!opt) die("unknown option %s (see --help)", name.c_str());
      if (opt->seen && !opt->repeatable) die("%s given twice", name.c_str());
      opt->seen = true;
      if (opt->isFlag) {
        if (inlineValue) die("%s takes no value", name.c_str());
        opt->fn(name, "");
        continue;
      }
      if (!inlineValue) {
        if (i + 1 >= argc) die("%s needs a value (%s)", name.c_str(), opt->meta.c_str());
        value = argv[++i];
      }
      opt->fn(name, value);
      continue;
    }
    if (npos >= pos_.size()) die("unexpected argument '%s' (see --help)", a.c_str());
    *pos_[npos].target = a;
    npos++;
  }
  for (size_t p = npos; p < pos_.size(); p++)
    if (pos_[p].required) {
      usage(stderr);
      die("missing %s", pos_[p].meta.c_str());
    }
}

}  // namespace simc
