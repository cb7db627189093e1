/* Strict number parsing for consoles and descriptors: what was typed is either exactly a number that
 * fits its field, or refused (never wrapped, cut or half-read as strtoul would). */
#ifndef LSMC_PARSE_H
#define LSMC_PARSE_H

#include <stdint.h>

/* `s` as ASCII decimal digits (no leading zero), or "0x" and hex digits; no sign, blank or other
 * character. 0 and *v
 * set when it is such a number and <= max; -1 otherwise (*v unchanged). */
int parse_u32(const char *s, uint32_t max, uint32_t *v);
/* The same for an optional console argument: argv[i] when i < argc, else `dflt`. On failure prints
 * "<cmd>: <what> must be a number 0..max, not '<text>'" (or "min..max" when min > 0) and returns -1. */
int parse_arg(const char *cmd, const char *what, int argc, char **argv, int i, uint32_t min, uint32_t max,
              uint32_t dflt, uint32_t *v);
/* A console's `exit [code]`: *code (default 0) when the words are `exit` and at most one number 0..255;
 * else prints the usage or the refusal and returns -1. */
int parse_exit(int argc, char **argv, uint32_t *code);

#endif
