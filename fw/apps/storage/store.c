/* Power-cut-safe run store (docs/storage.md).
 *
 * Each run is kept in two copies on two NAND channels (run n on channels 2n and 2n + 1 modulo the
 * channels that answered at mount, copy_place; with one channel: one block on each target, or
 * two blocks of target 0 when only one is there), programmed and read back byte for byte before the
 * manifest names it. The manifest lives on channel 0. The manifest is one
 * page (magic, sequence number, runs with their CRC-32 and blocks, grown bad blocks, CRC-32) written
 * as two copies into blocks of a small manifest area, never into a block that holds the newest valid
 * manifest: a power cut at any NAND operation leaves the previous manifest intact. Only after both
 * manifest copies are programmed and verified is a run reported stored. Mount takes the valid manifest
 * with the highest sequence number; a run is returned only when a copy reads back (ECC) with its CRC. */
#include "storage.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "compaction.h"
#include "extents.h"
#include "kb16.h"
#include "nand.h"
#include "nandcon.h"
#include "soc.h"
#include "sys.h"

/* The manifest's channel; every channel has its geometry (mount_channels checks). */
#define NAND0 (&nand_chans[0])

/* NAND area of the store on every target (the console's storage flow uses blocks 1..5). The host's
 * side (lsmc/sim/storage_faults.py) restates the manifest area and RB_MOUNT/RB_FINAL (STORAGE_WORK_MAGIC is lsmc_job.h's);
 * tests/test_nand_faults.py fails when they drift apart. */
#define MAN_FIRST 8u   /* manifest area: blocks 8..13 */
#define MAN_BLOCKS 6u
#define DATA_FIRST 14u /* data blocks 14..47 */
#define AREA_END 48u
#define STORE_FAIL (-100) /* the store's own failures: apart from the driver's (negative) and the completions' codes */
#define MAX_RUNS 32u
#define MAX_GROWN 16u
#define MAGIC 0x464D534Cu      /* "LSMF" */
#define WORK_MAX 32u

/* DDR buffers (inside DDR_SCRATCH, above the storage flow's): readback areas the host dumps. */
#define RB_MOUNT 0x4E000000u /* runs read back at mount, MAX_RUN_BYTES apart */
#define RB_FINAL 0x4E400000u /* runs read back after the work list */
#define W_IN0 0x4E800000u
#define W_IN1 0x4EA00000u
#define W_OUT 0x4EC00000u
#define W_INV 0x4EE00000u
#define W_SW_OUT 0x4F000000u
#define W_SW_INV 0x4F200000u
#define W_VERIFY 0x4F400000u
#define W_MAN 0x4F600000u
#define W_CAP 0x00200000u
#define P8(a) ((uint8_t *)(uintptr_t)(a))
_Static_assert(W_MAN + 0x10000u <= DDR_SCRATCH_BASE + DDR_SCRATCH_SIZE, "store buffers outside DDR scratch");

typedef struct {
    uint32_t id, bytes, crc;
    uint8_t target[2];
    uint16_t block[2];
    uint8_t channel[2];
} run_rec;

typedef struct {
    uint32_t magic, seq, n_runs, n_grown;
    run_rec runs[MAX_RUNS];
    struct { uint8_t channel, target; uint16_t block; } grown[MAX_GROWN];
    uint32_t crc; /* CRC-32 of everything above */
} manifest;
_Static_assert(sizeof(manifest) <= 2048, "the manifest is one page");

static manifest man;                           /* the newest committed manifest */
static uint32_t man_keep[NAND_MAX_TARGETS];    /* manifest-area blocks (bit b - MAN_FIRST) holding it */
static uint32_t man_next[NAND_MAX_TARGETS];    /* rotation cursor of the manifest area */
static uint32_t next_data[NAND_CHANNELS_MAX][NAND_MAX_TARGETS]; /* allocation cursors */
static int chan_ok[NAND_CHANNELS_MAX]; /* channels mounted (channel 0 always, others if their init passed) */
static int n_ok, ok_list[NAND_CHANNELS_MAX];
static int lost_runs;
static int io_fatal; /* a read in store_get timed out: the caller mounts again */

