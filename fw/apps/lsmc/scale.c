/* Several compaction units at once (fw/drivers/taskq.*):
 * - the host-loaded scaling job (SIM_ARG 8, console `scale`): a descriptor at DDR 0x4000_0000 lists
 *   merge tasks (up to TQ_MAX_WAYS runs each) with their expected results; the firmware runs them all
 *   through the task queue on the units, brackets the whole with the machine timer, compares every
 *   output with its expectation and writes a result block for the host (layout in docs/firmware.md);
 * - the console's `run N [overlap%] [G] [R] [U]`: U jobs of R runs each, generated on the CPU,
 *   cascaded when R exceeds the units' ways, run side by side on U units, checked against the C merge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "csr.h"
#include "regs.h"
#include "soc.h"
#include "taskq.h"
#include "timer.h"

#define P8(a) ((uint8_t *)(uintptr_t)(a))

/* ---- host-loaded scaling job ------------------------------------------------------------------- */

/* The descriptor (lsmc_job.h, app.h): header words SCALE_HEAD_*, task i at word SCALE_HEAD_NWORDS +
 * SCALE_TASK_NWORDS * i (runs, fault, TQ_MAX_WAYS x (run offset, length), expected out/inv, out/inv buffers,
 * a split job's DRAM geometry); the result block at byte SCALE_RESULT_OFF: SCALE_RES_HEAD_*, then
 * SCALE_RES_TASK_NWORDS words per task. Flags SCALE_F_* (SCALE_F_SPLIT: one job, task 0 with K runs, that
 * the firmware splits by key range over the units, sub-compaction
 * in docs/scaling.md; its result: the segments SCALE_RES_SPLIT_* after task 0's words), status codes SCALE_*
 * (the exit code of SIM_ARG 8). */
_Static_assert(SCALE_TASK_EXP_OUT_OFF == SCALE_TASK_RUN0_OFF + 2 * TQ_MAX_WAYS, "a task holds TQ_MAX_WAYS runs");
#define SCALE_MAX_TASKS ((SCALE_RESULT_OFF / 4u - SCALE_HEAD_NWORDS) / SCALE_TASK_NWORDS)
_Static_assert(SCALE_RESULT_OFF + 4u * (SCALE_RES_HEAD_NWORDS + SCALE_RES_TASK_NWORDS * SCALE_MAX_TASKS) <= SCALE_DESC_BYTES,
               "scale result block outside the descriptor");


static tq_task scale_tasks[SCALE_MAX_TASKS];

_Static_assert(SCALE_RESULT_OFF + 4u * (SCALE_RES_HEAD_NWORDS + SCALE_RES_TASK_NWORDS + SCALE_RES_SPLIT_NWORDS) <= SCALE_DESC_BYTES,
               "a split job's segments outside the descriptor");
_Static_assert(SCALE_RES_SPLIT_INV_SEG - SCALE_RES_SPLIT_OUT_SEG == 2 * KB16_MAX_PARTS, "a segment per part");

static int scale_bad(volatile uint32_t *r, const char *what)
{
    printf("scale: %s\n", what);
    r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
    return SCALE_BAD_DESC;
}

/* ---- sub-compaction in the firmware (SCALE_F_SPLIT) ---------------------------------------------- */

static tq_task split_parts[KB16_MAX_PARTS];
/* A split job's result: its merged run and its invalid addresses as (address, bytes) segments, in order
 * (the parts' outputs where their units wrote them: nothing is moved) */
static uint32_t split_out_seg[KB16_MAX_PARTS][2], split_inv_seg[KB16_MAX_PARTS][2];
static unsigned split_out_segs, split_inv_segs;
/* The closing's work space (kb16_stitch_scratch: 3.3 KiB at G 16) in on-chip RAM when it fits: its many
 * small stores cost a cycle there, and a bus write each into DDR (the D$ is write-through). */
static uint64_t split_fit_ram[8192 / sizeof(uint64_t)];
static kb16_subrun split_sub[KB16_MAX_PARTS * TQ_MAX_WAYS];
static uint8_t split_keys[KB16_MAX_PARTS][KB16_MAX_KEY];
static uint8_t split_key_lens[KB16_MAX_PARTS];

/* Forward copy by 32-bit words (KB16 data is whole 16-byte entries at word-aligned addresses; dst <= src
 * when they overlap): the D$ is write-through, so picolibc's byte-wise memcpy costs a bus write per byte.
 * Only the general stitch (a part that cannot be closed in place) still copies. */
