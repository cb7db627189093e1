/* Table III of Peng et al., "LSM-Tree Based Hardware System Design for Compaction Acceleration": two runs of N/2 `short` keys, 25 % overlap, G 16, merged by the IP (timed by
 * the firmware-bracketed THROUGHPUT_COUNTER and by HW_CYCLES) and by the C merge on the CPU (timed
 * with the same counter); the IP's output is checked byte for byte against the C merge. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "csr.h"
#include "regs.h"
#include "soc.h"
#include "timer.h"

#define P8(a) ((uint8_t *)(uintptr_t)(a))
#define P32(a) ((uint32_t *)(uintptr_t)(a))

const unsigned bench_sizes_table3[5] = {512, 1024, 2048, 4096, 8192};
const unsigned bench_sizes_small[3] = {64, 128, 256};

char *fmt_ratio(char *buf, size_t len, uint64_t x, uint64_t y, unsigned dec)
{
    uint64_t scale = 1, q;
    unsigned i;
    for (i = 0; i < dec; i++)
        scale *= 10;
    if (y == 0) {
        snprintf(buf, len, "inf");
        return buf;
    }
    q = (x * scale + y / 2) / y; /* rounded */
    if (dec)
        snprintf(buf, len, "%lu.%0*lu", (unsigned long)(q / scale), (int)dec, (unsigned long)(q % scale));
    else
        snprintf(buf, len, "%lu", (unsigned long)q);
    return buf;
}

void print_result_failure(const cip_result *res)
{
    char why[160];
    unsigned ch;
    printf("  job failed: %s\n", cip_describe(res, why, sizeof why));
    for (ch = 0; ch < DMA_CHANNELS; ch++)
        if (res->dma_rc[ch] != 1)
            printf("  dma%u: %s status=0x%08lx code=%lu (%s) bytes=%lu\n", ch,
                   res->dma_rc[ch] == DMA_OK ? "ok" : res->dma_rc[ch] == DMA_TIMEOUT ? "TIMEOUT (aborted)" : res->dma_rc[ch] == DMA_ABORTED ? "aborted" : "ERROR",
                   (unsigned long)res->dma[ch].status, (unsigned long)res->dma[ch].code,
                   dma_err_name(res->dma[ch].code), (unsigned long)res->dma[ch].bytes);
}


/* The generator sorts its keys: in the on-chip RAM left free by the image (the heap, ~200 KiB) that is
 * several times faster than in DDR; big workloads fall back to DDR. */
extern char __heap_start[], __heap_end[];

kb16_key_slot *bench_scratch(size_t slots, size_t *cap)
{
    size_t on_chip = (size_t)(__heap_end - __heap_start) / sizeof(kb16_key_slot);
    if (slots <= on_chip) {
        *cap = on_chip;
        return (kb16_key_slot *)(void *)__heap_start;
    }
    *cap = BENCH_SCRATCH_CAP / sizeof(kb16_key_slot);
    return (kb16_key_slot *)P8(BENCH_SCRATCH);
}

/* Run the IP on the runs at run0/run1 (the C merge on the CPU first unless cfg->no_sw),
 * check its output byte for byte against the C merge and, when given, the host's expected result.
 * Fills `row`; returns 0 when every check passed. */
