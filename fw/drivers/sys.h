/* Simulation control (SIM_EXIT / SIM_ARG) and program exit. */
#ifndef LSMC_SYS_H
#define LSMC_SYS_H

#include <stdint.h>

/* Where the firmware runs: the simulation-control block answers SIMCTL_ID with "SIMC"; on a board
 * the block is absent and reads 0 (docs/architecture.md), so one ELF serves both. */
#define SIMCTL_ID 0x08
#define SIMCTL_ID_MAGIC 0x53494D43u

int sys_in_sim(void);
uint32_t sys_sim_arg(void);
/* End the program: in simulation write SIM_EXIT; on a board report and park the CPU. */
#ifdef LSMC_HOST_SHIM
void sys_exit(int code);
#else
__attribute__((noreturn)) void sys_exit(int code);
#endif

#endif
