/* Table-engine unit driver: see table_engine.h. */
#include "table_engine.h"

#include "csr.h"
#include "irq.h"
#include "mmio.h"
#include "timer.h"

uint32_t te_read(unsigned u, uint32_t off) { return mmio_read32(TE_UNIT_BASE(u) + off); }
void te_write(unsigned u, uint32_t off, uint32_t v) { mmio_write32(TE_UNIT_BASE(u) + off, v); }

int te_present(unsigned u, uint32_t *config)
{
    if (u >= TE_UNITS_MAX || te_read(u, TE_ID) != TE_ID_MAGIC)
        return 0;
    if (config)
        *config = te_read(u, TE_CONFIG);
    return 1;
}

int te_soft_reset(unsigned u)
{
    if (te_read(u, TE_STATUS) & TE_STATUS_BUSY_MASK)
        return TE_E_BUSY;
    te_write(u, TE_CTRL, TE_CTRL_SOFT_RESET_MASK);
    return TE_OK;
}

static volatile uint32_t te_irq_seen[TE_UNITS_MAX];

static void te_irq(void *ctx)
{
    unsigned u = (unsigned)(uintptr_t)ctx;
    te_irq_seen[u] = te_read(u, TE_IRQ_STATUS);
    te_write(u, TE_IRQ_ENABLE, 0); /* the level drops; te_run reads STATUS and clears IRQ_STATUS */
}

/* The default bound: 8 clocks per byte of the tables the descriptor names (raw tables take about one clock per
 * 9 bytes; with Snappy written, one compressor takes about one per byte: doc/table_engine_top.md), at least 10 M. */
static uint64_t default_timeout(uint32_t desc)
{
    volatile const uint32_t *d = (volatile const uint32_t *)(uintptr_t)desc;
    uint64_t bytes = 0;
    unsigned r, i, runs = d[TE_DESC_RUNS];
    for (r = 0; r < runs && r < 8; r++) {
        volatile const uint32_t *t = (volatile const uint32_t *)(uintptr_t)d[TE_DESC_TABLES_ADDR + r];
        for (i = 0; i < d[TE_DESC_TABLES_COUNT + r] && i < 65536; i++)
            bytes += t[TE_TABLE_NWORDS * i + TE_TABLE_SIZE];
    }
    return bytes * 8 > 10000000u ? bytes * 8 : 10000000u;
}

static int conclude(unsigned u, int use_irq, uint64_t t0, te_result *r);

/* Unit u's checks before it is started (reads only): present, the descriptor aligned, idle; TE_OK or r->rc. */
static int check(unsigned u, uint32_t desc, te_result *r)
{
    r->rc = TE_OK;
    if (!te_present(u, 0))
        return r->rc = TE_E_ABSENT;
    if (desc % TE_DESC_ALIGN)
        return r->rc = TE_E_ARG;
    if (te_read(u, TE_STATUS) & TE_STATUS_BUSY_MASK)
        return r->rc = TE_E_BUSY;
    return TE_OK;
}

/* A checked unit's interrupt status cleared, pointed at `desc`, its interrupt armed; the GO write is the caller's. */
static void arm(unsigned u, uint32_t desc, int use_irq)
{
    te_write(u, TE_IRQ_STATUS, TE_IRQ_STATUS_DONE_MASK | TE_IRQ_STATUS_ERROR_MASK);
    te_write(u, TE_DESC_ADDR, desc);
    if (use_irq) {
        te_irq_seen[u] = 0;
        irq_attach(IRQ_TE_UNIT(u), te_irq, (void *)(uintptr_t)u);
        te_write(u, TE_IRQ_ENABLE, TE_IRQ_ENABLE_DONE_MASK | TE_IRQ_ENABLE_ERROR_MASK);
    }
}

/* Unit u's job has ended (or its deadline passed): 1 when its status may be read. */
static int ended(unsigned u, int use_irq)
{
    uint32_t st;
    if (use_irq)
        return te_irq_seen[u] != 0;
    st = te_read(u, TE_STATUS);
    return !(st & TE_STATUS_BUSY_MASK) && (st & TE_STATUS_DONE_MASK);
}

int te_run(unsigned u, uint32_t desc, int use_irq, uint64_t timeout_cycles, te_result *r)
{
    uint64_t t0, deadline;

    if (check(u, desc, r) != TE_OK)
        return r->rc;
    arm(u, desc, use_irq);
    if (!timeout_cycles)
        timeout_cycles = default_timeout(desc);
    mem_fence(); /* the descriptor and its tables are in DDR before the unit reads them */
    t0 = timer_now();
    deadline = t0 + timeout_cycles;
    te_write(u, TE_CTRL, TE_CTRL_GO_MASK);
    /* no wfi with interrupts: one between the test and the wfi would be slept through */
    while (!ended(u, use_irq) && !timer_expired(deadline))
        ;
    conclude(u, use_irq, t0, r);
    te_read_counters(u, r);
    return r->rc;
}

