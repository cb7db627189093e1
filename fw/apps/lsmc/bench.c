/* Table III of seed 000: two runs of N/2 `short` keys, 25 % overlap, G 16, merged by the IP (timed by
 * the firmware-bracketed THROUGHPUT_COUNTER and by HW_CYCLES) and by the C merge on the CPU (timed
 * with the same counter); the IP's output is checked byte for byte against the C merge. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "regs.h"
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

int bench_run_one(unsigned entries, const bench_cfg *cfg, bench_row *row, int verbose)
{
    kb16_gen_params gp;
    kb16_merge_result sw;
    cip_job job;
    cip_result res;
    size_t len0 = 0, len1 = 0;
    int rc, ok = 1;
    long d;
    char b1[24], b2[24], b3[24];
    uint64_t t0;
    kb16_key_slot *scratch;
    size_t scratch_cap;

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
    row->bytes_in = (unsigned)(len0 + len1);
    row->entries_in = row->bytes_in / KB16_ENTRY_BYTES;

    /* the C merge on the CPU, timed with the IP's throughput counter */
    cip_write(CIP_COUNT_CONTROL, 1);
    kb16_merge(P8(BENCH_RUN0), len0, P8(BENCH_RUN1), len1, cfg->group, P8(BENCH_SW_OUT), BENCH_OUT_CAP,
               P32(BENCH_SW_INV), BENCH_INV_CAP / 4, &sw);
    cip_write(CIP_COUNT_CONTROL, 0);
    row->sw_cycles = cip_read(CIP_THROUGHPUT_COUNTER);
    if (sw.status != KB16_OK) {
        printf("run: C merge failed: %s in input %u at entry %lu\n", kb16_err_name(sw.status), sw.err_input,
               (unsigned long)sw.err_index);
        return -1;
    }
    row->entries_out = (unsigned)sw.out_entries;

    /* the IP: DMA in, merge, DMA out */
    cip_job_from_reference(&job, cfg->group, BENCH_RUN0, (uint32_t)len0, BENCH_RUN1, (uint32_t)len1, BENCH_HW_OUT,
                           BENCH_HW_INV, &sw);
    job.use_irq = app_use_irq;
    rc = cip_run(&job, &res);
    row->fw_cycles = res.cnt.throughput;
    row->hw_cycles = res.cnt.hw_cycles;

    if (rc != CIP_OK) {
        print_result_failure(&res);
        ok = 0;
    } else {
        /* check: data moved equals the Table I counters, output equals the C merge */
        if (res.dma[DMA_CH_OUT].bytes != sw.out_bytes || res.dma[DMA_CH_INV].bytes != sw.inv_count * 4) {
            printf("  CHECK: DMA wrote %lu/%lu bytes, expected %lu/%lu\n", (unsigned long)res.dma[DMA_CH_OUT].bytes,
                   (unsigned long)res.dma[DMA_CH_INV].bytes, (unsigned long)sw.out_bytes,
                   (unsigned long)(sw.inv_count * 4));
            ok = 0;
        }
        if ((d = kb16_first_diff(P8(BENCH_HW_OUT), P8(BENCH_SW_OUT), sw.out_bytes)) >= 0) {
            printf("  CHECK: merged output differs from the C merge at byte %ld (entry %ld)\n", d, d / 16);
            ok = 0;
        }
        if ((d = kb16_first_diff(P8(BENCH_HW_INV), P8(BENCH_SW_INV), sw.inv_count * 4)) >= 0) {
            printf("  CHECK: invalid addresses differ from the C merge at address %ld\n", d / 4);
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

int bench_table(const unsigned *sizes, unsigned n)
{
    bench_row rows[8];
    bench_cfg cfg = {KB16_KIND_SHORT, 25, 16, 0x5EED0000u};
    unsigned i;
    int failed = 0;
    char b1[24], b2[24], b3[24];

    printf("Table III: two runs of N/2 short keys, 25%% overlap, G=16, %s, 100 MHz\n",
           app_use_irq ? "IP done by interrupt" : "IP done by polling");
    printf("%8s %8s %8s %10s %10s %12s %8s %10s %7s %s\n", "entries", "out", "bytes", "fw_cycles", "hw_cycles",
           "us/entry", "MB/s", "sw_cycles", "sw/fw", "check");
    if (n > sizeof rows / sizeof rows[0])
        n = sizeof rows / sizeof rows[0];
    for (i = 0; i < n; i++) {
        bench_run_one(sizes[i], &cfg, &rows[i], 0);
        failed += !rows[i].pass;
        printf("%8u %8u %8u %10lu %10lu %12s %8s %10lu %7s %s\n", rows[i].entries_in, rows[i].entries_out,
               rows[i].bytes_in, (unsigned long)rows[i].fw_cycles, (unsigned long)rows[i].hw_cycles,
               fmt_ratio(b1, sizeof b1, rows[i].fw_cycles, (uint64_t)rows[i].entries_in * 100u, 6),
               fmt_ratio(b2, sizeof b2, (uint64_t)rows[i].bytes_in * 100u, rows[i].fw_cycles, 2),
               (unsigned long)rows[i].sw_cycles, fmt_ratio(b3, sizeof b3, rows[i].sw_cycles, rows[i].fw_cycles, 2),
               rows[i].pass ? "PASS" : "FAIL");
    }
    printf("TABLE3 entries_in,entries_out,bytes_in,fw_cycles,hw_cycles,us_per_entry,mb_per_s,sw_cycles,pass\n");
    for (i = 0; i < n; i++)
        printf("TABLE3 %u,%u,%u,%lu,%lu,%s,%s,%lu,%d\n", rows[i].entries_in, rows[i].entries_out, rows[i].bytes_in,
               (unsigned long)rows[i].fw_cycles, (unsigned long)rows[i].hw_cycles,
               fmt_ratio(b1, sizeof b1, rows[i].fw_cycles, (uint64_t)rows[i].entries_in * 100u, 6),
               fmt_ratio(b2, sizeof b2, (uint64_t)rows[i].bytes_in * 100u, rows[i].fw_cycles, 2),
               (unsigned long)rows[i].sw_cycles, rows[i].pass);
    printf("TABLE3 END\n");
    printf("bench: %s (%d of %u rows failed)\n", failed ? "FAIL" : "PASS", failed, n);
    return failed;
}
