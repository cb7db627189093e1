/* tables.elf's sub-compaction plan scenario (SIM_ARG TABLES_SCEN_PLAN): the plan descriptor the host placed
 * in memory (PLAN_HEAD, PLAN_TABLE of lsmc_job.h) read into te_plan's input, and the plan printed as the
 * lines the host parses (lsmc.sim.te_plan). Compiled for the host too (tests/fw_host/te_plan_main.c). */
#ifndef TABLES_PLAN_H
#define TABLES_PLAN_H

#include <stdint.h>

#include "te_plan.h"

#define PLAN_MAX_TABLES 512

/* The descriptor at `img` (`size` bytes, index blocks at offsets from `img`) into `in`, its arrays in
 * `run_tables` (TE_PLAN_MAX_RUNS) and `blocks` (PLAN_MAX_TABLES); 0, or prints why not and returns -1. */
int plan_from_image(const uint8_t *img, uint32_t size, te_plan_input *in, uint32_t *run_tables,
                    te_plan_block *blocks);

/* The plan's lines (`fw_cycles`: the CPU's clocks for te_plan()); rc as te_plan returned it. Returns the
 * scenario's exit status (TABLES_*). */
int plan_print(int rc, const te_plan_result *res, uint32_t tables, uint64_t fw_cycles);

/* picolibc's integer printf has no long long: `v` as decimal text in `buf` (21 bytes); returns the text. */
const char *plan_u64(uint64_t v, char *buf);

#endif