static int bench_measure(uint32_t run0, uint32_t len0, uint32_t run1, uint32_t len1, const bench_expect *exp,
                         const bench_cfg *cfg, bench_row *row, int verbose)
{
    kb16_merge_result sw;
    cip_job job;
    cip_result res;
    int rc, ok = 1;
    long d;
    char b1[24], b2[24], b3[24];

    row->bytes_in = (unsigned)(len0 + len1);
    row->entries_in = row->bytes_in / KB16_ENTRY_BYTES;
    memset(&sw, 0, sizeof sw);
    if (!cfg->no_sw) {
        /* the C merge on the CPU, timed with the IP's throughput counter */
        cip_write(CIP_COUNT_CONTROL, 1);
        kb16_merge(P8(run0), len0, P8(run1), len1, cfg->group, P8(BENCH_SW_OUT), BENCH_OUT_CAP, P32(BENCH_SW_INV),
                   BENCH_INV_CAP / 4, &sw);
        cip_write(CIP_COUNT_CONTROL, 0);
        row->sw_cycles = cip_read(CIP_THROUGHPUT_COUNTER);
        if (sw.status != KB16_OK) {
            printf("run: C merge failed: %s in input %u at entry %lu\n", kb16_err_name(sw.status), sw.err_input,
                   (unsigned long)sw.err_index);
            return -1;
        }
        if (exp && (sw.out_bytes != exp->out_len || sw.inv_count * 4 != exp->inv_len || sw.out_keys != exp->out_keys ||
                    kb16_first_diff(P8(BENCH_SW_OUT), exp->out, exp->out_len) >= 0 ||
                    kb16_first_diff(P8(BENCH_SW_INV), exp->inv, exp->inv_len) >= 0)) {
            printf("  CHECK: the C merge differs from the host's reference merge (%lu/%lu bytes, %lu keys; "
                   "expected %lu/%lu, %lu)\n", (unsigned long)sw.out_bytes, (unsigned long)(sw.inv_count * 4),
                   (unsigned long)sw.out_keys, (unsigned long)exp->out_len, (unsigned long)exp->inv_len,
                   (unsigned long)exp->out_keys);
            ok = 0;
        }
    } else {
        /* no C merge: the host's reference merge sizes the buffers */
        sw.out_bytes = exp->out_len;
        sw.out_entries = exp->out_len / KB16_ENTRY_BYTES;
        sw.inv_count = exp->inv_len / 4;
        sw.out_keys = exp->out_keys;
    }
    row->entries_out = (unsigned)(sw.out_bytes / KB16_ENTRY_BYTES);

    /* the IP: DMA in, merge, DMA out */
    cip_job_from_reference(&job, cfg->group, run0, len0, run1, len1, BENCH_HW_OUT, BENCH_HW_INV, &sw);
    job.use_irq = app_use_irq;
    job.bracket = cfg->bracket;
    rc = cip_run(&job, &res);
    row->fw_cycles = res.cnt.throughput;
    row->hw_cycles = res.cnt.hw_cycles;

    if (rc != CIP_OK) {
        print_result_failure(&res);
        ok = 0;
    } else {
        /* check: data moved equals the Table I counters, output equals the reference */
        const uint8_t *ref_out = exp ? exp->out : P8(BENCH_SW_OUT);
        const uint8_t *ref_inv = exp ? exp->inv : P8(BENCH_SW_INV);
        const char *ref = exp ? "the host's reference merge" : "the C merge";
        if (res.dma[DMA_CH_OUT].bytes != sw.out_bytes || res.dma[DMA_CH_INV].bytes != sw.inv_count * 4) {
            printf("  CHECK: DMA wrote %lu/%lu bytes, expected %lu/%lu\n", (unsigned long)res.dma[DMA_CH_OUT].bytes,
                   (unsigned long)res.dma[DMA_CH_INV].bytes, (unsigned long)sw.out_bytes,
                   (unsigned long)(sw.inv_count * 4));
            ok = 0;
        } else if ((d = kb16_first_diff(P8(BENCH_HW_OUT), ref_out, sw.out_bytes)) >= 0) {
            printf("  CHECK: merged output differs from %s at byte %ld (entry %ld)\n", ref, d, d / 16);
            ok = 0;
        } else if ((d = kb16_first_diff(P8(BENCH_HW_INV), ref_inv, sw.inv_count * 4)) >= 0) {
            printf("  CHECK: invalid addresses differ from %s at address %ld\n", ref, d / 4);
            ok = 0;
        }
        if (res.cnt.enc_words * 4u != sw.out_bytes || res.cnt.inv_addrs != sw.inv_count ||
            res.cnt.key0_words * 4u != len0 || res.cnt.key1_words * 4u != len1 || res.cnt.out_keys != sw.out_keys) {
            printf("  CHECK: counters enc_words=%lu inv=%lu key0=%lu key1=%lu out_keys=%lu, expected %lu %lu %lu %lu %lu\n",
                   (unsigned long)res.cnt.enc_words, (unsigned long)res.cnt.inv_addrs,
                   (unsigned long)res.cnt.key0_words, (unsigned long)res.cnt.key1_words,
                   (unsigned long)res.cnt.out_keys, (unsigned long)(sw.out_bytes / 4), (unsigned long)sw.inv_count,
                   (unsigned long)(len0 / 4), (unsigned long)(len1 / 4), (unsigned long)sw.out_keys);
            ok = 0;
        }
    }
    row->pass = ok;
    if (verbose)
        printf("entries_in=%u entries_out=%u bytes_in=%u fw_cycles=%lu hw_cycles=%lu us/entry=%s MB/s=%s "
               "sw_cycles=%lu sw/fw=%s %s\n",
               row->entries_in, row->entries_out, row->bytes_in, (unsigned long)row->fw_cycles,
               (unsigned long)row->hw_cycles, fmt_ratio(b1, sizeof b1, row->fw_cycles, (uint64_t)row->entries_in * 100u, 6),
               fmt_ratio(b2, sizeof b2, (uint64_t)row->bytes_in * 100u, row->fw_cycles, 2),
               (unsigned long)row->sw_cycles, fmt_ratio(b3, sizeof b3, row->sw_cycles, row->fw_cycles, 2),
               ok ? "PASS" : "FAIL");
    return ok ? 0 : -1;
}

