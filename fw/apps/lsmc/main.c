/* lsmc firmware entry: init, identify the IP, then the scenario SIM_ARG selects (console on a board). */
#include <stdio.h>

#include "app.h"
#include "irq.h"
#include "regs.h"
#include "soc.h"
#include "sys.h"
#include "uart.h"

#ifndef BOARD_BAUD /* the board's UART: make ... BOARD_BAUD=N (the board simulation's fast line, boards/sim) */
#define BOARD_BAUD 115200u
#endif
/* uart_divider_for() gives the bit time in 8 samples of (divider + 1) clocks: at least one clock a sample. */
_Static_assert(BOARD_BAUD <= CPU_HZ / 8u, "BOARD_BAUD above the UART's fastest rate (CPU_HZ / 8)");

/* Table III waits by polling, as the paper's flow does: the interrupt's trap entry and exit would add
 * ~450 cycles to the firmware-bracketed figure of every job (`mode irq` or SIM_ARG 4 to compare). */
int app_use_irq = 0;

int main(void)
{
    int sim = sys_in_sim();
    uint32_t arg = sys_sim_arg(), version = 0;
    int id_rc, rc = 0;

    /* In simulation the harness sets the UART divider (fast bit times) and decodes at that rate. */
    if (!sim)
        uart_init(uart_divider_for(CPU_HZ, BOARD_BAUD));
    uart_crlf = !sim;
    irq_init();
    irq_attach(IRQ_CIP, cip_irq_handler, 0);

    id_rc = cip_check_id(&version);
    printf("\nlsmc firmware %s (%s, SIM_ARG %lu); registers: IP %s, DMA %s\n", FW_VERSION, sim ? "simulation" : "board",
           (unsigned long)arg, LSMC_CIP_REGS_SOURCE, LSMC_DMA_REGS_SOURCE);
    if (id_rc) {
        printf("compaction IP not found at 0x%08lx: ID 0x%08lx VERSION 0x%08lx (want ID 0x%08lx, version 0x%04x)\n",
               (unsigned long)CIP_BASE, (unsigned long)cip_read(CIP_ID), (unsigned long)version,
               (unsigned long)CIP_ID_MAGIC, CIP_IP_VERSION);
        if (sim)
            return 2;
    } else {
        printf("compaction IP v%lu.%lu, %lu-bit streams\n", (unsigned long)((version >> 8) & 0xFF),
               (unsigned long)(version & 0xFF), (unsigned long)(version >> 16));
        cip_soft_reset();
    }

    if (!sim) {
        console_run();
        return 0;
    }
    switch (arg) {
    case LSMC_SCEN_BENCH:
        rc = bench_table(bench_sizes_table3, 5) ? 1 : 0;
        break;
    case LSMC_SCEN_BENCH_IRQ:
        app_use_irq = 1;
        rc = bench_table(bench_sizes_table3, 5) ? 1 : 0;
        break;
    case LSMC_SCEN_BENCH_SMALL:
        rc = bench_table(bench_sizes_small, 3) ? 1 : 0;
        break;
    case LSMC_SCEN_BENCH_HOST:
        rc = bench_host_table() ? 1 : 0;
        break;
    case LSMC_SCEN_SCALE:
        rc = scale_job_run();
        break;
    case LSMC_SCEN_CONSOLE:
        console_run();
        break;
    case LSMC_SCEN_JOB:
        rc = job_run(1);
        break;
    case LSMC_SCEN_ERRTEST:
        rc = errtest_run() ? 1 : 0;
        break;
    case LSMC_SCEN_QUICK: {
        bench_cfg cfg = BENCH_CFG_TABLE3;
        bench_row row;
        rc = bench_run_one(512, &cfg, &row, 1) ? 1 : 0;
        break;
    }
    default:
        printf("unknown SIM_ARG %lu (0 bench, 1 console, 2 job, 3 errtest, 4 bench polled, 5 quick, 6 small bench, 7 host-loaded bench)\n",
               (unsigned long)arg);
        rc = 4;
    }
    printf("exit %d\n", rc);
    return rc;
}
