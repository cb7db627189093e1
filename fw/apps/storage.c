/* storage.elf: the storage-card flow (seed 000 section III): two KB16 runs are written to NAND pages,
 * read back into DDR, merged by the compaction IP, the merged run and the invalid addresses are
 * programmed back to NAND, then read and verified. SIM_ARG 0 runs it once and exits with its result;
 * SIM_ARG 1 (and a board) starts a console with `storage` and the `nand ...` commands. */
#include "storage.h"

#if __has_include("nand_regs.h") /* the NAND driver is in this build (see fw/drivers/nand.c) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compaction.h"
#include "csr.h"
#include "irq.h"
#include "kb16.h"
#include "nand.h"
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
#define ST_NAND_SCRATCH 0x4CF00000u
#define ST_GEN 0x4D000000u
#define ST_RUN_CAP 0x00100000u
#define ST_OUT_CAP 0x00200000u
#define ST_GEN_CAP 0x00800000u
#define P8(a) ((uint8_t *)(uintptr_t)(a))
#define P32(a) ((uint32_t *)(uintptr_t)(a))

/* NAND placement: block 1 of each target for the input runs, block 2 for the results. */
#define BLK_RUNS 1u
#define BLK_RESULT 2u


typedef struct {
    int target;
    uint32_t block, addr, len; /* DDR source / destination and byte length */
} extent;

static uint32_t pages_of(uint32_t len) { return (len + nand_dev.page_bytes - 1) / nand_dev.page_bytes; }

static int fail(const char *what, int rc)
{
    printf("storage: FAIL (%s: %s)\n", what, nand_err_name(rc));
    return rc ? rc : -1;
}

/* Program extents page by page with ECC. Extents on different targets are interleaved: each page is
 * started on every target (SPLIT) before the first status is awaited, so tPROG overlaps. */
static int program_extents(const extent *e, int n, storage_result *res)
{
    uint32_t page, maxp = 0;
    int i, rc;
    for (i = 0; i < n; i++) {
        nand_comp c;
        if ((rc = nand_erase(e[i].target, e[i].block, &c)) != 0)
            return fail("erase", rc);
        if (pages_of(e[i].len) > nand_dev.pages_per_block)
            return fail("extent larger than a block", NAND_DRV_ARG);
        if (pages_of(e[i].len) > maxp)
            maxp = pages_of(e[i].len);
    }
    for (page = 0; page < maxp; page++) {
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            if (page >= pages_of(e[i].len))
                continue;
            cmd.opcode = NAND_OP_PROGRAM;
            cmd.target = (uint8_t)e[i].target;
            cmd.row = e[i].block * nand_dev.pages_per_block + page;
            cmd.flags = NAND_F_DMA | NAND_F_ECC | NAND_F_SPLIT;
            cmd.dma_addr = e[i].addr + page * nand_dev.page_bytes;
            if ((rc = nand_exec(&cmd, NULL)) != 0)
                return fail("program", rc);
        }
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            nand_comp c;
            if (page >= pages_of(e[i].len))
                continue;
            cmd.opcode = NAND_OP_WAIT_STATUS;
            cmd.target = (uint8_t)e[i].target;
            if ((rc = nand_exec(&cmd, &c)) != 0)
                return fail("program status", rc);
            res->pages_programmed++;
        }
    }
    return 0;
}

/* Read extents back (ECC on), interleaved the same way: PAGE_READ SPLIT on every target, then the
 * data transfers (READ_DATA) one after the other. */