int bench_run_one(unsigned entries, const bench_cfg *cfg, bench_row *row, int verbose)
{
    kb16_gen_params gp;
    size_t len0 = 0, len1 = 0;
    int rc;
    uint64_t t0;
    kb16_key_slot *scratch;
    size_t scratch_cap;
    bench_cfg c = *cfg;

    memset(row, 0, sizeof *row);
    if (entries < 2 || entries > BENCH_MAX_ENTRIES) {
        printf("run: entries must be 2..%u\n", BENCH_MAX_ENTRIES);
        return -1;
    }
    memset(&gp, 0, sizeof gp);
    gp.kind = cfg->kind;
    gp.seed = cfg->seed ^ entries;
    gp.n0 = entries / 2;
    gp.n1 = entries - entries / 2;
    gp.overlap_pct = cfg->overlap_pct;
    gp.group = cfg->group;
    gp.addr0_base = 0x10000000u;
    gp.addr1_base = 0x20000000u;

    /* prepare runs in DDR */
    t0 = timer_now();
    scratch = bench_scratch(kb16_gen_scratch_slots(&gp), &scratch_cap);
    rc = kb16_gen_runs(&gp, scratch, scratch_cap, P8(BENCH_RUN0), BENCH_RUN_CAP, &len0, P8(BENCH_RUN1),
                       BENCH_RUN_CAP, &len1);
    if (rc != KB16_OK) {
        printf("run: workload generation failed: %s\n", kb16_err_name((unsigned)rc));
        return -1;
    }
    if (verbose)
        printf("run: workload generated in %lu cycles\n", (unsigned long)(timer_now() - t0));
    c.no_sw = 0; /* the C merge is the only reference of a generated workload */
    return bench_measure(BENCH_RUN0, (uint32_t)len0, BENCH_RUN1, (uint32_t)len1, NULL, &c, row, verbose);
}

static void bench_print_row(const bench_row *r)
{
    char b1[24], b2[24], b3[24];
    printf("%8u %8u %8u %10lu %10lu %12s %8s %10lu %7s %s\n", r->entries_in, r->entries_out, r->bytes_in,
           (unsigned long)r->fw_cycles, (unsigned long)r->hw_cycles,
           fmt_ratio(b1, sizeof b1, r->fw_cycles, (uint64_t)r->entries_in * 100u, 6),
           fmt_ratio(b2, sizeof b2, (uint64_t)r->bytes_in * 100u, r->fw_cycles, 2), (unsigned long)r->sw_cycles,
           fmt_ratio(b3, sizeof b3, r->sw_cycles, r->fw_cycles, 2), r->pass ? "PASS" : "FAIL");
}