static void copy_words(uint32_t dst, uint32_t src, uint32_t bytes)
{
    volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)dst;
    const uint32_t *s = (const uint32_t *)(uintptr_t)src;
    uint32_t i, n = bytes / 4u;
    for (i = 0; i + 4u <= n; i += 4u) {
        uint32_t a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];
        d[i] = a;
        d[i + 1] = b;
        d[i + 2] = c;
        d[i + 3] = e;
    }
    for (; i < n; i++)
        d[i] = s[i];
}

/* The first address >= a (32-byte aligned) in bank (*k mod banks) of a ROW_BANK_COL mapping with `row`
 * bytes per bank row: buffers streamed side by side start in successive banks, so that streams moving
 * at the same pace do not keep meeting in one bank on different rows (docs/scaling.md). */
static uint32_t bank_stagger(uint32_t a, unsigned *k, uint32_t row, uint32_t banks)
{
    uint32_t span = row * banks, want;
    a = dma_align_up(a);
    if (!row || !banks)
        return a;
    want = (*k)++ % banks * row;
    return a + (want + span - a % span) % span;
}

typedef struct {
    uint64_t total;            /* split + units + stitch */
    uint32_t split, stitch;    /* cycles of each CPU step */
    uint32_t copied;           /* bytes the CPU copied: the general stitch's run (kb16_stitch), else 0 */
} split_stats;

/* Input i of task t as its DMA reader takes it, nothing copied: a sub-run's re-encoded head (in the plan's
 * scratch) then its tail where it lies in the run, as the reader's two segments (dma_set_segment2). A
 * lone segment that starts off the DMA's 32-byte alignment (a tail at an odd group's boundary, or a head
 * with no tail) goes as the second segment after an empty first: the reader then needs only the 16-byte
 * stream beat. */
static void set_input(tq_task *t, unsigned i, uint32_t a1, uint32_t l1, uint32_t a2, uint32_t l2)
{
    if (!l1) {
        a1 = a2;
        l1 = l2;
        l2 = 0;
    }
    if (!l2 && (a1 & (DMA_ALIGN - 1u))) {
        a2 = a1;
        l2 = l1;
        a1 = l1 = 0;
    }
    t->run_addr[i] = a1;
    t->run_len[i] = l1;
    t->run_addr2[i] = a2;
    t->run_len2[i] = l2;
}

/* Job `job` (K runs newest first, its out/inv buffers) split into `parts` sub-jobs at group-start keys
 * of its largest run (kb16_split_keys_skew), one per unit through the task queue. Each DMA reader takes
 * its sub-run as two segments, the re-encoded head (in the work area) then the tail in place, so no
 * input is copied. The parts' outputs are closed in place (kb16_stitch_inplace) and stay where their
 * units wrote them, inside job->out_addr's buffer: the merged run is those segments in part order
 * (split_out_seg), the invalid addresses likewise (split_inv_seg). When a part cannot be closed in place,
 * kb16_stitch joins the parts through the work area into job->out_addr (one segment). With a DRAM
 * geometry (row bytes per bank row, banks), the split points move by one bank row per part and the
 * parts' buffers are staggered by bank. ctx->cycles is the units' bracket; st->total adds the split and
 * the stitch. Returns KB16_OK or a kb16 error. */
