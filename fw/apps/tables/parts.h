/* tables.elf's parts scenario (SIM_ARG TABLES_SCEN_PARTS): the job whose descriptor the host placed at
 * DDR_HOST_BASE (as TABLES_SCEN_JOB's) run as P sub-compaction parts, one a table-engine unit, side by side. The
 * firmware reads each input table's index block where the table lies in DDR (footer, block; raw blocks only),
 * plans the parts (te_plan.h), writes one descriptor a part into DDR_SCRATCH (the part's tables with their block
 * windows, the host's walker load with the part's (lo, hi] bounds as BOUND records, a share of the output buffer,
 * a result area of its own), starts the units at once, waits for all, and gathers the parts' TE_OUT records into
 * the host descriptor's result area in part order, so the host reads one result as for one unit. Timed from the
 * plan's start to the last record gathered (the whole job as the firmware runs it). */
#ifndef TABLES_PARTS_H
#define TABLES_PARTS_H

#include <stddef.h>
#include <stdint.h>

/* Runs the job in `parts` parts (1: the host's descriptor whole on unit 0) with `work` (8-byte aligned) as the
 * plan's work space; prints the lines the host parses (lsmc.sim.tables) and returns the exit status (TABLES_*). */
int parts_run(uint32_t parts, void *work, size_t work_bytes);

/* SIM_ARG TABLES_SCEN_PARTS_HOST: the parts the host planned (PARTS_HEAD at DDR_HOST_BASE: a descriptor and the
 * (lo, hi] bounds a part, and the whole job's descriptor, whose result area gathers the records), checked, then run
 * and reported as parts_run does; `plan_cycles` is then the head's checks. */
int parts_host_run(void);

#endif
