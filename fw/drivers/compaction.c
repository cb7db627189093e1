#include "compaction.h"

#include <stdio.h>
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
#define IRQ_BITS (BIT(CIP_IRQ_STATUS_DONE_SHIFT) | BIT(CIP_IRQ_STATUS_ERROR_SHIFT))

/* After an IP error the writers get no more data; this long they may still finish on their own. */
#define WRITER_GRACE_CYCLES 20000u

/* Unit 0's events stay a variable of their own: a word in the small-data area is one gp-relative load
 * in the one-unit driver's wait loops, an array element would take an address computation more. */
volatile uint32_t cip_irq_events;
static volatile uint32_t unit_events[UNITS_MAX];
volatile uint32_t cip_irq_last_status;

_Static_assert(UNITS_MAX == 8, "cip_units lists 8 unit slots");
#define UNIT(u, ev) {CIP_UNIT_BASE(u), &dma_sets[u], IRQ_CIP_UNIT(u), ev}
const cip_unit cip_units[UNITS_MAX] = {
    UNIT(0, &cip_irq_events), UNIT(1, &unit_events[1]), UNIT(2, &unit_events[2]), UNIT(3, &unit_events[3]),
    UNIT(4, &unit_events[4]), UNIT(5, &unit_events[5]), UNIT(6, &unit_events[6]), UNIT(7, &unit_events[7]),
};
#undef UNIT

uint32_t cip_read(uint32_t off) { return mmio_read32(CIP_BASE + off); }
void cip_write(uint32_t off, uint32_t value) { mmio_write32(CIP_BASE + off, value); }

int cip_unit_check_id(const cip_unit *u, uint32_t *version)
{
    uint32_t id = cip_unit_read(u, CIP_ID), v = cip_unit_read(u, CIP_VERSION);
    if (version)
        *version = v;
    if (id != CIP_ID_MAGIC)
        return -1;
    return (v & 0xFFFFu) == CIP_IP_VERSION ? 0 : -2;
}

int cip_check_id(uint32_t *version) { return cip_unit_check_id(&cip_units[0], version); }

int cip_unit_reset(const cip_unit *u)
{
    uint64_t end;
    cip_unit_write(u, CIP_CTRL, BIT(CIP_CTRL_SOFT_RESET_SHIFT));
    end = timer_deadline(10000);
    while (cip_unit_read(u, CIP_STATUS) & (ST_BUSY | ST_ERROR))
        if (timer_expired(end))
            return CIP_E_TIMEOUT;
    return CIP_OK;
}

/* Unit 0's own copy, not a call of cip_unit_reset: cip_run inlines it, and through the handle GCC placed
 * cip_run's blocks differently, which moved Table III's 32-bit IP cycles by 7-10 (fw/link.ld). */
int cip_soft_reset(void)
{
    uint64_t end;
    cip_write(CIP_CTRL, BIT(CIP_CTRL_SOFT_RESET_SHIFT));
    end = timer_deadline(10000);
    while (cip_read(CIP_STATUS) & (ST_BUSY | ST_ERROR))
        if (timer_expired(end))
            return CIP_E_TIMEOUT;
    return CIP_OK;
}

unsigned cip_unit_ways(const cip_unit *u)
{
    uint32_t w = cip_unit_read(u, CIP_WAYS); /* a two-way IP has no WAYS register: reads 0 */
    return w >= 2 && w <= CIP_MAX_INPUTS ? (unsigned)w : 2u;
}

_Static_assert(CIP_MAX_INPUTS == 4, "in_bytes_reg lists IN0..IN3_BYTES");
static const uint32_t in_bytes_reg[CIP_MAX_INPUTS] = {CIP_IN0_BYTES, CIP_IN1_BYTES, CIP_IN2_BYTES, CIP_IN3_BYTES};