static int scale_split(tq_ctx *ctx, tq_task *job, unsigned parts, uint32_t work, uint32_t work_len,
                       uint32_t row, uint32_t banks, split_stats *st)
{
    const uint8_t *runs[TQ_MAX_WAYS];
    size_t lens[TQ_MAX_WAYS], used = 0, olens[KB16_MAX_PARTS], ocaps[KB16_MAX_PARTS];
    uint8_t *outs[KB16_MAX_PARTS];
    unsigned n = job->nruns, i, j, on_cpu = 0, k = 0;
    uint32_t w = dma_align_up(work), wend = work + work_len, out_at = job->out_addr, inv_at = job->inv_addr, hw = 0;
    uint64_t t0 = timer_now(), t1;
    kb16_merge_result res;
    void *fit = kb16_stitch_scratch(ctx->group) <= sizeof split_fit_ram ? split_fit_ram : 0;
    size_t fit_cap = sizeof split_fit_ram;
    int rc;

    memset(st, 0, sizeof *st);
    split_out_segs = split_inv_segs = 0;
    if (parts < 1 || parts > KB16_MAX_PARTS)
        return KB16_ERR_ARG;
    for (i = 0; i < n; i++) {
        runs[i] = P8(job->run_addr[i]);
        lens[i] = job->run_len[i];
    }
    /* split j one bank row further per j in the largest run: the parts' streams start in other banks */
    rc = kb16_split_keys_skew(runs, lens, n, ctx->group, parts, row / (16u * ctx->group), split_keys, split_key_lens);
    if (!fit) { /* the work space in DDR, the heads after it at the DMA's alignment */
        fit = P8(w);
        fit_cap = kb16_stitch_scratch(ctx->group);
        if (w + fit_cap >= wend)
            return KB16_ERR_SCRATCH;
        w = dma_align_up(w + (uint32_t)fit_cap);
    }
    if (rc == KB16_OK)
        rc = kb16_split_plan_work(runs, lens, n, ctx->group, parts, (const uint8_t(*)[KB16_MAX_KEY])split_keys,
                                  split_key_lens, split_sub, P8(w), wend - w, &used, fit, fit_cap, &res);
    if (rc != KB16_OK)
        return rc;
    w = dma_align_up(w + (uint32_t)used);
    for (j = 0; j < parts; j++) {
        tq_task *t = &split_parts[j];
        uint32_t in = 0;
        memset(t, 0, sizeof *t);
        t->nruns = n;
        t->fault = job->fault; /* a test's injected unit fault applies to every part */
        for (i = 0; i < n; i++) {
            const kb16_subrun *s = &split_sub[j * n + i];
            uint32_t hb = (uint32_t)s->head_bytes, tb = (uint32_t)(s->tail_end - s->tail_begin) * 16u;
            set_input(t, i, (uint32_t)(uintptr_t)s->head, hb, job->run_addr[i] + (uint32_t)s->tail_begin * 16u, tb);
            in += hb + tb;
        }
        /* room for the merge (never longer than 2x its input plus a group) and the closing */
        t->out_addr = out_at = bank_stagger(out_at, &k, row, banks);
        t->out_buf = dma_align_up(2u * in + 16u * ctx->group + DMA_ALIGN);
        t->inv_addr = inv_at = bank_stagger(inv_at, &k, row, banks);
        t->inv_buf = dma_align_up(in / 4u + DMA_ALIGN);
        out_at += t->out_buf;
        inv_at += t->inv_buf;
    }
    if (out_at - job->out_addr > job->out_buf || inv_at - job->inv_addr > job->inv_buf)
        return KB16_ERR_OUT_OVERFLOW;
    mem_fence(); /* the D$ is write-through: the heads are in DDR for the DMAs */
    t1 = timer_now();
    st->split = (uint32_t)(t1 - t0);
    ctx->join_addr = w; /* a part's CPU fallback joins its two-segment inputs here */
    ctx->join_len = wend - w;

    tq_run(ctx, split_parts, parts);
    t1 = timer_now();
    job->unit = -1;
    if (ctx->failed) {
        job->state = TQ_FAILED;
        return KB16_ERR_ARG;
    }
    for (j = 0; j < parts; j++) {
        outs[j] = P8(split_parts[j].out_addr);
        olens[j] = split_parts[j].out_bytes;
        ocaps[j] = split_parts[j].out_buf;
        on_cpu += split_parts[j].state == TQ_DONE_CPU;
        hw = split_parts[j].hw_cycles > hw ? split_parts[j].hw_cycles : hw;
    }
    rc = kb16_stitch_inplace(outs, olens, ocaps, parts, ctx->group, fit, fit_cap, &res);
    if (rc == KB16_OK) { /* parts closed where they are: the run is their outputs in order */
        job->out_bytes = 0;
        for (j = 0; j < parts; j++) {
            split_out_seg[j][0] = split_parts[j].out_addr;
            split_out_seg[j][1] = (uint32_t)olens[j];
            job->out_bytes += (uint32_t)olens[j];
        }
        split_out_segs = parts;
    } else if (rc == KB16_ERR_OPEN_PART) { /* the general stitch, through the work area */
        size_t sc = kb16_stitch_scratch(ctx->group);
        if (w + sc >= wend)
            return KB16_ERR_SCRATCH;
        rc = kb16_stitch((const uint8_t *const *)outs, olens, parts, ctx->group, P8(w + sc), wend - w - sc, P8(w),
                         sc, &res);
        if (rc != KB16_OK)
            return rc;
        copy_words(job->out_addr, w + sc, (uint32_t)res.out_bytes);
        job->out_bytes = (uint32_t)res.out_bytes;
        st->copied = job->out_bytes;
        split_out_seg[0][0] = job->out_addr;
        split_out_seg[0][1] = job->out_bytes;
        split_out_segs = 1;
    } else {
        return rc;
    }
    job->inv_bytes = 0;
    for (j = 0; j < parts; j++) {
        split_inv_seg[j][0] = split_parts[j].inv_addr;
        split_inv_seg[j][1] = split_parts[j].inv_bytes;
        job->inv_bytes += split_parts[j].inv_bytes;
    }
    split_inv_segs = parts;
    job->hw_cycles = hw;
    job->hw_rc = CIP_OK;
    job->state = on_cpu ? TQ_DONE_CPU : TQ_DONE;
    mem_fence();
    st->stitch = (uint32_t)(timer_now() - t1);
    st->total = timer_now() - t0;
    return KB16_OK;
}

