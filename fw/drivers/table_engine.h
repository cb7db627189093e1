/* Table-engine unit driver (hw/ip/table_engine/doc/table_engine_soc.md): the unit fetches a job descriptor from
 * DDR (TE_DESC of te_job.h), runs the LevelDB compaction it names and writes one TE_OUT record per output table
 * into the descriptor's result area. te_run() starts it, waits by interrupt or by polling with a timeout, and
 * reads the checked status; registers from te_regs.h (regif), unit u at TE_UNIT_BASE(u) (soc.h). */
#ifndef LSMC_TABLE_ENGINE_H
#define LSMC_TABLE_ENGINE_H

#include <stdint.h>

#include "soc.h"
#include "te_job.h"
#include "te_regs.h"

/* Results of te_run(). */
enum {
    TE_OK = 0,
    TE_E_UNIT = -1,    /* the unit stopped the job on an error (code, unit, run, table, offset, entry below) */
    TE_E_TIMEOUT = -2, /* no status within the timeout (the unit is left running: a soft reset cannot stop it) */
    TE_E_ABSENT = -3,  /* no unit answers ID "LSTE" in that slot */
    TE_E_ARG = -4,     /* descriptor address not a multiple of TE_DESC_ALIGN */
    TE_E_BUSY = -5     /* the unit is running another job */
};

typedef struct {
    int rc;                 /* TE_OK or TE_E_* */
    uint32_t status;        /* STATUS at the end */
    uint32_t code, unit, run, table, offset, entry; /* with TE_E_UNIT: CODE (TE_ERR_*), UNIT (TE_UNIT_*), ... */
    uint32_t entries_in, entries_out, dropped, tables_out, bytes_out;
    uint32_t cycles;        /* CYCLES: GO to status, the unit's own count */
    uint32_t engine_cycles; /* ENGINE_CYCLES: the engine's bracket */
    uint64_t fw_cycles;     /* machine timer from the GO write to the status read (the whole job as firmware runs it) */
} te_result;

uint32_t te_read(unsigned u, uint32_t off);
void te_write(unsigned u, uint32_t off, uint32_t v);
/* 1 if unit u answers ID "LSTE"; *config gets CONFIG (ways, bytes, version). */
int te_present(unsigned u, uint32_t *config);
/* Clears STATUS, IRQ_STATUS and the counters of an idle unit; TE_E_BUSY while a job runs. */
int te_soft_reset(unsigned u);
/* Runs the job whose descriptor is at `desc` on unit u; waits by interrupt (use_irq) or polling, at most
 * `timeout_cycles` (0: 8 clocks per byte of its tables, at least 10^7). Returns r->rc. */
int te_run(unsigned u, uint32_t desc, int use_irq, uint64_t timeout_cycles, te_result *r);
/* Units started together by te_start_all, waited for one by one with te_wait_next. */
typedef struct {
    unsigned n;
    int use_irq;
    uint32_t pending; /* bit u: unit u's status not yet read */
    uint64_t t0;      /* the first GO (machine timer) */
    uint64_t deadline;
} te_batch;

/* Starts n jobs side by side, desc[u] on unit u (0 .. n-1; a sub-compaction's parts): every unit checked first (when
 * one is absent, busy or its descriptor misaligned, none is started and its rc returned; TE_E_ARG for n over
 * TE_UNITS_MAX), then each armed and started in turn; the deadline is the longest unit's timeout from the first GO
 * (`timeout_cycles`, 0: as te_run's per descriptor). */
int te_start_all(unsigned n, const uint32_t *desc, int use_irq, uint64_t timeout_cycles, te_batch *b, te_result *r);
/* Waits until one more unit of the batch has ended (interrupt or polling) or the deadline has passed, reads its
 * status into r[u] (rc, status, code, unit, run; table, offset, entry on an error; tables_out; fw_cycles from the
 * first GO) and returns u; -1 when every unit's status has been read. */
int te_wait_next(te_batch *b, te_result *r);
/* The rest of unit u's counters into r (entries_in, entries_out, dropped, bytes_out, cycles, engine_cycles): read
 * after the job, off its critical path. */
void te_read_counters(unsigned u, te_result *r);
/* te_start_all, every status as it comes, then every unit's counters: r[u] as te_run's. Returns TE_OK, the first
 * unit's failing rc, or te_start_all's. */
int te_run_all(unsigned n, const uint32_t *desc, int use_irq, uint64_t timeout_cycles, te_result *r);
/* "BAD_MAGIC", ... of a STATUS.CODE; "READER", ... of a STATUS.UNIT. */
const char *te_err_name(uint32_t code);
const char *te_unit_name(uint32_t unit);

#endif
