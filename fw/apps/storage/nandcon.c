/* `nand ...` console commands (see nandcon.h): argument checks, then one driver call, then one line. */
#include "nandcon.h"

#include <stdio.h>
#include <string.h>

#include "nand.h"
#include "nand_regs.h"
#include "parse.h"
#include "csr.h"
#include "mmio.h"
#include "soc.h"
#include "timer.h"

/* The channel the commands act on (`nand channels` uses them all). */
#define CON (&nand_chans[0])

const char nand_console_help[] =
    "nand init [targets]         reset, ID, parameter page (CRC), fastest timing mode\n"
    "nand id [t]                 READ ID\n"
    "nand status [t]             READ STATUS\n"
    "nand erase t block          BLOCK ERASE\n"
    "nand program t block page addr [ecc]   PAGE PROGRAM from DDR (ecc: 1 = main area + ECC)\n"
    "nand read t block page addr [ecc]      PAGE READ to DDR, prints ECC status\n"
    "nand scan [t]               bad-block scan\n"
    "nand regs                   controller registers\n"
    "nand channels [ways] [pages] [channels]  channels 0..n-1 (default all): init, erase, cache program,\n"
    "                            cache read under the scheduler, verify; cycles and MB/s (block 1)\n";

int nandcon_is_timeout(int rc) { return rc == NAND_E_TIMEOUT || rc == NAND_DRV_TIMEOUT; }

int nandcon_recover(const nand_ch *ch, const char *who, int targets)
{
    int rc = nand_reinit(ch, targets, NANDCON_SCRATCH);
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
        printf("  %02lx %-12s 0x%08lx\n", (unsigned long)r[i].off, r[i].n, (unsigned long)nand_reg(CON, r[i].off));
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
    r = nand_init(CON, CON->dev, (int)n, NANDCON_SCRATCH);
    if (r == 0)
        printf("nand: %s %s ID %02x %02x %02x %02x %02x, %lu+%lu B pages, %lu pages/block, %lu blocks, "
               "timing mode %d, %d target(s), CRC 0x%04x ok\n",
               CON->dev->manufacturer, CON->dev->model, CON->dev->id[0], CON->dev->id[1], CON->dev->id[2],
               CON->dev->id[3], CON->dev->id[4], (unsigned long)CON->dev->page_bytes,
               (unsigned long)CON->dev->spare_bytes, (unsigned long)CON->dev->pages_per_block,
               (unsigned long)CON->dev->blocks, CON->dev->mode, CON->dev->targets, CON->dev->crc);
    report("init", r, NULL);
    if (r) {
        nand_forget(CON); /* a failed init leaves nothing usable */
        if (nandcon_is_timeout(r))
            nandcon_recover(CON, "storage", 1);
    }
    return r;
}

static int scan(int t)
{
    static uint8_t bad[NAND_BBT_BLOCKS];
    uint32_t n = 0, b, blocks = CON->dev->blocks < NAND_BBT_BLOCKS ? CON->dev->blocks : NAND_BBT_BLOCKS;
    int r = nand_scan_bad(CON, t, bad, blocks, &n);
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
    if (parse_arg(sub, "block", argc, argv, 3, 0, CON->dev->blocks - 1, 0, &blk) ||
        parse_arg(sub, "page", argc, argv, 4, 0, CON->dev->pages_per_block - 1, 0, &page) ||
        parse_arg(sub, "addr", argc, argv, 5, 0, 0xFFFFFFFFu, 0, &addr) ||
        parse_arg(sub, "ecc", argc, argv, 6, 0, 1, 1, &ecc))
        return NAND_DRV_ARG;
    len = CON->dev->page_bytes + (ecc ? 0 : CON->dev->spare_bytes);
    if (addr < DDR_BASE || addr - DDR_BASE > DDR_SIZE - len || (addr & 3u)) {
        printf("nand %s: error: addr 0x%08lx: the page (%lu bytes) must lie in DDR 0x%08lx..0x%08lx, 4-byte aligned\n",
               sub, (unsigned long)addr, (unsigned long)len, (unsigned long)DDR_BASE,
               (unsigned long)(DDR_BASE + DDR_SIZE - 1));
        return NAND_DRV_ARG;
    }
    row = blk * CON->dev->pages_per_block + page;
    r = sub[0] == 'p' ? nand_program(CON, t, row, addr, len, (int)ecc, &c) : nand_read(CON, t, row, addr, len, (int)ecc, &c);
    return report(sub, r, &c);
}

