/* Storage-card flow of the paper (Fig. 8 platform): KB16 runs kept on NAND, compacted by the IP,
 * the result written back to NAND. fw/apps/storage/ builds into its own firmware, storage.elf:
 * flow.c (the flow), store.c (the power-cut-safe run store and its manifest), nandcon.c (`nand ...`
 * console commands), main.c (console and SIM_ARG scenarios). */
#ifndef LSMC_STORAGE_H
#define LSMC_STORAGE_H

#include <stdint.h>

typedef struct {
    unsigned entries;      /* keys over both runs */
    unsigned overlap_pct;  /* keys present in both runs */
    unsigned group;        /* KB16 group size G */
    uint32_t seed;
    int targets;           /* NAND targets to use (1 or 2: runs interleaved on two targets) */
    int verbose;
} storage_cfg;

typedef struct {
    int pass;
    uint32_t run_bytes[2], out_bytes, inv_bytes;
    uint32_t pages_programmed, pages_read, ecc_corrected;
    uint64_t cycles_write, cycles_read, cycles_merge, cycles_writeback, cycles_verify;
} storage_result;

/* SIM_ARG scenarios of storage.elf: STORAGE_SCEN_* in lsmc_job.h (from fw/include/job_abi.json). */
#include "lsmc_job.h"
#define STORAGE_MAX_TARGETS 2 /* = NAND_MAX_TARGETS (nand.h; not included here: builds without the driver) */

/* Runs the whole flow; prints its steps and "storage: PASS" / "storage: FAIL (<why>)". 0 = PASS. */
int storage_flow_run(const storage_cfg *cfg, storage_result *res);
/* SIM_ARG 2: mount, read back every stored run, then the host's work list (store.c); exit status. */
int store_faults_flow(void);
/* Mount the run store (newest valid manifest) and read every run back, one line each; 0 when mounted. */
int store_mount(void);

#endif
