#include "taskq.h"

#include <string.h>

#include "csr.h"
#include "irq.h"
#include "kb16.h"
#include "mmio.h"
#include "regs.h"
#include "soc.h"
#include "timer.h"

#define BIT(n) (1u << (n))
#define ST_BUSY BIT(CIP_STATUS_BUSY_SHIFT)
#define ST_DONE BIT(CIP_STATUS_DONE_SHIFT)
#define ST_ERROR BIT(CIP_STATUS_ERROR_SHIFT)
/* After a unit error or timeout its channels get this long to settle once aborted. */
#define GRACE_CYCLES 20000u
/* Status polls between two looks at the timer (a timer read is a bus access too). */
#define POLLS_PER_TIMER_CHECK 16u

_Static_assert(TQ_MAX_WAYS <= CIP_MAX_INPUTS, "a task has no more inputs than a unit has IN<k>_BYTES");

unsigned tq_units_present(void)
{
    unsigned u;
    for (u = 0; u < UNITS_MAX; u++)
        if (cip_unit_check_id(&cip_units[u], 0) != 0)
            break;
    return u;
}

unsigned tq_unit_ways(unsigned u)
{
    unsigned w = cip_unit_ways(&cip_units[u]);
    return w <= TQ_MAX_WAYS ? w : 2u;
}

const char *tq_state_name(int state)
{
    switch (state) {
    case TQ_PENDING: return "pending";
    case TQ_RUNNING: return "running";
    case TQ_DONE: return "done";
    case TQ_DONE_CPU: return "done on CPU (fallback)";
    case TQ_FAILED: return "FAILED";
    default: return "?";
    }
}

/* ---- one unit ---------------------------------------------------------------------------------- */

typedef struct {
    const cip_unit *hw;
    tq_task *task;     /* running task, or 0 when the unit is free */
    unsigned mask;     /* its DMA channels */
    unsigned ways;
    uint64_t deadline;
} unit_state;

static uint32_t task_in_bytes(const tq_task *t)
{
    uint32_t b = 0;
    unsigned k;
    for (k = 0; k < t->nruns; k++)
        b += t->run_len[k] + t->run_len2[k];
    return b;
}

/* Channels whose LEN2 this driver left non-zero, per unit: only they are written back to 0, so a task
 * without second segments programs exactly the registers it always did. */
static uint32_t seg2_set[UNITS_MAX];

/* Program the unit with task t (the Fig 9 flow's init: job registers, interrupt enables, DMA
 * channels); unit_kick() starts it. */
static void unit_prepare(tq_ctx *ctx, unsigned u, unit_state *us, tq_task *t)
{
    const cip_unit *hw = us->hw;
    unsigned k, mask = BIT(DMA_CH_OUT) | BIT(DMA_CH_INV);
    uint32_t lens[TQ_MAX_WAYS];

    t->state = TQ_RUNNING;
    t->unit = (int)u;
    t->hw_rc = CIP_OK;
    if (cip_unit_read(hw, CIP_STATUS) & (ST_ERROR | ST_BUSY))
        cip_unit_reset(hw);
    for (k = 0; k < t->nruns; k++)
        lens[k] = t->run_len[k] + t->run_len2[k];
    cip_unit_program(hw, t->fault == TQ_FAULT_BAD_GROUP ? 1u : ctx->group, lens, t->nruns, us->ways,
                     t->out_buf, t->inv_buf, ctx->use_irq);
    dma_set_prepare(hw->dma, DMA_CH_OUT, t->out_addr, t->out_buf);
    dma_set_prepare(hw->dma, DMA_CH_INV, t->inv_addr, t->inv_buf);
    /* An empty run needs no beat (the IP goes by the declared length): its reader stays idle. */
    for (k = 0; k < t->nruns; k++) {
        unsigned ch = dma_reader_channel(k);
        if (!lens[k])
            continue;
        dma_set_prepare(hw->dma, ch, t->run_addr[k], t->run_len[k]);
        if (t->run_len2[k] || (seg2_set[u] & BIT(ch))) {
            dma_set_segment2(hw->dma, ch, t->run_addr2[k], t->run_len2[k]);
            seg2_set[u] = t->run_len2[k] ? seg2_set[u] | BIT(ch) : seg2_set[u] & ~BIT(ch);
        }
        mask |= BIT(ch);
    }
    us->mask = mask;
    us->task = t;
    mem_fence();
}

