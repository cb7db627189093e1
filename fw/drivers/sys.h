/* Simulation control (SIM_EXIT / SIM_ARG) and program exit. */
#ifndef LSMC_SYS_H
#define LSMC_SYS_H

#include <stdint.h>

/* Where the firmware runs: the simulation-control block answers SIMCTL_ID with SIMCTL_ID_MAGIC
 * ("SIMC", soc.h); on a board the block is absent and reads 0 (docs/architecture.md), so one ELF
 * serves both. */

int sys_in_sim(void);
uint32_t sys_sim_arg(void);
/* End the program: in simulation write SIM_EXIT; on a board report and park the CPU. */
#ifdef LSMC_HOST_SHIM
void sys_exit(int code);
#else
__attribute__((noreturn)) void sys_exit(int code);
#endif

#endif
