/* Host C baseline: the firmware's KB16 merge (fw/lib/kb16.c, the code the VexRiscv runs) compiled
 * natively with gcc -O2 and timed in memory on this machine's CPU.
 *
 * Usage: host_merge --group G --reps R [--out MERGED --invalid INV] RUN0 RUN1 [RUN0 RUN1 ...]
 * Each RUN0 RUN1 pair is one data set. Every round merges every set in turn (R rounds, after one
 * untimed warm-up round): rotating through several sets keeps the branch predictor from learning one
 * set, which otherwise makes small runs look 3-4x faster than they are. Each merge is timed on its
 * own (CLOCK_MONOTONIC) and normalised by its set's input entries.
 * Output: one "sample set=S us_per_entry=X" line per timed merge, then
 * "result entries_in=N entries_out=M invalid=K sets=S reps=R" for set 0, whose merged run and invalid
 * addresses (LE uint32) go to --out / --invalid for checking against the reference model.
 * Exit codes: 0 ok, 2 bad usage or unreadable file, 3 the merge reported an error (malformed input). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kb16.h"

typedef struct {
    uint8_t *run[2];
    size_t len[2];
    uint8_t *out;
    size_t out_cap;
    uint32_t *inv;
    size_t inv_cap;
    kb16_merge_result res;
} data_set;

static void die(int code, const char *fmt, const char *arg)
{
    fprintf(stderr, "host_merge: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(code);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die(2, "%s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) die(2, "%s: out of memory", path);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) die(2, "%s: out of memory", path);
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    if (ferror(f)) die(2, "%s: read error", path);
    fclose(f);
    *len = n;
    return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) die(2, "%s: cannot write", path);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    unsigned group = 16;
    long reps = 20;
    const char *out_path = NULL, *inv_path = NULL;
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') { first_file = i; break; }
        if (i + 1 >= argc) die(2, "option %s needs a value", argv[i]);
        char *end;
        if (!strcmp(argv[i], "--group")) {
            group = (unsigned)strtoul(argv[++i], &end, 10);
            if (*end || group < KB16_MIN_GROUP || group > KB16_MAX_GROUP) die(2, "--group must be 2..256%s", "");
        } else if (!strcmp(argv[i], "--reps")) {
            reps = strtol(argv[++i], &end, 10);
            if (*end || reps < 1 || reps > 1000000) die(2, "--reps must be 1..1000000%s", "");
        } else if (!strcmp(argv[i], "--out")) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--invalid")) {
            inv_path = argv[++i];
        } else {
            die(2, "unknown option %s", argv[i]);
        }
    }
    int nfiles = argc - first_file;
    if (nfiles < 2 || nfiles % 2) die(2, "usage: host_merge --group G --reps R [--out F --invalid F] RUN0 RUN1 [RUN0 RUN1 ...]%s", "");
    int nsets = nfiles / 2;
    data_set *sets = calloc((size_t)nsets, sizeof *sets);
    if (!sets) die(2, "out of memory%s", "");
    for (int s = 0; s < nsets; s++) {
        data_set *d = &sets[s];
        for (int k = 0; k < 2; k++) d->run[k] = read_file(argv[first_file + 2 * s + k], &d->len[k]);
        /* A merged key may need a pad and a virtual entry its inputs did not: 3 entries per input
         * entry bounds the output; invalid addresses are at most one per run-1 entry. */
        d->out_cap = 3 * (d->len[0] + d->len[1]) + KB16_ENTRY_BYTES;
        d->inv_cap = d->len[1] / KB16_ENTRY_BYTES + 1;
        d->out = malloc(d->out_cap);
        d->inv = malloc(d->inv_cap * sizeof *d->inv);
        if (!d->out || !d->inv) die(2, "out of memory%s", "");
    }
    /* Warm-up round (untimed) also checks every set: a malformed input is an error, not a timing. */
    for (int s = 0; s < nsets; s++) {
        data_set *d = &sets[s];
        d->res.status = KB16_OK;
        if (kb16_merge(d->run[0], d->len[0], d->run[1], d->len[1], group, d->out, d->out_cap, d->inv,
                       d->inv_cap, &d->res) != KB16_OK) {
            fprintf(stderr, "host_merge: set %d: %s at input %u entry %zu\n", s, kb16_err_name(d->res.status),
                    d->res.err_input, d->res.err_index);
            return 3;
        }
    }
    for (long r = 0; r < reps; r++) {
        for (int s = 0; s < nsets; s++) {
            data_set *d = &sets[s];
            double t0 = now_us();
            int rc = kb16_merge(d->run[0], d->len[0], d->run[1], d->len[1], group, d->out, d->out_cap, d->inv,
                                d->inv_cap, &d->res);
            double t1 = now_us();
            if (rc != KB16_OK) die(3, "merge failed on a timed round%s", "");
            size_t entries = (d->len[0] + d->len[1]) / KB16_ENTRY_BYTES;
            printf("sample set=%d us_per_entry=%.6f\n", s, entries ? (t1 - t0) / (double)entries : 0.0);
        }
    }
    /* The last timed merge of set 0 left its output in place (sets never share buffers). */
    data_set *d0 = &sets[0];
    if (out_path) write_file(out_path, d0->out, d0->res.out_bytes);
    if (inv_path) {
        uint8_t *le = malloc(d0->res.inv_count * 4 + 1);
        if (!le) die(2, "out of memory%s", "");
        for (size_t i = 0; i < d0->res.inv_count; i++)
            for (int b = 0; b < 4; b++) le[4 * i + b] = (uint8_t)(d0->inv[i] >> (8 * b));
        write_file(inv_path, le, d0->res.inv_count * 4);
        free(le);
    }
    printf("result entries_in=%zu entries_out=%zu invalid=%zu sets=%d reps=%ld\n",
           (d0->len[0] + d0->len[1]) / KB16_ENTRY_BYTES, d0->res.out_entries, d0->res.inv_count, nsets, reps);
    return 0;
}
