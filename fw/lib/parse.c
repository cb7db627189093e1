#include "parse.h"

#include <stdio.h>

int parse_u32(const char *s, uint32_t max, uint32_t *v)
{
    uint32_t x = 0, base = 10, d;
    if (!s || !*s)
        return -1;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        if (!*s)
            return -1;
    } else if (s[0] == '0' && s[1]) {
        return -1; /* "010": octal to strtoul, decimal to a reader; neither is assumed */
    }
    for (; *s; s++) {
        char c = *s;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return -1;
        if (x > (UINT32_MAX - d) / base)
            return -1; /* does not fit 32 bits */
        x = x * base + d;
    }
    if (x > max)
        return -1;
    *v = x;
    return 0;
}

int parse_arg(const char *cmd, const char *what, int argc, char **argv, int i, uint32_t min, uint32_t max,
              uint32_t dflt, uint32_t *v)
{
    uint32_t x;
    if (i >= argc) {
        *v = dflt;
        return 0;
    }
    if (parse_u32(argv[i], max, &x) || x < min) {
        printf("%s: %s must be a number %lu..%lu, not '%s'\n", cmd, what, (unsigned long)min, (unsigned long)max,
               argv[i]);
        return -1;
    }
    *v = x;
    return 0;
}

int parse_exit(int argc, char **argv, uint32_t *code)
{
    if (argc > 2) {
        printf("usage: exit [code]\n");
        return -1;
    }
    return parse_arg("exit", "code", argc, argv, 1, 0, 255, 0, code);
}