/* Start the prepared task: its DMA channels with one write, then the IP. */
static void unit_kick(tq_ctx *ctx, unit_state *us)
{
    us->deadline = timer_deadline(ctx->timeout_cycles ? ctx->timeout_cycles : cip_default_timeout(task_in_bytes(us->task)));
    cip_unit_start(us->hw, us->mask);
}

/* The C merge of task t (the CPU fallback); inputs of two segments are joined at ctx->join_addr first. */
static void cpu_merge(const tq_ctx *ctx, tq_task *t)
{
    const uint8_t *runs[TQ_MAX_WAYS];
    size_t lens[TQ_MAX_WAYS];
    kb16_merge_result res;
    unsigned k, group = ctx->group;
    uint32_t at = ctx->join_addr;

    for (k = 0; k < t->nruns; k++) {
        runs[k] = (const uint8_t *)(uintptr_t)t->run_addr[k];
        lens[k] = t->run_len[k];
        if (t->run_len2[k]) {
            uint8_t *j = (uint8_t *)(uintptr_t)at;
            lens[k] += t->run_len2[k];
            if (at + lens[k] > ctx->join_addr + ctx->join_len) {
                t->sw_status = KB16_ERR_SCRATCH;
                t->state = TQ_FAILED;
                return;
            }
            memcpy(j, runs[k], t->run_len[k]);
            memcpy(j + t->run_len[k], (const uint8_t *)(uintptr_t)t->run_addr2[k], t->run_len2[k]);
            runs[k] = j;
            at += (uint32_t)lens[k];
        }
    }
    kb16_merge_n(runs, lens, t->nruns, group, (uint8_t *)(uintptr_t)t->out_addr, t->out_buf,
                 (uint32_t *)(uintptr_t)t->inv_addr, t->inv_buf / 4u, &res);
    t->sw_status = res.status;
    if (res.status == KB16_OK) {
        t->out_bytes = (uint32_t)res.out_bytes;
        t->inv_bytes = (uint32_t)res.inv_count * 4u;
        t->state = TQ_DONE_CPU;
    } else {
        t->state = TQ_FAILED;
    }
    mem_fence(); /* the D$ is write-through: the result is in DDR for the next DMA */
}

/* Has the unit's task ended? 0: not yet. Otherwise finishes the task (fallback included) and frees the
 * unit. `timer_check`: also look at the deadline. */