/* `nand channels`: sequential pages over every channel at once (the channels x ways scheduler). */
#define CHB_MAX_PAGES 32u
#define CHB_BLOCK 1u
#define CHB_SRC 0x4A000000u /* channel c, way t, page q at base + c * 1 MiB + t * 256 KiB + q * page */
#define CHB_DST 0x4B000000u
#define CHB_CH_STRIDE 0x100000u
#define CHB_WAY_STRIDE 0x40000u
static nand_cmd chb_cmds[NAND_CHANNELS_MAX][NAND_CACHE_READ_CMDS(NAND_MAX_TARGETS, CHB_MAX_PAGES)];
_Static_assert(CHB_MAX_PAGES * 8192u <= CHB_WAY_STRIDE && NAND_MAX_TARGETS * CHB_WAY_STRIDE <= CHB_CH_STRIDE &&
               CHB_DST + NAND_CHANNELS_MAX * CHB_CH_STRIDE <= NANDCON_SCRATCH && CHB_SRC >= DDR_SCRATCH_BASE,
               "nand channels: DDR areas");

/* Run one command list per channel; cycles from the start to each channel's last completion. */
static int chb_run(const char *what, int n, int (*build)(const nand_ch *, nand_cmd *, uint32_t, int, uint32_t, uint32_t,
                   uint32_t, uint32_t), int ways, uint32_t pages, uint32_t dma, uint64_t *cyc)
{
    nand_chan_prog p[NAND_CHANNELS_MAX];
    nand_sched_err err;
    uint64_t t0;
    int c, r;
    memset(p, 0, sizeof p);
    for (c = 0; c < n; c++) {
        r = build(&nand_chans[c], chb_cmds[c], sizeof chb_cmds[c] / sizeof chb_cmds[c][0], ways, pages, CHB_BLOCK,
                  dma + (uint32_t)c * CHB_CH_STRIDE, CHB_WAY_STRIDE);
        if (r < 0)
            return r;
        p[c].cmds = chb_cmds[c];
        p[c].n = (uint32_t)r;
    }
    t0 = timer_now();
    r = nand_run_channels(p, 6, 50000000ull, &err, NULL, NULL);
    for (c = 0; c < n; c++)
        cyc[c] = p[c].last - t0;
    if (r > 0)
        printf("nand channels: %s: channel %d command %lu (op %u, target %u): %s\n", what, err.channel,
               (unsigned long)err.index, err.comp.op, err.comp.target, nand_err_name(r));
    else if (r < 0)
        printf("nand channels: %s: %s\n", what, nand_err_name(r));
    return r;
}

static int erase_cmds(const nand_ch *ch, nand_cmd *o, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma, uint32_t ws)
{
    int t, n = 0;
    (void)pages, (void)dma, (void)ws;
    if (cap < 2u * (uint32_t)ways)
        return NAND_DRV_ARG;
    for (t = 0; t < ways; t++) {
        memset(&o[n], 0, sizeof o[n]);
        o[n].opcode = NAND_OP_ERASE, o[n].target = (uint8_t)t, o[n].flags = NAND_F_SPLIT;
        o[n++].row = block * ch->dev->pages_per_block;
    }
    for (t = 0; t < ways; t++) {
        memset(&o[n], 0, sizeof o[n]);
        o[n].opcode = NAND_OP_WAIT_STATUS, o[n++].target = (uint8_t)t;
    }
    return n;
}

