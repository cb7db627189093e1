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
#include "nand_regs.h"
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

static int is_timeout(int rc) { return rc == NAND_E_TIMEOUT || rc == NAND_DRV_TIMEOUT; }

/* After a failed nand_init the geometry is half filled in (targets that answered before the one that
 * did not): nothing of it may be used, the next command must initialise again. */
static void nand_forget(void) { memset(&nand_dev, 0, sizeof nand_dev); }

/* After a timeout (R/B# stuck busy, or a completion that never came) neither the controller's queue
 * nor the part's state can be trusted: soft-reset the controller, then reset, identify and configure
 * every target again (nand_init), so that the next command starts clean. */
static int recover(int targets)
{
    int rc;
    nand_reg_write(NAND_CTRL, 1u << NAND_CTRL_SOFT_RESET_SHIFT);
    rc = nand_init(&nand_dev, targets, ST_NAND_SCRATCH);
    if (rc)
        nand_forget();
    printf("storage: controller and NAND reset after the timeout: %s%s\n", rc ? nand_err_name(rc) : "ok",
           rc ? " (the NAND must be initialised again)" : "");
    return rc;
}

/* A failed NAND operation, named with its target, block and page; a timeout also resets. */
static int fail_at(const char *op, int target, uint32_t block, uint32_t page, int rc)
{
    printf("storage: FAIL (%s target %d block %lu page %lu: %s)\n", op, target, (unsigned long)block,
           (unsigned long)page, nand_err_name(rc));
    if (is_timeout(rc))
        recover(nand_dev.targets ? nand_dev.targets : 1);
    return rc ? rc : -1;
}

/* Every extent inside the geometry, before any command reaches the bus. */
static int check_extents(const extent *e, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (e[i].target < 0 || e[i].target >= nand_dev.targets || e[i].block >= nand_dev.blocks ||
            pages_of(e[i].len) > nand_dev.pages_per_block) {
            printf("storage: FAIL (extent %d: target %d block %lu, %lu pages: outside %d target(s) x %lu blocks x "
                   "%lu pages)\n", i, e[i].target, (unsigned long)e[i].block, (unsigned long)pages_of(e[i].len),
                   nand_dev.targets, (unsigned long)nand_dev.blocks, (unsigned long)nand_dev.pages_per_block);
            return NAND_DRV_ARG;
        }
    }
    return 0;
}

/* Extents may share a target (one target, or more extents than targets): an operation may only be
 * split from its completion when no other extent uses the same target, else the second command would
 * find the target busy (tPROG/tR running; a timing violation). */
static int targets_distinct(const extent *e, int n)
{
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (e[i].target == e[j].target)
                return 0;
    return 1;
}

/* Program extents page by page with ECC. Extents on different targets are interleaved: each page is
 * started on every target (SPLIT) before the first status is awaited, so tPROG overlaps; extents on
 * the same target are programmed one page after the other. */
static int program_extents(const extent *e, int n, storage_result *res)
{
    uint32_t page, maxp = 0;
    int i, rc, overlap;
    if ((rc = check_extents(e, n)) != 0)
        return rc;
    overlap = targets_distinct(e, n);
    for (i = 0; i < n; i++) {
        nand_comp c;
        if ((rc = nand_erase(e[i].target, e[i].block, &c)) != 0)
            return fail_at("erase", e[i].target, e[i].block, 0, rc);
        if (pages_of(e[i].len) > maxp)
            maxp = pages_of(e[i].len);
    }
    for (page = 0; page < maxp; page++) {
        int pending[2] = {0, 0};
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
                return fail_at("program", e[i].target, e[i].block, page, rc);
            pending[i] = 1;
            if (!overlap || i == n - 1) {
                int k;
                for (k = 0; k <= i; k++) {
                    nand_cmd w = {0};
                    nand_comp c;
                    if (!pending[k])
                        continue;
                    w.opcode = NAND_OP_WAIT_STATUS;
                    w.target = (uint8_t)e[k].target;
                    if ((rc = nand_exec(&w, &c)) != 0)
                        return fail_at("program status", e[k].target, e[k].block, page, rc);
                    pending[k] = 0;
                    res->pages_programmed++;
                }
            }
        }
    }
    return 0;
}