static void bench_print_head(const char *source, const bench_cfg *cfg)
{
    printf("Table III: %s, G=%u, %lu-bit streams, %s bracket, %s, 100 MHz\n", source, cfg->group,
           (unsigned long)(cip_read(CIP_VERSION) >> 16), cfg->bracket == CIP_BRACKET_PAPER ? "paper" : "tight",
           app_use_irq ? "IP done by interrupt" : "IP done by polling");
    printf("%8s %8s %8s %10s %10s %12s %8s %10s %7s %s\n", "entries", "out", "bytes", "fw_cycles", "hw_cycles",
           "us/entry", "MB/s", "sw_cycles", "sw/fw", "check");
}

/* The machine-readable block (report.parse_table3_lines) and the verdict; returns the failed rows. */
static int bench_print_block(const bench_row *rows, unsigned n)
{
    char b1[24], b2[24];
    unsigned i;
    int failed = 0;
    printf("TABLE3 entries_in,entries_out,bytes_in,fw_cycles,hw_cycles,us_per_entry,mb_per_s,sw_cycles,pass\n");
    for (i = 0; i < n; i++) {
        failed += !rows[i].pass;
        printf("TABLE3 %u,%u,%u,%lu,%lu,%s,%s,%lu,%d\n", rows[i].entries_in, rows[i].entries_out, rows[i].bytes_in,
               (unsigned long)rows[i].fw_cycles, (unsigned long)rows[i].hw_cycles,
               fmt_ratio(b1, sizeof b1, rows[i].fw_cycles, (uint64_t)rows[i].entries_in * 100u, 6),
               fmt_ratio(b2, sizeof b2, (uint64_t)rows[i].bytes_in * 100u, rows[i].fw_cycles, 2),
               (unsigned long)rows[i].sw_cycles, rows[i].pass);
    }
    printf("TABLE3 END\n");
    printf("bench: %s (%d of %u rows failed)\n", failed ? "FAIL" : "PASS", failed, n);
    return failed;
}

int bench_table(const unsigned *sizes, unsigned n) { return bench_table_bracket(sizes, n, CIP_BRACKET_TIGHT); }

int bench_table_bracket(const unsigned *sizes, unsigned n, int bracket)
{
    bench_row rows[BENCH_MAX_ROWS];
    bench_cfg cfg = BENCH_CFG_TABLE3;
    unsigned i;

    cfg.bracket = bracket;
    bench_print_head("two runs of N/2 short keys generated on the CPU, 25% overlap", &cfg);
    if (n > BENCH_MAX_ROWS)
        n = BENCH_MAX_ROWS;
    for (i = 0; i < n; i++) {
        bench_run_one(sizes[i], &cfg, &rows[i], 0);
        bench_print_row(&rows[i]);
    }
    return bench_print_block(rows, n);
}

/* ---- Table III from workloads the host generated and loaded (SIM_ARG 7; docs/firmware.md) ---- */
/* Header words TABLE_HEAD_*, then TABLE_ROW_NWORDS words per row (TABLE_ROW_*), flags TABLE_F_*, magic:
 * lsmc_job.h (app.h). */