/* "<what>: C channel(s) x W way(s) x P page(s), B bytes in N cycles, X.XX MB/s at F MHz" and per channel. */
static void chb_report(const char *what, int n, int ways, uint32_t pages, const uint64_t *cyc)
{
    uint64_t bytes = (uint64_t)ways * pages * nand_chans[n - 1].dev->page_bytes, all = 0;
    int c;
    for (c = 0; c < n; c++)
        all = cyc[c] > all ? cyc[c] : all;
    printf("nand channels: %s %d channel(s) x %d way(s) x %lu page(s), %lu bytes in %lu cycles", what, n, ways,
           (unsigned long)pages, (unsigned long)(bytes * (uint64_t)n), (unsigned long)all);
    /* MB/s = bytes * CPU_HZ / cycles / 1e6, in hundredths (the firmware prints integers) */
    printf(", %lu.%02lu MB/s at %lu MHz\n", (unsigned long)(bytes * n * (CPU_HZ / 10000u) / all / 100u),
           (unsigned long)(bytes * n * (CPU_HZ / 10000u) / all % 100u), (unsigned long)(CPU_HZ / 1000000u));
    for (c = 0; c < n; c++)
        printf("nand channels: %s channel %d: %lu bytes in %lu cycles\n", what, c, (unsigned long)bytes,
               (unsigned long)cyc[c]);
    printf("nand channels: %s scheduler: %lu completions, %lu waits, %lu idle polls, %lu idle cycles\n", what,
           (unsigned long)nand_sched_last.completions, (unsigned long)nand_sched_last.rounds,
           (unsigned long)nand_sched_last.idle_polls, (unsigned long)nand_sched_last.idle_cycles);
}

static uint32_t chb_word(int c, int t, uint32_t i) { return 0x9E3779B9u * (i + 1) ^ (uint32_t)c << 24 ^ (uint32_t)t << 20; }

