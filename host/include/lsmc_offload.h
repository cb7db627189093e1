/* lsmc host driver: merges N KB16 runs on a compaction back end (docs/leveldb.md).
 *
 * The narrow C ABI between a key-value store (LevelDB's offload hook) and the device. The store
 * hands over sorted KB16 runs (docs/kb16-format.md), newest first; the driver merges them on the
 * back end chosen by LSMC_OFFLOAD, cascading through the engine's 2 ways when there are more runs
 * (cascading compaction as in Lim and Shin, "LSM-Tree Compaction FPGA Accelerator using Cascading Compaction": pairs into temporary runs, then the final merge), and returns one canonical run plus
 * every superseded value address.
 *
 * Back ends of lsmc_merge_runs: model (the project's C merge, fw/lib/kb16.c), kb16 (the Verilated
 * compaction IP in-process, AXI4-Lite + streams driven from C++ with optional random back-pressure,
 * LSMC_RTL_STALL=P), soc (each 2-way job on the full SoC simulation running the firmware's host-loaded
 * job mode; seconds per job, for small cases).
 * Thread-safe: one job at a time per process (a mutex), which is how LevelDB compacts anyway. */
#ifndef LSMC_OFFLOAD_H
#define LSMC_OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* model, rtl and soc are the table engine (lsmc_table.h: its C++ model, its Verilated RTL, the full SoC);
 * kb16 and kb16-soc the KB16 compaction IP (its Verilated RTL in process; the full SoC), the back ends
 * lsmc_merge_runs takes besides model (the C merge). */
typedef enum {
    LSMC_BACKEND_OFF = 0, LSMC_BACKEND_MODEL = 1, LSMC_BACKEND_RTL = 2, LSMC_BACKEND_SOC = 3, LSMC_BACKEND_KB16 = 4,
    LSMC_BACKEND_KB16_SOC = 5
} lsmc_backend;

/* Back end named by LSMC_OFFLOAD (unset or empty: off). On an unknown name returns -1 and writes a
 * message naming the variable and the accepted values into err. */
int lsmc_backend_from_env(char *err, size_t err_len);
const char *lsmc_backend_name(int backend);

/* A run handed to the driver: len bytes of KB16 entries (a multiple of 16). */
typedef struct {
    const uint8_t *data;
    size_t len;
} lsmc_run;

typedef struct {
    uint8_t *out;          /* merged canonical run (malloc'd by the driver; free with lsmc_result_free) */
    size_t out_len;
    size_t out_keys;
    uint32_t *inv;         /* superseded addresses, all merge stages concatenated (stage order) */
    size_t inv_count;
    uint64_t device_cycles; /* rtl, soc: sum of HW_CYCLES of every job; model: 0 (no timing model) */
    uint64_t jobs;          /* 2-way merges run */
    uint64_t sim_us;        /* CPU time of the calling thread inside the back end (simulation or C merge) */
    uint64_t sim_wall_us;   /* wall time inside the back end (what a modelled figure takes out again) */
} lsmc_result;

/* Merge runs[0..n-1] (runs[0] newest) with group size `group`. Returns 0, or a KB16 error code
 * (kb16.h) / -1 with a message in err. On error the result holds nothing to free. */
int lsmc_merge_runs(int backend, const lsmc_run *runs, size_t n, unsigned group, lsmc_result *res,
                    char *err, size_t err_len);
void lsmc_result_free(lsmc_result *res);

/* CPU time of the calling thread in microseconds (CLOCK_THREAD_CPUTIME_ID). */
uint64_t lsmc_thread_cpu_us(void);

/* The IP's clock, for turning device cycles into time (docs/baselines.md: 100 MHz). */
#define LSMC_DEVICE_MHZ 100u

#ifdef __cplusplus
}
#endif
#endif