static uint32_t crc32(const uint8_t *p, uint32_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        int b;
        c ^= *p++;
        for (b = 0; b < 8; b++)
            c = (c >> 1) ^ (0xEDB88320u & -(c & 1u));
    }
    return ~c;
}

static uint32_t man_crc(const manifest *m) { return crc32((const uint8_t *)m, offsetof(manifest, crc)); }

/* "T" on channel 0 (the one-channel name), "C.T" on channel C: the SoC harness names targets so. */
static const char *tname(int ch, int t)
{
    static char buf[4][24]; /* room for two full ints: the compiler checks the bound */
    static unsigned i;
    char *b = buf[i++ & 3u];
    if (ch)
        snprintf(b, sizeof buf[0], "%d.%d", ch, t);
    else
        snprintf(b, sizeof buf[0], "%d", t);
    return b;
}

/* The bad-block table of channel ch. */
static int block_bad(int ch, int t, uint32_t b) { return nand_block_bad(&nand_chans[ch], t, b); }

static void bbt_mark(int ch, int t, uint32_t b) { nand_bbt_mark(&nand_chans[ch], t, b); }

static int chan_targets(int ch) { return ch >= 0 && ch < NAND_CHANNELS_MAX && chan_ok[ch] ? nand_chans[ch].dev->targets : 0; }

static void note_grown(int ch, int t, uint32_t b, const char *why)
{
    uint32_t i;
    bbt_mark(ch, t, b);
    for (i = 0; i < man.n_grown; i++)
        if (man.grown[i].channel == ch && man.grown[i].target == t && man.grown[i].block == b)
            return;
    printf("fault: %s target %s block %lu: block retired\n", why, tname(ch, t), (unsigned long)b);
    if (man.n_grown < MAX_GROWN) {
        man.grown[man.n_grown].channel = (uint8_t)ch;
        man.grown[man.n_grown].target = (uint8_t)t;
        man.grown[man.n_grown].block = (uint16_t)b;
        man.n_grown++;
    }
}

static int used(int ch, int t, uint32_t b)
{
    uint32_t i;
    int k;
    for (i = 0; i < man.n_runs; i++)
        for (k = 0; k < 2; k++)
            if (man.runs[i].channel[k] == ch && man.runs[i].target[k] == t && man.runs[i].block[k] == b)
                return 1;
    return 0;
}

static uint32_t area_end(void) { return NAND0->dev->blocks < AREA_END ? NAND0->dev->blocks : AREA_END; }

/* The next good, unused data block of channel ch, target t after its cursor (0 = none left); `not`
 * excluded. Every channel has channel 0's geometry (the harness's models; mount checks). */
static uint32_t alloc_block(int ch, int t, uint32_t not)
{
    uint32_t n = area_end() - DATA_FIRST, i, b;
    for (i = 0; i < n; i++) {
        b = DATA_FIRST + (next_data[ch][t] - DATA_FIRST + i) % n;
        if (b != not && !block_bad(ch, t, b) && !used(ch, t, b)) {
            next_data[ch][t] = b + 1 >= area_end() ? DATA_FIRST : b + 1;
            return b;
        }
    }
    return 0;
}

/* Copy k of a record goes to target k when there are two targets, else both to target 0. */
static int copy_target(int k) { return NAND0->dev->targets > 1 ? k : 0; }

/* Where copy k of the n-th run goes: slot i = 2n + k on channel i modulo the mounted ones, target
 * (i / channels + k) modulo its targets, so that the two copies sit on two channels and every target of
 * every channel takes its turn; with one channel mounted, copy_target(k) of channel 0. */