void cip_unit_program(const cip_unit *u, unsigned group, const uint32_t *in_bytes, unsigned n, unsigned ways,
                      uint32_t out_capacity, uint32_t inv_capacity, int use_irq)
{
    unsigned k;
    cip_unit_write(u, CIP_GROUP, group);
    for (k = 0; k < ways && k < CIP_MAX_INPUTS; k++)
        cip_unit_write(u, in_bytes_reg[k], k < n ? in_bytes[k] : 0u);
    cip_unit_write(u, CIP_OUT_CAPACITY, out_capacity);
    cip_unit_write(u, CIP_INV_CAPACITY, inv_capacity);
    cip_unit_write(u, CIP_IRQ_STATUS, IRQ_BITS);
    *u->events = 0;
    cip_unit_write(u, CIP_IRQ_ENABLE, use_irq ? IRQ_BITS : 0);
}

void cip_unit_irq(void *ctx)
{
    const cip_unit *u = ctx;
    uint32_t pending = cip_unit_read(u, CIP_IRQ_STATUS);
    cip_unit_write(u, CIP_IRQ_STATUS, pending); /* W1C: drops the level interrupt */
    if (pending & IRQ_BITS)
        (*u->events)++;
}

void cip_counters_clear(void)
{
    cip_write(CIP_ENCODER_DATA_OUT_CNT, 0);
    cip_write(CIP_INVALID_ADDR_OUT_CNT, 0);
    cip_write(CIP_KEY0_ENTRY_IN_CNT, 0);
    cip_write(CIP_KEY1_ENTRY_IN_CNT, 0);
}

void cip_counters_read(cip_counters *c)
{
    c->enc_words = cip_read(CIP_ENCODER_DATA_OUT_CNT);
    c->inv_addrs = cip_read(CIP_INVALID_ADDR_OUT_CNT);
    c->key0_words = cip_read(CIP_KEY0_ENTRY_IN_CNT);
    c->key1_words = cip_read(CIP_KEY1_ENTRY_IN_CNT);
    c->throughput = cip_read(CIP_THROUGHPUT_COUNTER);
    c->hw_cycles = cip_read(CIP_HW_CYCLES);
    c->out_keys = cip_read(CIP_OUT_KEYS);
}

uint64_t cip_default_timeout(uint32_t bytes_in)
{
    /* Far above the expected ~1 cycle per input byte, still seconds at most in simulation. */
    return 200000u + 64u * (uint64_t)bytes_in;
}

void cip_irq_handler(void *ctx)
{
    uint32_t pending = cip_read(CIP_IRQ_STATUS);
    (void)ctx;
    cip_irq_last_status = cip_read(CIP_STATUS);
    cip_write(CIP_IRQ_STATUS, pending); /* W1C: drops the level interrupt */
    if (pending & IRQ_BITS)
        cip_irq_events++;
}

static unsigned lowest_bit(unsigned v)
{
    unsigned n = 0;
    while (v && !(v & 1u))
        v >>= 1, n++;
    return n;
}

