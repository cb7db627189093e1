/* The lsmc application: Table III bench, host-loaded jobs, error-path self test, UART console. */
#ifndef LSMC_APP_H
#define LSMC_APP_H

#include <stddef.h>
#include <stdint.h>

#include "compaction.h"
#include "kb16.h"
#include "soc.h"

#define FW_VERSION "1.0"

/* SIM_ARG scenarios (LSMC_SCEN_*), descriptor magic numbers, flags, status codes and word layouts: the job
 * ABI, generated from fw/include/job_abi.json (docs/firmware.md). */
#include "lsmc_job.h"

/* DDR layout of the firmware's own data (the host owns 0x4000_0000 .. 0x47FF_FFFF for jobs). */
#define BENCH_RUN0 0x48000000u
#define BENCH_RUN1 0x48100000u
#define BENCH_HW_OUT 0x48200000u
#define BENCH_HW_INV 0x48400000u
#define BENCH_SW_OUT 0x48500000u
#define BENCH_SW_INV 0x48700000u
#define BENCH_SCRATCH 0x48800000u
#define BENCH_RUN_CAP 0x00100000u
#define BENCH_OUT_CAP 0x00200000u
#define BENCH_INV_CAP 0x00100000u
#define BENCH_SCRATCH_CAP 0x00800000u
#define BENCH_MAX_ENTRIES 65536u
#define BENCH_MAX_ROWS TABLE_MAX_ROWS

/* The firmware's own DDR buffers lie in the memory map's DDR_SCRATCH region, the host's jobs in
 * DDR_HOST (descriptor first). */
_Static_assert(BENCH_RUN0 >= DDR_SCRATCH_BASE && BENCH_SCRATCH + BENCH_SCRATCH_CAP <= DDR_SCRATCH_BASE + DDR_SCRATCH_SIZE,
               "bench buffers outside the memory map's DDR scratch region");
/* Buffers of the several-unit paths (scale.c): staging of the generator, packed runs, per-job outputs,
 * the C merge's reference, cascade temporaries. */
#define SCALE_STAGE0 0x49000000u
#define SCALE_STAGE1 0x49200000u
#define SCALE_STAGE_CAP 0x00200000u
#define SCALE_RUNS 0x49400000u
#define SCALE_RUNS_CAP 0x00C00000u
#define SCALE_OUT 0x4A000000u /* + job * SCALE_OUT_CAP */
#define SCALE_OUT_CAP 0x00200000u
#define SCALE_INV 0x4B000000u /* + job * SCALE_INV_CAP */
#define SCALE_INV_CAP 0x00080000u
#define SCALE_REF_OUT 0x4B400000u
#define SCALE_REF_INV 0x4B600000u
#define SCALE_SORT 0x4B680000u
#define SCALE_TMP 0x4B800000u
#define SCALE_TMP_CAP 0x02000000u
_Static_assert(SCALE_STAGE0 >= BENCH_SCRATCH + BENCH_SCRATCH_CAP && SCALE_TMP + SCALE_TMP_CAP <= DDR_SCRATCH_BASE + DDR_SCRATCH_SIZE,
               "scale buffers outside the DDR scratch region or over the bench's");
#define JOB_DESC_WORDS (JOB_DESC_BYTES / 4u)

extern int app_use_irq; /* wait for the IP by interrupt (1) or polling (0) */

typedef struct {
    unsigned entries_in, entries_out, bytes_in;
    uint32_t fw_cycles, hw_cycles, sw_cycles;
    int pass;
} bench_row;

typedef struct {
    unsigned kind, overlap_pct, group;
    uint32_t seed;
    int bracket; /* CIP_BRACKET_TIGHT or CIP_BRACKET_PAPER */
    int no_sw;   /* skip the C merge on the CPU (host-loaded workloads only: they bring their reference) */
} bench_cfg;

/* Table III's workload on the CPU's generator: N/2 short keys per run, 25 % overlap, G 16, tight bracket. */
#define BENCH_CFG_TABLE3 {KB16_KIND_SHORT, 25, 16, 0x5EED0000u, CIP_BRACKET_TIGHT, 0}

/* The host's reference merge of a loaded workload. */
typedef struct {
    const uint8_t *out, *inv;
    uint32_t out_len, inv_len, out_keys;
} bench_expect;

/* One buffer of a host descriptor: byte offset from DDR_BASE and length, and the descriptor word that
 * holds the offset (the length is the next word). */
typedef struct {
    const char *name;
    unsigned word;
    uint32_t off, len;
} desc_field;
/* Checks every field: inside the host's DDR window, 32-byte aligned, not over the descriptor, no
 * overlap with another field of `f` or with a region of the firmware (code, data, stack, heap, DDR
 * scratch). Prints "<who>: field <name> (words a, b) ..." for the first problem; 0 when all are fine. */
int desc_check_fields(const char *who, const desc_field *f, unsigned n);
/* Start of a host-loaded job: the host wrote the descriptor and data behind the CPU's back, so the data
 * cache is invalidated, the first `nw` descriptor words copied to `w`, the first `nr` result words cleared
 * and the result block stamped with `result_magic`. */
void desc_open(volatile const uint32_t *d, uint32_t *w, unsigned nw, volatile uint32_t *r, unsigned nr,
               uint32_t result_magic);

/* Generate, run on the IP, run the C merge, compare. Prints a report; returns 0 when it passed. */
int bench_run_one(unsigned entries, const bench_cfg *cfg, bench_row *row, int verbose);
/* The Table III sizes, human table then the TABLE3 block. Returns the number of failed rows. */
int bench_table(const unsigned *sizes, unsigned n);
int bench_table_bracket(const unsigned *sizes, unsigned n, int bracket);
/* Table III on the workloads described at DDR 0x4000_0000 (SIM_ARG 7). Returns the failed rows, -1 for
 * a bad descriptor. */
int bench_host_table(void);
extern const unsigned bench_sizes_table3[5];
extern const unsigned bench_sizes_small[3];
/* Work space for kb16_gen_runs: on-chip RAM when `slots` fit, else DDR; *cap = slots available. */
kb16_key_slot *bench_scratch(size_t slots, size_t *cap);
int errtest_run(void);
/* The job described at DDR 0x4000_0000: 0 pass, else a failure code (docs/firmware.md). */
int job_run(int verbose);
void console_run(void);
/* The host-loaded several-unit job (SIM_ARG 8): 0 pass, else a status code (docs/firmware.md). */
int scale_job_run(void);
/* Console `run N [overlap%] [G] [R] [U]` with R runs or U units beyond today's two runs on one unit. */
int scale_run_console(unsigned entries, unsigned overlap, unsigned group, unsigned nruns, unsigned units);
void regs_dump(void);

/* x / y with `dec` decimals into buf (integer arithmetic only). */
char *fmt_ratio(char *buf, size_t len, uint64_t x, uint64_t y, unsigned dec);
void print_result_failure(const cip_result *res);

#endif