static void copy_place(uint32_t n, int k, int *ch, int *t)
{
    uint32_t i = 2 * n + (uint32_t)k;
    if (n_ok < 2) {
        *ch = 0;
        *t = copy_target(k);
        return;
    }
    *ch = ok_list[i % (uint32_t)n_ok];
    *t = (int)((i / (uint32_t)n_ok + (uint32_t)k) % (uint32_t)chan_targets(*ch));
}

/* Program both extents and read them back byte for byte. On failure the block that failed is
 * retired (its index in *bad) and an error returned. */
static int write_verified(const extent *e, int n, int *bad, const char *what)
{
    extent_io io;
    extent v[2];
    int rc, i;
    *bad = -1;
    rc = extents_program(e, n, &io);
    if (rc) {
        printf("fault: %s %s target %s block %lu page %lu: %s\n", what, io.op,
               tname(e[io.index].channel, e[io.index].target), (unsigned long)e[io.index].block, (unsigned long)io.page,
               nand_err_name(rc));
        *bad = io.index;
        return rc;
    }
    for (i = 0; i < n; i++) {
        v[i] = e[i];
        v[i].addr = W_VERIFY + (uint32_t)i * W_CAP / 2;
    }
    rc = extents_read(v, n, &io);
    if (io.corrected)
        printf("fault: %s verify: ECC corrected %lu bits\n", what, (unsigned long)io.corrected);
    if (rc) {
        printf("fault: %s verify %s target %s block %lu page %lu: %s\n", what, io.op,
               tname(e[io.index].channel, e[io.index].target), (unsigned long)e[io.index].block, (unsigned long)io.page,
               nand_err_name(rc));
        *bad = io.index;
        return rc;
    }
    for (i = 0; i < n; i++)
        if (memcmp(P8(v[i].addr), P8(e[i].addr), e[i].len)) {
            printf("fault: %s verify target %s block %lu: data differs\n", what, tname(e[i].channel, e[i].target),
                   (unsigned long)e[i].block);
            *bad = i;
            return STORE_FAIL;
        }
    return 0;
}

/* A NAND error that is not the block's fault: the target or the controller stopped answering. */
static int fatal(int rc) { return nandcon_is_timeout(rc) || rc == NAND_DRV_ARG; }

/* Write `m` (seq already set) as two copies into manifest-area blocks that do not hold the current
 * manifest; retires blocks that fail and tries others. 0 when both copies are programmed and verified. */
static int manifest_write(manifest *m)
{
    int attempt;
    m->magic = MAGIC;
    m->crc = man_crc(m);
    memset(P8(W_MAN), 0xFF, NAND0->dev->page_bytes);
    memcpy(P8(W_MAN), m, sizeof *m);
    for (attempt = 0; attempt < 8; attempt++) {
        extent e[2];
        uint32_t chosen[NAND_MAX_TARGETS] = {0};
        int k, bad, rc;
        for (k = 0; k < 2; k++) {
            int t = copy_target(k);
            uint32_t i, b = 0;
            for (i = 0; i < MAN_BLOCKS && !b; i++) {
                uint32_t j = (man_next[t] + i) % MAN_BLOCKS;
                if (!((man_keep[t] | chosen[t]) >> j & 1u) && !block_bad(0, t, MAN_FIRST + j))
                    b = MAN_FIRST + j;
            }
            if (!b) {
                printf("store: FAIL (no good manifest block left on target %d)\n", t);
                return STORE_FAIL;
            }
            chosen[t] |= 1u << (b - MAN_FIRST);
            man_next[t] = (b - MAN_FIRST + 1) % MAN_BLOCKS;
            e[k] = (extent){t, b, W_MAN, NAND0->dev->page_bytes, 0};
        }
        rc = write_verified(e, 2, &bad, "manifest");
        if (rc == 0) {
            memcpy(man_keep, chosen, sizeof man_keep);
            printf("store: manifest seq %lu written: target %d block %lu, target %d block %lu\n", (unsigned long)m->seq,
                   e[0].target, (unsigned long)e[0].block, e[1].target, (unsigned long)e[1].block);
            return 0;
        }
        if (fatal(rc))
            return rc;
        if (bad >= 0)
            note_grown(0, e[bad].target, e[bad].block, "manifest write");
        m->n_grown = man.n_grown;
        memcpy(m->grown, man.grown, sizeof m->grown);
        m->crc = man_crc(m);
        memcpy(P8(W_MAN), m, sizeof *m);
    }
    return STORE_FAIL;
}