/* Do the segments (address, bytes), in order, hold exactly the len bytes at want? */
static int segs_equal(const uint32_t (*seg)[2], unsigned nseg, const uint8_t *want, uint32_t len)
{
    uint32_t at = 0;
    unsigned j;
    for (j = 0; j < nseg; at += seg[j][1], j++)
        if (seg[j][1] > len - at || kb16_first_diff(P8(seg[j][0]), want + at, seg[j][1]) >= 0)
            return 0;
    return at == len;
}

/* A split job's segments into the result block, offsets from DDR_HOST_BASE as the descriptor's. */
static void put_segs(volatile uint32_t *rs)
{
    unsigned j;
    rs[SCALE_RES_SPLIT_OUT_SEGS] = split_out_segs;
    rs[SCALE_RES_SPLIT_INV_SEGS] = split_inv_segs;
    for (j = 0; j < split_out_segs; j++) {
        rs[SCALE_RES_SPLIT_OUT_SEG + 2 * j] = split_out_seg[j][0] - DDR_HOST_BASE;
        rs[SCALE_RES_SPLIT_OUT_SEG + 2 * j + 1] = split_out_seg[j][1];
    }
    for (j = 0; j < split_inv_segs; j++) {
        rs[SCALE_RES_SPLIT_INV_SEG + 2 * j] = split_inv_seg[j][0] - DDR_HOST_BASE;
        rs[SCALE_RES_SPLIT_INV_SEG + 2 * j + 1] = split_inv_seg[j][1];
    }
}

