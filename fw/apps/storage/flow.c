/* storage.elf: the storage-card flow (the paper's section III): two KB16 runs are written to NAND pages,
 * read back into DDR, merged by the compaction IP, the merged run and the invalid addresses are
 * programmed back to NAND, then read and verified. SIM_ARG 0 runs it once and exits with its result;
 * SIM_ARG 1 (and a board) starts a console with `storage` and the `nand ...` commands. */
#include "storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compaction.h"
#include "csr.h"
#include "irq.h"
#include "kb16.h"
#include "nand.h"
#include "nand_regs.h"
#include "nandcon.h"
#include "extents.h"
#include "parse.h"
#include "regs.h"
#include "soc.h"
#include "sys.h"
#include "timer.h"
#include "uart.h"

/* DDR layout of this firmware (above the lsmc app's areas, below the NAND console scratch). */
#define ST_RUN0 0x4C000000u
#define ST_RUN1 0x4C100000u
#define ST_BACK0 0x4C200000u
#define ST_BACK1 0x4C300000u
#define ST_HW_OUT 0x4C400000u
#define ST_HW_INV 0x4C600000u
#define ST_SW_OUT 0x4C700000u
#define ST_SW_INV 0x4C900000u
#define ST_VERIFY 0x4CA00000u
#define ST_NAND_SCRATCH NANDCON_SCRATCH
#define ST_GEN 0x4D000000u
#define ST_RUN_CAP 0x00100000u
#define ST_OUT_CAP 0x00200000u
#define ST_GEN_CAP 0x00800000u
#define P8(a) ((uint8_t *)(uintptr_t)(a))
#define P32(a) ((uint32_t *)(uintptr_t)(a))

/* NAND placement: block 1 of each target for the input runs, block 2 for the results. */
#define BLK_RUNS 1u
#define BLK_RESULT 2u
/* The flow's channel (its extents say channel 0). */
#define NAND0 (&nand_chans[0])


/* A failed NAND operation, named with its target, block and page; a timeout also resets. */
static int fail_io(const extent *e, int n, const extent_io *io, int rc)
{
    if (rc == NAND_DRV_ARG) /* extents_check said why */
        return rc;
    printf("storage: FAIL (%s target %d block %lu page %lu: %s)\n", io->op, e[io->index].target,
           (unsigned long)e[io->index].block, (unsigned long)io->page, nand_err_name(rc));
    (void)n;
    if (nandcon_is_timeout(rc))
        nandcon_recover(NAND0, "storage", NAND0->dev->targets ? NAND0->dev->targets : 1);
    return rc ? rc : -1;
}

/* Program (write = 1, erase first) or read back extents with ECC; counts into res; failures named. */
static int io_extents(const extent *e, int n, int write, storage_result *res)
{
    extent_io io = {0};
    int rc = extents_check("storage", e, n);
    if (rc == 0)
        rc = write ? extents_program(e, n, &io) : extents_read(e, n, &io);
    *(write ? &res->pages_programmed : &res->pages_read) += io.pages_done;
    res->ecc_corrected += io.corrected;
    return rc ? fail_io(e, n, &io, rc) : 0;
}

