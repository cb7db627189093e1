/* A job loaded by the host into DDR: a descriptor at 0x4000_0000 names the runs, the expected result
 * and the output buffers (layout in docs/firmware.md); the firmware runs it on the IP and on the C
 * merge, compares, and writes a result block back into the descriptor for the host to dump. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "csr.h"
#include "regs.h"
#include "soc.h"

#define JOB_DESC_ADDR DDR_BASE
#define JOB_SW_OUT 0x48500000u /* scratch of the C merge (the bench's area) */
#define JOB_SW_INV 0x48700000u
#define JOB_SW_OUT_CAP 0x00200000u
#define JOB_SW_INV_CAP 0x00100000u

/* Descriptor words JOB_DESC_* (JOB_DESC_NWORDS of them, then the result block JOB_RES_*), flags JOB_F_*,
 * status codes JOB_* (the exit code of SIM_ARG 2), magic numbers: lsmc_job.h (app.h). */

static long diff_at(uint32_t a, uint32_t b, uint32_t n)
{
    const uint8_t *x = (const uint8_t *)(uintptr_t)a, *y = (const uint8_t *)(uintptr_t)b;
    uint32_t i;
    for (i = 0; i < n; i++)
        if (x[i] != y[i])
            return (long)i;
    return -1;
}

