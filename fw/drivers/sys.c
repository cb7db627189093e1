#include "sys.h"

#include <stdio.h>

#include "csr.h"
#include "mmio.h"
#include "soc.h"

int sys_in_sim(void) { return mmio_read32(SIMCTL_BASE + SIMCTL_ID) == SIMCTL_ID_MAGIC; }

uint32_t sys_sim_arg(void) { return sys_in_sim() ? mmio_read32(SIMCTL_BASE + SIMCTL_ARG) : 0; }

#ifdef LSMC_HOST_SHIM
void shim_exit(int code);
void sys_exit(int code)
{
    mmio_write32(SIMCTL_BASE + SIMCTL_EXIT, ((uint32_t)code << 1) | 1u);
    shim_exit(code);
}
#else
void sys_exit(int code)
{
    fflush(stdout);
    mmio_write32(SIMCTL_BASE + SIMCTL_EXIT, ((uint32_t)code << 1) | 1u);
    /* The simulation ends within a few cycles; a board has nothing to return to. */
    irq_global_disable();
    if (!sys_in_sim())
        printf("\nexit %d: halted\n", code);
    for (;;)
        __asm__ volatile("wfi");
}
#endif