static int read_extents(const extent *e, int n, storage_result *res)
{
    uint32_t page, maxp = 0;
    int i, rc;
    for (i = 0; i < n; i++)
        if (pages_of(e[i].len) > maxp)
            maxp = pages_of(e[i].len);
    for (page = 0; page < maxp; page++) {
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            if (page >= pages_of(e[i].len))
                continue;
            cmd.opcode = NAND_OP_PAGE_READ;
            cmd.target = (uint8_t)e[i].target;
            cmd.row = e[i].block * nand_dev.pages_per_block + page;
            cmd.flags = NAND_F_ECC | NAND_F_SPLIT;
            if ((rc = nand_exec(&cmd, NULL)) != 0)
                return fail("read", rc);
        }
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            nand_comp c;
            if (page >= pages_of(e[i].len))
                continue;
            cmd.opcode = NAND_OP_READ_DATA;
            cmd.target = (uint8_t)e[i].target;
            cmd.row = e[i].block * nand_dev.pages_per_block + page;
            cmd.flags = NAND_F_DMA | NAND_F_ECC;
            cmd.dma_addr = e[i].addr + page * nand_dev.page_bytes;
            if ((rc = nand_exec(&cmd, &c)) != 0)
                return fail("read data", rc);
            res->pages_read++;
            res->ecc_corrected += c.corrected;
        }
    }
    return 0;
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
    if (!nand_driver_present)
        return fail("firmware built without nand_regs.h", NAND_DRV_ARG);
    if (nand_dev.page_bytes == 0 && (rc = nand_init(&nand_dev, cfg->targets, ST_NAND_SCRATCH)) != 0)
        return fail("nand init", rc);
    printf("storage: NAND %s %s, mode %d, %d target(s), %lu+%lu B pages\n", nand_dev.manufacturer, nand_dev.model,
           nand_dev.mode, nand_dev.targets, (unsigned long)nand_dev.page_bytes, (unsigned long)nand_dev.spare_bytes);

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
    ex[0] = (extent){0, BLK_RUNS, ST_RUN0, (uint32_t)len0};
    ex[1] = (extent){t1, t1 ? BLK_RUNS : BLK_RUNS + 3, ST_RUN1, (uint32_t)len1};
    if ((rc = program_extents(ex, 2, res)) != 0)
        return rc;
    res->cycles_write = timer_now() - t0;

    /* 3. NAND -> DDR, check against what was written */
    t0 = timer_now();
    memset(P8(ST_BACK0), 0, len0);
    memset(P8(ST_BACK1), 0, len1);
    ex[0].addr = ST_BACK0;
    ex[1].addr = ST_BACK1;
    if ((rc = read_extents(ex, 2, res)) != 0)
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
    ex[0] = (extent){0, BLK_RESULT, ST_HW_OUT, res->out_bytes};
    ex[1] = (extent){t1, t1 ? BLK_RESULT : BLK_RESULT + 3, ST_HW_INV, res->inv_bytes};
    if ((rc = program_extents(ex, res->inv_bytes ? 2 : 1, res)) != 0)
        return rc;
    res->cycles_writeback = timer_now() - t0;

    /* 6. read both back and verify */
    t0 = timer_now();
    ex[0].addr = ST_VERIFY;
    ex[1].addr = ST_VERIFY + dma_align_up(res->out_bytes) + nand_dev.page_bytes;
    if ((rc = read_extents(ex, res->inv_bytes ? 2 : 1, res)) != 0)
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

/* ------------------------------------------------------------------------------ console */
static const storage_cfg default_cfg = {512, 25, 16, 0x5707A6E5u, 2, 1};

static void console(void)
{
    char line[96], *argv[8];
    storage_result r;
    printf("storage console: 'storage [entries] [overlap%%] [targets]', 'nand help', 'exit'\n");
    for (;;) {
        int argc = (int)uart_read_command("storage> ", line, sizeof line, argv, 8);
        if (argc == 0)
            continue;
        if (!strcmp(argv[0], "exit"))
            return;
        if (!strcmp(argv[0], "storage")) {
            storage_cfg cfg = default_cfg;
            if (argc > 1)
                cfg.entries = (unsigned)strtoul(argv[1], NULL, 0);
            if (argc > 2)
                cfg.overlap_pct = (unsigned)strtoul(argv[2], NULL, 0);
            if (argc > 3)
                cfg.targets = (int)strtoul(argv[3], NULL, 0);
            storage_flow_run(&cfg, &r);
        } else if (!strcmp(argv[0], "nand")) {
            nand_console(argc, argv);
        } else {
            printf("unknown command '%s'\n", argv[0]);
        }
    }
}

int main(void)
{
    int sim = sys_in_sim();
    uint32_t arg = sys_sim_arg(), version = 0;
    storage_result r;
    if (!sim)
        uart_init(uart_divider_for(CPU_HZ, 115200u));
    uart_crlf = !sim;
    irq_init();
    printf("\nstorage firmware (%s, SIM_ARG %lu)\n", sim ? "simulation" : "board", (unsigned long)arg);
    if (cip_check_id(&version) != 0) {
        printf("storage: FAIL (compaction IP not found)\n");
        return 2;
    }
    cip_soft_reset();
    if (!sim || arg == STORAGE_SCEN_CONSOLE) {
        console();
        return 0;
    }
    return storage_flow_run(&default_cfg, &r) == 0 ? 0 : 1;
}

#else /* built before the NAND generator ran: say so instead of failing the whole firmware build */
#include <stdio.h>

int storage_flow_run(const storage_cfg *cfg, storage_result *res)
{
    (void)cfg;
    (void)res;
    printf("storage: FAIL (firmware built without nand_regs.h: run the nand or soc generator first)\n");
    return -1;
}

int main(void) { return storage_flow_run(0, 0) ? 1 : 0; }
#endif