int scale_job_run(void)
{
    volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)DDR_HOST_BASE;
    volatile uint32_t *r = d + SCALE_RESULT_OFF / 4u;
    uint32_t head[SCALE_HEAD_NWORDS];
    unsigned present, units, parts, ways, n, i, k, mismatches = 0;
    tq_ctx ctx;
    int status = SCALE_PASS;
    char buf[32];

    desc_open(d, head, SCALE_HEAD_NWORDS, r, SCALE_RES_HEAD_NWORDS, SCALE_RESULT_MAGIC);
    if (head[SCALE_HEAD_MAGIC] != SCALE_MAGIC || head[SCALE_HEAD_VERSION] != SCALE_VERSION) {
        printf("scale: no scaling descriptor at 0x%08lx (magic 0x%08lx version %lu, want 0x%08lx version %u)\n",
               (unsigned long)DDR_HOST_BASE, (unsigned long)head[SCALE_HEAD_MAGIC], (unsigned long)head[SCALE_HEAD_VERSION],
               (unsigned long)SCALE_MAGIC, SCALE_VERSION);
        r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
        return SCALE_BAD_DESC;
    }
    if (head[SCALE_HEAD_FLAGS] & ~SCALE_F_KNOWN)
        return scale_bad(r, "descriptor word 3 (flags) has unknown bits");
    if (head[SCALE_HEAD_GROUP] < KB16_MIN_GROUP || head[SCALE_HEAD_GROUP] > KB16_MAX_GROUP)
        return scale_bad(r, "descriptor word 2 (group) is outside 2..256");
    present = tq_units_present();
    if (!present)
        return scale_bad(r, "no compaction unit answers its ID");
    units = head[SCALE_HEAD_UNITS] ? head[SCALE_HEAD_UNITS] : present;
    parts = units; /* split jobs: word 4 is the number of parts; more parts than units queue */
    if ((head[SCALE_HEAD_FLAGS] & SCALE_F_SPLIT) && units > present)
        units = present;
    if (units > present) {
        printf("scale: descriptor word 4 asks for %lu units, the SoC has %u\n", (unsigned long)units, present);
        r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
        return SCALE_BAD_DESC;
    }
    ways = tq_unit_ways(0);
    n = head[SCALE_HEAD_TASKS];
    if (n < 1 || n > SCALE_MAX_TASKS) {
        printf("scale: descriptor word 5 (tasks) is %lu, the firmware takes 1..%u\n", (unsigned long)n,
               (unsigned)SCALE_MAX_TASKS);
        r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
        return SCALE_BAD_DESC;
    }
    for (i = 0; i < n; i++) {
        uint32_t w[SCALE_TASK_NWORDS];
        static const char *const names[] = {"run0", "run1", "run2", "run3", "expected output",
                                            "expected invalid addresses", "output buffer", "invalid-address buffer"};
        desc_field f[2 * TQ_MAX_WAYS];
        unsigned nf = 0;
        tq_task *t = &scale_tasks[i];
        _Static_assert(TQ_MAX_WAYS + 4 == sizeof names / sizeof names[0], "one name per buffer");
        for (k = 0; k < SCALE_TASK_NWORDS; k++)
            w[k] = d[SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + k];
        if (w[SCALE_TASK_NRUNS] < 1 || w[SCALE_TASK_NRUNS] > ways) {
            printf("scale: task %u (word %u): %lu runs, the units take 1..%u\n", i, SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i,
                   (unsigned long)w[SCALE_TASK_NRUNS], ways);
            r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
            return SCALE_BAD_DESC;
        }
        for (k = 0; k < TQ_MAX_WAYS + 4; k++) {
            unsigned word = k < TQ_MAX_WAYS ? SCALE_TASK_RUN0_OFF + 2 * k : SCALE_TASK_EXP_OUT_OFF + 2 * (k - TQ_MAX_WAYS);
            if (k < TQ_MAX_WAYS && k >= w[SCALE_TASK_NRUNS])
                continue;
            f[nf].name = names[k];
            f[nf].word = SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + word;
            f[nf].off = w[word];
            f[nf].len = w[word + 1];
            if (f[nf].len && f[nf].off < SCALE_DESC_BYTES) {
                printf("scale: task %u field %s (word %u) starts inside the descriptor (below 0x%x)\n", i,
                       f[nf].name, f[nf].word, SCALE_DESC_BYTES);
                r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
                return SCALE_BAD_DESC;
            }
            nf++;
        }
        snprintf(buf, sizeof buf, "scale: task %u", i);
        if (desc_check_fields(buf, f, nf)) {
            r[SCALE_RES_HEAD_STATUS] = SCALE_BAD_DESC;
            return SCALE_BAD_DESC;
        }
        memset(t, 0, sizeof *t);
        t->nruns = w[SCALE_TASK_NRUNS];
        t->fault = w[SCALE_TASK_FAULT];
        for (k = 0; k < t->nruns; k++) {
            t->run_addr[k] = DDR_HOST_BASE + w[SCALE_TASK_RUN0_OFF + 2 * k];
            t->run_len[k] = w[SCALE_TASK_RUN0_OFF + 2 * k + 1];
        }
        t->out_addr = DDR_HOST_BASE + w[SCALE_TASK_OUT_OFF];
        t->out_buf = w[SCALE_TASK_OUT_BUF];
        t->inv_addr = DDR_HOST_BASE + w[SCALE_TASK_INV_OFF];
        t->inv_buf = w[SCALE_TASK_INV_BUF];
    }

    memset(&ctx, 0, sizeof ctx);
    ctx.group = head[SCALE_HEAD_GROUP];
    ctx.units = units;
    ctx.use_irq = !(head[SCALE_HEAD_FLAGS] & SCALE_F_POLL);
    if (head[SCALE_HEAD_FLAGS] & SCALE_F_SPLIT) {
        split_stats st;
        int rc;
        if (n != 1)
            return scale_bad(r, "descriptor word 5 (tasks) must be 1 with the split flag (one job, split by the firmware)");
        if (head[SCALE_HEAD_WORK_LEN] && head[SCALE_HEAD_WORK_OFF] < SCALE_DESC_BYTES)
            return scale_bad(r, "descriptor word 6 (work area) starts inside the descriptor");
        uint32_t row = d[SCALE_HEAD_NWORDS + SCALE_TASK_BANK_ROW], banks = d[SCALE_HEAD_NWORDS + SCALE_TASK_BANKS];
        if (banks > 64 || (row && (row & (DMA_ALIGN - 1u))))
            return scale_bad(r, "task 0 words 18/19 (bank row bytes, banks): row a multiple of 32, at most 64 banks");
        rc = scale_split(&ctx, &scale_tasks[0], parts, DDR_HOST_BASE + head[SCALE_HEAD_WORK_OFF], head[SCALE_HEAD_WORK_LEN], row, banks,
                         &st);
        if (rc != KB16_OK) {
            printf("scale: split job failed: %s (%d)\n", kb16_err_name((unsigned)rc), rc);
            scale_tasks[0].state = TQ_FAILED;
            ctx.failed = 1;
        }
        r[SCALE_RES_HEAD_TOTAL_LO] = (uint32_t)st.total;
        r[SCALE_RES_HEAD_TOTAL_HI] = (uint32_t)(st.total >> 32);
        r[SCALE_RES_HEAD_SPLIT_CYCLES] = st.split;
        r[SCALE_RES_HEAD_STITCH_CYCLES] = st.stitch;
        r[SCALE_RES_HEAD_COPIED] = st.copied;
        put_segs(r + SCALE_RES_HEAD_NWORDS + SCALE_RES_TASK_NWORDS);
        printf("scale: split into %u parts: split %lu + units %lu + stitch %lu = %lu cycles, %lu bytes copied\n",
               parts, (unsigned long)st.split, (unsigned long)ctx.cycles, (unsigned long)st.stitch,
               (unsigned long)st.total, (unsigned long)st.copied);
    } else {
        tq_run(&ctx, scale_tasks, n);
    }

    for (i = 0; i < n; i++) {
        tq_task *t = &scale_tasks[i];
        volatile uint32_t *rt = r + SCALE_RES_HEAD_NWORDS + SCALE_RES_TASK_NWORDS * i;
        uint32_t eo = d[SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + SCALE_TASK_EXP_OUT_OFF], el = d[SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + SCALE_TASK_EXP_OUT_LEN];
        uint32_t io = d[SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + SCALE_TASK_EXP_INV_OFF], il = d[SCALE_HEAD_NWORDS + SCALE_TASK_NWORDS * i + SCALE_TASK_EXP_INV_LEN];
        int match = t->state != TQ_FAILED && t->out_bytes == el && t->inv_bytes == il &&
                    ((head[SCALE_HEAD_FLAGS] & SCALE_F_NO_CHECK) ||
                     ((head[SCALE_HEAD_FLAGS] & SCALE_F_SPLIT)
                          ? segs_equal((const uint32_t(*)[2])split_out_seg, split_out_segs, P8(DDR_HOST_BASE + eo), el) &&
                                segs_equal((const uint32_t(*)[2])split_inv_seg, split_inv_segs, P8(DDR_HOST_BASE + io), il)
                          : kb16_first_diff(P8(t->out_addr), P8(DDR_HOST_BASE + eo), el) < 0 &&
                                kb16_first_diff(P8(t->inv_addr), P8(DDR_HOST_BASE + io), il) < 0));
        if (!match)
            mismatches++;
        rt[SCALE_RES_TASK_STATE] = (uint32_t)t->state;
        rt[SCALE_RES_TASK_UNIT] = (uint32_t)t->unit;
        rt[SCALE_RES_TASK_SEQ] = t->seq;
        rt[SCALE_RES_TASK_HW_RC] = (uint32_t)t->hw_rc;
        rt[SCALE_RES_TASK_ERR_CODE] = t->err_code;
        rt[SCALE_RES_TASK_ERR_INPUT] = t->err_input;
        rt[SCALE_RES_TASK_ERR_INDEX] = t->err_index;
        rt[SCALE_RES_TASK_OUT_BYTES] = t->out_bytes;
        rt[SCALE_RES_TASK_INV_BYTES] = t->inv_bytes;
        rt[SCALE_RES_TASK_HW_CYCLES] = t->hw_cycles;
        rt[SCALE_RES_TASK_MATCH] = (uint32_t)match;
        rt[SCALE_RES_TASK_IRQ_EVENTS] = t->unit >= 0 ? ctx.irq_events[t->unit] : 0;
        printf("scale: task %u unit %d seq %u %s hw_cycles=%lu out=%lu inv=%lu %s", i, t->unit, t->seq,
               tq_state_name(t->state), (unsigned long)t->hw_cycles, (unsigned long)t->out_bytes,
               (unsigned long)t->inv_bytes, match ? "match" : "MISMATCH");
        if (t->hw_rc != CIP_OK)
            printf(" (unit error rc %d: %s code %lu input %lu entry %lu)", t->hw_rc, kb16_err_name(t->err_code),
                   (unsigned long)t->err_code, (unsigned long)t->err_input, (unsigned long)t->err_index);
        printf("\n");
    }
    if (ctx.failed)
        status = SCALE_FAILED;
    else if (mismatches)
        status = SCALE_MISMATCH;
    r[SCALE_RES_HEAD_UNITS] = units;
    r[SCALE_RES_HEAD_WAYS] = ways;
    r[SCALE_RES_HEAD_CYCLES_LO] = (uint32_t)ctx.cycles;
    r[SCALE_RES_HEAD_CYCLES_HI] = (uint32_t)(ctx.cycles >> 32);
    r[SCALE_RES_HEAD_FALLBACKS] = ctx.fallbacks;
    r[SCALE_RES_HEAD_FAILED] = ctx.failed;
    r[SCALE_RES_HEAD_MISMATCHES] = mismatches;
    r[SCALE_RES_HEAD_TASKS] = n;
    r[SCALE_RES_HEAD_IRQ] = (uint32_t)ctx.use_irq;
    r[SCALE_RES_HEAD_STATUS] = (uint32_t)status;
    printf("scale: units=%u ways=%u tasks=%u mode=%s cycles=%lu fallbacks=%u failed=%u mismatches=%u %s\n", units,
           ways, n, ctx.use_irq ? "irq" : "poll", (unsigned long)ctx.cycles, ctx.fallbacks, ctx.failed, mismatches,
           status == SCALE_PASS ? "PASS" : "FAIL");
    return status;
}