int job_run(int verbose)
{
    volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)JOB_DESC_ADDR;
    volatile uint32_t *r = d + JOB_DESC_NWORDS;
    uint32_t w[JOB_DESC_NWORDS];
    cip_job job;
    cip_result res;
    kb16_merge_result sw;
    int status = JOB_PASS, expect_err;
    unsigned i;
    long at;

    desc_open(d, w, JOB_DESC_NWORDS, r, JOB_RES_NWORDS, JOB_RESULT_MAGIC);
    expect_err = (w[JOB_DESC_FLAGS] & JOB_F_EXPECT_ERR) != 0;

    if (w[JOB_DESC_MAGIC] != JOB_MAGIC || w[JOB_DESC_VERSION] != JOB_VERSION) {
        printf("job: no job descriptor at 0x%08lx (magic 0x%08lx version %lu, want 0x%08lx version %lu)\n",
               (unsigned long)JOB_DESC_ADDR, (unsigned long)w[JOB_DESC_MAGIC], (unsigned long)w[JOB_DESC_VERSION],
               (unsigned long)JOB_MAGIC, (unsigned long)JOB_VERSION);
        r[JOB_RES_STATUS] = JOB_BAD_DESC;
        return JOB_BAD_DESC;
    }
    if (w[JOB_DESC_FLAGS] & ~JOB_F_KNOWN) {
        printf("job: descriptor word %u (flags) 0x%08lx has unknown bits 0x%08lx\n", JOB_DESC_FLAGS,
               (unsigned long)w[JOB_DESC_FLAGS], (unsigned long)(w[JOB_DESC_FLAGS] & ~JOB_F_KNOWN));
        r[JOB_RES_STATUS] = JOB_BAD_DESC;
        return JOB_BAD_DESC;
    }
    {
        static const char *const names[] = {"run0", "run1", "expected output", "expected invalid addresses",
                                            "output buffer", "invalid-address buffer"};
        desc_field f[6];
        for (i = 0; i < 6; i++) {
            f[i].name = names[i];
            f[i].word = JOB_DESC_RUN0_OFF + 2 * i;
            f[i].off = w[f[i].word];
            f[i].len = w[f[i].word + 1];
        }
        if (desc_check_fields("job", f, 6)) {
            r[JOB_RES_STATUS] = JOB_BAD_DESC;
            return JOB_BAD_DESC;
        }
    }

    memset(&job, 0, sizeof job);
    job.group = w[JOB_DESC_GROUP];
    job.run0_addr = DDR_BASE + w[JOB_DESC_RUN0_OFF];
    job.run0_len = w[JOB_DESC_RUN0_LEN];
    job.run1_addr = DDR_BASE + w[JOB_DESC_RUN1_OFF];
    job.run1_len = w[JOB_DESC_RUN1_LEN];
    job.out_addr = DDR_BASE + w[JOB_DESC_OUT_OFF];
    job.out_buf = w[JOB_DESC_OUT_BUF];
    job.inv_addr = DDR_BASE + w[JOB_DESC_INV_OFF];
    job.inv_buf = w[JOB_DESC_INV_BUF];
    job.out_capacity = w[JOB_DESC_OUT_CAP] ? w[JOB_DESC_OUT_CAP] : w[JOB_DESC_OUT_BUF];
    job.inv_capacity = w[JOB_DESC_INV_CAP] ? w[JOB_DESC_INV_CAP] : w[JOB_DESC_INV_BUF];
    job.use_irq = !(w[JOB_DESC_FLAGS] & JOB_F_POLL);
    if (verbose)
        printf("job: G=%u run0 %lu B, run1 %lu B, out buffer %lu B, invalid buffer %lu B\n", job.group,
               (unsigned long)job.run0_len, (unsigned long)job.run1_len, (unsigned long)job.out_buf,
               (unsigned long)job.inv_buf);

    cip_run(&job, &res);
    r[JOB_RES_RC] = (uint32_t)res.rc;
    r[JOB_RES_IP_STATUS] = res.status;
    r[JOB_RES_ERR_CODE] = res.err_code;
    r[JOB_RES_ERR_INPUT] = res.err_input;
    r[JOB_RES_ERR_INDEX] = res.err_index;
    r[JOB_RES_OUT_BYTES] = res.dma[DMA_CH_OUT].bytes;
    r[JOB_RES_INV_BYTES] = res.dma[DMA_CH_INV].bytes;
    r[JOB_RES_FW_CYCLES] = res.cnt.throughput;
    r[JOB_RES_HW_CYCLES] = res.cnt.hw_cycles;
    r[JOB_RES_ENC_WORDS] = res.cnt.enc_words;
    r[JOB_RES_INV_ADDRS] = res.cnt.inv_addrs;
    r[JOB_RES_KEY0_WORDS] = res.cnt.key0_words;
    r[JOB_RES_KEY1_WORDS] = res.cnt.key1_words;
    for (i = 0; i < DMA_CHANNELS; i++)
        r[JOB_RES_DMA_CODE0 + i] = res.dma_rc[i] == 1 ? 0 : res.dma[i].code;

    if (expect_err) {
        if (res.rc != CIP_E_IP || res.err_code != w[JOB_DESC_EXP_ERR] || res.err_input != w[JOB_DESC_EXP_ERR_INPUT] ||
            res.err_index != w[JOB_DESC_EXP_ERR_INDEX]) {
            printf("job: expected IP error %s input %lu entry %lu\n", kb16_err_name(w[JOB_DESC_EXP_ERR]),
                   (unsigned long)w[JOB_DESC_EXP_ERR_INPUT], (unsigned long)w[JOB_DESC_EXP_ERR_INDEX]);
            print_result_failure(&res);
            status = JOB_WRONG_ERROR;
        } else if (verbose) {
            char why[160];
            printf("job: %s (as expected)\n", cip_describe(&res, why, sizeof why));
        }
        cip_soft_reset();
    } else if (res.rc != CIP_OK) {
        print_result_failure(&res);
        status = JOB_RUN_FAILED;
        cip_soft_reset();
    } else {
        if (res.dma[DMA_CH_OUT].bytes != w[JOB_DESC_EXP_OUT_LEN] || res.dma[DMA_CH_INV].bytes != w[JOB_DESC_EXP_INV_LEN]) {
            printf("job: IP wrote %lu output / %lu invalid bytes, expected %lu / %lu\n",
                   (unsigned long)res.dma[DMA_CH_OUT].bytes, (unsigned long)res.dma[DMA_CH_INV].bytes,
                   (unsigned long)w[JOB_DESC_EXP_OUT_LEN], (unsigned long)w[JOB_DESC_EXP_INV_LEN]);
            status = JOB_MISMATCH;
        } else if ((at = diff_at(job.out_addr, DDR_BASE + w[JOB_DESC_EXP_OUT_OFF], w[JOB_DESC_EXP_OUT_LEN])) >= 0) {
            printf("job: merged output differs from the expected at byte %ld (entry %ld)\n", at, at / 16);
            status = JOB_MISMATCH;
        } else if ((at = diff_at(job.inv_addr, DDR_BASE + w[JOB_DESC_EXP_INV_OFF], w[JOB_DESC_EXP_INV_LEN])) >= 0) {
            printf("job: invalid addresses differ from the expected at address %ld\n", at / 4);
            status = JOB_MISMATCH;
        }
    }

    /* The C merge on the same input must agree with the expectation too. */
    if (!(w[JOB_DESC_FLAGS] & JOB_F_NO_SW)) {
        cip_write(CIP_COUNT_CONTROL, 1);
        kb16_merge((const uint8_t *)(uintptr_t)job.run0_addr, job.run0_len, (const uint8_t *)(uintptr_t)job.run1_addr,
                   job.run1_len, job.group, (uint8_t *)(uintptr_t)JOB_SW_OUT, JOB_SW_OUT_CAP,
                   (uint32_t *)(uintptr_t)JOB_SW_INV, JOB_SW_INV_CAP / 4, &sw);
        cip_write(CIP_COUNT_CONTROL, 0);
        r[JOB_RES_SW_CYCLES] = cip_read(CIP_THROUGHPUT_COUNTER);
        if (expect_err ? (sw.status != w[JOB_DESC_EXP_ERR] || sw.err_input != w[JOB_DESC_EXP_ERR_INPUT] ||
                          sw.err_index != w[JOB_DESC_EXP_ERR_INDEX])
                       : (sw.status != KB16_OK || sw.out_bytes != w[JOB_DESC_EXP_OUT_LEN] ||
                          sw.inv_count * 4 != w[JOB_DESC_EXP_INV_LEN] ||
                          diff_at(JOB_SW_OUT, DDR_BASE + w[JOB_DESC_EXP_OUT_OFF], w[JOB_DESC_EXP_OUT_LEN]) >= 0 ||
                          diff_at(JOB_SW_INV, DDR_BASE + w[JOB_DESC_EXP_INV_OFF], w[JOB_DESC_EXP_INV_LEN]) >= 0)) {
            printf("job: the C merge disagrees with the expectation (%s in input %u at entry %lu, %lu bytes)\n",
                   kb16_err_name(sw.status), sw.err_input, (unsigned long)sw.err_index, (unsigned long)sw.out_bytes);
            if (status == JOB_PASS)
                status = JOB_SW_MISMATCH;
        }
    }
    r[JOB_RES_STATUS] = (uint32_t)status;
    printf("job: %s (status %d) fw_cycles=%lu hw_cycles=%lu sw_cycles=%lu\n", status ? "FAIL" : "PASS", status,
           (unsigned long)res.cnt.throughput, (unsigned long)res.cnt.hw_cycles, (unsigned long)r[JOB_RES_SW_CYCLES]);
    return status;
}