/* The end of unit u's job (done or past its deadline), started at timer `t0`: its STATUS read, its interrupt
 * disarmed and cleared, the error fields and TABLES_OUT into r (the other counters: te_read_counters); r->rc. */
static int conclude(unsigned u, int use_irq, uint64_t t0, te_result *r)
{
    uint32_t st = te_read(u, TE_STATUS);

    r->fw_cycles = timer_now() - t0;
    if (use_irq) {
        te_write(u, TE_IRQ_ENABLE, 0);
        irq_line_enable(IRQ_TE_UNIT(u), 0);
    }
    te_write(u, TE_IRQ_STATUS, TE_IRQ_STATUS_DONE_MASK | TE_IRQ_STATUS_ERROR_MASK);
    r->status = st;
    if ((st & TE_STATUS_BUSY_MASK) || !(st & TE_STATUS_DONE_MASK))
        return r->rc = TE_E_TIMEOUT;
    r->code = (st & TE_STATUS_CODE_MASK) >> TE_STATUS_CODE_SHIFT;
    r->unit = (st & TE_STATUS_UNIT_MASK) >> TE_STATUS_UNIT_SHIFT;
    r->run = (st & TE_STATUS_RUN_MASK) >> TE_STATUS_RUN_SHIFT;
    r->tables_out = te_read(u, TE_TABLES_OUT);
    dcache_invalidate(); /* the records and tables the unit wrote, not stale lines */
    if (!(st & TE_STATUS_ERROR_MASK))
        return r->rc = TE_OK;
    r->table = te_read(u, TE_ERR_TABLE);
    r->offset = te_read(u, TE_ERR_OFFSET);
    r->entry = te_read(u, TE_ERR_ENTRY);
    return r->rc = TE_E_UNIT;
}

void te_read_counters(unsigned u, te_result *r)
{
    r->entries_in = te_read(u, TE_ENTRIES_IN);
    r->entries_out = te_read(u, TE_ENTRIES_OUT);
    r->dropped = te_read(u, TE_DROPPED);
    r->bytes_out = te_read(u, TE_BYTES_OUT);
    r->cycles = te_read(u, TE_CYCLES);
    r->engine_cycles = te_read(u, TE_ENGINE_CYCLES);
}

int te_start_all(unsigned n, const uint32_t *desc, int use_irq, uint64_t timeout_cycles, te_batch *b, te_result *r)
{
    uint64_t longest = 0;
    unsigned u;

    b->n = 0;
    b->pending = 0;
    if (n > TE_UNITS_MAX)
        return TE_E_ARG;
    for (u = 0; u < n; u++) /* all checked before any starts: none runs when one cannot */
        if (check(u, desc[u], &r[u]) != TE_OK)
            return r[u].rc;
    mem_fence(); /* the descriptors and their tables are in DDR before the units read them */
    b->t0 = timer_now();
    /* Each unit armed and started in turn: unit 0 runs while the later ones are armed (about 28 clocks a register
     * write, doc/table_engine_soc.md). */
    for (u = 0; u < n; u++) {
        arm(u, desc[u], use_irq);
        te_write(u, TE_CTRL, TE_CTRL_GO_MASK);
        b->pending |= 1u << u;
    }
    b->n = n;
    b->use_irq = use_irq;
    /* The deadline once every unit runs: the default reads each descriptor's table lists from DDR (cache misses). */
    for (u = 0; u < n; u++) {
        uint64_t t = timeout_cycles ? timeout_cycles : default_timeout(desc[u]);
        longest = t > longest ? t : longest;
    }
    b->deadline = b->t0 + longest;
    return TE_OK;
}

int te_wait_next(te_batch *b, te_result *r)
{
    unsigned u;

    while (b->pending) {
        int late = timer_expired(b->deadline);
        for (u = 0; u < b->n; u++)
            if ((b->pending & (1u << u)) && (late || ended(u, b->use_irq))) {
                conclude(u, b->use_irq, b->t0, &r[u]);
                b->pending &= ~(1u << u);
                return (int)u;
            }
    }
    return -1;
}

int te_run_all(unsigned n, const uint32_t *desc, int use_irq, uint64_t timeout_cycles, te_result *r)
{
    te_batch b;
    unsigned u;
    int rc = te_start_all(n, desc, use_irq, timeout_cycles, &b, r);

    if (rc != TE_OK)
        return rc;
    while (te_wait_next(&b, r) >= 0)
        ;
    for (u = 0; u < n; u++)
        te_read_counters(u, &r[u]);
    for (u = 0; u < n; u++)
        if (r[u].rc != TE_OK)
            return r[u].rc;
    return TE_OK;
}

const char *te_err_name(uint32_t code)
{
#define TE_NAME(n, v) case v: return #n;
    switch (code) { TE_ERR_LIST(TE_NAME) }
    return "?";
}

const char *te_unit_name(uint32_t unit)
{
    switch (unit) { TE_UNIT_LIST(TE_NAME) }
#undef TE_NAME
    return "?";
}