int storage_flow_run(const storage_cfg *cfg, storage_result *res)
{
    kb16_gen_params gp;
    kb16_merge_result sw;
    cip_job job;
    cip_result cr;
    size_t len0 = 0, len1 = 0;
    uint64_t t0;
    long d;
    int rc, t1 = cfg->targets > 1 ? 1 : 0;
    extent ex[2];

    memset(res, 0, sizeof *res);
    _Static_assert(STORAGE_MAX_TARGETS == NAND_MAX_TARGETS && STORAGE_EXTENTS_MAX >= 2, "storage.h vs nand.h");
    if (cfg->targets < 1 || cfg->targets > NAND_MAX_TARGETS) {
        printf("storage: FAIL (targets %d: this controller has 1..%d)\n", cfg->targets, NAND_MAX_TARGETS);
        return NAND_DRV_ARG;
    }
    /* (Re)initialise when nothing is known yet or fewer targets were set up than this run uses. */
    if ((NAND0->dev->page_bytes == 0 || NAND0->dev->targets < cfg->targets) &&
        (rc = nand_init(NAND0, NAND0->dev, cfg->targets, ST_NAND_SCRATCH)) != 0) {
        nand_forget(NAND0);
        if (!nand_channel_present(0)) { /* the controller's ID register: a SoC without NAND reads 0 */
            printf("storage: FAIL (no NAND controller in this SoC)\n");
            return rc;
        }
        printf("storage: FAIL (nand init of %d target(s): %s)\n", cfg->targets, nand_err_name(rc));
        if (nandcon_is_timeout(rc))
            nandcon_recover(NAND0, "storage", cfg->targets);
        return rc;
    }
    printf("storage: NAND %s %s, mode %d, %d target(s), %lu+%lu B pages\n", NAND0->dev->manufacturer, NAND0->dev->model,
           NAND0->dev->mode, NAND0->dev->targets, (unsigned long)NAND0->dev->page_bytes, (unsigned long)NAND0->dev->spare_bytes);

    /* 1. two runs in DDR (the host's memtable flushes) */
    memset(&gp, 0, sizeof gp);
    gp.kind = KB16_KIND_PREFIX;
    gp.seed = cfg->seed;
    gp.n0 = cfg->entries / 2;
    gp.n1 = cfg->entries - cfg->entries / 2;
    gp.overlap_pct = cfg->overlap_pct;
    gp.group = cfg->group;
    gp.addr0_base = 0x10000000u;
    gp.addr1_base = 0x20000000u;
    rc = kb16_gen_runs(&gp, (kb16_key_slot *)P8(ST_GEN), ST_GEN_CAP / sizeof(kb16_key_slot), P8(ST_RUN0), ST_RUN_CAP,
                       &len0, P8(ST_RUN1), ST_RUN_CAP, &len1);
    if (rc != KB16_OK) {
        printf("storage: FAIL (workload generation: %s)\n", kb16_err_name((unsigned)rc));
        return -1;
    }
    res->run_bytes[0] = (uint32_t)len0;
    res->run_bytes[1] = (uint32_t)len1;

    /* 2. runs -> NAND (run0 on target 0, run1 on target 1 when there are two) */
    t0 = timer_now();
    ex[0] = (extent){0, BLK_RUNS, ST_RUN0, (uint32_t)len0, 0};
    ex[1] = (extent){t1, t1 ? BLK_RUNS : BLK_RUNS + 3, ST_RUN1, (uint32_t)len1, 0};
    if ((rc = io_extents(ex, 2, 1, res)) != 0)
        return rc;
    res->cycles_write = timer_now() - t0;

    /* 3. NAND -> DDR, check against what was written */
    t0 = timer_now();
    memset(P8(ST_BACK0), 0, len0);
    memset(P8(ST_BACK1), 0, len1);
    ex[0].addr = ST_BACK0;
    ex[1].addr = ST_BACK1;
    if ((rc = io_extents(ex, 2, 0, res)) != 0)
        return rc;
    res->cycles_read = timer_now() - t0;
    if ((d = kb16_first_diff(P8(ST_BACK0), P8(ST_RUN0), len0)) >= 0 || (d = kb16_first_diff(P8(ST_BACK1), P8(ST_RUN1), len1)) >= 0) {
        printf("storage: FAIL (run read back from NAND differs at byte %ld)\n", d);
        return -1;
    }

    /* 4. merge by the compaction IP from the runs read back; the C merge is the reference */
    kb16_merge(P8(ST_RUN0), len0, P8(ST_RUN1), len1, cfg->group, P8(ST_SW_OUT), ST_OUT_CAP, P32(ST_SW_INV),
               ST_OUT_CAP / 4, &sw);
    if (sw.status != KB16_OK) {
        printf("storage: FAIL (C merge: %s)\n", kb16_err_name(sw.status));
        return -1;
    }
    cip_job_from_reference(&job, cfg->group, ST_BACK0, (uint32_t)len0, ST_BACK1, (uint32_t)len1, ST_HW_OUT,
                           ST_HW_INV, &sw); /* waits by polling (use_irq 0) */
    t0 = timer_now();
    rc = cip_run(&job, &cr);
    res->cycles_merge = timer_now() - t0;
    if (rc != CIP_OK) {
        char why[96];
        printf("storage: FAIL (compaction: %s)\n", cip_describe(&cr, why, sizeof why));
        return -1;
    }
    res->out_bytes = cr.dma[DMA_CH_OUT].bytes;
    res->inv_bytes = cr.dma[DMA_CH_INV].bytes;
    if (res->out_bytes != sw.out_bytes || res->inv_bytes != sw.inv_count * 4 ||
        kb16_first_diff(P8(ST_HW_OUT), P8(ST_SW_OUT), sw.out_bytes) >= 0 ||
        kb16_first_diff(P8(ST_HW_INV), P8(ST_SW_INV), sw.inv_count * 4) >= 0) {
        printf("storage: FAIL (IP output differs from the C merge)\n");
        return -1;
    }

    /* 5. merged run and invalid addresses -> NAND (the new SSTable and the GC list) */
    t0 = timer_now();
    ex[0] = (extent){0, BLK_RESULT, ST_HW_OUT, res->out_bytes, 0};
    ex[1] = (extent){t1, t1 ? BLK_RESULT : BLK_RESULT + 3, ST_HW_INV, res->inv_bytes, 0};
    if ((rc = io_extents(ex, res->inv_bytes ? 2 : 1, 1, res)) != 0)
        return rc;
    res->cycles_writeback = timer_now() - t0;

    /* 6. read both back and verify */
    t0 = timer_now();
    ex[0].addr = ST_VERIFY;
    ex[1].addr = ST_VERIFY + dma_align_up(res->out_bytes) + NAND0->dev->page_bytes;
    if ((rc = io_extents(ex, res->inv_bytes ? 2 : 1, 0, res)) != 0)
        return rc;
    res->cycles_verify = timer_now() - t0;
    if (kb16_first_diff(P8(ex[0].addr), P8(ST_SW_OUT), res->out_bytes) >= 0 ||
        kb16_first_diff(P8(ex[1].addr), P8(ST_SW_INV), res->inv_bytes) >= 0) {
        printf("storage: FAIL (merged run read back from NAND differs)\n");
        return -1;
    }
    res->pass = 1;
    printf("storage: runs %lu + %lu B -> merged %lu B, %lu invalid addresses; %lu pages programmed, %lu read, "
           "%lu ECC corrections\n",
           (unsigned long)len0, (unsigned long)len1, (unsigned long)res->out_bytes, (unsigned long)(res->inv_bytes / 4),
           (unsigned long)res->pages_programmed, (unsigned long)res->pages_read, (unsigned long)res->ecc_corrected);
    printf("storage: cycles write %lu, read %lu, merge %lu, write-back %lu, verify %lu\n", (unsigned long)res->cycles_write,
           (unsigned long)res->cycles_read, (unsigned long)res->cycles_merge, (unsigned long)res->cycles_writeback,
           (unsigned long)res->cycles_verify);
    printf("storage: PASS\n");
    return 0;
}