/* ---- console: run N [overlap%] [G] [R] [U] ----------------------------------------------------- */

static tq_runs run_jobs[UNITS_MAX];
static tq_task run_finals[UNITS_MAX];

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Job j's result against the C merge of its runs: the merged run byte for byte; the invalid
 * addresses as a set when the job was cascaded (each step lists its own, as in cascading compaction), else in order. */
static int check_job(unsigned j, unsigned group, int cascaded)
{
    const uint8_t *runs[KB16_MAX_RUNS];
    size_t lens[KB16_MAX_RUNS];
    kb16_merge_result ref;
    const tq_task *t = &run_finals[j];
    uint32_t *got = (uint32_t *)(uintptr_t)SCALE_SORT, *want = (uint32_t *)(uintptr_t)SCALE_REF_INV;
    unsigned k;

    for (k = 0; k < run_jobs[j].n; k++) {
        runs[k] = P8(run_jobs[j].run_addr[k]);
        lens[k] = run_jobs[j].run_len[k];
    }
    kb16_merge_n(runs, lens, run_jobs[j].n, group, P8(SCALE_REF_OUT), SCALE_OUT_CAP, want, SCALE_INV_CAP / 4u, &ref);
    if (ref.status != KB16_OK) {
        printf("run: job %u: the C merge failed: %s\n", j, kb16_err_name(ref.status));
        return -1;
    }
    if (t->out_bytes != ref.out_bytes || t->inv_bytes != ref.inv_count * 4u) {
        printf("run: job %u: %lu output / %lu invalid bytes, the C merge %lu / %lu\n", j, (unsigned long)t->out_bytes,
               (unsigned long)t->inv_bytes, (unsigned long)ref.out_bytes, (unsigned long)ref.inv_count * 4u);
        return -1;
    }
    if (kb16_first_diff(P8(t->out_addr), P8(SCALE_REF_OUT), ref.out_bytes) >= 0) {
        printf("run: job %u: merged run differs from the C merge at byte %ld\n", j,
               kb16_first_diff(P8(t->out_addr), P8(SCALE_REF_OUT), ref.out_bytes));
        return -1;
    }
    memcpy(got, P8(t->inv_addr), t->inv_bytes);
    if (cascaded) {
        qsort(got, ref.inv_count, 4, cmp_u32);
        qsort(want, ref.inv_count, 4, cmp_u32);
    }
    if (memcmp(got, want, t->inv_bytes)) {
        printf("run: job %u: invalid addresses differ from the C merge's\n", j);
        return -1;
    }
    return 0;
}

