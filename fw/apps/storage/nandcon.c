/* `nand ...` console commands (see nandcon.h): argument checks, then one driver call, then one line. */
#include "nandcon.h"

#if LSMC_NAND /* the NAND driver is in this build (fw/Makefile, fw/drivers/nand.h) */

#include <stdio.h>
#include <string.h>

#include "nand.h"
#include "nand_regs.h"
#include "parse.h"
#include "soc.h"

const char nand_console_help[] =
    "nand init [targets]         reset, ID, parameter page (CRC), fastest timing mode\n"
    "nand id [t]                 READ ID\n"
    "nand status [t]             READ STATUS\n"
    "nand erase t block          BLOCK ERASE\n"
    "nand program t block page addr [ecc]   PAGE PROGRAM from DDR (ecc: 1 = main area + ECC)\n"
    "nand read t block page addr [ecc]      PAGE READ to DDR, prints ECC status\n"
    "nand scan [t]               bad-block scan\n"
    "nand regs                   controller registers\n";

int nandcon_is_timeout(int rc) { return rc == NAND_E_TIMEOUT || rc == NAND_DRV_TIMEOUT; }

int nandcon_recover(const char *who, int targets)
{
    int rc = nand_reinit(targets, NANDCON_SCRATCH);
    printf("%s: controller and NAND reset after the timeout: %s%s\n", who, rc ? nand_err_name(rc) : "ok",
           rc ? " (the NAND must be initialised again)" : "");
    return rc;
}

static int report(const char *what, int r, const nand_comp *c)
{
    if (c)
        printf("%s: %s (flash status 0x%02x", what, nand_err_name(r), c->status);
    else
        printf("%s: %s (", what, nand_err_name(r));
    if (c && (c->corrected || c->unc_map))
        printf(", ECC corrected %u bits, sectors 0x%02x, uncorrectable 0x%02x", c->corrected, c->corr_map, c->unc_map);
    printf(")\n");
    return r;
}

static int usage_none(const char *sub, int nargs)
{
    if (nargs > 0)
        printf("usage: nand %s (no arguments)\n", sub);
    return nargs > 0;
}

static void regs(void)
{
    static const struct { const char *n; uint32_t off; } r[] = {
        {"STATUS", NAND_STATUS}, {"IRQ_STATUS", NAND_IRQ_STATUS}, {"TIMING0", NAND_TIMING0},
        {"TIMING1", NAND_TIMING1}, {"TIMING2", NAND_TIMING2}, {"TIMING3", NAND_TIMING3},
        {"SAMPLE", NAND_SAMPLE}, {"GEOMETRY", NAND_GEOMETRY}, {"PERF_CYCLES", NAND_PERF_CYCLES},
        {"PERF_BYTES", NAND_PERF_BYTES}};
    unsigned i;
    for (i = 0; i < sizeof r / sizeof r[0]; i++)
        printf("  %02lx %-12s 0x%08lx\n", (unsigned long)r[i].off, r[i].n, (unsigned long)nand_reg(r[i].off));
}

static int init(int argc, char **argv)
{
    uint32_t n;
    int r;
    if (argc > 3) {
        printf("usage: nand init [targets]\n");
        return NAND_DRV_ARG;
    }
    if (parse_arg("nand init", "targets", argc, argv, 2, 1, NAND_MAX_TARGETS, 1, &n))
        return NAND_DRV_ARG;
    r = nand_init(&nand_dev, (int)n, NANDCON_SCRATCH);
    if (r == 0)
        printf("nand: %s %s ID %02x %02x %02x %02x %02x, %lu+%lu B pages, %lu pages/block, %lu blocks, "
               "timing mode %d, %d target(s), CRC 0x%04x ok\n",
               nand_dev.manufacturer, nand_dev.model, nand_dev.id[0], nand_dev.id[1], nand_dev.id[2],
               nand_dev.id[3], nand_dev.id[4], (unsigned long)nand_dev.page_bytes,
               (unsigned long)nand_dev.spare_bytes, (unsigned long)nand_dev.pages_per_block,
               (unsigned long)nand_dev.blocks, nand_dev.mode, nand_dev.targets, nand_dev.crc);
    report("init", r, NULL);
    if (r) {
        nand_forget(); /* a failed init leaves nothing usable */
        if (nandcon_is_timeout(r))
            nandcon_recover("storage", 1);
    }
    return r;
}

static int scan(int t)
{
    static uint8_t bad[NAND_BBT_BLOCKS];
    uint32_t n = 0, b, blocks = nand_dev.blocks < NAND_BBT_BLOCKS ? nand_dev.blocks : NAND_BBT_BLOCKS;
    int r = nand_scan_bad(t, bad, blocks, &n);
    printf("target %d: %lu bad of %lu blocks:", t, (unsigned long)n, (unsigned long)blocks);
    for (b = 0; b < blocks; b++)
        if (bad[b])
            printf(" %lu", (unsigned long)b);
    printf("\n");
    return report("scan", r, NULL);
}