int bench_host_table(void)
{
    const volatile uint32_t *d = (const volatile uint32_t *)(uintptr_t)DDR_BASE;
    bench_row rows[BENCH_MAX_ROWS];
    bench_cfg cfg = {KB16_KIND_SHORT, 0, 16, 0, CIP_BRACKET_TIGHT, 0};
    uint32_t flags, nrows;
    unsigned i;
    int saved_irq = app_use_irq, failed;

    dcache_invalidate(); /* the host wrote DDR behind the CPU's back */
    if (d[TABLE_HEAD_MAGIC] != TABLE_MAGIC || d[TABLE_HEAD_VERSION] != TABLE_VERSION) {
        printf("bench: no Table III descriptor at 0x%08lx (magic 0x%08lx version %lu, want 0x%08lx version %lu)\n",
               (unsigned long)DDR_BASE, (unsigned long)d[TABLE_HEAD_MAGIC], (unsigned long)d[TABLE_HEAD_VERSION],
               (unsigned long)TABLE_MAGIC, (unsigned long)TABLE_VERSION);
        return -1;
    }
    flags = d[TABLE_HEAD_FLAGS];
    nrows = d[TABLE_HEAD_ROWS];
    if (flags & ~TABLE_F_KNOWN) {
        printf("bench: descriptor word 3 (flags) 0x%08lx has unknown bits 0x%08lx\n", (unsigned long)flags,
               (unsigned long)(flags & ~TABLE_F_KNOWN));
        return -1;
    }
    if (nrows < 1 || nrows > BENCH_MAX_ROWS || TABLE_HEAD_NWORDS + nrows * TABLE_ROW_NWORDS > JOB_DESC_WORDS) {
        printf("bench: descriptor word 4 (rows) %lu outside 1..%u\n", (unsigned long)nrows, BENCH_MAX_ROWS);
        return -1;
    }
    cfg.group = d[TABLE_HEAD_GROUP];
    cfg.bracket = (flags & TABLE_F_PAPER) ? CIP_BRACKET_PAPER : CIP_BRACKET_TIGHT;
    cfg.no_sw = (flags & TABLE_F_NO_SW) != 0;
    app_use_irq = (flags & TABLE_F_IRQ) != 0;

    bench_print_head("workloads generated and loaded by the host", &cfg);
    for (i = 0; i < nrows; i++) {
        const volatile uint32_t *w = d + TABLE_HEAD_NWORDS + i * TABLE_ROW_NWORDS;
        static const char *const names[4] = {"run0", "run1", "expected output", "expected invalid addresses"};
        desc_field f[4];
        bench_expect exp;
        unsigned k;
        memset(&rows[i], 0, sizeof rows[i]);
        for (k = 0; k < 4; k++) {
            f[k].name = names[k];
            f[k].word = TABLE_HEAD_NWORDS + i * TABLE_ROW_NWORDS + 2 * k;
            f[k].off = w[2 * k];
            f[k].len = w[2 * k + 1];
        }
        if (desc_check_fields("bench", f, 4) || w[TABLE_ROW_OUT_LEN] > BENCH_OUT_CAP - DMA_ALIGN ||
            w[TABLE_ROW_INV_LEN] > BENCH_INV_CAP - DMA_ALIGN) {
            printf("bench: row %u refused (output up to %u bytes, invalid addresses up to %u)\n", i,
                   BENCH_OUT_CAP - DMA_ALIGN, BENCH_INV_CAP - DMA_ALIGN);
            rows[i].pass = 0;
            bench_print_row(&rows[i]);
            continue;
        }
        exp.out = P8(DDR_BASE + w[TABLE_ROW_OUT_OFF]);
        exp.out_len = w[TABLE_ROW_OUT_LEN];
        exp.inv = P8(DDR_BASE + w[TABLE_ROW_INV_OFF]);
        exp.inv_len = w[TABLE_ROW_INV_LEN];
        exp.out_keys = w[TABLE_ROW_OUT_KEYS];
        bench_measure(DDR_BASE + w[TABLE_ROW_RUN0_OFF], w[TABLE_ROW_RUN0_LEN], DDR_BASE + w[TABLE_ROW_RUN1_OFF], w[TABLE_ROW_RUN1_LEN], &exp,
                      &cfg, &rows[i], 0);
        bench_print_row(&rows[i]);
    }
    failed = bench_print_block(rows, nrows);
    app_use_irq = saved_irq;
    return failed;
}