int scale_run_console(unsigned entries, unsigned overlap, unsigned group, unsigned nruns, unsigned units)
{
    unsigned present = tq_units_present(), ways, j, k, bad = 0;
    uint32_t run_at = SCALE_RUNS, per_run;
    tq_ctx ctx;

    if (!present) {
        printf("run: no compaction unit answers its ID\n");
        return -1;
    }
    if (units < 1 || units > present) {
        printf("run: U (units) must be 1..%u (units in this SoC)\n", present);
        return -1;
    }
    if (nruns < 2 || nruns > KB16_MAX_RUNS) {
        printf("run: R (runs) must be 2..%u\n", KB16_MAX_RUNS);
        return -1;
    }
    per_run = entries / (units * nruns);
    if (per_run < 1) {
        printf("run: N (entries) %u is fewer than one per run (%u runs on %u units)\n", entries, nruns, units);
        return -1;
    }
    ways = tq_unit_ways(0);
    for (j = 0; j < units; j++) {
        run_jobs[j].n = nruns;
        /* runs two at a time from the Table III generator (a seed per pair), newest first */
        for (k = 0; k < nruns; k += 2) {
            kb16_gen_params gp;
            kb16_key_slot *scratch;
            size_t cap, len0 = 0, len1 = 0;
            int rc;
            memset(&gp, 0, sizeof gp);
            gp.kind = KB16_KIND_SHORT;
            gp.seed = 0x5CA1E000u ^ (j << 8) ^ k ^ entries;
            gp.n0 = per_run;
            gp.n1 = k + 1 < nruns ? per_run : 0;
            gp.overlap_pct = overlap;
            gp.group = group;
            gp.addr0_base = 0x01000000u * (k + 1) + 0x00100000u * j;
            gp.addr1_base = 0x01000000u * (k + 2) + 0x00100000u * j;
            scratch = bench_scratch(kb16_gen_scratch_slots(&gp), &cap);
            rc = kb16_gen_runs(&gp, scratch, cap, P8(SCALE_STAGE0), SCALE_STAGE_CAP, &len0, P8(SCALE_STAGE1),
                               SCALE_STAGE_CAP, &len1);
            if (rc != KB16_OK) {
                printf("run: workload generation failed: %s\n", kb16_err_name((unsigned)rc));
                return -1;
            }
            if (run_at + len0 + len1 + 2 * DMA_ALIGN > SCALE_RUNS + SCALE_RUNS_CAP) {
                printf("run: the runs do not fit their %lu MiB in DDR\n", (unsigned long)(SCALE_RUNS_CAP >> 20));
                return -1;
            }
            memcpy(P8(run_at), P8(SCALE_STAGE0), len0);
            run_jobs[j].run_addr[k] = run_at;
            run_jobs[j].run_len[k] = (uint32_t)len0;
            run_at += dma_align_up((uint32_t)len0 + DMA_ALIGN);
            if (k + 1 < nruns) {
                memcpy(P8(run_at), P8(SCALE_STAGE1), len1);
                run_jobs[j].run_addr[k + 1] = run_at;
                run_jobs[j].run_len[k + 1] = (uint32_t)len1;
                run_at += dma_align_up((uint32_t)len1 + DMA_ALIGN);
            }
        }
        memset(&run_finals[j], 0, sizeof run_finals[j]);
        run_finals[j].out_addr = SCALE_OUT + j * SCALE_OUT_CAP;
        run_finals[j].out_buf = SCALE_OUT_CAP;
        run_finals[j].inv_addr = SCALE_INV + j * SCALE_INV_CAP;
        run_finals[j].inv_buf = SCALE_INV_CAP;
    }
    mem_fence();

    memset(&ctx, 0, sizeof ctx);
    ctx.group = group;
    ctx.units = units;
    ctx.use_irq = app_use_irq;
    if (nruns <= ways) {
        for (j = 0; j < units; j++) {
            run_finals[j].nruns = nruns;
            for (k = 0; k < nruns; k++) {
                run_finals[j].run_addr[k] = run_jobs[j].run_addr[k];
                run_finals[j].run_len[k] = run_jobs[j].run_len[k];
            }
        }
        tq_run(&ctx, run_finals, units);
    } else {
        tq_cascade(&ctx, run_jobs, run_finals, units, ways, SCALE_TMP, SCALE_TMP_CAP);
    }

    for (j = 0; j < units; j++) {
        const tq_task *t = &run_finals[j];
        int ok = (t->state == TQ_DONE || t->state == TQ_DONE_CPU) && !check_job(j, group, nruns > ways);
        printf("run: job %u: unit %d, %s, hw_cycles=%lu, %lu bytes out, %lu invalid, %s\n", j, t->unit,
               tq_state_name(t->state), (unsigned long)t->hw_cycles, (unsigned long)t->out_bytes,
               (unsigned long)t->inv_bytes / 4u, ok ? "PASS" : "FAIL");
        if (!ok)
            bad++;
    }
    printf("run: %u entries in %u runs x %u units (K=%u, %s, %s): cycles=%lu fallbacks=%u failed=%u %s\n",
           (unsigned)(per_run * nruns * units), nruns, units, ways, nruns > ways ? "cascaded" : "one merge per unit",
           ctx.use_irq ? "irq" : "poll", (unsigned long)ctx.cycles, ctx.fallbacks, ctx.failed, bad ? "FAIL" : "PASS");
    return bad ? -1 : 0;
}