/* Store `bytes` at DDR `addr` as run `id`: two verified copies, then the manifest. */
static int store_put(uint32_t id, uint32_t addr, uint32_t bytes)
{
    run_rec r;
    int attempt;
    if (man.n_runs >= MAX_RUNS || bytes == 0 || bytes > NAND0->dev->page_bytes * NAND0->dev->pages_per_block) {
        printf("store: FAIL (run %lu: %lu bytes; a run is 1..%lu bytes, at most %u runs)\n", (unsigned long)id,
               (unsigned long)bytes, (unsigned long)(NAND0->dev->page_bytes * NAND0->dev->pages_per_block), MAX_RUNS);
        return STORE_FAIL;
    }
    memset(&r, 0, sizeof r);
    r.id = id;
    r.bytes = bytes;
    r.crc = crc32(P8(addr), bytes);
    for (attempt = 0; attempt < 8; attempt++) {
        extent e[2];
        int k, bad, rc;
        manifest m;
        for (k = 0; k < 2; k++) {
            int ch, t;
            uint32_t b;
            copy_place(man.n_runs, k, &ch, &t);
            b = alloc_block(ch, t, k == 1 && t == e[0].target && ch == e[0].channel ? e[0].block : 0);
            if (!b) {
                printf("store: FAIL (run %lu: no good free block left on target %s)\n", (unsigned long)id, tname(ch, t));
                return STORE_FAIL;
            }
            e[k] = (extent){t, b, addr, bytes, ch};
            r.channel[k] = (uint8_t)ch;
            r.target[k] = (uint8_t)t;
            r.block[k] = (uint16_t)b;
        }
        rc = write_verified(e, 2, &bad, "data");
        if (rc) {
            if (fatal(rc))
                return rc;
            if (bad >= 0)
                note_grown(e[bad].channel, e[bad].target, e[bad].block, "data write");
            continue;
        }
        m = man;
        m.seq = man.seq + 1;
        m.runs[m.n_runs++] = r;
        if ((rc = manifest_write(&m)) != 0)
            return rc;
        man = m;
        printf("store: stored run %lu: %lu bytes crc 0x%08lx, copies target %s block %lu, target %s block %lu; "
               "manifest seq %lu\n", (unsigned long)id, (unsigned long)bytes, (unsigned long)r.crc,
               tname(r.channel[0], r.target[0]), (unsigned long)r.block[0], tname(r.channel[1], r.target[1]),
               (unsigned long)r.block[1], (unsigned long)man.seq);
        return 0;
    }
    printf("store: FAIL (run %lu: 8 attempts failed)\n", (unsigned long)id);
    return STORE_FAIL;
}

static run_rec *find(uint32_t id)
{
    uint32_t i;
    for (i = 0; i < man.n_runs; i++)
        if (man.runs[i].id == id)
            return &man.runs[i];
    return 0;
}

/* Copy k of run `r` was unreadable (or on a target that no longer answers) while the data, intact, is
 * in DDR at `addr`: write a new copy on a fresh block (of target k, or target 0 when k's is gone), then
 * commit the manifest that names it. Until then the old record stays: a power cut loses nothing. */