static int channels_bench(int argc, char **argv)
{
    uint32_t ways, pages, i, words;
    uint64_t cyc[NAND_CHANNELS_MAX];
    uint32_t nch;
    int n = nand_channels(), c, r = 0, t;
    const nand_info *d = 0;
    if (argc > 5) {
        printf("usage: nand channels [ways] [pages] [channels]\n");
        return NAND_DRV_ARG;
    }
    if (parse_arg("nand channels", "ways", argc, argv, 2, 1, NAND_MAX_TARGETS, NAND_MAX_TARGETS, &ways) ||
        parse_arg("nand channels", "pages", argc, argv, 3, 1, CHB_MAX_PAGES, 8, &pages) ||
        parse_arg("nand channels", "channels", argc, argv, 4, 1, (uint32_t)n, (uint32_t)n, &nch))
        return NAND_DRV_ARG;
    if (n == 0) { /* every slot's ID register reads 0 */
        printf("nand channels: no NAND channel in this SoC\n");
        return NAND_DRV_ARG;
    }
    n = (int)nch;
    for (c = 0; c < n && !r; c++) {
        const nand_ch *ch = &nand_chans[c];
        d = ch->dev;
        if (d->page_bytes == 0 || d->targets < (int)ways) {
            r = nand_init(ch, ch->dev, (int)ways, NANDCON_SCRATCH);
            if (r) {
                nand_forget(ch);
                printf("nand channels: init of channel %d: %s\n", c, nand_err_name(r));
            }
        }
        if (!r && (d->page_bytes > 8192u || d->pages_per_block < pages)) {
            printf("nand channels: channel %d: %lu-byte pages, %lu pages per block: outside this command's areas\n", c,
                   (unsigned long)d->page_bytes, (unsigned long)d->pages_per_block);
            r = NAND_DRV_ARG;
        }
    }
    if (r)
        goto out;
    printf("nand channels: %d channel(s), %s %s, %stiming mode %d\n", n, d->manufacturer, d->model,
           d->nvddr ? "NV-DDR " : "", d->mode);
    words = pages * d->page_bytes / 4;
    for (c = 0; c < n; c++) /* a different pattern on every page of every way of every channel */
        for (t = 0; t < (int)ways; t++) {
            uint32_t off = (uint32_t)c * CHB_CH_STRIDE + (uint32_t)t * CHB_WAY_STRIDE;
            for (i = 0; i < words; i++) {
                mmio_write32(CHB_SRC + off + 4 * i, chb_word(c, t, i));
                mmio_write32(CHB_DST + off + 4 * i, 0);
            }
        }
    mem_fence();
    if ((r = chb_run("erase", n, erase_cmds, (int)ways, pages, 0, cyc)) != 0 ||
        (r = chb_run("program", n, nand_cache_program_cmds, (int)ways, pages, CHB_SRC, cyc)) != 0)
        goto out;
    chb_report("program", n, (int)ways, pages, cyc);
    if ((r = chb_run("read", n, nand_cache_read_cmds, (int)ways, pages, CHB_DST, cyc)) != 0)
        goto out;
    chb_report("read", n, (int)ways, pages, cyc);
    for (c = 0; c < n; c++)
        for (t = 0; t < (int)ways; t++) {
            uint32_t off = (uint32_t)c * CHB_CH_STRIDE + (uint32_t)t * CHB_WAY_STRIDE;
            for (i = 0; i < words && mmio_read32(CHB_DST + off + 4 * i) == chb_word(c, t, i); i++)
                ;
            if (i < words) {
                printf("nand channels: channel %d way %d: page %lu read back differs\n", c, t,
                       (unsigned long)(i * 4 / d->page_bytes));
                r = -1;
            }
        }
    if (!r)
        printf("nand channels: every page read back intact\n");
out:
    return r;
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
    if (!strcmp(sub, "channels"))
        return channels_bench(argc, argv);
    if (strcmp(sub, "id") && strcmp(sub, "status") && strcmp(sub, "scan") && strcmp(sub, "erase") &&
        strcmp(sub, "program") && strcmp(sub, "read")) {
        printf("nand: unknown command '%s'\n", sub);
        fputs(nand_console_help, stdout);
        return NAND_DRV_ARG;
    }
    if (CON->dev->page_bytes == 0) {
        printf("nand %s: error: the NAND is not initialised: run 'nand init [targets]' first\n", sub);
        return NAND_DRV_ARG;
    }
    if (parse_arg(argv[0], "target", argc, argv, 2, 0, (uint32_t)CON->dev->targets - 1, 0, &t))
        return NAND_DRV_ARG;
    if (!strcmp(sub, "program") || !strcmp(sub, "read"))
        return page_op(sub, (int)t, argc, argv);
    if (!strcmp(sub, "erase")) {
        if (nargs != 2) {
            printf("usage: nand erase target block\n");
            return NAND_DRV_ARG;
        }
        if (parse_arg("nand erase", "block", argc, argv, 3, 0, CON->dev->blocks - 1, 0, &blk))
            return NAND_DRV_ARG;
        return report("erase", nand_erase(CON, (int)t, blk, &c), &c);
    }
    if (nargs > 1) { /* id, status, scan */
        printf("usage: nand %s [target]\n", sub);
        return NAND_DRV_ARG;
    }
    if (!strcmp(sub, "status"))
        return report("status", nand_read_status(CON, (int)t, &c), &c);
    if (!strcmp(sub, "scan"))
        return scan((int)t);
    {
        uint8_t id[5];
        int r = nand_read_id(CON, (int)t, NANDCON_SCRATCH, id);
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
        nandcon_recover(CON, "storage", CON->dev->targets ? CON->dev->targets : 1);
    return r;
}
