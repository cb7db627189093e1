// The library's LSMC_* variables: what cannot be used is said once per variable (lsmc_env.h).
#include "lsmc_env.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

extern "C" void lsmc_env_bad(const char* name, const char* value, const char* problem, const char* instead) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> l(mu);
  if (!said.insert(name).second) return;
  fprintf(stderr, "lsmc: %s='%s' %s; using %s\n", name, value ? value : "", problem, instead);
}

extern "C" int lsmc_env_flag(const char* name) {
  const char* v = getenv(name);
  if (!v || !*v || !strcmp(v, "0")) return 0;
  if (!strcmp(v, "1")) return 1;
  lsmc_env_bad(name, v, "is not 0 or 1", "0 (off)");
  return 0;
}

extern "C" double lsmc_env_number(const char* name, double dflt, double lo, double hi, int hi_open,
                                  const char* what) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  errno = 0;
  double x = strtod(v, &end);
  const bool ok = errno == 0 && end != v && *end == 0 && std::isfinite(x) && x >= lo && (hi_open ? x < hi : x <= hi);
  if (ok) return x;
  char instead[64];
  snprintf(instead, sizeof instead, "%g", dflt);
  std::string problem = "is not " + std::string(what);
  lsmc_env_bad(name, v, problem.c_str(), instead);
  return dflt;
}

extern "C" int lsmc_env_choice(const char* name, const char* const* words, int n, int dflt) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  std::string all;
  for (int i = 0; i < n; i++) {
    if (!strcmp(v, words[i])) return i;
    all += (i ? "|" : "") + std::string(words[i]);
  }
  std::string problem = "is not one of " + all;
  lsmc_env_bad(name, v, problem.c_str(), words[dflt]);
  return dflt;
}

extern "C" double lsmc_env_rtl_stall(void) {
  return lsmc_env_number("LSMC_RTL_STALL", 0, 0, 1, 1, "a probability in [0, 1)");
}

extern "C" int lsmc_env_rtl_seed(unsigned long long* seed) {
  const char* v = getenv("LSMC_RTL_SEED");
  if (!v || !*v) return 0;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = strtoull(v, &end, 0);
  if (errno || *end || v[0] == '-') {
    lsmc_env_bad("LSMC_RTL_SEED", v, "is not an unsigned integer", "the default seed");
    return 0;
  }
  *seed = x;
  return 1;
}

extern "C" void lsmc_env_check(void) {
  lsmc_env_rtl_stall();
  unsigned long long seed;
  lsmc_env_rtl_seed(&seed);
}