static int repair(run_rec *r, int k, uint32_t addr)
{
    int attempt, ch = chan_ok[r->channel[k] % NAND_CHANNELS_MAX] ? r->channel[k] : 0, t;
    t = r->target[k] < chan_targets(ch) ? r->target[k] : 0;
    for (attempt = 0; attempt < 4; attempt++) {
        uint32_t b = alloc_block(ch, t, r->target[!k] == t && r->channel[!k] == ch ? r->block[!k] : 0);
        extent e = {t, b, addr, r->bytes, ch};
        manifest m;
        int bad, rc;
        if (!b) {
            printf("store: run %lu: no free block on target %s to repair copy %d\n", (unsigned long)r->id, tname(ch, t), k);
            return STORE_FAIL;
        }
        rc = write_verified(&e, 1, &bad, "repair");
        if (rc) {
            if (fatal(rc))
                return rc;
            note_grown(ch, t, b, "repair write");
            continue;
        }
        m = man;
        m.seq = man.seq + 1;
        m.runs[r - man.runs].channel[k] = (uint8_t)ch;
        m.runs[r - man.runs].target[k] = (uint8_t)t;
        m.runs[r - man.runs].block[k] = (uint16_t)b;
        if ((rc = manifest_write(&m)) != 0)
            return rc;
        man = m;
        printf("store: repaired run %lu copy %d: target %s block %lu; manifest seq %lu\n", (unsigned long)r->id, k,
               tname(ch, t), (unsigned long)b, (unsigned long)man.seq);
        return 0;
    }
    return STORE_FAIL;
}

/* Run `r` (in man.runs) into DDR at `addr`: the first copy that reads back (ECC) with the manifest's
 * CRC; a copy that did not is written anew from it (repair), so one more fault cannot lose the run. */
static int store_get(run_rec *r, uint32_t addr, const char *who)
{
    int k, failed[2] = {0, 0};
    for (k = 0; k < 2; k++) {
        extent e = {r->target[k], r->block[k], addr, r->bytes, r->channel[k]};
        extent_io io;
        int rc;
        failed[k] = 1;
        if (e.target >= chan_targets(e.channel)) {
            printf("fault: %s run %lu copy %d: target %s not available\n", who, (unsigned long)r->id, k,
                   tname(e.channel, e.target));
            continue;
        }
        rc = extents_read(&e, 1, &io);
        if (io.corrected)
            printf("fault: %s run %lu copy %d: ECC corrected %lu bits\n", who, (unsigned long)r->id, k,
                   (unsigned long)io.corrected);
        if (rc) {
            printf("fault: %s run %lu copy %d (target %s block %lu) page %lu: %s\n", who, (unsigned long)r->id, k,
                   tname(e.channel, e.target), (unsigned long)e.block, (unsigned long)io.page, nand_err_name(rc));
            if (fatal(rc)) {
                io_fatal = 1;
                return STORE_FAIL;
            }
            continue;
        }
        if (crc32(P8(addr), r->bytes) != r->crc) {
            printf("fault: %s run %lu copy %d (target %s block %lu): CRC mismatch\n", who, (unsigned long)r->id, k,
                   tname(e.channel, e.target), (unsigned long)e.block);
            continue;
        }
        failed[k] = 0;
        break;
    }
    if (k == 2)
        return STORE_FAIL;
    if (k == 1 && failed[0])
        repair(r, 0, addr);
    else if (k == 0 && r->target[1] >= chan_targets(r->channel[1])) /* the second copy's target is gone */
        repair(r, 1, addr);
    return k;
}

/* Every run of the manifest into DDR at base + i * (page * pages per block), each line for the host. */
static int readback_all(const char *who, uint32_t base)
{
    uint32_t i, stride = NAND0->dev->page_bytes * NAND0->dev->pages_per_block;
    int lost = 0;
    for (i = 0; i < man.n_runs && !io_fatal; i++) {
        run_rec *r = &man.runs[i];
        int k = store_get(r, base + i * stride, who);
        if (io_fatal)
            break;
        if (k >= 0)
            printf("readback: %s run %lu at 0x%08lx bytes %lu crc 0x%08lx copy %d\n", who, (unsigned long)r->id,
                   (unsigned long)(base + i * stride), (unsigned long)r->bytes, (unsigned long)r->crc, k);
        else {
            printf("readback: %s run %lu LOST (no copy reads back with its CRC)\n", who, (unsigned long)r->id);
            lost++;
        }
    }
    return lost;
}