/* program / read: target block page addr [ecc], all checked. */
static int page_op(const char *sub, int t, int argc, char **argv)
{
    nand_comp c = {0};
    uint32_t blk, page, addr, ecc, len, row;
    int r;
    if (argc < 6 || argc > 7) {
        printf("usage: nand %s target block page addr [ecc]\n", sub);
        return NAND_DRV_ARG;
    }
    if (parse_arg(sub, "block", argc, argv, 3, 0, nand_dev.blocks - 1, 0, &blk) ||
        parse_arg(sub, "page", argc, argv, 4, 0, nand_dev.pages_per_block - 1, 0, &page) ||
        parse_arg(sub, "addr", argc, argv, 5, 0, 0xFFFFFFFFu, 0, &addr) ||
        parse_arg(sub, "ecc", argc, argv, 6, 0, 1, 1, &ecc))
        return NAND_DRV_ARG;
    len = nand_dev.page_bytes + (ecc ? 0 : nand_dev.spare_bytes);
    if (addr < DDR_BASE || addr - DDR_BASE > DDR_SIZE - len || (addr & 3u)) {
        printf("nand %s: error: addr 0x%08lx: the page (%lu bytes) must lie in DDR 0x%08lx..0x%08lx, 4-byte aligned\n",
               sub, (unsigned long)addr, (unsigned long)len, (unsigned long)DDR_BASE,
               (unsigned long)(DDR_BASE + DDR_SIZE - 1));
        return NAND_DRV_ARG;
    }
    row = blk * nand_dev.pages_per_block + page;
    r = sub[0] == 'p' ? nand_program(t, row, addr, len, (int)ecc, &c) : nand_read(t, row, addr, len, (int)ecc, &c);
    return report(sub, r, &c);
}

static int dispatch(const char *sub, int argc, char **argv)
{
    int nargs = argc - 2; /* after "nand <sub>" */
    uint32_t t = 0, blk;
    nand_comp c = {0};

    if (!strcmp(sub, "help"))
        return usage_none(sub, nargs) ? NAND_DRV_ARG : (fputs(nand_console_help, stdout), 0);
    if (!strcmp(sub, "regs"))
        return usage_none(sub, nargs) ? NAND_DRV_ARG : (regs(), 0);
    if (!strcmp(sub, "init"))
        return init(argc, argv);
    if (strcmp(sub, "id") && strcmp(sub, "status") && strcmp(sub, "scan") && strcmp(sub, "erase") &&
        strcmp(sub, "program") && strcmp(sub, "read")) {
        printf("nand: unknown command '%s'\n", sub);
        fputs(nand_console_help, stdout);
        return NAND_DRV_ARG;
    }
    if (nand_dev.page_bytes == 0) {
        printf("nand %s: error: the NAND is not initialised: run 'nand init [targets]' first\n", sub);
        return NAND_DRV_ARG;
    }
    if (parse_arg(argv[0], "target", argc, argv, 2, 0, (uint32_t)nand_dev.targets - 1, 0, &t))
        return NAND_DRV_ARG;
    if (!strcmp(sub, "program") || !strcmp(sub, "read"))
        return page_op(sub, (int)t, argc, argv);
    if (!strcmp(sub, "erase")) {
        if (nargs != 2) {
            printf("usage: nand erase target block\n");
            return NAND_DRV_ARG;
        }
        if (parse_arg("nand erase", "block", argc, argv, 3, 0, nand_dev.blocks - 1, 0, &blk))
            return NAND_DRV_ARG;
        return report("erase", nand_erase((int)t, blk, &c), &c);
    }
    if (nargs > 1) { /* id, status, scan */
        printf("usage: nand %s [target]\n", sub);
        return NAND_DRV_ARG;
    }
    if (!strcmp(sub, "status"))
        return report("status", nand_read_status((int)t, &c), &c);
    if (!strcmp(sub, "scan"))
        return scan((int)t);
    {
        uint8_t id[5];
        int r = nand_read_id((int)t, NANDCON_SCRATCH, id);
        if (r == 0)
            printf("ID %02x %02x %02x %02x %02x\n", id[0], id[1], id[2], id[3], id[4]);
        return report("id", r, NULL);
    }
}

int nand_console(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "help";
    int r = dispatch(sub, argc, argv);
    if (nandcon_is_timeout(r) && strcmp(sub, "init")) /* init recovers by itself */
        nandcon_recover("storage", nand_dev.targets ? nand_dev.targets : 1);
    return r;
}

#else
#include <stdio.h>

const char nand_console_help[] = "nand: driver not in this build (nand_regs.h was not generated)\n";
int nand_console(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs(nand_console_help, stdout);
    return -1;
}
#endif