/* Read extents back (ECC on), interleaved the same way when the targets differ: PAGE_READ SPLIT on
 * every target, then the data transfers (READ_DATA) one after the other; on a shared target each page
 * is read (PAGE_READ, READ_DATA) before the next one starts. */
static int read_extents(const extent *e, int n, storage_result *res)
{
    uint32_t page, maxp = 0;
    int i, rc, overlap;
    if ((rc = check_extents(e, n)) != 0)
        return rc;
    overlap = targets_distinct(e, n);
    for (i = 0; i < n; i++)
        if (pages_of(e[i].len) > maxp)
            maxp = pages_of(e[i].len);
    for (page = 0; page < maxp; page++) {
        int pending[2] = {0, 0};
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            if (page >= pages_of(e[i].len))
                continue;
            cmd.opcode = NAND_OP_PAGE_READ;
            cmd.target = (uint8_t)e[i].target;
            cmd.row = e[i].block * nand_dev.pages_per_block + page;
            cmd.flags = NAND_F_ECC | NAND_F_SPLIT;
            if ((rc = nand_exec(&cmd, NULL)) != 0)
                return fail_at("read", e[i].target, e[i].block, page, rc);
            pending[i] = 1;
            if (!overlap || i == n - 1) {
                int k;
                for (k = 0; k <= i; k++) {
                    nand_cmd d = {0};
                    nand_comp c;
                    if (!pending[k])
                        continue;
                    d.opcode = NAND_OP_READ_DATA;
                    d.target = (uint8_t)e[k].target;
                    d.row = e[k].block * nand_dev.pages_per_block + page;
                    d.flags = NAND_F_DMA | NAND_F_ECC;
                    d.dma_addr = e[k].addr + page * nand_dev.page_bytes;
                    if ((rc = nand_exec(&d, &c)) != 0)
                        return fail_at("read data", e[k].target, e[k].block, page, rc);
                    pending[k] = 0;
                    res->pages_read++;
                    res->ecc_corrected += c.corrected;
                }
            }
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
    if (cfg->targets < 1 || cfg->targets > NAND_MAX_TARGETS) {
        printf("storage: FAIL (targets %d: this controller has 1..%d)\n", cfg->targets, NAND_MAX_TARGETS);
        return NAND_DRV_ARG;
    }
    /* (Re)initialise when nothing is known yet or fewer targets were set up than this run uses. */
    if ((nand_dev.page_bytes == 0 || nand_dev.targets < cfg->targets) &&
        (rc = nand_init(&nand_dev, cfg->targets, ST_NAND_SCRATCH)) != 0) {
        nand_forget();
        printf("storage: FAIL (nand init of %d target(s): %s)\n", cfg->targets, nand_err_name(rc));
        if (is_timeout(rc))
            recover(cfg->targets);
        return rc;
    }
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

#define LINE_CAP 96
#define WORDS_MAX 8

/* `nand ...`: every argument checked (numbers strictly, addresses against the geometry the parameter
 * page gave) before the command reaches the driver, and nothing but init/help/regs before `nand init`. */
static void nand_command(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "help";
    uint32_t t = 0, v, blk = 0, page = 0, addr = 0, ecc = 1, len;
    int nargs = argc - 2; /* after "nand <sub>" */

    if (!strcmp(sub, "help") || !strcmp(sub, "regs")) {
        if (nargs > 0) {
            printf("usage: nand %s (no arguments)\n", sub);
            return;
        }
        nand_console(argc, argv);
        return;
    }
    if (!strcmp(sub, "init")) {
        if (nargs > 1) {
            printf("usage: nand init [targets]\n");
            return;
        }
        if (parse_arg("nand init", "targets", argc, argv, 2, 1, NAND_MAX_TARGETS, 1, &v))
            return;
        if ((v = (uint32_t)nand_console(argc, argv)) != 0) {
            nand_forget(); /* a failed init leaves nothing usable */
            if (is_timeout((int)v))
                recover(1);
        }
        return;
    }
    if (strcmp(sub, "id") && strcmp(sub, "status") && strcmp(sub, "scan") && strcmp(sub, "erase") &&
        strcmp(sub, "program") && strcmp(sub, "read")) {
        printf("nand: unknown command '%s'\n", sub);
        fputs(nand_console_help, stdout);
        return;
    }
    if (nand_dev.page_bytes == 0) {
        printf("nand %s: error: the NAND is not initialised: run 'nand init [targets]' first\n", sub);
        return;
    }
    if (parse_arg(argv[0], "target", argc, argv, 2, 0, (uint32_t)nand_dev.targets - 1, 0, &t))
        return;
    if (!strcmp(sub, "id") || !strcmp(sub, "status") || !strcmp(sub, "scan")) {
        if (nargs > 1) {
            printf("usage: nand %s [target]\n", sub);
            return;
        }
    } else if (!strcmp(sub, "erase")) {
        if (nargs != 2) {
            printf("usage: nand erase target block\n");
            return;
        }
        if (parse_arg("nand erase", "block", argc, argv, 3, 0, nand_dev.blocks - 1, 0, &blk))
            return;
    } else { /* program / read */
        if (nargs < 4 || nargs > 5) {
            printf("usage: nand %s target block page addr [ecc]\n", sub);
            return;
        }
        if (parse_arg(sub, "block", argc, argv, 3, 0, nand_dev.blocks - 1, 0, &blk) ||
            parse_arg(sub, "page", argc, argv, 4, 0, nand_dev.pages_per_block - 1, 0, &page) ||
            parse_arg(sub, "addr", argc, argv, 5, 0, 0xFFFFFFFFu, 0, &addr) ||
            parse_arg(sub, "ecc", argc, argv, 6, 0, 1, 1, &ecc))
            return;
        len = nand_dev.page_bytes + (ecc ? 0 : nand_dev.spare_bytes);
        if (addr < DDR_BASE || addr - DDR_BASE > DDR_SIZE - len || (addr & 3u)) {
            printf("nand %s: error: addr 0x%08lx: the page (%lu bytes) must lie in DDR 0x%08lx..0x%08lx, 4-byte aligned\n",
                   sub, (unsigned long)addr, (unsigned long)len, (unsigned long)DDR_BASE,
                   (unsigned long)(DDR_BASE + DDR_SIZE - 1));
            return;
        }
    }
    (void)blk;
    (void)page;
    if (is_timeout(nand_console(argc, argv)))
        recover(nand_dev.targets);
}

static void console(void)
{
    char line[LINE_CAP], *argv[WORDS_MAX];
    storage_result r;
    uint32_t v;
    printf("storage console: 'storage [entries] [overlap%%] [targets]', 'nand help', 'exit [code]'\n");
    for (;;) {
        int argc = uart_read_command("storage> ", line, sizeof line, argv, WORDS_MAX);
        if (argc < 0) {
            printf("console: error: %s\n", uart_command_error(argc, sizeof line, WORDS_MAX));
            continue;
        }
        if (argc == 0)
            continue;
        if (!strcmp(argv[0], "exit")) {
            if (argc > 2) {
                printf("usage: exit [code]\n");
                continue;
            }
            if (parse_arg("exit", "code", argc, argv, 1, 0, 255, 0, &v))
                continue;
            sys_exit((int)v);
            return;
        }
        if (!strcmp(argv[0], "storage")) {
            storage_cfg cfg = default_cfg;
            uint32_t n, ov, tg;
            if (argc > 4) {
                printf("usage: storage [entries] [overlap%%] [targets]\n");
                continue;
            }
            if (parse_arg("storage", "entries", argc, argv, 1, 2, 65536, default_cfg.entries, &n) ||
                parse_arg("storage", "overlap%", argc, argv, 2, 0, 100, default_cfg.overlap_pct, &ov) ||
                parse_arg("storage", "targets", argc, argv, 3, 1, NAND_MAX_TARGETS, (uint32_t)default_cfg.targets, &tg))
                continue;
            cfg.entries = n;
            cfg.overlap_pct = ov;
            cfg.targets = (int)tg;
            storage_flow_run(&cfg, &r);
        } else if (!strcmp(argv[0], "nand")) {
            nand_command(argc, argv);
        } else {
            printf("unknown command '%s' (storage, nand, exit)\n", argv[0]);
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