/* Factory markers of the store's area on target t of the channel, into its bad-block table. */
static int scan_area(const nand_ch *ch, int t)
{
    uint32_t n = 0;
    int rc = nand_bbt_scan(ch, t, area_end(), &n);
    if (rc)
        printf("store: FAIL (mount: bad-block scan of target %s: %s)\n", tname(ch->index, t), nand_err_name(rc));
    else if (n)
        printf("mount: target %s: %lu factory-bad block(s) in blocks 0..%lu\n", tname(ch->index, t),
               (unsigned long)n, (unsigned long)(area_end() - 1));
    next_data[ch->index][t] = DATA_FIRST;
    return rc;
}

/* Channels 1.. hold run copies: initialise each and scan its area; a channel that does not answer (or
 * has another geometry) is left out, its copies are read from the other channel and repaired. */
static void mount_channels(int targets)
{
    int c, t, rc;
    memset(chan_ok, 0, sizeof chan_ok);
    chan_ok[0] = 1;
    ok_list[0] = 0;
    n_ok = 1;
    for (c = 1; c < nand_channels(); c++) {
        const nand_ch *ch = &nand_chans[c];
        rc = nand_reinit(ch, targets, NANDCON_SCRATCH);
        if (rc == 0 && (ch->dev->blocks != NAND0->dev->blocks || ch->dev->page_bytes != NAND0->dev->page_bytes))
            rc = NAND_DRV_ID;
        for (t = 0; rc == 0 && t < ch->dev->targets; t++)
            rc = scan_area(ch, t);
        if (rc) {
            printf("fault: mount: channel %d: %s: left out, its copies are read from the other channels\n", c,
                   nand_err_name(rc));
            continue;
        }
        chan_ok[c] = 1;
        ok_list[n_ok++] = c;
    }
    printf("mount: %d channel(s) hold run copies\n", n_ok);
}

/* Initialise `targets` NAND targets, scan the area's factory markers, find the newest valid manifest. */
static int mount_targets(int targets)
{
    int t, rc;
    uint32_t b, where = 0, seqs[NAND_MAX_TARGETS][MAN_BLOCKS];
    memset(&man, 0, sizeof man);
    memset(man_keep, 0, sizeof man_keep);
    memset(seqs, 0, sizeof seqs);
    if ((rc = nand_reinit(NAND0, targets, NANDCON_SCRATCH)) != 0) {
        printf("store: FAIL (mount: NAND init of %d target(s): %s)\n", targets, nand_err_name(rc));
        return rc;
    }
    for (t = 0; t < NAND0->dev->targets; t++) {
        if ((rc = scan_area(NAND0, t)) != 0)
            return rc;
        man_next[t] = 0;
        for (b = 0; b < MAN_BLOCKS; b++) {
            manifest *m = (manifest *)P8(W_MAN);
            extent e = {t, MAN_FIRST + b, W_MAN, NAND0->dev->page_bytes, 0};
            extent_io io;
            if (nand_block_bad(NAND0, t, e.block))
                continue;
            rc = extents_read(&e, 1, &io);
            if (rc) {
                if (fatal(rc))
                    return rc;
                printf("fault: mount: manifest target %d block %lu: %s (skipped)\n", t, (unsigned long)e.block,
                       nand_err_name(rc));
                continue;
            }
            if (m->magic == 0xFFFFFFFFu)
                continue; /* erased */
            if (m->magic != MAGIC || m->n_runs > MAX_RUNS || m->n_grown > MAX_GROWN || man_crc(m) != m->crc) {
                printf("fault: mount: manifest target %d block %lu: not a valid manifest (torn; skipped)\n", t,
                       (unsigned long)e.block);
                continue;
            }
            seqs[t][b] = m->seq;
            if (m->seq > man.seq) {
                man = *m;
                where = e.block | (uint32_t)t << 16;
            }
        }
    }
    /* every block holding the newest manifest must survive the next manifest write */
    for (t = 0; t < NAND0->dev->targets; t++)
        for (b = 0; b < MAN_BLOCKS; b++)
            if (man.seq && seqs[t][b] == man.seq) {
                man_keep[t] |= 1u << b;
                man_next[t] = (b + 1) % MAN_BLOCKS;
            }
    mount_channels(targets);
    for (b = 0; b < man.n_grown; b++)
        if (chan_ok[man.grown[b].channel % NAND_CHANNELS_MAX])
            bbt_mark(man.grown[b].channel, man.grown[b].target, man.grown[b].block);
    if (man.seq)
        printf("mount: manifest seq %lu (target %lu block %lu): %lu run(s), %lu grown bad block(s); %d target(s)\n",
               (unsigned long)man.seq, (unsigned long)(where >> 16), (unsigned long)(where & 0xFFFF),
               (unsigned long)man.n_runs, (unsigned long)man.n_grown, NAND0->dev->targets);
    else
        printf("mount: no manifest: empty store; %d target(s)\n", NAND0->dev->targets);
    return 0;
}