static void take_error(cip_result *res, uint32_t st)
{
    res->status = st;
    res->err_code = (st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT;
    res->err_input = (st >> CIP_STATUS_ERR_INPUT_SHIFT) & 1u;
    res->err_index = (st & ST_ERROR) ? cip_read(CIP_ERR_INDEX) : 0;
}

/* Polls between two looks at the timer: it is a bus access too, and the bracket around a job should
 * hold as few of them as possible (a timeout is still seen within 16 polls). */
#define POLLS_PER_TIMER_CHECK 16u

/* Wait for DONE/ERROR of the IP alone (no DMA: e.g. an IP error expected before any data). */
static int wait_ip(int use_irq, uint64_t timeout_cycles, cip_result *res)
{
    uint64_t end = timer_deadline(timeout_cycles);
    uint32_t st = 0;
    unsigned polls = 0;

    for (;;) {
        /* In IRQ mode the handler counts the event; STATUS is read once it fired. */
        if (!use_irq || cip_irq_events) {
            st = cip_read(CIP_STATUS);
            if (st & (ST_DONE | ST_ERROR))
                break;
        }
        if (++polls % POLLS_PER_TIMER_CHECK == 0 && timer_expired(end)) {
            st = cip_read(CIP_STATUS);
            take_error(res, st);
            res->timeout_what = CIP_WAIT_IP;
            /* Finished without its interrupt is still a failure of the interrupt path. */
            if ((st & (ST_DONE | ST_ERROR)) && !(use_irq && !cip_irq_events))
                break;
            return CIP_E_TIMEOUT;
        }
    }
    take_error(res, st);
    res->timeout_what = CIP_WAIT_NONE;
    return (st & ST_ERROR) ? CIP_E_IP : CIP_OK;
}

/* Wait for a whole job: the writers end at the IP's last beat or when it is done or stopped, the
 * readers once the IP took (or, after an error, discarded) their data, so "no channel of `dma_mask`
 * busy" means the job is over and its data is in DDR. One register read per poll watches both the
 * busy and the error bits (a failed channel means the IP may never finish: the wait ends at once).
 * In interrupt mode the IP's interrupt comes first, then the same check. */
static int wait_job(int use_irq, uint64_t timeout_cycles, unsigned dma_mask, cip_result *res)
{
    uint64_t end = timer_deadline(timeout_cycles);
    uint32_t st, ds = 0;
    unsigned polls = 0;

    for (;;) {
        int ip_seen = !use_irq || cip_irq_events;
        int slow_check = ++polls % POLLS_PER_TIMER_CHECK == 0;
        if (ip_seen || slow_check) {
            ds = dma_all_status();
            if (DMA_ALL_ERROR(ds) & dma_mask) {
                take_error(res, cip_read(CIP_STATUS));
                return CIP_E_DMA;
            }
            if (ip_seen && !(DMA_ALL_BUSY(ds) & dma_mask))
                break;
        }
        if (slow_check && timer_expired(end)) {
            st = cip_read(CIP_STATUS);
            take_error(res, st);
            /* The IP not finished, or finished without its interrupt (a failure of the interrupt
             * path), is a wait for the IP; otherwise for the first channel still busy. */
            if (!(st & (ST_DONE | ST_ERROR)) || (use_irq && !cip_irq_events))
                res->timeout_what = CIP_WAIT_IP;
            else
                res->timeout_what = (int)lowest_bit(DMA_ALL_BUSY(ds) & dma_mask);
            return CIP_E_TIMEOUT;
        }
    }
    st = cip_read(CIP_STATUS);
    take_error(res, st);
    if (!(st & (ST_DONE | ST_ERROR))) {
        /* Every channel ended but the IP did not: it lost data or a channel was stopped from outside. */
        res->timeout_what = CIP_WAIT_IP;
        return CIP_E_TIMEOUT;
    }
    res->timeout_what = CIP_WAIT_NONE;
    return (st & ST_ERROR) ? CIP_E_IP : CIP_OK;
}

int cip_wait(int use_irq, uint64_t timeout_cycles, cip_result *res)
{
    return wait_ip(use_irq, timeout_cycles, res);
}

static void wait_channel(unsigned ch, uint64_t timeout, cip_result *res)
{
    if (res->dma_rc[ch] == 1)
        return; /* not started */
    res->dma_rc[ch] = dma_wait(ch, timeout, &res->dma[ch]);
}

/* The paper's bracket (Peng et al., "LSM-Tree Based Hardware System Design for Compaction Acceleration"),
 * on Xilinx AXI DMA (CIP_BRACKET_PAPER): its driver's XAxiDma_SimpleTransfer()
 * reads the channel's status (refusing a busy one), writes the address and then the length, and
 * writing the length starts the channel; the S2MM (write to memory) channels are armed before the
 * MM2S ones so no output beat finds its channel idle. Our DMA starts on CTRL.START instead of LEN:
 * the same status read and register writes per channel (IRQ_STATUS, ADDR, LEN, CTRL), all inside the
 * counter. Then the IP is started, its STATUS polled until DONE or ERROR, then each channel's STATUS
 * until it is idle (XAxiDma_Busy() per channel), then the counter stops. No START_MASK, no ALL_STATUS. */
static int run_paper(const cip_job *job, uint64_t timeout_cycles, unsigned mask, cip_result *res)
{
    static const unsigned order[DMA_CHANNELS] = {DMA_CH_OUT, DMA_CH_INV, DMA_CH_KEY0, DMA_CH_KEY1};
    const uint32_t fin = BIT(DMA_CH_STATUS_DONE_SHIFT) | BIT(DMA_CH_STATUS_ERROR_SHIFT) | BIT(DMA_CH_STATUS_ABORTED_SHIFT);
    uint32_t addr[DMA_CHANNELS], len[DMA_CHANNELS];
    uint64_t end;
    unsigned i, polls = 0;
    int rc;

    addr[DMA_CH_KEY0] = job->run0_addr, len[DMA_CH_KEY0] = job->run0_len;
    addr[DMA_CH_KEY1] = job->run1_addr, len[DMA_CH_KEY1] = job->run1_len;
    addr[DMA_CH_OUT] = job->out_addr, len[DMA_CH_OUT] = job->out_buf;
    addr[DMA_CH_INV] = job->inv_addr, len[DMA_CH_INV] = job->inv_buf;
    mem_fence();

    cip_write(CIP_COUNT_CONTROL, 1);
    for (i = 0; i < DMA_CHANNELS; i++) {
        unsigned ch = order[i];
        if (!(mask & BIT(ch)))
            continue;
        if (dma_reg(ch, DMA_CH_STATUS) & BIT(DMA_CH_STATUS_BUSY_SHIFT)) {
            cip_write(CIP_COUNT_CONTROL, 0);
            dma_read_status(ch, &res->dma[ch]);
            res->dma_rc[ch] = DMA_FAILED;
            return CIP_E_DMA;
        }
        dma_start(ch, addr[ch], len[ch]);
        res->dma_rc[ch] = DMA_OK;
    }
    cip_write(CIP_CTRL, BIT(CIP_CTRL_START_SHIFT));

    rc = wait_ip(job->use_irq, timeout_cycles, res);
    if (rc == CIP_OK) {
        end = timer_deadline(timeout_cycles);
        for (i = 0; i < DMA_CHANNELS && rc == CIP_OK; i++) {
            unsigned ch = order[i];
            uint32_t s;
            if (!(mask & BIT(ch)))
                continue;
            while (!((s = dma_reg(ch, DMA_CH_STATUS)) & fin)) {
                if (++polls % POLLS_PER_TIMER_CHECK == 0 && timer_expired(end)) {
                    res->timeout_what = (int)ch;
                    rc = CIP_E_TIMEOUT;
                    break;
                }
            }
            if (rc == CIP_OK && (s & BIT(DMA_CH_STATUS_ERROR_SHIFT)))
                rc = CIP_E_DMA;
        }
    }
    cip_write(CIP_COUNT_CONTROL, 0);
    return rc;
}

int cip_run(const cip_job *job, cip_result *res)
{
    uint64_t timeout;
    unsigned ch;
    int rc;

    for (ch = 0; ch < DMA_CHANNELS; ch++) {
        res->dma_rc[ch] = 1;
        res->dma[ch].status = res->dma[ch].code = res->dma[ch].bytes = 0;
    }
    res->rc = CIP_OK;
    res->status = res->err_code = res->err_input = res->err_index = 0;
    res->timeout_what = CIP_WAIT_NONE;
    if (!job)
        return res->rc = CIP_E_ARG;
    timeout = job->timeout_cycles ? job->timeout_cycles : cip_default_timeout(job->run0_len + job->run1_len);

    /* A previous error state only ends with a soft reset. */
    if (cip_read(CIP_STATUS) & (ST_ERROR | ST_BUSY)) {
        if (cip_soft_reset() != CIP_OK) {
            res->timeout_what = CIP_WAIT_RESET;
            return res->rc = CIP_E_TIMEOUT;
        }
    }

    /* init: job registers, counters, interrupt enables (written here rather than by cip_unit_program,
     * which compiles into a different cip_run: see cip_soft_reset) */
    cip_counters_clear();
    cip_write(CIP_GROUP, job->group);
    cip_write(CIP_IN0_BYTES, job->run0_len);
    cip_write(CIP_IN1_BYTES, job->run1_len);
    cip_write(CIP_OUT_CAPACITY, job->out_capacity);
    cip_write(CIP_INV_CAPACITY, job->inv_capacity);
    cip_write(CIP_IRQ_STATUS, IRQ_BITS);
    cip_irq_events = 0;
    cip_write(CIP_IRQ_ENABLE, job->use_irq ? IRQ_BITS : 0);

    {
        unsigned mask = BIT(DMA_CH_OUT) | BIT(DMA_CH_INV);
        /* An empty run needs no beat (the IP goes by the declared length): its reader stays idle. */
        if (job->run0_len)
            mask |= BIT(DMA_CH_KEY0);
        if (job->run1_len)
            mask |= BIT(DMA_CH_KEY1);
        if (job->bracket == CIP_BRACKET_PAPER) {
            rc = run_paper(job, timeout, mask, res);
        } else {
            /* DMA addresses and lengths are init too: inside the bracket only the starts and the wait
             * remain. */
            dma_prepare(DMA_CH_OUT, job->out_addr, job->out_buf);
            dma_prepare(DMA_CH_INV, job->inv_addr, job->inv_buf);
            if (job->run0_len)
                dma_prepare(DMA_CH_KEY0, job->run0_addr, job->run0_len);
            if (job->run1_len)
                dma_prepare(DMA_CH_KEY1, job->run1_addr, job->run1_len);
            for (ch = 0; ch < DMA_CHANNELS; ch++)
                if (mask & BIT(ch))
                    res->dma_rc[ch] = DMA_OK;
            mem_fence();

            /* start counter -> start DMA (all channels, one write) and IP. The readers' first beats wait
             * for the IP's START; the writers' flush is armed by it (hw/ip/dma). */
            cip_write(CIP_COUNT_CONTROL, 1);
            dma_start_mask(mask);
            cip_write(CIP_CTRL, BIT(CIP_CTRL_START_SHIFT));

            /* wait: until every channel is idle (the writers' last bursts are in DDR) */
            rc = wait_job(job->use_irq, timeout, mask, res);
            /* stop counter (the per-channel results below are bookkeeping, not the job) */
            cip_write(CIP_COUNT_CONTROL, 0);
        }
    }
    if (rc == CIP_OK) {
        for (ch = 0; ch < DMA_CHANNELS; ch++)
            wait_channel(ch, timeout, res);
    } else if (rc == CIP_E_DMA) {
        /* The IP may never finish now: collect every channel briefly, abort the rest. */
        for (ch = 0; ch < DMA_CHANNELS; ch++)
            wait_channel(ch, WRITER_GRACE_CYCLES, res);
    } else {
        /* The IP discards input after an error, so readers finish; writers may wait forever. */
        wait_channel(DMA_CH_KEY0, rc == CIP_E_IP ? timeout : WRITER_GRACE_CYCLES, res);
        wait_channel(DMA_CH_KEY1, rc == CIP_E_IP ? timeout : WRITER_GRACE_CYCLES, res);
        wait_channel(DMA_CH_OUT, WRITER_GRACE_CYCLES, res);
        wait_channel(DMA_CH_INV, WRITER_GRACE_CYCLES, res);
    }
    /* read counters */
    cip_counters_read(&res->cnt);
    cip_write(CIP_IRQ_ENABLE, 0);

    for (ch = 0; ch < DMA_CHANNELS; ch++) {
        if (res->dma_rc[ch] == DMA_TIMEOUT) {
            dma_abort(ch);
            /* Let the abort settle before the next job reuses the channel. */
            dma_wait(ch, WRITER_GRACE_CYCLES, &res->dma[ch]);
        }
    }
    /* The CPU reads what the DMA wrote: drop stale cache lines. */
    dcache_invalidate();

    if (rc != CIP_OK)
        return res->rc = rc;
    for (ch = 0; ch < DMA_CHANNELS; ch++) {
        if (res->dma_rc[ch] == DMA_FAILED)
            return res->rc = CIP_E_DMA;
        if (res->dma_rc[ch] == DMA_TIMEOUT) {
            res->timeout_what = (int)ch;
            return res->rc = CIP_E_TIMEOUT;
        }
    }
    return res->rc = CIP_OK;
}

static const char *const ch_names[DMA_CHANNELS] = {"key0 reader", "key1 reader", "out writer", "invalid writer"};

const char *cip_describe(const cip_result *res, char *buf, unsigned len)
{
    unsigned ch;
    switch (res->rc) {
    case CIP_OK:
        snprintf(buf, len, "ok");
        break;
    case CIP_E_IP:
        snprintf(buf, len, "IP error %s (code %lu) in input %lu at entry %lu", kb16_err_name(res->err_code),
                 (unsigned long)res->err_code, (unsigned long)res->err_input, (unsigned long)res->err_index);
        break;
    case CIP_E_DMA:
        for (ch = 0; ch < DMA_CHANNELS; ch++)
            if (res->dma_rc[ch] == DMA_FAILED)
                break;
        if (ch == DMA_CHANNELS)
            ch = 0;
        snprintf(buf, len, "DMA error on channel %u (%s): %s (code %lu) after %lu bytes", ch, ch_names[ch],
                 dma_err_name(res->dma[ch].code), (unsigned long)res->dma[ch].code,
                 (unsigned long)res->dma[ch].bytes);
        break;
    case CIP_E_TIMEOUT:
        if (res->timeout_what == CIP_WAIT_IP)
            snprintf(buf, len, "timeout waiting for the IP (STATUS 0x%08lx, %s)", (unsigned long)res->status,
                     (res->status & (ST_DONE | ST_ERROR)) ? "finished but no interrupt" : "not finished");
        else if (res->timeout_what == CIP_WAIT_RESET)
            snprintf(buf, len, "timeout: IP still busy after soft reset");
        else if (res->timeout_what >= 0 && res->timeout_what < DMA_CHANNELS)
            snprintf(buf, len, "timeout waiting for DMA channel %d (%s), %lu bytes moved", res->timeout_what,
                     ch_names[res->timeout_what], (unsigned long)res->dma[res->timeout_what].bytes);
        else
            snprintf(buf, len, "timeout");
        break;
    default:
        snprintf(buf, len, "bad job arguments");
    }
    return buf;
}

void cip_job_from_reference(cip_job *job, unsigned group, uint32_t run0, uint32_t len0, uint32_t run1,
                            uint32_t len1, uint32_t out, uint32_t inv, const kb16_merge_result *ref)
{
    memset(job, 0, sizeof *job);
    job->group = group;
    job->run0_addr = run0;
    job->run0_len = len0;
    job->run1_addr = run1;
    job->run1_len = len1;
    job->out_addr = out;
    job->out_buf = job->out_capacity = dma_align_up((uint32_t)ref->out_bytes + DMA_ALIGN);
    job->inv_addr = inv;
    job->inv_buf = job->inv_capacity = dma_align_up((uint32_t)ref->inv_count * 4u + DMA_ALIGN);
}
