/* tables.elf: LevelDB table jobs on the SoC's table-engine units (docs/firmware.md, "Table engine"). SIM_ARG
 * TABLES_SCEN_JOB runs the job whose descriptor (TE_DESC of te_job.h) the host placed at DDR_HOST_BASE on unit 0,
 * waits for its interrupt with a timeout, and prints one line the host parses: the unit's status and counters,
 * its clocks (CYCLES: GO to status; ENGINE_CYCLES: the engine's bracket) and the firmware's (fw_cycles: from the
 * GO write to the status read, the whole job as the firmware runs it). SIM_ARG TABLES_SCEN_PLAN runs the
 * sub-compaction plan (te_plan.h) on the index blocks the host placed at DDR_HOST_BASE (PLAN_HEAD), timed from
 * the call to the return, and prints its splits and windows (plan.c). SIM_ARG TABLES_SCEN_PARTS (P in the bits from
 * TABLES_PARTS_SHIFT) runs the JOB's descriptor as P sub-compaction parts on P units side by side (parts.c); SIM_ARG
 * TABLES_SCEN_PARTS_HOST runs the parts the host planned (PARTS_HEAD). The exit code is TABLES_* (lsmc_job.h). */
#include <stdio.h>

#include "irq.h"
#include "lsmc_job.h"
#include "parts.h"
#include "plan.h"
#include "soc.h"
#include "sys.h"
#include "table_engine.h"
#include "timer.h"

static int run_job(void)
{
    te_result r;
    uint32_t config;

    if (!te_present(0, &config)) {
        printf("tables: no table-engine unit at 0x%08lx (this SoC build has none)\n", (unsigned long)TE_UNIT_BASE(0));
        return TABLES_ABSENT;
    }
    printf("tables: unit 0, %lu ways, %lu bytes a beat\n", (unsigned long)((config & TE_CONFIG_WAYS_MASK) >> TE_CONFIG_WAYS_SHIFT),
           (unsigned long)((config & TE_CONFIG_BYTES_MASK) >> TE_CONFIG_BYTES_SHIFT));
    te_run(0, DDR_HOST_BASE, 1, 0, &r);
    if (r.rc == TE_E_UNIT) {
        printf("tables: error=%s unit=%s run=%lu table=%lu offset=%lu entry=%lu cycles=%lu\n", te_err_name(r.code),
               te_unit_name(r.unit), (unsigned long)r.run, (unsigned long)r.table, (unsigned long)r.offset,
               (unsigned long)r.entry, (unsigned long)r.cycles);
        return TABLES_FAILED;
    }
    if (r.rc != TE_OK) {
        printf("tables: %s (STATUS 0x%08lx)\n", r.rc == TE_E_TIMEOUT ? "timeout" : "not started",
               (unsigned long)r.status);
        return r.rc == TE_E_TIMEOUT ? TABLES_TIMEOUT : TABLES_FAILED;
    }
    printf("tables: done cycles=%lu engine_cycles=%lu fw_cycles=%lu entries_in=%lu entries_out=%lu dropped=%lu "
           "tables_out=%lu bytes_out=%lu\n", (unsigned long)r.cycles, (unsigned long)r.engine_cycles,
           (unsigned long)r.fw_cycles, (unsigned long)r.entries_in, (unsigned long)r.entries_out,
           (unsigned long)r.dropped, (unsigned long)r.tables_out, (unsigned long)r.bytes_out);
    return TABLES_PASS;
}

/* The plan's work space in the on-chip RAM, where the firmware keeps its own data. */
static uint64_t plan_work[2048];

static int run_plan(void)
{
    static uint32_t run_tables[TE_PLAN_MAX_RUNS];
    static te_plan_block blocks[PLAN_MAX_TABLES];
    te_plan_input in;
    te_plan_result res;
    uint64_t t0, t1;
    uint32_t tables = 0;
    int rc;

    if (plan_from_image((const uint8_t *)DDR_HOST_BASE, DDR_HOST_SIZE, &in, run_tables, blocks) != 0)
        return TABLES_BAD_DESC;
    for (uint32_t r = 0; r < in.runs; r++)
        tables += run_tables[r];
    t0 = timer_now();
    rc = te_plan(&in, plan_work, sizeof plan_work, &res);
    t1 = timer_now();
    return plan_print(rc, &res, tables, t1 - t0);
}

int main(void)
{
    uint32_t arg = sys_sim_arg();
    int rc;

    irq_init();
    if (!sys_in_sim()) {
        printf("tables: runs in simulation only (SIM_ARG selects the job)\n");
        return 0;
    }
    switch (arg & ((1u << TABLES_PARTS_SHIFT) - 1)) {
    case TABLES_SCEN_JOB:
        rc = run_job();
        break;
    case TABLES_SCEN_PLAN:
        rc = run_plan();
        break;
    case TABLES_SCEN_PARTS:
        rc = parts_run(arg >> TABLES_PARTS_SHIFT, plan_work, sizeof plan_work);
        break;
    case TABLES_SCEN_PARTS_HOST:
        rc = parts_host_run();
        break;
    default:
        printf("tables: unknown SIM_ARG %lu (0 the host-loaded job, 1 the plan, 2 + P << 8 the job in P parts, 3 the host's parts)\n",
               (unsigned long)arg);
        rc = TABLES_FAILED;
    }
    printf("exit %d\n", rc);
    return rc;
}