/* A target that stops answering (stuck R/B#) anywhere in the mount: mount again without it. */
static int mount(void)
{
    int rc = mount_targets(NAND_MAX_TARGETS);
    if (rc && fatal(rc)) {
        printf("fault: mount: %s with %d targets: controller and NAND reset, going on with target 0 alone\n",
               nand_err_name(rc), NAND_MAX_TARGETS);
        rc = mount_targets(1);
    }
    return rc;
}

/* One merge of the work list: inputs read back from NAND, merged by the IP, checked against the C
 * merge, the result stored. */
static int do_merge(uint32_t id, uint32_t ia, uint32_t ib, unsigned group)
{
    run_rec *a = find(ia), *b = find(ib);
    kb16_merge_result sw;
    cip_job job;
    cip_result cr;
    if (!a || !b) {
        printf("store: FAIL (merge %lu: input run %lu or %lu not stored)\n", (unsigned long)id, (unsigned long)ia,
               (unsigned long)ib);
        return STORE_FAIL;
    }
    if (store_get(a, W_IN0, "merge") < 0 || store_get(b, W_IN1, "merge") < 0) {
        printf("store: FAIL (merge %lu: an input does not read back)\n", (unsigned long)id);
        return STORE_FAIL;
    }
    kb16_merge(P8(W_IN0), a->bytes, P8(W_IN1), b->bytes, group, P8(W_SW_OUT), W_CAP, (uint32_t *)P8(W_SW_INV),
               W_CAP / 4, &sw);
    if (sw.status != KB16_OK) {
        printf("store: FAIL (merge %lu: C merge: %s)\n", (unsigned long)id, kb16_err_name(sw.status));
        return STORE_FAIL;
    }
    cip_job_from_reference(&job, group, W_IN0, a->bytes, W_IN1, b->bytes, W_OUT, W_INV, &sw);
    if (cip_run(&job, &cr) != CIP_OK || cr.dma[DMA_CH_OUT].bytes != sw.out_bytes ||
        memcmp(P8(W_OUT), P8(W_SW_OUT), sw.out_bytes)) {
        printf("store: FAIL (merge %lu: the IP's output differs from the C merge)\n", (unsigned long)id);
        return STORE_FAIL;
    }
    printf("store: merged runs %lu + %lu -> %lu bytes (IP = C merge)\n", (unsigned long)ia, (unsigned long)ib,
           (unsigned long)sw.out_bytes);
    return store_put(id, W_OUT, (uint32_t)sw.out_bytes);
}

