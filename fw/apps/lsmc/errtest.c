/* Error paths on the real IP and DMA: each case must end in the reported error (never a hang), the
 * IP must agree with the C merge on code, input and entry index, and a soft reset must bring it back. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "regs.h"
#include "soc.h"
#include "timer.h"

#define P8(a) ((uint8_t *)(uintptr_t)(a))
#define P32(a) ((uint32_t *)(uintptr_t)(a))

static int failures;

static void verdict(const char *name, int ok, const cip_result *res)
{
    char why[160];
    printf("errtest %-34s %s: %s\n", name, ok ? "PASS" : "FAIL", cip_describe(res, why, sizeof why));
    if (!ok) {
        failures++;
        print_result_failure(res);
    }
}

static void base_job(cip_job *job, size_t len0, size_t len1)
{
    memset(job, 0, sizeof *job);
    job->group = 16;
    job->run0_addr = BENCH_RUN0;
    job->run0_len = (uint32_t)len0;
    job->run1_addr = BENCH_RUN1;
    job->run1_len = (uint32_t)len1;
    job->out_addr = BENCH_HW_OUT;
    job->out_buf = job->out_capacity = BENCH_OUT_CAP;
    job->inv_addr = BENCH_HW_INV;
    job->inv_buf = job->inv_capacity = BENCH_INV_CAP;
    job->use_irq = app_use_irq;
}

/* The IP must stop with the same error as the C merge given the same job. */
static void expect_ip_error(const char *name, const cip_job *job)
{
    cip_result res;
    kb16_merge_result sw;
    int ok;

    kb16_merge(P8(job->run0_addr), job->run0_len, P8(job->run1_addr), job->run1_len, job->group,
               P8(BENCH_SW_OUT), job->out_capacity, P32(BENCH_SW_INV), job->inv_capacity / 4, &sw);
    cip_run(job, &res);
    ok = sw.status != KB16_OK && res.rc == CIP_E_IP && res.err_code == sw.status && res.err_input == sw.err_input &&
         res.err_index == sw.err_index;
    if (!ok)
        printf("  C merge says %s in input %u at entry %lu\n", kb16_err_name(sw.status), sw.err_input,
               (unsigned long)sw.err_index);
    verdict(name, ok, &res);
    if (cip_soft_reset() != CIP_OK || (cip_read(CIP_STATUS) & 0x7u)) {
        printf("errtest %s: soft reset did not clear STATUS (0x%08lx)\n", name, (unsigned long)cip_read(CIP_STATUS));
        failures++;
    }
}

int errtest_run(void)
{
    kb16_gen_params gp = {KB16_KIND_UNIFORM, 0xE770u, 200, 200, 25, 16, 0x10000000u, 0x20000000u};
    size_t len0, len1;
    cip_job job;
    cip_result res;
    bench_row row;
    bench_cfg cfg = {KB16_KIND_SHORT, 25, 16, 0xE7700000u, CIP_BRACKET_TIGHT, 0};
    uint8_t saved[16];
    uint64_t end;
    int rc;

    failures = 0;
    size_t scap;
    kb16_key_slot *scratch = bench_scratch(kb16_gen_scratch_slots(&gp), &scap);

    if (kb16_gen_runs(&gp, scratch, scap, P8(BENCH_RUN0), BENCH_RUN_CAP, &len0, P8(BENCH_RUN1), BENCH_RUN_CAP,
                      &len1) != KB16_OK) {
        printf("errtest: workload generation failed\n");
        return 1;
    }

    /* 1. reserved header bit in run 1, entry 37 */
    memcpy(saved, P8(BENCH_RUN1 + 37 * 16), 16);
    P8(BENCH_RUN1 + 37 * 16)[3] |= 0x80;
    base_job(&job, len0, len1);
    expect_ip_error("malformed input (RESERVED_BITS)", &job);
    memcpy(P8(BENCH_RUN1 + 37 * 16), saved, 16);

    /* 2. keys out of order in run 0: swap entries 16 and 32 (both group starts) */
    memcpy(saved, P8(BENCH_RUN0 + 16 * 16), 16);
    memcpy(P8(BENCH_RUN0 + 16 * 16), P8(BENCH_RUN0 + 32 * 16), 16);
    memcpy(P8(BENCH_RUN0 + 32 * 16), saved, 16);
    expect_ip_error("malformed input (swapped entries)", &job);
    memcpy(P8(BENCH_RUN0 + 32 * 16), P8(BENCH_RUN0 + 16 * 16), 16);
    memcpy(P8(BENCH_RUN0 + 16 * 16), saved, 16);

    /* 3. run length not a multiple of 16 */
    base_job(&job, len0 - 8, len1);
    expect_ip_error("bad run length (LENGTH)", &job);

    /* 4. output capacity of 10 entries */
    base_job(&job, len0, len1);
    job.out_capacity = 10 * 16;
    expect_ip_error("output capacity (OUT_OVERFLOW)", &job);

    /* 5. invalid capacity of 3 addresses */
    base_job(&job, len0, len1);
    job.inv_capacity = 3 * 4;
    expect_ip_error("invalid capacity (INV_OVERFLOW)", &job);

    /* 6. group size 1 */
    base_job(&job, len0, len1);
    job.group = 1;
    expect_ip_error("group size 1 (BAD_GROUP)", &job);

    /* 7. DMA output buffer shorter than the merged run: the writer must report its overflow */
    base_job(&job, len0, len1);
    job.out_buf = 256;
    rc = cip_run(&job, &res);
    verdict("short DMA output buffer", rc == CIP_E_DMA && res.dma_rc[DMA_CH_OUT] == DMA_FAILED &&
            res.dma[DMA_CH_OUT].code == DMA_ERR_OVERFLOW && res.dma[DMA_CH_OUT].bytes <= 256, &res);
    cip_soft_reset();

    /* 8. misaligned DMA address */
    base_job(&job, len0, len1);
    job.run0_addr += 16;
    rc = cip_run(&job, &res);
    verdict("misaligned DMA address", rc == CIP_E_DMA && res.dma_rc[DMA_CH_KEY0] == DMA_FAILED &&
            res.dma[DMA_CH_KEY0].code == DMA_ERR_MISALIGNED, &res);
    cip_soft_reset();

    /* 9. the IP waits for input that never comes: the wait must time out, soft reset must recover */
    memset(&res, 0, sizeof res);
    res.timeout_what = CIP_WAIT_NONE;
    cip_write(CIP_GROUP, 16);
    cip_write(CIP_IN0_BYTES, 64);
    cip_write(CIP_IN1_BYTES, 0);
    cip_write(CIP_OUT_CAPACITY, 0xFFFFFFFFu);
    cip_write(CIP_INV_CAPACITY, 0xFFFFFFFFu);
    cip_write(CIP_CTRL, 1u << CIP_CTRL_START_SHIFT);
    end = timer_now();
    rc = cip_wait(0, 50000, &res);
    res.rc = rc;
    verdict("IP starved of input (timeout)", rc == CIP_E_TIMEOUT && res.timeout_what == CIP_WAIT_IP &&
            timer_now() - end >= 50000, &res);
    rc = cip_soft_reset();
    res.rc = rc;
    verdict("soft reset after timeout", rc == CIP_OK && !(cip_read(CIP_STATUS) & 0x7u), &res);

    /* 10. a normal job still runs */
    if (bench_run_one(512, &cfg, &row, 1) != 0) {
        printf("errtest normal job after the errors         FAIL\n");
        failures++;
    } else {
        printf("errtest normal job after the errors         PASS\n");
    }
    printf("errtest: %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures;
}
