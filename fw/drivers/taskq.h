/* Task-queue driver for several compaction units (Zhang et al., "FPGA-Accelerated Compactions for LSM-based Key-Value Store", sec. 3.2): merge tasks wait in a queue,
 * are dispatched round robin to free units, complete by interrupt or by polling (chosen per run),
 * carry their own status, and fall back to the C merge (kb16_merge_n) when their unit reports an
 * error; the fallbacks are counted. Every task of a tq_run() call may run at the same time on
 * different units. Unit u is driven through its handle cip_units[u] (compaction.h: its IP, its DMA,
 * its interrupt line); the units present answer their ID, absent slots read 0. docs/firmware.md,
 * "Task queue". */
#ifndef LSMC_TASKQ_H
#define LSMC_TASKQ_H

#include <stdint.h>

#include "compaction.h"
#include "dma.h"
#include "kb16.h"
#include "soc.h"

#define TQ_MAX_WAYS (2u + DMA_XCH_COUNT) /* inputs of one task: the widest unit the driver knows */

/* Task states. */
enum { TQ_PENDING = 0, TQ_RUNNING = 1, TQ_DONE = 2, TQ_DONE_CPU = 3, TQ_FAILED = 4 };

/* Test hook: program the unit with group 1 (the IP refuses it: BAD_GROUP), so the unit reports an
 * error and the task must finish on the CPU. */
#define TQ_FAULT_BAD_GROUP 1u

typedef struct {
    /* in: runs newest first (nruns <= the unit's K: more runs are cascaded by tq_cascade) */
    unsigned nruns;
    uint32_t run_addr[TQ_MAX_WAYS], run_len[TQ_MAX_WAYS];
    /* a second segment of input k, read after the first in the same stream (0 bytes: none; dma.h,
     * dma_set_prepare2): a sub-compaction's re-encoded head, then the untouched tail of the run in place */
    uint32_t run_addr2[TQ_MAX_WAYS], run_len2[TQ_MAX_WAYS];
    uint32_t out_addr, out_buf;   /* output buffer, its size = the IP's OUT_CAPACITY */
    uint32_t inv_addr, inv_buf;   /* invalid-address buffer, its size = INV_CAPACITY */
    unsigned fault;               /* 0 or TQ_FAULT_* */
    /* out */
    int state;                    /* TQ_* */
    int unit;                     /* unit it was dispatched to (-1: none) */
    unsigned seq;                 /* dispatch order, 0 first */
    int hw_rc;                    /* CIP_OK or CIP_E_* of the unit */
    uint32_t hw_status, err_code, err_input, err_index;
    uint32_t sw_status;           /* kb16 status of the CPU fallback (KB16_OK when it ran and passed) */
    uint32_t out_bytes, inv_bytes;
    uint32_t hw_cycles;           /* the unit's HW_CYCLES */
} tq_task;

typedef struct {
    unsigned group;
    unsigned units;               /* units to use: 1..tq_units_present() */
    int use_irq;                  /* completion by interrupt (1) or by polling STATUS (0) */
    uint64_t timeout_cycles;      /* per task; 0: cip_default_timeout() of its input */
    uint32_t join_addr, join_len; /* CPU fallback of a task with two-segment inputs: they are joined here
                                     first (0 bytes: such a task fails instead) */
    /* out */
    uint64_t cycles;              /* first start to last completion (machine timer = clock cycles) */
    unsigned dispatched[UNITS_MAX];
    unsigned fallbacks;           /* tasks the CPU finished after a unit error */
    unsigned failed;              /* tasks that neither a unit nor the CPU could finish */
    uint32_t irq_events[UNITS_MAX];
} tq_ctx;

/* Units present (consecutive from 0, each answering ID "LSMC" with this IP version). */
unsigned tq_units_present(void);
/* Inputs K of unit u (its WAYS register; a two-way IP has none and reads 2). */
unsigned tq_unit_ways(unsigned u);
/* Run `n` tasks on ctx->units units; returns ctx->failed. */
unsigned tq_run(tq_ctx *ctx, tq_task *tasks, unsigned n);

/* A job of more runs than a unit has inputs (newest first, at most KB16_MAX_RUNS). */
typedef struct {
    unsigned n;
    uint32_t run_addr[KB16_MAX_RUNS], run_len[KB16_MAX_RUNS];
} tq_runs;

/* Cascading compaction (Lim and Shin, "LSM-Tree Compaction FPGA Accelerator using Cascading Compaction", sec. 3.2) of `njobs` jobs at once on units of `ways` inputs: while
 * a job has more runs than ways, the consecutive window of min(ways, runs - ways + 1) runs with the
 * fewest bytes is merged into a temporary run (lsmc.model.kb16.cascade_plan's rule), then the final
 * merge writes finals[j].out_addr. Step s of every job forms one tq_run (the jobs' steps run side by
 * side on the units). The invalid addresses of a job's steps follow each other in its inv buffer.
 * finals[j] gives the output buffers; on return it holds the job's state, out_bytes, inv_bytes (all
 * steps) and hw_cycles (sum). Temporary runs go to `scratch` (cap bytes, split between the jobs).
 * Returns the number of jobs that failed. */
unsigned tq_cascade(tq_ctx *ctx, const tq_runs *jobs, tq_task *finals, unsigned njobs, unsigned ways,
                    uint32_t scratch, uint32_t scratch_cap);

const char *tq_state_name(int state);

#endif