static int unit_poll(tq_ctx *ctx, unit_state *us, int timer_check)
{
    const cip_unit *hw = us->hw;
    tq_task *t = us->task;
    uint32_t ds, st = 0;
    int rc = CIP_OK, ended = 0;
    unsigned ch;

    if (!ctx->use_irq || *hw->events || timer_check) {
        ds = dma_set_all_status(hw->dma);
        if (DMA_ALL_ERROR_ANY(ds) & us->mask) {
            rc = CIP_E_DMA;
            ended = 1;
        } else if (!ctx->use_irq || *hw->events) {
            st = cip_unit_read(hw, CIP_STATUS);
            if ((st & (ST_DONE | ST_ERROR)) && !(DMA_ALL_BUSY_ANY(ds) & us->mask)) {
                rc = (st & ST_ERROR) ? CIP_E_IP : CIP_OK;
                ended = 1;
            }
        }
    }
    if (!ended && timer_check && timer_expired(us->deadline)) {
        rc = CIP_E_TIMEOUT;
        ended = 1;
    }
    if (!ended)
        return 0;

    st = cip_unit_read(hw, CIP_STATUS);
    t->hw_rc = rc;
    t->hw_status = st;
    t->err_code = (st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT;
    t->err_input = (st & CIP_STATUS_ERR_INPUT_MASK) >> CIP_STATUS_ERR_INPUT_SHIFT;
    t->err_index = (st & ST_ERROR) ? cip_unit_read(hw, CIP_ERR_INDEX) : 0;
    t->hw_cycles = cip_unit_read(hw, CIP_HW_CYCLES);
    cip_unit_write(hw, CIP_IRQ_ENABLE, 0);
    if (rc == CIP_OK) {
        dma_status s;
        dma_set_read_status(hw->dma, DMA_CH_OUT, &s);
        t->out_bytes = s.bytes;
        dma_set_read_status(hw->dma, DMA_CH_INV, &s);
        t->inv_bytes = s.bytes;
        t->state = TQ_DONE;
    } else {
        /* The unit failed: stop what still runs, reset it, finish the task on the CPU. */
        uint64_t end;
        for (ch = 0; ch < DMA_MAX_CHANNELS; ch++)
            if ((us->mask & BIT(ch)) && (DMA_ALL_BUSY_ANY(dma_set_all_status(hw->dma)) & BIT(ch)))
                dma_set_abort(hw->dma, ch);
        end = timer_deadline(GRACE_CYCLES);
        while ((DMA_ALL_BUSY_ANY(dma_set_all_status(hw->dma)) & us->mask) && !timer_expired(end))
            ;
        cip_unit_reset(hw);
        dcache_invalidate();
        cpu_merge(ctx, t);
        if (t->state == TQ_DONE_CPU)
            ctx->fallbacks++;
    }
    us->task = 0;
    return 1;
}

unsigned tq_run(tq_ctx *ctx, tq_task *tasks, unsigned n)
{
    unit_state us[UNITS_MAX];
    unsigned u, i, next = 0, running = 0, rr = 0, seq = 0, polls = 0;
    unsigned units = ctx->units;
    int started = 0;
    uint64_t t0 = 0;

    if (units < 1)
        units = 1;
    if (units > UNITS_MAX)
        units = UNITS_MAX;
    ctx->fallbacks = ctx->failed = 0;
    for (u = 0; u < UNITS_MAX; u++) {
        ctx->dispatched[u] = 0;
        ctx->irq_events[u] = 0;
    }
    for (i = 0; i < n; i++) {
        tasks[i].state = TQ_PENDING;
        tasks[i].unit = -1;
        tasks[i].hw_rc = CIP_OK;
        tasks[i].sw_status = KB16_OK;
        tasks[i].out_bytes = tasks[i].inv_bytes = tasks[i].hw_cycles = 0;
        tasks[i].hw_status = tasks[i].err_code = tasks[i].err_input = tasks[i].err_index = 0;
    }
    for (u = 0; u < units; u++) {
        us[u].hw = &cip_units[u];
        us[u].task = 0;
        us[u].ways = tq_unit_ways(u);
        if (ctx->use_irq)
            irq_attach(us[u].hw->irq, cip_unit_irq, (void *)us[u].hw);
    }
    /* A task with more runs than its unit has inputs cannot run there: the caller cascades. */
    for (i = 0; i < n; i++)
        if (tasks[i].nruns < 1 || tasks[i].nruns > us[0].ways) {
            tasks[i].state = TQ_FAILED;
            tasks[i].hw_rc = CIP_E_ARG;
        }

    dcache_invalidate();
    mem_fence();
    /* The first task of every unit is programmed before the bracket (as cip_run's tight bracket
     * programs the DMA first); inside it they are only started, one after the other. */
    for (;;) {
        for (;;) {
            /* dispatch: pending tasks in queue order, each to the next free unit in round-robin order */
            while (next < n && tasks[next].state != TQ_PENDING)
                next++;
            if (next >= n || running >= units)
                break;
            for (i = 0; i < units; i++) {
                u = (rr + i) % units;
                if (!us[u].task)
                    break;
            }
            tasks[next].seq = seq++;
            ctx->dispatched[u]++;
            unit_prepare(ctx, u, &us[u], &tasks[next]);
            if (started)
                unit_kick(ctx, &us[u]);
            rr = (u + 1) % units;
            running++;
            next++;
        }
        if (!started) {
            started = 1;
            t0 = timer_now();
            for (u = 0; u < units; u++)
                if (us[u].task)
                    unit_kick(ctx, &us[u]);
        }
        if (!running)
            break;
        /* completion: interrupt events (or STATUS) of every busy unit */
        {
            int timer_check = ++polls % POLLS_PER_TIMER_CHECK == 0;
            for (u = 0; u < units; u++)
                if (us[u].task && unit_poll(ctx, &us[u], timer_check))
                    running--;
        }
    }
    ctx->cycles = timer_now() - t0;

    for (u = 0; u < units; u++) {
        ctx->irq_events[u] = *us[u].hw->events;
        if (ctx->use_irq)
            irq_attach(us[u].hw->irq, 0, 0);
    }
    if (ctx->use_irq)
        irq_attach(IRQ_CIP, cip_irq_handler, 0); /* unit 0's line back to the one-unit driver */
    dcache_invalidate(); /* the CPU reads what the DMAs wrote */
    for (i = 0; i < n; i++)
        if (tasks[i].state == TQ_FAILED)
            ctx->failed++;
    return ctx->failed;
}

/* ---- cascading --------------------------------------------------------------------------------- */

unsigned tq_cascade(tq_ctx *ctx, const tq_runs *jobs, tq_task *finals, unsigned njobs, unsigned ways,
                    uint32_t scratch, uint32_t scratch_cap)
{
    static tq_runs cur[UNITS_MAX * 2];
    static tq_task steps[UNITS_MAX * 2];
    static int step_job[UNITS_MAX * 2];
    /* A step's invalid addresses go to the next 32-byte aligned place of the job's buffer (the DMA
     * needs aligned addresses); the pieces are moved together at the end. */
    uint32_t inv_used[UNITS_MAX * 2], scratch_used[UNITS_MAX * 2], hw_cycles[UNITS_MAX * 2];
    static uint32_t piece_off[UNITS_MAX * 2][KB16_MAX_RUNS], piece_len[UNITS_MAX * 2][KB16_MAX_RUNS];
    unsigned pieces[UNITS_MAX * 2];
    uint32_t share;
    unsigned j, k, failed = 0, fallbacks = 0, dispatched[UNITS_MAX] = {0};
    uint64_t cycles = 0;

    if (njobs > UNITS_MAX * 2 || ways < 2 || ways > TQ_MAX_WAYS) {
        for (j = 0; j < njobs; j++)
            finals[j].state = TQ_FAILED;
        return njobs;
    }
    share = (scratch_cap / (njobs ? njobs : 1u)) & ~(DMA_ALIGN - 1u);
    for (j = 0; j < njobs; j++) {
        cur[j] = jobs[j];
        inv_used[j] = scratch_used[j] = hw_cycles[j] = pieces[j] = 0;
        finals[j].state = TQ_PENDING;
    }
    for (;;) {
        unsigned ns = 0;
        /* one step of every job that still has more runs than ways */
        for (j = 0; j < njobs; j++) {
            tq_runs *r = &cur[j];
            unsigned m, start = 0, i;
            uint32_t best = 0, sum;
            if (r->n <= ways || finals[j].state == TQ_FAILED)
                continue;
            m = ways < r->n - ways + 1 ? ways : r->n - ways + 1;
            for (i = 0; i + m <= r->n; i++) {
                for (sum = 0, k = 0; k < m; k++)
                    sum += r->run_len[i + k];
                if (i == 0 || sum < best)
                    best = sum, start = i;
            }
            memset(&steps[ns], 0, sizeof steps[ns]);
            steps[ns].nruns = m;
            for (k = 0; k < m; k++) {
                steps[ns].run_addr[k] = r->run_addr[start + k];
                steps[ns].run_len[k] = r->run_len[start + k];
            }
            steps[ns].out_addr = scratch + share * j + scratch_used[j];
            steps[ns].out_buf = dma_align_up(best + DMA_ALIGN);
            steps[ns].inv_addr = finals[j].inv_addr + inv_used[j];
            steps[ns].inv_buf = finals[j].inv_buf > inv_used[j] ? finals[j].inv_buf - inv_used[j] : 0;
            if (scratch_used[j] + steps[ns].out_buf > share) {
                finals[j].state = TQ_FAILED;
                finals[j].hw_rc = CIP_E_ARG;
                failed++;
                continue;
            }
            /* the window becomes one run in place (its address once the step ran) */
            r->run_addr[start] = steps[ns].out_addr;
            r->run_len[start] = 0; /* set below */
            for (i = start + 1; i + m - 1 < r->n; i++) {
                r->run_addr[i] = r->run_addr[i + m - 1];
                r->run_len[i] = r->run_len[i + m - 1];
            }
            r->n -= m - 1;
            scratch_used[j] += steps[ns].out_buf;
            step_job[ns] = (int)j;
            steps[ns].seq = start; /* where the merged run goes (tq_run overwrites seq: keep a copy) */
            ns++;
        }
        if (!ns)
            break;
        {
            unsigned where[UNITS_MAX * 2], s;
            for (s = 0; s < ns; s++)
                where[s] = steps[s].seq;
            tq_run(ctx, steps, ns);
            cycles += ctx->cycles;
            fallbacks += ctx->fallbacks;
            for (k = 0; k < UNITS_MAX; k++)
                dispatched[k] += ctx->dispatched[k];
            for (s = 0; s < ns; s++) {
                j = (unsigned)step_job[s];
                if (steps[s].state == TQ_FAILED) {
                    finals[j] = steps[s];
                    failed++;
                    continue;
                }
                cur[j].run_len[where[s]] = steps[s].out_bytes;
                piece_off[j][pieces[j]] = inv_used[j];
                piece_len[j][pieces[j]++] = steps[s].inv_bytes;
                inv_used[j] += dma_align_up(steps[s].inv_bytes);
                hw_cycles[j] += steps[s].hw_cycles;
            }
        }
    }
    /* the final merges, side by side */
    {
        static tq_task fin[UNITS_MAX * 2];
        unsigned fidx[UNITS_MAX * 2], nf = 0;
        for (j = 0; j < njobs; j++) {
            if (finals[j].state == TQ_FAILED)
                continue;
            fin[nf] = finals[j];
            fin[nf].nruns = cur[j].n;
            for (k = 0; k < cur[j].n; k++) {
                fin[nf].run_addr[k] = cur[j].run_addr[k];
                fin[nf].run_len[k] = cur[j].run_len[k];
                fin[nf].run_len2[k] = 0;
            }
            fin[nf].inv_addr = finals[j].inv_addr + inv_used[j];
            fin[nf].inv_buf = finals[j].inv_buf > inv_used[j] ? finals[j].inv_buf - inv_used[j] : 0;
            fidx[nf++] = j;
        }
        if (nf) {
            tq_run(ctx, fin, nf);
            cycles += ctx->cycles;
            fallbacks += ctx->fallbacks;
            for (k = 0; k < UNITS_MAX; k++)
                dispatched[k] += ctx->dispatched[k];
        }
        for (k = 0; k < nf; k++) {
            tq_task keep = finals[fidx[k]];
            j = fidx[k];
            finals[j] = fin[k];
            finals[j].inv_addr = keep.inv_addr;
            finals[j].inv_buf = keep.inv_buf;
            if (finals[j].state != TQ_FAILED) {
                /* the pieces (steps, then the final merge) one after the other */
                uint32_t at = 0, p;
                piece_off[j][pieces[j]] = inv_used[j];
                piece_len[j][pieces[j]++] = finals[j].inv_bytes;
                for (p = 0; p < pieces[j]; p++) {
                    memmove((uint8_t *)(uintptr_t)(keep.inv_addr + at),
                            (const uint8_t *)(uintptr_t)(keep.inv_addr + piece_off[j][p]), piece_len[j][p]);
                    at += piece_len[j][p];
                }
                finals[j].inv_bytes = at;
                mem_fence();
            }
            finals[j].hw_cycles += hw_cycles[j];
            if (finals[j].state == TQ_FAILED)
                failed++;
        }
    }
    ctx->cycles = cycles;
    ctx->fallbacks = fallbacks;
    ctx->failed = failed;
    for (k = 0; k < UNITS_MAX; k++)
        ctx->dispatched[k] = dispatched[k];
    return failed;
}
