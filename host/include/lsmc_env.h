/* The library's environment variables (LSMC_*, docs/leveldb.md): a value the library cannot use is
 * named on stderr once per process, with what the library does instead. */
#ifndef LSMC_ENV_H
#define LSMC_ENV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "lsmc: NAME='VALUE' PROBLEM; using INSTEAD", once per NAME. */
void lsmc_env_bad(const char *name, const char *value, const char *problem, const char *instead);
/* Unset, empty or "0": 0; "1": 1; anything else is named and read as 0. */
int lsmc_env_flag(const char *name);
/* A number in [lo, hi] (hi excluded when hi_open); unset or empty: dflt; anything else is named
 * (`what` says what the number is) and dflt is used. */
double lsmc_env_number(const char *name, double dflt, double lo, double hi, int hi_open, const char *what);
/* One of the `n` words in `words`, returning its index; unset or empty: dflt; else named, dflt used. */
int lsmc_env_choice(const char *name, const char *const *words, int n, int dflt);

/* LSMC_RTL_STALL (probability in [0, 1), default 0) and LSMC_RTL_SEED (returns 0 when unset or bad). */
double lsmc_env_rtl_stall(void);
int lsmc_env_rtl_seed(unsigned long long *seed);
/* Reads every variable of the library once, so each bad value is named when the library starts. */
void lsmc_env_check(void);

#ifdef __cplusplus
}
#endif
#endif