int store_mount(void)
{
    int i, rc;
    printf("store: mount\n");
    for (i = 0;; i++) {
        if ((rc = mount()) != 0)
            return rc;
        io_fatal = 0;
        lost_runs = readback_all("mount", RB_MOUNT);
        if (!io_fatal || i)
            break;
        printf("fault: mount readback: a target stopped answering (TIMEOUT): mounting again\n");
    }
    printf("store: mount done: %lu run(s), %d lost\n", (unsigned long)man.n_runs, lost_runs);
    return 0;
}

int store_faults_flow(void)
{
    const uint32_t *w = (const uint32_t *)P8(DDR_HOST_BASE);
    uint32_t i, n;
    int rc, retried = 0;
    if (store_mount() != 0)
        return 1;
    if (w[0] != STORAGE_WORK_MAGIC || w[1] > WORK_MAX) {
        printf("store: FAIL (no work list at 0x%08lx: magic 0x%08lx, %lu items)\n", (unsigned long)DDR_HOST_BASE,
               (unsigned long)w[0], (unsigned long)w[1]);
        return 2;
    }
    n = w[1];
    for (i = 0; i < n; i++) {
        const uint32_t *it = w + 2 + 4 * i;
        uint32_t op = it[0] & 0xFF, id = it[1];
        if (find(id)) {
            printf("store: run %lu already stored\n", (unsigned long)id);
            continue;
        }
        if (op == 1 && (it[2] < DDR_HOST_BASE || it[2] & 3u || it[3] > DDR_HOST_SIZE ||
                        it[2] - DDR_HOST_BASE > DDR_HOST_SIZE - it[3])) {
            printf("store: FAIL (work item %lu: run %lu at 0x%08lx, %lu bytes: not 4-byte aligned inside DDR_HOST)\n",
                   (unsigned long)i, (unsigned long)id, (unsigned long)it[2], (unsigned long)it[3]);
            return 2;
        }
        if (op == 2 && ((it[0] >> 8) < KB16_MIN_GROUP || (it[0] >> 8) > KB16_MAX_GROUP)) {
            printf("store: FAIL (work item %lu: merge group %lu outside %u..%u)\n", (unsigned long)i,
                   (unsigned long)(it[0] >> 8), KB16_MIN_GROUP, KB16_MAX_GROUP);
            return 2;
        }
        if (op == 1)
            rc = store_put(id, it[2], it[3]);
        else if (op == 2)
            rc = do_merge(id, it[2], it[3], it[0] >> 8);
        else {
            printf("store: FAIL (work item %lu: unknown operation %lu)\n", (unsigned long)i, (unsigned long)op);
            return 2;
        }
        if (((rc && fatal(rc)) || io_fatal) && !retried) {
            io_fatal = 0;
            printf("fault: work item %lu: %s: controller and NAND reset, store mounted again\n", (unsigned long)i,
                   nand_err_name(rc));
            if (mount() != 0)
                return 1;
            retried = 1;
            i--;
            continue;
        }
        if (rc) {
            printf("store: FAIL (work item %lu, run %lu)\n", (unsigned long)i, (unsigned long)id);
            return 1;
        }
        retried = 0;
    }
    lost_runs += readback_all("final", RB_FINAL);
    printf("store: work list done: %lu run(s) stored, %d lost; ECC: %lu reads, %lu bits corrected, %lu uncorrectable, "
           "%lu re-reads (%lu recovered)\n", (unsigned long)man.n_runs, lost_runs, (unsigned long)NAND0->ecc->reads,
           (unsigned long)NAND0->ecc->corrected_bits, (unsigned long)NAND0->ecc->uncorrectable,
           (unsigned long)NAND0->ecc->retries, (unsigned long)NAND0->ecc->recovered);
    return lost_runs ? 3 : 0;
}
